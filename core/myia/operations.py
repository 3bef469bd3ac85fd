"""Python, `math` and NumPy functions as the subset sees them.

`PYTHON_TO_MYIA` maps a Python object that user code may name (a builtin, `np.sum`,
`math.sin`...) to what the compiler uses in its place: a primitive, or a small function
written here in the subset itself (parsed like user code, so keyword arguments and
defaults work, and AD needs no extra rule for it).
"""

import math

import numpy as np

from .prim import ops as P
from .prim.mathfn import LIBM

# ---- functions written in the subset -----------------------------------------------


def np_sum(a, axis=None, keepdims=False):
    return P.reduce_sum(a, axis, keepdims)


def np_max(a, axis=None, keepdims=False):
    return P.reduce_max(a, axis, keepdims)


def np_min(a, axis=None, keepdims=False):
    return -P.reduce_max(-a, axis, keepdims)


def np_mean(a, axis=None, keepdims=False):
    return P.reduce_sum(a, axis, keepdims) / P.reduced_size(P.shape(a), axis)


def np_transpose(a, axes=None):
    return P.transpose(a, axes)


def np_reshape(a, newshape):
    return P.reshape(a, newshape)


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


def np_where(condition, x, y):
    return P.where(condition, x, y)


def np_square(x):
    return x * x


def np_clip(a, a_min, a_max):
    return P.minimum(P.maximum(a, a_min), a_max)


def py_max(a, b):
    if b > a:
        return b
    return a


def py_min(a, b):
    if b < a:
        return b
    return a


def py_bool(x):
    return P.truth(x)


def math_floor(x):
    return P.to_int(P.floor(x))


def math_pow(x, y):
    return P.to_float(x) ** P.to_float(y)


# ---- the map -------------------------------------------------------------------------

PYTHON_TO_MYIA = {
    # builtins
    abs: P.abs,
    len: P.len_,
    float: P.to_float,
    int: P.to_int,
    bool: py_bool,
    max: py_max,
    min: py_min,
    # math
    math.sin: P.sin,
    math.cos: P.cos,
    math.tan: P.tan,
    math.tanh: P.tanh,
    math.exp: P.exp,
    math.log: P.log,
    math.sqrt: P.sqrt,
    math.atan: P.arctan,
    math.fabs: P.abs,
    math.floor: math_floor,
    math.pow: math_pow,
    # numpy
    np.sin: P.sin,
    np.cos: P.cos,
    np.tan: P.tan,
    np.tanh: P.tanh,
    np.exp: P.exp,
    np.log: P.log,
    np.sqrt: P.sqrt,
    np.arctan: P.arctan,
    np.abs: P.abs,
    **{getattr(np, p.name): p for p in LIBM},  # np.arcsinh...: the C math library's
    math.asin: P.arcsin,
    math.acos: P.arccos,
    math.sinh: P.sinh,
    math.cosh: P.cosh,
    math.asinh: P.arcsinh,
    math.acosh: P.arccosh,
    math.atanh: P.arctanh,
    math.atan2: P.arctan2,
    math.hypot: P.hypot,
    math.log2: P.log2,
    math.log10: P.log10,
    math.log1p: P.log1p,
    math.expm1: P.expm1,
    np.sign: P.sign,
    np.floor: P.floor,
    np.maximum: P.maximum,
    np.minimum: P.minimum,
    np.where: np_where,
    np.dot: P.dot,
    np.matmul: P.dot,
    np.sum: np_sum,
    np.max: np_max,
    np.amax: np_max,
    np.min: np_min,
    np.amin: np_min,
    np.mean: np_mean,
    np.transpose: np_transpose,
    np.reshape: np_reshape,
    np.zeros: np_zeros,
    np.ones: np_ones,
    np.full: np_full,
    np.zeros_like: np_zeros_like,
    np.ones_like: np_ones_like,
    np.square: np_square,
    np.clip: np_clip,
    np.shape: P.shape,
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

#: methods and attributes of arrays: `x.T`, `x.sum(axis=0)`; the first argument of the
#: function is the array itself.
ARRAY_ATTRIBUTES = {
    "T": np_transpose,
    "shape": P.shape,
    "ndim": P.ndim,
}
ARRAY_METHODS = {
    "sum": np_sum,
    "max": np_max,
    "min": np_min,
    "mean": np_mean,
    "reshape": np_reshape,
    "transpose": np_transpose,
    "dot": P.dot,
}


def lookup(obj):
    """What the compiler uses for the Python object `obj`, or None."""
    try:
        return PYTHON_TO_MYIA.get(obj)
    except TypeError:  # unhashable
        return None
