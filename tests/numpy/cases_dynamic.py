"""Slices of static length at run-time positions (`x[i:i + n]`) and index arrays
(`x[idx]`): cases for tests/numpy/test_dynamic_index.py.

Below `# ---- cases`, subset code written with `np.` (re-executed with autograd.numpy
for the reference gradients).  The start `i` and the index arrays are arguments, so
they are known only at run time; the functions are nonlinear (`np.sin`, `* x`) so
that their second order goes through the transposes (dynamic_update_slice,
scatter_add) and back.
"""

import numpy as np

from .harness import collector

CASES, case = collector()
_rng = np.random.default_rng(22)

#: a length known at compile time, by name
BS = 3


def rand(*shape):
    return _rng.standard_normal(shape)


X = rand(7, 4)

# ---- cases


# slices x[i:i + n]


@case("slice", X, 2)
def rows(x, i):
    return np.sin(x[i:i + 3])


@case("slice", X, 1, order=1)
def rows_length_first(x, i):
    return x[i:3 + i] * 2.0


@case("slice", X, 4)
def rows_named_length(x, i):
    return np.sin(x[i:i + BS, :])


@case("slice", X, 1, order=1)
def columns(x, j):
    return x[:, j:j + 2] * x[:, :2]


@case("slice", X, 2)
def shifted_bounds(x, i):
    return np.sin(x[i + 1:i + 4]) * x[i - 1:i + 2]


@case("slice", X, -4)
def negative_start(x, i):
    return np.sin(x[i:i + 3])  # x[-4:-1]


@case("slice", X, 3, 1, order=1)
def row_then_slice(x, i, j):
    return x[i, j:j + 2] * x[i - 1, 1:3]


@case("slice", X, 5, 1, order=1)
def window(x, k, j):
    return np.sin(x[k - 2:k + 1, j:j + 2])


@case("slice", X, 0, order=1)
def named_stop(x, i):
    j = i + 3
    return x[i:j] * 2.0


@case("slice", X, 3, order=1)
def length_from_a_shape(x, i):
    n = x.shape[1]  # known when compiling, not when parsing
    return np.sin(x[i:i + n - 1])


# index arrays x[idx]


@case("gather", X, np.array([0, 3, 3, -1, 5]))
def gather_rows(x, idx):
    return np.sin(x[idx])  # repeated and negative rows


@case("gather", X, np.array([[1, 2], [2, -7]]))
def gather_index_matrix(x, idx):
    return np.sin(x[idx]) * 2.0  # result (2, 2, 4)


@case("gather", X, np.array([3, 0, 3]), order=1)
def gather_columns(x, idx):
    return x[:, idx] * x[:, :3]


@case("gather", X, np.array([4, 1]), order=1)
def gather_with_slice(x, idx):
    return x[idx, 1:3] * 3.0


@case("gather", X, np.array([6, 0, -1, 6]), np.array([3, 0, 1, -4]))
def gather_elements(x, rows, cols):
    return np.sin(x[rows, cols])  # several index arrays: one position each


@case("gather", X.reshape(2, 7, 2), np.array([[1], [6]]), np.array([0, 1, 1]), order=1)
def gather_broadcast_pairs(x, rows, cols):
    return x[1:, rows, cols] * x[:1, rows, cols]  # (2, 1) and (3,) broadcast to (2, 3)


@case("gather", X, np.array([6, 2, 0, 5, 1, 4, 3]), 2)
def permuted_batch(x, perm, i):
    return np.sin(x[perm[i:i + 3]])


@case("gather", X, np.array([6, 2, 0, 5, 1, 4, 3]), 1, order=0)
def permutation_slice(x, perm, i):
    return perm[i:i + 4] * 2  # an int64 result
