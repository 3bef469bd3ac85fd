"""Shape functions and rearrangements, and None / np.newaxis in indexing: values against
NumPy on both backends, gradients against autograd (first and second order) and finite
differences (cases: cases_shape.py); Taylor mode through the rearrangement primitives;
the errors a user gets for bad arguments."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import myia
from myia.errors import MyiaError, MyiaShapeError, MyiaTypeError, MyiaValueError

from . import cases_shape
from .harness import BACKENDS, autograd_twin, check_fd, check_grad, check_value

CASES = cases_shape.CASES
GRAD = [c for c in CASES if c.order >= 1]
SECOND = [c for c in CASES if c.order >= 2]


@pytest.fixture(scope="module")
def twin():
    return autograd_twin(cases_shape)


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


# ---- Taylor mode ------------------------------------------------------------------------------

_A = np.array([0.3, -1.2, 0.8, 2.0, -0.4, 1.1])
_B = np.array([1.5, 0.2, -0.7, 0.9, -1.3, 0.4])


def rearranged(t):
    """A scalar function of t through split, concatenate, sort, roll and pad."""
    x = _A * t + np.sin(_B * t)
    a, b = np.split(x, 2)
    y = np.concatenate((a * b, np.sort(x)))
    z = np.pad(np.roll(y, 2), 1, mode="constant")
    return np.sum(z[1:-1] * y * y)


def a_rearranged(t):
    x = _A * t + anp.sin(_B * t)
    a, b = x[:3], x[3:]
    y = anp.concatenate((a * b, anp.sort(x)))
    z = anp.pad(anp.roll(y, 2), 1, mode="constant")
    return anp.sum(z[1:-1] * y * y)


def autograd_derivatives(fn, x, order):
    out, g = [fn(x)], fn
    for _ in range(order):
        g = autograd.grad(g)
        out.append(g(x))
    return np.array(out)


@pytest.mark.parametrize("backend", BACKENDS)
def test_taylor_mode_through_rearrangements(backend):
    got = myia.compile(myia.jet(rearranged, order=4), backend=backend)(0.7)
    np.testing.assert_allclose(np.array(got), autograd_derivatives(a_rearranged, 0.7, 4),
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_taylor_mode_of_a_gradient_through_their_transposes(backend):
    # the gradient goes through split (of concatenate) and take_along_axis_grad (of sort)
    got = myia.compile(myia.jet(myia.grad(rearranged), order=3), backend=backend)(0.4)
    np.testing.assert_allclose(np.array(got), autograd_derivatives(a_rearranged, 0.4, 4)[1:],
                               rtol=1e-9, atol=1e-12)


# ---- more than the cases say --------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_sort_sends_each_sensitivity_to_where_its_element_came_from(backend):
    def weighted(x, w):
        return np.sum(np.sort(x, axis=0) * w)

    x = np.array([[3.0, -1.0], [1.0, 2.0], [2.0, 0.0]])
    w = np.array([[10.0, 1.0], [20.0, 2.0], [30.0, 3.0]])
    got = myia.compile(myia.grad(weighted), backend=backend)(x, w)
    # column 0: 1 < 2 < 3 sit at rows 1, 2, 0; column 1: -1 < 0 < 2 at rows 0, 2, 1
    np.testing.assert_array_equal(got, [[30.0, 1.0], [10.0, 3.0], [20.0, 2.0]])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("repeats", [1, 9], ids=["few", "many"])  # (llvm: two algorithms)
def test_argsort_is_stable_and_puts_nan_last(backend, repeats):
    row = [1.0, np.nan, 0.0, 1.0, -np.inf, -0.0, np.nan, 1.0, np.inf, -2.5]
    x = np.array([row * repeats] * 2)
    got = myia.compile(lambda x: np.argsort(x), backend=backend)(x)
    np.testing.assert_array_equal(got, np.argsort(x, kind="stable"))
    ints = np.array([3, 1, -3, 1, 2] * 2 * repeats)
    got = myia.compile(lambda x: np.argsort(x), backend=backend)(ints)
    np.testing.assert_array_equal(got, np.argsort(ints, kind="stable"))
    flags = np.array([True, False, False, True] * 3 * repeats)
    got = myia.compile(lambda x: np.argsort(x), backend=backend)(flags)
    np.testing.assert_array_equal(got, np.argsort(flags, kind="stable"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_sort_of_many_elements(backend):
    x = np.random.default_rng(5).standard_normal((3, 1000))
    got = myia.compile(lambda x: np.sort(x, axis=1), backend=backend)(x)
    np.testing.assert_array_equal(got, np.sort(x, axis=1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_take_along_axis_broadcasts_and_counts_from_the_end(backend):
    def take(x, i):
        return np.take_along_axis(x, i, axis=1)

    x = np.arange(12.0).reshape(3, 4)
    i = np.array([[0, -1, 2, 2, -4]])
    np.testing.assert_array_equal(myia.compile(take, backend=backend)(x, i),
                                  np.take_along_axis(x, np.broadcast_to(i, (3, 5)), axis=1))

    def s(x, i):
        return np.sum(take(x, i) * 2.0)

    want = np.zeros((3, 4))
    for j in i[0]:
        want[:, j] += 2.0  # repeated indices add up
    np.testing.assert_array_equal(myia.compile(myia.grad(s), backend=backend)(x, i), want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_take_along_axis_refuses_an_index_out_of_bounds(backend):
    def take(x, i):
        return np.take_along_axis(x, i, axis=0)

    with pytest.raises(MyiaValueError, match="index 3 is out of bounds for axis 0 with size 3"):
        myia.compile(take, backend=backend)(np.ones(3), np.array([0, 3]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_split_pieces_are_views_of_strided_arrays(backend):
    def f(x):
        a, b = np.split(x.T[::-1], (1,), axis=1)
        return np.concatenate((b, a, b[:, :1]), axis=1)

    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(myia.compile(f, backend=backend)(x), f(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_newaxis_gradient_of_an_outer_difference(backend):
    def pairwise(x):
        d = x[:, None, :] - x[None, :, :]
        return np.sum(d * d)

    x = np.random.default_rng(3).standard_normal((4, 2))
    got = myia.compile(myia.grad(pairwise), backend=backend)(x)
    want = autograd.grad(lambda x: anp.sum((x[:, None, :] - x[None, :, :]) ** 2))(x)
    np.testing.assert_allclose(got, want, rtol=1e-12)


# ---- errors ----------------------------------------------------------------------------------


def split_unequal(x):
    return np.split(x, 3)


def split_overlapping(x):
    return np.split(x, (3, 1))


def squeeze_long_axis(x):
    return np.squeeze(x, 1)


def concatenate_mismatch(x):
    return np.concatenate((x, x.T), axis=0)


def pad_mean(x):
    return np.pad(x, 1, mode="mean")


def diag_3d(x):
    return np.diag(x)


def fliplr_vector(x):
    return np.fliplr(x[0])


def partition_kth(x):
    return np.partition(x, 7)


def moveaxis_out_of_range(x):
    return np.moveaxis(x, 2, 0)


def stack_shapes(x):
    return np.stack((x, x[:1]))


def roll_by(x, n):
    return np.roll(x, n)


def concatenate_numbers(x):
    return np.concatenate((x, 1.0))


def concatenate_nothing(x):
    return np.concatenate(())


@pytest.mark.parametrize("fn, args, error, message", [
    (split_unequal, (np.ones((4, 2)),), MyiaValueError, "array split does not result in an equal"),
    (split_overlapping, (np.ones(5),), MyiaValueError, "give overlapping pieces"),
    (squeeze_long_axis, (np.ones((2, 3)),), MyiaValueError, "cannot select an axis to squeeze"),
    (concatenate_mismatch, (np.ones((2, 3)),), MyiaShapeError,
     "along dimension 1, the array at index 0 has size 3 and the array at index 1 has size 2"),
    (pad_mean, (np.ones(3),), MyiaValueError, "np.pad mode 'mean' is not supported"),
    (diag_3d, (np.ones((2, 2, 2)),), MyiaValueError, "Input must be 1- or 2-d"),
    (fliplr_vector, (np.ones((2, 2)),), MyiaValueError, "Input must be >= 2-d"),
    (partition_kth, (np.ones(5),), MyiaValueError, r"kth\(=7\) out of bounds \(5\)"),
    (moveaxis_out_of_range, (np.ones((2, 2)),), MyiaShapeError, "out of bounds"),
    (stack_shapes, (np.ones((2, 2)),), MyiaShapeError, "must have the same shape"),
    (roll_by, (np.ones(3), 1), MyiaTypeError, "needs values known at compile time"),
    (concatenate_numbers, (np.ones(3),), MyiaTypeError, "expects a tuple or a list of arrays"),
    (concatenate_nothing, (np.ones(3),), MyiaValueError, "need at least one array"),
], ids=lambda v: v.__name__ if callable(v) else None)
def test_bad_arguments_are_located_errors(fn, args, error, message):
    with pytest.raises(error, match=message) as e:
        myia.compile(fn, backend="vm")(*args)
    assert isinstance(e.value, MyiaError) and e.value.loc is not None


# ---- the CuPy backend (on the CPU emulator) ------------------------------------------------------


def joined(x, y):
    a, b = np.split(np.concatenate((x, y * y), axis=1), (2,), axis=1)
    return np.sum(a * b[:, :2])


def test_concatenate_and_split_stay_on_the_device():
    from myia.backend.cupy import CupyBackend, to_numpy
    from myia.backend.cupy.emulator import Emulator
    from myia.pipeline import optimized_program

    b = CupyBackend(optimized_program, xp=Emulator())
    g = myia.grad(joined, (0, 1))
    args = (np.arange(6.0).reshape(2, 3), np.arange(4.0).reshape(2, 2) - 1.5)
    got = to_numpy(b.run(g, args))
    assert b.stats["host_fallback:concatenate"] == b.stats["host_fallback:split"] == 0
    want = myia.compile(g, backend="vm")(*args)
    for u, v in zip(got, want):
        np.testing.assert_allclose(u, v, rtol=1e-12)
