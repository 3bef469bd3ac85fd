"""Reductions, cumulative functions and statistics: values against NumPy on both
backends, gradients against autograd (first and second order) and finite differences.
Cases: cases_reduce.py.  Then what the cases cannot say: exact gradients of products
with zeros, and the located errors of bad arguments."""

import numpy as np
import pytest

import myia
from myia.errors import MyiaShapeError, MyiaTypeError, MyiaValueError

from . import cases_reduce
from .harness import BACKENDS, autograd_twin, check_fd, check_grad, check_value

CASES = cases_reduce.CASES
GRAD = [c for c in CASES if c.order >= 1]
SECOND = [c for c in CASES if c.order >= 2]


@pytest.fixture(scope="module")
def twin():
    return autograd_twin(cases_reduce)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_value(case, backend):
    check_value(case, backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", GRAD, ids=str)
def test_grad(case, backend, twin):
    check_grad(case, backend, twin, order=1)


@pytest.mark.parametrize("case", [c for c in GRAD if c.fd], ids=str)
def test_grad_finite_differences(case):
    check_fd(case, "vm")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", SECOND, ids=str)
def test_second_order(case, backend, twin):
    check_grad(case, backend, twin, order=2)


# ---- products with zeros: the derivatives are the products of the other factors ----------


def prod_rows(x):
    return np.sum(np.prod(x, axis=1))


def prod_all(x):
    return np.prod(x)


def others(x):
    """d/dx_i prod(row) = the product of the row's other elements (a loop of products)."""
    out = np.ones_like(x)
    for r in range(x.shape[0]):
        for i in range(x.shape[1]):
            for j in range(x.shape[1]):
                if j != i:
                    out[r, i] *= x[r, j]
    return out


ZEROS = np.array([[0.0, 2.0, -3.0, 0.5], [1.5, 0.0, 0.0, 2.0], [0.0, 0.0, 0.0, 4.0],
                  [1.0, -2.0, 3.0, 0.25]])


def test_prod_gradient_with_zeros_is_exact(backend):
    g = myia.grad(prod_rows)(ZEROS)
    np.testing.assert_array_equal(g, others(ZEROS))
    # second order: d^2/dx_i dx_j = the product of the row without i and j (i != j)
    h = myia.hessian(prod_all)(ZEROS[1])
    want = np.array([[0.0 if i == j else np.prod(np.delete(ZEROS[1], [i, j]))
                      for j in range(4)] for i in range(4)])
    np.testing.assert_array_equal(h, want)


def cumprod_weighted(x):
    return np.sum(np.cumprod(x) * np.arange(1.0, 6.0))


def test_cumprod_gradient_with_zeros_is_exact(backend):
    x = np.array([2.0, 0.0, 3.0, 0.0, -1.5])
    got = myia.grad(cumprod_weighted)(x)
    want = [sum(w * np.prod(np.delete(x[:j + 1], i)) for j, w in enumerate(range(1, 6)) if j >= i)
            for i in range(5)]
    np.testing.assert_array_equal(got, want)


# ---- bad arguments: located errors ----------------------------------------------------------


def sum_axis_2(x):
    return np.sum(x, axis=2)


def mean_duplicate_axes(x):
    return np.mean(x, axis=(0, -2))


def max_float_axis(x):
    return np.max(x, axis=1.0)


def sum_into(x):
    return np.sum(x, axis=0, out=x)


def cumsum_of_scalar_along(x):
    return np.cumsum(np.sum(x), axis=1)  # (NumPy takes axis 0 of a number: its only element)


def diff_negative(x):
    return np.diff(x, n=-1)


def gradient_too_short(x):
    return np.gradient(x, edge_order=2)


def gradient_coordinates(x):
    return np.gradient(x, x)


def trace_1d(x):
    return np.trace(x)


def trace_same_axes(x):
    return np.trace(x, 0, 1, -1)


def argmax_tuple(x):
    return np.argmax(x, axis=(0, 1))


@pytest.mark.parametrize("fn, x, error, message", [
    (sum_axis_2, np.ones((2, 3)), MyiaShapeError, "axis 2 is out of bounds for an array of rank 2"),
    (mean_duplicate_axes, np.ones((2, 3)), MyiaShapeError, r"duplicate value in axis \(0, -2\)"),
    (max_float_axis, np.ones((2, 3)), MyiaTypeError, "an axis must be an int, got 1.0"),
    (sum_into, np.ones((2, 3)), MyiaValueError, "out= is not supported"),
    (cumsum_of_scalar_along, np.ones(3), MyiaShapeError, "axis 1 is out of bounds"),
    (diff_negative, np.ones(3), MyiaValueError, "order must be a non-negative int"),
    (gradient_too_short, np.ones(2), MyiaShapeError, "at least edge_order \\+ 1 = 3 elements"),
    (gradient_coordinates, np.ones(4), MyiaValueError, "coordinate arrays are not supported"),
    (trace_1d, np.ones(3), MyiaShapeError, "at least two dimensions"),
    (trace_same_axes, np.ones((2, 2)), MyiaValueError, "axis1 and axis2 cannot be the same"),
    (argmax_tuple, np.ones((2, 2)), MyiaTypeError, "an axis must be an int"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_bad_arguments_are_located_errors(fn, x, error, message):
    for backend in BACKENDS:
        with pytest.raises(error, match=message) as e:
            myia.compile(fn, backend=backend)(x)
        assert e.value.loc is not None


# ---- max, min, argmax, argmin: every path of the native loops ---------------------------------


def max_flat(x):
    return np.max(x)


def max_0(x):
    return np.max(x, axis=0)


def min_last(x):
    return np.min(x, axis=-1)



def argmax_flat(x):
    return np.argmax(x)


def argmax_0(x):
    return np.argmax(x, axis=0)


def argmax_last(x):
    return np.argmax(x, axis=-1)


def argmin_flat(x):
    return np.argmin(x)


def argmin_0(x):
    return np.argmin(x, axis=0)


def argmin_last(x):
    return np.argmin(x, axis=-1)


def _arg_inputs():
    rng = np.random.default_rng(5)
    for shape in [(1,), (7,), (16,), (17,), (45,), (3, 37), (37, 3), (4, 5, 19)]:
        ties = rng.integers(0, 3, shape).astype(float)  # many ties
        nans = rng.standard_normal(shape)
        nans.reshape(-1)[rng.integers(0, nans.size, 2)] = np.nan
        last = rng.standard_normal(shape)
        last.reshape(-1)[-1] = 9.0  # the extremum in the last block
        for x in (ties, nans, last, -last, ties.astype(np.int64), ties > 0,
                  rng.standard_normal(shape).astype(np.float32)):
            yield x
            if x.ndim > 1:
                yield x.T  # strided lines


@pytest.mark.parametrize("backend", BACKENDS)
def test_extrema_and_their_positions_against_numpy(backend):
    """Nans (NumPy: the first one wins), ties, ints, bools, float32, strided lines, and
    lines shorter and longer than a vector, the extremum in the last block."""
    fns = [max_flat, max_0, min_last, argmax_flat, argmax_0, argmax_last, argmin_flat,
           argmin_0, argmin_last]
    compiled = {fn: myia.compile(fn, backend=backend) for fn in fns}
    for x in _arg_inputs():
        for fn in fns:
            got, want = compiled[fn](x), fn(x)
            assert np.shape(got) == np.shape(want), (fn, x)
            assert np.array_equal(got, want, equal_nan=x.dtype.kind == "f"), (fn, x)


# ---- the CuPy backend (on its CPU emulator): the new primitives stay on the device ----------


def on_the_device(x):
    return (np.cumsum(x, axis=0) * np.cumprod(x, axis=1) + np.prod(x, axis=0)
            + np.argmax(x, axis=1)[0] + np.argmin(x))


def test_on_the_cupy_emulator_without_leaving_the_device():
    from myia.backend.cupy import CupyBackend
    from myia.backend.cupy.emulator import Emulator, compiler
    from myia.pipeline import optimized_program

    if compiler() is None:
        pytest.fail("the emulator needs a C++ compiler (g++): apt-get install g++")
    b = CupyBackend(optimized_program, xp=Emulator())
    x = np.random.default_rng(3).standard_normal((3, 4))
    got = b.run(on_the_device, (x,), to_numpy=True)
    np.testing.assert_allclose(got, on_the_device(x), rtol=1e-12)
    assert b.stats["host_fallback"] == 0
