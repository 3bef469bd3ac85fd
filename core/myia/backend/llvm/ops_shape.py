"""LLVM lowering of the rearrangement primitives (myia.prim.rearrange; see arrays.py
for the array representation and ops_elementwise.py for the loop nests).

    concatenate            a new array; each part copied into its slab (a vectorized
                           loop nest per part)
    split                  views (no copy): a tuple of arrays over x's data
    argsort                per lane along the axis: the elements copied as unsigned
                           keys that order as NumPy sorts (nan last), then a stable sort
                           of (key, index) pairs (`myia_argsort`, a runtime helper: an
                           insertion sort for a few, a radix sort for many)
    take_along_axis        a loop nest over the result reading x at the index; but
                           a sort, take_along_axis(x, argsort(x, axis), axis), is a
                           copy of x sorted in place by NumPy's own sort (`npyloops`:
                           NumPy's results, at NumPy's speed), and a gather of a 1-d
                           array at constant positions (a tile, a repeat, a pad) is
                           a copy of blocks (`gathers`), from the parts of x when x is
                           a concatenation used only there
    take_along_axis_grad   zeros, then a loop nest over d adding each element at its index

The argsort of a sort and the concatenation a planned gather reads from are computed
by their user (`absorbed_nodes`; they are among the nodes `ops_elementwise.fused_nodes`
gives the lowering to skip).
"""

import llvmlite.ir as ir
import numpy as np

from ...errors import MyiaValueError
from ...ir import Constant
from ...prim import ops as P
from . import gathers
from .arrays import (c_strides, data_of, dims, elem_ptr, load_elem, make_array, new_array,
                     store_elem, strides)
from .cg import NULL, for_range, i64, outlined, ret_status_if, runtime_fn
from .registry import backend_error, rule
from .ltypes import ITEMSIZE, Array, to_ir
from .ops_elementwise import (Leaf, LoopNest, Op, _prepare_leaves, _splat_before_inner,
                              choose_lanes, emit_expr)
from .ops_scalar import cast
from .npyloops import sort_symbol
from .runtime import I1, I32, I64, PTR, STATUS_NOMEM, declare


def _axis(fl, node, k, ndim):
    axis = fl.static(node.inputs[k])
    if not -ndim <= axis < ndim:
        raise backend_error(f"axis {axis} for an array of rank {ndim}", node)
    return axis % ndim


def _static_dims(t, node):
    if None in t.shape:
        raise backend_error(f"an array of unknown shape {t} here", node)
    return [i64(d) for d in t.shape]


# ---- concatenate and split -------------------------------------------------------------------


def copy_into(fl, node, src, src_t, dst_data, dst_dims, dst_strides, dtype):
    """Write array (or number) `src` into the strided destination (broadcast)."""
    b = fl.b
    leaf = Leaf(src, src_t)
    view_t = Array(dtype, [None] * len(dst_dims))
    tree = Op("astype", [leaf], view_t, node)
    lanes = choose_lanes([src_t, view_t])
    operands, vec_ok = _prepare_leaves(fl, [leaf], dst_dims, lanes)
    operands.append(("out", dst_data, dst_strides))
    if dst_dims:
        vec_ok = b.and_(vec_ok, b.icmp_signed("==", dst_strides[-1], i64(1)))

    def inner(offs, j, ln, state):
        store_elem(b, emit_expr(fl, tree, ln, offs), dst_data, offs["out"], dtype)
        return state

    LoopNest(fl, dst_dims, operands, lanes, vec_ok).run(
        inner, _splat_before_inner(fl, [leaf], lanes))


@rule(P.concatenate)
def lower_concatenate(fl, node, args, types, out):
    b = fl.b
    axis = _axis(fl, node, 2, out.ndim)
    shape = _static_dims(out, node)
    arr, _ = new_array(fl, out.dtype, shape, node)
    st, _ = c_strides(b, shape)
    offset = 0
    for k, t in enumerate(types[0].elems):
        part = b.extract_value(args[0], k)
        part_dims = _static_dims(t, node)
        dst = elem_ptr(b, data_of(b, arr), b.mul(i64(offset), st[axis]), out.dtype)
        copy_into(fl, node, part, t, dst, part_dims, st, out.dtype)
        offset += t.shape[axis]
    return arr


@rule(P.split)
def lower_split(fl, node, args, types, out):
    b = fl.b
    t = types[0]
    axis = _axis(fl, node, 3, t.ndim)
    d = dims(fl, args[0], t)
    s = strides(fl, args[0], t)
    v = ir.Constant(to_ir(out), ir.Undefined)
    start = 0
    for k, piece in enumerate(out.elems):
        data = elem_ptr(b, data_of(b, args[0]), b.mul(i64(start), s[axis]), t.dtype)
        shape = d[:axis] + [i64(piece.shape[axis])] + d[axis + 1:]
        v = b.insert_value(v, make_array(b, t.ndim, data, shape, s), k)
        start += piece.shape[axis]
    return v


# ---- argsort -----------------------------------------------------------------------------------

#: lanes of at most this many elements are sorted by insertion (a radix sort has a cost
#: per pass that does not depend on n)
SMALL_SORT = 32


def sort_key(b, v, dtype):
    """An unsigned 64-bit key of v that orders as NumPy sorts: numbers in order, -0.0
    as 0.0, nan after everything."""
    if dtype in ("float64", "float32"):
        if dtype == "float32":
            v = b.fpext(v, ir.DoubleType())
        v = b.select(b.fcmp_ordered("==", v, ir.Constant(ir.DoubleType(), 0.0)),
                     ir.Constant(ir.DoubleType(), 0.0), v)
        bits = b.bitcast(v, I64)
        # a negative number: all bits flipped; a positive one: the sign bit set
        key = b.select(b.icmp_signed("<", bits, i64(0)), b.not_(bits),
                       b.or_(bits, i64(-(1 << 63))))
        return b.select(b.fcmp_unordered("uno", v, v), i64(-1), key)
    if dtype == "bool":
        v = b.zext(v, I64)
    return b.xor(v, i64(-(1 << 63)))


@runtime_fn("myia_argsort", ir.VoidType(), [PTR, I64, PTR, PTR, PTR, PTR])
def argsort_fn(f):
    """void myia_argsort(u64 *keys, i64 n, i64 *idx, u64 *keys2, i64 *idx2, i64 *counts):
    idx = the stable argsort of keys[:n] (keys2, idx2: n of scratch; counts: 8 x 256).
    An insertion sort for a few keys, else a least-significant-digit radix sort of the
    (key, index) pairs, a byte a pass (a pass where every key has the same byte is
    skipped)."""
    keys, n, idx, keys2, idx2, counts = f.args
    b = ir.IRBuilder(f.append_basic_block("entry"))
    cur = [b.alloca(PTR) for _ in range(4)]  # keys, idx, and the other pair
    j_p = b.alloca(I64)
    for p in cur + [j_p]:
        p.type = PTR
    with for_range(b, 0, n, name="init") as i:
        store_elem(b, i, idx, i, "int64")

    def key_at(ptr, i):
        return load_elem(b, ptr, i, "int64")

    with b.if_else(b.icmp_signed("<=", n, i64(SMALL_SORT))) as (small, large):
        with small:  # insertion sort: shift the greater keys right (strictly: stable)
            with for_range(b, 1, n, name="ins") as i:
                k, v = key_at(keys, i), key_at(idx, i)
                b.store(b.sub(i, i64(1)), j_p)
                cond = f.append_basic_block("ins.cond")
                body = f.append_basic_block("ins.body")
                done = f.append_basic_block("ins.done")
                b.branch(cond)
                b.position_at_end(cond)
                j = b.load(j_p, typ=I64)
                jc = b.select(b.icmp_signed("<", j, i64(0)), i64(0), j)
                go = b.and_(b.icmp_signed(">=", j, i64(0)),
                            b.icmp_unsigned(">", key_at(keys, jc), k))
                b.cbranch(go, body, done)
                b.position_at_end(body)
                nxt = b.add(j, i64(1))
                store_elem(b, key_at(keys, j), keys, nxt, "int64")
                store_elem(b, key_at(idx, j), idx, nxt, "int64")
                b.store(b.sub(j, i64(1)), j_p)
                b.branch(cond)
                b.position_at_end(done)
                at = b.add(b.load(j_p, typ=I64), i64(1))
                store_elem(b, k, keys, at, "int64")
                store_elem(b, v, idx, at, "int64")
        with large:
            for p, v in zip(cur, (keys, idx, keys2, idx2)):
                b.store(v, p)
            # the histograms of the 8 bytes, in one pass: counts[8][256]
            b.call(declare(f.module, "memset"), [counts, ir.Constant(ir.IntType(32), 0),
                                                 i64(8 * 256 * 8)])

            def digit(k, shift):
                return b.and_(b.lshr(k, i64(shift)), i64(255))

            with for_range(b, 0, n, name="hist") as i:
                k = key_at(keys, i)
                for byte in range(8):
                    at = b.add(digit(k, 8 * byte), i64(256 * byte))
                    store_elem(b, b.add(key_at(counts, at), i64(1)), counts, at, "int64")
            first = key_at(keys, i64(0))
            for byte in range(8):
                base = 256 * byte
                # a pass that would move nothing: every key has the byte of the first
                skip = b.icmp_signed("==", key_at(counts, b.add(digit(first, 8 * byte),
                                                                i64(base))), n)
                with b.if_then(b.not_(skip)):
                    src_k, src_i, dst_k, dst_i = (b.load(p, typ=PTR) for p in cur)
                    b.store(i64(0), j_p)  # the running total: counts become offsets
                    with for_range(b, base, base + 256, name="offs") as d:
                        c = key_at(counts, d)
                        total = b.load(j_p, typ=I64)
                        store_elem(b, total, counts, d, "int64")
                        b.store(b.add(total, c), j_p)
                    with for_range(b, 0, n, name="scatter") as i:
                        k = key_at(src_k, i)
                        d = b.add(digit(k, 8 * byte), i64(base))
                        at = key_at(counts, d)
                        store_elem(b, b.add(at, i64(1)), counts, d, "int64")
                        store_elem(b, k, dst_k, at, "int64")
                        store_elem(b, key_at(src_i, i), dst_i, at, "int64")
                    for p, v in zip(cur, (dst_k, dst_i, src_k, src_i)):
                        b.store(v, p)
            result = b.load(cur[1], typ=PTR)
            with b.if_then(b.icmp_unsigned("!=", result, idx)):
                b.call(declare(f.module, "memcpy"), [idx, result, b.mul(n, i64(8))])
    b.ret_void()


@rule(P.argsort)
def lower_argsort(fl, node, args, types, out):
    b = fl.b
    t = types[0]
    axis = _axis(fl, node, 2, t.ndim)
    shape = _static_dims(t, node)
    res, _ = new_array(fl, "int64", shape, node)
    n = t.shape[axis]
    if n == 0 or 0 in t.shape:
        return res
    sort = argsort_fn(fl.module)
    keys, ibuf, keys2, ibuf2 = (fl.alloc(i64(8 * n)) for _ in range(4))
    counts = fl.alloc(i64(8 * 8 * 256))
    x_st = strides(fl, args[0], t)
    out_st, _ = c_strides(b, shape)
    rest = [k for k in range(t.ndim) if k != axis]
    operands = [("x", data_of(b, args[0]), [x_st[k] for k in rest]),
                ("out", data_of(b, res), [out_st[k] for k in rest])]

    def inner(offs, j, ln, state):
        with for_range(b, 0, n, name="key") as q:
            v = load_elem(b, data_of(b, args[0]), b.add(offs["x"], b.mul(q, x_st[axis])), t.dtype)
            store_elem(b, sort_key(b, v, t.dtype), keys, q, "int64")
        b.call(sort, [keys, i64(n), ibuf, keys2, ibuf2, counts])
        with for_range(b, 0, n, name="rank") as q:
            store_elem(b, load_elem(b, ibuf, q, "int64"), data_of(b, res),
                       b.add(offs["out"], b.mul(q, out_st[axis])), "int64")
        return state

    LoopNest(fl, [shape[k] for k in rest], operands, 1, ir.Constant(I1, 0)).run(inner)
    return res


# ---- take_along_axis and its transpose -----------------------------------------------------------


def _gather_strides(fl, v, t, out_shape, axis):
    """Strides of array v seen through the broadcast to out_shape, and 0 on `axis`
    (where the position comes from the indices; None: no such axis)."""
    s = strides(fl, v, t)
    return [i64(0) if k == axis or (t.shape[k] == 1 and out_shape[k] != 1) else s[k]
            for k in range(t.ndim)]


def _checked_index(fl, node, i, n, axis):
    """Index i of an axis of length n (negative counts from the end), checked unless
    the indices are a constant already checked (`_known_in_bounds`)."""
    b = fl.b
    if not _known_in_bounds(node, n):
        bad = b.or_(b.icmp_signed(">=", i, i64(n)), b.icmp_signed("<", i, i64(-n)))
        fl.error_if(bad, node, MyiaValueError,
                    "index {a} is out of bounds for axis " + str(axis) + " with size {b}",
                    i, i64(n))
    return b.select(b.icmp_signed("<", i, i64(0)), b.add(i, i64(n)), i)


def _known_in_bounds(node, n):
    """Are the indices of this take_along_axis(_grad) a constant (the positions of a
    pad, a roll...), all in [-n, n)?  Then the loop needs no check (and no exit)."""
    idx = node.inputs[2]
    if not (isinstance(idx, Constant) and isinstance(idx.value, np.ndarray)):
        return False
    v = idx.value
    return v.size == 0 or (int(v.min()) >= -n and int(v.max()) < n)


# ---- work absorbed into take_along_axis ---------------------------------------------------


def absorbed_nodes(fl, g):
    """The nodes of `g` that their only user, a take_along_axis, computes itself: the
    argsort of a sort; for a planned gather, its positions (a constant that need not
    be made) and the concatenation it reads the parts of."""
    mng = fl.L.mng
    out = set()

    def only_user(inp, node, index):
        users = mng.users(inp)
        return (inp.graph is g or isinstance(inp, Constant)) and len(users) == 1 \
            and users[0] == (node, index)

    for node in mng.nodes(g):
        if not node.is_apply(P.take_along_axis):
            continue
        x, idx = node.inputs[1], node.inputs[2]
        if _is_sort(fl, node) and only_user(idx, node, 2):
            out.add(idx)
            continue
        parts = x.is_apply(P.concatenate) and only_user(x, node, 1)
        sizes = _part_sizes(fl, x) if parts else _whole_size(fl.ltype(x))
        if _gather_plan(fl, node, sizes) is not None:
            out |= {x} if parts else set()
            if only_user(idx, node, 2):
                out.add(idx)
    return out


def _whole_size(t):
    """[the length of a 1-d array type], or None."""
    return [t.shape[0]] if isinstance(t, Array) and t.ndim == 1 else None


def _is_sort(fl, node):
    """Is take_along_axis `node` a sort, take_along_axis(x, argsort(x, axis), axis),
    of a dtype NumPy's sort takes?"""
    x, idx = node.inputs[1], node.inputs[2]
    if not (idx.is_apply(P.argsort) and idx.inputs[1] is x):
        return False
    t = fl.ltype(x)
    if not (isinstance(t, Array) and t.ndim >= 1 and None not in t.shape):
        return False
    if not (fl.is_static(idx.inputs[2]) and fl.is_static(node.inputs[3])):
        return False
    return _axis(fl, idx, 2, t.ndim) == _axis(fl, node, 3, t.ndim) and \
        sort_symbol(t.dtype) is not None


def _part_sizes(fl, concat):
    """The lengths of the 1-d parts of a concatenation (None: not 1-d parts)."""
    t = fl.ltype(concat.inputs[1])
    elems = getattr(t, "elems", None)
    if not elems or not all(isinstance(e, Array) and e.ndim == 1 and e.shape[0] is not None
                            for e in elems):
        return None
    return [e.shape[0] for e in elems]


def _gather_plan(fl, node, sizes):
    """The plan (`gathers.plan`) of take_along_axis `node` when it gathers a 1-d
    array (of parts of these sizes, if given) at constant positions; else None."""
    x_t, idx = fl.ltype(node.inputs[1]), node.inputs[2]
    if not (isinstance(x_t, Array) and x_t.ndim == 1 and x_t.shape[0] is not None
            and isinstance(idx, Constant) and isinstance(idx.value, np.ndarray)
            and idx.value.ndim == 1 and idx.value.dtype.kind in "iu"):
        return None
    n = x_t.shape[0]
    if sizes is None or sum(sizes) != n or n == 0 or not _known_in_bounds(node, n):
        return None
    if not fl.is_static(node.inputs[3]) or _axis(fl, node, 3, 1) != 0:
        return None
    return gathers.plan(idx.value.astype(np.int64) % n, sizes)


def _sort(fl, node, x, t):
    """np.sort(x, axis): a copy of x, each lane along the axis sorted in place by
    NumPy's own sort (through a scratch lane when the axis is not the last)."""
    b = fl.b
    axis = _axis(fl, node, 3, t.ndim)
    shape = _static_dims(t, node)
    res, _ = new_array(fl, t.dtype, shape, node)
    data = data_of(b, res)
    copy_into(fl, node, x, t, data, shape, c_strides(b, shape)[0], t.dtype)
    n = t.shape[axis]
    if n <= 1 or 0 in t.shape:
        return res
    m = b.module
    name = sort_symbol(t.dtype)
    try:
        sort = m.get_global(name)
    except KeyError:
        sort = ir.Function(m, ir.FunctionType(I32, [PTR, I64, PTR]), name)
        sort.attributes.add("nounwind")
    failed = fl.alloca(I32)
    b.store(ir.Constant(I32, 0), failed)
    inner = int(np.prod(t.shape[axis + 1:], dtype=np.int64))
    outer = int(np.prod(t.shape[:axis], dtype=np.int64))
    lane = fl.alloc(i64(n * ITEMSIZE[t.dtype])) if inner > 1 else None
    with outlined(fl, "sort"):
        if inner == 1:  # each lane is contiguous: sorted where it is
            with for_range(b, 0, outer, name="lane") as o:
                st = b.call(sort, [elem_ptr(b, data, b.mul(o, i64(n)), t.dtype), i64(n), NULL])
                b.store(b.or_(b.load(failed, typ=I32), st), failed)
        else:
            with for_range(b, 0, outer, name="outer") as o:
                with for_range(b, 0, inner, name="lane") as i:
                    start = b.add(b.mul(o, i64(n * inner)), i)
                    with for_range(b, 0, n, name="get") as q:
                        at = b.add(start, b.mul(q, i64(inner)))
                        store_elem(b, load_elem(b, data, at, t.dtype), lane, q, t.dtype)
                    st = b.call(sort, [lane, i64(n), NULL])
                    b.store(b.or_(b.load(failed, typ=I32), st), failed)
                    with for_range(b, 0, n, name="put") as q:
                        at = b.add(start, b.mul(q, i64(inner)))
                        store_elem(b, load_elem(b, lane, q, t.dtype), data, at, t.dtype)
    # NumPy's sort fails only where it could not allocate memory
    ret_status_if(b, b.icmp_signed("!=", b.load(failed, typ=I32), ir.Constant(I32, 0)),
                  ir.Constant(I32, STATUS_NOMEM))
    return res


def _planned_gather(fl, node, p, x, out):
    """A gather by plan `p` (`gathers`), from x or from the parts of the concatenation
    x stands for (absorbed)."""
    b = fl.b
    res, _ = new_array(fl, out.dtype, _static_dims(out, node), node)
    src = node.inputs[1]
    if src in fl.fused:  # an absorbed concatenation: read its parts
        tup, tt = fl.value(src.inputs[1]), fl.ltype(src.inputs[1])
        values = [(b.extract_value(tup, k), e) for k, e in enumerate(tt.elems)]
    else:
        values = [(x, fl.ltype(src))]
    parts = [(data_of(b, v), strides(fl, v, vt)[0]) for v, vt in values]
    gathers.emit(fl, p, parts, data_of(b, res), out.dtype)
    return res


@rule(P.take_along_axis)
def lower_take_along_axis(fl, node, args, types, out):
    idx = node.inputs[2]
    if idx in fl.fused and idx.is_apply(P.argsort):  # a sort (see absorbed_nodes)
        return _sort(fl, node, args[0], types[0])
    src = node.inputs[1]
    sizes = _part_sizes(fl, src) if src in fl.fused else _whole_size(types[0])
    p = _gather_plan(fl, node, sizes)
    if p is not None:
        return _planned_gather(fl, node, p, args[0], out)
    b = fl.b
    x_t, idx_t = types[0], types[1]
    axis = _axis(fl, node, 3, x_t.ndim)
    shape = _static_dims(out, node)
    res, _ = new_array(fl, out.dtype, shape, node)
    x_step = strides(fl, args[0], x_t)[axis]
    x_data = data_of(b, args[0])
    operands = [("x", x_data, _gather_strides(fl, args[0], x_t, out.shape, axis)),
                ("idx", data_of(b, args[1]), _gather_strides(fl, args[1], idx_t, out.shape, None)),
                ("out", data_of(b, res), c_strides(b, shape)[0])]

    def inner(offs, j, ln, state):
        i = _checked_index(fl, node, load_elem(b, data_of(b, args[1]), offs["idx"], "int64"),
                           x_t.shape[axis], axis)
        v = load_elem(b, x_data, b.add(offs["x"], b.mul(i, x_step)), x_t.dtype)
        store_elem(b, v, data_of(b, res), offs["out"], out.dtype)
        return state

    LoopNest(fl, shape, operands, 1, ir.Constant(I1, 0)).run(inner)
    return res


@rule(P.take_along_axis_grad)
def lower_take_along_axis_grad(fl, node, args, types, out):
    b = fl.b
    x_t, idx_t, d_t = types[0], types[1], types[3]
    axis = _axis(fl, node, 3, x_t.ndim)
    res, _ = new_array(fl, out.dtype, _static_dims(x_t, node), node, zero=True)
    res_data = data_of(b, res)
    res_t = Array(out.dtype, x_t.shape)
    # the loop runs over the shape of take_along_axis(x, idx, axis)
    shape_t = [idx_t.shape[k] if k == axis else
               (x_t.shape[k] if x_t.shape[k] != 1 else idx_t.shape[k]) for k in range(x_t.ndim)]
    shape = [i64(n) for n in shape_t]
    res_step = strides(fl, res, res_t)[axis]
    operands = [("res", res_data, _gather_strides(fl, res, res_t, shape_t, axis)),
                ("idx", data_of(b, args[1]), _gather_strides(fl, args[1], idx_t, shape_t, None))]
    if isinstance(d_t, Array):
        pad = x_t.ndim - d_t.ndim  # d broadcasts from the right
        d_st = _gather_strides(fl, args[3], d_t, shape_t[pad:], None)
        operands.append(("d", data_of(b, args[3]), [i64(0)] * pad + d_st))

    def inner(offs, j, ln, state):
        i = _checked_index(fl, node, load_elem(b, data_of(b, args[1]), offs["idx"], "int64"),
                           x_t.shape[axis], axis)
        at = b.add(offs["res"], b.mul(i, res_step))
        if isinstance(d_t, Array):
            dv = load_elem(b, data_of(b, args[3]), offs["d"], d_t.dtype)
        else:
            dv = args[3]
        dv = cast(b, dv, d_t.dtype, out.dtype)
        old = load_elem(b, res_data, at, out.dtype)
        new = b.fadd(old, dv) if out.dtype in ("float64", "float32") else \
            (b.or_(old, dv) if out.dtype == "bool" else b.add(old, dv))
        store_elem(b, new, res_data, at, out.dtype)
        return state

    LoopNest(fl, shape, operands, 1, ir.Constant(I1, 0)).run(inner)
    return res

