"""Running typed programs with their arrays on the GPU.

`CupyBackend(program).run(fn, args)`: takes the program every backend runs, the
pipeline's optimized program of `fn` (a function, a transform such as `grad(f)`, or a
graph) for the arguments' types (`program(fn, signature)`: see myia.backend), copies
it, removes the aliases (reshapes to the same shape...), fuses its elementwise groups
(see `fusion`) and runs it on `CupyVM`: the reference VM (frames, closures, calls, loops as tail calls:
control flow on the host) with the device table of `impls` for its primitives and the
`FusedKernel`s as values it calls.  Programs are cached per function and argument
types (shapes included).

Arguments may be NumPy or CuPy arrays (NumPy ones are copied to the device); arrays
in the result are CuPy arrays, left on the device; device scalars come back as NumPy
scalars.  For NumPy arrays, call `to_numpy(result)` (or `result.get()`, or
`cupy.asnumpy(result)`), or pass `to_numpy=True`.
"""

import numpy as np

from ...arguments import entry_values, exit_value, internal_values
from ...errors import MyiaBackendError
from ...abstract import AArray, AScalar, ATuple, abstract_of, broaden
from ...ir import Constant, clone_many, manage
from ..vm import VM, Closure
from .device import check_available
from .fusion import FusionPlan, fuse, remove_aliases
from .impls import ImplTable
from .kernels import FusedKernel


class CupyVM(VM):
    """The VM with the device table for primitives and fused kernels as callables."""

    def __init__(self, table):
        super().__init__(extra_callables={FusedKernel: _call_kernel})
        self.table = table

    def impl_for(self, node, prim):
        return self.table.impl_for(node, prim)


def _call_kernel(vm, kernel, args):
    return kernel(*args)


class Program:
    """A program ready to run: the fused graph, its fusion plan, and its kernels."""

    def __init__(self, graph, plan, kernels):
        self.graph = graph
        self.plan = plan
        self.kernels = kernels


class CupyBackend:
    """Compiles and runs graphs on the GPU (see the module doc).

    `xp`: the array module (default: CuPy, checked for a device; tests may pass the
    CPU emulator).  `fuse=False` runs every primitive as its own CuPy operation (for
    comparison).  `stats` counts kernel launches of fused groups ("launches") and
    primitives that had to run on the host ("host_fallback")."""

    name = "cupy"

    def __init__(self, program, xp=None, fuse=True):
        if xp is None:
            xp = check_available()
        self.xp = xp
        self.fuse = fuse
        self.table = ImplTable(xp)
        self.stats = self.table.stats
        self.vm = CupyVM(self.table)
        self._program = program
        self._programs = {}

    # ---- compiling ----------------------------------------------------------------------

    def signature(self, args):
        return tuple(self._abstract(a) for a in args)

    def _abstract(self, x):
        if x.__class__ is self.table.ndarray:
            if x.ndim == 0:
                return AScalar(x.dtype.name)
            return AArray(x.dtype.name, x.shape)
        if x.__class__ is tuple:
            return ATuple(self._abstract(e) for e in x)
        return broaden(abstract_of(x))

    def typed_program(self, fn, signature):
        """The fused program of `fn` for `signature`: a copy of the pipeline's
        optimized program, which this backend then rewrites."""
        return self.prepare(self._program(fn, signature))

    def compile(self, program):
        """A callable running `program` (a typed, optimized graph) on the device."""
        prog = self.prepare(program)
        return lambda *args: self._call(prog, args)

    def prepare(self, program):
        """`program` (a typed, optimized graph, left as it is) as a `Program`: a copy,
        without aliases, its elementwise groups fused."""
        typed = clone_many(manage(program).graphs)[program]
        remove_aliases(typed)
        _constants_to_device(typed, self.table)
        if not self.fuse:
            return Program(typed, FusionPlan(typed, []), [])
        kernels = []

        def make(group):
            k = FusedKernel(group, self.xp, self.stats)
            kernels.append(k)
            return k

        plan = fuse(typed, make)
        return Program(typed, plan, kernels)

    def program(self, fn, args):
        key = (fn, self.signature(args))
        p = self._programs.get(key)
        if p is None:
            p = self._programs[key] = self.typed_program(fn, key[1])
        return p

    # ---- running ------------------------------------------------------------------------

    def run(self, fn, args, to_numpy=False):
        """`fn(*args)` with its arrays on the device (see the module doc)."""
        args = entry_values(args, device=self.table.ndarray)
        return self._call(self.program(fn, args), args, to_numpy)

    def _call(self, prog, args, to_numpy=False):
        table = self.table
        out = self.vm.call(Closure(prog.graph, None),
                           [table.to_device(a) for a in internal_values(args)])
        out = to_numpy_values(out, table) if to_numpy else finish(out, table)
        return exit_value(out, prog.graph.flags.get("result"))  # (lists and dicts)


def finish(value, table):
    """A result for Python: device scalars to the host, arrays left on the device."""
    c = value.__class__
    if c is table.ndarray:
        return table.to_host(value) if value.ndim == 0 else value
    if c is tuple:
        return tuple(finish(v, table) for v in value)
    return value


def to_numpy_values(value, table):
    return table.to_host(value)


def to_numpy(value):
    """`value` (a result of the cupy backend) with its CuPy arrays as NumPy arrays."""
    if hasattr(value, "get") and hasattr(value, "shape") and hasattr(value, "dtype"):
        return value.get()  # a device array
    if isinstance(value, tuple):
        return tuple(to_numpy(v) for v in value)
    return value


def _constants_to_device(root, table):
    """Array constants of the program become device arrays (copied once)."""
    def device(inp):
        if isinstance(inp, Constant) and _holds_numpy(inp.value):
            c = Constant(table.to_device(inp.value), inp.loc)
            c.abstract = inp.abstract
            return c
        return inp

    mng = manage(root)
    for g in mng.graphs:
        for n in mng.nodes(g):
            n.inputs = [device(i) for i in n.inputs]
        g.output = device(g.output)
    mng.invalidate()


def _holds_numpy(v):
    if isinstance(v, np.ndarray):
        return True
    return isinstance(v, tuple) and any(_holds_numpy(e) for e in v)


__all__ = ["CupyBackend", "CupyVM", "MyiaBackendError", "Program", "finish", "to_numpy"]
