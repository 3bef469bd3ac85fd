"""NumPy's array creation: zeros, ones, full, eye, arange, linspace, ..._like; and the
dtypes the subset names, which are also conversions when called (np.float64(x) as
NumPy's scalar types: a number becomes a NumPy scalar, an array an array of that dtype).

Shapes are static: a size, a range or a number of points must be known at compile
time (a constant, or computed from shapes).  An array whose every element is known then
(eye, arange) is a constant of the program.
"""

import numpy as np

from ..errors import MyiaValueError
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


def np_zeros(shape, dtype=None):
    return P.full(shape, 0, _dtype_or(dtype, "float64"))


def np_ones(shape, dtype=None):
    return P.full(shape, 1, _dtype_or(dtype, "float64"))


def _full_of_number(shape, fill_value, dtype):
    return P.full(shape, fill_value, dtype)


def _full_of_array(shape, fill_value, dtype):
    return P.broadcast_to(P.astype(fill_value, dtype), shape)


@compile_time
def _is_array(ndim):
    return 1 if ndim > 0 else 0


def np_full(shape, fill_value, dtype=None):
    # (an array fill value is broadcast to the shape, as NumPy does)
    fill = (_full_of_number, _full_of_array)[_is_array(P.ndim(fill_value))]
    return fill(shape, fill_value, _dtype_or(dtype, P.dtype(fill_value)))


def np_zeros_like(a, dtype=None):
    return P.full(P.shape(a), 0, _dtype_or(dtype, P.dtype(a)))


def np_ones_like(a, dtype=None):
    return P.full(P.shape(a), 1, _dtype_or(dtype, P.dtype(a)))


def np_full_like(a, fill_value, dtype=None):
    return P.full(P.shape(a), fill_value, _dtype_or(dtype, P.dtype(a)))


def np_eye(N, M=None, k=0, dtype=None):
    if M is None:
        return _eye(N, N, k, _dtype_or(dtype, "float64"))
    return _eye(N, M, k, _dtype_or(dtype, "float64"))


def np_identity(n, dtype=None):
    return _eye(n, n, 0, _dtype_or(dtype, "float64"))


def np_arange(start, stop=None, step=None, dtype=None):
    return _arange(start, stop, step, dtype)


@compile_time
def _linspace_dtype(dtype1, python1, dtype2, python2):
    """The dtype np.linspace computes in: its bounds' (a Python number weak, as in NumPy
    2), a float64 for integers and bools."""
    def operand(dtype, python):
        return {"bool": False, "int64": 0, "float64": 0.0}[dtype] if python else np.dtype(dtype)

    dt = np.result_type(operand(dtype1, python1), operand(dtype2, python2))
    return dt.name if dt.kind == "f" else "float64"


@compile_time
def _floors(dtype):
    """1 where converting to `dtype` takes the floor first (NumPy's, for an integer
    dtype: np.linspace(-1, 0, 3, dtype=int) is [-1, -1, 0]), else 0."""
    return 1 if dtype is not None and np.dtype(DTYPES[dtype]).kind in "iu" else 0


def _floor(y):
    return P.floor(y)


def _as_is(y):
    return y


def np_linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    # NumPy's own formula, in NumPy's dtype: start + i * step, and the last point is
    # `stop` exactly
    dt = _linspace_dtype(P.dtype(start), P.python_number(start),
                         P.dtype(stop), P.python_number(stop))
    start = P.astype(start, dt)
    stop = P.astype(stop, dt)
    delta = stop - start
    positions, div, last = _linspace_positions(num, endpoint, P.ndim(delta))
    step = delta / div
    y = P.where(last, stop, start + P.astype(positions, dt) * step)
    if dtype is not None:
        y = P.astype((_as_is, _floor)[_floors(dtype)](y), dtype)
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
    return as_array(a)  # (an array is a value: nothing can change the original)


def np_asarray(a, dtype=None):
    if dtype is None:
        return as_array(a)
    return P.astype(as_array(a), dtype)


# ---- the dtypes as functions: np.float64(x), np.int64(x) ----------------------------------


def _cast(x, dtype):
    """NumPy's scalar type called on x: a number or a 0-d array gives the NumPy scalar of
    that dtype, an array (a list, a tuple) the array converted (x.astype(dtype))."""
    if P.kind_of(x) is not None:
        x = as_array(x)
    if P.ndim(x) == 0:
        return P.array_to_scalar(P.astype(x, dtype))
    return P.astype(x, dtype)


def np_float64(x=0.0):
    return _cast(x, "float64")


def np_float32(x=0.0):
    return _cast(x, "float32")


def np_bool_(x=False):
    return _cast(x, "bool")


def np_int64(x=0):
    # truncating toward zero; a Python float as int(x) does it (nan and floats out of
    # int64's range are errors), a NumPy float or an array as astype does
    if P.kind_of(x) is None and P.python_number(x):
        return P.astype(P.to_int(x), "int64")
    return _cast(x, "int64")


NAMES = {
    np.float64: np_float64,
    np.float32: np_float32,
    np.int64: np_int64,
    np.bool_: np_bool_,
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
