"""Methods and attributes of arrays: `x.sum(axis=0)`, `x.astype(np.float32)`, `x.T`,
`x.shape`.  Each is the NumPy function of the same meaning, whose first argument is
the array itself (`x.reshape(2, 3)` packs the dimensions into one tuple, as NumPy does)."""

from ..prim import ops as P
from .np_create import np_copy
from .np_linalg import np_dot
from .np_math import np_clip, np_round
from .np_reduce import (np_all, np_any, np_argmax, np_argmin, np_cumprod, np_cumsum, np_max,
                        np_mean, np_min, np_prod, np_std, np_sum, np_trace, np_var)
from .np_shape import (element_count, np_argsort, np_diagonal, np_ravel, np_repeat,
                       np_reshape, np_squeeze, np_swapaxes, np_transpose)


def array_size(a):
    return element_count(P.shape(a))


def array_astype(a, dtype):
    return P.astype(a, dtype)


def array_flatten(a):
    return P.reshape(a, (-1,))


def array_clip(a, min=None, max=None):
    return np_clip(a, min, max)


def array_item(a):
    return P.array_to_scalar(a)


ATTRIBUTES = {
    "T": np_transpose,
    "shape": P.shape,
    "ndim": P.ndim,
    "size": array_size,
    "dtype": P.dtype,
}

METHODS = {
    "sum": np_sum,
    "prod": np_prod,
    "max": np_max,
    "min": np_min,
    "mean": np_mean,
    "std": np_std,
    "var": np_var,
    "cumsum": np_cumsum,
    "cumprod": np_cumprod,
    "argmax": np_argmax,
    "argmin": np_argmin,
    "all": np_all,
    "any": np_any,
    "trace": np_trace,
    "reshape": np_reshape,
    "ravel": np_ravel,
    "squeeze": np_squeeze,
    "transpose": np_transpose,
    "swapaxes": np_swapaxes,
    "diagonal": np_diagonal,
    "repeat": np_repeat,
    "argsort": np_argsort,
    "dot": np_dot,
    "astype": array_astype,
    "copy": np_copy,
    "clip": array_clip,
    "round": np_round,
    "flatten": array_flatten,
    "item": array_item,
}
