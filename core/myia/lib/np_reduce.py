"""NumPy's reductions, cumulative functions and statistics: sum, mean, prod, std, var,
max, min (amax, amin), cumsum, cumprod, diff, gradient, trace, and the
non-differentiable all, any, argmax, argmin.

Each is written in the subset over primitives (reduce_sum, reduce_max, reduce_prod,
cumsum, cumprod, getitem...), so its derivatives come from theirs.  NumPy's semantics:
`axis` is None (every axis), an int (negative counts from the end) or a tuple of ints,
checked at compile time; bool and int inputs give NumPy's dtypes (an int64 sum or
product, a float64 mean, var or gradient); `out=` is refused (arrays are values).

Choices without `if`: forward mode over reverse mode (myia.hessian) does not follow an
`if` yet, not even one on a constant, so the functions that programs differentiate
twice (all but diff and gradient, which recur over their count of steps) pick a variant
by indexing a tuple of functions with an index known at compile time (`_pick`).
"""

import numpy as np

from ..errors import MyiaShapeError, MyiaTypeError, MyiaValueError
from ..prim import compile_time
from ..prim import ops as P
from .np_shape import as_array

# ---- compile-time helpers ---------------------------------------------------------------


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _axis(a, x_ndim):
    if not _is_int(a):
        raise MyiaTypeError(f"an axis must be an int, got {a!r}")
    if not -x_ndim <= a < x_ndim:
        raise MyiaShapeError(f"axis {a} is out of bounds for an array of rank {x_ndim}")
    return int(a) % x_ndim


def _axes(x_ndim, axis):
    if axis is None:
        return tuple(range(x_ndim))
    axes = tuple(_axis(a, x_ndim) for a in (axis if isinstance(axis, tuple) else (axis,)))
    if len(set(axes)) != len(axes):
        raise MyiaShapeError(f"duplicate value in axis {axis}")
    return axes


@compile_time
def _checked_axes(x_ndim, axis):
    """`axis` (None, an int or a tuple of ints) as it is written, once checked."""
    _axes(x_ndim, axis)
    return axis


def _axes_of_number(axis):
    """Check `axis` of a 0-d array (a number), which NumPy's reductions by a ufunc
    (sum, max, any...), argmax and cumsum take for its no axes where it is 0 or -1."""
    for a in (axis if isinstance(axis, tuple) else (axis,)):
        _axis(a, 1)
        if a not in (0, -1):
            raise MyiaShapeError(f"axis {a} is out of bounds for an array of rank 0")


@compile_time
def _reduced_axes(x_ndim, axis):
    """`_checked_axes` for NumPy's reductions by a ufunc (sum, max, any...), which take
    axis 0 (or -1) of a 0-d array for its no axes (mean and var do not)."""
    if x_ndim == 0 and axis is not None:
        _axes_of_number(axis)
        return None
    return _checked_axes.impl(x_ndim, axis)


@compile_time
def _flat_for(x_ndim, axis):
    """1 where argmax, cumsum... work on the flattened array: axis None, or 0 (or -1)
    of a 0-d array, as NumPy takes it; else 0."""
    if x_ndim == 0 and axis is not None:
        _axes_of_number(axis)
        return 1
    return 1 if axis is None else 0


@compile_time
def _refusing_out(out_is_none, value):
    """`value`, where no `out=` array was given."""
    if not out_is_none:
        raise MyiaValueError("out= is not supported: arrays are values in the subset, "
                             "nothing writes into one", hint="use the result: y = np.sum(x)")
    return value


@compile_time
def _pick(flag):
    """1 if flag else 0: which of two functions (a pair) to call."""
    return 1 if flag else 0


@compile_time
def _kind(dtype):
    """0 for bool, 1 for an integer dtype, 2 for a float one."""
    return {"b": 0, "i": 1, "u": 1, "f": 2}[np.dtype(dtype).kind]


@compile_time
def _cast_to(dtype, requested):
    """The dtype to convert to (None: none) for a requested `dtype=` argument."""
    return None if requested is None or requested == dtype else requested


@compile_time
def _float_for(dtype, requested):
    """The dtype a mean, a variance or a gradient computes in (None: the input's own):
    `requested` if given, float64 for bool and int inputs (as NumPy)."""
    if requested is not None:
        return None if requested == dtype else requested
    return "float64" if np.dtype(dtype).kind in "biu" else None


@compile_time
def _float_requested(requested, what):
    """The dtype= of a variance: a float one (NumPy computes a variance requested in
    integers or bools in them, truncating each step: refused)."""
    if requested is not None and np.dtype(requested).kind != "f":
        raise MyiaTypeError(f"{what} with dtype={requested} is not supported: NumPy computes "
                            f"it in {requested}, truncating each step",
                            hint=f"compute in floats and convert: {what}(x).astype(...)")
    return requested


def _same(r):
    return r


def _nonzero(r):
    return r != 0


def _in_requested(r, requested):
    """A sum or a product `r` (of the input converted to `requested`): NumPy's in bools
    are an `or` and an `and`, the bools of the count and of the product."""
    return (_same, _nonzero)[_pick(requested == "bool")](r)


def _unchanged(a, dtype):
    return a


def _as(a, dtype):
    """a converted to dtype (None: a itself)."""
    return (_unchanged, P.astype)[_pick(dtype is not None)](a, dtype)


# ---- sums and products ------------------------------------------------------------------


def np_sum(a, axis=None, dtype=None, out=None, keepdims=False):
    a = as_array(a)  # array-likes (lists of numbers or arrays) too
    a = _as(a, _cast_to(P.dtype(a), dtype))
    axes = _reduced_axes(P.ndim(a), _refusing_out(out is None, axis))
    return _in_requested(P.reduce_sum(a, axes, keepdims), dtype)


def np_prod(a, axis=None, dtype=None, out=None, keepdims=False):
    a = as_array(a)  # array-likes (lists of numbers or arrays) too
    a = _as(a, _cast_to(P.dtype(a), dtype))
    axes = _reduced_axes(P.ndim(a), _refusing_out(out is None, axis))
    return _in_requested(P.reduce_prod(a, axes, keepdims), dtype)


def np_mean(a, axis=None, dtype=None, out=None, keepdims=False):
    a = as_array(a)  # array-likes (lists of numbers or arrays) too
    a = _as(a, _float_for(P.dtype(a), dtype))
    axes = _checked_axes(P.ndim(a), _refusing_out(out is None, axis))
    mean = P.reduce_sum(a, axes, keepdims) / P.reduced_size(P.shape(a), axes)
    return _as(mean, _cast_to(P.dtype(mean), dtype))  # (dtype=int: truncated, as NumPy)


def np_var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    a = as_array(a)  # array-likes (lists of numbers or arrays) too
    # NumPy's two passes: the mean, then the mean square of the deviations
    a = _as(a, _float_for(P.dtype(a), _float_requested(dtype, "np.var")))
    axes = _checked_axes(P.ndim(a), _refusing_out(out is None, axis))
    n = P.reduced_size(P.shape(a), axes)
    deviation = a - P.reduce_sum(a, axes, True) / n
    # (the count a Python int, max(n - ddof, 0): an int that does not promote float32)
    return P.reduce_sum(deviation * deviation, axes, keepdims) / ((n - ddof) * (n > ddof))


def np_std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return P.sqrt(np_var(a, axis, dtype, out, ddof, keepdims))


# ---- extrema -------------------------------------------------------------------------------


def np_max(a, axis=None, out=None, keepdims=False):
    a = as_array(a)  # array-likes (lists of numbers or arrays) too
    axes = _reduced_axes(P.ndim(a), _refusing_out(out is None, axis))
    return P.reduce_max(a, axes, keepdims)


# the min is the max of an order-reversing map: not x for bools, ~x = -1 - x for ints
# (which, unlike -x, never overflows), -x for floats


def _min_of_bools(a, axes, keepdims):
    return P.not_(P.reduce_max(P.not_(a), axes, keepdims))


def _min_of_ints(a, axes, keepdims):
    return -1 - P.reduce_max(-1 - a, axes, keepdims)


def _min_of_floats(a, axes, keepdims):
    return -P.reduce_max(-a, axes, keepdims)


def np_min(a, axis=None, out=None, keepdims=False):
    a = as_array(a)  # array-likes (lists of numbers or arrays) too
    axes = _reduced_axes(P.ndim(a), _refusing_out(out is None, axis))
    by_kind = (_min_of_bools, _min_of_ints, _min_of_floats)
    return by_kind[_kind(P.dtype(a))](a, axes, keepdims)


@compile_time
def _index_shape(x_ndim, keepdims):
    """The shape of a position in the flattened array: (1, ..., 1) with keepdims."""
    return (1,) * x_ndim if keepdims else ()


def _in_flat(arg, a, axis, keepdims):
    return P.reshape(arg(P.reshape(a, (-1,)), 0, False), _index_shape(P.ndim(a), keepdims))


def _along_axis(arg, a, axis, keepdims):
    return arg(a, _array_axis(P.ndim(a), axis, "np.argmax/argmin"), keepdims)


def np_argmax(a, axis=None, out=None, keepdims=False):
    a = as_array(a)  # array-likes (lists of numbers or arrays) too
    axis = _refusing_out(out is None, axis)
    return (_along_axis, _in_flat)[_flat_for(P.ndim(a), axis)](P.argmax, a, axis, keepdims)


def np_argmin(a, axis=None, out=None, keepdims=False):
    a = as_array(a)  # array-likes (lists of numbers or arrays) too
    axis = _refusing_out(out is None, axis)
    return (_along_axis, _in_flat)[_flat_for(P.ndim(a), axis)](P.argmin, a, axis, keepdims)


# ---- truth ---------------------------------------------------------------------------------


def np_any(a, axis=None, out=None, keepdims=False):
    a = as_array(a)  # array-likes (lists of numbers or arrays) too
    axes = _reduced_axes(P.ndim(a), _refusing_out(out is None, axis))
    return P.reduce_sum(P.ne(a, 0), axes, keepdims) > 0


def np_all(a, axis=None, out=None, keepdims=False):
    a = as_array(a)  # array-likes (lists of numbers or arrays) too
    axes = _reduced_axes(P.ndim(a), _refusing_out(out is None, axis))
    return P.reduce_sum(P.eq(a, 0), axes, keepdims) == 0


# ---- cumulative functions and differences -------------------------------------------------


@compile_time
def _scan_axis(axis, out_is_none):
    """The axis of a cumulative function: 0 for None (along the flattened array)."""
    return 0 if _refusing_out.impl(out_is_none, axis) is None else axis


def _flat(a):
    return P.reshape(a, (-1,))


def _whole(a):
    return a


def np_cumsum(a, axis=None, dtype=None, out=None):
    a = as_array(a)  # array-likes (lists of numbers or arrays) too
    a = (_whole, _flat)[_flat_for(P.ndim(a), axis)](_as(a, _cast_to(P.dtype(a), dtype)))
    return _in_requested(P.cumsum(a, _scan_axis(axis, out is None), False), dtype)


def np_cumprod(a, axis=None, dtype=None, out=None):
    a = as_array(a)  # array-likes (lists of numbers or arrays) too
    a = (_whole, _flat)[_flat_for(P.ndim(a), axis)](_as(a, _cast_to(P.dtype(a), dtype)))
    return _in_requested(P.cumprod(a, _scan_axis(axis, out is None), False), dtype)


@compile_time
def _along(axis, start, stop):
    """The index tuple of the slice start:stop along `axis` (non-negative)."""
    return (slice(None),) * axis + (slice(start, stop),)


@compile_time
def _array_axis(x_ndim, axis, what):
    """`axis` of an array that must have at least one dimension, non-negative."""
    if x_ndim == 0:
        raise MyiaShapeError(f"{what} needs an array of at least one dimension, got a scalar")
    return _axis(axis, x_ndim)


@compile_time
def _count(n):
    """A tuple of n elements: a count that recursion takes apart (its length is
    static, so each step is specialized and every shape stays known)."""
    if not _is_int(n) or n < 0:
        raise MyiaValueError(f"order must be a non-negative int but got {n!r}")
    return (0,) * n


def _difference(later, earlier):
    if P.dtype(later) == "bool":
        return P.ne(later, earlier)  # NumPy: bools differ or not
    return later - earlier


def _differences(a, steps, axis):
    if len(steps) == 0:
        return a
    once = _difference(a[_along(axis, 1, None)], a[_along(axis, None, -1)])
    return _differences(once, P.tuple_tail(steps), axis)


@compile_time
def _end_shape(a_shape, value_shape, axis):
    """The shape of what np.diff puts before or after `a` along axis: a scalar becomes
    one step of a's shape, an array stays as it is."""
    if value_shape:
        return value_shape
    return a_shape[:axis] + (1,) + a_shape[axis + 1:]


@compile_time
def _common_dtype(dtype1, dtype2):
    """NumPy's promotion of two dtypes."""
    return np.result_type(dtype1, dtype2).name


def _joined(before, after, axis):
    dtype = _common_dtype(P.dtype(before), P.dtype(after))
    return P.concatenate((_as(before, _cast_to(P.dtype(before), dtype)),
                          _as(after, _cast_to(P.dtype(after), dtype))), axis)


def _end(value, a, axis):
    return P.broadcast_to(value, _end_shape(P.shape(a), P.shape(value), axis))


def np_diff(a, n=1, axis=-1, prepend=None, append=None):
    axis = _array_axis(P.ndim(a), axis, "np.diff")
    if prepend is not None:
        a = _joined(_end(prepend, a, axis), a, axis)
    if append is not None:
        a = _joined(a, _end(append, a, axis), axis)
    return _differences(a, _count(n), axis)


@compile_time
def _gradient_axes(x_shape, axis, edge_order, spacing_ndim, dtype):
    """The axes np.gradient differentiates along, checked."""
    if dtype == "bool" and len(x_shape):
        raise MyiaTypeError("np.gradient of bools: NumPy subtracts them, which it refuses",
                            hint="convert them first: x.astype(float)")
    if spacing_ndim != 0:
        raise MyiaValueError("np.gradient takes a scalar spacing here; coordinate arrays "
                             "are not supported",
                             hint="for a non-uniform grid, write the differences with np.diff")
    if edge_order not in (1, 2) or isinstance(edge_order, bool):
        raise MyiaValueError(f"edge_order must be 1 or 2, got {edge_order!r}")
    axes = _axes(len(x_shape), axis)
    for k in axes:
        if x_shape[k] < edge_order + 1:
            raise MyiaShapeError(
                f"np.gradient along axis {k} of length {x_shape[k]}: at least edge_order + 1 "
                f"= {edge_order + 1} elements are required")
    return axes


def _gradient_along(f, axis, h, edge_order):
    # NumPy's formulas, term by term: second-order differences inside, first- or
    # second-order one-sided ones at the two ends
    def part(start, stop):
        return f[_along(axis, start, stop)]

    inside = (part(2, None) - part(None, -2)) / (2.0 * h)
    if edge_order == 1:
        first = (part(1, 2) - part(0, 1)) / h
        last = (part(-1, None) - part(-2, -1)) / h
    else:
        first = -1.5 / h * part(0, 1) + 2.0 / h * part(1, 2) + -0.5 / h * part(2, 3)
        last = 0.5 / h * part(-3, -2) + -2.0 / h * part(-2, -1) + 1.5 / h * part(-1, None)
    return P.concatenate((first, inside, last), axis)


def _gradients(f, axes, h, edge_order):
    if len(axes) == 0:
        return ()
    return P.tuple_cons(_gradient_along(f, axes[0], h, edge_order),
                        _gradients(f, P.tuple_tail(axes), h, edge_order))


def np_gradient(f, spacing=1.0, axis=None, edge_order=1):
    # NumPy's spacing is `*varargs` before keyword-only axis and edge_order, which the
    # subset cannot declare: here one scalar spacing, the same along every axis
    axes = _gradient_axes(P.shape(f), axis, edge_order, P.ndim(spacing), P.dtype(f))
    f = _as(f, _float_for(P.dtype(f), None))
    grads = _gradients(f, axes, spacing, edge_order)
    if len(axes) == 1:
        return grads[0]
    return grads


@compile_time
def _diagonal(x_shape, offset, axis1, axis2):
    """How np.trace reads the diagonals of an array of shape x_shape: (a permutation
    moving axis1 and axis2 last, the shape with those two flattened into one, the
    index of the diagonal along that last axis)."""
    rank = len(x_shape)
    if rank < 2:
        raise MyiaShapeError(f"np.trace needs an array of at least two dimensions, "
                             f"got {rank}")
    if not _is_int(offset):
        raise MyiaTypeError(f"the offset of np.trace must be an int, got {offset!r}")
    a1, a2 = _axis(axis1, rank), _axis(axis2, rank)
    if a1 == a2:
        raise MyiaValueError("axis1 and axis2 cannot be the same")
    rest = [k for k in range(rank) if k not in (a1, a2)]
    n1, n2 = x_shape[a1], x_shape[a2]
    row, col = max(-offset, 0), max(offset, 0)
    count = max(0, min(n1 - row, n2 - col))
    start = row * n2 + col
    diagonal = slice(start, start + (count - 1) * (n2 + 1) + 1, n2 + 1) if count else slice(0, 0)
    return (tuple(rest) + (a1, a2), tuple(x_shape[k] for k in rest) + (n1 * n2,),
            (slice(None),) * len(rest) + (diagonal,))


def np_trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    a = _as(a, _cast_to(P.dtype(a), dtype))
    order, flat_shape, diagonal = _diagonal(P.shape(a), _refusing_out(out is None, offset),
                                            axis1, axis2)
    flat = P.reshape(P.transpose(a, order), flat_shape)
    return _in_requested(P.reduce_sum(flat[diagonal], (len(flat_shape) - 1,), False), dtype)


NAMES = {
    np.sum: np_sum,
    np.prod: np_prod,
    np.mean: np_mean,
    np.var: np_var,
    np.std: np_std,
    np.max: np_max,
    np.amax: np_max,
    np.min: np_min,
    np.amin: np_min,
    np.argmax: np_argmax,
    np.argmin: np_argmin,
    np.any: np_any,
    np.all: np_all,
    np.cumsum: np_cumsum,
    np.cumprod: np_cumprod,
    np.diff: np_diff,
    np.gradient: np_gradient,
    np.trace: np_trace,
}
