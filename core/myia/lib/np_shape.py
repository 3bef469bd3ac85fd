"""NumPy's shape functions and rearrangements: reshape, squeeze, transpose, moveaxis,
concatenate, stack, split, tile, repeat, pad, flip, rot90, roll, diag, triu, sort...

Shapes are static, so each function computes at compile time (`@compile_time`
helpers, below) what it does to the axes, and is then one or two primitives:

- a reshape, a transpose or a slice (a view: flip, rot90, diagonal...);
- a concatenation or a split (`P.concatenate`, `P.split`) of a tuple of arrays (roll:
  the two pieces of each axis swapped);
- a gather of the elements at flat positions known at compile time (pad, repeat,
  tile), `take_along_axis` of a constant index array: the positions are what NumPy's
  own function does to an array of positions, so its semantics (and its checks) are
  NumPy's by construction;
- a sort: `take_along_axis(x, argsort(x))`.

Their derivatives come from those primitives.  Sequences of arrays (concatenate's,
stack's...) are tuples or lists; split and its relatives return a list, as NumPy does.
Arguments that say what to do (axes, counts, shifts, widths, pad modes) must be known
at compile time; the arrays (and a pad's constant) are values.
"""

import contextlib
import functools
import math

import numpy as np

from ..errors import MyiaShapeError, MyiaTypeError, MyiaValueError
from ..prim import compile_time
from ..prim import ops as P
from ..prim.containers import ListValue
from ..prim.shape import check_compile_time_size

# ---- compile-time helpers ------------------------------------------------------------------


@contextlib.contextmanager
def _numpy_checks():
    """NumPy's errors about arguments, as the Myia errors that stand for them."""
    try:
        yield
    except np.exceptions.AxisError as e:
        raise MyiaShapeError(str(e)) from None
    except (ValueError, IndexError) as e:
        raise MyiaValueError(str(e)) from None
    except TypeError as e:
        raise MyiaTypeError(str(e)) from None


def _dummy(shape):
    """An array of `shape` that takes no memory (a zero-stride view), for asking NumPy
    what one of its functions does to a shape."""
    return np.broadcast_to(np.int8(0), shape)


def _permutation(ndim, fn):
    """The permutation of axes that `fn` applies to an array of rank ndim: read from the
    shape it gives a dummy array whose axis i has length i + 2."""
    with _numpy_checks():
        out = fn(_dummy(tuple(range(2, ndim + 2))))
    return tuple(int(n) - 2 for n in out.shape)


def _positions(shape):
    """The flat position of each element of an array of `shape`."""
    return np.arange(math.prod(shape), dtype=np.int64).reshape(shape)


@compile_time
def _squeezed(shape, axis):
    """The shape of np.squeeze."""
    with _numpy_checks():
        return np.squeeze(_dummy(shape), axis).shape


@compile_time
def _expanded(shape, axis):
    """The shape of np.expand_dims."""
    with _numpy_checks():
        return np.expand_dims(_dummy(shape), axis).shape


@compile_time
def _at_least(shape, n):
    """The shape of np.atleast_1d/2d/3d (n = 1, 2, 3)."""
    fn = (np.atleast_1d, np.atleast_2d, np.atleast_3d)[n - 1]
    return fn(_dummy(shape)).shape


@compile_time
def _transposed(ndim, axes):
    """The permutation of np.transpose(x, axes) (negative axes allowed)."""
    return _permutation(ndim, lambda x: np.transpose(x, axes))


@compile_time
def _swapped(ndim, axis1, axis2):
    """The permutation of np.swapaxes."""
    return _permutation(ndim, lambda x: np.swapaxes(x, axis1, axis2))


@compile_time
def _moved(ndim, source, destination):
    """The permutation of np.moveaxis."""
    return _permutation(ndim, lambda x: np.moveaxis(x, source, destination))


@compile_time
def _rolled_axes(ndim, axis, start):
    """The permutation of np.rollaxis."""
    return _permutation(ndim, lambda x: np.rollaxis(x, axis, start))


@compile_time
def _shape_arg(shape):
    """A shape argument as a tuple (NumPy takes an int for a 1-d shape)."""
    return shape if isinstance(shape, tuple) else (shape,)


@compile_time
def _result_dtype(dtypes):
    """The dtype NumPy gives a concatenation of arrays of these dtypes."""
    if not dtypes:
        raise MyiaValueError("need at least one array to concatenate")
    return np.result_type(*dtypes).name


@compile_time
def _stacked_item_shape(shapes, axis):
    """The shape each array takes in np.stack (a new axis of length 1 at `axis`)."""
    if not shapes:
        raise MyiaValueError("need at least one array to stack")
    if len(set(shapes)) != 1:
        raise MyiaShapeError("all input arrays must have the same shape, got "
                             + ", ".join(map(str, shapes)))
    with _numpy_checks():
        return np.expand_dims(_dummy(shapes[0]), axis).shape


@compile_time
def _hstack_axis(ndim):
    """np.hstack joins 1-d arrays along axis 0, others along axis 1."""
    return 0 if ndim == 1 else 1


@compile_time
def _split_points(shape, indices_or_sections, axis, equal):
    """The split points (non-decreasing, in [0, n]) of np.split (`equal`: the sections
    must have one length) or np.array_split, along `axis`."""
    if not shape:
        raise MyiaValueError("a zero-dimensional array cannot be split")
    with _numpy_checks():
        axis = np.lib.array_utils.normalize_axis_index(axis, len(shape))
    n = shape[axis]
    if isinstance(indices_or_sections, tuple):
        points = [0, *indices_or_sections, n]
    else:
        sections = int(indices_or_sections)
        if sections <= 0:
            raise MyiaValueError("number sections must be larger than 0.")
        each, extras = divmod(n, sections)
        if equal and extras:
            raise MyiaValueError("array split does not result in an equal division",
                                 hint=f"an axis of length {n} does not divide into "
                                      f"{sections} sections: np.array_split allows it")
        sizes = [each + 1] * extras + [each] * (sections - extras)
        points = [0, *np.cumsum(sizes).tolist()]
    # NumPy's piece k is x[points[k]:points[k + 1]]: as Python slices them
    pieces = [range(n)[a:b] for a, b in zip(points, points[1:])]
    bounds = [p.start if len(p) else None for p in pieces]
    starts = [0]
    for p in pieces:
        starts.append(starts[-1] + len(p))
    if any(b is not None and b != s for b, s in zip(bounds, starts)) or starts[-1] != n:
        raise MyiaValueError(
            f"split indices {indices_or_sections} give overlapping pieces",
            hint="give the split points in increasing order")
    return tuple(starts[1:-1])


@compile_time
def _split_axis(ndim, name):
    """The axis of np.hsplit, np.vsplit or np.dsplit, for an array of rank ndim."""
    least, axis = {"hsplit": (1, 1 if ndim > 1 else 0), "vsplit": (2, 0),
                   "dsplit": (3, 2)}[name]
    if ndim < least:
        raise MyiaValueError(f"{name} only works on arrays of {least} or more dimensions")
    return axis


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _padded(positions, pad_width, mode):
    if mode not in _PAD_MODES:
        raise MyiaValueError(f"np.pad mode {mode!r} is not supported",
                             hint="use one of " + ", ".join(map(repr, _PAD_MODES)))
    if mode == "constant":
        # the constants follow the elements: the one before axis k at size + 2k, the
        # one after it at size + 2k + 1
        after = positions.size + np.arange(2 * positions.ndim).reshape(-1, 2)
        return np.pad(positions, pad_width, mode="constant", constant_values=after)
    return np.pad(positions, pad_width, mode=mode)


@compile_time
def _pad_constants(constant_values, ndim):
    """np.pad's constant_values (before, after) for each axis, in order, flat."""
    with _numpy_checks():
        return np.broadcast_to(np.asarray(constant_values), (ndim, 2)).reshape(-1)


#: the gathers: what NumPy's function does to an array of positions
_GATHERS = {
    "tile": lambda positions, reps, _: np.tile(positions, reps),
    "repeat": np.repeat,
    "pad": _padded,
}


@functools.lru_cache(maxsize=64)
def _gathered(op, shape, arg1, arg2):
    """The flat positions in an array of `shape` of the elements of np.<op>(x, arg1,
    arg2), in its shape (the index and the shape helpers below share it)."""
    with _numpy_checks():
        check_compile_time_size(_gathered_size(op, shape, arg1, arg2), f"np.{op}'s result")
        out = _GATHERS[op](_positions(shape), arg1, arg2)
    out.flags.writeable = False
    return out


def _gathered_size(op, shape, arg1, arg2):
    """How many elements np.<op> gives, computed without building them (in Python
    ints: np.repeat(x, 2**62) must be refused, not wrapped around)."""
    n = math.prod(shape)
    if op == "repeat":
        reps = [abs(int(r)) for r in np.asarray(arg1).reshape(-1)]
        along = n if arg2 is None else shape[arg2]
        if len(reps) == 1:
            return n * reps[0] if along else 0
        return (n // along if along else 0) * sum(reps)
    if op == "tile":
        return n * math.prod(abs(int(r)) for r in np.asarray(arg1).reshape(-1))
    widths = np.broadcast_to(np.asarray(arg1), (len(shape), 2))  # pad
    return math.prod(d + abs(int(a)) + abs(int(b)) for d, (a, b) in zip(shape, widths))


@compile_time
def _gather_index(op, shape, arg1, arg2):
    """The flat positions np.<op> reads (a 1-d int64 array)."""
    return _gathered(op, shape, arg1, arg2).reshape(-1)


@compile_time
def _gather_shape(op, shape, arg1, arg2):
    """The shape of the result of np.<op>."""
    return _gathered(op, shape, arg1, arg2).shape


@compile_time
def _roll_cuts(shape, shift, axis):
    """np.roll as ((axis, cut), ...): each axis split at `cut`, its two pieces swapped
    (the shifts along one axis add up, as in NumPy)."""
    with _numpy_checks():
        axes = np.lib.array_utils.normalize_axis_tuple(axis, len(shape), allow_duplicate=True)
        pairs = np.broadcast(shift, axes)
        if pairs.ndim > 1:
            raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
        total = {}
        for by, ax in pairs:
            total[int(ax)] = total.get(int(ax), 0) + int(by)
    return tuple((ax, -by % shape[ax]) for ax, by in sorted(total.items())
                 if shape[ax] and by % shape[ax])


@compile_time
def _flip_index(ndim, axis):
    """The index of np.flip: a reversing slice on the flipped axes."""
    with _numpy_checks():
        axes = range(ndim) if axis is None else \
            np.lib.array_utils.normalize_axis_tuple(axis, ndim)
    return tuple(slice(None, None, -1) if k in axes else slice(None) for k in range(ndim))


@compile_time
def _least_rank(ndim, least):
    """ndim, for a function of arrays of rank `least` or more (np.fliplr, np.flipud)."""
    if ndim < least:
        raise MyiaValueError(f"Input must be >= {least}-d.")
    return ndim


@compile_time
def _rot90_plan(ndim, k, axes):
    """np.rot90 as (index, permutation, index): a flip, a transpose, a flip (NumPy's own
    decomposition)."""
    axes = tuple(axes)
    if len(axes) != 2:
        raise MyiaValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == ndim:
        raise MyiaValueError("Axes must be different.")
    if not (-ndim <= axes[0] < ndim and -ndim <= axes[1] < ndim):
        raise MyiaValueError(f"Axes={axes} out of range for array of ndim={ndim}.")
    keep = (slice(None),) * ndim
    same = tuple(range(ndim))
    swap = list(same)
    swap[axes[0]], swap[axes[1]] = swap[axes[1]], swap[axes[0]]
    k %= 4
    if k == 0:
        return keep, same, keep
    if k == 2:
        return _flip_index.impl(ndim, axes), same, keep
    if k == 1:
        return _flip_index.impl(ndim, axes[1]), tuple(swap), keep
    return keep, tuple(swap), _flip_index.impl(ndim, axes[1])


@compile_time
def _diag_embedding(n, k):
    """np.diag of a vector of length n: (the side N of the matrix, the slice of the
    flattened N x N matrix that holds the diagonal k)."""
    side = n + abs(k)
    start = k if k >= 0 else -k * side
    return side, slice(start, start + n * (side + 1), side + 1)


@compile_time
def _diag_rank(ndim):
    """ndim, for np.diag (a vector or a matrix)."""
    if ndim not in (1, 2):
        raise MyiaValueError("Input must be 1- or 2-d.")
    return ndim


@compile_time
def _diagonal_plan(shape, offset, axis1, axis2):
    """np.diagonal as (permutation, shape, index): the two axes moved last and merged,
    then a slice of stride columns + 1 of the merged axis."""
    with _numpy_checks():
        out_shape = np.diagonal(_dummy(shape), offset, axis1, axis2).shape
        a1, a2 = np.lib.array_utils.normalize_axis_tuple((axis1, axis2), len(shape))
    rest = tuple(k for k in range(len(shape)) if k not in (a1, a2))
    rows, cols = shape[a1], shape[a2]
    count = out_shape[-1]
    start = offset if offset >= 0 else -offset * cols
    diagonal = slice(start, start + count * (cols + 1), cols + 1) if count else slice(0, 0)
    merged = tuple(shape[k] for k in rest) + (rows * cols,)
    return rest + (a1, a2), merged, (slice(None),) * len(rest) + (diagonal,)


@compile_time
def _tri_mask(shape, k):
    """np.tri over the last two axes of `shape`, as NumPy's triu and tril build it."""
    with _numpy_checks():
        return np.tri(*shape[-2:], k=k, dtype=bool)


@compile_time
def _partition_axis(shape, kth, axis):
    """`axis`, once kth is checked as np.partition checks it."""
    n = math.prod(shape) if axis is None else None
    if n is None:
        with _numpy_checks():
            n = shape[np.lib.array_utils.normalize_axis_index(axis, len(shape))]
    for k in (kth if isinstance(kth, tuple) else (kth,)):
        if not -n <= k < n:
            raise MyiaValueError(f"kth(={k}) out of bounds ({n})")
    return axis


# ---- tuples of arrays -----------------------------------------------------------------------


# `f` is a function without free variables: inference then types each call on its own
# (a closure called through a value has one signature for all its calls)


def _each(f, xs):
    """The tuple (f(x) for x in xs) (a tuple of static length)."""
    if len(xs) == 0:
        return ()
    return P.tuple_cons(f(P.tuple_getitem(xs, 0)), _each(f, P.tuple_tail(xs)))


def _each_with(f, xs, arg):
    """The tuple (f(x, arg) for x in xs)."""
    if len(xs) == 0:
        return ()
    return P.tuple_cons(f(P.tuple_getitem(xs, 0), arg), _each_with(f, P.tuple_tail(xs), arg))


def _as_dtype(x, dtype):
    if P.dtype(x) == dtype:
        return x
    return P.astype(x, dtype)


def _join(arrays, axis):
    """np.concatenate of arrays of any dtypes (converted to NumPy's common one)."""
    dtype = _result_dtype(_each(P.dtype, arrays))
    return P.concatenate(_each_with(_as_dtype, arrays, dtype), axis)


# ---- reshaping ------------------------------------------------------------------------------


def np_reshape(a, shape):
    return P.reshape(a, shape)


def np_ravel(a):
    return P.reshape(a, (-1,))


def np_squeeze(a, axis=None):
    return P.reshape(a, _squeezed(P.shape(a), axis))


def np_expand_dims(a, axis):
    return P.reshape(a, _expanded(P.shape(a), axis))


def _atleast_1d(a):
    return P.reshape(a, _at_least(P.shape(a), 1))


def _atleast_2d(a):
    return P.reshape(a, _at_least(P.shape(a), 2))


def _atleast_3d(a):
    return P.reshape(a, _at_least(P.shape(a), 3))


def np_atleast_1d(*arys):
    if len(arys) == 1:
        return _atleast_1d(arys[0])
    return _each(_atleast_1d, arys)


def np_atleast_2d(*arys):
    if len(arys) == 1:
        return _atleast_2d(arys[0])
    return _each(_atleast_2d, arys)


def np_atleast_3d(*arys):
    if len(arys) == 1:
        return _atleast_3d(arys[0])
    return _each(_atleast_3d, arys)


def np_broadcast_to(array, shape):
    return P.broadcast_to(array, _shape_arg(shape))


# ---- axes -----------------------------------------------------------------------------------


def np_transpose(a, axes=None):
    if axes is None:
        return P.transpose(a, None)
    return P.transpose(a, _transposed(P.ndim(a), axes))


def np_swapaxes(a, axis1, axis2):
    return P.transpose(a, _swapped(P.ndim(a), axis1, axis2))


def np_moveaxis(a, source, destination):
    return P.transpose(a, _moved(P.ndim(a), source, destination))


def np_rollaxis(a, axis, start=0):
    return P.transpose(a, _rolled_axes(P.ndim(a), axis, start))


# ---- joining and splitting ------------------------------------------------------------------


def np_concatenate(arrays, axis=0):
    if axis is None:
        return _join(_each(np_ravel, arrays), 0)
    return _join(arrays, axis)


def np_stack(arrays, axis=0):
    shape = _stacked_item_shape(_each(P.shape, arrays), axis)
    return _join(_each_with(P.reshape, arrays, shape), axis)


def np_vstack(tup):
    return _join(_each(_atleast_2d, tup), 0)


def np_hstack(tup):
    arrays = _each(_atleast_1d, tup)
    return _join(arrays, _hstack_axis(P.ndim(arrays[0])))


def np_dstack(tup):
    return _join(_each(_atleast_3d, tup), 2)


def _column(a):
    if P.ndim(a) < 2:
        return P.reshape(a, (-1, 1))
    return a


def np_column_stack(tup):
    return _join(_each(_column, tup), 1)


def np_split(ary, indices_or_sections, axis=0):
    points = _split_points(P.shape(ary), indices_or_sections, axis, True)
    return P.tuple_as(P.split(ary, points, axis), "list")


def np_array_split(ary, indices_or_sections, axis=0):
    points = _split_points(P.shape(ary), indices_or_sections, axis, False)
    return P.tuple_as(P.split(ary, points, axis), "list")


def np_hsplit(ary, indices_or_sections):
    return np_split(ary, indices_or_sections, _split_axis(P.ndim(ary), "hsplit"))


def np_vsplit(ary, indices_or_sections):
    return np_split(ary, indices_or_sections, _split_axis(P.ndim(ary), "vsplit"))


def np_dsplit(ary, indices_or_sections):
    return np_split(ary, indices_or_sections, _split_axis(P.ndim(ary), "dsplit"))


# ---- gathers at positions known at compile time ---------------------------------------------


def _gather(flat, op, shape, arg1, arg2):
    """np.<op>(x, arg1, arg2) of an array x of `shape`, from its elements `flat` (and,
    for a constant pad, the constant after them)."""
    taken = P.take_along_axis(flat, _gather_index(op, shape, arg1, arg2), 0)
    return P.reshape(taken, _gather_shape(op, shape, arg1, arg2))


def np_tile(A, reps):
    return _gather(np_ravel(A), "tile", P.shape(A), reps, None)


def np_repeat(a, repeats, axis=None):
    return _gather(np_ravel(a), "repeat", P.shape(a), repeats, axis)


def _rolled(x, cuts):
    if len(cuts) == 0:
        return x
    axis, cut = cuts[0]
    head, tail = P.split(x, (cut,), axis)
    return _rolled(P.concatenate((tail, head), axis), P.tuple_tail(cuts))


def np_roll(a, shift, axis=None):
    if axis is None:
        flat = np_ravel(a)
        return P.reshape(_rolled(flat, _roll_cuts(P.shape(flat), shift, 0)), P.shape(a))
    return _rolled(a, _roll_cuts(P.shape(a), shift, axis))


def np_pad(array, pad_width, mode="constant", constant_values=0):
    flat = np_ravel(array)
    if mode == "constant":
        # the constants, in the array's dtype (NumPy casts them), after the elements
        if P.kind_of(constant_values) is None:  # one number (maybe a run-time value)
            values = P.broadcast_to(constant_values, (2 * P.ndim(array),))
        else:  # a value per side and axis: constants
            values = _pad_constants(constant_values, P.ndim(array))
        flat = P.concatenate((flat, P.astype(values, P.dtype(array))), 0)
    return _gather(flat, "pad", P.shape(array), pad_width, mode)


# ---- views: flips, rotations, diagonals -----------------------------------------------------


def np_flip(m, axis=None):
    if P.ndim(m) == 0:
        return m
    return m[_flip_index(P.ndim(m), axis)]


def np_fliplr(m):
    return m[_flip_index(_least_rank(P.ndim(m), 2), 1)]


def np_flipud(m):
    return m[_flip_index(_least_rank(P.ndim(m), 1), 0)]


def np_rot90(m, k=1, axes=(0, 1)):
    before, perm, after = _rot90_plan(P.ndim(m), k, axes)
    return P.transpose(m[before], perm)[after]


def np_diagonal(a, offset=0, axis1=0, axis2=1):
    perm, merged, index = _diagonal_plan(P.shape(a), offset, axis1, axis2)
    return P.reshape(P.transpose(a, perm), merged)[index]


def np_diag(v, k=0):
    if _diag_rank(P.ndim(v)) == 2:
        return np_diagonal(v, k)
    side, diagonal = _diag_embedding(P.shape(v)[0], k)
    flat = P.getitem_grad(P.full((side * side,), 0, P.dtype(v)), diagonal, v)
    return P.reshape(flat, (side, side))


def np_triu(m, k=0):
    return P.where(_tri_mask(P.shape(m), k - 1), P.astype(0, P.dtype(m)), m)


def np_tril(m, k=0):
    return P.where(_tri_mask(P.shape(m), k), m, P.astype(0, P.dtype(m)))


# ---- sorting --------------------------------------------------------------------------------


def np_argsort(a, axis=-1, kind=None, stable=None):
    if axis is None:
        return P.argsort(P.reshape(a, (-1,)), -1)
    return P.argsort(a, axis)


def np_take_along_axis(arr, indices, axis=-1):
    if axis is None:
        return P.take_along_axis(P.reshape(arr, (-1,)), indices, 0)
    return P.take_along_axis(arr, indices, axis)


def _sorted(a, axis):
    return P.take_along_axis(a, P.argsort(a, axis), axis)


def np_sort(a, axis=-1, kind=None, stable=None):
    if axis is None:
        return _sorted(P.reshape(a, (-1,)), -1)
    return _sorted(a, axis)


def np_partition(a, kth, axis=-1, kind="introselect"):
    # a sorted array is a partition for every kth (NumPy leaves the order inside each
    # part unspecified): the same result on every backend
    return np_sort(a, _partition_axis(P.shape(a), kth, axis))


# ---- indexing with lists of integers (NumPy's advanced indexing, constant indices) ------


def _as_numpy_index(index):
    """The index as NumPy reads it: the program's lists (tuples that remember they are
    lists) become Python lists again."""
    if isinstance(index, ListValue):
        return [_as_numpy_index(i) for i in index]
    if isinstance(index, tuple):
        return tuple(_as_numpy_index(i) for i in index)
    return index


@compile_time
def _indexed_positions(shape, index):
    """Where each element of x[index] comes from in x's flat order: NumPy indexes an
    array of positions, so every rule of advanced indexing (broadcast index lists,
    the position of the indexed dimensions, negative indices, errors) is NumPy's own."""
    positions = np.arange(math.prod(shape), dtype=np.int64).reshape(shape)
    try:
        return positions[_as_numpy_index(index)]
    except IndexError as e:
        raise MyiaValueError(f"index {_as_numpy_index(index)!r} for an array of shape "
                             f"{tuple(shape)}: {e}") from None


def as_array(x):
    """An array-like value as an array: a number as a 0-d array (differentiable in it),
    a (nested) list or tuple as its elements' arrays stacked along a new first axis."""
    if P.kind_of(x) is None:  # a number, or an array
        if P.ndim(x) == 0:
            return P.full((), x, P.dtype(x))
        return x
    return np_stack([as_array(e) for e in x])


def index_with_lists(x, index):
    """`x[[0, 2], 1:]`: an index holding lists of integers (known at compile time), as a
    gather of x's elements; its gradient adds each sensitivity back where it came from."""
    pos = _indexed_positions(P.shape(x), index)
    taken = P.take_along_axis(np_ravel(x), P.reshape(pos, (-1,)), 0)
    return P.reshape(taken, P.shape(pos))


def np_r_(parts):
    """np.r_[a, b, 1:4]: the parts (slices read as ranges) as 1-d or more, joined
    along the first axis."""
    return P.concatenate(tuple([np_atleast_1d(as_array(p)) for p in parts]), 0)


@compile_time
def _as_column_shape(shape):
    return tuple(shape) + (1,) if len(shape) == 1 else tuple(shape)


def np_c_(parts):
    """np.c_[a, b]: 1-d parts as columns, joined along the last axis."""
    cols = [P.reshape(a, _as_column_shape(P.shape(a)))
            for a in [np_atleast_1d(as_array(p)) for p in parts]]
    return P.concatenate(tuple(cols), -1)


@compile_time
def element_count(shape):
    """The number of elements of an array of that shape."""
    return math.prod(shape)


def np_size(a, axis=None):
    if axis is None:
        return element_count(P.shape(a))
    return P.shape(a)[axis]


def np_ndim(a):
    return len(P.shape(a))


def np_append(arr, values, axis=None):
    if axis is None:
        return P.concatenate((np_ravel(as_array(arr)), np_ravel(as_array(values))), 0)
    return np_concatenate((arr, values), axis)


NAMES = {
    np.append: np_append,
    np.reshape: np_reshape,
    np.ravel: np_ravel,
    np.squeeze: np_squeeze,
    np.expand_dims: np_expand_dims,
    np.atleast_1d: np_atleast_1d,
    np.atleast_2d: np_atleast_2d,
    np.atleast_3d: np_atleast_3d,
    np.broadcast_to: np_broadcast_to,
    np.shape: P.shape,
    np.size: np_size,
    np.ndim: np_ndim,
    np.transpose: np_transpose,
    np.swapaxes: np_swapaxes,
    np.moveaxis: np_moveaxis,
    np.rollaxis: np_rollaxis,
    np.concatenate: np_concatenate,
    np.stack: np_stack,
    np.vstack: np_vstack,
    np.hstack: np_hstack,
    np.dstack: np_dstack,
    np.column_stack: np_column_stack,
    np.split: np_split,
    np.array_split: np_array_split,
    np.hsplit: np_hsplit,
    np.vsplit: np_vsplit,
    np.dsplit: np_dsplit,
    np.tile: np_tile,
    np.repeat: np_repeat,
    np.roll: np_roll,
    np.pad: np_pad,
    np.flip: np_flip,
    np.fliplr: np_fliplr,
    np.flipud: np_flipud,
    np.rot90: np_rot90,
    np.diagonal: np_diagonal,
    np.diag: np_diag,
    np.triu: np_triu,
    np.tril: np_tril,
    np.argsort: np_argsort,
    np.take_along_axis: np_take_along_axis,
    np.sort: np_sort,
    np.partition: np_partition,
}
