"""Inference rules of the reduce primitives of issue 18 (see rules.py for the conventions):
reduce_prod, argmax and argmin, and the scans cumsum, cumprod, linear_recurrence
(myia/prim/array.py, myia/prim/cumulative.py)."""

import numpy as np

from ..errors import MyiaShapeError, MyiaTypeError, MyiaValueError
from ..prim import ops as P
from ..abstract import NOT_CONSTANT, AArray, AScalar, constant_value
from .rules import _axes_of, _dtype_of, _shape_of, _sum_dtype, fmt_shape, rule


def _static_flag(flag, what):
    v = constant_value(flag)
    if v is NOT_CONSTANT or not isinstance(v, (bool, np.bool_)):
        raise MyiaTypeError(f"{what} must be a constant bool, got {flag}")
    return bool(v)


@rule(P.reduce_prod)
def infer_reduce_prod(x, axis, keepdims):
    src = _shape_of(x)
    axes = _axes_of(axis, len(src))
    if len(set(axes)) != len(axes):
        raise MyiaShapeError(f"duplicate value in axis {constant_value(axis)}")
    dtype = _sum_dtype(_dtype_of(x))  # NumPy: bool and int products are int64
    if _static_flag(keepdims, "keepdims of reduce_prod"):
        return AArray(dtype, [1 if i in axes else d for i, d in enumerate(src)])
    out = [d for i, d in enumerate(src) if i not in axes]
    return AArray(dtype, out) if out else AScalar(dtype, numpy=True)


def _scan_array(x, axis, reverse, what):
    if not isinstance(x, AArray) or x.ndim == 0:
        raise MyiaShapeError(f"{what} needs an array of at least one dimension, got {x}",
                             hint="reshape it first, or leave axis=None (which flattens)")
    v = constant_value(axis)
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise MyiaTypeError(f"the axis of {what} must be a constant int, got {axis}")
    _axes_of(axis, x.ndim)  # in bounds
    _static_flag(reverse, f"the direction of {what}")
    return x


@rule(P.cumsum, P.cumprod)
def infer_cumulative(x, axis, reverse):
    _scan_array(x, axis, reverse, "a cumulative sum or product")
    return AArray(_sum_dtype(x.dtype), x.shape)


@rule(P.linear_recurrence)
def infer_linear_recurrence(a, b, axis, reverse):
    _scan_array(a, axis, reverse, "linear_recurrence")
    sb = _shape_of(b)
    if len(sb) != a.ndim or any(p is not None and q is not None and p != q
                                for p, q in zip(a.shape, sb)):
        raise MyiaShapeError(
            f"linear_recurrence of shapes {fmt_shape(a.shape)} and {fmt_shape(sb)}: "
            f"they must be equal")
    dtype = np.result_type(np.dtype(a.dtype), np.dtype(_dtype_of(b))).name
    return AArray(dtype, [p if p is not None else q for p, q in zip(a.shape, sb)])


@rule(P.argmax, P.argmin)
def infer_arg_extremum(x, axis, keepdims):
    if not isinstance(x, AArray) or x.ndim == 0:
        raise MyiaShapeError(f"argmax and argmin need an array of at least one dimension, "
                             f"got {x}", hint="leave axis=None (which flattens)")
    v = constant_value(axis)
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise MyiaTypeError(f"the axis of argmax and argmin must be a constant int, got {axis}")
    (k,) = _axes_of(axis, x.ndim)
    if x.shape[k] == 0:
        raise MyiaValueError("attempt to get argmax or argmin of an empty sequence")
    if _static_flag(keepdims, "keepdims of argmax and argmin"):
        return AArray("int64", [1 if i == k else d for i, d in enumerate(x.shape)])
    out = [d for i, d in enumerate(x.shape) if i != k]
    return AArray("int64", out) if out else AScalar("int64", numpy=True)
