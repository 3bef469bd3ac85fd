"""LLVM lowering of indexing at run-time positions (myia.prim.dynamic; see arrays.py
for the array representation and ops_elementwise.py for the loop nests).

    dynamic_slice          a view (no copy): x's data moved to the start, the axis
                           `size` long, the strides kept; the start checked first
    dynamic_update_slice   a copy of x, then the update copied into its slab
    gather                 a loop nest over the result reading x at each index
                           (negative indices count from the end; each one checked);
                           rows of x[idx] on axis 0 (a batch of examples) are copied
                           whole, one check and one memcpy per index, where x's rows
                           are contiguous
    scatter_add            a copy of x (or zeros, when x is zeros_like of something),
                           then a loop nest over d adding each element at its index,
                           in order (repeated indices add up, as np.add.at)

The checks raise the errors of the VM's implementation, with its messages, at the
user's line: a slice that does not fit (MyiaSliceBoundsError: the start, the length,
the size of the axis) and an index out of bounds (MyiaIndexError: the index, the size).
"""

import llvmlite.ir as ir

from ...errors import MyiaIndexError, MyiaSliceBoundsError
from ...prim import ops as P
from ...prim.dynamic import index_message, slice_message
from . import cg
from .arrays import (c_strides, data_of, dims, elem_ptr, load_elem, make_array, new_array,
                     store_elem, strides)
from .cg import i64
from .registry import backend_error, rule
from .ltypes import EMPTY, ITEMSIZE, Array, Static
from .ops_elementwise import LoopNest
from .ops_scalar import cast
from .ops_shape import _axis, _static_dims, copy_into
from .runtime import I1, declare


def _checked_start(fl, node, start, size, n, axis):
    """The first position of x[start:start + size] on an axis of length n (negative
    bounds read as NumPy reads them); an error unless NumPy's result has `size`
    elements (see prim.dynamic.checked_start)."""
    b = fl.b
    if size == 0:
        return i64(0)
    stop = b.add(start, i64(size))
    s = b.select(b.icmp_signed("<", start, i64(0)), b.add(start, n), start)
    e = b.select(b.icmp_signed("<", stop, i64(0)), b.add(stop, n), stop)
    ok = b.and_(b.and_(b.icmp_signed(">=", s, i64(0)), b.icmp_signed("<=", e, n)),
                b.icmp_signed("==", b.sub(e, s), i64(size)))
    fl.error_if(b.not_(ok), node, MyiaSliceBoundsError, slice_message(size, axis), start, n)
    return s


def _checked_index(fl, node, i, n, axis):
    """Index i on an axis of length n, negative ones counted from the end."""
    b = fl.b
    bad = b.or_(b.icmp_signed(">=", i, i64(n)), b.icmp_signed("<", i, i64(-n)))
    fl.error_if(bad, node, MyiaIndexError, index_message(axis), i, i64(n))
    return b.select(b.icmp_signed("<", i, i64(0)), b.add(i, i64(n)), i)


@rule(P.make_dslice)
def lower_make_dslice(fl, node, args, types, out):
    # a slice made at run time is refused with its type (abstracts.py): what is left
    # are constants, or slices whose start dynamic_slice reads (see rules_dynamic)
    if not isinstance(out, Static):
        raise backend_error("a slice made at run time, as a value", node)
    return ir.Constant(EMPTY, [])


@rule(P.dynamic_slice)
def lower_dynamic_slice(fl, node, args, types, out):
    b = fl.b
    t = types[0]
    axis = _axis(fl, node, 3, t.ndim)
    size = fl.static(node.inputs[4])
    d = dims(fl, args[0], t)
    s = strides(fl, args[0], t)
    start = _checked_start(fl, node, args[1], size, d[axis], axis)
    data = elem_ptr(b, data_of(b, args[0]), b.mul(start, s[axis]), t.dtype)
    d[axis] = i64(size)
    return make_array(b, t.ndim, data, d, s)


@rule(P.dynamic_update_slice)
def lower_dynamic_update_slice(fl, node, args, types, out):
    b = fl.b
    x_t, u_t = types[0], types[1]
    axis = _axis(fl, node, 4, x_t.ndim)
    shape = _static_dims(out, node)
    res, _ = new_array(fl, out.dtype, shape, node)
    data = data_of(b, res)
    st, _ = c_strides(b, shape)
    size = u_t.shape[axis]
    start = _checked_start(fl, node, args[2], size, shape[axis], axis)
    copy_into(fl, node, args[0], x_t, data, shape, st, out.dtype)
    slab = elem_ptr(b, data, b.mul(start, st[axis]), out.dtype)
    slab_dims = list(shape)
    slab_dims[axis] = i64(size)
    copy_into(fl, node, args[1], u_t, slab, slab_dims, st, out.dtype)
    return res


def _gather_operands(fl, x, x_t, idx, idx_t, axis, lead):
    """Strides over the gathered shape x.shape[:axis] + idx.shape + x.shape[axis + 1:]
    for x (0 on idx's axes: the position comes from the index) and for idx (0 on x's)."""
    xs = strides(fl, x, x_t)
    ids = strides(fl, idx, idx_t)
    zeros = [i64(0)] * idx_t.ndim
    x_st = xs[:axis] + zeros + xs[axis + 1:]
    idx_st = [i64(0)] * axis + ids + [i64(0)] * (x_t.ndim - axis - 1)
    assert len(x_st) == len(idx_st) == lead
    return x_st, idx_st


@rule(P.gather)
def lower_gather(fl, node, args, types, out):
    b = fl.b
    x_t, idx_t = types[0], types[1]
    axis = _axis(fl, node, 3, x_t.ndim)
    shape = _static_dims(out, node)
    res, _ = new_array(fl, out.dtype, shape, node)
    n = x_t.shape[axis]
    if n is None:
        raise backend_error(f"a gather from an array of unknown shape {x_t}", node)
    x_data, idx_data, res_data = data_of(b, args[0]), data_of(b, args[1]), data_of(b, res)
    xs = strides(fl, args[0], x_t)
    x_step = xs[axis]
    x_st, idx_st = _gather_operands(fl, args[0], x_t, args[1], idx_t, axis, out.ndim)
    operands = [("x", x_data, x_st), ("idx", idx_data, idx_st),
                ("out", res_data, c_strides(b, shape)[0])]

    def inner(offs, j, ln, state):
        i = _checked_index(fl, node, load_elem(b, idx_data, offs["idx"], "int64"), n, axis)
        v = load_elem(b, x_data, b.add(offs["x"], b.mul(i, x_step)), x_t.dtype)
        store_elem(b, v, res_data, offs["out"], out.dtype)
        return state

    def elementwise():
        LoopNest(fl, shape, operands, 1, ir.Constant(I1, 0)).run(inner)

    if axis != 0 or idx_t.ndim != 1 or x_t.ndim < 2 or x_t.dtype != out.dtype:
        elementwise()
        return res
    # rows: x.shape[1:] contiguous in x (checked at run time: x may be a view)
    row_st, row = c_strides(b, [i64(d) for d in x_t.shape[1:]])
    contiguous = ir.Constant(I1, 1)
    for have, want, d in zip(xs[1:], row_st, x_t.shape[1:]):
        if d != 1:  # (a stride of a length-1 axis does not matter)
            contiguous = b.and_(contiguous, b.icmp_signed("==", have, want))
    with b.if_else(contiguous) as (rows, other):
        with rows:
            idx_step = strides(fl, args[1], idx_t)[0]
            nbytes = b.mul(row, i64(ITEMSIZE[x_t.dtype]))
            memcpy = declare(b.module, "memcpy")
            with cg.for_range(b, 0, idx_t.shape[0], name="row") as j:
                i = _checked_index(fl, node, load_elem(b, idx_data, b.mul(j, idx_step), "int64"),
                                   n, axis)
                src = elem_ptr(b, x_data, b.mul(i, x_step), x_t.dtype)
                b.call(memcpy, [elem_ptr(b, res_data, b.mul(j, row), out.dtype), src, nbytes])
        with other:
            elementwise()
    return res


@rule(P.scatter_add)
def lower_scatter_add(fl, node, args, types, out):
    b = fl.b
    x_t, idx_t, d_t = types[0], types[1], types[3]
    axis = _axis(fl, node, 3, x_t.ndim)
    shape = _static_dims(out, node)
    zeros = node.inputs[1].is_apply(P.zeros_like)  # the gradient of a gather
    res, _ = new_array(fl, out.dtype, shape, node, zero=zeros)
    res_data = data_of(b, res)
    res_st, _ = c_strides(b, shape)
    if not zeros:
        copy_into(fl, node, args[0], x_t, res_data, shape, res_st, out.dtype)
    n = x_t.shape[axis]
    res_t = Array(out.dtype, x_t.shape)
    # the loop runs over d: the shape of gather(x, idx, axis)
    loop = _static_dims(d_t, node)
    r_st, idx_st = _gather_operands(fl, res, res_t, args[1], idx_t, axis, d_t.ndim)
    idx_data, d_data = data_of(b, args[1]), data_of(b, args[3])
    operands = [("res", res_data, r_st), ("idx", idx_data, idx_st),
                ("d", d_data, strides(fl, args[3], d_t))]

    def inner(offs, j, ln, state):
        i = _checked_index(fl, node, load_elem(b, idx_data, offs["idx"], "int64"), n, axis)
        at = b.add(offs["res"], b.mul(i, res_st[axis]))
        dv = cast(b, load_elem(b, d_data, offs["d"], d_t.dtype), d_t.dtype, out.dtype)
        old = load_elem(b, res_data, at, out.dtype)
        new = b.fadd(old, dv) if out.dtype in ("float64", "float32") else \
            (b.or_(old, dv) if out.dtype == "bool" else b.add(old, dv))
        store_elem(b, new, res_data, at, out.dtype)
        return state

    LoopNest(fl, loop, operands, 1, ir.Constant(I1, 0)).run(inner)
    return res
