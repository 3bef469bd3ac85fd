"""A compiled function's results are new arrays (issue 31): they never share memory with
its arguments or with the arrays it captured, on every backend, as in JAX.  Updating a
result in place changes nothing else: not the argument `np.copy(x)` was taken of, not
a global, not another function that captured an array of the same contents.  A global
array is read when the function is compiled."""

import numpy as np
import pytest

import myia

pytestmark = pytest.mark.usefixtures("backend")


def copy_fn(x):
    return np.copy(x)


def copy_method(x):
    return x.copy()


def array_of(x):
    return np.array(x)


def asarray_of(x):
    return np.asarray(x)


def times_one(x):
    return x * 1.0


def plus_zero(x):
    return x + 0.0


def positive(x):
    return +x


def identity(x):
    return x


def transposed(x):
    return x.T


def reshaped(x):
    return x.reshape(6)


def a_row(x):
    return x[1]


def twice(x):
    return x, x


def in_a_dict(x):
    return {"a": x, "b": x * 2.0}


@pytest.mark.parametrize("fn", [copy_fn, copy_method, array_of, asarray_of, times_one,
                                plus_zero, positive, identity, transposed, reshaped, a_row,
                                twice, in_a_dict])
def test_a_result_is_a_new_array(fn):
    x = np.arange(6.0).reshape(2, 3)
    before = x.copy()
    out = myia.compile(fn)(x)
    leaves = list(out.values()) if isinstance(out, dict) else list(out) if isinstance(out, tuple) else [out]
    for r in leaves:
        assert not np.shares_memory(r, x)
        assert r.flags.writeable
        r += 100.0  # updating the result...
    np.testing.assert_array_equal(x, before)  # ...leaves the argument as it was
    if isinstance(out, tuple):
        assert not np.shares_memory(out[0], out[1])


W = np.arange(3.0)
ZEROS_A = np.zeros(3)
ZEROS_B = np.zeros(3)


def get_w(x):
    return W


def w_times_one(x):
    return W * 1.0


def w_positive(x):
    return +W


def w_clipped(x):
    return np.clip(W, -10.0, 10.0)


def w_maximum(x):
    return np.maximum(W, -1.0)


def zeros_a(x):
    return ZEROS_A + x


def get_zeros_a(x):
    return ZEROS_A


def get_zeros_b(x):
    return ZEROS_B


@pytest.mark.parametrize("fn", [get_w, w_times_one, w_positive, w_clipped, w_maximum])
def test_a_result_never_is_a_global(fn):
    f = myia.compile(fn)
    out = f(0.0)
    assert not np.shares_memory(out, W)
    out += 5.0
    np.testing.assert_array_equal(W, np.arange(3.0))
    np.testing.assert_array_equal(f(0.0), np.arange(3.0))  # and the program is unchanged


def test_programs_that_captured_equal_arrays_stay_apart():
    a, b = myia.compile(get_zeros_a), myia.compile(get_zeros_b)
    out = a(0.0)
    out += 5.0
    np.testing.assert_array_equal(b(0.0), np.zeros(3))
    np.testing.assert_array_equal(a(0.0), np.zeros(3))


def test_a_global_is_read_when_the_function_is_compiled():
    global ZEROS_A
    saved = ZEROS_A.copy()
    try:
        f, g = myia.compile(zeros_a), myia.compile(get_zeros_b)
        np.testing.assert_array_equal(f(1.0), np.ones(3))
        ZEROS_A += 7.0  # in place, after compiling: no compiled program sees it
        np.testing.assert_array_equal(f(1.0), np.ones(3))
        np.testing.assert_array_equal(g(0.0), np.zeros(3))
    finally:
        ZEROS_A[:] = saved
