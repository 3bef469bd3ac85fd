"""Shape functions and rearrangements (issue 18), and None / np.newaxis in indexing:
cases for tests/numpy/test_shape.py.

Everything above `# ---- cases` is machinery; below, subset code written with `np.`
(re-executed with autograd.numpy for the reference gradients).  Most rearrangements
are linear, so their second order is zero: the cases that multiply a rearrangement by
its input (`* x`) make it a quadratic form, whose second order goes through the
transposes of the rule (a split through a concatenation and back...).  Where autograd
has no derivative of the function (`autograd=False`: flip, pad modes other than
"constant", sort of a matrix, tuple shifts...), derivatives are checked against finite
differences only.  Split and its relatives return a list: their values are checked as
they are, their derivatives through a function that combines the pieces.
"""

import numpy as np

from .harness import collector

CASES, case = collector()
_rng = np.random.default_rng(18)


def rand(*shape):
    return _rng.standard_normal(shape)


def ints(*shape):
    return _rng.integers(-5, 5, shape)


# ---- cases


# reshaping


@case("reshape", rand(3, 4))
def reshape_minus_one(x):
    return np.reshape(x, (2, -1))


@case("reshape", rand(6))
def reshape_int(x):
    return np.reshape(x, 6) * np.reshape(x, (6,))


@case("ravel", rand(2, 3, 2))
def ravel_(x):
    return np.ravel(x)


@case("ravel", rand(3, 4))
def ravel_of_transpose(x):
    return np.ravel(x.T) * np.ravel(x)


@case("squeeze", rand(3, 1, 4, 1))
def squeeze_all(x):
    return np.squeeze(x)


@case("squeeze", rand(3, 1, 4, 1))
def squeeze_axis(x):
    return np.squeeze(x, axis=-1)


@case("squeeze", rand(1, 4, 1))
def squeeze_axes(x):
    return np.squeeze(x, axis=(0, 2))


@case("expand_dims", rand(3, 4))
def expand_dims_neg(x):
    return np.expand_dims(x, -1)


@case("expand_dims", rand(3, 4))
def expand_dims_tuple(x):
    return np.expand_dims(x, (0, 3))


@case("transpose", rand(2, 3, 4))
def transpose_default(x):
    return np.transpose(x)


@case("transpose", rand(2, 3, 4), autograd=False)  # autograd's rule argsorts the axes as given
def transpose_negative_axes(x):
    return np.transpose(x, (-1, 0, 1))


@case("swapaxes", rand(2, 3, 4))
def swapaxes_(x):
    return np.swapaxes(x, 0, -1)


@case("moveaxis", rand(2, 3, 4))
def moveaxis_(x):
    return np.moveaxis(x, 0, -1)


@case("moveaxis", rand(2, 3, 4))
def moveaxis_tuples(x):
    return np.moveaxis(x, (0, 1), (2, 0))


@case("rollaxis", rand(2, 3, 4))
def rollaxis_(x):
    return np.rollaxis(x, 2)


@case("rollaxis", rand(2, 3, 4))
def rollaxis_start(x):
    return np.rollaxis(x, 0, 2)


@case("broadcast_to", rand(1, 4))
def broadcast_to_(x):
    return np.broadcast_to(x, (3, 4))


@case("broadcast_to", rand(4), autograd=False)
def broadcast_to_new_axes(x):
    return np.broadcast_to(x, (2, 3, 4))


@case("broadcast_to", rand(1), autograd=False)
def broadcast_to_int_shape(x):
    return np.broadcast_to(x, 5)


@case("atleast_1d", 1.5)
def atleast_1d_scalar(x):
    return np.atleast_1d(x)


@case("atleast_2d", rand(4))
def atleast_2d_(x):
    return np.atleast_2d(x)


@case("atleast_3d", rand(4))
def atleast_3d_vector(x):
    return np.atleast_3d(x)


@case("atleast_3d", rand(3, 4))
def atleast_3d_matrix(x):
    return np.atleast_3d(x)


@case("atleast_1d", rand(3), rand(2, 2), order=0)
def atleast_1d_several(x, y):
    return np.atleast_1d(x, y)


# joining


@case("concatenate", rand(3, 2), rand(3, 4))
def concatenate_axis1(x, y):
    return np.concatenate((x, y), axis=1)


@case("concatenate", rand(2, 3), rand(1, 3))
def concatenate_default(x, y):
    return np.concatenate((x, y, x))


@case("concatenate", rand(2, 3))
def concatenate_self(x):
    return np.concatenate((x, x * x), axis=-1)


@case("concatenate", rand(2, 3), rand(4), autograd=False)
def concatenate_axis_none(x, y):
    return np.concatenate((x, y), axis=None)


@case("concatenate", rand(2, 3).astype(np.float32), rand(2, 1).astype(np.float32))
def concatenate_float32(x, y):
    return np.concatenate((x, y), axis=1)


@case("concatenate", ints(2, 3), rand(2, 2), argnums=(1,))
def concatenate_promotes(x, y):
    return np.concatenate((x, y), axis=1)


@case("concatenate", rand(2, 3), rand(2, 2))
def concatenate_list(x, y):
    return np.concatenate([y, x * y[:, :1]], axis=-1)


@case("stack", rand(3), rand(3))
def stack_list(x, y):
    return np.stack([x, y, x], axis=1)


@case("stack", rand(3, 4), rand(3, 4))
def stack_default(x, y):
    return np.stack((x, y))


@case("stack", rand(3, 4), rand(3, 4))
def stack_last(x, y):
    return np.stack((x, y, x * y), axis=-1)


@case("stack", 1.5, 2.5)
def stack_scalars(x, y):
    return np.stack((x, y))


@case("vstack", rand(4), rand(4))
def vstack_vectors(x, y):
    return np.vstack((x, y))


@case("vstack", rand(2, 4), rand(3, 4))
def vstack_matrices(x, y):
    return np.vstack((x, y))


@case("hstack", rand(3), rand(2))
def hstack_vectors(x, y):
    return np.hstack((x, y))


@case("hstack", rand(2, 3), rand(2, 1))
def hstack_matrices(x, y):
    return np.hstack((x, y))


@case("column_stack", rand(3), rand(3, 2))
def column_stack_(x, y):
    return np.column_stack((x, y, x))


@case("dstack", rand(2, 3), rand(2, 3))
def dstack_(x, y):
    return np.dstack((x, y))


# splitting (a list of arrays: values; gradients through a combination of the pieces)


@case("split", rand(4, 6), order=0)
def split_sections(x):
    return np.split(x, 3, axis=1)


@case("split", rand(4, 6), order=0)
def split_indices(x):
    return np.split(x, (1, -2))


@case("split", rand(6, 2))
def split_combined(x):
    a, b, c = np.split(x, 3)
    return a * c + b


@case("split", rand(5, 4))
def split_uneven_indices(x):
    a, b, c = np.split(x, (1, 3))
    return np.concatenate((c, a * b[:1]))


@case("array_split", rand(7), order=0)
def array_split_uneven(x):
    return np.array_split(x, 3)


@case("array_split", rand(3, 7))
def array_split_combined(x):
    a, b, c = np.array_split(x, 3, axis=-1)
    return a[:, 1:] * b + c


@case("hsplit", rand(2, 6))
def hsplit_(x):
    a, b = np.hsplit(x, 2)
    return a * b


@case("hsplit", rand(6), order=0)
def hsplit_vector(x):
    return np.hsplit(x, (2, 3))


@case("vsplit", rand(4, 3))
def vsplit_(x):
    a, b = np.vsplit(x, 2)
    return a - b * b


@case("dsplit", rand(2, 2, 4))
def dsplit_(x):
    a, b = np.dsplit(x, (1,))
    return b * a


# gathers: tile, repeat, roll, pad


@case("tile", rand(2, 3))
def tile_tuple(x):
    return np.tile(x, (2, 1, 2))


@case("tile", rand(3))
def tile_int(x):
    return np.tile(x, 2) * np.tile(x, 2)


@case("repeat", rand(2, 3))
def repeat_flat(x):
    return np.repeat(x, 2)


@case("repeat", rand(2, 3), autograd=False)  # autograd's rule misreads a negative axis
def repeat_axis(x):
    return np.repeat(x, 3, axis=-1)


@case("repeat", rand(3, 2), autograd=False)
def repeat_counts(x):
    return np.repeat(x, (2, 0, 1), axis=0)


@case("roll", rand(5))
def roll_vector(x):
    return np.roll(x, 2) * x


@case("roll", rand(3, 4))
def roll_flat(x):
    return np.roll(x, -5)


@case("roll", rand(3, 4))
def roll_axis(x):
    return np.roll(x, 1, axis=1)


@case("roll", rand(3, 4), autograd=False)
def roll_axes(x):
    return np.roll(x, (1, -2), axis=(0, 1)) * x


@case("pad", rand(3, 4))
def pad_constant(x):
    return np.pad(x, 1, mode="constant")


@case("pad", rand(3, 4))
def pad_widths(x):
    return np.pad(x, ((1, 2), (0, 3)), mode="constant", constant_values=1.5)


@case("pad", rand(3, 4), 0.7, autograd=False)
def pad_value(x, c):
    return np.pad(x, (2, 1), constant_values=c)


@case("pad", rand(3, 4), autograd=False)
def pad_per_side(x):
    return np.pad(x, ((1, 2), (2, 1)), constant_values=((1.0, 2.0), (3.0, 4.0)))


@case("pad", rand(2, 3), order=0)
def pad_before_after(x):
    return np.pad(x, 1, constant_values=(-1, 5))


@case("pad", rand(3, 4), autograd=False)
def pad_edge(x):
    return np.pad(x, ((2, 1), (1, 3)), mode="edge")


@case("pad", rand(3, 4), autograd=False)
def pad_reflect(x):
    return np.pad(x, 2, mode="reflect") * np.pad(x, 2, mode="symmetric")


@case("pad", rand(5), autograd=False)
def pad_wrap(x):
    return np.pad(x, (3, 7), mode="wrap")


@case("pad", ints(2, 3), order=0)
def pad_int(x):
    return np.pad(x, 1, constant_values=2.7)


# views: flips, rotations, diagonals


@case("flip", rand(3, 4), autograd=False)
def flip_all(x):
    return np.flip(x) * x


@case("flip", rand(2, 3, 4), autograd=False)
def flip_axes(x):
    return np.flip(x, (0, -1))


@case("fliplr", rand(3, 4))
def fliplr_(x):
    return np.fliplr(x)


@case("flipud", rand(3, 4))
def flipud_(x):
    return np.flipud(x) * x


@case("rot90", rand(3, 4))
def rot90_default(x):
    return np.rot90(x)


@case("rot90", rand(3, 3))
def rot90_k(x):
    return np.rot90(x, 2) * x + np.rot90(x, -1)


@case("rot90", rand(2, 3, 4), autograd=False)
def rot90_axes(x):
    return np.rot90(x, 3, axes=(2, 0))


@case("diag", rand(4))
def diag_vector(x):
    return np.diag(x)


@case("diag", rand(3))
def diag_vector_offset(x):
    return np.diag(x, -2)


@case("diag", rand(3, 4), autograd=False)  # autograd's rule assumes a square matrix
def diag_matrix(x):
    return np.diag(x, 1)[:2] * np.diag(x, -1)


@case("diagonal", rand(3, 4), autograd=False)  # autograd: only axes (-1, -2)
def diagonal_default(x):
    return np.diagonal(x)


@case("diagonal", rand(2, 3, 4), autograd=False)
def diagonal_axes(x):
    return np.diagonal(x, 1, 2, 0)


@case("diagonal", rand(4, 3), autograd=False)
def diagonal_empty(x):
    return np.diagonal(x, 5)


@case("triu", rand(3, 4))
def triu_(x):
    return np.triu(x)


@case("triu", rand(2, 3, 3))
def triu_offset(x):
    return np.triu(x, 1) * x


@case("tril", rand(4, 3))
def tril_(x):
    return np.tril(x, -1)


@case("tril", ints(3, 3), order=0)
def tril_int(x):
    return np.tril(x)


@case("triu", np.array([[np.nan, 1.0], [2.0, np.inf]]), order=0)
def triu_nan(x):
    return np.triu(x)


# sorting


@case("sort", rand(6))
def sort_vector(x):
    return np.sort(x)


@case("sort", rand(6))
def sort_quadratic(x):
    return np.sort(x) * x


@case("sort", rand(3, 4), autograd=False)
def sort_axis0(x):
    return np.sort(x, axis=0)


@case("sort", rand(3, 4), autograd=False)
def sort_flat(x):
    return np.sort(x, axis=None) * np.ravel(x)


@case("sort", rand(5).astype(np.float32))
def sort_float32(x):
    return np.sort(x)


@case("sort", ints(3, 5), order=0)
def sort_int(x):
    return np.sort(x)


@case("sort", np.array([3.0, np.nan, -1.0, np.inf, -np.inf, 0.5, np.nan]), order=0)
def sort_nan_last(x):
    return np.sort(x)


@case("sort", np.array([True, False, True, False]), order=0)
def sort_bool(x):
    return np.sort(x)


@case("argsort", np.array([2.0, 1.0, 2.0, 1.0, 0.0, 2.0]), order=0)
def argsort_stable(x):
    return np.argsort(x, kind="stable")


@case("argsort", rand(3, 4), order=0)
def argsort_axis0(x):
    return np.argsort(x, axis=0)


@case("take_along_axis", rand(3, 4), autograd=False)
def take_along_axis_sorted(x):
    return np.take_along_axis(x, np.argsort(x, axis=1), axis=1)


@case("partition", rand(7))
def partition_kth(x):
    return np.partition(x, 3)[3]


@case("partition", rand(7))
def partition_parts(x):
    p = np.partition(x, 2)
    return np.concatenate((np.sort(p[:2]), np.sort(p[3:]))) * p[2]


@case("partition", rand(5, 3), autograd=False)
def partition_axis0(x):
    return np.partition(x, (1, 3), axis=0)[3]


# None / np.newaxis in indexing


@case("newaxis", rand(3, 4))
def newaxis_middle(x):
    return x[:, None]


@case("newaxis", rand(3, 4))
def newaxis_first(x):
    return x[None]


@case("newaxis", rand(3, 4))
def newaxis_with_int(x):
    return x[np.newaxis, :, 1]


@case("newaxis", rand(3, 4))
def newaxis_outer(x):
    return x[:, None, :] * x[None, :, 1:, None]


@case("newaxis", rand(5))
def newaxis_pairwise(x):
    return np.sum((x[:, np.newaxis] - x[np.newaxis, :]) ** 2, axis=1)


@case("newaxis", rand(3, 4, 2))
def newaxis_around_steps(x):
    return x[None, ::-1, 2, None] * x[:, None, ::-2, :]
