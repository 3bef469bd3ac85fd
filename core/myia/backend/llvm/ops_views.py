"""Array headers: `full`, and the views, which make no copy (arrays are immutable):
`broadcast_to` (zero strides), `transpose` (permuted dims and strides), `reshape` (of
a C-contiguous array; another one is copied first); and the rules that read a header
or a single element: `shape`, `ndim`, `array_to_scalar`, an array's truth value, the
shape primitives of a shape known only at run time.  (Indexing: ops_index.)
"""

import llvmlite.ir as ir

from ...errors import MyiaShapeError, MyiaValueError
from ...prim import ops as P
from .arrays import (_shape_value, c_strides, check_dims, checked_size, contiguous, data_of, dim,
                     dims, fill, load_elem, make_array, new_array, size_of, store_elem, strides)
from .cg import i64
from .registry import backend_error, rule
from .ltypes import EMPTY, ITEMSIZE, Array, Scalar, Static, to_ir
from .ops_elementwise import Leaf, broadcast_shapes, eff_strides, ew_values
from .ops_scalar import cast, const_like


# ---- creation ----------------------------------------------------------------------------


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


# ---- views -------------------------------------------------------------------------------


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
    b = fl.b
    size = size_of(b, dims(fl, v, t))
    fl.error_if(b.icmp_signed("!=", size, i64(1)), node, MyiaValueError,
                "the truth value of an array of {a} elements is ambiguous", size)
    return cast(b, load_elem(b, data_of(b, v), i64(0), t.dtype), t.dtype, "bool")


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
