"""Reductions: `reduce_sum`, `reduce_max`, `sum_to` and `unbroadcast`.

Each is one "accumulate" loop nest (`emit_accumulate`) over the input expression (a
fused elementwise expression: ops_elementwise): the output index is the input index
through strides that are 0 on reduced axes (static axes for `reduce_sum`/`reduce_max`;
for `sum_to`, which undoes broadcasting, axes found at run time).  When the innermost
axis is reduced, partial results are kept in vector registers, and a float sum adds
them pairwise, in blocks (`_StatefulNest`), as NumPy does though not in its exact
order (results agree to ~1e-15 relative).  `reduce_prod` is the same loop with
products (ops_reduce).
"""

import llvmlite.ir as ir

from ...errors import MyiaShapeError, MyiaValueError
from ...prim import ops as P
from .arrays import (_shape_value, c_strides, data_of, dims, fill, full_like, load_elem,
                     make_array, new_array, size_of, store_elem)
from .cg import _known_int, for_range, i32, i64, outlined
from .registry import backend_error, rule
from .ltypes import ELEM_IR, Array, Scalar, to_ir
from .ops_elementwise import (Leaf, LoopNest, Op, _calls_libm, _leaves, _prepare_leaves,
                              _splat_before_inner, _statically_empty, build_tree, choose_lanes,
                              emit_expr, ew_values, tree_shapes)
from .ops_scalar import FLOATS, cast, const_like, ew_binary
from .ops_struct import zeros
from .runtime import I1, I64, PTR


# ---- the accumulate loop -----------------------------------------------------------------


def _identity(kind, dtype):
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if dtype in FLOATS:
        return float("-inf")
    if dtype == "bool":
        return 0
    return -(1 << 63)


def _combine(b, kind, x, y, dtype):
    if kind == "sum":
        if dtype in FLOATS:
            return b.fadd(x, y)
        if dtype == "bool":
            return b.or_(x, y)
        return b.add(x, y)
    if kind == "prod":  # reduce_prod (ops_reduce.py)
        if dtype in FLOATS:
            return b.fmul(x, y)
        if dtype == "bool":
            return b.and_(x, y)
        return b.mul(x, y)
    if dtype in FLOATS:  # max: y where it is larger or nan, unless x is nan (nan wins)
        take = b.and_(b.fcmp_unordered(">", y, x), b.fcmp_ordered("ord", x, x))
        return b.select(take, y, x)
    return ew_binary(b, "maximum", x, y, dtype, dtype, dtype, False)


def _hreduce(b, kind, v, dtype):
    lanes = v.type.count
    acc = b.extract_element(v, i32(0))
    for k in range(1, lanes):
        acc = _combine(b, kind, acc, b.extract_element(v, i32(k)), dtype)
    return acc


def emit_accumulate(fl, tree, in_shape, out, out_t, out_eff, kind, node):
    """out[idx through out_eff] (+)= tree[idx] for idx over in_shape; `out` is
    initialized by the caller.  out_eff: strides of `out` seen from the input's
    index space (0 on reduced axes)."""
    b = fl.b
    dt = out_t.dtype
    n = len(in_shape)
    leaves = _leaves(tree, []) if not isinstance(tree, Leaf) else [tree]
    lanes = choose_lanes([l.t for l in leaves] + [out_t])
    if kind != "sum" and not _calls_libm(tree):
        # a max or a product: several vectors wide, so that chains of dependent
        # operations overlap (sums have their own accumulators, see _StatefulNest):
        # four for a product, eight for a max (its step is a compare and a select:
        # on 10^5 float64, 12 us with four vectors, 9 us with eight)
        lanes *= 8 if kind == "max" else 4
    operands, vec_ok = _prepare_leaves(fl, leaves, in_shape, lanes)
    operands.append(("out", data_of(b, out), out_eff))
    out_data = data_of(b, out)
    in_dt = tree.t.dtype

    def value(offs, ln):
        v = emit_expr(fl, tree, ln, offs)
        return cast(b, v, in_dt, dt)

    if n == 0:
        v = value({id(l): i64(0) for l in leaves if isinstance(l.t, Array)}, 1)
        cur = load_elem(b, out_data, i64(0), dt)
        store_elem(b, _combine(b, kind, cur, v, dt), out_data, i64(0), dt)
        return
    inner_reduced = b.icmp_signed("==", out_eff[n - 1], i64(0))
    inner_unit = b.icmp_signed("==", out_eff[n - 1], i64(1))
    known = _known_int(inner_reduced)  # None: chosen at run time
    fn = b.function
    red_bb = fn.append_basic_block("acc.reg") if known != 0 else None
    vec_bb = fn.append_basic_block("acc.mem") if known != 1 else None
    done_bb = fn.append_basic_block("acc.done")
    if known is None:
        b.cbranch(inner_reduced, red_bb, vec_bb)
    else:
        b.branch(red_bb or vec_bb)
    before = _splat_before_inner(fl, leaves, lanes)

    # 1. the innermost axis is reduced: partial results in registers
    ident = const_like(dt, _identity(kind, dt), 1)
    vident = const_like(dt, _identity(kind, dt), lanes)

    def before_reg(offs):
        before(offs)
        return (vident, ident)

    def inner_reg(offs, j, ln, state):
        vacc, sacc = state
        v = value(offs, ln)
        if ln > 1:
            return (_combine(b, kind, vacc, v, dt), sacc)
        return (vacc, _combine(b, kind, sacc, v, dt))

    def after_reg(offs, state):
        vacc, sacc = state
        total = _combine(b, kind, _hreduce(b, kind, vacc, dt), sacc, dt)
        cur = load_elem(b, out_data, offs["out"], dt)
        store_elem(b, _combine(b, kind, cur, total, dt), out_data, offs["out"], dt)

    if red_bb is not None:
        b.position_at_end(red_bb)
        # float sums along the reduced axis: pairwise, at NumPy's accuracy
        pairwise = (ident, vident) if kind == "sum" and dt in FLOATS else None
        _StatefulNest(fl, in_shape, operands, lanes, vec_ok, pairwise).run(
            inner_reg, before_reg, after_reg)
        b.branch(done_bb)

    # 2. the innermost axis is kept: accumulate into memory (vectorized when unit)
    def inner_mem(offs, j, ln, state):
        v = value(offs, ln)
        cur = load_elem(b, out_data, offs["out"], dt, ln)
        store_elem(b, _combine(b, kind, cur, v, dt), out_data, offs["out"], dt)
        return state

    if vec_bb is not None:
        b.position_at_end(vec_bb)
        _StatefulNest(fl, in_shape, operands, lanes, b.and_(vec_ok, inner_unit)).run(
            inner_mem, lambda offs: before(offs), None)
        b.branch(done_bb)
    b.position_at_end(done_bb)


#: pairwise summation: each of PAIRWISE_UNROLL accumulators adds PAIRWISE_RUN values of
#: a block in a row (NumPy: 8 accumulators of 16); the blocks' sums are added pairwise
PAIRWISE_UNROLL = 4
PAIRWISE_RUN = 16


class _StatefulNest(LoopNest):
    """A loop nest whose innermost loops carry a state (accumulators) through phis.

    `pairwise` (the scalar and vector zeros of a float sum): the innermost loop adds
    its values pairwise, as NumPy does: in blocks, whose sums are combined like the
    digits of a binary counter (a stack of partial sums, one per power of two of
    blocks).  The error grows with log(n), not n (added in sequence, 10^7 float32
    values of 0.1 summed to 1010791.88; pairwise to 1000000.06, NumPy's 1000000.12),
    and the block's independent accumulators keep the vector units busy."""

    def __init__(self, fl, shape, operands, lanes, vec_ok, pairwise=None):
        super().__init__(fl, shape, operands, lanes, vec_ok)
        self.pairwise = pairwise

    def _inner(self, offs, inner, before_inner, after_inner):
        fl = self.fl
        b = fl.b
        n = len(self.shape)
        N = self.shape[n - 1]
        state = before_inner(offs) if before_inner else None
        lanes = self.lanes
        loop = self._loop if self.pairwise is None else self._pairwise_loop
        if lanes > 1:
            nvec = b.and_(N, i64(~(lanes - 1)))
            vec_end = b.select(self.vec_ok, nvec, i64(0))
            if _known_int(vec_end) != 0:
                state = loop(offs, i64(0), vec_end, lanes, inner, state)
            start = vec_end
        else:
            start = i64(0)
        if not _statically_empty(start, N):
            state = loop(offs, start, N, 1, inner, state)
        if after_inner:
            after_inner(offs, state)

    def _pairwise_loop(self, offs, start, stop, step, inner, state):
        """`_loop` of a float sum, pairwise: the state is (vector sum, scalar sum); a
        step of `step` lanes adds into the first (step > 1) or the second."""
        b = self.fl.b
        n = len(self.shape)
        slot = 0 if step > 1 else 1
        zero = self.pairwise[1] if step > 1 else self.pairwise[0]
        counter = _PairwiseStack(self.fl, zero.type)

        def with_acc(acc):
            return tuple(acc if k == slot else state[k] for k in range(len(state)))

        unroll, block = PAIRWISE_UNROLL, PAIRWISE_UNROLL * PAIRWISE_RUN * step
        last = b.mul(b.sdiv(b.sub(stop, start), i64(block)), i64(block))
        full_end = b.add(start, last)

        def unrolled(o, j, st, accs):
            out = []
            for u in range(unroll):
                ou = {key: b.add(o[key], b.mul(i64(u * step), s[n - 1]))
                      for key, _, s in self.operands}
                out.append(inner(ou, b.add(j, i64(u * step)), step, with_acc(accs[u]))[slot])
            return tuple(out)

        with for_range(b, start, full_end, block, name="pw") as first:
            accs = self._loop(offs, first, b.add(first, i64(block)), unroll * step, unrolled,
                              (zero,) * unroll)
            pairs = list(accs)
            while len(pairs) > 1:
                pairs = [b.fadd(pairs[k], pairs[k + 1]) for k in range(0, len(pairs), 2)]
            counter.push(pairs[0])
        rest = self._loop(offs, full_end, stop, step, inner, with_acc(zero))[slot]
        counter.push(rest)
        return with_acc(b.fadd(state[slot], counter.total(zero)))


    def _loop(self, offs, start, stop, step, inner, state):
        b = self.fl.b
        n = len(self.shape)
        pre = b.block
        cond_bb = b.append_basic_block("r.cond")
        body_bb = b.append_basic_block("r.body")
        end_bb = b.append_basic_block("r.end")
        b.branch(cond_bb)
        b.position_at_end(cond_bb)
        j = b.phi(I64)
        j.add_incoming(start, pre)
        phis = None
        if state is not None:
            phis = []
            for s in state:
                p = b.phi(s.type)
                p.add_incoming(s, pre)
                phis.append(p)
        b.cbranch(b.icmp_signed("<", j, stop), body_bb, end_bb)
        b.position_at_end(body_bb)
        o = {key: b.add(offs[key], b.mul(j, st[n - 1])) for key, _, st in self.operands}
        new = inner(o, j, step, tuple(phis) if phis is not None else None)
        j.add_incoming(b.add(j, i64(step)), b.block)
        if phis is not None:
            for p, s in zip(phis, new):
                p.add_incoming(s, b.block)
        b.branch(cond_bb)
        b.position_at_end(end_bb)
        return tuple(phis) if phis is not None else None


class _PairwiseStack:
    """Partial sums of 1, 2, 4... blocks, in an alloca: pushing a block's sum adds it
    to the partials of equal weight, as a binary counter carries (pairwise summation
    without recursion)."""

    LEVELS = 64

    def __init__(self, fl, typ):
        self.fl = fl
        self.typ = typ
        self.slots = fl.alloca(ir.ArrayType(typ, self.LEVELS), name="pw.stack")
        self.count = fl.alloca(I64, name="pw.count")
        fl.b.store(i64(0), self.count)

    def _slot(self, k):
        p = self.fl.b.gep(self.slots, [i64(0), k], source_etype=ir.ArrayType(self.typ, self.LEVELS))
        p.type = PTR
        return p

    def push(self, v):
        b = self.fl.b
        pre = b.block
        loop_bb = b.append_basic_block("pw.carry")
        add_bb = b.append_basic_block("pw.add")
        done_bb = b.append_basic_block("pw.done")
        count = b.load(self.count, typ=I64)
        b.branch(loop_bb)
        b.position_at_end(loop_bb)
        acc = b.phi(self.typ)
        c = b.phi(I64)
        k = b.phi(I64)
        acc.add_incoming(v, pre)
        c.add_incoming(count, pre)
        k.add_incoming(i64(0), pre)
        b.cbranch(b.icmp_signed("!=", b.and_(c, i64(1)), i64(0)), add_bb, done_bb)
        b.position_at_end(add_bb)
        acc.add_incoming(b.fadd(acc, b.load(self._slot(k), typ=self.typ)), add_bb)
        c.add_incoming(b.ashr(c, i64(1)), add_bb)
        k.add_incoming(b.add(k, i64(1)), add_bb)
        b.branch(loop_bb)
        b.position_at_end(done_bb)
        b.store(acc, self._slot(k))
        b.store(b.add(count, i64(1)), self.count)

    def total(self, zero):
        """The sum of the partials (of the blocks pushed), the lightest first."""
        b = self.fl.b
        count = b.load(self.count, typ=I64)
        pre = b.block
        loop_bb = b.append_basic_block("pw.sum")
        body_bb = b.append_basic_block("pw.sum.body")
        done_bb = b.append_basic_block("pw.sum.done")
        b.branch(loop_bb)
        b.position_at_end(loop_bb)
        total = b.phi(self.typ)
        c = b.phi(I64)
        k = b.phi(I64)
        total.add_incoming(zero, pre)
        c.add_incoming(count, pre)
        k.add_incoming(i64(0), pre)
        b.cbranch(b.icmp_signed("!=", c, i64(0)), body_bb, done_bb)
        b.position_at_end(body_bb)
        bit = b.icmp_signed("!=", b.and_(c, i64(1)), i64(0))
        part = b.load(self._slot(k), typ=self.typ)
        total.add_incoming(b.select(bit, b.fadd(total, part), total), body_bb)
        c.add_incoming(b.ashr(c, i64(1)), body_bb)
        k.add_incoming(b.add(k, i64(1)), body_bb)
        b.branch(loop_bb)
        b.position_at_end(done_bb)
        return total


# ---- the rules ---------------------------------------------------------------------------


def _input_tree(fl, node):
    """The input of a reduction: a fused expression, or a leaf."""
    x = node.inputs[1]
    if x in fl.fused:
        return build_tree(fl, x, fl.fused)
    return Leaf(fl.value(x), fl.ltype(x))


def _tree_shape(fl, tree):
    if isinstance(tree, Leaf):
        return dims(fl, tree.value, tree.t) if isinstance(tree.t, Array) else []
    return tree_shapes(fl, tree)


def _as_array_leaf(fl, tree):
    """Scalars reduce like 0-d arrays."""
    if isinstance(tree, Leaf) and isinstance(tree.t, Scalar):
        b = fl.b
        tmp = fl.alloca(ELEM_IR[tree.t.dtype])
        store_elem(b, tree.value, tmp, i64(0), tree.t.dtype)
        t = Array(tree.t.dtype, ())
        return Leaf(make_array(b, 0, tmp, [], []), t)
    return tree


def _reduce_axes(fl, node, ndim):
    axis = fl.static(node.inputs[2])
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise backend_error(f"axis {a} out of bounds for rank {ndim}", node)
        out.append(a % ndim)
    return tuple(sorted(set(out)))


def lower_reduce(fl, node, args, types, out_t, kind):
    b = fl.b
    tree = _as_array_leaf(fl, _input_tree(fl, node))
    in_t = tree.t
    n = in_t.ndim
    axes = _reduce_axes(fl, node, n)
    keepdims = bool(fl.static(node.inputs[3]))
    in_shape = _tree_shape(fl, tree)
    kept = [k for k in range(n) if k not in axes]
    dt = out_t.dtype
    if kind == "max":
        rsize = size_of(b, [in_shape[k] for k in axes])
        fl.error_if(b.icmp_signed("==", rsize, i64(0)), node, MyiaValueError,
                    "zero-size array to reduction operation maximum which has no identity")
    if isinstance(out_t, Scalar):
        tmp = fl.alloca(ELEM_IR[dt])
        out = make_array(b, 0, tmp, [], [])
        out_shape = []
    else:
        out_shape = [in_shape[k] if k not in axes else i64(1) for k in range(n)] if keepdims \
            else [in_shape[k] for k in kept]
        out, _ = new_array(fl, dt, out_shape, node)
    # initialize with the identity
    osize = size_of(b, out_shape)
    ident = const_like(dt, _identity(kind, dt), 1)
    fill(fl, out, osize, ident, dt)
    with outlined(fl, "reduce"):  # one kernel (see cg.outlined)
        ost, _ = c_strides(b, out_shape)
        out_eff = []
        pos = 0
        for k in range(n):
            if k in axes:
                out_eff.append(i64(0))
                if keepdims:
                    pos += 1
            else:
                out_eff.append(ost[pos])
                pos += 1
        emit_accumulate(fl, tree, in_shape, out, Array(dt, [None] * len(out_shape)), out_eff,
                        kind, node)
    if isinstance(out_t, Scalar):
        return load_elem(b, tmp, i64(0), dt)
    return out


@rule(P.reduce_sum)
def lower_reduce_sum(fl, node, args, types, out):
    return lower_reduce(fl, node, args, types, out, "sum")


@rule(P.reduce_max)
def lower_reduce_max(fl, node, args, types, out):
    return lower_reduce(fl, node, args, types, out, "max")


def sum_to_shape(fl, tree, target, out_t, node):
    """Sum the expression `tree` down to shape `target` (list of i64 values)."""
    b = fl.b
    in_t = tree.t
    n = in_t.ndim
    m = len(target)
    in_shape = _tree_shape(fl, tree)
    if m > n:
        raise backend_error(f"sum_to from rank {n} to rank {m}", node)
    out, osize = new_array(fl, out_t.dtype, target, node)
    ident = const_like(out_t.dtype, 0, 1)
    fill(fl, out, osize, ident, out_t.dtype)
    ost, _ = c_strides(b, target)
    out_eff = []
    for k in range(n):
        j = k - (n - m)
        if j < 0:
            out_eff.append(i64(0))
            continue
        d_in, d_out = in_shape[k], target[j]
        bad = b.and_(b.icmp_signed("!=", d_in, d_out), b.icmp_signed("!=", d_out, i64(1)))
        fl.error_if(bad, node, MyiaShapeError,
                    "cannot sum an axis of length {a} down to length {b}", d_in, d_out)
        out_eff.append(b.select(b.and_(b.icmp_signed("==", d_out, i64(1)),
                                       b.icmp_signed("!=", d_in, i64(1))), i64(0), ost[j]))
    emit_accumulate(fl, tree, in_shape, out, out_t, out_eff, "sum", node)
    return out


@rule(P.sum_to)
def lower_sum_to(fl, node, args, types, out):
    tree = _input_tree(fl, node)
    if isinstance(out, Scalar):
        tree = _as_array_leaf(fl, tree)
        b = fl.b
        tmp = fl.alloca(ELEM_IR[out.dtype])
        arr = make_array(b, 0, tmp, [], [])
        store_elem(b, const_like(out.dtype, 0, 1), tmp, i64(0), out.dtype)
        in_shape = _tree_shape(fl, tree)
        emit_accumulate(fl, tree, in_shape, arr, Array(out.dtype, ()),
                        [i64(0)] * len(in_shape), "sum", node)
        return load_elem(b, tmp, i64(0), out.dtype)
    target = _shape_value(fl, node, args[1], types[1], 2)
    return _sum_to_or_same(fl, tree, target, out, node)


def _sum_to_or_same(fl, tree, target, out, node):
    """sum_to, or the input itself when it already has the target shape (arrays are
    immutable: no copy)."""
    b = fl.b
    if isinstance(tree, Leaf) and isinstance(tree.t, Array) and tree.t.ndim == len(target) \
            and tree.t.dtype == out.dtype:
        in_shape = dims(fl, tree.value, tree.t)
        same = ir.Constant(I1, 1)
        for a, c in zip(in_shape, target):
            same = b.and_(same, b.icmp_signed("==", a, c))
        pre = b.block
        fn = b.function
        sum_bb = fn.append_basic_block("sum_to")
        merge = fn.append_basic_block("sum_to.done")
        b.cbranch(same, merge, sum_bb)
        b.position_at_end(sum_bb)
        r = sum_to_shape(fl, tree, target, out, node)
        end = b.block
        b.branch(merge)
        b.position_at_end(merge)
        phi = b.phi(to_ir(out))
        phi.add_incoming(tree.value, pre)
        phi.add_incoming(r, end)
        return phi
    return sum_to_shape(fl, tree, target, out, node)


@rule(P.unbroadcast)
def lower_unbroadcast(fl, node, args, types, out):
    d_t, x_t = types
    b = fl.b
    if isinstance(x_t, Scalar) and x_t.dtype in ("int64", "bool") or \
            isinstance(x_t, Array) and x_t.dtype in ("int64", "bool"):
        return zeros(fl, out, args[1], x_t, node)
    if isinstance(x_t, Array):
        if isinstance(d_t, Scalar):
            full = full_like(fl, args[1], x_t, out, 0, node)
            return ew_values(fl, "add", [full, args[0]], [out, d_t], out, node)
        tree = Leaf(args[0], d_t)
        target = dims(fl, args[1], x_t)
        if d_t.dtype != out.dtype:
            tree = Op("astype", [tree], Array(out.dtype, d_t.shape), node)
        return _sum_to_or_same(fl, tree, target, out, node)
    # x is a float scalar
    if isinstance(d_t, Array):
        tree = Leaf(args[0], d_t)
        tmp = fl.alloca(ELEM_IR[out.dtype])
        arr = make_array(b, 0, tmp, [], [])
        store_elem(b, const_like(out.dtype, 0, 1), tmp, i64(0), out.dtype)
        emit_accumulate(fl, tree, dims(fl, args[0], d_t), arr, Array(out.dtype, ()),
                        [i64(0)] * d_t.ndim, "sum", node)
        return load_elem(b, tmp, i64(0), out.dtype)
    return cast(b, args[0], d_t.dtype, out.dtype)
