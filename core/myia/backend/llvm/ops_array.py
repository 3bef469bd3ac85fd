"""Arrays: fused elementwise loops, reductions, views, BLAS products, creation.

Representation: {ptr data, [n x i64] shape, [n x i64] strides}, strides in elements.
Arrays are immutable values in the subset, so views are always safe: `transpose`,
`reshape` of a C-contiguous array, `broadcast_to` (zero strides), basic indexing and
slicing make no copy.  Arrays the compiled code creates are C-contiguous and live in
the call's arena.

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

Reductions.  `reduce_sum`/`reduce_max` over static axes, and `sum_to` (undoing
broadcasting, with the reduced axes found at run time) are one "accumulate" loop
nest over the input expression: the output index is the input index through strides
that are 0 on reduced axes.  When the innermost axis is reduced, partial sums are kept
in vector registers: the order of a float sum then differs from NumPy's pairwise
order (both are accurate; results agree to ~1e-15 relative).

Products.  `dot` calls BLAS (`dgemm`/`dgemv`/`ddot`, `s*` for float32) on operands
with a unit stride on one axis (a transpose is a flag, not a copy); other operands
are copied first.  int64 and bool products use a plain loop.  A product that only
updates another matrix (`W - lr * (A @ B)`) is one gemm into a copy of it
(`gemm_update`).
"""

import llvmlite.ir as ir
import numpy as np

from ...errors import MyiaOverflowError, MyiaShapeError, MyiaValueError
from ...ir import Apply, Constant
from ...prim import Primitive, all_primitives
from ...prim import ops as P
from ...prim.arith import NEGATIVE_POWER_ARRAY
from ...prim.shape import MAX_BYTES, NEGATIVE_DIMS, TOO_BIG
from .cg import NULL, _known_int, const_ptr, for_range, i32, i64, outlined, runtime_fn
from .lower import backend_error, coerce, rule
from .ltypes import EMPTY, ELEM_IR, ITEMSIZE, Array, Scalar, Static, Tuple, array_ir, to_ir
from .ops_scalar import (FLOATS, cast, const_like, ew_binary, ew_unary, ew_where, lanes_of,
                         splat)
from .runtime import F32, F64, I1, I8, I32, I64, PTR, declare

# The elementwise operations, from the primitives' `elementwise` trait (its arity);
# `gadd` adds sensitivities of any structure, so it has no trait, but on arrays it is `add`.
EW_UNARY = {p.name for p in all_primitives().values() if p.elementwise == 1}
EW_BINARY = {p.name for p in all_primitives().values() if p.elementwise == 2} | {"gadd"}
EW_ALL = EW_UNARY | EW_BINARY | {p.name for p in all_primitives().values() if p.elementwise == 3}
REDUCERS = {"reduce_sum", "reduce_max"}


# ---- array values ---------------------------------------------------------------------


def data_of(b, v):
    return b.extract_value(v, 0)


def dim(fl, v, t, k):
    """Dimension k of array value v: a constant where the type knows it."""
    if t.shape[k] is not None:
        return i64(t.shape[k])
    return fl.b.extract_value(v, [1, k])


def dims(fl, v, t):
    return [dim(fl, v, t, k) for k in range(t.ndim)]


def stride(fl, v, k):
    return fl.b.extract_value(v, [2, k])


def strides(fl, v, t):
    return [stride(fl, v, k) for k in range(t.ndim)]


def make_array(b, ndim, data, shape, strides_):
    v = ir.Constant(array_ir(ndim), ir.Undefined)
    v = b.insert_value(v, data, 0)
    for k in range(ndim):
        v = b.insert_value(v, shape[k], [1, k])
        v = b.insert_value(v, strides_[k], [2, k])
    return v


def c_strides(b, shape):
    out = [None] * len(shape)
    acc = i64(1)
    for k in range(len(shape) - 1, -1, -1):
        out[k] = acc
        acc = b.mul(acc, shape[k])
    return out, acc


def shape_message(template, shape):
    """(message, run-time values): `template` ({shape}) naming `shape` as the VM does
    (`prim.shape.fmt_dims`): known dims are written in, the first three others are the
    message's {a}, {b}, {c}, any further ones ?."""
    parts, values = [], []
    for d in shape:
        k = _known_int(d)
        if k is not None:
            parts.append(str(k))
        elif len(values) < 3:
            parts.append("{" + "abc"[len(values)] + "}")
            values.append(d)
        else:
            parts.append("?")
    dims = "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    return template.format(shape=dims), values


def checked_size(fl, shape, itemsize, node):
    """(elements, bytes) of a C-contiguous array of `shape`; past int64 (a product
    overflows), a MyiaOverflowError with the VM's message, before anything is
    allocated."""
    b = fl.b
    known = [_known_int(d) for d in shape]
    if None not in known:
        n = 1
        for d in known:
            n *= d
        if n * itemsize <= MAX_BYTES:
            return i64(n), i64(n * itemsize)
    size, bad = i64(1), ir.Constant(I1, 0)
    for d in list(shape) + [i64(itemsize)]:
        r = b.smul_with_overflow(size, d)
        size, bad = b.extract_value(r, 0), b.or_(bad, b.extract_value(r, 1))
    message, values = shape_message(TOO_BIG, shape)
    fl.error_if(bad, node, MyiaOverflowError, message, *values)
    return b.sdiv(size, i64(itemsize)), size


def check_dims(fl, shape, node):
    """A negative dimension is an error, with the VM's message."""
    b = fl.b
    bad = ir.Constant(I1, 0)
    for d in shape:
        bad = b.or_(bad, b.icmp_signed("<", d, i64(0)))
    message, values = shape_message(NEGATIVE_DIMS, shape)
    fl.error_if(bad, node, MyiaValueError, message, *values)


def new_array(fl, dtype, shape, node, zero=False):
    """A fresh C-contiguous array in the arena (its size checked first)."""
    b = fl.b
    _, nbytes = checked_size(fl, shape, ITEMSIZE[dtype], node)
    st, size = c_strides(b, shape)
    data = fl.alloc(nbytes)
    if zero:
        b.call(declare(b.module, "memset"), [data, i32(0), nbytes])
    return make_array(b, len(shape), data, shape, st), size


def elem_ptr(b, data, offset, dtype):
    g = b.gep(data, [offset], source_etype=ELEM_IR[dtype])
    g.type = PTR
    return g


def load_elem(b, data, offset, dtype, lanes=1):
    p = elem_ptr(b, data, offset, dtype)
    et = ELEM_IR[dtype]
    typ = et if lanes == 1 else ir.VectorType(et, lanes)
    v = b.load(p, typ=typ, align=ITEMSIZE[dtype])
    if dtype == "bool":
        return b.icmp_unsigned("!=", v, ir.Constant(typ, 0) if lanes == 1 else
                               ir.Constant(typ, [0] * lanes))
    return v


def gather_elems(b, data, offset, step, dtype, lanes):
    """A vector of the `lanes` elements at offset, offset + step, ..."""
    v = None
    for k in range(lanes):
        x = load_elem(b, data, b.add(offset, b.mul(step, i64(k))), dtype)
        if v is None:
            v = ir.Constant(ir.VectorType(x.type, lanes), ir.Undefined)
        v = b.insert_element(v, x, i32(k))
    return v


def store_elem(b, value, data, offset, dtype):
    p = elem_ptr(b, data, offset, dtype)
    if dtype == "bool":
        lanes = value.type.count if isinstance(value.type, ir.VectorType) else 1
        value = b.zext(value, I8 if lanes == 1 else ir.VectorType(I8, lanes))
    b.store(value, p, align=ITEMSIZE[dtype])


def size_of(b, shape):
    acc = i64(1)
    for d in shape:
        acc = b.mul(acc, d)
    return acc


def array_constant(fl, value, t):
    """A constant array of the program: its data is used in place (kept alive)."""
    arr = np.ascontiguousarray(value)
    L = fl.L
    name = L.engine.data_symbol(arr)
    from .runtime import declare_global

    g = declare_global(fl.module, name, I8)
    shape = [i64(d) for d in arr.shape]
    st = [i64(s // arr.itemsize) for s in arr.strides]
    return make_array(fl.b, arr.ndim, g, shape, st)


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


# ---- shapes and broadcasting ------------------------------------------------------------


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


# ---- emitting expressions ---------------------------------------------------------------


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
    from .npyloops import loop_symbol

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


# ---- reductions -------------------------------------------------------------------------


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


def _calls_libm(tree):
    """Whether the expression calls a C math function or pow: libmvec has them 4
    lanes wide (8 for float32), and a scalar loop calls them once per element."""
    return isinstance(tree, Op) and (tree.name in LIBM_NAMES or tree.name == "pow" or
                                     any(_calls_libm(c) for c in tree.children))


LIBM_NAMES = {p.name for p in all_primitives().values() if p.libm}


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


def _shape_value(fl, node, v, t, index=None):
    """A shape given as a static tuple (or int) or a run-time tuple of ints: a list of
    i64 values (constants where known).  `index`: which input of `node` it is."""
    b = fl.b
    if index is not None and fl.is_static(node.inputs[index]):
        value = fl.static(node.inputs[index])
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return [i64(int(value))]
        if isinstance(value, tuple):
            return [i64(int(d)) for d in value]
    if isinstance(t, Static):
        return [i64(int(d)) for d in t.value]
    if isinstance(t, Tuple):
        return [cast(b, b.extract_value(v, k), e.dtype, "int64") for k, e in enumerate(t.elems)]
    raise backend_error(f"a shape of type {t}", node)


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
        from .ops_struct import zeros

        return zeros(fl, out, args[1], x_t, node)
    if isinstance(x_t, Array):
        if isinstance(d_t, Scalar):
            from .ops_struct import zeros

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


# ---- creation --------------------------------------------------------------------------


def fill(fl, arr, size, value, dtype):
    b = fl.b
    data = data_of(b, arr)
    if isinstance(value, ir.Constant) and value.constant in (0, 0.0, False) and \
            not (dtype in FLOATS and str(value.constant).startswith("-")):
        b.call(declare(b.module, "memset"), [data, i32(0), b.mul(size, i64(ITEMSIZE[dtype]))])
        return
    known = _known_int(size)
    if known is not None and known <= 8:  # a few stores
        for k in range(known):
            store_elem(b, value, data, i64(k), dtype)
        return
    lanes = 8 if dtype == "float32" else 4
    with outlined(fl, "fill"):
        vec = splat(b, value, lanes)
        nvec = b.and_(size, i64(~(lanes - 1)))
        with for_range(b, 0, nvec, lanes, name="fillv") as i:
            store_elem(b, vec, data, i, dtype)
        with for_range(b, nvec, size, name="fill") as i:
            store_elem(b, value, data, i, dtype)


def full_like(fl, like, like_t, out_t, value, node):
    """An array of out_t's dtype, with the shape of value `like` (an array), filled."""
    if isinstance(like_t, Array):
        shape = dims(fl, like, like_t)
    else:
        shape = [i64(d) for d in out_t.shape]
    arr, size = new_array(fl, out_t.dtype, shape, node)
    fill(fl, arr, size, const_like(out_t.dtype, value, 1), out_t.dtype)
    return arr


@rule(P.full)
def lower_full(fl, node, args, types, out):
    b = fl.b
    shape = _shape_value(fl, node, args[0], types[0], 1)
    check_dims(fl, shape, node)
    vt = types[1]
    if isinstance(vt, Scalar):
        value = cast(b, args[1], vt.dtype, out.dtype)
    else:
        value = const_like(out.dtype, fl.static(node.inputs[2]), 1)
    arr, size = new_array(fl, out.dtype, shape, node)
    fill(fl, arr, size, value, out.dtype)
    return arr


@rule(P.broadcast_to)
def lower_broadcast_to(fl, node, args, types, out):
    """A view with zero strides (arrays are immutable)."""
    b = fl.b
    x_t = types[0]
    target = _shape_value(fl, node, args[1], types[1], 2)
    if isinstance(x_t, Scalar):
        arr, size = new_array(fl, out.dtype, target, node)
        fill(fl, arr, size, cast(b, args[0], x_t.dtype, out.dtype), out.dtype)
        return arr
    n = len(target)
    leaf = Leaf(args[0], x_t)
    shape = broadcast_shapes(fl, [dims(fl, args[0], x_t), target], n, node)
    # the target must be the result (x may not grow it)
    for k in range(n):
        fl.error_if(b.icmp_signed("!=", shape[k], target[k]), node, MyiaShapeError,
                    "cannot broadcast an axis of length {a} to length {b}", shape[k], target[k])
    checked_size(fl, target, ITEMSIZE[out.dtype], node)  # a view, but NumPy refuses it too
    eff = eff_strides(fl, leaf, target)
    v = make_array(b, n, data_of(b, args[0]), target, eff)
    if x_t.dtype != out.dtype:
        return ew_values(fl, "astype", [v], [Array(x_t.dtype, out.shape)], out, node)
    return v


# ---- views -----------------------------------------------------------------------------


@rule(P.transpose)
def lower_transpose(fl, node, args, types, out):
    b = fl.b
    t = types[0]
    axes = fl.static(node.inputs[2])
    n = t.ndim
    if axes is None:
        axes = tuple(range(n))[::-1]
    axes = tuple(a % n for a in axes)
    if sorted(axes) != list(range(n)):
        raise backend_error(f"transpose with axes {axes} for rank {n}", node)
    d = dims(fl, args[0], t)
    s = strides(fl, args[0], t)
    return make_array(b, n, data_of(b, args[0]), [d[a] for a in axes], [s[a] for a in axes])


@runtime_fn("myia_copy", ir.VoidType(), [PTR, PTR, I64, PTR, PTR, I64])
def copy_fn(f):
    """void myia_copy(ptr dst, ptr src, i64 ndim, i64 *dims, i64 *strides, i64 itemsize):
    a C-contiguous copy of a strided array (one loop over the elements, with an
    odometer for the index; rare paths use it: a BLAS operand or a reshape input
    without a unit stride).  A runtime helper (see cg.runtime_fn)."""
    module = f.module
    dst, src, nd, dimsp, stridesp, itemsize = f.args
    b = ir.IRBuilder(f.append_basic_block())
    idx = b.alloca(ir.ArrayType(I64, 32))
    idx.type = PTR
    off_p = b.alloca(I64)
    off_p.type = PTR
    b.call(declare(module, "memset"), [idx, i32(0), i64(8 * 32)])
    b.store(i64(0), off_p)
    size = i64(1)
    total_p = b.alloca(I64)
    total_p.type = PTR
    b.store(i64(1), total_p)
    with for_range(b, 0, nd, name="d") as k:
        d = b.load(_at(b, dimsp, b.mul(k, i64(8))), typ=I64)
        b.store(b.mul(b.load(total_p, typ=I64), d), total_p)
    total = b.load(total_p, typ=I64)
    with for_range(b, 0, total, name="e") as e:
        off = b.load(off_p, typ=I64)
        sp = _at(b, src, b.mul(off, itemsize))
        dp = _at(b, dst, b.mul(e, itemsize))
        b.call(declare(module, "memcpy"), [dp, sp, itemsize])
        # advance the odometer (last axis fastest)
        last = b.sub(nd, i64(1))
        pre = b.block
        loop = b.append_basic_block("carry")
        body = b.append_basic_block("carry.body")
        done = b.append_basic_block("carry.done")
        b.branch(loop)
        b.position_at_end(loop)
        k = b.phi(I64)
        k.add_incoming(last, pre)
        b.cbranch(b.icmp_signed(">=", k, i64(0)), body, done)
        b.position_at_end(body)
        ip = _at(b, idx, b.mul(k, i64(8)))
        st = b.load(_at(b, stridesp, b.mul(k, i64(8))), typ=I64)
        dk = b.load(_at(b, dimsp, b.mul(k, i64(8))), typ=I64)
        i_new = b.add(b.load(ip, typ=I64), i64(1))
        cur = b.load(off_p, typ=I64)
        more = b.icmp_signed("<", i_new, dk)
        with b.if_else(more) as (then, otherwise):
            with then:
                b.store(i_new, ip)
                b.store(b.add(cur, st), off_p)
            with otherwise:
                b.store(i64(0), ip)
                b.store(b.sub(cur, b.mul(b.sub(dk, i64(1)), st)), off_p)
        k.add_incoming(b.select(more, i64(-1), b.sub(k, i64(1))), b.block)
        b.branch(loop)
        b.position_at_end(done)
    b.ret_void()
    _ = size


def _at(b, ptr, offset):
    g = b.gep(ptr, [offset], source_etype=I8)
    g.type = PTR
    return g


def copy_contiguous(fl, v, t, node=None):
    """A C-contiguous copy of array value v (through the module's myia_copy)."""
    b = fl.b
    shape = dims(fl, v, t)
    out, _ = new_array(fl, t.dtype, shape, node)
    nd = t.ndim
    arr_t = ir.ArrayType(I64, max(nd, 1))
    dp = fl.alloca(arr_t)
    sp = fl.alloca(arr_t)
    for k in range(nd):
        b.store(shape[k], _at(b, dp, i64(8 * k)))
        b.store(stride(fl, v, k), _at(b, sp, i64(8 * k)))
    b.call(copy_fn(fl.module), [data_of(b, out), data_of(b, v), i64(nd), dp, sp,
                                i64(ITEMSIZE[t.dtype])])
    return out


def is_c_contiguous(fl, v, t):
    b = fl.b
    d = dims(fl, v, t)
    s = strides(fl, v, t)
    ok = ir.Constant(I1, 1)
    expect = i64(1)
    for k in range(t.ndim - 1, -1, -1):
        good = b.or_(b.icmp_signed("==", s[k], expect), b.icmp_signed("<=", d[k], i64(1)))
        ok = b.and_(ok, good)
        expect = b.mul(expect, d[k])
    return ok


def contiguous(fl, v, t, node):
    """v, or a C-contiguous copy of it."""
    return _copied_unless(fl, is_c_contiguous(fl, v, t), v, t, "contig")[0]


@rule(P.reshape)
def lower_reshape(fl, node, args, types, out):
    b = fl.b
    t = types[0]
    if isinstance(t, Scalar):
        tmp = fl.alloc(i64(ITEMSIZE[t.dtype]))
        store_elem(b, args[0], tmp, i64(0), t.dtype)
        v = make_array(b, 0, tmp, [], [])
        t = Array(t.dtype, ())
    else:
        v = args[0]
    if isinstance(out, Scalar):
        return _single_element(fl, v, t, node)
    target = _shape_value(fl, node, args[1], types[1], 2)
    size = size_of(b, dims(fl, v, t))
    # one -1 entry takes what is left
    known = i64(1)
    unknown = None
    for k, d in enumerate(target):
        if isinstance(d, ir.Constant) and d.constant == -1:
            unknown = k
        else:
            known = b.mul(known, d)
    if unknown is not None:
        safe = b.select(b.icmp_signed("==", known, i64(0)), i64(1), known)
        target = list(target)
        target[unknown] = b.sdiv(size, safe)
    check_dims(fl, target, node)
    total, _ = checked_size(fl, target, ITEMSIZE[t.dtype], node)
    fl.error_if(b.icmp_signed("!=", total, size), node, MyiaShapeError,
                "cannot reshape an array of size {a} into a shape of size {b}", size, total)
    v = contiguous(fl, v, t, node)
    st, _ = c_strides(b, target)
    return make_array(b, len(target), data_of(b, v), target, st)


def _single_element(fl, v, t, node):
    b = fl.b
    size = size_of(b, dims(fl, v, t))
    fl.error_if(b.icmp_signed("!=", size, i64(1)), node, MyiaShapeError,
                "expected an array of one element, got {a} elements", size)
    return load_elem(b, data_of(b, v), i64(0), t.dtype)


@rule(P.array_to_scalar)
def lower_array_to_scalar(fl, node, args, types, out):
    t = types[0]
    if isinstance(t, Scalar):
        return cast(fl.b, args[0], t.dtype, out.dtype)
    return cast(fl.b, _single_element(fl, args[0], t, node), t.dtype, out.dtype)


def array_truth(fl, v, t, node):
    from .ops_scalar import cast as _cast

    b = fl.b
    size = size_of(b, dims(fl, v, t))
    fl.error_if(b.icmp_signed("!=", size, i64(1)), node, MyiaValueError,
                "the truth value of an array of {a} elements is ambiguous", size)
    return _cast(b, load_elem(b, data_of(b, v), i64(0), t.dtype), t.dtype, "bool")


@rule(P.shape)
def lower_shape(fl, node, args, types, out):
    t = types[0]
    b = fl.b
    if isinstance(out, Static):
        return ir.Constant(EMPTY, [])
    if isinstance(t, Scalar):
        return ir.Constant(to_ir(out), [])
    v = ir.Constant(to_ir(out), ir.Undefined)
    for k in range(t.ndim):
        v = b.insert_value(v, dim(fl, args[0], t, k), k)
    return v


@rule(P.ndim)
def lower_ndim(fl, node, args, types, out):
    t = types[0]
    return i64(t.ndim if isinstance(t, Array) else 0)


def runtime_shape_op(fl, node, args, types, out):
    """reduced_size / reduced_shape of a shape known only at run time."""
    b = fl.b
    name = node.inputs[0].value.name
    if name in ("reduced_size", "reduced_shape"):
        st = types[0]
        shape = _shape_value(fl, node, args[0], st, 1)
        n = len(shape)
        axis = fl.static(node.inputs[2])
        axes = range(n) if axis is None else [a % n for a in (axis if isinstance(axis, tuple)
                                                              else (axis,))]
        if name == "reduced_size":
            return size_of(b, [shape[a] for a in axes])
        v = ir.Constant(to_ir(out), ir.Undefined)
        for k in range(n):
            v = b.insert_value(v, i64(1) if k in axes else shape[k], k)
        return v
    raise backend_error(f"{name} of a value known only at run time", node)


# ---- indexing ------------------------------------------------------------------------------


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
        from .ops_struct import run_time_index, zeros

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


# ---- matrix products -----------------------------------------------------------------------


def _blas_operand(fl, v, t, node):
    """(data, trans, ld) of a 2-d operand with a unit stride on one axis (copying it if
    it has none), in BLAS's column-major terms for the *transposed* matrix: a
    row-major (r, c) matrix is a column-major (c, r) one with ld = stride 0."""
    b = fl.b
    d0, d1 = dims(fl, v, t)
    s0, s1 = strides(fl, v, t)
    row = b.and_(b.or_(b.icmp_signed("==", s1, i64(1)), b.icmp_signed("<=", d1, i64(1))),
                 b.icmp_signed(">=", s0, _at_least_1(b, d1)))
    col = b.and_(b.or_(b.icmp_signed("==", s0, i64(1)), b.icmp_signed("<=", d0, i64(1))),
                 b.icmp_signed(">=", s1, _at_least_1(b, d0)))
    val, copied = _copied_unless(fl, b.or_(row, col), v, t, "blas.operand")
    is_row = row if copied is None else b.or_(row, copied)  # a copy is row-major
    s0, s1 = strides(fl, val, t)
    # ld must be >= max(1, rows of the column-major matrix)
    ld_row = b.select(b.icmp_signed("<", s0, _at_least_1(b, d1)), _at_least_1(b, d1), s0)
    ld_col = b.select(b.icmp_signed("<", s1, _at_least_1(b, d0)), _at_least_1(b, d0), s1)
    ld = b.select(is_row, ld_row, ld_col)
    return data_of(b, val), is_row, ld


def _vec_operand(fl, v, t, node):
    """(data, inc) of a 1-d operand with a positive stride (else copied)."""
    b = fl.b
    s = stride(fl, v, 0)
    d = dim(fl, v, t, 0)
    ok = b.or_(b.icmp_signed(">", s, i64(0)), b.icmp_signed("<=", d, i64(1)))
    val, _ = _copied_unless(fl, ok, v, t, "blas.vec")
    return data_of(b, val), _at_least_1(b, stride(fl, val, 0))


def _at_least_1(b, x):
    return b.select(b.icmp_signed("<", x, i64(1)), i64(1), x)


def _copied_unless(fl, ok, v, t, name):
    """(`v` where `ok` holds at run time, else a C-contiguous copy of it; an i1 that
    says whether it was copied).  When `ok` is known true: (v, None), no code."""
    if _known_int(ok) == 1:
        return v, None
    b = fl.b
    pre = b.block
    copy_bb = b.function.append_basic_block(f"{name}.copy")
    merge = b.function.append_basic_block(name)
    b.cbranch(ok, merge, copy_bb)
    b.position_at_end(copy_bb)
    c = copy_contiguous(fl, v, t)
    end = b.block
    b.branch(merge)
    b.position_at_end(merge)
    val = b.phi(to_ir(t))
    val.add_incoming(v, pre)
    val.add_incoming(c, end)
    copied = b.phi(I1)
    copied.add_incoming(ir.Constant(I1, 0), pre)
    copied.add_incoming(ir.Constant(I1, 1), end)
    return val, copied


def _int_ptr(fl, value):
    """A pointer to an i32 holding value (BLAS takes everything by pointer)."""
    b = fl.b
    k = _known_int(value)
    if k is not None and -(1 << 31) <= k < (1 << 31):
        return const_ptr(b.module, I32, k)
    p = fl.alloca(I32)
    b.store(b.trunc(value, I32) if value.type == I64 else value, p)
    return p


def _char_ptr(fl, is_trans):
    b = fl.b
    k = _known_int(is_trans)
    if k is not None:
        return const_ptr(b.module, I8, ord("T") if k & 1 else ord("N"))
    p = fl.alloca(I8)
    b.store(b.select(is_trans, ir.Constant(I8, ord("T")), ir.Constant(I8, ord("N"))), p)
    return p


def _float_ptr(fl, dtype, value):
    return const_ptr(fl.b.module, F64 if dtype == "float64" else F32, value)


def call_gemm(fl, dt, a, c, m, n, k, alpha, beta, out):
    """out (m x n, C-contiguous) = alpha * A @ B + beta * out: A and B given as
    `_blas_operand`s, alpha and beta as pointers to numbers of the dtype."""
    b = fl.b
    (pa, a_row, lda), (pb, b_row, ldb) = a, c
    # C^T (n x m, col-major) = B^T (n x k) A^T (k x m)
    b.call(declare(b.module, ("d" if dt == "float64" else "s") + "gemm"), [
        _char_ptr(fl, b.not_(b_row)), _char_ptr(fl, b.not_(a_row)),
        _int_ptr(fl, n), _int_ptr(fl, m), _int_ptr(fl, k), alpha,
        pb, _int_ptr(fl, ldb), pa, _int_ptr(fl, lda), beta, out, _int_ptr(fl, n)])


@rule(P.dot)
def lower_dot(fl, node, args, types, out):
    b = fl.b
    ta, tb = types
    if not (isinstance(ta, Array) and isinstance(tb, Array)) or ta.ndim not in (1, 2) \
            or tb.ndim not in (1, 2):
        raise backend_error(f"dot of {ta} and {tb} (1-d and 2-d arrays only)", node)
    dt = out.dtype
    a, c = args
    ka = dim(fl, a, ta, ta.ndim - 1)
    kb = dim(fl, c, tb, 0)
    fl.error_if(b.icmp_signed("!=", ka, kb), node, MyiaShapeError,
                "shapes are not aligned for a matrix product: {a} (dim " + str(ta.ndim - 1)
                + ") != {b} (dim 0)", ka, kb)
    if ta.dtype != dt or tb.dtype != dt:
        if ta.dtype != dt:
            a = ew_values(fl, "astype", [a], [ta], Array(dt, ta.shape), node)
            ta = Array(dt, ta.shape)
        if tb.dtype != dt:
            c = ew_values(fl, "astype", [c], [tb], Array(dt, tb.shape), node)
            tb = Array(dt, tb.shape)
    if dt not in FLOATS:
        return _naive_dot(fl, a, c, ta, tb, out, node)
    p = "d" if dt == "float64" else "s"
    one = _float_ptr(fl, dt, 1.0)
    zero = _float_ptr(fl, dt, 0.0)
    if ta.ndim == 2 and tb.ndim == 2:
        m = dim(fl, a, ta, 0)
        k = ka
        n = dim(fl, c, tb, 1)
        res, _ = new_array(fl, dt, [m, n], node)
        pa, a_row, lda = _blas_operand(fl, a, ta, node)
        pb, b_row, ldb = _blas_operand(fl, c, tb, node)
        nonempty = b.and_(b.icmp_signed(">", m, i64(0)), b.icmp_signed(">", n, i64(0)))
        k_pos = b.icmp_signed(">", k, i64(0))

        def gemm():
            call_gemm(fl, dt, (pa, a_row, lda), (pb, b_row, ldb), m, n, k, one, zero,
                      data_of(b, res))

        if _known_int(nonempty) == 1 and _known_int(k_pos) == 1:  # shapes known
            gemm()
            return res
        with b.if_then(nonempty):
            with b.if_else(k_pos) as (then, otherwise):
                with then:
                    gemm()
                with otherwise:
                    fill(fl, res, b.mul(m, n), const_like(dt, 0, 1), dt)
        return res
    if ta.ndim == 2 and tb.ndim == 1:
        m = dim(fl, a, ta, 0)
        k = ka
        res, _ = new_array(fl, dt, [m], node)
        pa, a_row, lda = _blas_operand(fl, a, ta, node)
        px, incx = _vec_operand(fl, c, tb, node)
        _gemv(fl, p, a_row, k, m, lda, pa, px, incx, res, one, zero, m)
        return res
    if ta.ndim == 1 and tb.ndim == 2:
        n = dim(fl, c, tb, 1)
        k = ka
        res, _ = new_array(fl, dt, [n], node)
        pb, b_row, ldb = _blas_operand(fl, c, tb, node)
        px, incx = _vec_operand(fl, a, ta, node)
        # y = B^T x: B row-major is a col-major (n x k) matrix: no transpose
        _gemv(fl, p, b.not_(b_row), n, k, ldb, pb, px, incx, res, one, zero, n, swap=True)
        return res
    # 1-d . 1-d
    px, incx = _vec_operand(fl, a, ta, node)
    py, incy = _vec_operand(fl, c, tb, node)
    r = b.call(declare(b.module, p + "dot"), [_int_ptr(fl, ka), px, _int_ptr(fl, incx),
                                              py, _int_ptr(fl, incy)])
    return r


def _gemv(fl, p, trans, rows_t, cols_t, ld, pa, px, incx, res, one, zero, out_len, swap=False):
    """y = op(A) x with A column-major: when `trans` is true (the operand is stored
    row-major: a col-major (cols, rows) matrix) op is 'T' over (k, m) = (rows_t,
    cols_t); else 'N' over (cols_t, rows_t)."""
    b = fl.b
    with b.if_then(b.icmp_signed(">", out_len, i64(0))):
        with b.if_else(b.icmp_signed(">", rows_t if not swap else cols_t, i64(0))) as (then, other):
            with then:
                if not swap:
                    # A is (m, k): trans (row-major) -> dgemv('T', k, m); else dgemv('N', m, k)
                    m_ = b.select(trans, rows_t, cols_t)
                    n_ = b.select(trans, cols_t, rows_t)
                else:
                    # y = B^T x, B is (k, n): row-major B is col-major (n, k): 'N' over (n, k);
                    # col-major B: 'T' over (k, n)
                    m_ = b.select(trans, cols_t, rows_t)
                    n_ = b.select(trans, rows_t, cols_t)
                b.call(declare(b.module, p + "gemv"), [
                    _char_ptr(fl, trans), _int_ptr(fl, m_), _int_ptr(fl, n_), one, pa,
                    _int_ptr(fl, ld), px, _int_ptr(fl, incx), zero, data_of(b, res),
                    _int_ptr(fl, i64(1))])
            with other:
                fill(fl, res, out_len, const_like("float64" if p == "d" else "float32", 0, 1),
                     "float64" if p == "d" else "float32")


def _naive_dot(fl, a, c, ta, tb, out, node):
    """Integer and bool products: plain loops (bool: or of ands, as NumPy)."""
    b = fl.b
    dt = out.dtype
    A = a if ta.ndim == 2 else make_array(b, 2, data_of(b, a), [i64(1), dim(fl, a, ta, 0)],
                                          [i64(0), stride(fl, a, 0)])
    B = c if tb.ndim == 2 else make_array(b, 2, data_of(b, c), [dim(fl, c, tb, 0), i64(1)],
                                          [stride(fl, c, 0), i64(0)])
    tA = Array(dt, [None, None])
    m, k = dims(fl, A, tA)
    _, n = dims(fl, B, tA)
    sa0, sa1 = strides(fl, A, tA)
    sb0, sb1 = strides(fl, B, tA)
    res, _ = new_array(fl, dt, [m, n], node)
    with outlined(fl, "matmul"), for_range(b, 0, m, name="mi") as i:
        with for_range(b, 0, n, name="mj") as j:
            acc_t = I1 if dt == "bool" else ELEM_IR[dt]  # (load_elem gives an i1 for a bool)
            acc_p = fl.alloca(acc_t)
            b.store(const_like(dt, 0, 1), acc_p)
            with for_range(b, 0, k, name="mk") as q:
                x = load_elem(b, data_of(b, A), b.add(b.mul(i, sa0), b.mul(q, sa1)), dt)
                y = load_elem(b, data_of(b, B), b.add(b.mul(q, sb0), b.mul(j, sb1)), dt)
                acc = b.load(acc_p, typ=acc_t)
                b.store(b.or_(acc, b.and_(x, y)) if dt == "bool" else b.add(acc, b.mul(x, y)),
                        acc_p)
            store_elem(b, b.load(acc_p, typ=acc_t), data_of(b, res), b.add(b.mul(i, n), j), dt)
    if isinstance(out, Scalar):
        return load_elem(b, data_of(b, res), i64(0), dt)
    if out.ndim == 1:
        return make_array(b, 1, data_of(b, res), [m if ta.ndim == 2 else n], [i64(1)])
    return res


_ = (NULL, F64, coerce)
