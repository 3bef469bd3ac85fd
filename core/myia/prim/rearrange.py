"""Rearranging arrays: joining, splitting, sorting and gathering along an axis.

Most of NumPy's rearrangements are reshapes, transposes and slices of static shapes
(myia.lib.np_shape); these primitives are what those cannot express:

    concatenate(xs, axis)               np.concatenate of a tuple of arrays of one dtype
    split(x, bounds, axis)              the pieces of x between the split points `bounds`
                                        (non-decreasing, in [0, len]): a tuple of arrays
    argsort(x, axis)                    np.argsort, stable (equal keys keep their order;
                                        nan last), on every backend
    take_along_axis(x, idx, axis)       np.take_along_axis (idx broadcast against x)
    take_along_axis_grad(x, idx, axis, d)
                                        zeros like x, with d added where take_along_axis
                                        read each element (repeated indices add up)

concatenate and split undo each other, and so are each other's bprop;
take_along_axis and take_along_axis_grad are each other's transpose, like getitem and
getitem_grad.  A sort is take_along_axis(x, argsort(x, axis), axis): its gradient sends
each sensitivity back to where its element came from.  A gather whose indices are known
at compile time (np.pad, np.roll, np.repeat, np.tile) is a take_along_axis of a
constant index array.
"""

import numpy as np

from ..errors import MyiaShapeError, MyiaTypeError, MyiaValueError
from .grad_ops import zeros_like
from .primitive import Primitive, batch, bprop, jet, jvp, linear_in
from .shape import _as_array, _scalar_if_0d, broadcast_to
from .structure import make_tuple, tuple_getitem


def normalize_axis(axis, ndim, what="axis"):
    """`axis` in [0, ndim), or the MyiaShapeError NumPy's AxisError stands for."""
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise MyiaTypeError(f"{what} must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise MyiaShapeError(f"{what} {axis} is out of bounds for an array of rank {ndim}")
    return int(axis) % ndim


# ---- joining and splitting ----------------------------------------------------------------


def concat_shape(shapes, dtypes, axis):
    """The shape of concatenate(xs, axis) for xs of these shapes and dtypes (checked as
    NumPy does; the inference rule and the implementation share it)."""
    if not shapes:
        raise MyiaValueError("need at least one array to concatenate")
    if len(set(dtypes)) > 1:
        raise MyiaTypeError(
            f"concatenate expects arrays of one dtype, got {', '.join(dtypes)}",
            hint="np.concatenate converts them; the primitive does not")
    first = shapes[0]
    if not first:
        raise MyiaValueError("zero-dimensional arrays cannot be concatenated")
    axis = normalize_axis(axis, len(first))
    total = 0
    for k, s in enumerate(shapes):
        if len(s) != len(first):
            raise MyiaShapeError(
                "all the input arrays must have the same number of dimensions, but the "
                f"array at index 0 has {len(first)} dimension(s) and the array at index "
                f"{k} has {len(s)} dimension(s)")
        for i, (a, b) in enumerate(zip(first, s)):
            if i != axis and a != b:
                raise MyiaShapeError(
                    "all the input array dimensions except for the concatenation axis "
                    f"must match exactly, but along dimension {i}, the array at index 0 "
                    f"has size {a} and the array at index {k} has size {b}")
        total += s[axis]
    return first[:axis] + (total,) + first[axis + 1:]


def _concatenate(xs, axis):
    if not isinstance(xs, tuple):
        raise MyiaTypeError(f"concatenate expects a tuple of arrays, got a {type(xs).__name__}")
    arrays = [_as_array(x) for x in xs]
    concat_shape([a.shape for a in arrays], [a.dtype.name for a in arrays], axis)
    return np.concatenate(arrays, axis)


def check_bounds(bounds, n):
    """Split points: non-decreasing ints in [0, n]."""
    if not isinstance(bounds, tuple):
        raise MyiaTypeError(f"the split points must be a tuple of ints, got {bounds!r}")
    prev = 0
    for b in bounds:
        if isinstance(b, (bool, np.bool_)) or not isinstance(b, (int, np.integer)):
            raise MyiaTypeError(f"the split points must be ints, got {bounds!r}")
        if not prev <= b <= n:
            raise MyiaValueError(
                f"split points {bounds} must be non-decreasing and in [0, {n}]")
        prev = b
    return (0,) + tuple(int(b) for b in bounds) + (n,)


def _split(x, bounds, axis):
    x = _as_array(x)
    if x.ndim == 0:
        raise MyiaValueError("a zero-dimensional array cannot be split")
    axis = normalize_axis(axis, x.ndim)
    points = check_bounds(bounds, x.shape[axis])
    lead = (slice(None),) * axis
    return tuple(x[lead + (slice(a, b),)] for a, b in zip(points, points[1:]))


def _concat_bounds(xs, axis):
    axis = normalize_axis(axis, np.ndim(xs[0]))
    sizes = np.cumsum([np.shape(x)[axis] for x in xs])
    return tuple(int(s) for s in sizes[:-1])


concatenate = Primitive("concatenate", _concatenate,
                        "np.concatenate(xs, axis) of a tuple of arrays of one dtype",
                        foldable=True)
split = Primitive("split", _split,
                  "the pieces of x between the split points `bounds` along axis (a tuple)")
concat_bounds = Primitive("concat_bounds", _concat_bounds,
                          "the split points that undo concatenate(xs, axis)", nondiff=True)


@bprop(concatenate)
def bprop_concatenate(xs, axis, out, dout):
    return (split(dout, concat_bounds(xs, axis), axis), zeros_like(axis))


@jvp(concatenate)
def jvp_concatenate(xs, axis, dxs, daxis):
    return concatenate(dxs, axis)


jet(concatenate)(linear_in(0))


@bprop(split)
def bprop_split(x, bounds, axis, out, dout):
    return (concatenate(dout, axis), zeros_like(bounds), zeros_like(axis))


@jvp(split)
def jvp_split(x, bounds, axis, dx, dbounds, daxis):
    return split(dx, bounds, axis)


jet(split)(linear_in(0))


# ---- sorting and gathering ----------------------------------------------------------------


def _argsort(x, axis):
    x = _as_array(x)
    if x.ndim == 0:
        raise MyiaShapeError("argsort needs an array of rank 1 or more, got a 0-d array")
    return np.argsort(x, axis=normalize_axis(axis, x.ndim), kind="stable")


argsort = Primitive("argsort", _argsort,
                    "np.argsort(x, axis), stable (nan last)", nondiff=True)


def take_shape(x_shape, idx_shape, axis):
    """The shape of take_along_axis for these shapes (checked as NumPy does)."""
    if len(idx_shape) != len(x_shape):
        raise MyiaShapeError(
            f"take_along_axis: the indices have rank {len(idx_shape)} and the array rank "
            f"{len(x_shape)}; they must have the same rank")
    axis = normalize_axis(axis, len(x_shape))
    out = []
    for i, (a, b) in enumerate(zip(x_shape, idx_shape)):
        if i == axis:
            out.append(b)
        elif a == b or b == 1:
            out.append(a)
        elif a == 1:
            out.append(b)
        else:
            raise MyiaShapeError(
                f"take_along_axis: the indices of shape {tuple(idx_shape)} do not broadcast "
                f"against the array of shape {tuple(x_shape)} (axis {i})")
    return tuple(out)


def _check_indices(idx, n, axis):
    idx = _as_array(idx)
    if idx.dtype.kind not in "iu":
        raise MyiaTypeError(f"indices must be integers, got an array of {idx.dtype.name}")
    bad = (idx >= n) | (idx < -n)
    if bad.any():
        raise MyiaValueError(
            f"index {int(idx[bad].flat[0])} is out of bounds for axis {axis} with size {n}")
    return idx


def _take_along_axis(x, idx, axis):
    x = _as_array(x)
    out_shape = take_shape(x.shape, np.shape(idx), axis)
    axis = normalize_axis(axis, x.ndim)
    idx = np.broadcast_to(_check_indices(idx, x.shape[axis], axis),
                          out_shape[:axis] + (np.shape(idx)[axis],) + out_shape[axis + 1:])
    x = np.broadcast_to(x, out_shape[:axis] + (x.shape[axis],) + out_shape[axis + 1:])
    return np.take_along_axis(x, idx, axis)


def _take_along_axis_grad(x, idx, axis, d):
    x = _as_array(x)
    out_shape = take_shape(x.shape, np.shape(idx), axis)
    axis = normalize_axis(axis, x.ndim)
    idx = _check_indices(idx, x.shape[axis], axis)
    out = np.zeros_like(x)
    # the position in x of each element of d: idx on the axis, the element's own index
    # elsewhere (0 where x has length 1 and was broadcast)
    where = []
    for k, n in enumerate(x.shape):
        if k == axis:
            where.append(np.broadcast_to(idx, out_shape))
        else:
            r = np.arange(out_shape[k]) if n != 1 else np.zeros(out_shape[k], np.int64)
            where.append(r.reshape([-1 if j == k else 1 for j in range(x.ndim)]))
    np.add.at(out, tuple(where), np.broadcast_to(d, out_shape))
    return _scalar_if_0d(out)


take_along_axis = Primitive("take_along_axis", _take_along_axis,
                            "np.take_along_axis(x, idx, axis), idx broadcast against x")
take_along_axis_grad = Primitive(
    "take_along_axis_grad", _take_along_axis_grad,
    "zeros like x, with d added where take_along_axis(x, idx, axis) read each element")


@bprop(take_along_axis)
def bprop_take_along_axis(x, idx, axis, out, dout):
    return (take_along_axis_grad(x, idx, axis, dout), zeros_like(idx), zeros_like(axis))


@jvp(take_along_axis)
def jvp_take_along_axis(x, idx, axis, dx, didx, daxis):
    return take_along_axis(dx, idx, axis)


jet(take_along_axis)(linear_in(0))


@bprop(take_along_axis_grad)
def bprop_take_along_axis_grad(x, idx, axis, d, out, dout):
    return (zeros_like(x), zeros_like(idx), zeros_like(axis), take_along_axis(dout, idx, axis))


@jvp(take_along_axis_grad)
def jvp_take_along_axis_grad(x, idx, axis, d, dx, didx, daxis, dd):
    return take_along_axis_grad(x, idx, axis, dd)


jet(take_along_axis_grad)(linear_in(3))


# ---- batching rules (vmap: myia.ad.batching) ---------------------------------------

@batch(concatenate)
def batch_concatenate(b, xs, axis):
    parts = []
    for i, e in enumerate(xs.abstract.elements):
        flag = xs.batched[i] if isinstance(xs.batched, tuple) else xs.batched
        node = b.apply(tuple_getitem, xs, i)
        parts.append(node if flag else b.apply(broadcast_to, node, (b.B,) + e.shape))
    rank = len(xs.abstract.elements[0].shape)
    return b.apply(concatenate, b.apply(make_tuple, *parts),
                   b.axes(b.constant(axis, "the axis of a concatenation"), rank))


@batch(argsort)
def batch_argsort(b, x, axis):
    return b.apply(argsort, b.batched(x), b.axes(b.constant(axis, "the axis"), x.rank))


@batch(split)
def batch_split(b, x, bounds, axis):
    if bounds.batched:
        raise b.error("vmap: split points that differ between the examples")
    return b.apply(split, b.batched(x), bounds,
                   b.axes(b.constant(axis, "the axis of a split"), x.rank))


@batch(take_along_axis)
def batch_take_along_axis(b, x, idx, axis):
    return b.apply(take_along_axis, b.batched(x), b.batched(idx),
                   b.axes(b.constant(axis, "the axis"), x.rank))


@batch(take_along_axis_grad)
def batch_take_along_axis_grad(b, x, idx, axis, d):
    return b.apply(take_along_axis_grad, b.batched(x), b.batched(idx),
                   b.axes(b.constant(axis, "the axis"), x.rank), b.batched(d))
