"""LLVM lowering of the reduce primitives of issue 18 (see arrays.py for the conventions).

`reduce_prod` is ops_accumulate's reduction loop (`lower_reduce`) with products.

The scans (`cumsum`, `cumprod`, `linear_recurrence`) write a new C-contiguous array,
step by step along the axis (backwards when `reverse`), from strided inputs.  When the
scan axis is the last one, each line is a serial loop whose running value stays in a
register.  Otherwise a step is a whole slice: out[..., i, :] = out[..., i - 1, :] (op)
x[..., i, :], a loop over the axes after the scan axis that is vectorized where they
are contiguous.  The operations are done in the same order as NumPy's (the running
value first), so results are the same to the last bit.

`argmax` and `argmin` are one pass too: along the last axis, line by line, several
vectors of (best value, position) at a time; along another axis, slab by slab, the best
values and positions of a whole slab updated in a vectorized loop.  A nan is an
extremum, and the first one wins (NumPy's rule).
"""

import llvmlite.ir as ir

from ...errors import MyiaValueError
from ...prim import ops as P
from .arrays import data_of, dims, load_elem, make_array, new_array, store_elem, strides
from .cg import for_range, i32, i64, outlined
from .registry import backend_error, rule
from .ltypes import ELEM_IR, ITEMSIZE, Array
from .ops_accumulate import lower_reduce
from .ops_elementwise import LoopNest, choose_lanes
from .ops_scalar import FLOATS, cast, splat


@rule(P.reduce_prod)
def lower_reduce_prod(fl, node, args, types, out):
    return lower_reduce(fl, node, args, types, out, "prod")


# ---- scans -------------------------------------------------------------------------------


def _add(b, x, y, dtype):
    return b.fadd(x, y) if dtype in FLOATS else b.add(x, y)


def _mul(b, x, y, dtype):
    return b.fmul(x, y) if dtype in FLOATS else b.mul(x, y)


def _scan_axis(fl, node, index, ndim):
    """The static axis (input `index` of node), non-negative."""
    axis = fl.static(node.inputs[index])
    if not -ndim <= axis < ndim:
        raise backend_error(f"a scan along axis {axis} of an array of rank {ndim}", node)
    return axis % ndim


def emit_scan(fl, node, operands, out_t, axis, reverse, first, step):
    """A new array of type out_t: out[first step] = first(*x), then out[i] =
    step(out[previous step], *x) along `axis`; operands: [(value, Array type)] of
    out's shape; x are their elements at i, converted to out_t's dtype."""
    b = fl.b
    dt = out_t.dtype
    shape = dims(fl, operands[0][0], operands[0][1])
    out, _ = new_array(fl, dt, shape, node)
    nd = len(shape)
    n = shape[axis]
    in_strides = [strides(fl, v, t) for v, t in operands]
    out_strides = [None] * nd
    acc = i64(1)
    for k in range(nd - 1, -1, -1):  # out is C-contiguous
        out_strides[k] = acc
        acc = b.mul(acc, shape[k])
    bases = [data_of(b, v) for v, _ in operands]
    out_data = data_of(b, out)
    in_dts = [t.dtype for _, t in operands]
    lanes = choose_lanes([t for _, t in operands] + [out_t])

    def loads(offsets, ln):
        return [cast(b, load_elem(b, base, off, src, ln), src, dt)
                for base, off, src in zip(bases, offsets, in_dts)]

    def step_index(j):
        return b.sub(b.sub(n, i64(1)), j) if reverse else j

    def earlier(i):  # the index of the previous step
        return b.add(i, i64(1)) if reverse else b.sub(i, i64(1))

    # the axes before the scan axis: a loop nest whose body scans one line or slab
    outer = [(k, None, [s[a] for a in range(axis)]) for k, s in enumerate(in_strides)]
    outer.append(("out", None, out_strides[:axis]))
    inner_shape = shape[axis + 1:]

    def at_step(offs, i, key, st):
        return b.add(offs[key], b.mul(i, st[axis]))

    def serial(offs, _j, _ln, state):
        # the scan axis is the last one: the running value stays in a register
        with b.if_then(b.icmp_signed(">", n, i64(0))):
            i0 = step_index(i64(0))
            x_offs = [at_step(offs, i0, k, s) for k, s in enumerate(in_strides)]
            o0 = at_step(offs, i0, "out", out_strides)
            v0 = first(*loads(x_offs, 1))
            store_elem(b, v0, out_data, o0, dt)
            pre = b.block
            cond_bb = b.append_basic_block("scan.cond")
            body_bb = b.append_basic_block("scan.body")
            end_bb = b.append_basic_block("scan.end")
            b.branch(cond_bb)
            b.position_at_end(cond_bb)
            j = b.phi(i64(0).type)
            running = b.phi(v0.type)
            j.add_incoming(i64(1), pre)
            running.add_incoming(v0, pre)
            b.cbranch(b.icmp_signed("<", j, n), body_bb, end_bb)
            b.position_at_end(body_bb)
            i = step_index(j)
            x_offs = [at_step(offs, i, k, s) for k, s in enumerate(in_strides)]
            v = step(running, *loads(x_offs, 1))
            store_elem(b, v, out_data, at_step(offs, i, "out", out_strides), dt)
            j.add_incoming(b.add(j, i64(1)), b.block)
            running.add_incoming(v, b.block)
            b.branch(cond_bb)
            b.position_at_end(end_bb)
        return state

    def slab_loop(offs, i, body):
        """body(input offsets, output offset, previous output offset, lanes) over the
        slab at step i (the axes after the scan axis, innermost vectorized)."""
        ops = [(k, None, s[axis + 1:]) for k, s in enumerate(in_strides)]
        ops.append(("out", None, out_strides[axis + 1:]))
        vec_ok = None
        for k, s in enumerate(in_strides):
            unit = b.icmp_signed("==", s[nd - 1], i64(1))
            vec_ok = unit if vec_ok is None else b.and_(vec_ok, unit)
        x_base = [at_step(offs, i, k, s) for k, s in enumerate(in_strides)]
        o_base = at_step(offs, i, "out", out_strides)
        o_prev = at_step(offs, earlier(i), "out", out_strides)

        def inner(o, _j, ln, state):
            x_offs = [b.add(x_base[k], o[k]) for k in range(len(operands))]
            body(x_offs, b.add(o_base, o["out"]), b.add(o_prev, o["out"]), ln)
            return state

        LoopNest(fl, inner_shape, ops, lanes, vec_ok).run(inner)

    def slabs(offs, _j, _ln, state):
        def first_slab(x_offs, o, _prev, ln):
            store_elem(b, first(*loads(x_offs, ln)), out_data, o, dt)

        def next_slab(x_offs, o, prev, ln):
            running = load_elem(b, out_data, prev, dt, ln)
            store_elem(b, step(running, *loads(x_offs, ln)), out_data, o, dt)

        with b.if_then(b.icmp_signed(">", n, i64(0))):
            slab_loop(offs, step_index(i64(0)), first_slab)
            with for_range(b, 1, n, name="scan") as j:
                slab_loop(offs, step_index(j), next_slab)
        return state

    with outlined(fl, "scan"):  # one kernel (see cg.outlined)
        LoopNest(fl, shape[:axis], outer, 1, None).run(serial if not inner_shape else slabs)
    return out


def _operands(args, types, node, count):
    for t in types[:count]:
        if not isinstance(t, Array) or t.ndim == 0:
            raise backend_error(f"a scan of a {t}", node)
    return list(zip(args[:count], types[:count]))


@rule(P.cumsum)
def lower_cumsum(fl, node, args, types, out):
    b, dt = fl.b, out.dtype
    return emit_scan(fl, node, _operands(args, types, node, 1), out,
                     _scan_axis(fl, node, 2, types[0].ndim), bool(fl.static(node.inputs[3])),
                     lambda x: x, lambda s, x: _add(b, s, x, dt))


@rule(P.cumprod)
def lower_cumprod(fl, node, args, types, out):
    b, dt = fl.b, out.dtype
    return emit_scan(fl, node, _operands(args, types, node, 1), out,
                     _scan_axis(fl, node, 2, types[0].ndim), bool(fl.static(node.inputs[3])),
                     lambda x: x, lambda s, x: _mul(b, s, x, dt))


@rule(P.linear_recurrence)
def lower_linear_recurrence(fl, node, args, types, out):
    b, dt = fl.b, out.dtype
    return emit_scan(fl, node, _operands(args, types, node, 2), out,
                     _scan_axis(fl, node, 3, types[0].ndim), bool(fl.static(node.inputs[4])),
                     lambda a, x: x, lambda s, a, x: _add(b, _mul(b, a, s, dt), x, dt))


# ---- argmax and argmin: one pass along the axis ---------------------------------------------


def _beats(b, v, best, dtype, greater):
    """v comes before `best` in the order: strictly greater (or smaller), or a nan where
    `best` is none (NumPy answers the first nan)."""
    op = ">" if greater else "<"
    if dtype in FLOATS:  # (v beyond best, or v nan) and best not nan
        return b.and_(b.fcmp_unordered(op, v, best), b.fcmp_ordered("ord", best, best))
    if dtype == "bool":
        return b.icmp_unsigned(op, v, best)
    return b.icmp_signed(op, v, best)


def _ties(b, v, best, dtype):
    if dtype in FLOATS:
        both_nan = b.and_(b.fcmp_unordered("uno", v, v), b.fcmp_unordered("uno", best, best))
        return b.or_(b.fcmp_ordered("==", v, best), both_nan)
    return b.icmp_unsigned("==", v, best)


def _carried(b, start, stop, step, state, body, name):
    """for j in range(start, stop, step): state = body(j, state); the state (a tuple of
    values) is carried through phis; returns its last value."""
    pre = b.block
    cond_bb = b.append_basic_block(f"{name}.cond")
    body_bb = b.append_basic_block(f"{name}.body")
    end_bb = b.append_basic_block(f"{name}.end")
    b.branch(cond_bb)
    b.position_at_end(cond_bb)
    j = b.phi(i64(0).type)
    j.add_incoming(start, pre)
    phis = []
    for s in state:
        p = b.phi(s.type)
        p.add_incoming(s, pre)
        phis.append(p)
    b.cbranch(b.icmp_signed("<", j, stop), body_bb, end_bb)
    b.position_at_end(body_bb)
    new = body(j, tuple(phis))
    j.add_incoming(b.add(j, i64(step)), b.block)
    for p, s in zip(phis, new):
        p.add_incoming(s, b.block)
    b.branch(cond_bb)
    b.position_at_end(end_bb)
    return tuple(phis)


def _shuffle(b, v, indices):
    mask = ir.Constant(ir.VectorType(i32(0).type, len(indices)), list(indices))
    return b.shuffle_vector(v, ir.Constant(v.type, ir.Undefined), mask)


def _lanes_extremum(b, best, at, dtype, greater):
    """The position of the first extremum among the lanes (value, position) of two
    vectors: halves compared with halves, a tie going to the earlier position."""
    lanes = best.type.count
    while lanes > 1:
        half = lanes // 2
        v, i = _shuffle(b, best, range(half)), _shuffle(b, at, range(half))
        w, j = _shuffle(b, best, range(half, lanes)), _shuffle(b, at, range(half, lanes))
        take = b.or_(_beats(b, w, v, dtype, greater),
                     b.and_(_ties(b, w, v, dtype), b.icmp_signed("<", j, i)))
        best, at, lanes = b.select(take, w, v), b.select(take, j, i), half
    return b.extract_element(at, i32(0))


def _line_extremum(fl, data, base, step, n, dtype, greater, lanes):
    """The position of the first extremum of the line data[base + j * step], j < n (n
    > 0).  Where the line is contiguous and at least `lanes` long: each lane keeps its
    best (value, position) over blocks of `lanes` elements, the last block being the
    last `lanes` elements (it may see some twice, which changes nothing), then the lanes
    are compared.  Otherwise one element at a time."""
    b = fl.b
    fn = b.function
    vec_bb, one_bb, done_bb = (fn.append_basic_block(f"arg.{k}") for k in ("vec", "one", "done"))
    b.cbranch(b.and_(b.icmp_signed("==", step, i64(1)), b.icmp_signed(">=", n, i64(lanes))),
              vec_bb, one_bb)

    def better(v, j, state):
        best, at = state
        take = _beats(b, v, best, dtype, greater)
        return (b.select(take, v, best), b.select(take, j, at))

    b.position_at_end(vec_bb)
    iota = ir.Constant(ir.VectorType(i64(0).type, lanes), list(range(lanes)))

    def block(j, state):
        v = load_elem(b, data, b.add(base, j), dtype, lanes)
        return better(v, b.add(splat(b, j, lanes), iota), state)

    first = (load_elem(b, data, base, dtype, lanes), iota)
    state = _carried(b, i64(lanes), b.sub(n, i64(lanes)), lanes, first, block, "argv")
    state = block(b.sub(n, i64(lanes)), state)
    at_vec = _lanes_extremum(b, *state, dtype, greater)
    vec_end = b.block
    b.branch(done_bb)

    b.position_at_end(one_bb)
    head = (load_elem(b, data, base, dtype), i64(0))
    at_one = _carried(b, i64(1), n, 1, head, lambda j, state: better(
        load_elem(b, data, b.add(base, b.mul(j, step)), dtype), j, state), "args")[1]
    one_end = b.block
    b.branch(done_bb)

    b.position_at_end(done_bb)
    at = b.phi(i64(0).type)
    at.add_incoming(at_vec, vec_end)
    at.add_incoming(at_one, one_end)
    return at


def lower_arg_extremum(fl, node, args, types, out, greater, what):
    """Along the last axis, line by line (_line_extremum).  Along another axis, slab by
    slab: the best values so far and their positions (the result) for every position of
    the axes after it, updated by each slab in a loop vectorized over those axes."""
    b = fl.b
    x, t = args[0], types[0]
    if not isinstance(t, Array) or t.ndim == 0:
        raise backend_error(f"{what} of a {t}", node)
    axis = _scan_axis(fl, node, 2, t.ndim)
    shape, st = dims(fl, x, t), strides(fl, x, t)
    n = shape[axis]
    fl.error_if(b.icmp_signed("==", n, i64(0)), node, MyiaValueError,
                f"attempt to get {what} of an empty sequence")
    kept = [k for k in range(t.ndim) if k != axis]
    kept_shape = [shape[k] for k in kept]
    if isinstance(out, Array):  # with keepdims, a 1 at axis (the strides are the same)
        res_shape = [shape[k] if k != axis else i64(1) for k in range(t.ndim)] \
            if out.ndim == t.ndim else kept_shape
        res, _ = new_array(fl, "int64", res_shape, node)
    else:
        res = make_array(b, 0, fl.alloca(ELEM_IR["int64"]), [], [])
    res_strides = [None] * len(kept)  # C order; the best values are laid out the same
    acc = i64(1)
    for k in range(len(kept) - 1, -1, -1):
        res_strides[k] = acc
        acc = b.mul(acc, kept_shape[k])
    data, res_data, dt = data_of(b, x), data_of(b, res), t.dtype
    lanes = choose_lanes([t])
    last = axis == t.ndim - 1
    best_data = None if last else fl.alloc(b.mul(acc, i64(ITEMSIZE[dt])))

    def line(offs, _j, _ln, state):
        i = _line_extremum(fl, data, offs["x"], st[axis], n, dt, greater, 4 * lanes)
        store_elem(b, i, res_data, offs["out"], "int64")
        return state

    def slab_loop(offs, i, body):
        ops = [("x", None, st[axis + 1:]), ("out", None, res_strides[axis:])]
        x_base = b.add(offs["x"], b.mul(i, st[axis]))

        def inner(o, _j, ln, state):
            body(b.add(x_base, o["x"]), b.add(offs["out"], o["out"]), ln)
            return state

        LoopNest(fl, shape[axis + 1:], ops, lanes, b.icmp_signed("==", st[-1], i64(1))).run(inner)

    def slabs(offs, _j, _ln, state):
        def first(xo, o, ln):
            store_elem(b, load_elem(b, data, xo, dt, ln), best_data, o, dt)
            store_elem(b, splat(b, i64(0), ln), res_data, o, "int64")

        slab_loop(offs, i64(0), first)
        with for_range(b, 1, n, name="slab") as i:
            def update(xo, o, ln):
                v, best = load_elem(b, data, xo, dt, ln), load_elem(b, best_data, o, dt, ln)
                take = _beats(b, v, best, dt, greater)
                store_elem(b, b.select(take, v, best), best_data, o, dt)
                at = load_elem(b, res_data, o, "int64", ln)
                store_elem(b, b.select(take, splat(b, i, ln), at), res_data, o, "int64")

            slab_loop(offs, i, update)
        return state

    outer = kept if last else list(range(axis))
    operands = [("x", None, [st[k] for k in outer]), ("out", None, res_strides[:len(outer)])]
    with outlined(fl, what):  # one kernel (see cg.outlined)
        LoopNest(fl, [shape[k] for k in outer], operands, 1, None).run(line if last else slabs)
    if isinstance(out, Array):
        return res
    return load_elem(b, res_data, i64(0), "int64")


@rule(P.argmax)
def lower_argmax(fl, node, args, types, out):
    return lower_arg_extremum(fl, node, args, types, out, True, "argmax")


@rule(P.argmin)
def lower_argmin(fl, node, args, types, out):
    return lower_arg_extremum(fl, node, args, types, out, False, "argmin")
