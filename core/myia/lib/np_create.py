"""NumPy's array creation: zeros, ones, full, ..._like; and the dtypes the subset names."""

import numpy as np

from ..prim import ops as P


def np_zeros(shape, dtype="float64"):
    return P.full(shape, 0, dtype)


def np_ones(shape, dtype="float64"):
    return P.full(shape, 1, dtype)


def np_full(shape, fill_value, dtype="float64"):
    return P.full(shape, fill_value, dtype)


def np_zeros_like(a):
    return P.full(P.shape(a), 0, P.dtype(a))


def np_ones_like(a):
    return P.full(P.shape(a), 1, P.dtype(a))


NAMES = {
    np.zeros: np_zeros,
    np.ones: np_ones,
    np.full: np_full,
    np.zeros_like: np_zeros_like,
    np.ones_like: np_ones_like,
}

#: dtype objects that may appear as `dtype=` arguments, and the names the IR uses.
DTYPE_NAMES = {
    float: "float64",
    int: "int64",
    bool: "bool",
    np.float64: "float64",
    np.float32: "float32",
    np.int64: "int64",
    np.bool_: "bool",
}
