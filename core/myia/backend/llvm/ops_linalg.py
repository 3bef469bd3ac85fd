"""LLVM lowering of the linalg primitives of issue 18 (see arrays.py for the conventions).

`batch_matmul` (..., m, k) @ (..., k, n): float operands are one BLAS gemm call per
batch index (`dgemm`/`sgemm`, a transposed operand is a flag, not a copy, as for `dot`);
an operand whose last two axes have no unit stride (a transposed batch axis...) is
copied once, whole, before the loop.  Batch axes may have any strides, zero included
(what `broadcast_to` makes).  int64 and bool products are plain loops.
"""

import contextlib

from ...errors import MyiaShapeError
from ...prim import ops as P
from .arrays import (_copied_unless, data_of, dims, elem_ptr, fill, load_elem, new_array,
                     store_elem, strides)
from .cg import _known_int, for_range, i64, outlined
from .registry import backend_error, rule
from .ltypes import ELEM_IR, Array
from .ops_blas import _at_least_1, _char_ptr, _float_ptr, _int_ptr
from .ops_elementwise import ew_values
from .ops_scalar import FLOATS, const_like
from .runtime import I1, declare


@rule(P.batch_matmul)
def lower_batch_matmul(fl, node, args, types, out):
    b = fl.b
    ta, tb = types
    if not (isinstance(ta, Array) and isinstance(tb, Array)) or ta.ndim < 2 \
            or ta.ndim != tb.ndim:
        raise backend_error(f"batch_matmul of {ta} and {tb}", node)
    dt = out.dtype
    a, c = args
    if ta.dtype != dt:
        a, ta = ew_values(fl, "astype", [a], [ta], Array(dt, ta.shape), node), Array(dt, ta.shape)
    if tb.dtype != dt:
        c, tb = ew_values(fl, "astype", [c], [tb], Array(dt, tb.shape), node), Array(dt, tb.shape)
    da, db = dims(fl, a, ta), dims(fl, c, tb)
    for x, y in zip(da[:-2], db[:-2]):
        fl.error_if(b.icmp_signed("!=", x, y), node, MyiaShapeError,
                    "batch_matmul: the batch axes differ: {a} != {b}", x, y)
    m, k, n = da[-2], da[-1], db[-1]
    fl.error_if(b.icmp_signed("!=", k, db[-2]), node, MyiaShapeError,
                "shapes are not aligned for a matrix product: {a} != {b}", k, db[-2])
    batch = da[:-2]
    res, size = new_array(fl, dt, batch + [m, n], node)
    if dt not in FLOATS:
        _naive_batch(fl, a, ta, c, tb, res, batch, m, k, n, dt)
        return res
    a, a_row, lda = _matrix_layout(fl, a, ta)
    c, b_row, ldb = _matrix_layout(fl, c, tb)
    sa, sb = strides(fl, a, ta), strides(fl, c, tb)
    p = "d" if dt == "float64" else "s"
    one, zero = _float_ptr(fl, dt, 1.0), _float_ptr(fl, dt, 0.0)
    # the arguments that do not change from one matrix to the next
    trans_b, trans_a = _char_ptr(fl, b.not_(b_row)), _char_ptr(fl, b.not_(a_row))
    pn, pm, pk = _int_ptr(fl, n), _int_ptr(fl, m), _int_ptr(fl, k)
    plda, pldb = _int_ptr(fl, lda), _int_ptr(fl, ldb)

    def products():
        with _batch_loops(fl, batch) as index:
            off_a = _offset(b, index, sa)
            off_b = _offset(b, index, sb)
            off_c = b.mul(_flat(b, index, batch), b.mul(m, n))
            # C^T (n x m, col-major) = B^T (n x k) A^T (k x m), as in `dot`
            b.call(declare(b.module, p + "gemm"), [
                trans_b, trans_a, pn, pm, pk, one,
                elem_ptr(b, data_of(b, c), off_b, dt), pldb,
                elem_ptr(b, data_of(b, a), off_a, dt), plda, zero,
                elem_ptr(b, data_of(b, res), off_c, dt), pn])

    nonempty = b.and_(b.icmp_signed(">", m, i64(0)), b.icmp_signed(">", n, i64(0)))
    k_pos = b.icmp_signed(">", k, i64(0))
    if _known_int(nonempty) == 1 and _known_int(k_pos) == 1:  # shapes known
        products()
        return res
    with b.if_then(nonempty):
        with b.if_else(k_pos) as (then, otherwise):
            with then:
                products()
            with otherwise:  # sums of nothing
                fill(fl, res, size, const_like(dt, 0, 1), dt)
    return res


def _matrix_layout(fl, v, t):
    """(v or a C-contiguous copy of it, row, ld): `row` says whether the matrices of
    the last two axes are row-major (else column-major); `ld` is BLAS's leading
    dimension of the column-major view (see `_blas_operand` in ops_blas.py)."""
    b = fl.b
    d0, d1 = dims(fl, v, t)[-2:]
    s0, s1 = strides(fl, v, t)[-2:]
    row = b.and_(b.or_(b.icmp_signed("==", s1, i64(1)), b.icmp_signed("<=", d1, i64(1))),
                 b.icmp_signed(">=", s0, _at_least_1(b, d1)))
    col = b.and_(b.or_(b.icmp_signed("==", s0, i64(1)), b.icmp_signed("<=", d0, i64(1))),
                 b.icmp_signed(">=", s1, _at_least_1(b, d0)))
    v, copied = _copied_unless(fl, b.or_(row, col), v, t, "bmm.operand")
    is_row = row if copied is None else b.or_(row, copied)  # a copy is row-major
    s0, s1 = strides(fl, v, t)[-2:]
    ld_row = b.select(b.icmp_signed("<", s0, _at_least_1(b, d1)), _at_least_1(b, d1), s0)
    ld_col = b.select(b.icmp_signed("<", s1, _at_least_1(b, d0)), _at_least_1(b, d0), s1)
    return v, is_row, b.select(is_row, ld_row, ld_col)


@contextlib.contextmanager
def _batch_loops(fl, batch):
    """`with _batch_loops(fl, batch) as index:` one loop per batch axis (none for an
    empty batch), in a kernel of its own; `index` is the list of loop indices."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(outlined(fl, "bmm"))
        yield [stack.enter_context(for_range(fl.b, 0, d, name=f"bmm{k}"))
               for k, d in enumerate(batch)]


def _offset(b, index, strides_):
    off = i64(0)
    for i, s in zip(index, strides_):
        off = b.add(off, b.mul(i, s))
    return off


def _flat(b, index, shape):
    """The C-order position of `index` in `shape`."""
    flat = i64(0)
    for i, d in zip(index, shape):
        flat = b.add(b.mul(flat, d), i)
    return flat


def _naive_batch(fl, a, ta, c, tb, res, batch, m, k, n, dt):
    """Integer and bool products: plain loops over strides (bool: or of ands, as NumPy)."""
    b = fl.b
    sa, sb = strides(fl, a, ta), strides(fl, c, tb)
    with _batch_loops(fl, batch) as index:
        base_a, base_b = _offset(b, index, sa[:-2]), _offset(b, index, sb[:-2])
        base_c = b.mul(_flat(b, index, batch), b.mul(m, n))
        with for_range(b, 0, m, name="bmi") as i:
            with for_range(b, 0, n, name="bmj") as j:
                acc_t = I1 if dt == "bool" else ELEM_IR[dt]
                acc_p = fl.alloca(acc_t)
                b.store(const_like(dt, 0, 1), acc_p)
                with for_range(b, 0, k, name="bmk") as q:
                    x = load_elem(b, data_of(b, a),
                                  b.add(base_a, b.add(b.mul(i, sa[-2]), b.mul(q, sa[-1]))), dt)
                    y = load_elem(b, data_of(b, c),
                                  b.add(base_b, b.add(b.mul(q, sb[-2]), b.mul(j, sb[-1]))), dt)
                    acc = b.load(acc_p, typ=acc_t)
                    b.store(b.or_(acc, b.and_(x, y)) if dt == "bool" else b.add(acc, b.mul(x, y)),
                            acc_p)
                store_elem(b, b.load(acc_p, typ=acc_t), data_of(b, res),
                           b.add(base_c, b.add(b.mul(i, n), j)), dt)

