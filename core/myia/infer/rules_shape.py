"""Inference rules of the rearrangement primitives (myia.prim.rearrange; see rules.py for
the conventions).  Shapes are static, so each rule checks what the implementation
checks (with the same messages, from the functions the implementation uses)."""

from ..errors import MyiaShapeError, MyiaStaticError, MyiaTypeError
from ..prim import ops as P
from ..prim.rearrange import check_bounds, concat_shape, normalize_axis, take_shape
from ..abstract import NOT_CONSTANT, AArray, AScalar, ATuple, constant_value
from .rules import _shape_abstract, fmt_shape, rule


def _static_int(a, what):
    v = constant_value(a)
    if v is NOT_CONSTANT or isinstance(v, bool) or not isinstance(v, int):
        raise MyiaStaticError(f"{what} must be an int known at compile time, got {a}")
    return v


def _arrays(xs, what):
    if not isinstance(xs, ATuple):
        raise MyiaTypeError(f"{what} expects a tuple or a list of arrays, got {xs}")
    for x in xs.elements:
        if not isinstance(x, AArray):
            raise MyiaTypeError(f"{what} expects a tuple or a list of arrays, got {xs}",
                                hint="a number is not an array: np.atleast_1d makes one")
        if None in x.shape:
            raise MyiaShapeError(f"{what} needs static shapes, got {x}")
    return xs.elements


def _array(x, what):
    if not isinstance(x, AArray):
        raise MyiaTypeError(f"{what} expects an array, got {x}")
    if None in x.shape:
        raise MyiaShapeError(f"{what} needs static shapes, got {x}")
    return x


@rule(P.concatenate)
def infer_concatenate(xs, axis):
    arrays = _arrays(xs, "concatenate")
    shape = concat_shape([a.shape for a in arrays], [a.dtype for a in arrays],
                         _static_int(axis, "the axis of concatenate"))
    return AArray(arrays[0].dtype, shape)


@rule(P.split)
def infer_split(x, bounds, axis):
    x = _array(x, "split")
    if x.ndim == 0:
        raise MyiaShapeError("a zero-dimensional array cannot be split")
    ax = normalize_axis(_static_int(axis, "the axis of split"), x.ndim)
    b = constant_value(bounds)
    if b is NOT_CONSTANT:
        raise MyiaStaticError(f"the split points must be known at compile time, got {bounds}")
    points = check_bounds(b, x.shape[ax])
    return ATuple(AArray(x.dtype, x.shape[:ax] + (hi - lo,) + x.shape[ax + 1:])
                  for lo, hi in zip(points, points[1:]))


@rule(P.concat_bounds)
def infer_concat_bounds(xs, axis):
    arrays = _arrays(xs, "concat_bounds")
    ax = normalize_axis(_static_int(axis, "the axis of concatenate"), arrays[0].ndim)
    points, total = [], 0
    for a in arrays[:-1]:
        total += a.shape[ax]
        points.append(total)
    return _shape_abstract(tuple(points))


@rule(P.argsort)
def infer_argsort(x, axis):
    if isinstance(x, AScalar) or (isinstance(x, AArray) and x.ndim == 0):
        raise MyiaShapeError("argsort needs an array of rank 1 or more, got a 0-d array")
    x = _array(x, "argsort")
    normalize_axis(_static_int(axis, "the axis of argsort"), x.ndim)
    return AArray("int64", x.shape)


def _take(x, idx, axis, what):
    x = _array(x, what)
    idx = _array(idx, what)
    if idx.dtype != "int64":
        raise MyiaTypeError(f"{what}: the indices must be an int64 array, got {idx}")
    return take_shape(x.shape, idx.shape, _static_int(axis, f"the axis of {what}"))


@rule(P.take_along_axis)
def infer_take_along_axis(x, idx, axis):
    return AArray(x.dtype, _take(x, idx, axis, "take_along_axis"))


@rule(P.take_along_axis_grad)
def infer_take_along_axis_grad(x, idx, axis, d):
    shape = _take(x, idx, axis, "take_along_axis_grad")
    d_shape = d.shape if isinstance(d, AArray) else ()
    if len(d_shape) > len(shape) or any(
            a != 1 and a != b for a, b in zip(d_shape[::-1], shape[::-1])):
        raise MyiaShapeError(
            f"the sensitivity of take_along_axis has shape {fmt_shape(d_shape)}, which does "
            f"not broadcast to {fmt_shape(shape)}")
    return AArray(x.dtype, x.shape)
