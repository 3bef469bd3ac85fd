"""Shapes, broadcasting, dtypes and array creation.

`unbroadcast(d, x)` is what every elementwise bprop uses: the part of the sensitivity
`d` (shaped like the broadcast output) that belongs to the input `x`.
"""

import numpy as np

from ..errors import (MyiaOverflowError, MyiaShapeError, MyiaTypeError,
                      MyiaValueError, memory_error)
from .grad_ops import zeros_like
from .primitive import Primitive, batch, bprop, jet, jvp, linear_in

DTYPES = {"float64": np.float64, "float32": np.float32, "int64": np.int64, "bool": np.bool_}


def _as_array(x):
    return x if isinstance(x, np.ndarray) else np.asarray(x)


def _scalar_if_0d(x):
    return x[()] if isinstance(x, np.ndarray) and x.ndim == 0 else x


def _is_integral(x):
    return isinstance(x, (bool, int, np.integer, np.bool_)) or (
        isinstance(x, np.ndarray) and x.dtype.kind in "biu")


# ---- queries (not differentiable) -------------------------------------------------

def _dtype(x):
    if isinstance(x, np.ndarray):
        return x.dtype.name
    if isinstance(x, (bool, np.bool_)):
        return "bool"
    if isinstance(x, (int, np.integer)):
        return "int64"
    if isinstance(x, np.float32):
        return "float32"
    return "float64"


shape = Primitive("shape", lambda x: tuple(np.shape(x)), "x.shape", nondiff=True, foldable=True)
ndim = Primitive("ndim", lambda x: np.ndim(x), "x.ndim", nondiff=True, foldable=True)
dtype = Primitive("dtype", _dtype, "the dtype name of x", nondiff=True, foldable=True)


def _axes(axis, rank):
    if axis is None:
        return tuple(range(rank))
    axes = axis if isinstance(axis, tuple) else (axis,)
    for a in axes:
        if not -rank <= a < rank:
            raise MyiaShapeError(f"axis {a} is out of bounds for an array of rank {rank}")
    return tuple(a % rank for a in axes)


def _reduced_size(shp, axis):
    n = 1
    for a in _axes(axis, len(shp)):
        n *= shp[a]
    return n


def _reduced_shape(shp, axis):
    axes = _axes(axis, len(shp))
    return tuple(1 if i in axes else n for i, n in enumerate(shp))


def _inverse_axes(axes):
    return None if axes is None else tuple(int(i) for i in np.argsort(axes))


reduced_size = Primitive("reduced_size", _reduced_size,
                         "how many elements a reduction over axis combines", nondiff=True,
                         foldable=True)
reduced_shape = Primitive("reduced_shape", _reduced_shape,
                          "the shape of a reduction over axis with keepdims", nondiff=True,
                          foldable=True)
inverse_axes = Primitive("inverse_axes", _inverse_axes,
                         "the permutation that undoes transpose(x, axes)", nondiff=True,
                         foldable=True)


# ---- creation ---------------------------------------------------------------------

#: the largest byte count of an array (NumPy's: a size in bytes must fit in an intp)
MAX_BYTES = (1 << 63) - 1


def fmt_dims(dims):
    """A shape as Python writes a tuple: (3, 4), (5,), ()."""
    return "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"


#: what a shape too big to allocate, or with a negative dimension, says on every backend
TOO_BIG = "array of shape {shape} is too big"
NEGATIVE_DIMS = "negative dimensions are not allowed: {shape}"


def too_big(dims):
    return TOO_BIG.format(shape=fmt_dims(dims))


def check_size(shp, itemsize=8):
    """Refuse, before any allocation, a shape whose bytes do not fit in int64."""
    n = itemsize
    for d in shp:
        n *= int(d)
    if n > MAX_BYTES:
        raise MyiaOverflowError(too_big(tuple(int(d) for d in shp)),
                                hint="an array of this many elements cannot exist")


#: the most bytes that evaluation at compile time (a gather's index, an argument of a
#: magic) may allocate for one value: the session's memory limit where one is set
#: (myia_kernel.limits), else None (what can exist may be built)
_COMPILE_TIME_BYTES = [None]


def set_compile_time_limit(nbytes):
    _COMPILE_TIME_BYTES[0] = int(nbytes) if nbytes else None


def compile_time_limit():
    return _COMPILE_TIME_BYTES[0]


def check_compile_time_size(n_elements, what, itemsize=8):
    """Refuse, before NumPy is called, a value of `n_elements` that compile-time
    evaluation would build past the memory limit (or that cannot exist)."""
    n = int(n_elements) * itemsize
    if n > MAX_BYTES:
        raise MyiaOverflowError(f"{what} would have {int(n_elements)} elements: too big",
                                hint="an array of this many elements cannot exist")
    limit = _COMPILE_TIME_BYTES[0]
    if limit is not None and n > limit:
        raise memory_error(n, f"{what}, built before the program runs", limit=limit)


def _full(shp, value, dt):
    if dt not in DTYPES:
        raise MyiaTypeError(f"unsupported dtype {dt!r}; use one of {', '.join(DTYPES)}")
    if any(int(d) < 0 for d in (shp if isinstance(shp, tuple) else (shp,))):
        raise MyiaValueError(NEGATIVE_DIMS.format(shape=fmt_dims(shp)))
    check_size(shp if isinstance(shp, tuple) else (shp,), np.dtype(DTYPES[dt]).itemsize)
    return np.full(shp, value, dtype=DTYPES[dt])


full = Primitive("full", _full, "np.full(shape, value, dtype)", foldable=True)


# ---- reshaping --------------------------------------------------------------------

def _reshape(x, shp):
    x = _as_array(x)
    dims = shp if isinstance(shp, tuple) else (shp,)
    if all(isinstance(d, (int, np.integer)) and d >= 0 for d in dims):
        check_size(dims, x.dtype.itemsize)
    try:
        return _scalar_if_0d(x.reshape(shp))
    except ValueError:
        raise MyiaShapeError(f"cannot reshape an array of shape {x.shape} into shape {shp}") from None


reshape = Primitive("reshape", _reshape, "x.reshape(shape)", foldable=True)


@bprop(reshape)
def bprop_reshape(x, shp, out, dout):
    return (reshape(dout, shape(x)), zeros_like(shp))


@jvp(reshape)
def jvp_reshape(x, shp, dx, dshp):
    return reshape(dx, shp)


jet(reshape)(linear_in(0))


def _transpose(x, axes):
    x = _as_array(x)
    if axes is not None and sorted(axes) != list(range(x.ndim)):
        raise MyiaShapeError(f"axes {axes} are not a permutation of the {x.ndim} axes of the array")
    return np.transpose(x, axes)


transpose = Primitive("transpose", _transpose, "np.transpose(x, axes); axes None reverses",
                      foldable=True)


@bprop(transpose)
def bprop_transpose(x, axes, out, dout):
    return (transpose(dout, inverse_axes(axes)), zeros_like(axes))


@jvp(transpose)
def jvp_transpose(x, axes, dx, daxes):
    return transpose(dx, axes)


jet(transpose)(linear_in(0))


def _broadcast_to(x, shp):
    if shp == () and not isinstance(x, np.ndarray):
        return x
    check_size(shp, np.asarray(x).dtype.itemsize)
    try:
        return np.broadcast_to(x, shp).copy()
    except ValueError:
        raise MyiaShapeError(f"cannot broadcast shape {np.shape(x)} to {shp}") from None


broadcast_to = Primitive("broadcast_to", _broadcast_to, "np.broadcast_to(x, shape)")


def _sum_to(x, shp):
    """Sum `x` down to `shp` (undo the broadcasting of `shp` to x.shape)."""
    shp = tuple(shp)
    if np.shape(x) == shp:
        return x
    x = _as_array(x)
    lead = x.ndim - len(shp)
    if lead < 0:
        raise MyiaShapeError(f"cannot sum shape {x.shape} down to {shp}")
    axes = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shp) if n == 1 and x.shape[i + lead] != 1)
    return _scalar_if_0d(np.sum(x, axis=axes).reshape(shp))


sum_to = Primitive("sum_to", _sum_to, "sum x down to shape (undoes broadcasting)")


@bprop(broadcast_to)
def bprop_broadcast_to(x, shp, out, dout):
    return (unbroadcast(dout, x), zeros_like(shp))


@jvp(broadcast_to)
def jvp_broadcast_to(x, shp, dx, dshp):
    return broadcast_to(dx, shp)


jet(broadcast_to)(linear_in(0))


@bprop(sum_to)
def bprop_sum_to(x, shp, out, dout):
    return (broadcast_to(dout, shape(x)), zeros_like(shp))


@jvp(sum_to)
def jvp_sum_to(x, shp, dx, dshp):
    return sum_to(dx, shp)


jet(sum_to)(linear_in(0))


def _unbroadcast(d, x):
    if _is_integral(x):
        return zeros_like.impl(x)
    if isinstance(x, np.ndarray):
        return _sum_to(d, x.shape).astype(x.dtype, copy=False)
    if isinstance(d, np.ndarray):
        return type(x)(np.sum(d))
    return d if type(d) is type(x) else type(x)(d)  # (x's type: a float32 stays one)


unbroadcast = Primitive(
    "unbroadcast", _unbroadcast,
    "the part of sensitivity d that belongs to input x: summed down to x's shape, "
    "zero when x is an integer")


@bprop(unbroadcast)
def bprop_unbroadcast(d, x, out, dout):
    return (unbroadcast(broadcast_to(dout, shape(d)), d), zeros_like(x))


@jvp(unbroadcast)
def jvp_unbroadcast(d, x, dd, dx):
    return unbroadcast(dd, x)


jet(unbroadcast)(linear_in(0))


@bprop(full)
def bprop_full(shp, value, dt, out, dout):
    # every element is the value: its sensitivity is their sum (zero for an int value)
    return (zeros_like(shp), unbroadcast(dout, value), zeros_like(dt))


@jvp(full)
def jvp_full(shp, value, dt, dshp, dvalue, ddt):
    return full(shp, dvalue, dt)


jet(full)(linear_in(1))


def _astype(x, dt):
    return _scalar_if_0d(_as_array(x).astype(DTYPES[dt])) if not isinstance(x, np.ndarray) \
        else x.astype(DTYPES[dt])


astype = Primitive("astype", _astype, "x.astype(dtype)", elementwise=1)


@bprop(astype)
def bprop_astype(x, dt, out, dout):
    return (unbroadcast(dout, x), zeros_like(dt))


@jvp(astype)
def jvp_astype(x, dt, dx, ddt):
    return astype(dx, dt)


jet(astype)(linear_in(0))


def _array_to_scalar(x):
    x = _as_array(x)
    if x.size != 1:
        raise MyiaShapeError(f"expected an array of one element, got shape {x.shape}")
    return x.reshape(())[()]


array_to_scalar = Primitive("array_to_scalar", _array_to_scalar,
                            "the element of a 1-element array")


@bprop(array_to_scalar)
def bprop_array_to_scalar(x, out, dout):
    return (broadcast_to(dout, shape(x)),)



@jvp(array_to_scalar)
def jvp_array_to_scalar(x, dx):
    return array_to_scalar(dx)


jet(array_to_scalar)(linear_in(0))


# ---- batching rules (vmap: myia.ad.batching) ---------------------------------------

@batch(reshape)
def batch_reshape(b, x, shp):
    s = b.constant(shp, "the shape of a reshape")
    return b.apply(reshape, b.batched(x), (b.B,) + (tuple(s) if isinstance(s, tuple) else (s,)))


@batch(transpose)
def batch_transpose(b, x, axes):
    ax = b.constant(axes, "the axes of a transpose")
    ax = tuple(reversed(range(x.rank))) if ax is None else tuple(ax)
    return b.apply(transpose, b.batched(x), (0,) + b.axes(ax, x.rank))


@batch(broadcast_to)
def batch_broadcast_to(b, x, shp):
    s = tuple(b.constant(shp, "the shape of a broadcast"))
    return b.apply(broadcast_to, b.aligned(x, len(s)), (b.B,) + s)


@batch(sum_to)
def batch_sum_to(b, x, shp):
    return b.sum_to(b.batched(x), x.shape, tuple(b.constant(shp, "the shape of a sum")))


@batch(unbroadcast)
def batch_unbroadcast(b, d, x):
    if _is_integral_dtype(x.dtype):  # (an integer's sensitivity is zero)
        return b.apply(zeros_like, b.batched(x))
    out = b.sum_to(b.batched(d), d.shape, x.shape)
    return out if d.dtype == x.dtype else b.apply(astype, out, x.dtype)


@batch(full)
def batch_full(b, shp, value, dt):
    s = b.constant(shp, "the shape of np.full")
    s = tuple(s) if isinstance(s, tuple) else (s,)
    v = b.apply(astype, b.aligned(value, len(s)), b.constant(dt, "the dtype of np.full"))
    return b.apply(broadcast_to, v, (b.B,) + s)


@batch(array_to_scalar)
def batch_array_to_scalar(b, x):
    return b.apply(reshape, b.batched(x), (b.B,))


def _is_integral_dtype(dt):
    return dt in ("bool", "int64", "int32", "uint8")


# what one example is: the same for all of them (a constant, unbatched)
batch(shape)(lambda b, x: (b.graph.constant(tuple(x.shape)), False))
batch(ndim)(lambda b, x: (b.graph.constant(x.rank), False))
batch(dtype)(lambda b, x: (b.graph.constant(x.dtype), False))
