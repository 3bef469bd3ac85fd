"""Fused kernels at run time: the callable values that `fusion.fuse` puts in graphs.

A `FusedKernel` holds one group's source; the CuPy kernel object is built on first
call (CuPy compiles it at its first launch, and keeps the binary in its disk cache),
and shared by every group with the same source and signature (`kernel_for`).
"""

import numpy as np

from ...abstract import AArray
from ...errors import MyiaBackendError
from .fusion import dtype_of
from .impls import array_class

#: {(array module, source key): CuPy kernel object}
_CACHE = {}


def kernel_for(xp, source):
    """The `ElementwiseKernel` / `ReductionKernel` of `source` (cached)."""
    key = (id(xp), source.key)
    k = _CACHE.get(key)
    if k is None:
        k = _CACHE[key] = build_kernel(xp, source)
    return k


def build_kernel(xp, source):
    """A new CuPy kernel object for `source` (no device needed until it is launched)."""
    if source.kind == "elementwise":
        return xp.ElementwiseKernel(source.in_params, source.out_params, source.operation,
                                    source.name, preamble=source.preamble)
    return xp.ReductionKernel(source.in_params, source.out_params, source.map_expr,
                              source.reduce_expr, source.post_map_expr, source.identity,
                              source.name, reduce_type=source.reduce_type,
                              preamble=source.preamble)


class FusedKernel:
    """A group of a fusion plan as a value of the graph: calling it launches one
    kernel.  Elementwise: returns the output (or a tuple of the outputs), allocated
    with the group's shape.  Reduction: the reduced array, in the reduction node's
    shape (a 0-d device array for a scalar: see `executor` on device scalars)."""

    def __init__(self, group, xp, stats=None):
        self.source = group.source
        self.kind = group.source.kind
        self.ir_name = group.source.name
        self.xp = xp
        self.stats = stats

        #: (index, numpy dtype) of the inputs that are scalars: converted on the host
        self.scalars = tuple(
            (i, np.dtype(dtype_of(n))) for i, n in enumerate(group.inputs)
            if not _is_array(n))
        self.arrays = tuple(
            (i, np.dtype(dtype_of(n))) for i, n in enumerate(group.inputs) if _is_array(n))
        if self.kind == "elementwise":
            self.outputs = tuple((group.shape, np.dtype(o.abstract.dtype))
                                 for o in group.outputs)
        else:
            _, self.axes, self.final = group.reduce
            #: the shape of the reduced value: the inputs are broadcast to it (a
            #: ReductionKernel iterates over the broadcast of its inputs only)
            self.shape = tuple(group.shape)
        self._kernel = None
        self.ndarray = array_class(xp)

    def kernel(self):
        if self._kernel is None:
            self._kernel = kernel_for(self.xp, self.source)
        return self._kernel

    def __call__(self, *args):
        xp = self.xp
        k = self._kernel or self.kernel()
        args = list(args)
        ndarray = self.ndarray
        for i, dt in self.scalars:
            a = args[i]
            if a.__class__ is ndarray:  # a device scalar (0-d)
                if a.dtype != dt:
                    args[i] = a.astype(dt)
            else:
                args[i] = dt.type(a)
        for i, dt in self.arrays:
            a = args[i]
            if a.__class__ is not ndarray:
                args[i] = xp.asarray(a, dtype=dt)
            elif a.dtype != dt:
                args[i] = a.astype(dt)
        if self.stats is not None:
            self.stats["launches"] += 1
        try:
            return self._launch(k, xp, ndarray, args)
        except Exception as e:
            if type(e).__name__ in ("CompileException", "CompileError"):
                raise MyiaBackendError(
                    f"the CUDA compiler rejected the generated kernel {self.ir_name}:\n"
                    f"{e}\n{self.source}",
                    hint="this is a bug of myia's cupy backend: please report it with "
                         "this message; backend='vm' runs the program meanwhile") from None
            raise

    def _launch(self, k, xp, ndarray, args):
        if self.kind == "elementwise":
            outs = [xp.empty(shape, dt) for shape, dt in self.outputs]
            k(*args, *outs)
            return outs[0] if len(outs) == 1 else tuple(outs)
        full = self.shape
        if not any(a.__class__ is ndarray and a.shape == full for a in args):
            for i, a in enumerate(args):
                if a.__class__ is ndarray or i == len(args) - 1:
                    args[i] = xp.broadcast_to(a if a.__class__ is ndarray
                                              else xp.asarray(a), full)
                    break
        out = k(*args, axis=self.axes)
        return out.reshape(self.final)

    def __repr__(self):
        return f"<FusedKernel {self.ir_name}>"


def _is_array(node):
    return isinstance(node.abstract, AArray)
