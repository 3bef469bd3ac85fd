"""NumPy's products: dot, matmul (and the `@` operator), inner, outer, vdot, tensordot,
einsum, kron, cross.

All are written in the subset over three products: the primitive `dot` (1-d and 2-d
operands: BLAS on llvm), the primitive `batch_matmul` (stacks of matrices with the
same batch axes: a loop of BLAS calls) and the elementwise `*` with broadcasting.
Which axes to move, fold, sum or broadcast is decided at compile time from the shapes
by the `@compile_time` helpers below (plain Python), so a compiled product is only
views, reshapes and one of those products, and its derivatives of every order come
from their rules.

Dtypes are NumPy's: the result has the promoted dtype of the operands (a Python
number counts as an array here, as in np.dot: `np.dot(x32, 2.0)` is float64), int
operands give int results (no BLAS), float32 stays float32 (sgemm).
"""

import math

import numpy as np

from ..errors import MyiaShapeError, MyiaTypeError, MyiaValueError
from ..prim import compile_time
from ..prim import ops as P
from .np_shape import element_count

# ---- compile-time helpers shared by several products ------------------------------------


@compile_time
def _result_dtype(dtype_a, dtype_b):
    """NumPy's promoted dtype of two operands (numbers as arrays)."""
    return np.result_type(np.dtype(dtype_a), np.dtype(dtype_b)).name


@compile_time
def _as_matrix(shape):
    """An array's shape folded to what `dot` takes: (k,) for a 1-d array, (rows, k)
    for any other (its leading axes folded into rows)."""
    if len(shape) <= 1:
        return shape
    return (math.prod(shape[:-1]), shape[-1])


def _moved_first(rank, axis):
    """The permutation that moves `axis` to the front (None: it is there already)."""
    if axis == 0:
        return None
    return (axis,) + tuple(i for i in range(rank) if i != axis)


def _as_dtype(x, dtype):
    if P.dtype(x) == dtype:
        return x
    return P.astype(x, dtype)


def _permuted(x, perm):
    """transpose(x, perm), where None is the identity."""
    if perm is None:
        return x
    return P.transpose(x, perm)


def _reshaped(x, shape):
    """reshape(x, shape), where None leaves x as it is."""
    if shape is None:
        return x
    return P.reshape(x, shape)


def _scaled(a, b):
    """a * b where one is 0-d, in the dtype NumPy's products give."""
    return _as_dtype(a * b, _result_dtype(P.dtype(a), P.dtype(b)))


# ---- dot, matmul, inner, outer, vdot -------------------------------------------------------


def _fmt(shape):
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


@compile_time
def _dot_plan(sa, sb):
    """np.dot of n-d operands: (how b is permuted, its folded (k, cols) shape, the
    result's shape), checking that the last axis of a meets the second-to-last of b."""
    kb = -1 if len(sb) == 1 else -2
    if sa[-1] != sb[kb]:
        raise MyiaShapeError(
            f"np.dot of shapes {_fmt(sa)} and {_fmt(sb)}: shapes not aligned: {sa[-1]} "
            f"(dim {len(sa) - 1}) != {sb[kb]} (dim {len(sb) + kb})",
            hint="np.dot sums over the last axis of a and the second-to-last of b")
    if len(sb) == 1:
        return None, sb, sa[:-1]
    return (_moved_first(len(sb), len(sb) - 2), (sb[-2], math.prod(sb[:-2]) * sb[-1]),
            sa[:-1] + sb[:-2] + sb[-1:])


def np_dot(a, b):
    if P.ndim(a) == 0 or P.ndim(b) == 0:
        return _scaled(a, b)
    if P.ndim(a) <= 2 and P.ndim(b) <= 2:
        return P.dot(a, b)
    perm_b, shape_b, shape = _dot_plan(P.shape(a), P.shape(b))
    a2 = P.reshape(a, _as_matrix(P.shape(a)))
    b2 = P.reshape(_permuted(b, perm_b), shape_b)
    return P.reshape(P.dot(a2, b2), shape)


@compile_time
def _matmul_plan(sa, sb):
    """np.matmul of operands of which one at least is 3-d or more: (a's shape with a
    1-d operand promoted to (1, k) and its batch axes broadcast, the same for b, the
    result's shape), or the error NumPy gives."""
    what = f"matmul of shapes {_fmt(sa)} and {_fmt(sb)}"
    for k, s in enumerate((sa, sb)):
        if len(s) == 0:
            raise MyiaShapeError(
                f"{what}: operand {k} is a scalar; matmul needs arrays of 1 dimension or more",
                hint="use `*` (or np.dot) to multiply by a scalar")
    pa = (1,) + sa if len(sa) == 1 else sa
    pb = sb + (1,) if len(sb) == 1 else sb
    if pa[-1] != pb[-2]:
        raise MyiaShapeError(
            f"{what}: the inner dimensions {pa[-1]} and {pb[-2]} differ",
            hint="for A @ B, the last dimension of A must equal the second-to-last of B")
    try:
        batch = np.broadcast_shapes(pa[:-2], pb[:-2])
    except ValueError:
        raise MyiaShapeError(
            f"{what}: the batch axes {_fmt(pa[:-2])} and {_fmt(pb[:-2])} do not "
            f"broadcast") from None
    shape = batch + (pa[-2],) * (len(sa) > 1) + (pb[-1],) * (len(sb) > 1)
    return batch + pa[-2:], batch + pb[-2:], shape


def _broadcast_to(x, shape):
    if P.shape(x) == shape:
        return x
    return P.broadcast_to(x, shape)


def np_matmul(a, b):
    if P.ndim(a) == 0 or P.ndim(b) == 0:
        return _matmul_plan(P.shape(a), P.shape(b))  # an error
    if P.ndim(a) <= 2 and P.ndim(b) <= 2:
        return P.dot(a, b)
    shape_a, shape_b, shape = _matmul_plan(P.shape(a), P.shape(b))
    if P.ndim(b) <= 2:
        # (..., m, k) @ (k, n): one product, with the batch axes folded into rows
        return P.reshape(P.dot(P.reshape(a, _as_matrix(P.shape(a))), b), shape)
    # a 1-d `a` is a row, (1, k), broadcast like the batch axes
    out = P.batch_matmul(_broadcast_to(a, shape_a), _broadcast_to(b, shape_b))
    if P.ndim(a) == 1:
        return P.reshape(out, shape)  # without the row's axis
    return out


@compile_time
def _inner_plan(sa, sb):
    """np.inner: (a folded to (rows, k) or (k,), b the same, the result's shape)."""
    if sa[-1] != sb[-1]:
        raise MyiaShapeError(
            f"np.inner of shapes {_fmt(sa)} and {_fmt(sb)}: the last dimensions "
            f"{sa[-1]} and {sb[-1]} differ")
    return _as_matrix.impl(sa), _as_matrix.impl(sb), sa[:-1] + sb[:-1]


def np_inner(a, b):
    if P.ndim(a) == 0 or P.ndim(b) == 0:
        return _scaled(a, b)
    shape_a, shape_b, shape = _inner_plan(P.shape(a), P.shape(b))
    if P.ndim(a) == 1 and P.ndim(b) == 1:
        return P.dot(a, b)
    a2 = P.reshape(a, shape_a)
    b2 = P.transpose(P.reshape(b, shape_b), None)
    return P.reshape(P.dot(a2, b2), shape)


def np_outer(a, b):
    column = P.reshape(a, (element_count(P.shape(a)), 1))
    row = P.reshape(b, (1, element_count(P.shape(b))))
    return column * row


@compile_time
def _vdot_size(sa, sb):
    n = math.prod(sa)
    if n != math.prod(sb):
        raise MyiaShapeError(
            f"np.vdot of shapes {_fmt(sa)} and {_fmt(sb)}: they have {n} and "
            f"{math.prod(sb)} elements; vdot needs as many in both")
    return (n,)


def np_vdot(a, b):
    n = _vdot_size(P.shape(a), P.shape(b))
    return P.dot(P.reshape(a, n), P.reshape(b, n))


# ---- tensordot ---------------------------------------------------------------------------


@compile_time
def _tensordot_plan(sa, sb, axes):
    """np.tensordot: (a's permutation, its (rows, k) shape, b's permutation, its
    (k, cols) shape, the result's shape)."""
    what = f"np.tensordot of shapes {_fmt(sa)} and {_fmt(sb)}"
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool):
        if not 0 <= axes <= min(len(sa), len(sb)):
            raise MyiaValueError(f"{what}: cannot sum over the last {axes} axes of a and "
                                 f"the first {axes} of b")
        axes_a, axes_b = tuple(range(len(sa) - axes, len(sa))), tuple(range(axes))
    else:
        try:
            axes_a, axes_b = axes
        except (TypeError, ValueError):
            raise MyiaTypeError(
                f"{what}: axes must be an int or a pair of sequences of axes, got {axes!r}"
            ) from None
        axes_a = tuple(axes_a) if isinstance(axes_a, (tuple, list)) else (axes_a,)
        axes_b = tuple(axes_b) if isinstance(axes_b, (tuple, list)) else (axes_b,)
        if len(axes_a) != len(axes_b):
            raise MyiaValueError(f"{what}: axes {axes_a} and {axes_b} are not as many")
        axes_a = _normal_axes(axes_a, len(sa), what)
        axes_b = _normal_axes(axes_b, len(sb), what)
    for i, j in zip(axes_a, axes_b):
        if sa[i] != sb[j]:
            raise MyiaShapeError(f"{what}: shape mismatch for the sum over axis {i} of a "
                                 f"({sa[i]}) and axis {j} of b ({sb[j]})")
    free_a = tuple(i for i in range(len(sa)) if i not in axes_a)
    free_b = tuple(i for i in range(len(sb)) if i not in axes_b)
    k = math.prod(sa[i] for i in axes_a)
    rows = math.prod(sa[i] for i in free_a)
    cols = math.prod(sb[i] for i in free_b)
    return (_perm_or_none(free_a + axes_a), (rows, k), _perm_or_none(axes_b + free_b),
            (k, cols), tuple(sa[i] for i in free_a) + tuple(sb[i] for i in free_b))


def _normal_axes(axes, rank, what):
    out = []
    for ax in axes:
        if not -rank <= ax < rank:
            raise MyiaValueError(f"{what}: axis {ax} is out of bounds for an array of "
                                 f"rank {rank}")
        if ax % rank in out:
            raise MyiaValueError(f"{what}: axis {ax} is repeated")
        out.append(ax % rank)
    return tuple(out)


def _perm_or_none(perm):
    return None if tuple(perm) == tuple(range(len(perm))) else tuple(perm)


def np_tensordot(a, b, axes=2):
    perm_a, shape_a, perm_b, shape_b, shape = _tensordot_plan(P.shape(a), P.shape(b), axes)
    a2 = P.reshape(_permuted(a, perm_a), shape_a)
    b2 = P.reshape(_permuted(b, perm_b), shape_b)
    return _as_dtype(P.reshape(P.dot(a2, b2), shape), _result_dtype(P.dtype(a), P.dtype(b)))


# ---- kron, cross ---------------------------------------------------------------------------


@compile_time
def _kron_plan(sa, sb):
    """np.kron: (a's shape with a 1 after each axis, b's with a 1 before each axis,
    both padded to the same rank, the result's shape)."""
    n = max(len(sa), len(sb))
    pa = (1,) * (n - len(sa)) + tuple(sa)
    pb = (1,) * (n - len(sb)) + tuple(sb)
    return (sum(((d, 1) for d in pa), ()), sum(((1, d) for d in pb), ()),
            tuple(x * y for x, y in zip(pa, pb)))


def np_kron(a, b):
    if P.ndim(a) == 0 or P.ndim(b) == 0:
        return _scaled(a, b)
    shape_a, shape_b, shape = _kron_plan(P.shape(a), P.shape(b))
    return P.reshape(P.reshape(a, shape_a) * P.reshape(b, shape_b), shape)


@compile_time
def _cross_plan(sa, sb, axisa, axisb, axisc, axis):
    """np.cross: (a's permutation that brings its vector axis first, b's, the lengths of
    the vectors (2 or 3), the shape of the result with its vector axis first, the
    permutation that puts that axis at axisc)."""
    what = f"np.cross of shapes {_fmt(sa)} and {_fmt(sb)}"
    if axis is not None:
        axisa = axisb = axisc = axis
    ax_a = _normal_axes((axisa,), len(sa), what + " (axisa)")[0] if sa else None
    ax_b = _normal_axes((axisb,), len(sb), what + " (axisb)")[0] if sb else None
    if ax_a is None or ax_b is None or sa[ax_a] not in (2, 3) or sb[ax_b] not in (2, 3):
        raise MyiaValueError(f"{what}: incompatible dimensions for cross product "
                             f"(dimension must be 2 or 3)")
    lead_a = tuple(d for i, d in enumerate(sa) if i != ax_a)
    lead_b = tuple(d for i, d in enumerate(sb) if i != ax_b)
    try:
        lead = np.broadcast_shapes(lead_a, lead_b)
    except ValueError:
        raise MyiaShapeError(f"{what}: the axes other than the vectors' ({_fmt(lead_a)} "
                             f"and {_fmt(lead_b)}) do not broadcast") from None
    n_out = 3 if 3 in (sa[ax_a], sb[ax_b]) else 0
    rank = len(lead) + (n_out > 0)
    ax_c = _normal_axes((axisc,), rank, what + " (axisc)")[0] if rank else 0
    perm_c = None
    if n_out and ax_c != 0:
        perm_c = tuple(range(1, ax_c + 1)) + (0,) + tuple(range(ax_c + 1, rank))
    return (_moved_first(len(sa), ax_a), _moved_first(len(sb), ax_b), sa[ax_a],
            sb[ax_b], (3,) + lead, perm_c)


def _stacked(c0, c1, c2, shape):
    """The array of `shape` (3, ...) whose rows are c0, c1, c2."""
    zeros = P.full(shape, 0, P.dtype(c0))
    return P.getitem_grad(zeros, 0, c0) + P.getitem_grad(zeros, 1, c1) + \
        P.getitem_grad(zeros, 2, c2)


def np_cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    perm_a, perm_b, na, nb, shape, perm_c = _cross_plan(P.shape(a), P.shape(b), axisa,
                                                         axisb, axisc, axis)
    u = _permuted(a, perm_a)
    v = _permuted(b, perm_b)
    if na == 2 and nb == 2:
        return u[0] * v[1] - u[1] * v[0]
    if na == 2:
        c = _stacked(u[1] * v[2], -(u[0] * v[2]), u[0] * v[1] - u[1] * v[0], shape)
    elif nb == 2:
        c = _stacked(-(u[2] * v[1]), u[2] * v[0], u[0] * v[1] - u[1] * v[0], shape)
    else:
        c = _stacked(u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                     u[0] * v[1] - u[1] * v[0], shape)
    return _permuted(c, perm_c)


# ---- einsum ----------------------------------------------------------------------------------

# The plan of an einsum (`_einsum_plan`), computed at compile time from the subscripts and
# the operands' shapes.  Labels are ints: ord(letter), or -1, -2... for the axes an
# ellipsis stands for (counted from the right, so that they broadcast as NumPy's do).
#   1. each operand is prepared on its own: its repeated labels become one axis (a
#      diagonal: a strided slice of the array with those axes folded), the axes of
#      size 1 that broadcast against a longer one elsewhere are dropped, and the labels
#      no other operand and not the output has are summed;
#   2. operands are combined left to right, two at a time, keeping only the labels that
#      the output or a later operand needs: with `*` when nothing is summed, `dot` when
#      no label is kept on both sides, `batch_matmul` otherwise (the shared kept labels
#      as batch axes), or `*` then a sum when the batch is all there is;
#   3. the result's axes are put in the output's order, and its dtype made NumPy's.

_MULTIPLY, _MULTIPLY_SUM, _DOT, _BATCH = 0, 1, 2, 3


def _einsum_error(subscripts, message):
    return MyiaValueError(f"einsum {subscripts!r}: {message}",
                          hint="subscripts are letters, one per axis, with `...` for any "
                               "number of axes, e.g. 'ij,jk->ik' or '...ij,...jk'")


def _parse_term(term, rank, k, subscripts):
    """The labels of operand k (of rank `rank`) from its subscripts."""
    if term.count("...") > 1 or "." in term.replace("...", ""):
        raise _einsum_error(subscripts, f"bad ellipsis in {term!r}")
    head, dots, tail = term.partition("...")
    for ch in head + tail:
        if not ch.isascii() or not ch.isalpha():
            raise _einsum_error(subscripts, f"{ch!r} is not a valid subscript")
    letters = len(head) + len(tail)
    if not dots:
        if letters != rank:
            raise _einsum_error(subscripts, f"operand {k} has {rank} dimensions but its "
                                            f"subscripts {term!r} name {letters}")
        return [ord(c) for c in head]
    if letters > rank:
        raise _einsum_error(subscripts, f"operand {k} has {rank} dimensions but its "
                                        f"subscripts {term!r} name {letters}")
    return [ord(c) for c in head] + list(range(letters - rank, 0)) + [ord(c) for c in tail]


def _parse_einsum(subscripts, shapes):
    """(labels of each operand, labels of the output)."""
    if not isinstance(subscripts, str):
        raise MyiaTypeError(f"einsum takes its subscripts as a string first, got "
                            f"{subscripts!r}", hint="e.g. np.einsum('ij,jk->ik', a, b)")
    s = subscripts.replace(" ", "")
    inputs, arrow, output = s.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(shapes):
        raise _einsum_error(subscripts, f"{len(terms)} operands in the subscripts, "
                                        f"{len(shapes)} given")
    labels = [_parse_term(t, len(shape), k, subscripts)
              for k, (t, shape) in enumerate(zip(terms, shapes))]
    n_ell = max([-min(ls, default=0) for ls in labels] + [0])
    ellipsis = list(range(-n_ell, 0))
    if not arrow:
        counts = {}
        for ls in labels:
            for lab in ls:
                if lab > 0:
                    counts[lab] = counts.get(lab, 0) + 1
        return labels, ellipsis + sorted(lab for lab, n in counts.items() if n == 1)
    if output.count("...") > 1 or "." in output.replace("...", ""):
        raise _einsum_error(subscripts, f"bad ellipsis in the output {output!r}")
    head, dots, tail = output.partition("...")
    if not dots and n_ell:
        raise _einsum_error(subscripts, "the output has no '...' for the axes that '...' "
                                        "stands for in the operands")
    out = [ord(c) for c in head] + ellipsis + [ord(c) for c in tail]
    seen = set()
    present = {lab for ls in labels for lab in ls}
    for c in head + tail:
        if not c.isascii() or not c.isalpha():
            raise _einsum_error(subscripts, f"{c!r} is not a valid subscript")
        if ord(c) in seen:
            raise _einsum_error(subscripts, f"the output names {c!r} twice")
        if ord(c) not in present:
            raise _einsum_error(subscripts, f"the output names {c!r}, which no operand has")
        seen.add(ord(c))
    return labels, out


def _label_name(lab):
    return repr(chr(lab)) if lab > 0 else "..."


def _einsum_sizes(subscripts, labels, shapes):
    """{label: its size}: equal everywhere, except 1 against n (broadcasting)."""
    sizes = {}
    for k, (ls, shape) in enumerate(zip(labels, shapes)):
        mine = {}
        for lab, n in zip(ls, shape):
            if mine.setdefault(lab, n) != n:
                raise _einsum_error(subscripts, f"the axes of operand {k} labelled "
                                                f"{_label_name(lab)} differ ({mine[lab]} != {n})")
        for lab, n in mine.items():
            m = sizes.get(lab, 1)
            if m != 1 and n != 1 and m != n:
                raise _einsum_error(subscripts, f"the label {_label_name(lab)} is {m} long in "
                                                f"one operand and {n} in operand {k}")
            sizes[lab] = max(m, n)
    return sizes


def _diagonal_step(ls, shape):
    """The step that takes the diagonals of the repeated labels of one operand: None
    if there are none, else (the permutation that puts the axes of each repeated label
    together, last; the shape with each group folded into one axis; the slice of each
    folded axis that holds the diagonal; the shape after it); and the operand's labels
    and shape after it."""
    repeated = [lab for lab in dict.fromkeys(ls) if ls.count(lab) > 1]
    if not repeated:
        return None, list(ls), list(shape)
    rest = [i for i, lab in enumerate(ls) if lab not in repeated]
    groups = [[i for i, x in enumerate(ls) if x == lab] for lab in repeated]
    folded = [shape[i] for i in rest]
    index = [slice(None)] * len(rest)
    diagonal = []
    for pos in groups:
        n, r = shape[pos[0]], len(pos)
        folded.append(n ** r)
        # in the C-order flattening of (n,) * r, (i, ..., i) is at i * (1 + n + ... + n^(r-1))
        index.append(slice(None, None, sum(n ** j for j in range(r))))
        diagonal.append(n)
    new_shape = [shape[i] for i in rest] + diagonal
    step = (_perm_or_none(rest + sum(groups, [])), tuple(folded), tuple(index), tuple(new_shape))
    return step, [ls[i] for i in rest] + repeated, new_shape


def _pair_step(la, lb, sizes, keep):
    """How to combine operands with labels la and lb: (the step, the result's labels)."""
    batch = [x for x in la if x in lb and x in keep]
    summed = [x for x in la if x in lb and x not in keep]
    fa = [x for x in la if x not in lb]
    fb = [x for x in lb if x not in la]

    def shape(labs):
        return tuple(sizes[x] for x in labs)

    def perm(ls, order):
        return _perm_or_none([ls.index(x) for x in order])

    if not summed:
        sa = shape(batch + fa) + (1,) * len(fb)
        sb = shape(batch) + (1,) * len(fa) + shape(fb)
        step = (_MULTIPLY, perm(la, batch + fa), _new_shape_or_none(sa, shape(batch + fa)),
                perm(lb, batch + fb), _new_shape_or_none(sb, shape(batch + fb)), None, None)
        return step, batch + fa + fb
    k = math.prod(shape(summed))
    if not batch:
        sa = (math.prod(shape(fa)), k) if fa else (k,)
        sb = (k, math.prod(shape(fb))) if fb else (k,)
        step = (_DOT, perm(la, fa + summed), sa, perm(lb, summed + fb), sb, None,
                shape(fa + fb) if fa or fb else None)
        return step, fa + fb
    if not fa and not fb:
        axes = tuple(range(len(batch), len(batch) + len(summed)))
        step = (_MULTIPLY_SUM, perm(la, batch + summed), None, perm(lb, batch + summed), None,
                axes, None)
        return step, batch
    sa = shape(batch) + (math.prod(shape(fa)), k)
    sb = shape(batch) + (k, math.prod(shape(fb)))
    step = (_BATCH, perm(la, batch + fa + summed), sa, perm(lb, batch + summed + fb), sb, None,
            shape(batch + fa + fb))
    return step, batch + fa + fb


def _new_shape_or_none(shape, current):
    return None if tuple(shape) == tuple(current) else tuple(shape)


@compile_time
def _einsum_plan(subscripts, shapes, dtypes):
    """The plan of np.einsum (see above): (preparation of each operand, combination of
    each operand after the first with what came before, the final permutation, the
    result's dtype)."""
    labels, out = _parse_einsum(subscripts, shapes)
    sizes = _einsum_sizes(subscripts, labels, shapes)
    diagonals, labels_d = [], []
    for ls, shape in zip(labels, shapes):
        diagonal, ls, shape = _diagonal_step(ls, shape)
        # an axis of size 1 against a longer one elsewhere: the operand does not vary there
        dropped = [i for i, lab in enumerate(ls) if shape[i] == 1 and sizes[lab] > 1]
        diagonals.append((diagonal, tuple(d for i, d in enumerate(shape) if i not in dropped)
                          if dropped else None))
        labels_d.append([lab for i, lab in enumerate(ls) if i not in dropped])
    preps, prepared = [], []
    for k, (ls, (diagonal, squeezed)) in enumerate(zip(labels_d, diagonals)):
        elsewhere = set(out).union(*(labels_d[j] for j in range(len(labels_d)) if j != k))
        summed = tuple(i for i, lab in enumerate(ls) if lab not in elsewhere)
        preps.append((diagonal, squeezed, summed or None))
        prepared.append([lab for lab in ls if lab in elsewhere])
    pairs = []
    acc = prepared[0]
    for k in range(1, len(prepared)):
        keep = set(out).union(*prepared[k + 1:])
        step, acc = _pair_step(acc, prepared[k], sizes, keep)
        pairs.append(step)
    final = _perm_or_none([acc.index(lab) for lab in out])
    dtype = np.result_type(*[np.dtype(d) for d in dtypes]).name
    return tuple(preps), tuple(pairs), final, dtype


def _shapes(xs):
    if len(xs) == 0:
        return ()
    return (P.shape(xs[0]),) + _shapes(P.tuple_tail(xs))


def _dtypes(xs):
    if len(xs) == 0:
        return ()
    return (P.dtype(xs[0]),) + _dtypes(P.tuple_tail(xs))


def _einsum_prepared(x, prep):
    diagonal, squeezed, summed = prep
    if diagonal is not None:
        perm, folded, index, shape = diagonal
        x = P.reshape(P.reshape(_permuted(x, perm), folded)[index], shape)
    x = _reshaped(x, squeezed)
    if summed is None:
        return x
    return P.reduce_sum(x, summed, False)


def _einsum_pair(a, b, step):
    kind, perm_a, shape_a, perm_b, shape_b, axes, shape = step
    a = _reshaped(_permuted(a, perm_a), shape_a)
    b = _reshaped(_permuted(b, perm_b), shape_b)
    if kind == _MULTIPLY:
        return a * b
    if kind == _MULTIPLY_SUM:
        return P.reduce_sum(a * b, axes, False)
    if kind == _DOT:
        return _reshaped(P.dot(a, b), shape)
    return _reshaped(P.batch_matmul(a, b), shape)


def _einsum_combined(acc, operands, left, subscripts, shapes, dtypes):
    """`acc` combined with the last len(left) operands.  (Only the type of `left`
    changes from one call to the next, so that inference keeps every other argument's
    value: the plan is found again at each step, and the step's number from the number
    of operands left.)"""
    if len(left) == 0:
        return acc
    preps, pairs, _, _ = _einsum_plan(subscripts, shapes, dtypes)
    k = len(operands) - len(left)
    b = _einsum_prepared(operands[k], preps[k])
    return _einsum_combined(_einsum_pair(acc, b, pairs[k - 1]), operands, P.tuple_tail(left),
                            subscripts, shapes, dtypes)


def np_einsum(subscripts, *operands):
    shapes, dtypes = _shapes(operands), _dtypes(operands)
    preps, _, final, dtype = _einsum_plan(subscripts, shapes, dtypes)
    first = _einsum_prepared(operands[0], preps[0])
    out = _einsum_combined(first, operands, P.tuple_tail(shapes), subscripts, shapes, dtypes)
    return _as_dtype(_permuted(out, final), dtype)


# ---- norms ---------------------------------------------------------------------------------


@compile_time
def _norm_plan(ndim, ord, axis):
    """("vector" | "matrix", the axes, ord) of np.linalg.norm, checked."""
    if axis is None:
        axes = tuple(range(ndim))
        kind = "vector" if ndim == 1 or (ord is None and ndim != 2) else "matrix"
        if ord is None:
            kind = "vector"  # the Frobenius norm is the 2-norm of all the elements
    else:
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        axes = tuple(a % ndim for a in axes)
        kind = "vector" if len(axes) == 1 else "matrix"
    if kind == "vector" and ord in ("fro", "nuc"):
        raise MyiaValueError(f"invalid norm order {ord!r} for vectors")
    if kind == "matrix" and ord not in (None, "fro", 1, -1, math.inf, -math.inf):
        raise MyiaValueError(
            f"the matrix norm of order {ord!r} needs singular values, which the subset does "
            f"not compute", hint="use ord=None ('fro'), 1, -1, np.inf or -np.inf")
    return kind, axes, ord


@compile_time
def _plan_part(plan, i):
    return plan[i]


def _vector_norm(x, axes, ord, keepdims):
    a = P.abs(x)
    if ord is None:
        return P.sqrt(P.reduce_sum(x * x, axes, keepdims))
    if ord == 2:
        return P.sqrt(P.reduce_sum(x * x, axes, keepdims))
    if ord == 1:
        return P.reduce_sum(a, axes, keepdims)
    if ord == math.inf:
        return P.reduce_max(a, axes, keepdims)
    if ord == -math.inf:
        return -P.reduce_max(-a, axes, keepdims)
    if ord == 0:
        return P.reduce_sum(P.astype(x != 0, P.dtype(a)), axes, keepdims)
    return P.reduce_sum(a ** ord, axes, keepdims) ** (1.0 / ord)


def _matrix_norm(x, axes, ord, keepdims):
    if ord is None:
        return P.sqrt(P.reduce_sum(x * x, axes, keepdims))
    if ord == "fro":
        return P.sqrt(P.reduce_sum(x * x, axes, keepdims))
    rows, cols = axes
    a = P.abs(x)
    if ord == 1:  # the largest column sum
        return P.reduce_max(P.reduce_sum(a, rows, True), cols, True) if keepdims else \
            P.reduce_max(P.reduce_sum(a, rows, True), axes, False)
    if ord == -1:
        return -P.reduce_max(-P.reduce_sum(a, rows, True), axes, keepdims)
    if ord == math.inf:  # the largest row sum
        return P.reduce_max(P.reduce_sum(a, cols, True), axes, keepdims)
    return -P.reduce_max(-P.reduce_sum(a, cols, True), axes, keepdims)


def np_linalg_norm(x, ord=None, axis=None, keepdims=False):
    plan = _norm_plan(P.ndim(x), ord, axis)
    axes = _plan_part(plan, 1)
    if _plan_part(plan, 0) == "vector":
        return _vector_norm(x, axes, ord, keepdims)
    return _matrix_norm(x, axes, ord, keepdims)


NAMES = {
    np.linalg.norm: np_linalg_norm,
    np.dot: np_dot,
    np.matmul: np_matmul,
    np.inner: np_inner,
    np.outer: np_outer,
    np.vdot: np_vdot,
    np.tensordot: np_tensordot,
    np.einsum: np_einsum,
    np.kron: np_kron,
    np.cross: np_cross,
}
