"""NumPy code as people write it: `...` and None in every indexing position, np.real,
np.imag and np.conj of real values, np.float64(x) and np.int64(x) as casts, np.select,
and the `operator` module's functions as values (given to functools.reduce or to a
function of the user's).  Values against NumPy on both backends (with NumPy's Python
types: a 0-d array, a NumPy scalar and a Python number differ), gradients against
autograd (first and second order) and finite differences (cases: cases_written.py);
forward and Taylor mode through `...`; and the located errors of what stays refused.
"""

import functools
import math
import operator

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import myia
from myia.errors import MyiaError, MyiaSourceError, MyiaTypeError, MyiaValueError

from . import cases_written
from .harness import BACKENDS, autograd_twin, check_fd, check_grad, check_value

CASES = cases_written.CASES
GRAD = [c for c in CASES if c.order >= 1]
SECOND = [c for c in CASES if c.order >= 2]


@pytest.fixture(scope="module")
def twin():
    return autograd_twin(cases_written)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_value(case, backend):
    check_value(case, backend)


def _kind(v):
    """What must agree besides the value: a Python number, a NumPy scalar or an array
    (a 0-d one too), and the dtype."""
    if isinstance(v, np.ndarray):
        return ("array", v.dtype.name, v.shape)
    if isinstance(v, np.generic):
        return ("NumPy scalar", v.dtype.name)
    return ("Python", type(v).__name__)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_python_type(case, backend):
    got = myia.compile(case.fn, backend=backend)(*case.args)
    assert _kind(got) == _kind(case.fn(*case.args))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", [c for c in GRAD if c.autograd], ids=str)
def test_grad(case, backend, twin):
    check_grad(case, backend, twin, order=1)


@pytest.mark.parametrize("case", [c for c in GRAD if c.fd], ids=str)
def test_grad_finite_differences(case):
    check_fd(case, "vm")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", SECOND, ids=str)
def test_second_order(case, backend, twin):
    check_grad(case, backend, twin, order=2)


# ---- `...` in forward mode, Taylor mode, Hessians --------------------------------------------

_X = np.random.default_rng(5).standard_normal((2, 3, 4))


def through_ellipsis(x):
    return np.sum(np.sin(x[..., 1:3]) * x[0, ..., None, 0])


def a_through_ellipsis(x):
    return anp.sum(anp.sin(x[..., 1:3]) * x[0, ..., None, 0])


def test_forward_mode_through_ellipsis(backend):  # (conftest's fixture: $MYIA_BACKEND)
    t = np.random.default_rng(6).standard_normal(_X.shape)
    value, tangent = myia.jvp(through_ellipsis, (_X,), (t,))
    want = np.sum(autograd.grad(a_through_ellipsis)(_X) * t)
    np.testing.assert_allclose(value, through_ellipsis(_X), rtol=1e-12)
    np.testing.assert_allclose(tangent, want, rtol=1e-10)


def along(t):
    return np.sum(np.sin(t * _X)[None, ..., 2] ** 2 * _X[None, ..., 0])


def a_along(t):
    return anp.sum(anp.sin(t * _X)[None, ..., 2] ** 2 * _X[None, ..., 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_taylor_mode_through_ellipsis(backend):
    got = myia.compile(myia.jet(along, order=3), backend=backend)(0.7)
    want, g = [a_along(0.7)], a_along
    for _ in range(3):
        g = autograd.grad(g)
        want.append(g(0.7))
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-9, atol=1e-12)


def cubic(v):
    return np.sum(v[..., 0] ** 3 * v[0, ...])


@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_through_ellipsis(backend):
    v = np.arange(1.0, 5.0).reshape(2, 2)
    got = myia.compile(myia.hessian(cubic), backend=backend)(v)
    want = autograd.hessian(lambda v: anp.sum(v[..., 0] ** 3 * v[0, ...]))(v)
    np.testing.assert_allclose(got, want, rtol=1e-12)


# ---- more than the cases say ------------------------------------------------------------------


def real_imag_of(a):
    return np.real(a), np.imag(a), np.conj(a)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("a", [2.5, 3, True, np.float32(1.5), np.int64(4), np.True_,
                               np.array([1.5, -2.0], np.float32), np.array([1, 2]),
                               np.array([True, False])], ids=repr)
def test_real_imag_conj_types(a, backend):
    """np.real(True) is the int 1, np.imag(2.5) the float 0.0, np.imag of an array zeros
    of its dtype, np.conj of a Python number a NumPy scalar (of a bool: int8, refused)."""
    f = myia.compile(real_imag_of, backend=backend)
    if np.asarray(a).dtype == bool:
        with pytest.raises(MyiaTypeError, match="np.conjugate of a bool is an int8"):
            f(a)
        f = myia.compile(lambda a: (np.real(a), np.imag(a)), backend=backend)
        want = (np.real(a), np.imag(a))
    else:
        want = real_imag_of(a)
    got = f(a)
    assert [_kind(g) for g in got] == [_kind(w) for w in want]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def casts(a):
    return np.float64(a), np.float32(a), np.int64(a), np.bool_(a)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("a", [2.7, -2.7, 3, True, np.float32(-1.5), np.float64(0.0),
                               np.int64(-7), np.array([2.7, -2.7, 0.5]),
                               np.array([1, 0, -3]), np.array([True, False])], ids=repr)
def test_casts_are_numpy_scalar_types(a, backend):
    got = myia.compile(casts, backend=backend)(a)
    want = casts(a)
    assert [_kind(g) for g in got] == [_kind(w) for w in want]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def cast_of_zero_d(x):
    a = np.array(x)
    return np.float64(a), np.int64(a * 1.5), np.conj(a), np.real(a), np.imag(a)


@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_d_arrays(backend):
    """np.float64 and the ufunc np.conj of a 0-d array give NumPy scalars; np.real and
    np.imag 0-d arrays."""
    got = myia.compile(cast_of_zero_d, backend=backend)(2.5)
    want = cast_of_zero_d(2.5)
    assert [_kind(g) for g in got] == [_kind(w) for w in want]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def int_of(a):
    return np.int64(a)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("a, error", [(math.nan, MyiaValueError), (1e20, MyiaError)],
                         ids=["nan", "too-large"])
def test_int64_of_a_python_float_that_no_int64_holds(a, error, backend):
    with pytest.raises(error):
        myia.compile(int_of, backend=backend)(a)


def select_first_wins(x):
    return np.select([x > 0, x > 1, x > -1], [x * 0 + 1.0, x * 0 + 2.0, x * 0 + 3.0], -1.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_select_takes_the_first_true_condition(backend):
    x = np.array([-2.0, -0.5, 0.5, 1.5])
    got = myia.compile(select_first_wins, backend=backend)(x)
    np.testing.assert_array_equal(got, [-1.0, 3.0, 1.0, 1.0])


def select_types(x, x32, i):
    return (np.select([x32 > 0], [x32]), np.select([i > 0], [i], 0.5),
            np.select([i > 0], [i]), np.select([True], [1.0]),
            np.select([x > 0], [x32], np.float32(0)), np.select([x32 > 0], [1], x32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_select_dtypes_are_numpy_s(backend):
    """A Python number is weak (float32 choices with the default 0 stay float32); the
    result is an array, 0-d where everything is a number."""
    args = (np.array([0.5, -1.0]), np.array([1.5, -0.5], np.float32), np.array([2, -1]))
    got = myia.compile(select_types, backend=backend)(*args)
    want = select_types(*args)
    assert [_kind(g) for g in got] == [_kind(w) for w in want]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def select_grad(x, d):
    return np.sum(np.select((x > 0, x < -1), (x * x, 3 * x), default=d) * 2.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_select_gradient_goes_to_the_chosen_branch_and_the_default(backend):
    x = np.array([-2.0, -0.5, 0.5, 1.5])
    gx, gd = myia.compile(myia.grad(select_grad, (0, 1)), backend=backend)(x, 0.25)
    np.testing.assert_allclose(gx, [6.0, 0.0, 2.0, 6.0])
    assert gd == 2.0


def operators_on_numbers(a, b):
    return (operator.add(a, b), operator.truediv(a, b), operator.floordiv(a, b),
            operator.mod(a, b), operator.lt(a, b), operator.eq(a, b), operator.neg(a),
            operator.pos(a), operator.abs(-a), operator.pow(a, 2), operator.sub(a, b),
            operator.not_(a), operator.truth(b), operator.contains((1, 2), a),
            operator.and_(a > 0, b > 0))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("a, b", [(7, 2), (7.5, 2), (True, 3)], ids=repr)
def test_operator_functions_are_python_s(a, b, backend):
    got = myia.compile(operators_on_numbers, backend=backend)(a, b)
    want = operators_on_numbers(a, b)
    assert [_kind(g) for g in got] == [_kind(w) for w in want]
    assert list(got) == list(want)


def getitem_of_containers(t, d):
    return operator.getitem(t, 1), operator.getitem(t, -1), operator.getitem(d, "b")


@pytest.mark.parametrize("backend", BACKENDS)
def test_operator_getitem_of_tuples_and_dicts(backend):
    t, d = (1.5, 2, 3.5), {"a": 1.0, "b": 2.0}
    got = myia.compile(getitem_of_containers, backend=backend)(t, d)
    assert got == getitem_of_containers(t, d)


def reduce_over_dict(d):
    return functools.reduce(lambda acc, v: acc + v, d.values(), 0.0)


def reduce_over_numbers(xs):
    return functools.reduce(operator.mul, xs), functools.reduce(max, xs, -10.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_functools_reduce(backend):
    assert myia.compile(reduce_over_dict, backend=backend)({"a": 1.0, "b": 2.5}) == 3.5
    assert myia.compile(reduce_over_numbers, backend=backend)([1.5, 2.0, 3.0]) == (9.0, 3.0)
    g = myia.compile(myia.grad(lambda xs: functools.reduce(operator.mul, xs)),
                     backend=backend)([1.5, 2.0, 3.0])
    assert g == [6.0, 4.5, 3.0]


# ---- errors ----------------------------------------------------------------------------------


def two_ellipses(x):
    return x[..., 0, ...]


def too_many_indices(x):
    return x[0, 1, 2, 3, ...]


def ellipsis_of_a_tuple(x):
    t = (x, x)
    return t[...]


def list_in_a_variable(x):
    idx = [0, 2]
    return x[idx]


def tuple_in_an_index(x):
    k = ((0, 1), 0)
    return x[k]


def int32_cast(x):
    return np.int32(x)


def int32_dtype(x):
    return x.astype(np.int32)


def float16_zeros(x):
    return np.zeros(3, dtype=np.float16)


def select_lengths(x):
    return np.select([x > 0, x < 0], [x])


def select_empty(x):
    return np.select([], [])


def select_not_bool(x):
    return np.select([x], [x])


def select_shapes(x):
    return np.select([x > 0], [x[:2]])


def conj_of_bool(x):
    return np.conj(x > 0)


def reduce_empty(x):
    return functools.reduce(operator.add, ())


def operator_setitem(x):
    operator.setitem(x, 0, 1.0)
    return x


def operator_lshift(x):
    return operator.lshift(x, 1)


def getitem_run_time_list(x, i):
    return operator.getitem(x, [i, 0])


@pytest.mark.parametrize("fn, args, error, message", [
    (two_ellipses, (_X,), MyiaValueError, r"an index can only have a single ellipsis \('...'\)"),
    (too_many_indices, (_X,), MyiaValueError,
     "too many indices for an array: the array is 3-dimensional, but 4 were indexed"),
    (ellipsis_of_a_tuple, (np.ones(3),), MyiaTypeError,
     "tuple indices must be integers or slices, not ellipsis"),
    (list_in_a_variable, (np.ones((3, 2)),), MyiaTypeError,
     "indexing an array with a list held in a variable"),
    (tuple_in_an_index, (np.ones((3, 2)),), MyiaTypeError,
     "a tuple or a list inside a tuple index"),
    (int32_cast, (np.ones(3),), MyiaTypeError,
     "`np.int32`: int32 is a dtype that compiled code does not have"),
    (int32_dtype, (np.ones(3),), MyiaTypeError, "`np.int32`: int32 is a dtype"),
    (float16_zeros, (np.ones(3),), MyiaTypeError, "`np.float16`: float16 is a dtype"),
    (select_lengths, (np.ones(3),), MyiaValueError,
     "list of cases must be same length as list of conditions"),
    (select_empty, (np.ones(3),), MyiaValueError,
     "select with an empty condition list is not possible"),
    (select_not_bool, (np.ones(3),), MyiaTypeError,
     "invalid entry 0 in condlist: should be boolean ndarray"),
    (select_shapes, (np.ones(3),), MyiaError, "cannot be broadcast together"),
    (conj_of_bool, (np.ones(3),), MyiaTypeError, "np.conjugate of a bool is an int8"),
    (reduce_empty, (np.ones(3),), MyiaTypeError,
     "reduce\\(\\) of empty iterable with no initial value"),
    (operator_setitem, (np.ones(3),), MyiaSourceError, "`operator.setitem`"),
    (operator_lshift, (np.ones(3),), MyiaSourceError, "`operator.lshift`"),
    (getitem_run_time_list, (np.ones((3, 2)), 1), MyiaError, "compile time"),
], ids=lambda v: v.__name__ if callable(v) else None)
def test_what_stays_refused_is_a_located_error(fn, args, error, message):
    with pytest.raises(error, match=message) as e:
        myia.compile(fn, backend="vm")(*args)
    assert isinstance(e.value, MyiaError) and e.value.loc is not None
    assert e.value.loc.filename == __file__
