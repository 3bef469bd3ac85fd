"""`myia.compile(f, static_argnums=..., static_argnames=...)`: arguments that are
constants of the program (JAX's jit semantics), compiled once per value."""

import numpy as np
import pytest

import myia
from myia.errors import MyiaStaticError, MyiaTypeError, MyiaValueError

BACKENDS = ["vm", "llvm"]


def llsq_points(n, x):
    # GradBench's llsq: the sample points come from an int argument
    t = -1.0 + np.arange(n) * 2.0 / (n - 1.0)
    return np.sum(np.sin(t * x + 1.0))


def llsq_points_numpy(n, x):
    t = -1.0 + np.arange(n) * 2.0 / (n - 1.0)
    return np.sum(np.sin(t * x + 1.0))


def shaped(x, rows=2, kind="sin"):
    y = np.zeros((rows, x.shape[0])) + x
    if kind == "sin":
        return np.sin(y)
    return np.cos(y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_int_argument_decides_a_shape(backend):
    f = myia.compile(llsq_points, backend=backend, static_argnums=0)
    for n, x in [(4, 0.5), (7, 0.5), (4, -1.25)]:
        assert f(n, x) == pytest.approx(llsq_points_numpy(n, x), rel=1e-14)
    # one program per static value, whatever the other arguments are
    assert sorted(fixed for fixed in f._by_static) == [((0, 4),), ((0, 7),)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_static_by_name_and_keyword(backend):
    f = myia.compile(shaped, backend=backend, static_argnames=("rows", "kind"))
    x = np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(f(x), np.sin(np.zeros((2, 3)) + x))
    np.testing.assert_allclose(f(x, rows=3), np.sin(np.zeros((3, 3)) + x))
    np.testing.assert_allclose(f(x, 4, "cos"), np.cos(np.zeros((4, 3)) + x))
    np.testing.assert_allclose(f(x, kind="cos"), np.cos(np.zeros((2, 3)) + x))
    # the defaults are static values too: f(x) and f(x, rows=2) share a program
    f(x, rows=2)
    assert ((1, 2), (2, "sin")) in f._by_static and len(f._by_static) == 4


def test_negative_positions_count_from_the_end():
    f = myia.compile(llsq_points, static_argnums=-2)
    assert f(5, 0.3) == pytest.approx(llsq_points_numpy(5, 0.3), rel=1e-14)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_gradient_of_a_function_with_a_static_size(backend):
    df = myia.compile(myia.grad(llsq_points, argnums=1), backend=backend, static_argnums=0)
    for n, x in [(5, 0.7), (9, -0.3)]:
        h = 1e-6
        fd = (llsq_points_numpy(n, x + h) - llsq_points_numpy(n, x - h)) / (2 * h)
        assert df(n, x) == pytest.approx(fd, rel=1e-7)
        t = -1.0 + np.arange(n) * 2.0 / (n - 1.0)
        assert df(n, x) == pytest.approx(np.sum(np.cos(t * x + 1.0) * t), rel=1e-13)
    # second order: d2/dx2 of sum(sin(t x + 1)) = -sum(sin(t x + 1) t^2)
    d2f = myia.compile(myia.grad(myia.grad(llsq_points, argnums=1), argnums=1),
                       backend=backend, static_argnums=0)
    t = -1.0 + np.arange(6) * 2.0 / 5.0
    assert d2f(6, 0.4) == pytest.approx(-np.sum(np.sin(t * 0.4 + 1.0) * t * t), rel=1e-12)


def test_without_static_the_error_says_how():
    with pytest.raises(MyiaStaticError) as e:
        myia.compile(llsq_points)(4, 0.5)
    assert isinstance(e.value, MyiaTypeError)  # (what it was before it had a name)
    text = str(e.value)
    assert "arange needs values known at compile time" in text
    assert "static_argnums" in text and "np.arange(n)" in text  # the hint, the caret


def test_bad_static_arguments_are_refused():
    with pytest.raises(MyiaValueError, match=r"static_argnums: 2 is not a parameter position "
                                             r"of llsq_points\(n, x\)"):
        myia.compile(llsq_points, static_argnums=2)
    with pytest.raises(MyiaValueError, match="llsq_points has no parameter `m`"):
        myia.compile(llsq_points, static_argnames="m")
    f = myia.compile(llsq_points, static_argnums=1)
    with pytest.raises(MyiaValueError, match="static argument `x` of llsq_points is of type "
                                             "ndarray, which is not hashable"):
        f(3, np.ones(2))
    with pytest.raises(MyiaTypeError, match="missing the static argument `x`"):
        f(3)


def test_the_repr_says_what_is_static():
    f = myia.compile(shaped, backend="vm", static_argnames="rows")
    assert repr(f) == "<myia.compile(shaped, backend='vm', static_argnums=(1,))>"


grad_llsq = myia.grad(llsq_points, argnums=1)


def grad_of_a_constant_size(x):
    # in subset code a constant int decides the shape inside the transform's program:
    # the program is built for that value, as if it were a static argument
    return grad_llsq(6, x) + myia.grad(grad_llsq, argnums=1)(6, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_transform_called_with_a_constant_size_in_subset_code(backend):
    t = -1.0 + np.arange(6) * 2.0 / 5.0
    want = np.sum(np.cos(t * 0.4 + 1.0) * t) - np.sum(np.sin(t * 0.4 + 1.0) * t * t)
    got = myia.compile(grad_of_a_constant_size, backend=backend)(0.4)
    assert got == pytest.approx(want, rel=1e-12)
