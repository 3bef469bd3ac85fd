"""Reductions and matrix products.  (Elementwise operations are in `arith`, shapes
and creation in `shape`.)"""

import numpy as np

from ..errors import MyiaShapeError, MyiaValueError
from .arith import eq, mul
from .grad_ops import zeros_like
from . import series as S
from .linalg import batch_matmul
from .logic import not_
from .primitive import PIECEWISE_LINEAR, Primitive, batch, bprop, jet, jvp, linear_in
from .structure import assert_
from .shape import (_as_array, _axes, astype, broadcast_to, dtype, ndim, reduced_shape, reshape,
                    shape, transpose)


def _reduce(np_fn):
    def impl(x, axis, keepdims):
        x = _as_array(x)
        axes = _axes(axis, x.ndim)  # checks the axes
        if len(set(axes)) != len(axes):
            raise MyiaShapeError(f"duplicate value in axis {axis}")
        out = np_fn(x, axis=axis, keepdims=keepdims)
        return out[()] if isinstance(out, np.ndarray) and out.ndim == 0 else out

    return impl


reduce_sum = Primitive("reduce_sum", _reduce(np.sum), "np.sum(x, axis, keepdims)")
reduce_max = Primitive("reduce_max", _reduce(np.max), "np.max(x, axis, keepdims)")


@bprop(reduce_sum)
def bprop_reduce_sum(x, axis, keepdims, out, dout):
    d = broadcast_to(reshape(dout, reduced_shape(shape(x), axis)), shape(x))
    return (d, zeros_like(axis), False)


@jvp(reduce_sum)
def jvp_reduce_sum(x, axis, keepdims, dx, daxis, dkeepdims):
    return reduce_sum(dx, axis, keepdims)


jet(reduce_sum)(linear_in(0))


@bprop(reduce_max)
def bprop_reduce_max(x, axis, keepdims, out, dout):
    # ties share the sensitivity evenly
    kept = reduced_shape(shape(x), axis)
    mask = astype(eq(x, reshape(out, kept)), dtype(x))  # float32 stays float32
    count = reduce_sum(mask, axis, True)
    d = mask * reshape(dout, kept) / count
    return (d, zeros_like(axis), False)


@jvp(reduce_max)
def jvp_reduce_max(x, axis, keepdims, dx, daxis, dkeepdims):
    kept = reduced_shape(shape(x), axis)
    mask = eq(x, reshape(reduce_max(x, axis, True), kept)) * 1.0
    return reduce_sum(mask * dx, axis, keepdims) / reduce_sum(mask, axis, keepdims)


jet(reduce_max)(PIECEWISE_LINEAR)


def _arg_extremum(np_fn, what):
    def impl(x, axis, keepdims):
        x = _as_array(x)
        if x.ndim == 0:
            raise MyiaShapeError(f"{what} needs an array of at least one dimension, got a scalar")
        (axis,) = _axes(axis, x.ndim)
        if x.shape[axis] == 0:
            raise MyiaValueError(f"attempt to get {what} of an empty sequence")
        out = np_fn(x, axis=axis, keepdims=keepdims)
        return out[()] if out.ndim == 0 else out

    return impl


# the first position of the extremum along one axis (of the first nan, if any: NumPy's)
argmax = Primitive("argmax", _arg_extremum(np.argmax, "argmax"),
                   "np.argmax(x, axis, keepdims) along one axis", nondiff=True)
argmin = Primitive("argmin", _arg_extremum(np.argmin, "argmin"),
                   "np.argmin(x, axis, keepdims) along one axis", nondiff=True)


def _dot(a, b):
    a = _as_array(a)
    b = _as_array(b)
    if a.ndim > 2 or b.ndim > 2 or a.ndim == 0 or b.ndim == 0:
        raise MyiaShapeError(f"dot supports 1-d and 2-d arrays, got shapes {a.shape} and {b.shape}")
    if a.shape[-1] != b.shape[0]:
        raise MyiaShapeError(f"shapes {a.shape} and {b.shape} are not aligned for a matrix product")
    out = np.dot(a, b)
    return out[()] if isinstance(out, np.ndarray) and out.ndim == 0 else out


dot = Primitive("dot", _dot, "matrix product of 1-d and 2-d arrays (np.dot, @)")


@bprop(dot)
def bprop_dot(a, b, out, dout):
    # As a product of matrices, with 1-d operands as a row (a) or a column (b).
    a2 = reshape(a, (1, -1)) if ndim(a) == 1 else a
    b2 = reshape(b, (-1, 1)) if ndim(b) == 1 else b
    d2 = reshape(dout, shape(dot(a2, b2)))
    da = dot(d2, transpose(b2, None))
    db = dot(transpose(a2, None), d2)
    return (reshape(da, shape(a)), reshape(db, shape(b)))



@jvp(dot)
def jvp_dot(a, b, da, db):
    return dot(da, b) + dot(a, db)


@jet(dot)
def jet_dot(out, a, b):
    return S.cauchy(a, b, out, prim=dot)


# ---- batching rules (vmap: myia.ad.batching) ---------------------------------------

def batch_reduction(prim):
    def rule(b, x, axis, keepdims):
        if x.rank == 0:
            return b.batched(x)
        return b.apply(prim, b.batched(x), b.axes(b.constant(axis, "the axis"), x.rank),
                       keepdims)

    return rule


def batch_arg_extremum(prim):
    def rule(b, x, axis, keepdims):
        ax = b.constant(axis, "the axis")
        node = b.batched(x)
        if ax is None:  # (over the flattened array)
            return b.apply(prim, b.apply(reshape, node, (b.B, -1)), 1, keepdims)
        return b.apply(prim, node, b.axes(ax, x.rank), keepdims)

    return rule


batch(reduce_sum)(batch_reduction(reduce_sum))
batch(reduce_max)(batch_reduction(reduce_max))
batch(argmax)(batch_arg_extremum(argmax))
batch(argmin)(batch_arg_extremum(argmin))


@batch(dot)
def batch_dot(b, x, y):
    """One matrix product per example: a single product where one side is shared
    (its rows or columns carry the batch), else a batch_matmul."""
    B = b.B
    if x.batched and y.batched:
        xs = x.shape if x.rank == 2 else (1,) + x.shape
        ys = y.shape if y.rank == 2 else y.shape + (1,)
        xb, yb = b.apply(reshape, x.node, (B,) + xs), b.apply(reshape, y.node, (B,) + ys)
        # (a product over one element, an outer product: a broadcast multiplication,
        # which fuses with what surrounds it; per-example gradients of a layer are that)
        prod = b.apply(mul, xb, yb) if xs[-1] == 1 else b.apply(batch_matmul, xb, yb)
        return b.apply(reshape, prod, (B,) + b.out_shape)
    if x.batched:
        if x.rank == 1:  # rows (B, k) @ y
            return b.apply(dot, x.node, y.node)
        m, k = x.shape  # (B * m, k) @ y
        if k == 1 and y.rank == 2:  # (a column times a row: a broadcast multiplication)
            return b.apply(mul, b.apply(reshape, x.node, (B, m, 1)), y.node)
        flat = b.apply(dot, b.apply(reshape, x.node, (B * m, k)), y.node)
        return b.apply(reshape, flat, (B,) + b.out_shape)
    if y.rank == 1 or y.shape[1] == 1:  # x @ y_b: (B, k) @ x.T (a column: the same)
        xt = x.node if x.rank == 1 else b.apply(transpose, x.node, None)
        rows = y.node if y.rank == 1 else b.apply(reshape, y.node, (B, y.shape[0]))
        return b.apply(reshape, b.apply(dot, rows, xt), (B,) + b.out_shape)
    k, n = y.shape  # x @ (k, B * n)
    ycols = b.apply(reshape, b.apply(transpose, y.node, (1, 0, 2)), (k, B * n))
    flat = b.apply(dot, x.node, ycols)
    if x.rank == 1:
        return b.apply(reshape, flat, (B, n))
    m = x.shape[0]
    return b.apply(transpose, b.apply(reshape, flat, (m, B, n)), (1, 0, 2))


@batch(assert_)
def batch_assert(b, cond, message):
    """The assertion holds for every example."""
    failed = b.apply(astype, b.apply(not_, b.batched(cond)), "int64")
    every = b.apply(eq, b.apply(reduce_max, failed, None, False), 0)
    return b.apply(assert_, every, message), False
