"""Indexing at positions known only at run time, with shapes known when compiling
(JAX's dynamic_slice and gather):

    make_dslice(start, length, step)               the slice start:start + length:step
    slice_start(s)                                 its start
    dynamic_slice(x, start, axis, size)            x[start:start + size] along `axis`
                                                   (size a constant: the result's shape
                                                   is static)
    dynamic_update_slice(x, update, start, axis)   x with that slab replaced by update
    gather(x, idx, axis)                           np.take(x, idx, axis): x[idx] for an
                                                   integer index array of any shape
    scatter_add(x, idx, axis, d)                   x with d added where gather read
                                                   (np.add.at: repeated indices add up)

`x[i:i + n]` and `x[idx]` in user code become these: the parser writes a slice whose
bounds share a term as make_dslice (myia.parser.slices), and specialization turns the
indexing into the primitives below (myia.infer.rules_dynamic).  The slice pair and the
gather pair are each other's transpose, like getitem and getitem_grad, so derivatives of
every order close over them.

Bounds.  A slice is what NumPy gives when NumPy's result has n elements; where NumPy
would return fewer (the slice runs past the end, or a negative start wraps around
zero), it is a MyiaSliceBoundsError naming the start, the length and the size of the
axis, never a silent clip (JAX clamps the start; NumPy shortens the result: both would
give other numbers than the program says).  An index array follows NumPy: negative
indices count from the end, and one outside [-size, size) is a MyiaIndexError.
"""

import numpy as np

from ..errors import MyiaIndexError, MyiaShapeError, MyiaSliceBoundsError, MyiaTypeError
from .grad_ops import zeros_like
from .primitive import Primitive, batch, bprop, jet, jvp, linear_in
from .shape import shape
from .structure import tuple_getitem

#: the messages of the bounds errors, shared by every backend ({a}, {b}: values known
#: only at run time, filled in as the LLVM backend's error sites do)
INDEX_MESSAGE = "index {a} is out of bounds for axis %d with size {b}"
SLICE_MESSAGE = ("slice start {a} with length %d is out of bounds for axis %d with size "
                 "{b} (NumPy would return fewer elements)")


def slice_message(size, axis):
    return SLICE_MESSAGE % (size, axis)


def index_message(axis):
    return INDEX_MESSAGE % axis


def checked_start(start, size, n, axis):
    """The first position of x[start:start + size] on an axis of length n, as NumPy
    reads negative bounds; an error unless NumPy's result has `size` elements."""
    start = int(start)
    if size == 0:
        return 0
    stop = start + size
    s = start + n if start < 0 else start
    e = stop + n if stop < 0 else stop
    if not (0 <= s and e <= n and e - s == size):
        raise MyiaSliceBoundsError(slice_message(size, axis).format(a=start, b=n))
    return s


def _array(x, what):
    if not isinstance(x, np.ndarray):
        raise MyiaTypeError(f"{what} expects an array, got a {type(x).__name__}")
    return x


def _axis(x, axis, what):
    if not -x.ndim <= axis < x.ndim:
        raise MyiaShapeError(f"{what}: axis {axis} for an array of rank {x.ndim}")
    return axis % x.ndim


def _dynamic_slice(x, start, axis, size):
    x = _array(x, "dynamic_slice")
    axis = _axis(x, axis, "dynamic_slice")
    s = checked_start(start, size, x.shape[axis], axis)
    return x[(slice(None),) * axis + (slice(s, s + size),)]


def _dynamic_update_slice(x, update, start, axis):
    x = _array(x, "dynamic_update_slice")
    axis = _axis(x, axis, "dynamic_update_slice")
    update = np.asarray(update)
    size = update.shape[axis]
    s = checked_start(start, size, x.shape[axis], axis)
    out = x.copy()
    out[(slice(None),) * axis + (slice(s, s + size),)] = update
    return out


def check_indices(idx, n, axis):
    """idx (an integer array) with its negative indices counted from the end; an
    error for an index outside [-n, n)."""
    idx = np.asarray(idx)
    if idx.dtype.kind not in "iu":
        raise MyiaTypeError(f"indices must be integers, got an array of {idx.dtype.name}")
    bad = (idx >= n) | (idx < -n)
    if bad.any():
        raise MyiaIndexError(index_message(axis).format(a=int(idx[bad].flat[0]), b=n))
    return np.where(idx < 0, idx + n, idx)


def _gather(x, idx, axis):
    x = _array(x, "gather")
    axis = _axis(x, axis, "gather")
    return np.take(x, check_indices(idx, x.shape[axis], axis), axis)


def _scatter_add(x, idx, axis, d):
    x = _array(x, "scatter_add")
    axis = _axis(x, axis, "scatter_add")
    idx = check_indices(idx, x.shape[axis], axis)
    out = x.copy()
    where = (slice(None),) * axis + (idx,)
    shape_ = x.shape[:axis] + idx.shape + x.shape[axis + 1:]
    np.add.at(out, where, np.broadcast_to(np.asarray(d, out.dtype), shape_))
    return out


def _make_dslice(start, length, step):
    return slice(start, start + length, step)


def _slice_start(s):
    if not isinstance(s, slice):
        raise MyiaTypeError(f"slice_start of a {type(s).__name__}")
    return s.start


# `x[i:i + n]` as the parser writes it (myia.parser.slices): the length is an input, so
# that it stays known through every transform of the program
make_dslice = Primitive("make_dslice", _make_dslice, "slice(start, start + length, step)",
                        nondiff=True, foldable=True)
# where a slice arrives as a value (a transform's rule indexes with its argument)
slice_start = Primitive("slice_start", _slice_start, "s.start of a slice", nondiff=True,
                        foldable=True)
dynamic_slice = Primitive("dynamic_slice", _dynamic_slice,
                          "x[start:start + size] along axis (size a constant)")
dynamic_update_slice = Primitive("dynamic_update_slice", _dynamic_update_slice,
                                 "x with x[start:start + n] along axis replaced by update")
gather = Primitive("gather", _gather, "np.take(x, idx, axis), indices checked")
scatter_add = Primitive("scatter_add", _scatter_add,
                        "x with d added where gather(x, idx, axis) read (repeats add up)")


@bprop(dynamic_slice)
def bprop_dynamic_slice(x, start, axis, size, out, dout):
    return (dynamic_update_slice(zeros_like(x), dout, start, axis), zeros_like(start),
            zeros_like(axis), zeros_like(size))


@jvp(dynamic_slice)
def jvp_dynamic_slice(x, start, axis, size, dx, dstart, daxis, dsize):
    return dynamic_slice(dx, start, axis, size)


jet(dynamic_slice)(linear_in(0))


@bprop(dynamic_update_slice)
def bprop_dynamic_update_slice(x, update, start, axis, out, dout):
    return (dynamic_update_slice(dout, zeros_like(update), start, axis),
            dynamic_slice(dout, start, axis, tuple_getitem(shape(update), axis)),
            zeros_like(start), zeros_like(axis))


@jvp(dynamic_update_slice)
def jvp_dynamic_update_slice(x, update, start, axis, dx, dupdate, dstart, daxis):
    return dynamic_update_slice(dx, dupdate, start, axis)


jet(dynamic_update_slice)(linear_in(0, 1))


@bprop(gather)
def bprop_gather(x, idx, axis, out, dout):
    return (scatter_add(zeros_like(x), idx, axis, dout), zeros_like(idx), zeros_like(axis))


@jvp(gather)
def jvp_gather(x, idx, axis, dx, didx, daxis):
    return gather(dx, idx, axis)


jet(gather)(linear_in(0))


@bprop(scatter_add)
def bprop_scatter_add(x, idx, axis, d, out, dout):
    return (dout, zeros_like(idx), zeros_like(axis), gather(dout, idx, axis))


@jvp(scatter_add)
def jvp_scatter_add(x, idx, axis, d, dx, didx, daxis, dd):
    return scatter_add(dx, idx, axis, dd)


jet(scatter_add)(linear_in(0, 3))


# ---- batching rules (vmap: myia.ad.batching) ---------------------------------------

def _shared(b, v, what):
    if v.batched:
        raise b.error(f"vmap: {what} that differs between the examples",
                      hint="give every example the same one (in_axes None), or index "
                           "with np.take_along_axis")
    return v


@batch(dynamic_slice)
def batch_dynamic_slice(b, x, start, axis, size):
    return b.apply(dynamic_slice, b.batched(x), _shared(b, start, "a slice start"),
                   b.axes(b.constant(axis, "the axis"), x.rank), size)


@batch(dynamic_update_slice)
def batch_dynamic_update_slice(b, x, update, start, axis):
    return b.apply(dynamic_update_slice, b.batched(x), b.batched(update),
                   _shared(b, start, "a slice start"),
                   b.axes(b.constant(axis, "the axis"), x.rank))


@batch(gather)
def batch_gather(b, x, idx, axis):
    return b.apply(gather, b.batched(x), _shared(b, idx, "an index array"),
                   b.axes(b.constant(axis, "the axis"), x.rank))


@batch(scatter_add)
def batch_scatter_add(b, x, idx, axis, d):
    return b.apply(scatter_add, b.batched(x), _shared(b, idx, "an index array"),
                   b.axes(b.constant(axis, "the axis"), x.rank), b.batched(d))
