"""NumPy's reductions: sum, mean, max, min..."""

import numpy as np

from ..prim import ops as P


def np_sum(a, axis=None, keepdims=False):
    return P.reduce_sum(a, axis, keepdims)


def np_max(a, axis=None, keepdims=False):
    return P.reduce_max(a, axis, keepdims)


def np_min(a, axis=None, keepdims=False):
    return -P.reduce_max(-a, axis, keepdims)


def np_mean(a, axis=None, keepdims=False):
    return P.reduce_sum(a, axis, keepdims) / P.reduced_size(P.shape(a), axis)


NAMES = {
    np.sum: np_sum,
    np.max: np_max,
    np.amax: np_max,
    np.min: np_min,
    np.amin: np_min,
    np.mean: np_mean,
}
