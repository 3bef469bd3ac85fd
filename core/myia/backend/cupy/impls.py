"""Primitives on the device: the table the executor gives the VM.

Values.  An array is a device array (`xp.ndarray`).  A scalar is a host number,
except the scalar result of a device operation (a full reduction, `dot` of two
vectors, an element `x[i, j]`), which stays on the device as a 0-d array (a *device
scalar*) until something needs it on the host (a condition, an index, the result
returned to Python): so computing a loss does not wait for the GPU.

Choosing an implementation (`ImplTable.impl_for`), from the node's types:

- structural primitives (tuples, environments) pass values through: their own impl;
- primitives that need host values (`switch`'s condition, `truth`, `assert`,
  slices, shape queries) bring device scalars to the host first;
- a node with an array among its inputs or its result: the device implementation
  below (`DEVICE`), built on the array module's functions (cuBLAS for `dot`);
- a scalar node: the host impl, or the device one when a device scalar comes in.

A primitive with no device implementation runs on the host, its device arrays
copied back and forth (`host_fallback`), and is counted in `stats["host_fallback"]`,
so a test can check that a program never leaves the device.
"""

import collections
import operator

import numpy as np

from ...abstract import AArray, ATuple
from ...errors import MyiaShapeError, MyiaValueError
from ...prim import ops as P
from ...prim.cumulative import scan_axis
from ...prim.mathfn import LIBM
from ...prim.grad_ops import EMPTY_ENV, EnvInstance
from ...prim.rearrange import check_bounds, concat_shape, normalize_axis
from ...prim.shape import DTYPES, _axes
from .dynamic import dynamic_impls

#: pass their values through, device or host
STRUCTURAL = frozenset({
    P.make_tuple, P.tuple_getitem, P.tuple_setitem, P.tuple_tail, P.tuple_cons,
    P.env_new, P.env_setitem, P.env_getitem, P.env_add,
})
#: need host values for every argument
HOST_ARGS = frozenset({
    P.truth, P.switch, P.assert_, P.make_slice, P.make_dslice, P.slice_start,
    P.reduced_size, P.reduced_shape,
    P.inverse_axes,
})


def _has_array(a):
    if isinstance(a, AArray):
        return True
    if isinstance(a, ATuple):
        return any(_has_array(e) for e in a.elements)
    return False


def touches_arrays(node):
    """True if an input or the result of `node` is (or holds) an array."""
    if _has_array(node.abstract):
        return True
    for i in node.inputs[1:]:
        if _has_array(i.abstract) or isinstance(getattr(i, "value", None), np.ndarray):
            return True
    return False


_ARRAY_CLASSES = {}


def array_class(xp):
    """The exact class of the arrays `xp` makes (the code compares classes with `is`,
    which is faster than isinstance on every operation)."""
    cls = _ARRAY_CLASSES.get(id(xp))
    if cls is None:
        try:
            cls = type(xp.empty((1,)))
        except Exception:  # noqa: BLE001  (no device: nothing will run anyway)
            cls = xp.ndarray
        _ARRAY_CLASSES[id(xp)] = cls
    return cls


class ImplTable:
    """The implementations of the primitives for one array module `xp` (CuPy, or the
    CPU emulator in tests)."""

    def __init__(self, xp):
        self.xp = xp
        self.ndarray = array_class(xp)
        self.stats = collections.Counter()
        self.device = _device_impls(self)
        self._mixed = {}
        self._fallbacks = {}

    # ---- conversions ------------------------------------------------------------------

    def to_host(self, x):
        """`x` with its device arrays copied to the host (0-d ones as NumPy scalars)."""
        if x.__class__ is self.ndarray:
            h = x.get()
            return h[()] if h.ndim == 0 else h
        if x.__class__ is tuple:
            return tuple(self.to_host(e) for e in x)
        if x.__class__ is EnvInstance:
            return EnvInstance({k: self.to_host(v) for k, v in x.contents.items()})
        return x

    def to_device(self, x):
        """`x` with its NumPy arrays copied to the device (inputs of a program)."""
        if isinstance(x, np.ndarray):
            return self.xp.asarray(x)
        if x.__class__ is tuple:
            return tuple(self.to_device(e) for e in x)
        return x

    def host_scalar(self, x):
        if x.__class__ is self.ndarray:
            return x.get()[()] if x.ndim == 0 else x.get()
        return x

    # ---- choosing ---------------------------------------------------------------------

    def impl_for(self, node, prim):
        if prim in STRUCTURAL:
            return prim.impl
        if prim in HOST_ARGS:
            return self.host_args(prim)
        if node is not None and node.abstract is not None and touches_arrays(node):
            return self.device.get(prim) or self.host_fallback(prim)
        return self.mixed(prim)

    def host_args(self, prim):
        """`prim`'s impl on host values: device scalars (and, for `truth`, arrays) are
        copied to the host; `switch` passes its branches through."""
        impl = prim.impl
        ndarray = self.ndarray
        to_host = self.to_host

        if prim is P.truth:
            return lambda x: impl(to_host(x))
        if prim is P.switch:
            return lambda c, a, b: impl(to_host(c) if c.__class__ is ndarray else c, a, b)

        def run(*args):
            return impl(*[to_host(a) if a.__class__ is ndarray and a.ndim == 0 else a
                          for a in args])

        return run

    def mixed(self, prim):
        """The host impl, or the device one when a device value comes in (nodes
        without array types, and primitives called as values)."""
        f = self._mixed.get(prim)
        if f is not None:
            return f
        if prim in STRUCTURAL:
            f = prim.impl
        elif prim in HOST_ARGS:
            f = self.host_args(prim)
        else:
            host = prim.impl
            dev = self.device.get(prim) or self.host_fallback(prim)
            ndarray = self.ndarray

            def f(*args):
                for a in args:
                    if a.__class__ is ndarray or (a.__class__ is tuple and _holds(a, ndarray)):
                        return dev(*args)
                return host(*args)

        self._mixed[prim] = f
        return f

    def host_fallback(self, prim):
        f = self._fallbacks.get(prim)
        if f is None:
            impl = prim.impl
            stats = self.stats

            def f(*args):
                stats["host_fallback"] += 1
                stats["host_fallback:" + prim.name] += 1
                return self.to_device(impl(*[self.to_host(a) for a in args]))

            self._fallbacks[prim] = f
        return f


def _holds(t, ndarray):
    for e in t:
        if e.__class__ is ndarray or (e.__class__ is tuple and _holds(e, ndarray)):
            return True
    return False


def _axes_of(axis, rank):
    return _axes(axis, rank)


def _device_impls(table):
    """{Primitive: device implementation} for the array module of `table`."""
    xp = table.xp
    ndarray = table.ndarray
    host = table.host_scalar

    def dev(x):
        """`x` as a device array (a host number becomes a 0-d array)."""
        return x if x.__class__ is ndarray else xp.asarray(x)

    def unary(fn):
        return lambda x: fn(dev(x))

    def binary(fn):
        def run(x, y):
            if x.__class__ is not ndarray and y.__class__ is not ndarray:
                return fn(xp.asarray(x), y)
            return fn(x, y)

        return run

    def libm_kernel(cname):
        """A C function the array module has no function of NumPy's name for (erf, erfc,
        lgamma: SciPy's): one elementwise kernel per float dtype calling it (CUDA's
        math library has them); an integer or bool input is computed in float64."""
        kernels = {}

        def run(x):
            x = dev(x)
            dtype = "float32" if x.dtype.name == "float32" else "float64"
            k = kernels.get(dtype)
            if k is None:
                k = kernels[dtype] = xp.ElementwiseKernel(
                    f"{dtype} x", f"{dtype} y", f"y = {cname}(x);", f"myia_{cname}_{dtype}")
            out = xp.empty(x.shape, dtype)
            table.stats["launches"] += 1
            return k(x if x.dtype.name == dtype else x.astype(dtype), out)

        return run

    def truediv(x, y):
        return xp.true_divide(dev(x), y)

    def where(c, x, y):
        return xp.where(dev(c), x, y)

    def full(shp, value, dt):
        if dt not in DTYPES:
            return P.full.impl(shp, value, dt)  # the host impl's error
        out = xp.empty(shp, DTYPES[dt])
        out[...] = value
        return out

    def reshape(x, shp):
        x = dev(x)
        try:
            return x.reshape(shp)
        except ValueError:
            raise MyiaShapeError(
                f"cannot reshape an array of shape {x.shape} into shape {shp}") from None

    def transpose(x, axes):
        return xp.transpose(dev(x), axes)

    def broadcast_to(x, shp):
        if shp == () and x.__class__ is not ndarray:
            return x
        return xp.broadcast_to(dev(x), shp)

    def sum_to(x, shp):
        shp = tuple(shp)
        if tuple(x.shape) == shp:
            return x
        lead = x.ndim - len(shp)
        axes = tuple(range(lead)) + tuple(
            i + lead for i, n in enumerate(shp) if n == 1 and x.shape[i + lead] != 1)
        return xp.sum(x, axis=axes).reshape(shp)

    def unbroadcast(d, x):
        if x.__class__ is ndarray:
            if x.dtype.kind in "biu":
                return xp.zeros_like(x)
            d = dev(d)
            return sum_to(d, x.shape).astype(x.dtype, copy=False)
        if isinstance(x, np.ndarray):
            return P.unbroadcast.impl(table.to_host(d), x)
        if isinstance(x, (bool, int, np.integer, np.bool_)):
            return P.zeros_like.impl(x)
        if d.__class__ is ndarray:  # the sensitivity of a scalar: a device scalar
            return xp.sum(d).astype(np.dtype(type(x)) if isinstance(x, np.floating)
                                    else np.float64)
        return d

    def reduce(fn):
        def run(x, axis, keepdims):
            x = dev(x)
            _axes_of(axis, x.ndim)  # the host impl's error for a bad axis
            return fn(x, axis=axis, keepdims=keepdims)

        return run

    def cumulative(fn, what):
        def run(x, axis, reverse):
            x = dev(x)
            axis = scan_axis(axis, x.ndim, what)  # the host impl's errors
            if reverse:
                return xp.flip(fn(xp.flip(x, axis), axis=axis), axis)
            return fn(x, axis=axis)

        return run

    def arg_extremum(prim, fn):
        def run(x, axis, keepdims):
            x = dev(x)
            if x.ndim == 0 or x.shape[axis] == 0:
                return prim.impl(table.to_host(x), axis, keepdims)  # the host impl's error
            return fn(x, axis=axis, keepdims=keepdims)

        return run

    def dot(a, b):
        a, b = dev(a), dev(b)
        if a.ndim > 2 or b.ndim > 2 or a.ndim == 0 or b.ndim == 0:
            raise MyiaShapeError(
                f"dot supports 1-d and 2-d arrays, got shapes {a.shape} and {b.shape}")
        if a.shape[-1] != b.shape[0]:
            raise MyiaShapeError(
                f"shapes {a.shape} and {b.shape} are not aligned for a matrix product")
        return xp.dot(a, b)

    def batch_matmul(a, b):
        a, b = dev(a), dev(b)
        if a.ndim < 2 or a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2] \
                or a.shape[-1] != b.shape[-2]:
            raise MyiaShapeError(
                f"batch_matmul of shapes {a.shape} and {b.shape}: expected (..., m, k) and "
                f"(..., k, n) with the same leading axes")
        return xp.matmul(a, b)

    def array_to_scalar(x):
        if x.__class__ is not ndarray:
            return P.array_to_scalar.impl(x)
        if x.size != 1:
            raise MyiaShapeError(f"expected an array of one element, got shape {x.shape}")
        return x.reshape(())

    def astype(x, dt):
        return dev(x).astype(DTYPES[dt])

    def to_float(x):
        return dev(x).astype(np.float64)

    def to_int(x):
        return dev(x).astype(np.int64)

    def index_on_host(index):
        if index.__class__ is ndarray:
            return int(host(index))
        if index.__class__ is tuple:
            return tuple(index_on_host(i) for i in index)
        return index

    def getitem(x, index):
        if x.__class__ is not ndarray:
            return P.getitem.impl(x, index)
        try:
            return x[index_on_host(index)]
        except IndexError:
            raise MyiaValueError(
                f"index {index!r} is out of range for an array of shape {x.shape}") from None

    def getitem_grad(x, index, d):
        if x.__class__ is not ndarray:
            return P.getitem_grad.impl(x, index, d)
        out = xp.zeros_like(x)
        out[index_on_host(index)] = d  # basic indexing: each element is hit once
        return out

    def zeros_like(x):
        c = x.__class__
        if c is ndarray:
            return xp.zeros_like(x) if x.ndim else x.dtype.type(0)
        if c is tuple:
            return tuple(zeros_like(e) for e in x)
        return P.zeros_like.impl(x)

    def ones_like(x):
        if x.__class__ is ndarray:
            return xp.ones_like(x) if x.ndim else x.dtype.type(1)
        return P.ones_like.impl(x)

    def grad_seed(out):
        if out.__class__ is ndarray:
            if out.ndim == 0 and out.dtype.kind == "f":
                return out.dtype.type(1.0)
            return P.grad_seed.impl(np.empty(out.shape, out.dtype))  # the error
        return P.grad_seed.impl(out)

    def gadd(x, y):
        if x.__class__ is tuple or x.__class__ is EnvInstance or x is None:
            return P.gadd.impl(x, y)
        if y is EMPTY_ENV:
            return x
        return x + y

    def len_(x):
        if x.__class__ is ndarray:
            return len(x)
        return P.len_.impl(x)

    def shape(x):
        return tuple(x.shape) if x.__class__ is ndarray else P.shape.impl(x)

    def ndim(x):
        return x.ndim if x.__class__ is ndarray else P.ndim.impl(x)

    def dtype(x):
        return x.dtype.name if x.__class__ is ndarray else P.dtype.impl(x)

    def floordiv(x, y):
        return xp.floor_divide(dev(x), y)

    def mod(x, y):
        return xp.mod(dev(x), y)

    def pow_(x, y):
        return xp.power(dev(x), y)

    def maximum(x, y):
        return xp.maximum(dev(x), y)

    def minimum(x, y):
        return xp.minimum(dev(x), y)

    def fmax(x, y):
        return xp.fmax(dev(x), y)

    def fmin(x, y):
        return xp.fmin(dev(x), y)

    def sign(x):
        return xp.sign(dev(x))

    def concatenate(xs, axis):
        xs = [dev(x) for x in xs]
        shape = concat_shape([tuple(x.shape) for x in xs], [x.dtype.name for x in xs], axis)
        axis %= len(shape)
        out = xp.empty(shape, xs[0].dtype)
        start = 0
        for x in xs:  # each part into its slab
            out[(slice(None),) * axis + (slice(start, start + x.shape[axis]),)] = x
            start += x.shape[axis]
        return out

    def split(x, bounds, axis):
        x = dev(x)
        axis = normalize_axis(axis, x.ndim)
        points = check_bounds(bounds, x.shape[axis])
        lead = (slice(None),) * axis
        return tuple(x[lead + (slice(a, b),)] for a, b in zip(points, points[1:]))

    return {
        **dynamic_impls(table, dev),
        P.add: binary(operator.add), P.sub: binary(operator.sub),
        P.mul: binary(operator.mul), P.truediv: truediv, P.floordiv: floordiv,
        P.mod: mod, P.pow: pow_, P.neg: unary(operator.neg),
        **{p: unary(getattr(xp, p.name)) if hasattr(xp, p.name) else libm_kernel(cname)
           for p, (cname, n) in LIBM.items() if n == 1},
        **{p: binary(getattr(xp, p.name)) for p, (_, n) in LIBM.items() if n == 2},
        P.abs: unary(xp.abs),
        P.sign: sign, P.floor: unary(xp.floor), P.ceil: unary(xp.ceil),
        P.trunc: unary(xp.trunc), P.rint: unary(xp.rint),
        P.maximum: maximum, P.minimum: minimum, P.fmax: fmax, P.fmin: fmin, P.where: where,
        P.eq: binary(operator.eq), P.ne: binary(operator.ne), P.lt: binary(operator.lt),
        P.le: binary(operator.le), P.gt: binary(operator.gt), P.ge: binary(operator.ge),
        P.not_: unary(xp.logical_not), P.invert: unary(xp.invert),
        P.bitwise_and: binary(operator.and_), P.bitwise_or: binary(operator.or_),
        P.bitwise_xor: binary(operator.xor), P.to_int: to_int, P.to_float: to_float, P.astype: astype,
        P.full: full, P.reshape: reshape, P.transpose: transpose,
        P.broadcast_to: broadcast_to, P.sum_to: sum_to, P.unbroadcast: unbroadcast,
        P.reduce_sum: reduce(xp.sum), P.reduce_max: reduce(xp.max), P.dot: dot,
        P.reduce_prod: reduce(xp.prod), P.cumsum: cumulative(xp.cumsum, "cumsum"),
        P.cumprod: cumulative(xp.cumprod, "cumprod"),
        P.argmax: arg_extremum(P.argmax, xp.argmax), P.argmin: arg_extremum(P.argmin, xp.argmin),
        P.batch_matmul: batch_matmul,
        P.array_to_scalar: array_to_scalar, P.getitem: getitem,
        P.getitem_grad: getitem_grad, P.zeros_like: zeros_like, P.ones_like: ones_like,
        P.grad_seed: grad_seed, P.gadd: gadd, P.len_: len_, P.shape: shape,
        P.ndim: ndim, P.dtype: dtype,
        P.concatenate: concatenate, P.split: split,
    }


__all__ = ["HOST_ARGS", "STRUCTURAL", "ImplTable", "array_class", "touches_arrays"]
