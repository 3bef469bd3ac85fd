"""Index assignment, `x[index] = v` and `x[index] += v`, as a new array.

The parser writes `x = setitem(x, index, v)` for it, once it has checked that
no other name can see the array x holds (myia.parser.mutation): Python changes that
array in place, and a holder of the old value would see the change, which a new array
would not give it.  So the result is NumPy's: v broadcast to the shape of x[index] and
cast to x's dtype (a float written into an int array is truncated), the rest of x
unchanged.

    x[i, 1:3] = v      basic indexing (ints known at run time, slices, None, ...):
                       np.where(the positions of x[index], v placed there, x)
    x[mask] = v        a bool array of x's shape, v a number: np.where(mask, v, x)
    x[[0, 2], 1] = v   lists of ints (known at compile time, as in reading): a gather
                       of v at compile-time positions; a position written twice keeps
                       the last value, as NumPy does
    x[:, rows, cols] = v   integer arrays known at run time: the positions that
                       x[index] reads, from an array of positions; a stable sort of
                       them finds the last write to each (NumPy's result), which a
                       scatter puts in place

Every piece has its derivatives (where, getitem_grad, take_along_axis, scatter_add),
so a gradient goes to the elements of x that were not overwritten and to v, on every
backend.
"""

import numpy as np

from ..errors import MyiaTypeError, MyiaValueError
from ..prim import compile_time
from ..prim import ops as P
from .builtins import dict_set
from .np_shape import _indexed_positions


def setitem(x, index, v):
    """x with x[index] replaced by v: NumPy's `x[index] = v` as a new array; for a
    list (an int known at compile time) or a dict (a key), a new list or dict."""
    return (_set_array, _set_list, dict_set)[_container(P.kind_of(x))](x, index, v)


def setitem_with(x, index, op, v, setter):
    """`x[index] op= v` (`setter`: the setitem for this kind of index): through a
    mask, np.where(mask, op(x, v), x), which reads no x[mask]; otherwise
    setter(x, index, op(x[index], v))."""
    return (_update_at, _update_masked)[_is_mask_index(P.kind_of(x), P.index_kind(index))](
        x, index, op, v, setter)


def _update_at(x, index, op, v, setter):
    return setter(x, index, op(x[index], v))


def _update_masked(x, mask, op, v, setter):
    return _masked(x, mask, op(x, v), v)


def _ndim_or_zero(value):
    """The rank of a number or an array; 0 for a container (which has none)."""
    return (P.ndim, _zero)[_is_container(P.kind_of(value))](value)


def _zero(value):
    return 0


@compile_time
def _is_mask_index(x_kind, index_kind):
    return 1 if x_kind is None and index_kind == "mask" else 0


def check_unshared(x, text, other):
    """True, where `text` (`x op= v`) has x sharing its value with `other`, read later:
    a number does not change, so x gets a new value; an array is refused, as Python
    would change it in place, and `other` with it."""
    return _is_shared_array(P.kind_of(x), _ndim_or_zero(x), text, other) == 0


@compile_time
def _is_shared_array(kind, ndim, text, other):
    if kind is None and ndim > 0:
        raise MyiaTypeError(
            f"`{text}` changes an array in place in Python, and `{other}`, which shares it "
            f"and is read later, would see the change; Myia does not change arrays in place",
            hint=f"copy before sharing (`{other} = np.copy(...)`), or write the update as "
                 f"a new value (`x = x + v`), which leaves `{other}` as it was in Python too")
    return 0


def _set_array(x, index, v):
    return (_set_basic, _set_mask, _set_at_positions)[_way(P.index_kind(index))](x, index, v)


@compile_time
def _way(index_kind):
    return ("basic", "mask", "arrays").index(index_kind)


def _set_list(x, index, v):
    return P.tuple_as(P.tuple_setitem(P.tuple_as(x, "tuple"), index, v), "list")


@compile_time
def _container(kind):
    """0 for an array (or a number), 1 for a list, 2 for a dict; a tuple is refused."""
    if kind is None:
        return 0
    if kind == "list":
        return 1
    if kind == "tuple":
        raise MyiaTypeError("'tuple' object does not support item assignment",
                            hint="build a new tuple, or use a list")
    return 2


def _set_basic(x, index, v):
    region = P.getitem(x, index)
    placed = P.getitem_grad(x, index, P.astype(P.broadcast_to(v, P.shape(region)),
                                               P.dtype(x)))
    hit = P.getitem_grad(P.full(P.shape(x), False, "bool"), index,
                         P.full(P.shape(region), True, "bool"))
    return P.where(hit, placed, x)


def _set_mask(x, mask, v):
    return _masked(x, mask, v, v)


def _masked(x, mask, new, v):
    """np.where(mask, new, x) for `x[mask] = v` or `x[mask] op= v` (new: v or op(x, v)),
    with a mask of x's shape and a number v."""
    checked = (mask,)[_check_mask(P.shape(x), P.shape(mask), P.ndim(v))]  # (0: used)
    return P.where(checked, P.astype(new, P.dtype(x)), x)


def setitem_with_lists(x, index, v):
    """`x[[0, 2], 1:] = v`: v (broadcast to the shape of x[index]) gathered to the
    positions the index names, where the last write of each position wins."""
    source, written, region = _last_writes(P.shape(x), index)
    flat_v = P.reshape(P.astype(P.broadcast_to(v, region), P.dtype(x)), (-1,))
    taken = P.reshape(P.take_along_axis(flat_v, source, 0), P.shape(x))
    return P.where(written, taken, x)


@compile_time
def _is_container(kind):
    return 0 if kind is None else 1


def _set_at_positions(x, index, v):
    ids = _positions(P.shape(x))
    read = P.getitem(ids, index)  # (the index checked as reading checks it)
    pos = P.reshape(read, (-1,))
    values = P.reshape(P.astype(P.broadcast_to(v, P.shape(read)), P.dtype(x)), (-1,))
    order = P.argsort(pos, 0)  # (stable: the writes to one position stay in order)
    sorted_pos = P.take_along_axis(pos, order, 0)
    sorted_values = P.take_along_axis(values, order, 0)
    # the last write to each position: where the next one goes elsewhere (-1: none)
    following = P.concatenate((sorted_pos[1:], P.full((1,), -1, "int64")), 0)
    last = sorted_pos != following
    flat = P.reshape(x, (-1,))
    placed = P.scatter_add(P.zeros_like(flat), sorted_pos, 0,
                           P.where(last, sorted_values, P.zeros_like(sorted_values)))
    hit = P.scatter_add(P.full(P.shape(flat), 0, "int64"), sorted_pos, 0,
                        P.full(P.shape(sorted_pos), 1, "int64")) > 0
    return P.reshape(P.where(hit, placed, flat), P.shape(x))


@compile_time
def _positions(shape):
    """The flat position of each element of an array of `shape`."""
    return np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(shape)


@compile_time
def _check_mask(shape, mask_shape, v_ndim):
    if tuple(mask_shape) != tuple(shape):
        raise MyiaValueError(
            f"a mask of shape {tuple(mask_shape)} for an array of shape {tuple(shape)}: "
            f"an assignment through a mask needs one of the array's shape",
            hint="write np.where(mask, v, x) for a mask that broadcasts")
    if v_ndim != 0:
        raise MyiaTypeError(
            "`x[mask] = v` with an array v is not supported: NumPy writes v's elements "
            "in order into the positions the mask selects, whose number is known only "
            "when the program runs",
            hint="write x = np.where(mask, w, x) with w of x's shape")
    return 0


@compile_time
def _last_writes(shape, index):
    """(for each position of an array of `shape`, the index in the flattened
    x[index] of the value written there last, 0 where none; the mask of the
    positions written; the shape of x[index])."""
    positions = _indexed_positions.impl(shape, index)
    size = int(np.prod(shape, dtype=np.int64))
    source = np.zeros(size, dtype=np.int64)
    written = np.zeros(size, dtype=bool)
    flat = positions.reshape(-1)
    source[flat] = np.arange(flat.size)  # (NumPy's fancy assignment: the last one wins)
    written[flat] = True
    return source, written.reshape(shape), positions.shape
