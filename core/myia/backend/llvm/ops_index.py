"""Basic indexing of arrays: integers, static slices and `np.newaxis` make a view
(`array_view`: an offset, dims and strides over the same data; no copy).  `array_getitem`
is ops_struct's `getitem` on an array; `getitem_grad` writes the sensitivity into zeros
through the same view.  (Indexing at run-time positions: ops_dynamic.)
"""

import numpy as np

from ...errors import MyiaShapeError, MyiaValueError
from ...prim import ops as P
from .arrays import data_of, dims, elem_ptr, load_elem, make_array, new_array, store_elem, strides
from .cg import i64
from .registry import backend_error, rule
from .values import coerce
from .ltypes import Array, Scalar, Static, Tuple
from .ops_elementwise import (Leaf, LoopNest, Op, _prepare_leaves, _splat_before_inner,
                              broadcast_shapes, emit_expr)
from .ops_scalar import cast
from .ops_struct import run_time_index, zeros


def _index_parts(fl, node, index_node, index_v, index_t):
    """The index as a list of ('int', value) / ('slice', (start, stop, step) statics or
    values) / ('newaxis', None)."""
    parts = []
    if isinstance(index_t, Static):
        idx = index_t.value
        items = idx if isinstance(idx, tuple) else (idx,)
        for it in items:
            if isinstance(it, slice):
                parts.append(("slice", it))
            elif isinstance(it, (int, np.integer)) and not isinstance(it, bool):
                parts.append(("int", i64(int(it))))
            elif it is None:  # np.newaxis
                parts.append(("newaxis", None))
            else:
                raise backend_error(f"an index {it!r}", node)
        return parts
    if isinstance(index_t, Scalar) and index_t.dtype == "int64":
        return [("int", index_v)]
    if isinstance(index_t, Tuple):
        b = fl.b
        for k, et in enumerate(index_t.elems):
            ev = b.extract_value(index_v, k)
            if isinstance(et, Scalar) and et.dtype == "int64":
                parts.append(("int", ev))
            elif isinstance(et, Static) and isinstance(et.value, slice):
                parts.append(("slice", et.value))
            elif isinstance(et, Static) and isinstance(et.value, int):
                parts.append(("int", i64(et.value)))
            elif isinstance(et, Static) and et.value is None:  # np.newaxis
                parts.append(("newaxis", None))
            else:
                raise backend_error(f"an index part of type {et}", node)
        return parts
    raise backend_error(f"an index of type {index_t}", node)


def _slice_bounds(fl, sl, d):
    """Python's slice.indices for a static slice and run-time length d:
    (start, length, step) as values."""
    b = fl.b
    step = 1 if sl.step is None else int(sl.step)
    if step == 0:
        raise backend_error("a slice step of zero")

    def clamp(v, lo, hi):
        v = b.select(b.icmp_signed("<", v, lo), lo, v)
        return b.select(b.icmp_signed(">", v, hi), hi, v)

    def norm(x, default):
        if x is None:
            return default
        x = i64(int(x))
        neg = b.icmp_signed("<", x, i64(0))
        return b.select(neg, b.add(x, d), x)

    if step > 0:
        start = clamp(norm(sl.start, i64(0)), i64(0), d)
        stop = clamp(norm(sl.stop, d), i64(0), d)
        length = b.sdiv(b.add(b.sub(stop, start), i64(step - 1)), i64(step))
    else:
        start = clamp(norm(sl.start, b.sub(d, i64(1))), i64(-1), b.sub(d, i64(1)))
        stop = clamp(norm(sl.stop, i64(-1)) if sl.stop is not None else i64(-1), i64(-1),
                     b.sub(d, i64(1)))
        length = b.sdiv(b.add(b.sub(start, stop), i64(-step - 1)), i64(-step))
    length = b.select(b.icmp_signed("<", length, i64(0)), i64(0), length)
    return start, length, i64(step)


def array_view(fl, node, v, t, parts):
    """x[parts] as a view: (data, dims, strides) of the result."""
    b = fl.b
    d = dims(fl, v, t)
    s = strides(fl, v, t)
    used = sum(1 for kind, _ in parts if kind != "newaxis")  # the axes of x indexed
    if used > t.ndim:
        raise backend_error(f"{used} indices for an array of rank {t.ndim}", node)
    offset = i64(0)
    nd, ns = [], []
    k = -1  # the axis of x that the part indexes
    for kind, p in parts:
        if kind == "newaxis":  # an axis of length 1 (stride 0), not one of x's
            nd.append(i64(1))
            ns.append(i64(0))
            continue
        k += 1
        if kind == "int":
            i = p
            bad = b.or_(b.icmp_signed(">=", i, d[k]), b.icmp_signed("<", i, b.sub(i64(0), d[k])))
            fl.error_if(bad, node, MyiaValueError,
                        "index {a} is out of bounds for axis " + str(k) + " with size {b}",
                        i, d[k])
            i = b.select(b.icmp_signed("<", i, i64(0)), b.add(i, d[k]), i)
            offset = b.add(offset, b.mul(i, s[k]))
        else:
            start, length, step = _slice_bounds(fl, p, d[k])
            offset = b.add(offset, b.mul(start, s[k]))
            nd.append(length)
            ns.append(b.mul(s[k], step))
    for k in range(used, t.ndim):
        nd.append(d[k])
        ns.append(s[k])
    data = elem_ptr(b, data_of(b, v), offset, t.dtype)
    return data, nd, ns


def array_getitem(fl, node, args, types, out):
    b = fl.b
    t = types[0]
    parts = _index_parts(fl, node, node.inputs[2], args[1], types[1])
    data, nd, ns = array_view(fl, node, args[0], t, parts)
    if isinstance(out, Scalar):
        return cast(b, load_elem(b, data, i64(0), t.dtype), t.dtype, out.dtype)
    return make_array(b, len(nd), data, nd, ns)


@rule(P.getitem_grad)
def lower_getitem_grad(fl, node, args, types, out):
    """zeros like x, with d added at index (basic indexing: no repeated positions)."""
    b = fl.b
    x_t, _, d_t = types
    if isinstance(x_t, Tuple) and isinstance(out, Tuple):
        z = zeros(fl, out, args[0], x_t, node)
        n = len(x_t.elems)
        if not fl.is_static(node.inputs[2]) and n:
            # a run-time index (a loop over a tuple whose elements have one type)
            i = run_time_index(fl, node, args[1], types[1], n)
            for j in range(n):
                e = coerce(fl, args[2], d_t, out.elems[j], node)
                hit = b.icmp_signed("==", i, i64(j))
                z = b.insert_value(z, b.select(hit, e, b.extract_value(z, j)), j)
            return z
        index = fl.static(node.inputs[2])
        if isinstance(index, slice):
            for k, j in enumerate(range(n)[index]):
                e = coerce(fl, b.extract_value(args[2], k), d_t.elems[k], out.elems[j], node)
                z = b.insert_value(z, e, j)
            return z
        j = index % n
        return b.insert_value(z, coerce(fl, args[2], d_t, out.elems[j], node), j)
    if not isinstance(x_t, Array):
        raise backend_error(f"getitem_grad of a {x_t}", node)
    z, size = new_array(fl, out.dtype, dims(fl, args[0], x_t), node, zero=True)
    parts = _index_parts(fl, node, node.inputs[2], args[1], types[1])
    data, nd, ns = array_view(fl, node, z, Array(out.dtype, x_t.shape), parts)
    view_t = Array(out.dtype, [None] * len(nd))
    view = make_array(b, len(nd), data, nd, ns)
    # view (all zeros) = d, broadcast
    d_leaf = Leaf(args[2], d_t)
    shape = broadcast_shapes(fl, [nd, dims(fl, args[2], d_t) if isinstance(d_t, Array) else []],
                             len(nd), node)
    for k in range(len(nd)):
        fl.error_if(b.icmp_signed("!=", shape[k], nd[k]), node, MyiaShapeError,
                    "the sensitivity of an indexing has an axis of length {a}, not {b}",
                    shape[k], nd[k])
    lanes = 4
    tree = Op("astype", [d_leaf], view_t, node)
    operands, vec_ok = _prepare_leaves(fl, [d_leaf], nd, lanes)
    operands.append(("out", data, ns))

    def inner(offs, j, ln, state):
        v = emit_expr(fl, tree, ln, offs)
        store_elem(b, v, data, offs["out"], out.dtype)
        return state

    vec_ok = b.and_(vec_ok, b.icmp_signed("==", ns[-1], i64(1))) if nd else vec_ok
    LoopNest(fl, nd, operands, lanes, vec_ok).run(inner, _splat_before_inner(fl, [d_leaf], lanes))
    _ = view
    return z
