"""Arrays: their representation, and the helpers every array rule shares.

Representation: {ptr data, [n x i64] shape, [n x i64] strides}, strides in elements.
Arrays are immutable values in the subset, so views are always safe: `transpose`,
`reshape` of a C-contiguous array, `broadcast_to` (zero strides), basic indexing and
slicing make no copy (ops_views, ops_index).  Arrays the compiled code creates are
C-contiguous and live in the call's arena.

Here: reading and building array values (`data_of`, `dims`, `strides`, `make_array`),
fresh arrays (`new_array`, their size checked first; `fill`, `full_like`), loading and
storing elements, the program's constant arrays, shapes given as tuples
(`_shape_value`), and C-contiguous copies (`copy_contiguous`, through the runtime
helper `myia_copy`) of the operands that need one.  The rules are in the ops_*
modules: ops_elementwise (fused loops), ops_accumulate (reductions), ops_views,
ops_index, ops_blas (products).
"""

import llvmlite.ir as ir
import numpy as np

from ...errors import MyiaOverflowError, MyiaValueError
from ...prim.shape import MAX_BYTES, NEGATIVE_DIMS, TOO_BIG
from .cg import _known_int, for_range, i32, i64, outlined, runtime_fn
from .registry import backend_error
from .ltypes import ELEM_IR, ITEMSIZE, Array, Static, Tuple, array_ir, to_ir
from .ops_scalar import FLOATS, cast, const_like, splat
from .runtime import I1, I8, I64, PTR, declare, declare_global


# ---- array values ------------------------------------------------------------------------


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
    arr = np.asarray(value, order="C")  # (ascontiguousarray makes a 0-d array 1-d)
    L = fl.L
    name = L.engine.data_symbol(arr)
    g = declare_global(fl.module, name, I8)
    shape = [i64(d) for d in arr.shape]
    st = [i64(s // arr.itemsize) for s in arr.strides]
    return make_array(fl.b, arr.ndim, g, shape, st)


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


# ---- creation ----------------------------------------------------------------------------


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


# ---- copies ------------------------------------------------------------------------------


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
