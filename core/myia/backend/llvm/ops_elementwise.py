"""Fused elementwise loops: the lowering of elementwise operations on arrays.

Fusion.  An elementwise node whose only user is another elementwise node (or a
reduction) of the same graph, of the same rank, is not computed on its own: its user
computes the whole expression in one loop nest (`fused_nodes`, `build_tree`).  The
loop nest broadcasts by strides (a dimension of size 1 has stride 0), checks the
shapes of every node of the expression (MyiaShapeError at that node's line), and
vectorizes its innermost loop explicitly: `<4 x double>` (`<8 x float>`) loads,
operations and stores, transcendental functions through libmvec where present, with
a scalar loop for the remainder and for inner strides other than 0 or 1 (except in an
expression that calls libmvec: there a transposed or stepped operand's lanes are
loaded one by one, and the call still takes 4 or 8 of them).

`materialize` is the rule of an elementwise node with an array result (ops_scalar's
elementwise rules call it); one C math function or `pow` of whole C-contiguous arrays
is NumPy's own loop (`npyloops`).  The loop nest (`LoopNest`) and the expression trees
(`Leaf`, `Op`, `emit_expr`) also serve the reductions (ops_accumulate), the indexing
gradient (ops_index) and the rearrangements (ops_shape, ops_dynamic).
"""

import llvmlite.ir as ir

from ...errors import MyiaShapeError, MyiaValueError
from ...ir import Apply, Constant
from ...prim import Primitive, all_primitives
from ...prim.arith import NEGATIVE_POWER_ARRAY
from .arrays import (_at, c_strides, data_of, dim, dims, gather_elems, is_c_contiguous, load_elem,
                     new_array, store_elem, stride)
from .cg import NULL, _known_int, for_range, i64, outlined
from .ltypes import ITEMSIZE, Array, Scalar
from .npyloops import loop_symbol
from .ops_scalar import FLOATS, cast, const_like, ew_binary, ew_unary, ew_where, lanes_of, splat
from .runtime import I1, I64, PTR

# The elementwise operations, from the primitives' `elementwise` trait (its arity);
# `gadd` adds sensitivities of any structure, so it has no trait, but on arrays it is `add`.
EW_UNARY = {p.name for p in all_primitives().values() if p.elementwise == 1}
EW_BINARY = {p.name for p in all_primitives().values() if p.elementwise == 2} | {"gadd"}
EW_ALL = EW_UNARY | EW_BINARY | {p.name for p in all_primitives().values() if p.elementwise == 3}


# ---- fusion ------------------------------------------------------------------------------


def ew_name(node):
    """The elementwise operation `node` computes, or None."""
    if not isinstance(node, Apply):
        return None
    fn = node.inputs[0]
    if not (isinstance(fn, Constant) and isinstance(fn.value, Primitive)):
        return None
    name = fn.value.name
    if name == "not":
        return "not"
    return name if name in EW_ALL else None


def _is_array_ew(fl, node):
    return ew_name(node) is not None and isinstance(fl.ltype(node), Array)


def fused_nodes(fl, g):
    """The nodes of `g` computed by their only user, not on their own: elementwise
    array nodes computed inside their user's loop, and the nodes a take_along_axis
    absorbs (`ops_shape.absorbed_nodes`: the argsort of a sort...)."""
    # import here: ops_shape imports this module
    from .ops_shape import absorbed_nodes

    mng = fl.L.mng
    out = absorbed_nodes(fl, g)
    for node in mng.nodes(g):
        if node is g.output or not _is_array_ew(fl, node):
            continue
        users = mng.users(node)
        if len(users) != 1:
            continue
        u, i = users[0]
        if u.graph is not g:
            continue
        t = fl.ltype(node)
        if _is_array_ew(fl, u):
            ut = fl.ltype(u)
            if ut.ndim != t.ndim or any(a is not None and c is not None and a != c
                                        for a, c in zip(t.shape, ut.shape)):
                continue
            if ew_name(u) == "astype" and i != 1:
                continue
            out.add(node)
        elif u.is_apply() and u.inputs[0].is_constant(Primitive) and \
                u.inputs[0].value.name in ("reduce_sum", "reduce_max", "reduce_prod", "sum_to") \
                and i == 1:
            out.add(node)
    return out


class Leaf:
    __slots__ = ("value", "t", "eff", "base", "splat", "vec")

    def __init__(self, value, t):
        self.value = value
        self.t = t


class Op:
    __slots__ = ("name", "children", "t", "node", "shape")

    def __init__(self, name, children, t, node):
        self.name = name
        self.children = children
        self.t = t
        self.node = node


def _operands(name, node):
    """The inputs of an elementwise node that are operands (astype's dtype is not)."""
    if name == "astype":
        return node.inputs[1:2]
    return node.inputs[1:]


def build_tree(fl, node, fused):
    name = ew_name(node)
    children = []
    for inp in _operands(name, node):
        if inp in fused:
            children.append(build_tree(fl, inp, fused))
        else:
            children.append(Leaf(fl.value(inp), fl.ltype(inp)))
    return Op(name, children, fl.ltype(node), node)


def _leaves(tree, out):
    if isinstance(tree, Leaf):
        out.append(tree)
    else:
        for c in tree.children:
            _leaves(c, out)
    return out


def _dtype(t):
    return t.dtype


# ---- shapes and broadcasting -------------------------------------------------------------


def broadcast_shapes(fl, shapes, ndim, node):
    """The broadcast of `shapes` (lists of i64 values, right-aligned) to rank ndim,
    with a MyiaShapeError at `node` if they are incompatible."""
    b = fl.b
    out = []
    for k in range(ndim):
        d = i64(1)
        for s in shapes:
            j = k - (ndim - len(s))
            if j < 0:
                continue
            e = s[j]
            if isinstance(d, ir.Constant) and d.constant == 1:
                d = e
                continue
            if isinstance(e, ir.Constant) and isinstance(d, ir.Constant):
                if e.constant not in (1, d.constant):
                    _static_shape_error(fl, node, shapes)
                continue
            bad = b.and_(b.icmp_signed("!=", e, d),
                         b.and_(b.icmp_signed("!=", e, i64(1)), b.icmp_signed("!=", d, i64(1))))
            fl.error_if(bad, node, MyiaShapeError,
                        "operands could not be broadcast together: dimension {a} and {b} "
                        "(at axis " + str(k - ndim) + ")", e, d)
            d = b.select(b.icmp_signed("==", d, i64(1)), e, d)
        out.append(d)
    return out


def _static_shape_error(fl, node, shapes):
    txt = " and ".join("(" + ", ".join(str(d.constant) if isinstance(d, ir.Constant) else "?"
                                         for d in s) + ")" for s in shapes)
    fl.fail(node, MyiaShapeError, f"operands could not be broadcast together with shapes {txt}")


def tree_shapes(fl, tree):
    """Shapes of every node of the tree (bottom-up, checked)."""
    if isinstance(tree, Leaf):
        if isinstance(tree.t, Array):
            return dims(fl, tree.value, tree.t)
        return []
    shapes = [tree_shapes(fl, c) for c in tree.children]
    nd = tree.t.ndim
    tree.shape = broadcast_shapes(fl, shapes, nd, tree.node)
    return tree.shape


def eff_strides(fl, leaf, shape):
    """Strides of a leaf array seen through the broadcast to `shape`."""
    b = fl.b
    n = len(shape)
    t = leaf.t
    m = t.ndim
    out = []
    for k in range(n):
        j = k - (n - m)
        if j < 0:
            out.append(i64(0))
            continue
        d = dim(fl, leaf.value, t, j)
        s = stride(fl, leaf.value, j)
        if isinstance(d, ir.Constant):
            out.append(i64(0) if d.constant == 1 else s)
        else:
            out.append(b.select(b.icmp_signed("==", d, i64(1)), i64(0), s))
    return out


def _splat_inner(leaf, n):
    t = leaf.t
    if not isinstance(t, Array):
        return True
    if n == 0:
        return True
    if t.ndim == 0:
        return True
    # the leaf's last axis is aligned with the output's last axis
    return t.shape[-1] == 1


def choose_lanes(types):
    """Vector width: 4 for 64-bit elements (AVX2 <4 x double>), 8 for float32-only
    arrays.  Scalars do not count: one is splatted to any width, and converted to
    the arrays' float32 where it meets them (`x32 ** 2.5`, `1 - h32 * h32`)."""
    dts = {t.dtype for t in types if isinstance(t, Array)}
    if dts and dts <= {"float32", "bool"} and "float32" in dts:
        return 8
    return 4


# ---- emitting expressions ----------------------------------------------------------------


#: the key of `LoopNest`'s offsets under which a gathered loop gives the strides
GATHER = "gather"


def emit_expr(fl, tree, lanes, offsets):
    """The value of the tree at one position (lanes == 1) or at `lanes` consecutive
    positions of the innermost axis.  offsets: {leaf: element offset value}, and
    under GATHER their strides, where the lanes are not adjacent in memory."""
    b = fl.b
    if isinstance(tree, Leaf):
        if not isinstance(tree.t, Array):
            return tree.vec[lanes]
        if tree.splat and lanes > 1:
            return tree.vec[lanes]
        strides_ = offsets.get(GATHER)
        if strides_ is not None and lanes > 1:
            return gather_elems(b, tree.base, offsets[id(tree)], strides_[id(tree)],
                                tree.t.dtype, lanes)
        return load_elem(b, tree.base, offsets[id(tree)], tree.t.dtype, lanes)
    vals = [emit_expr(fl, c, lanes, offsets) for c in tree.children]
    dts = [_dtype(c.t) for c in tree.children]
    out = tree.t.dtype
    name = tree.name
    if name == "gadd":
        name = "add"
    if name == "where":
        return ew_where(b, *vals, *dts, out)
    if len(vals) == 1:
        return ew_unary(b, name, vals[0], dts[0], out, False)
    if name == "pow" and out not in FLOATS:
        _check_int_exponent(fl, tree.node, vals[1], dts[1])
    return ew_binary(b, name, vals[0], vals[1], dts[0], dts[1], out, False)


def _check_int_exponent(fl, node, y, dy):
    """An integer array to a negative integer power is an error, as in NumPy (and the
    VM): checked element by element (an empty array is no error), in every lane."""
    b = fl.b
    neg = b.icmp_signed("<", cast(b, y, dy, "int64"), const_like("int64", 0, lanes_of(y)))
    if isinstance(neg.type, ir.VectorType):  # any lane: <n x i1> as an n-bit integer
        neg = b.icmp_unsigned("!=", b.bitcast(neg, ir.IntType(neg.type.count)),
                              ir.Constant(ir.IntType(neg.type.count), 0))
    fl.error_if(neg, node, MyiaValueError, NEGATIVE_POWER_ARRAY)


class LoopNest:
    """`for idx in ndindex(shape)`, innermost axis vectorized: calls
    `inner(offsets, j, lanes)` where offsets are the element offsets of each
    strided operand at (outer index, j)."""

    def __init__(self, fl, shape, operands, lanes, vec_ok, gathered=False):
        """operands: list of (key, base pointer value, effective strides list).
        gathered: where vec_ok fails, the innermost loop still runs `lanes` at a
        time, and `inner`'s offsets carry each operand's stride under GATHER (the
        expression loads its lanes one by one: worth it where it calls libmvec)."""
        self.fl = fl
        self.shape, self.operands = _collapse(list(shape), operands)
        self.lanes = lanes
        self.vec_ok = vec_ok
        self.gathered = gathered

    def run(self, inner, before_inner=None, after_inner=None):
        fl = self.fl
        n = len(self.shape)
        offs = {key: i64(0) for key, _, _ in self.operands}
        if n == 0:
            state = before_inner(offs) if before_inner else None
            state = inner(offs, i64(0), 1, state)
            if after_inner:
                after_inner(offs, state)
            return
        with outlined(fl, "loop"):  # a kernel (see cg.outlined)
            self._outer(0, offs, inner, before_inner, after_inner)

    def _outer(self, k, offs, inner, before_inner, after_inner):
        fl = self.fl
        b = fl.b
        n = len(self.shape)
        if k == n - 1:
            self._inner(offs, inner, before_inner, after_inner)
            return
        with for_range(b, 0, self.shape[k], name=f"i{k}") as i:
            sub = {}
            for key, _, st in self.operands:
                sub[key] = b.add(offs[key], b.mul(i, st[k]))
            self._outer(k + 1, sub, inner, before_inner, after_inner)

    def _inner(self, offs, inner, before_inner, after_inner):
        fl = self.fl
        b = fl.b
        n = len(self.shape)
        N = self.shape[n - 1]
        state = before_inner(offs) if before_inner else None
        lanes = self.lanes
        if lanes > 1:
            nvec = b.and_(N, i64(~(lanes - 1)))
            vec_end = b.select(self.vec_ok, nvec, i64(0))
            if _known_int(vec_end) != 0:
                with for_range(b, 0, vec_end, lanes, name="jv") as j:
                    o = {key: b.add(offs[key], b.mul(j, st[n - 1])) for key, _, st in self.operands}
                    state = inner(o, j, lanes, state)
            start = vec_end
            if self.gathered and _known_int(self.vec_ok) != 1:
                with for_range(b, vec_end, nvec, lanes, name="jg") as j:
                    o = {key: b.add(offs[key], b.mul(j, st[n - 1])) for key, _, st in self.operands}
                    o[GATHER] = {key: st[n - 1] for key, _, st in self.operands}
                    state = inner(o, j, lanes, state)
                start = nvec
        else:
            start = i64(0)
        if not _statically_empty(start, N):  # the remainder
            with for_range(b, start, N, name="j") as j:
                o = {key: b.add(offs[key], b.mul(j, st[n - 1])) for key, _, st in self.operands}
                state = inner(o, j, 1, state)
        if after_inner:
            after_inner(offs, state)


def _collapse(shape, operands):
    """Merge adjacent axes k, k+1 that every operand walks as one (stride[k] ==
    stride[k+1] * shape[k+1], all known): a contiguous 2-d expression is one loop."""
    k = len(shape) - 2
    while k >= 0:
        d = _known_int(shape[k + 1])
        ok = d is not None and _known_int(shape[k]) is not None
        for _, _, st in operands if ok else ():
            s0, s1 = _known_int(st[k]), _known_int(st[k + 1])
            if s0 is None or s1 is None or s0 != s1 * d:
                ok = False
                break
        if ok:
            shape = shape[:k] + [i64(_known_int(shape[k]) * d)] + shape[k + 2:]
            operands = [(key, base, list(st[:k]) + list(st[k + 1:])) for key, base, st in operands]
        k -= 1
    return shape, operands


def _statically_empty(start, stop):
    """Is range(start, stop) empty, as far as the constants say?"""
    a, c = _known_int(start), _known_int(stop)
    return a is not None and c is not None and a >= c


def _prepare_leaves(fl, leaves, shape, lanes):
    """Effective strides, bases and splats of the leaves; returns (operands, vec_ok)."""
    b = fl.b
    n = len(shape)
    operands = []
    vec_ok = ir.Constant(I1, 1)
    for leaf in leaves:
        if isinstance(leaf.t, Array):
            leaf.base = data_of(b, leaf.value)
            leaf.eff = eff_strides(fl, leaf, shape)
            leaf.splat = _splat_inner(leaf, n)
            operands.append((id(leaf), leaf.base, leaf.eff))
            if not leaf.splat and n > 0:
                vec_ok = b.and_(vec_ok, b.icmp_signed("==", leaf.eff[n - 1], i64(1)))
        else:
            leaf.splat = True
            leaf.vec = {1: leaf.value}
            if lanes > 1:
                leaf.vec[lanes] = splat(b, leaf.value, lanes)
    return operands, vec_ok


def _splat_before_inner(fl, leaves, lanes):
    """Load the splat array leaves once per inner loop."""
    def before(offs):
        b = fl.b
        for leaf in leaves:
            if isinstance(leaf.t, Array) and leaf.splat and lanes > 1:
                v = load_elem(b, leaf.base, offs[id(leaf)], leaf.t.dtype)
                leaf.vec = {lanes: splat(b, v, lanes)}
        return None
    return before


def emit_elementwise(fl, tree, out_t, node):
    """Materialize the expression `tree` as a new array of type out_t."""
    shape = tree_shapes(fl, tree)
    shape = [i64(out_t.shape[k]) if out_t.shape[k] is not None else shape[k]
             for k in range(out_t.ndim)]
    out, _ = new_array(fl, out_t.dtype, shape, node)
    write_elementwise(fl, tree, out, shape, out_t)
    return out


def write_elementwise(fl, tree, out, shape, out_t):
    """Write the expression `tree` (its shapes checked) into `out`, a C-contiguous
    array of `shape`."""
    b = fl.b
    leaves = _leaves(tree, [])
    lanes = choose_lanes([l.t for l in leaves] + [out_t])
    operands, vec_ok = _prepare_leaves(fl, leaves, shape, lanes)
    out_strides, _ = c_strides(b, shape)
    operands.append(("out", data_of(b, out), out_strides))
    out_data = data_of(b, out)

    def inner(offs, j, ln, state):
        v = emit_expr(fl, tree, ln, offs)
        store_elem(b, v, out_data, offs["out"], out_t.dtype)  # (out: a unit stride)
        return state

    LoopNest(fl, shape, operands, lanes, vec_ok, gathered=_calls_libm(tree)).run(
        inner, before_inner=_splat_before_inner(fl, leaves, lanes))


def materialize(fl, node):
    """The rule of an elementwise node with an array result (not fused away)."""
    plan = fl.gemm_updates.get(node)
    if plan is not None:
        # import here: gemm_update imports this module
        from .gemm_update import emit_gemm_update

        return emit_gemm_update(fl, node, plan)
    tree = build_tree(fl, node, fl.fused)
    out_t = fl.ltype(node)
    symbol = _numpy_loop(tree, out_t)
    if symbol is not None:
        return emit_numpy_loop(fl, tree, out_t, node, symbol)
    return emit_elementwise(fl, tree, out_t, node)


#: the primitives whose NumPy ufunc has another name
_UFUNC_NAMES = {"pow": "power"}


def _numpy_loop(tree, out_t):
    """NumPy's own loop for the expression, if it is one function of arrays (and
    scalars) of its result's dtype whose NumPy loop is the faster (see `npyloops`): a
    C math function or `pow`."""
    if not (isinstance(tree, Op) and (tree.name in LIBM_NAMES or tree.name in _UFUNC_NAMES)
            and tree.children):
        return None
    arrays = 0
    for leaf in tree.children:
        if not isinstance(leaf, Leaf):
            return None
        if isinstance(leaf.t, Array):
            if leaf.t.ndim != out_t.ndim or leaf.t.dtype != out_t.dtype:
                return None
            arrays += 1
        elif not isinstance(leaf.t, Scalar):
            return None
    if not arrays:
        return None
    return loop_symbol(_UFUNC_NAMES.get(tree.name, tree.name), out_t.dtype, len(tree.children))


def emit_numpy_loop(fl, tree, out_t, node, symbol):
    """f(x...) through NumPy's loop `symbol` (`npyloops`), one call over all the
    elements, when each array operand is C-contiguous and of the result's shape (a
    scalar operand is read with a step of 0); through our own loop nest otherwise."""
    b = fl.b
    leaves = tree.children
    shape = tree_shapes(fl, tree)  # (checked: an error names the node)
    out, size = new_array(fl, out_t.dtype, shape, node)
    m = b.module
    try:
        loop = m.get_global(symbol)
    except KeyError:
        loop = ir.Function(m, ir.FunctionType(ir.VoidType(), [PTR, PTR, PTR, PTR]), symbol)
        loop.attributes.add("nounwind")
    whole = ir.Constant(I1, 1)
    for leaf in leaves:
        if isinstance(leaf.t, Array):
            whole = b.and_(whole, is_c_contiguous(fl, leaf.value, leaf.t))
            for d, e in zip(dims(fl, leaf.value, leaf.t), shape):  # (no broadcast)
                whole = b.and_(whole, b.icmp_signed("==", d, e))
    with b.if_else(whole) as (one_call, nest):
        with one_call:
            # loop(char **args, npy_intp *dimensions, npy_intp *steps, void *data)
            n = len(leaves) + 1
            args = fl.alloca(ir.ArrayType(PTR, n))
            counts = fl.alloca(I64)
            steps = fl.alloca(ir.ArrayType(I64, n))
            itemsize = i64(ITEMSIZE[out_t.dtype])
            operands = []
            for leaf in leaves:
                if isinstance(leaf.t, Array):
                    operands.append((data_of(b, leaf.value), itemsize))
                else:  # (converted to the result's dtype, as ew_binary does)
                    v = cast(b, leaf.value, leaf.t.dtype, out_t.dtype)
                    slot = fl.alloca(v.type)
                    b.store(v, slot)
                    operands.append((b.bitcast(slot, PTR), i64(0)))
            operands.append((data_of(b, out), itemsize))
            for k, (a, step) in enumerate(operands):
                b.store(a, _at(b, args, i64(8 * k)))
                b.store(step, _at(b, steps, i64(8 * k)))
            b.store(size, counts)
            b.call(loop, [args, counts, steps, NULL])
        with nest:
            write_elementwise(fl, tree, out, shape, out_t)
    return out


def ew_values(fl, name, values, types, out_t, node):
    """An elementwise operation on values (not nodes): e.g. adding array
    sensitivities inside tuples."""
    leaves = [Leaf(v, t) for v, t in zip(values, types)]
    tree = Op(name, leaves, out_t, node)
    return emit_elementwise(fl, tree, out_t, node)


def _calls_libm(tree):
    """Whether the expression calls a C math function or pow: libmvec has them 4
    lanes wide (8 for float32), and a scalar loop calls them once per element."""
    return isinstance(tree, Op) and (tree.name in LIBM_NAMES or tree.name == "pow" or
                                     any(_calls_libm(c) for c in tree.children))


LIBM_NAMES = {p.name for p in all_primitives().values() if p.libm}
