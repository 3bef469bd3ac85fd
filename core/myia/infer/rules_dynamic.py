"""Indexing at run-time positions with static shapes (myia.prim.dynamic): the rules
of its primitives, and what `x[...]` becomes.

The length of a slice.  The parser writes `x[i:i + 4]` (bounds that share a term:
`i:4 + i`, `i + 1:i + 5`, `k - 2:k + n`; see myia.parser.slices) as
`make_dslice(start, length, step)`: when the length is known at compile time (a
literal, a name bound to one, a shape) and the step is 1, the ASlice carries it, so
`x[i:i + 4]` has a static shape, in the program and in every transform of it (the
length is an input of its own, which forward mode pairs with a zero tangent like any
other).  `x[i:j]` with unrelated bounds keeps an unknown length: the VM runs it, the
LLVM backend refuses it.

What indexing becomes.  At specialization (`expand_getitem`), an array indexed by
slices of static length becomes dynamic_slice on each such axis, and an index array
becomes gather; the rest of the index (ints, constant slices, None) stays a getitem.
So every backend and AD see the primitives that say what happens, with their checks:
a slice that does not fit is an error, not a shorter result.  Before that, `...` in an
index becomes the full slices it stands for (`expand_ellipsis`).  Where the slice is a
value (a parameter: the rules of transforms index with their argument), its start is
`slice_start(s)`, which the optimizer reads back from make_dslice once inlining has
brought them together.
"""

import numpy as np

from ..errors import (
    MyiaShapeError,
    MyiaSliceBoundsError,
    MyiaStaticError,
    MyiaTypeError,
    MyiaValueError,
)
from ..ir import Apply, Constant
from ..prim import ops as P
from ..prim.dynamic import checked_start
from ..abstract import (
    NOT_CONSTANT,
    AArray,
    AConstant,
    AScalar,
    ASlice,
    ATuple,
    abstract_of,
    constant_value,
)
from .rules import expand_ellipsis_items
from .rules import fmt_shape, infer_primitive, rule


def _is_int(a):
    return isinstance(a, AScalar) and a.dtype != "bool" and "int" in a.dtype


def _bound(part):
    if not (_is_int(part) or (isinstance(part, AConstant) and part.value is None)):
        raise MyiaTypeError(f"slice bounds must be ints or None, got {part}")


@rule(P.make_dslice)
def infer_make_dslice(start, length, step):
    for part in (start, step):
        _bound(part)
    if not _is_int(length):
        raise MyiaTypeError(f"slice bounds must be ints, got {length}")
    n = constant_value(length)
    static = n is not NOT_CONSTANT and constant_value(step) in (None, 1)
    # (NumPy: i:i - 2 is empty wherever i is)
    return ASlice(start, AScalar("int64"), step, max(int(n), 0) if static else None)


@rule(P.slice_start)
def infer_slice_start(s):
    if isinstance(s, ASlice):
        return s.start
    if isinstance(s, AConstant) and isinstance(s.value, slice):
        return abstract_of(s.value.start)
    raise MyiaTypeError(f"slice_start of {s}")


# ---- indexing an array --------------------------------------------------------------------


def slice_dim(it, d, axis):
    """The length a slice index (AConstant slice or ASlice) gives an axis of length d."""
    if isinstance(it, AConstant):
        return None if d is None else len(range(*it.value.indices(d)))
    n = it.length
    if n is not None and d is not None and n > d:
        raise MyiaSliceBoundsError(
            f"a slice of length {n} cannot fit inside axis {axis} of size {d}")
    return n


def _is_slice(it):
    return isinstance(it, ASlice) or (isinstance(it, AConstant) and isinstance(it.value, slice))


def getitem_with_array(x, items):
    """The abstract of x[items] where some items are index arrays: NumPy's result for
    index arrays next to each other among slices (x[idx], x[:, rows, cols]): their
    broadcast shape takes the place of their axes."""
    arrays = [k for k, it in enumerate(items) if isinstance(it, AArray)]
    for k in arrays:
        idx = items[k]
        if idx.dtype == "bool":
            raise MyiaTypeError(
                f"indexing with a boolean mask ({idx}): its result has a length known only "
                f"at run time", hint="keep the shape with np.where(mask, x, 0), or reduce "
                                     "with np.sum(np.where(mask, x, 0))")
        if idx.dtype != "int64":
            raise MyiaTypeError(f"an index array must hold integers, got {idx}")
    if arrays != list(range(arrays[0], arrays[-1] + 1)) or not all(
            _is_slice(it) for k, it in enumerate(items) if k not in arrays):
        raise MyiaTypeError(
            f"unsupported index {', '.join(str(it) for it in items)} for an array: index "
            f"arrays go next to each other, with slices",
            hint="index with integer arrays side by side and slices (x[idx], x[:, idx], "
                 "x[:, rows, cols]); take an integer index first: x[0][idx]")
    if len(items) > len(x.shape):
        raise MyiaShapeError(f"too many indices for an array of shape {fmt_shape(x.shape)}")
    shape = []
    for k, it in enumerate(items):
        if k == arrays[0]:
            shape.extend(_broadcast_index_shape([items[j] for j in arrays]))
        elif k not in arrays:
            shape.append(slice_dim(it, x.shape[k], k))
    shape.extend(x.shape[len(items):])
    return AArray(x.dtype, shape)


def _broadcast_index_shape(arrays):
    """The shape index arrays broadcast to (NumPy's rule; an error where they do not)."""
    shapes = [a.shape for a in arrays]
    if len(shapes) == 1:
        return shapes[0]
    if any(d is None for s in shapes for d in s):
        raise MyiaShapeError("index arrays of unknown shape cannot be broadcast together")
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise MyiaValueError(
            "shape mismatch: indexing arrays could not be broadcast together with shapes "
            + " ".join(fmt_shape(s) for s in shapes)) from None


def needs_expansion(index):
    """Does indexing an array with (an item of) `index` need the primitives of
    myia.prim.dynamic: a slice of static length computed at run time, an index array?"""
    items = index.elements if isinstance(index, ATuple) else (index,)
    return any(isinstance(it, AArray) or (isinstance(it, ASlice) and it.length is not None)
               for it in items)


def _typed(g, loc, abstract, prim, *inputs):
    node = g.apply(prim, *inputs, loc=loc)
    node.abstract = abstract
    return node


def _const(value, loc):
    c = Constant(value, loc)
    c.abstract = abstract_of(value)
    return c


def _items(g, loc, index, a):
    """[(node, abstract)] of the index's items."""
    if not isinstance(a, ATuple):
        return [(index, a)]
    if isinstance(index, Apply) and index.is_apply(P.make_tuple):
        return list(zip(index.inputs[1:], a.elements))
    if isinstance(index, Constant):
        return [(_const(v, loc), e) for v, e in zip(index.value, a.elements)]
    return [(_typed(g, loc, e, P.tuple_getitem, index, _const(k, loc)), e)
            for k, e in enumerate(a.elements)]


def _forward(g, loc, x, x_abs, index, index_abs):
    """x[index] as steps: [(node, its input)] for the dynamic slices and the getitem of
    the rest of the index, in order, and the gather (index array, axis) to apply last
    (or None)."""
    full = slice(None)
    steps = []
    rest = []  # the index left for getitem: what the dynamic parts leave is ":"
    gather_at = None
    axis = 0  # the axis of x (whose rank dynamic_slice keeps) that an item indexes
    items = _items(g, loc, index, index_abs)
    arrays = [k for k, (_, a) in enumerate(items) if isinstance(a, AArray)]
    if len(arrays) > 1:  # x[:, rows, cols]: x with those axes as one, indexed by one array
        x, x_abs, flat = _merge_index_arrays(g, loc, x, x_abs, items, arrays, steps)
        items = items[:arrays[0]] + [(flat, flat.abstract)] + items[arrays[-1] + 1:]
    for node, a in items:
        if isinstance(a, ASlice) and a.length is not None:
            if isinstance(node, Apply) and node.is_apply(P.make_dslice):
                start = node.inputs[1]
            elif isinstance(a.start, AScalar) and a.start.known:
                start = _const(a.start.value, loc)
            else:  # a slice value: its start (see the module's doc)
                start = _typed(g, loc, a.start, P.slice_start, node)
            shape = list(x_abs.shape)
            shape[axis] = a.length
            x_abs = AArray(x_abs.dtype, shape)
            new = _typed(g, loc, x_abs, P.dynamic_slice, x, start, _const(axis, loc),
                         _const(a.length, loc))
            steps.append((new, x))
            x = new
            rest.append((_const(full, loc), AConstant(full)))
        elif isinstance(a, AArray):
            gather_at = (node, _const(axis, loc))
            rest.append((_const(full, loc), AConstant(full)))
        else:
            rest.append((node, a))
        if not (isinstance(a, AConstant) and a.value is None):
            axis += 1
    if any(not (isinstance(a, AConstant) and a.value == full) for _, a in rest):
        if all(isinstance(n, Constant) for n, _ in rest):
            idx = _const(tuple(n.value for n, _ in rest), loc)
        else:
            idx = _typed(g, loc, ATuple(a for _, a in rest), P.make_tuple,
                         *[n for n, _ in rest])
        new = _typed(g, loc, infer_primitive(P.getitem, [x_abs, idx.abstract]), P.getitem,
                     x, idx)
        steps.append((new, x))
    return steps, gather_at


def _merge_index_arrays(g, loc, x, x_abs, items, arrays, steps):
    """For the index arrays items[arrays] (next to each other, on the axes they index):
    x reshaped with those axes as one (a step of `steps`), and the one index array
    into it, sum of idx_j * stride_j, each idx_j checked against its own axis and its
    negative values counted from the end (a gather from arange, which does both)."""
    first = sum(1 for _, a in items[:arrays[0]]
                if not (isinstance(a, AConstant) and a.value is None))
    dims = tuple(x_abs.shape[first:first + len(arrays)])
    if any(d is None for d in dims):
        raise MyiaShapeError(f"index arrays on axes of unknown length {fmt_shape(dims)}")
    out_shape = _broadcast_index_shape([items[k][1] for k in arrays])
    flat_abs = AArray("int64", out_shape)
    flat = None
    stride = 1
    for j in reversed(range(len(arrays))):
        node, a = items[arrays[j]]
        axis = first + j
        # (an arange shaped so that gather's axis is the axis indexed: its message names it)
        positions = _const(np.arange(dims[j]).reshape((1,) * axis + (dims[j],)), loc)
        taken_abs = AArray("int64", (1,) * axis + a.shape)
        taken = _typed(g, loc, taken_abs, P.gather, positions, node, _const(axis, loc))
        checked = _typed(g, loc, AArray("int64", a.shape), P.reshape, taken,
                         _const(a.shape, loc))
        if stride != 1:
            checked = _typed(g, loc, AArray("int64", a.shape), P.mul, checked,
                             _const(stride, loc))
        flat = checked if flat is None else _typed(g, loc, flat_abs, P.add, checked, flat)
        stride *= dims[j]
    if tuple(flat.abstract.shape) != tuple(out_shape):
        flat = _typed(g, loc, flat_abs, P.broadcast_to, flat, _const(out_shape, loc))
    merged = tuple(x_abs.shape[:first]) + (stride,) + tuple(x_abs.shape[first + len(arrays):])
    merged_abs = AArray(x_abs.dtype, merged)
    new = _typed(g, loc, merged_abs, P.reshape, x, _const(merged, loc))
    steps.append((new, x))
    return new, merged_abs, flat


def has_ellipsis(index_abs):
    """Does the index (an abstract) hold `...`?"""
    items = index_abs.elements if isinstance(index_abs, ATuple) else (index_abs,)
    return any(isinstance(it, AConstant) and it.value is Ellipsis for it in items)


def expand_ellipsis(g, loc, prim, args, x_abs, index_abs, out_abs):
    """getitem(x, index) or getitem_grad(x, index, d) (`prim`, on the nodes `args`) where
    the index of the array x holds `...`: the same with the full slices it stands for in
    its place, so that nothing after specialization meets `...`.  NumPy's x[0, ...] is a
    0-d array where x[0] is a scalar: that getitem's element is made a 0-d array."""
    items = _items(g, loc, args[1], index_abs)
    expanded, _ = expand_ellipsis_items([a for _, a in items], x_abs.ndim)
    full = slice(None)
    at = next(k for k, (_, a) in enumerate(items) if isinstance(a, AConstant)
              and a.value is Ellipsis)
    n = len(expanded) - len(items) + 1
    items = items[:at] + [(_const(full, loc), AConstant(full))] * n + items[at + 1:]
    if all(isinstance(node, Constant) for node, _ in items):
        idx = _const(tuple(node.value for node, _ in items), loc)
    else:
        idx = _typed(g, loc, ATuple(a for _, a in items), P.make_tuple,
                     *[node for node, _ in items])
    x = args[0]
    if prim is P.getitem_grad:
        return (expand_getitem_grad(g, loc, x, x_abs, idx, idx.abstract, args[2], out_abs)
                or _typed(g, loc, out_abs, P.getitem_grad, x, idx, args[2]))
    plain = infer_primitive(P.getitem, [x_abs, idx.abstract])
    new = (expand_getitem(g, loc, x, x_abs, idx, idx.abstract, plain)
           or _typed(g, loc, plain, P.getitem, x, idx))
    if isinstance(out_abs, AArray) and isinstance(plain, AScalar):  # x[0, ...]: 0-d
        new = _typed(g, loc, out_abs, P.full, _const((), loc), new, _const(out_abs.dtype, loc))
    return new


def expand_getitem(g, loc, x, x_abs, index, index_abs, out_abs):
    """x[index] (nodes of the specialized graph g) as dynamic_slice on the axes sliced at
    run time with a static length, a getitem for the rest of the index, and gather for
    an index array; None when the index needs none of these."""
    if not (isinstance(x_abs, AArray) and needs_expansion(index_abs)):
        return None
    steps, gather_at = _forward(g, loc, x, x_abs, index, index_abs)
    if steps:
        x = steps[-1][0]
    if gather_at is not None:
        x = _typed(g, loc, out_abs, P.gather, x, *gather_at)
    x.abstract = out_abs
    return x


def expand_getitem_grad(g, loc, x, x_abs, index, index_abs, d, out_abs):
    """getitem_grad(x, index, d), the transpose of `expand_getitem`'s steps: scatter_add
    for the gather, getitem_grad for the getitem, dynamic_update_slice into zeros for
    each dynamic slice, in reverse order (where a program differentiated before it was
    specialized indexes with such an index)."""
    if not (isinstance(x_abs, AArray) and needs_expansion(index_abs)):
        return None
    steps, gather_at = _forward(g, loc, x, x_abs, index, index_abs)
    last = steps[-1][0] if steps else x
    if gather_at is not None:
        zeros = _typed(g, loc, last.abstract, P.zeros_like, last)
        d = _typed(g, loc, last.abstract, P.scatter_add, zeros, gather_at[0], gather_at[1], d)
    for new, before in reversed(steps):
        if new.is_apply(P.getitem):
            d = _typed(g, loc, before.abstract, P.getitem_grad, before, new.inputs[2], d)
        elif new.is_apply(P.reshape):  # (axes merged for several index arrays)
            d = _typed(g, loc, before.abstract, P.reshape, d, _const(before.abstract.shape, loc))
        else:
            zeros = _typed(g, loc, before.abstract, P.zeros_like, before)
            d = _typed(g, loc, before.abstract, P.dynamic_update_slice, zeros, d,
                       new.inputs[2], new.inputs[3])
    d.abstract = out_abs
    return d


# ---- the rules -------------------------------------------------------------------------------


def _array(x, what):
    if not isinstance(x, AArray):
        raise MyiaTypeError(f"{what} expects an array, got {x}")
    if x.ndim == 0:
        raise MyiaShapeError(f"{what} needs an array of rank 1 or more, got a 0-d array")
    return x


def _static_axis(axis, x, what):
    v = constant_value(axis)
    if v is NOT_CONSTANT or isinstance(v, bool) or not isinstance(v, int):
        raise MyiaStaticError(f"the axis of {what} must be an int known at compile time, got {axis}")
    if not -x.ndim <= v < x.ndim:
        raise MyiaShapeError(f"{what}: axis {v} for an array of rank {x.ndim}")
    return v % x.ndim


def _start(start, what):
    if not _is_int(start):
        raise MyiaTypeError(f"the start of {what} must be an int, got {start}")


def _check_fit(start, size, d, axis):
    """A slice that never fits, or whose start is known: the error now."""
    if d is None:
        return
    if size > d:
        raise MyiaSliceBoundsError(
            f"a slice of length {size} cannot fit inside axis {axis} of size {d}")
    if start.known:
        checked_start(start.value, size, d, axis)


@rule(P.dynamic_slice)
def infer_dynamic_slice(x, start, axis, size):
    x = _array(x, "dynamic_slice")
    ax = _static_axis(axis, x, "dynamic_slice")
    _start(start, "dynamic_slice")
    n = constant_value(size)
    if n is NOT_CONSTANT or isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise MyiaTypeError(f"the length of a run-time slice must be an int >= 0 known "
                            f"at compile time, got {size}")
    _check_fit(start, n, x.shape[ax], ax)
    return AArray(x.dtype, x.shape[:ax] + (n,) + x.shape[ax + 1:])


@rule(P.dynamic_update_slice)
def infer_dynamic_update_slice(x, update, start, axis):
    x = _array(x, "dynamic_update_slice")
    ax = _static_axis(axis, x, "dynamic_update_slice")
    _start(start, "dynamic_update_slice")
    if not isinstance(update, AArray) or update.ndim != x.ndim or any(
            a is not None and b is not None and a != b
            for k, (a, b) in enumerate(zip(x.shape, update.shape)) if k != ax):
        raise MyiaShapeError(f"dynamic_update_slice of {x} with {update} on axis {ax}: the "
                             f"update must have the array's shape but on that axis")
    if update.shape[ax] is None:
        raise MyiaShapeError(f"dynamic_update_slice: the update {update} has no static length")
    _check_fit(start, update.shape[ax], x.shape[ax], ax)
    return AArray(x.dtype, x.shape)


def _gather_shape(x, idx, axis, what):
    x = _array(x, what)
    ax = _static_axis(axis, x, what)
    if not isinstance(idx, AArray) or idx.dtype != "int64":
        raise MyiaTypeError(f"{what}: the indices must be an int64 array, got {idx}")
    return x, x.shape[:ax] + idx.shape + x.shape[ax + 1:]


@rule(P.gather)
def infer_gather(x, idx, axis):
    x, shape = _gather_shape(x, idx, axis, "gather")
    return AArray(x.dtype, shape)


@rule(P.scatter_add)
def infer_scatter_add(x, idx, axis, d):
    x, shape = _gather_shape(x, idx, axis, "scatter_add")
    if not isinstance(d, AArray) or len(d.shape) != len(shape) or any(
            a is not None and b is not None and a != b for a, b in zip(d.shape, shape)):
        raise MyiaShapeError(f"scatter_add: the values {d} must have the shape "
                             f"{fmt_shape(shape)} of what gather reads")
    return AArray(x.dtype, x.shape)


__all__ = ["expand_ellipsis", "expand_getitem", "expand_getitem_grad", "getitem_with_array",
           "has_ellipsis", "needs_expansion", "slice_dim"]
