"""Matrix products: `dot` of 1-d and 2-d arrays.

`dot` calls BLAS (`dgemm`/`dgemv`/`ddot`, `s*` for float32) on operands with a unit
stride on one axis (a transpose is a flag, not a copy); other operands are copied
first.  int64 and bool products use a plain loop.  A product that only updates another
matrix (`W - lr * (A @ B)`) is one gemm into a copy of it (`gemm_update`, through
`call_gemm` and `_blas_operand`); the batched products and solves are ops_linalg.
"""

import llvmlite.ir as ir

from ...errors import MyiaShapeError
from ...prim import ops as P
from .arrays import (_copied_unless, data_of, dim, dims, fill, load_elem, make_array, new_array,
                     store_elem, stride, strides)
from .cg import _known_int, const_ptr, for_range, i64, outlined
from .registry import backend_error, rule
from .ltypes import ELEM_IR, Array, Scalar
from .ops_elementwise import ew_values
from .ops_scalar import FLOATS, const_like
from .runtime import F32, F64, I1, I8, I32, I64, declare


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
