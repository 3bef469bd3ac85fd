"""Reductions, cumulative functions and statistics (issue 18): cases for
tests/numpy/test_reduce.py.

Everything above `# ---- cases` is machinery; below, subset code written with `np.`
(re-executed with autograd.numpy for the reference gradients).  autograd has no
derivative of cumprod, divides by x in prod's (nan where an element is 0), and knows
only `axis` among np.gradient's options, `offset` among np.trace's and neither of
np.diff's prepend and append: those cases (`autograd=False`) are checked against finite
differences, of the function and of myia's own gradient.
"""

import numpy as np

from .harness import collector

CASES, case = collector()
_rng = np.random.default_rng(0)


def rand(*shape):
    return _rng.standard_normal(shape)


def ints(*shape):
    return _rng.integers(-4, 5, shape)


def bools(*shape):
    return _rng.random(shape) > 0.5


def with_zeros(*shape):
    """Random values, one zero in each row of the last axis, two in the first row."""
    x = _rng.uniform(0.5, 1.5, shape) * _rng.choice([-1.0, 1.0], shape)
    flat = x.reshape(-1, shape[-1])
    flat[np.arange(flat.shape[0]), _rng.integers(0, shape[-1], flat.shape[0])] = 0.0
    flat[0, :2] = 0.0
    return x


#: values with ties of two (max and min split the sensitivity between them, which is
#: also what central differences measure there)
TIES = np.array([[1.0, 3.0, 3.0, -2.0], [0.5, -1.0, 0.5, -1.0], [2.0, -3.0, -3.0, 2.0]])
#: values with nans (argmax and argmin answer the first nan)
NANS = np.array([[1.0, np.nan, 3.0], [4.0, 2.0, np.nan], [0.0, 5.0, -1.0]])


# ---- cases


# ---- sum


@case("sum", rand(3, 4))
def sum_all(x):
    return np.sum(x)


@case("sum", rand(3, 4))
def sum_axis0(x):
    return np.sum(x, axis=0)


@case("sum", rand(3, 4))
def sum_negative_axis_keepdims(x):
    return np.sum(x, axis=-1, keepdims=True)


@case("sum", rand(2, 3, 4))
def sum_axis_tuple(x):
    return np.sum(x, axis=(0, -1))


@case("sum", 1.5)
def sum_scalar(x):
    return np.sum(x) * x


@case("sum", ints(3, 4), order=0)
def sum_int(x):
    return np.sum(x, axis=1)


@case("sum", bools(3, 4), order=0)
def sum_bool(x):
    return np.sum(x)


@case("sum", ints(3, 4), order=0)
def sum_dtype(x):
    return np.sum(x, axis=0, dtype=np.float64)


# ---- mean


@case("mean", rand(3, 4))
def mean_all(x):
    return np.mean(x)


@case("mean", rand(2, 3, 4))
def mean_axes_keepdims(x):
    return np.mean(x, axis=(0, 2), keepdims=True)


@case("mean", rand(3, 4).astype(np.float32), rtol=1e-6, grad_rtol=1e-5)
def mean_float32(x):
    return np.mean(x, axis=1)


@case("mean", ints(3, 4), order=0)
def mean_int(x):
    return np.mean(x, axis=-1)


@case("mean", bools(3, 4), order=0)
def mean_bool(x):
    return np.mean(x)


# ---- prod


@case("prod", rand(3, 4))
def prod_all(x):
    return np.prod(x)


@case("prod", rand(3, 4))
def prod_axis0(x):
    return np.prod(x, axis=0)


@case("prod", rand(2, 3, 4))
def prod_axes_keepdims(x):
    return np.prod(x, axis=(-1, 0), keepdims=True)


@case("prod", with_zeros(3, 5), autograd=False)
def prod_zeros(x):
    return np.prod(x, axis=1)


@case("prod", with_zeros(2, 5), autograd=False)
def prod_zeros_all(x):
    return np.prod(x)


@case("prod", with_zeros(4, 3), autograd=False)
def prod_zeros_axis0(x):
    return np.prod(x, axis=0, keepdims=True)


@case("prod", rand(3, 40))
def prod_of_expression(x):
    return np.prod(x * 0.1 + 1.0, axis=1)


@case("prod", 1.5)
def prod_scalar(x):
    return np.prod(x) * x


@case("prod", ints(3, 4), order=0)
def prod_int(x):
    return np.prod(x, axis=1)


@case("prod", bools(3, 4), order=0)
def prod_bool(x):
    return np.prod(x, axis=0)


# ---- var and std


@case("var", rand(3, 4))
def var_all(x):
    return np.var(x)


@case("var", rand(3, 4))
def var_axis0_ddof(x):
    return np.var(x, axis=0, ddof=1)


@case("var", rand(2, 3, 4))
def var_axes_keepdims(x):
    return np.var(x, axis=(0, -1), keepdims=True)


@case("var", ints(3, 4), order=0)
def var_int(x):
    return np.var(x, axis=1)


@case("std", rand(3, 4))
def std_all(x):
    return np.std(x)


@case("std", rand(3, 4))
def std_axis1_ddof(x):
    return np.std(x, axis=1, ddof=1)


@case("std", rand(2, 3, 4))
def std_axes_keepdims(x):
    return np.std(x, axis=(1, 2), keepdims=True)


@case("std", ints(3, 4), order=0)
def std_int(x):
    return np.std(x)


# ---- max and min


@case("max", rand(3, 4))
def max_all(x):
    return np.max(x)


@case("max", TIES)
def max_ties(x):
    return np.max(x, axis=1)


@case("max", rand(3, 40))
def max_of_exp(x):
    return np.max(np.exp(x), axis=-1)


@case("amax", rand(2, 3, 4))
def amax_axes_keepdims(x):
    return np.amax(x, axis=(0, 2), keepdims=True)


@case("min", rand(3, 4))
def min_axis0(x):
    return np.min(x, axis=0)


@case("min", TIES)
def min_ties(x):
    return np.min(x, axis=-1, keepdims=True)


@case("amin", rand(3, 4))
def amin_all(x):
    return np.amin(x)


@case("min", np.array([[-(2 ** 63), 5, 7], [3, 2 ** 63 - 1, -1]]), order=0)
def min_int_extremes(x):
    return np.min(x, axis=1)


@case("max", ints(3, 4), order=0)
def max_int(x):
    return np.max(x, axis=0)


@case("min", bools(3, 4), order=0)
def min_bool(x):
    return np.min(x, axis=1)


# ---- cumsum and cumprod


@case("cumsum", rand(3, 4))
def cumsum_flat(x):
    return np.cumsum(x)


@case("cumsum", rand(3, 4))
def cumsum_axis0(x):
    return np.cumsum(x, axis=0)


@case("cumsum", rand(2, 3, 4))
def cumsum_last(x):
    return np.cumsum(x, axis=-1)


@case("cumsum", ints(3, 4), order=0)
def cumsum_int(x):
    return np.cumsum(x, axis=1)


@case("cumsum", bools(3, 4), order=0)
def cumsum_bool(x):
    return np.cumsum(x, axis=0)


@case("cumsum", ints(3, 4), order=0)
def cumsum_dtype(x):
    return np.cumsum(x, dtype=np.float64)


@case("cumprod", rand(3, 4), autograd=False)
def cumprod_flat(x):
    return np.cumprod(x)


@case("cumprod", rand(3, 4), autograd=False)
def cumprod_axis0(x):
    return np.cumprod(x, axis=0)


@case("cumprod", rand(2, 3, 4), autograd=False)
def cumprod_middle(x):
    return np.cumprod(x, axis=1)


@case("cumprod", with_zeros(3, 5), autograd=False)
def cumprod_zeros(x):
    return np.cumprod(x, axis=-1)


@case("cumprod", with_zeros(3, 5), autograd=False)
def cumprod_zeros_strided(x):
    return np.cumprod(x.T, axis=0)


@case("cumprod", ints(3, 4), order=0)
def cumprod_int(x):
    return np.cumprod(x, axis=1)


# ---- diff and gradient


@case("diff", rand(3, 5))
def diff_last(x):
    return np.diff(x)


@case("diff", rand(4, 3))
def diff_twice_axis0(x):
    return np.diff(x, 2, axis=0)


@case("diff", rand(2, 5, 3))
def diff_three_times(x):
    return np.diff(x, n=3, axis=1)


@case("diff", rand(4))
def diff_zero_times(x):
    return np.diff(x, n=0)


@case("diff", rand(3, 4), autograd=False)
def diff_prepend(x):
    return np.diff(x, axis=0, prepend=0.5)


@case("diff", rand(3, 4), rand(3, 2), autograd=False)
def diff_append_array(x, y):
    return np.diff(x, 2, append=y)


@case("diff", rand(3, 4), autograd=False)
def diff_both_ends(x):
    return np.diff(x, prepend=x[:, :1], append=0.0)


@case("diff", ints(3, 4), order=0)
def diff_int_prepend_float(x):
    return np.diff(x, prepend=1.5)


@case("diff", ints(3, 5), order=0)
def diff_int(x):
    return np.diff(x, 2)


@case("diff", bools(3, 5), order=0)
def diff_bool(x):
    return np.diff(x)


@case("gradient", rand(6))
def gradient_1d(x):
    return np.gradient(x)


@case("gradient", rand(4, 5))
def gradient_2d(x):
    gx, gy = np.gradient(x)
    return gx - 2.0 * gy


@case("gradient", rand(4, 5), order=0)
def gradient_2d_value(x):
    return np.gradient(x)


@case("gradient", rand(3, 4, 5))
def gradient_axis(x):
    return np.gradient(x, axis=-1)


@case("gradient", rand(3, 4, 5), order=0)
def gradient_axes(x):
    return np.gradient(x, axis=(2, 0))


@case("gradient", rand(4, 5), autograd=False)
def gradient_edge_order_2(x):
    return np.gradient(x, axis=0, edge_order=2)


@case("gradient", rand(2, 3), autograd=False)
def gradient_short_axes(x):
    gx, gy = np.gradient(x)
    return gx * gy


@case("gradient", rand(7), autograd=False)
def gradient_spacing(x):
    return np.gradient(x, 0.25, edge_order=2)


@case("gradient", ints(4, 5), order=0)
def gradient_int(x):
    return np.gradient(x, axis=1)


# ---- trace


@case("trace", rand(4, 4))
def trace_square(x):
    return np.trace(x)


@case("trace", rand(3, 5))
def trace_offset(x):
    return np.trace(x, 1)


@case("trace", rand(5, 3))
def trace_negative_offset(x):
    return np.trace(x, offset=-2)


@case("trace", rand(3, 4))
def trace_offset_outside(x):
    return np.trace(x, offset=4) + np.sum(x)


@case("trace", rand(3, 2, 4), autograd=False)
def trace_axes(x):
    return np.trace(x, 0, 2, 0)


@case("trace", ints(3, 3), order=0)
def trace_int(x):
    return np.trace(x)


@case("trace", bools(3, 3), order=0)
def trace_bool(x):
    return np.trace(x)


# ---- truth and positions (not differentiable)


@case("any", rand(3, 4), order=0)
def any_axis(x):
    return np.any(x > 1.0, axis=0)


@case("any", np.array([[0.0, 0.0], [0.0, np.nan]]), order=0)
def any_float(x):
    return np.any(x, axis=1, keepdims=True)


@case("all", rand(3, 4), order=0)
def all_flat(x):
    return np.all(x > -1.0)


@case("all", ints(3, 4), order=0)
def all_int(x):
    return np.all(x, axis=(0, 1))


@case("argmax", rand(3, 4), order=0)
def argmax_flat(x):
    return np.argmax(x)


@case("argmax", TIES, order=0)
def argmax_ties(x):
    return np.argmax(x, axis=1)


@case("argmax", NANS, order=0)
def argmax_nans(x):
    return np.argmax(x, axis=0)


@case("argmin", NANS, order=0)
def argmin_nans(x):
    return np.argmin(x, axis=-1, keepdims=True)


@case("argmin", TIES, order=0)
def argmin_flat_keepdims(x):
    return np.argmin(x, keepdims=True)


@case("argmin", ints(3, 4), order=0)
def argmin_int(x):
    return np.argmin(x, axis=0)


@case("argmax", bools(3, 4), order=0)
def argmax_bool(x):
    return np.argmax(x, axis=1)


@case("argmax", rand(8), order=1)
def argmax_picks(x):
    # the position is a constant of the gradient: d/dx x[argmax(x)] is one-hot
    return x[np.argmax(x)] * 2.0


@case("max", NANS, order=0)
def max_nans(x):
    return np.max(x, axis=1)
