"""Cumulative and product reductions: reduce_prod, cumsum, cumprod, linear_recurrence.

    reduce_prod(x, axis, keepdims)          np.prod over static axes
    cumsum(x, axis, reverse)                np.cumsum along one axis of an array;
                                            `reverse`: from the last element to the first
    cumprod(x, axis, reverse)               np.cumprod, the same way
    linear_recurrence(a, b, axis, reverse)  s[i] = a[i] * s[i - 1] + b[i] along the axis,
                                            from s[0] = b[0] (a[0] is not used); backwards
                                            with `reverse` (s[i + 1] for s[i - 1])

No rule here divides by x: a product's gradient is the product of the *other* factors,
made of the products before and after each one (exclusive cumulative products), so it
is exact where some factors are zero, to every order.  The derivatives of a cumulative
product are linear recurrences along the same axis (cumprod's bprop is one run
backwards), and a linear recurrence's derivatives are linear recurrences again.

Helpers in the subset: `previous_step(x, axis, reverse)` is x shifted one step along
the scan (x[i - 1] at i, 0 at the first step), `next_step` the other way; both are a
slice of x written into zeros (getitem, getitem_grad), so their rules come for free.
"""

import numpy as np

from ..errors import MyiaShapeError, MyiaTypeError
from . import series as S
from .arith import where
from .array import _reduce, reduce_sum
from .grad_ops import ones_like, zeros_like
from .primitive import Primitive, batch, bprop, compile_time, jet, jvp, linear_in
from .shape import _as_array, _axes, inverse_axes, ndim, reduced_shape, reshape, shape, transpose
from .structure import getitem, getitem_grad

# ---- implementations ---------------------------------------------------------------


def scan_axis(axis, x_ndim, what):
    """The non-negative axis of a scan along `axis` of an array of rank x_ndim."""
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise MyiaTypeError(f"the axis of {what} must be an int, got {axis!r}")
    if x_ndim == 0:
        raise MyiaShapeError(f"{what} needs an array of at least one dimension, got a scalar",
                             hint="reshape it first, or leave axis=None (which flattens)")
    if not -x_ndim <= axis < x_ndim:
        raise MyiaShapeError(f"axis {axis} is out of bounds for an array of rank {x_ndim}")
    return int(axis) % x_ndim


def _cumulative(np_fn, what):
    def impl(x, axis, reverse):
        x = _as_array(x)
        axis = scan_axis(axis, x.ndim, what)
        if reverse:
            return np.flip(np_fn(np.flip(x, axis), axis=axis), axis)
        return np_fn(x, axis=axis)

    return impl


def _linear_recurrence(a, b, axis, reverse):
    a, b = _as_array(a), _as_array(b)
    if a.shape != b.shape:
        raise MyiaShapeError(
            f"linear_recurrence of shapes {a.shape} and {b.shape}: they must be equal")
    axis = scan_axis(axis, a.ndim, "linear_recurrence")
    s = np.array(b, dtype=np.result_type(a, b))  # a copy: s[i] holds b[i] until its step
    sm, am = np.moveaxis(s, axis, 0), np.moveaxis(a, axis, 0)
    n = sm.shape[0]
    with np.errstate(all="ignore"):
        for i in (range(n - 2, -1, -1) if reverse else range(1, n)):
            before = i + 1 if reverse else i - 1
            sm[i] = am[i] * sm[before] + sm[i]
    return s


reduce_prod = Primitive("reduce_prod", _reduce(np.prod), "np.prod(x, axis, keepdims)")
cumsum = Primitive("cumsum", _cumulative(np.cumsum, "cumsum"),
                   "np.cumsum(x, axis), from the last element when reverse")
cumprod = Primitive("cumprod", _cumulative(np.cumprod, "cumprod"),
                    "np.cumprod(x, axis), from the last element when reverse")
linear_recurrence = Primitive(
    "linear_recurrence", _linear_recurrence,
    "s[i] = a[i] * s[i - 1] + b[i] along axis from s[0] = b[0] (s[i + 1] when reverse)")


# ---- steps of a scan, in the subset ---------------------------------------------------


@compile_time
def _neighbours(x_ndim, axis, reverse):
    """(every step of a scan along `axis` but the first, every step but the last) as
    index tuples: x[later] is one step after x[earlier], element by element."""
    axis = scan_axis(axis, x_ndim, "a scan")
    later, earlier = slice(1, None), slice(None, -1)
    if reverse:
        later, earlier = earlier, later
    before = (slice(None),) * axis
    return before + (later,), before + (earlier,)


@compile_time
def _first_step(x_shape, axis, reverse):
    """A bool mask, broadcastable to x_shape, of the first step of a scan along axis."""
    axis = scan_axis(axis, len(x_shape), "a scan")
    n = x_shape[axis]
    mask = np.zeros((1,) * axis + (n,) + (1,) * (len(x_shape) - axis - 1), dtype=bool)
    if n:
        mask[(0,) * axis + (n - 1 if reverse else 0,)] = True
    return mask


def previous_step(x, axis, reverse):
    """x one step earlier in the scan: x[i - 1] at i (x[i + 1] if reverse); 0 at the
    first step."""
    later, earlier = _neighbours(ndim(x), axis, reverse)
    return getitem_grad(x, later, getitem(x, earlier))


def next_step(x, axis, reverse):
    """x one step later in the scan: x[i + 1] at i (x[i - 1] if reverse); 0 at the last
    step."""
    later, earlier = _neighbours(ndim(x), axis, reverse)
    return getitem_grad(x, earlier, getitem(x, later))


def exclusive(c, axis, reverse):
    """From the cumulative product c of x: at each step, the product of the elements
    strictly before it (1 at the first step)."""
    return where(_first_step(shape(c), axis, reverse), 1, previous_step(c, axis, reverse))


@compile_time
def _grouping(x_shape, axis):
    """(a permutation that moves the reduced axes last, the shape of the moved array
    with the reduced axes flattened into one)."""
    rank = len(x_shape)
    axes = tuple(range(rank)) if axis is None else (axis if isinstance(axis, tuple)
                                                    else (axis,))
    reduced = sorted({int(a) % rank for a in axes}) if rank else []
    kept = [k for k in range(rank) if k not in reduced]
    n = 1
    for k in reduced:
        n *= x_shape[k]
    return tuple(kept + reduced), tuple(x_shape[k] for k in kept) + (n,)


def product_of_others(x, axis):
    """For each element of x, the product of the other elements of its group (the
    elements that reduce_prod(x, axis) multiplies together): the derivative of the
    product with respect to that element, without a division."""
    if ndim(x) == 0:
        return ones_like(x)  # a product of one factor
    order, flat_shape = _grouping(shape(x), axis)
    moved = transpose(x, order)
    flat = reshape(moved, flat_shape)  # one group per row
    before = exclusive(cumprod(flat, -1, False), -1, False)
    after = exclusive(cumprod(flat, -1, True), -1, True)
    return transpose(reshape(before * after, shape(moved)), inverse_axes(order))


def last_of_groups(c, x, axis, keepdims):
    """From c, a cumulative product along the last axis of the grouped x (see
    product_of_others), the value at the last step of each group, shaped like
    reduce_prod(x, axis, keepdims)."""
    return reshape(getitem(c, _last_step(ndim(c))), _reduced_shape(shape(x), axis, keepdims))


@compile_time
def _last_step(c_ndim):
    """The index of the last element along the last axis."""
    return (slice(None),) * (c_ndim - 1) + (-1,)


@compile_time
def _reduced_shape(x_shape, axis, keepdims):
    """The shape of a reduction of an array of shape x_shape over axis."""
    axes = _axes(axis, len(x_shape))
    if keepdims:
        return tuple(1 if k in axes else d for k, d in enumerate(x_shape))
    return tuple(d for k, d in enumerate(x_shape) if k not in axes)


def grouped(x, axis):
    """x with the axes of `axis` moved last and flattened into one (see _grouping)."""
    if ndim(x) == 0:
        return reshape(x, (1,))
    order, flat_shape = _grouping(shape(x), axis)
    return reshape(transpose(x, order), flat_shape)


# ---- reduce_prod ------------------------------------------------------------------------


@bprop(reduce_prod)
def bprop_reduce_prod(x, axis, keepdims, out, dout):
    d = reshape(dout, reduced_shape(shape(x), axis)) * product_of_others(x, axis)
    return (d, zeros_like(axis), False)


@jvp(reduce_prod)
def jvp_reduce_prod(x, axis, keepdims, dx, daxis, dkeepdims):
    return reduce_sum(dx * product_of_others(x, axis), axis, keepdims)


@jet(reduce_prod)
def jet_reduce_prod(out, x, axis, keepdims):
    # the last step of the cumulative product along each group
    a, kd = axis[0].node, keepdims[0].node
    flat = [_map(grouped, t, a) for t in x]
    y = _cumprod_series(_map(cumprod, flat[0], -1, False), flat, -1, False)
    return [out] + [_map(last_of_groups, t, x[0].node, a, kd) for t in y[1:]]


# ---- cumsum: linear ---------------------------------------------------------------------


@bprop(cumsum)
def bprop_cumsum(x, axis, reverse, out, dout):
    return (cumsum(dout, axis, not reverse), zeros_like(axis), False)


@jvp(cumsum)
def jvp_cumsum(x, axis, reverse, dx, daxis, dreverse):
    return cumsum(dx, axis, reverse)


jet(cumsum)(linear_in(0))


# ---- cumprod: y[i] = x[i] * y[i - 1], a linear recurrence in y --------------------------
#
# As linear_recurrence(x, x at the first step, 0 elsewhere), its rules follow from that
# one's: with the previous product exclusive(y) (1 at the first step),
#     dy = linear_recurrence(x, dx * exclusive(y))
#     dx = linear_recurrence(next_step(x), dout, backwards) * exclusive(y)


@bprop(cumprod)
def bprop_cumprod(x, axis, reverse, out, dout):
    t = linear_recurrence(next_step(x, axis, reverse), dout, axis, not reverse)
    return (t * exclusive(out, axis, reverse), zeros_like(axis), False)


@jvp(cumprod)
def jvp_cumprod(x, axis, reverse, dx, daxis, dreverse):
    y = cumprod(x, axis, reverse)
    return linear_recurrence(x, dx * exclusive(y, axis, reverse), axis, reverse)


@jet(cumprod)
def jet_cumprod(out, x, axis, reverse):
    return _cumprod_series(out, x, axis[0].node, reverse[0].node)


# ---- linear_recurrence: s[i] = a[i] * s[i - 1] + b[i] -------------------------------------
#
# Linear in b: s = M(a) b, M(a) lower triangular; its transpose runs the recurrence
# backwards with a moved one step (t[i] = a[i + 1] * t[i + 1] + g[i]).  In a:
# ds[i] = a[i] * ds[i - 1] + da[i] * s[i - 1] + db[i].


@bprop(linear_recurrence)
def bprop_linear_recurrence(a, b, axis, reverse, out, dout):
    t = linear_recurrence(next_step(a, axis, reverse), dout, axis, not reverse)
    return (t * previous_step(out, axis, reverse), t, zeros_like(axis), False)


@jvp(linear_recurrence)
def jvp_linear_recurrence(a, b, axis, reverse, da, db, daxis, dreverse):
    s = linear_recurrence(a, b, axis, reverse)
    return linear_recurrence(a, da * previous_step(s, axis, reverse) + db, axis, reverse)


@jet(linear_recurrence)
def jet_linear_recurrence(out, a, b, axis, reverse):
    # s_k = linear_recurrence(a_0, b_k + sum_{j=1..k} a_j * previous(s_{k-j}))
    ax, rev = axis[0].node, reverse[0].node
    s = [out]
    previous = []  # previous(s_m), made once each
    for k in range(1, len(a)):
        previous.append(_map(previous_step, s[k - 1], ax, rev))
        rhs = b[k] + S.total(a[j] * previous[k - j] for j in range(1, k + 1))
        s.append(_map_node(linear_recurrence, a[0].node, rhs, ax, rev))
    return s


# ---- Taylor-rule helpers -------------------------------------------------------------------


def _cumprod_series(out, x, axis, reverse):
    """The series of cumprod(x, axis, reverse) (`axis`, `reverse`: nodes): y_k is
    linear_recurrence(x_0, x_k * exclusive(y_0) + sum_{j=1..k-1} x_j * previous(y_{k-j}))."""
    y = [out]
    first = _map(exclusive, out, axis, reverse)
    previous = [None]  # previous(y_m) for m >= 1, made once each
    for k in range(1, len(x)):
        if k > 1:
            previous.append(_map(previous_step, y[k - 1], axis, reverse))
        rhs = x[k] * first + S.total(x[j] * previous[k - j] for j in range(1, k))
        y.append(_map_node(linear_recurrence, x[0].node, rhs, axis, reverse))
    return y


def _subset(fn):
    """The parsed graph of a helper above (parse caches it)."""
    # import here: the parser is above the primitives (asked only when a jet first
    # needs a helper)
    from ..parser import parse

    return parse(fn)


def _map(fn, term, *others):
    """The term fn(term, *others) (fn: a helper above, or a primitive).  A coefficient
    that is ZERO stays ZERO: fn is linear in it wherever one can be (the terms of the
    values, which fn need not be linear in, are never ZERO)."""
    if term is S.ZERO:
        return S.ZERO
    callee = fn if isinstance(fn, Primitive) else _subset(fn)
    return S.Term(S.apply(callee, term.node, *others))


def _map_node(prim, first, term, *others):
    """prim(first, term, *others), linear in `term`: ZERO stays ZERO."""
    if term is S.ZERO:
        return S.ZERO
    return S.Term(S.apply(prim, first, term.node, *others))


# ---- batching rules (vmap: myia.ad.batching) ---------------------------------------

def _batch_scan(prim):
    def rule(b, x, axis, reverse):
        return b.apply(prim, b.batched(x), b.axes(b.constant(axis, "the axis"), x.rank),
                       reverse)

    return rule


batch(cumsum)(_batch_scan(cumsum))
batch(cumprod)(_batch_scan(cumprod))


@batch(reduce_prod)
def batch_reduce_prod(b, x, axis, keepdims):
    if x.rank == 0:
        return b.batched(x)
    return b.apply(reduce_prod, b.batched(x), b.axes(b.constant(axis, "the axis"), x.rank),
                   keepdims)


@batch(linear_recurrence)
def batch_linear_recurrence(b, a, x, axis, reverse):
    return b.apply(linear_recurrence, b.batched(a), b.batched(x),
                   b.axes(b.constant(axis, "the axis"), a.rank), reverse)
