"""NumPy's array creation: zeros, ones, full, eye, arange, linspace, ..._like; and the
dtypes the subset names.

Shapes are static: a size, a range or a number of points must be known at compile
time (a constant, or computed from shapes).  An array whose every element is known then
(eye, arange) is a constant of the program.
"""

import numpy as np

from ..prim import compile_time
from ..prim import ops as P
from ..prim.shape import DTYPES
from .np_shape import as_array


def _np_dtype(dtype):
    return None if dtype is None else DTYPES[dtype]


@compile_time
def _eye(n, m, k, dtype):
    """np.eye(n, m, k, dtype)."""
    return np.eye(n, m, k, dtype=DTYPES[dtype])


@compile_time
def _arange(start, stop, step, dtype):
    """np.arange, with NumPy's argument conventions and dtype."""
    if stop is None:
        start, stop = 0, start
    return np.arange(start, stop, 1 if step is None else step, dtype=_np_dtype(dtype))


@compile_time
def _linspace_positions(num, endpoint, ndim):
    """(the positions 0, 1, ..., num - 1 as floats, shaped to broadcast against `ndim`
    dimensions of start and stop; the divisor of the step; a mask of the last point)."""
    if num < 0:
        from ..errors import MyiaValueError

        raise MyiaValueError(f"number of samples, {num}, must be non-negative")
    div = (num - 1) if endpoint else num
    shape = (num,) + (1,) * ndim
    last = np.zeros(shape, dtype=bool)
    if endpoint and num > 1:
        last[-1] = True
    return np.arange(num, dtype=np.float64).reshape(shape), float(max(div, 1)), last


@compile_time
def _dtype_or(dtype, default):
    return default if dtype is None else dtype


def np_zeros(shape, dtype="float64"):
    return P.full(shape, 0, dtype)


def np_ones(shape, dtype="float64"):
    return P.full(shape, 1, dtype)


def np_full(shape, fill_value, dtype=None):
    if dtype is None:
        return P.full(shape, fill_value, P.dtype(fill_value))
    return P.full(shape, fill_value, dtype)


def np_zeros_like(a, dtype=None):
    return P.full(P.shape(a), 0, _dtype_or(dtype, P.dtype(a)))


def np_ones_like(a, dtype=None):
    return P.full(P.shape(a), 1, _dtype_or(dtype, P.dtype(a)))


def np_full_like(a, fill_value, dtype=None):
    return P.full(P.shape(a), fill_value, _dtype_or(dtype, P.dtype(a)))


def np_eye(N, M=None, k=0, dtype="float64"):
    if M is None:
        return _eye(N, N, k, dtype)
    return _eye(N, M, k, dtype)


def np_identity(n, dtype="float64"):
    return _eye(n, n, 0, dtype)


def np_arange(start, stop=None, step=None, dtype=None):
    return _arange(start, stop, step, dtype)


def np_linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    # NumPy's own formula: start + i * step, and the last point is `stop` exactly
    delta = stop - start
    positions, div, last = _linspace_positions(num, endpoint, P.ndim(delta))
    step = delta / div
    y = P.where(last, stop, start + positions * step)
    if dtype is not None:
        y = P.astype(y, dtype)
    if retstep:
        return y, step
    return y


def np_array(object, dtype=None, copy=True, ndmin=0):
    a = as_array(object)
    if ndmin > P.ndim(a):
        a = P.reshape(a, _leading_ones(P.shape(a), ndmin))
    if dtype is None:
        return a
    return P.astype(a, dtype)


@compile_time
def _leading_ones(shape, ndmin):
    """The shape with ones in front, to ndmin dimensions (np.array's ndmin=)."""
    return (1,) * (ndmin - len(shape)) + tuple(shape)


def np_copy(a):
    return a  # arrays are values: nothing can change the original


def np_asarray(a, dtype=None):
    if dtype is None:
        return a
    return P.astype(a, dtype)


NAMES = {
    np.zeros: np_zeros,
    np.empty: np_zeros,  # the subset has no uninitialized memory: zeros
    np.ones: np_ones,
    np.full: np_full,
    np.zeros_like: np_zeros_like,
    np.empty_like: np_zeros_like,
    np.ones_like: np_ones_like,
    np.full_like: np_full_like,
    np.eye: np_eye,
    np.identity: np_identity,
    np.arange: np_arange,
    np.linspace: np_linspace,
    np.copy: np_copy,
    np.array: np_array,
    np.asarray: np_asarray,
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
