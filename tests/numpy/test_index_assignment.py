"""`x[index] = v` as NumPy code writes it: a new value for x where Python's in-place
change could not be seen by anything else, a located refusal where it could.

Each program here is ordinary Python, run by Python and NumPy as the reference, and
compiled on every backend; gradients against finite differences (autograd cannot
differentiate an assignment into an array) and against forward mode."""

import numpy as np
import pytest

import myia
from myia.errors import MyiaIndexError, MyiaSyntaxError, MyiaTypeError, MyiaValueError

BACKENDS = ["vm", "llvm"]


def rows_and_slices(v):
    x = np.zeros((3, 4))
    x[1] = v
    x[0, 1:3] = 2.0 * v
    x[2, 2] += v
    x[..., 0] = -1.0
    x[:, -1] = np.array([1.0, 2.0, 3.0]) * v
    x[None, 2, ::2] *= 3.0
    return x


def at_run_time_positions(v, i, j):
    x = np.ones((4, 5))
    x[i, j] = v
    x[i + 1, j:j + 2] += v * v
    return x


def masked(a):
    b = np.copy(a)
    b[b < 0.0] = 0.0
    b[b > 2.0] *= 0.5  # (an augmented assignment through a mask reads x[mask] first)
    return b


def listed(v):
    x = np.zeros(5)
    x[[0, 2, 2]] = np.array([1.0, 2.0, 3.0]) * v  # a position written twice: the last
    y = np.zeros((3, 3))
    y[[0, 2], 1:] = v
    return x, y


def running(v):
    s = np.zeros(6)
    s[0] = v
    for i in range(1, 6):
        s[i] = np.sin(s[i - 1]) + v
    return s


def lstm_like(w):
    # GradBench's lstm writes two entries of a state at each step
    s = np.zeros(6)
    for i in range(0, 6, 2):
        (s[i], s[i + 1]) = (np.tanh(w * (i + 1.0)), np.cos(w * i))
    return s


def view_rebound_before_read(w):
    # GradBench's lstm `predict`: x is a view of a row of s2, bound again before each
    # read, so no write to s2 can reach it while it is read
    s2 = np.zeros((4, 3))
    x = np.ones(3) * w
    for i in range(0, 4, 2):
        (s2[i], s2[i + 1]) = (np.tanh(x * (i + 1.0)), np.cos(x * i))
        x = s2[i]
    return x * 2.0 + s2[3]


def appended(v):
    states = [v]
    for t in range(3):
        states.append(np.sin(states[t]) + v)
    more = []
    more.extend(states[1:])
    return states[-1] * more[0] + len(more)


def copy_of_the_argument_appended(xs, v):
    xs = list(xs)
    xs.append(v)
    return xs


def at_run_time_index_arrays(v, idx):
    a = np.zeros(6)
    a[idx] = v * np.arange(1.0, 5.0)  # repeated positions: the last write wins
    a[idx] += v  # reads a[idx], writes each position once (NumPy's meaning)
    return a


def lower_triangles(l, rows, cols):
    # GradBench's gmm: Ls[:, rows, cols] = l, positions known when the program runs
    k, d = l.shape[0], 3
    Ls = np.zeros((k, d, d))
    Ls[:, rows, cols] = l
    Ls[:, cols, rows] -= 0.5 * l  # and a second write through the same positions
    return Ls


def ints_at_run_time_positions(v, idx):
    a = np.zeros(4, dtype=np.int64)
    a[idx] = v  # truncated, as NumPy casts
    return a


def copied_argument(x):
    x = np.copy(x)
    x[0] *= 2.0
    x[1:] = x[1:] ** 2
    return x


def lists_and_dicts(v):
    lst = [1.0, 2.0, 3.0]
    lst[1] = v
    lst[-1] *= v
    d = {"a": 1.0}
    d["b"] = v * 2.0
    d["a"] += v
    return lst[0] + lst[1] + lst[2] + d["a"] + d["b"]


def nested(v):
    x = np.zeros((2, 3))
    x[1][2] = v  # x[1] is a view of x: the element of x changes
    return x


def int_into_float_and_back(v):
    x = np.zeros(3, dtype=np.int64)
    x[1] = v  # truncated toward zero, as NumPy casts
    return x


def rotation(t):
    """A new array, filled in: what a caller gets is its own (as in GradBench's ht)."""
    R = np.eye(2)
    R[0, 0] = np.cos(t)
    R[1, 0] = np.sin(t)
    R[0, 1] = -R[1, 0]
    R[1, 1] = R[0, 0]
    return R


def axis_rotation(axis):
    n = np.sqrt(np.sum(axis ** 2))

    def normalized():  # (a closure that makes a new array)
        R = np.zeros((2, 2))
        R[0, 0] = axis[0] / n
        R[1, 1] = axis[1] / n
        return R

    if n < 1e-4:
        return np.eye(2)
    return normalized()


def scaled_rotations(v):
    params = np.array([v, 2.0 * v, 0.5])
    R = rotation(params[0])
    R *= params[2]  # R is rotation's new array: params does not change
    R[1, 1] = v
    S = axis_rotation(params[:2])
    S[0, 1] = 3.0
    return R, S, params


CASES = [
    (rows_and_slices, (1.5,)),
    (scaled_rotations, (0.3,)),
    (at_run_time_positions, (0.7, 1, 2)),
    (masked, (np.array([-1.0, 0.5, 3.0, -2.0, 4.0]),)),
    (listed, (1.25,)),
    (running, (0.3,)),
    (lstm_like, (0.4,)),
    (view_rebound_before_read, (0.4,)),
    (appended, (0.3,)),
    (copy_of_the_argument_appended, ([1.0, 2.0], 3.0)),
    (at_run_time_index_arrays, (0.7, np.array([4, 1, -2, 1]))),
    (lower_triangles, (np.arange(1.0, 7.0).reshape(2, 3), np.array([1, 2, 2]),
                       np.array([0, 0, 1]))),
    (ints_at_run_time_positions, (np.array([1.5, -2.7, 3.2]), np.array([3, 1, 3]))),
    (copied_argument, (np.array([1.0, 2.0, 3.0]),)),
    (lists_and_dicts, (5.0,)),
    (nested, (5.0,)),
    (int_into_float_and_back, (-2.7,)),
]


def _same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    np.testing.assert_array_equal(got, want)
    assert np.asarray(got).dtype == np.asarray(want).dtype


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_the_value_is_numpys(fn, args, backend):
    want = fn(*[np.copy(a) if isinstance(a, np.ndarray) else a for a in args])
    _same(myia.compile(fn, backend=backend)(*args), want)


def _scalar(fn):
    def total(v, *rest):
        out = fn(v, *rest)
        parts = out if isinstance(out, tuple) else (out,)
        return sum(float(np.sum(np.asarray(p) * np.arange(1.0, np.size(p) + 1.0)))
                   for p in parts)
    return total


def weighted_rows(v):
    return np.sum(rows_and_slices(v) * np.arange(1.0, 13.0).reshape(3, 4))


def weighted_running(v):
    return np.sum(running(v) * np.arange(1.0, 7.0))


def weighted_lstm(w):
    return np.sum(lstm_like(w) * np.arange(1.0, 7.0))


def weighted_rebound(w):
    return np.sum(view_rebound_before_read(w) * np.arange(1.0, 4.0))


def weighted_run_time_positions(v):
    return np.sum(at_run_time_index_arrays(v, np.array([4, 1, -2, 1])) * np.arange(1.0, 7.0))


def weighted_triangles(v):
    l = np.sin(v * np.arange(1.0, 7.0)).reshape(2, 3)
    Ls = lower_triangles(l, np.array([1, 2, 2]), np.array([0, 0, 1]))
    return np.sum(Ls * Ls * np.arange(1.0, 19.0).reshape(2, 3, 3))


def weighted_masked(a):
    return np.sum(masked(a) * np.arange(1.0, 6.0))


def weighted_listed(v):
    x, y = listed(v)
    return np.sum(x * np.arange(1.0, 6.0)) + np.sum(y * np.arange(1.0, 10.0).reshape(3, 3))


def weighted_rotations(v):
    R, S, params = scaled_rotations(v)
    return np.sum(R * np.array([[1.0, 2.0], [3.0, 4.0]])) + np.sum(S * S) + np.sum(params)


def weighted_at(v):
    return np.sum(at_run_time_positions(v, 1, 2) * np.arange(1.0, 21.0).reshape(4, 5))


SCALAR_FUNCTIONS = [weighted_rows, weighted_running, weighted_lstm, weighted_listed,
                    weighted_at, lists_and_dicts, weighted_rebound, appended,
                    weighted_run_time_positions, weighted_triangles, weighted_rotations]


def _fd(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", SCALAR_FUNCTIONS, ids=lambda f: f.__name__)
def test_first_and_second_derivatives(f, backend):
    x = 0.37
    d1 = myia.compile(myia.grad(f), backend=backend)(x)
    assert d1 == pytest.approx(_fd(f, x), rel=1e-6, abs=1e-8)
    d2 = myia.compile(myia.grad(myia.grad(f)), backend=backend)(x)
    assert d2 == pytest.approx(_fd(lambda t: myia.grad(f)(t), x), rel=1e-5, abs=1e-6)
    # forward mode agrees with reverse mode
    _, tangent = myia.jvp(f, (x,), (1.0,))
    assert tangent == pytest.approx(d1, rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_gradient_skips_what_was_overwritten(backend):
    a = np.array([-1.0, 0.5, 3.0, -2.0, 4.0])
    g = myia.compile(myia.grad(weighted_masked), backend=backend)(a)
    # b = a; b[b < 0] = 0 (no gradient there); b[b > 2] *= 0.5
    np.testing.assert_array_equal(g, [0.0, 2.0, 1.5, 0.0, 2.5])


def returns_its_argument_changed(x):
    x[0] = 1.0
    return x


def changes_an_alias(v):
    a = np.zeros(3)
    b = a
    b[0] = v
    return a


def changes_under_a_view(v):
    a = np.zeros((2, 3))
    row = a[0]
    a[0, 0] = v
    return row


def changes_what_a_list_holds(v):
    a = np.zeros(3)
    held = [a, 1.0]
    a[0] = v
    return held[0]


def changes_an_alias_in_a_loop(v):
    a = np.zeros(3)
    out = 0.0
    for i in range(3):
        b = a
        a[i] = v
        out = out + b[0]
    return out


GLOBAL = np.zeros(3)


def reads_a_view_after_a_write(v):
    s2 = np.zeros((4, 3))
    x = s2[0]
    for i in range(0, 4, 2):
        s2[i] = x + v  # the second time round, x (a view of row 0) sees the first write
    return x


def appends_to_an_argument(xs, v):
    xs.append(v)
    return xs


def appends_to_a_held_list(v):
    inner = [1.0]
    outer = [inner, 2.0]
    inner.append(v)  # outer[0] is the same list in Python
    return outer[0]


def appends_to_an_array(v):
    a = np.zeros(2)
    a.append(v)
    return a


def changes_a_global(v):
    GLOBAL[0] = v
    return GLOBAL


def same(a):
    return a


def the_global():
    return GLOBAL


def changes_what_a_helper_returns(x):
    y = same(x)  # Python: the caller's array
    y[0] = 1.0
    return y


def changes_a_global_a_helper_returns(v):
    y = the_global()
    y[0] = v
    return y


def changes_what_a_closure_returns(x):
    def get():
        return x

    y = get()
    y[0] = 1.0
    return y


def changes_what_a_lambda_returns(v):
    a = np.zeros(3)
    get = lambda: a  # noqa: E731
    b = get()
    b[0] = v
    return a


def changes_a_tuple(v):
    t = (1.0, 2.0)
    t[0] = v
    return t


@pytest.mark.parametrize("fn, args, error, words", [
    (returns_its_argument_changed, (np.ones(2),), MyiaSyntaxError,
     ["`x` holds the argument `x`", "x = np.copy(x)", "line"]),
    (changes_an_alias, (1.0,), MyiaSyntaxError,
     ["`b` shares its value with `a`, which is read later", "b = np.copy(b)"]),
    (changes_under_a_view, (1.0,), MyiaSyntaxError, ["shares its value with `row`"]),
    (changes_what_a_list_holds, (1.0,), MyiaSyntaxError, ["shares its value with `held`"]),
    (changes_an_alias_in_a_loop, (1.0,), MyiaSyntaxError, ["shares its value with `b`"]),
    (changes_a_global, (1.0,), MyiaSyntaxError, ["`GLOBAL` is not a variable of this function"]),
    (reads_a_view_after_a_write, (1.0,), MyiaSyntaxError,
     ["`s2` shares its value with `x`, which is read later"]),
    (appends_to_an_argument, ([1.0], 1.0), MyiaSyntaxError,
     ["cannot change `xs` with `xs.append(v)`", "holds the argument `xs`", "list(xs)"]),
    (appends_to_a_held_list, (1.0,), MyiaSyntaxError,
     ["cannot change `inner`", "shares its value with `outer`"]),
    (appends_to_an_array, (1.0,), MyiaTypeError, ["`x.append(...)` needs a list, got an array"]),
    (changes_what_a_helper_returns, (np.ones(2),), MyiaSyntaxError,
     ["`y` holds the argument `x`", "y = np.copy(y)"]),
    (changes_a_global_a_helper_returns, (1.0,), MyiaSyntaxError,
     ["`y` holds `GLOBAL`, a value from outside"]),
    (changes_what_a_closure_returns, (np.ones(2),), MyiaSyntaxError,
     ["`y` holds the argument `x`"]),
    (changes_what_a_lambda_returns, (1.0,), MyiaSyntaxError,
     ["`b` shares its value with `a`, which is read later"]),
    (changes_a_tuple, (1.0,), MyiaTypeError, ["'tuple' object does not support item assignment"]),
], ids=lambda v: v.__name__ if callable(v) else "")
def test_where_python_would_differ_it_is_refused(fn, args, error, words):
    with pytest.raises(error) as e:
        myia.compile(fn, backend="vm")(*args)
    text = str(e.value)
    for w in words:
        assert w in text, text
    assert "test_index_assignment.py" in text and "^" in text  # located, with a caret


def masked_with_an_array(a):
    b = np.copy(a)
    b[b < 0.0] = np.ones(5)
    return b


def test_a_mask_takes_a_number():
    with pytest.raises(MyiaTypeError, match=r"`x\[mask\] = v` with an array v"):
        myia.compile(masked_with_an_array, backend="vm")(np.ones(5))


def out_of_bounds(v):
    x = np.zeros(3)
    x[5] = v
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_index_out_of_bounds_is_numpys_error(backend):
    with pytest.raises(MyiaValueError, match="index 5 is out of range for axis 0"):
        myia.compile(out_of_bounds, backend=backend)(1.0)
    with pytest.raises(MyiaIndexError, match="index 3 is out of bounds for axis 2 with size 3"):
        myia.compile(one_triangle, backend=backend)(np.ones((2, 3)), np.array([1, 2, 2]),
                                                    np.array([0, 3, 1]))


def one_triangle(l, rows, cols):
    Ls = np.zeros((2, 3, 3))
    Ls[:, rows, cols] = l
    return Ls


def shifts_a_shared_number(x, dx):
    prev = x
    x += dx  # a number: Python rebinds x, prev keeps its value
    return x - prev


def shifts_a_shared_array(v):
    a = np.zeros(3)
    b = a
    a += v  # Python changes the array in place: b sees it
    return b


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_augmented_assignment_of_a_shared_number_is_a_new_value(backend):
    assert myia.compile(shifts_a_shared_number, backend=backend)(1.5, 0.25) == 0.25
    assert myia.compile(myia.grad(shifts_a_shared_number, argnums=1), backend=backend)(
        1.5, 0.25) == 1.0


def test_an_augmented_assignment_of_a_shared_array_is_refused():
    # Python returns [v, v, v] here (b is a); a new array for a would leave b at zeros
    with pytest.raises(MyiaTypeError) as e:
        myia.compile(shifts_a_shared_array, backend="vm")(1.0)
    text = str(e.value)
    assert "`a += v` changes an array in place in Python, and `b`" in text
    assert "test_index_assignment.py" in text and "^^^^^^" in text


def _new_array(a):
    return np.zeros(3)


inner_helper = _new_array


def outer_helper(a):
    return inner_helper(a)


def changes_what_outer_helper_returns(x):
    y = outer_helper(x)
    y[0] = 1.0
    return y


def changes_what_outer_helper_returns_again(x):
    y = outer_helper(x)
    y[0] = 1.0
    return y


def test_what_a_helper_returns_is_read_again_after_a_global_changes(monkeypatch):
    # outer_helper returns what inner_helper returns: a new array, then (inner_helper
    # rebound, as a kernel cell redefines it) its argument, which Python would change
    x = np.ones(3)
    np.testing.assert_array_equal(
        myia.compile(changes_what_outer_helper_returns, backend="vm")(x), [1.0, 0.0, 0.0])
    monkeypatch.setitem(globals(), "inner_helper", same)
    with pytest.raises(MyiaSyntaxError, match="`y` holds the argument `x`"):
        myia.compile(changes_what_outer_helper_returns_again, backend="vm")(x)
