"""Methods and attributes of arrays: `x.sum(axis=0)`, `x.T`, `x.shape`.  The first
argument of each function is the array itself."""

from ..prim import ops as P
from .np_reduce import np_max, np_mean, np_min, np_sum
from .np_shape import np_reshape, np_transpose

ATTRIBUTES = {
    "T": np_transpose,
    "shape": P.shape,
    "ndim": P.ndim,
}

METHODS = {
    "sum": np_sum,
    "max": np_max,
    "min": np_min,
    "mean": np_mean,
    "reshape": np_reshape,
    "transpose": np_transpose,
    "dot": P.dot,
}
