"""Indexing at run-time positions on the device (myia.prim.dynamic): the device
implementations that `impls` puts in its table, and the CUDA kernels they launch.

    dynamic_slice          a view of x (the start is a host number: checked there)
    dynamic_update_slice   a copy of x with the update written into its slab
    gather                 one kernel, one thread per element of the result, reading
                           x (contiguous) at the index
    scatter_add            a copy of x (zeros for a gather's gradient), then one kernel,
                           one thread per element of d, adding with atomicAdd (so
                           repeated indices add up, as np.add.at; the order of the
                           additions, and so the last bits of a float sum, may vary)

The indices are checked on the device before either kernel runs (a reduction that
counts those outside [-n, n)); only when there is one are they copied to the host, to
name it in the error, which is the VM's.  Kernels are built per dtype (without a
device: CuPy compiles at the first launch) and cached per array module.
"""

import numpy as np

from ...prim import ops as P
from ...prim.dynamic import check_indices, checked_start

_CTYPES = {"float64": "double", "float32": "float", "int64": "long long"}

#: result element i: outer block o, index j (idx[r / inner]), inner offset r % inner
GATHER = """\
long long r = i % (m * inner);
long long o = i / (m * inner);
long long j = idx[r / inner];
if (j < 0) j += n;
out = x[(o * n + j) * inner + r % inner];
"""

SCATTER_ADD = """\
long long r = i % (m * inner);
long long o = i / (m * inner);
long long j = idx[r / inner];
if (j < 0) j += n;
atomicAdd(PTR_CAST&out[(o * n + j) * inner + r % inner], VALUE_CASTd);
"""
#: CUDA's atomicAdd on 64-bit integers is unsigned (the same bits: two's complement)
_ATOMIC_CASTS = {"int64": ("(unsigned long long *)", "(unsigned long long)")}

#: 1 if an index is outside [-n, n), else 0
BAD_INDICES = ("int64 idx, int64 n", "int32 bad", "(idx >= n || idx < -n) ? 1 : 0", "a | b",
               "bad = a", "0", "myia_bad_indices")


def kernel_sources(dtype):
    """{name: (in_params, out_params, operation)} of the elementwise kernels for arrays
    of `dtype` (what `cupy.ElementwiseKernel` is given)."""
    return {
        f"myia_gather_{dtype}": (f"raw {dtype} x, raw int64 idx, int64 n, int64 m, int64 inner",
                                 f"{dtype} out", GATHER),
        f"myia_scatter_add_{dtype}": (f"raw int64 idx, {dtype} d, int64 n, int64 m, "
                                      f"int64 inner", f"raw {dtype} out",
                                      _scatter_add_source(dtype)),
    }


def _scatter_add_source(dtype):
    ptr, value = _ATOMIC_CASTS.get(dtype, ("", ""))
    return SCATTER_ADD.replace("PTR_CAST", ptr).replace("VALUE_CAST", value)


_CACHE = {}


def _kernel(xp, name, dtype):
    key = (id(xp), name)
    k = _CACHE.get(key)
    if k is None:
        if name == "myia_bad_indices":
            k = xp.ReductionKernel(*BAD_INDICES, reduce_type="int")
        else:
            ins, outs, op = kernel_sources(dtype)[name]
            k = xp.ElementwiseKernel(ins, outs, op, name)
        _CACHE[key] = k
    return k


def dynamic_impls(table, dev):
    """{Primitive: device implementation} of the run-time indexing primitives."""
    xp = table.xp
    host = table.host_scalar

    def lead(axis):
        return (slice(None),) * axis

    def dynamic_slice(x, start, axis, size):
        x = dev(x)
        axis %= x.ndim
        s = checked_start(host(start), size, x.shape[axis], axis)
        return x[lead(axis) + (slice(s, s + size),)]

    def dynamic_update_slice(x, update, start, axis):
        x = dev(x)
        axis %= x.ndim
        size = update.shape[axis]
        s = checked_start(host(start), size, x.shape[axis], axis)
        out = x.copy()
        out[lead(axis) + (slice(s, s + size),)] = update
        return out

    def checked(idx, n, axis):
        idx = xp.ascontiguousarray(dev(idx))
        if idx.size and int(host(_kernel(xp, "myia_bad_indices", None)(idx, n))):
            check_indices(table.to_host(idx), n, axis)  # raises, naming the index
        return idx

    def blocks(shape, axis, idx):
        """(n, m, inner): the axis' length, the number of indices, the block size."""
        return (shape[axis], int(np.prod(idx.shape, dtype=np.int64)),
                int(np.prod(shape[axis + 1:], dtype=np.int64)))

    def gather(x, idx, axis):
        x = xp.ascontiguousarray(dev(x))
        axis %= x.ndim
        dtype = x.dtype.name
        if dtype not in _CTYPES:
            return table.host_fallback(P.gather)(x, idx, axis)
        idx = checked(idx, x.shape[axis], axis)
        out = xp.empty(x.shape[:axis] + idx.shape + x.shape[axis + 1:], x.dtype)
        if out.size:
            table.stats["launches"] += 1
            _kernel(xp, f"myia_gather_{dtype}", dtype)(x, idx, *blocks(x.shape, axis, idx),
                                                       out)
        return out

    def scatter_add(x, idx, axis, d):
        x = dev(x)
        axis %= x.ndim
        dtype = x.dtype.name
        if dtype not in _CTYPES:
            return table.host_fallback(P.scatter_add)(x, idx, axis, d)
        idx = checked(idx, x.shape[axis], axis)
        out = xp.ascontiguousarray(x).copy()
        d = dev(d).astype(x.dtype, copy=False)
        if d.size:
            table.stats["launches"] += 1
            _kernel(xp, f"myia_scatter_add_{dtype}", dtype)(idx, d, *blocks(x.shape, axis, idx),
                                                            out)
        return out

    return {P.dynamic_slice: dynamic_slice, P.dynamic_update_slice: dynamic_update_slice,
            P.gather: gather, P.scatter_add: scatter_add}


__all__ = ["BAD_INDICES", "GATHER", "SCATTER_ADD", "dynamic_impls", "kernel_sources"]
