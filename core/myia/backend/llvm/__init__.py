"""The LLVM backend: typed graphs to native code with llvmlite (see docs/DESIGN.md,
"Backends").

    runtime     the JIT engine, external symbols (BLAS, libmvec, CPython, NumPy), the
                status codes and the per-call context, the interrupt flag
    capi        struct layouts of the CPython and NumPy objects native code reads
    ltypes      the backend's types and their native representation
    abstracts   inference's abstract values -> ltypes
    registry    each primitive's lowering rule (`@rule`), the backend's errors
    lower       graphs -> LLVM functions (calls, loops, closures, recursion, errors),
                each primitive through its rule in the registry
    values      native values between types: joins, coercions, captured values
    explicit_stack  a recursion with one recursive call as a loop over a stack
    cons_loop   a recursion that wraps its call's result in a closure, as a loop
    ops_scalar  scalar primitives and the elementwise operations arrays share
    ops_struct  tuples, closures, environments, sensitivities
    arrays      the array representation and the helpers array rules share (allocation,
                elements, filling, C-contiguous copies)
    ops_elementwise  fused elementwise loops: fusion, broadcasting, the vectorized loop nest
    ops_accumulate  reduce_sum, reduce_max, sum_to, unbroadcast: one accumulate loop
    ops_views   full; the views (broadcast_to, transpose, reshape: no copy); shape, ndim
    ops_index   basic indexing and slicing as views; getitem_grad
    ops_blas    dot through BLAS (gemm, gemv, dot); integer products as loops
    ops_reduce  the reductions of the NumPy surface (cumulative sums, sorts' keys...)
    ops_shape   the rearrangements (concatenation, gathers, sorting, padding)
    ops_linalg  the linear algebra of the NumPy surface (batched products, solves)
    gemm_update  W - lr * (A @ B) as one gemm into a copy of W
    gathers     compile-time copy plans for gathers at constant positions (pad, tile)
    npyloops    NumPy's own inner loops and sorts, called from compiled code
    wrapper     the native METH_FASTCALL entry point (unboxing and boxing)
    dispatch    compiling a program; the per-signature dispatcher; deep stacks

    from myia.backend.llvm import LLVMBackend
    from myia.pipeline import optimized_program
    backend = LLVMBackend(optimized_program)  # programs from the pipeline (myia.backend)
    backend.run(fn, args)                     # fn(*args), compiled per signature
    backend.compile(typed_graph)(*args)       # one typed, optimized graph
"""

from ...infer import signature_of
from ...parser.programs import header
from .dispatch import Dispatcher, compile_program
from .runtime import clear_interrupt, request_interrupt

# every primitive's lowering, registered in registry.RULES, which lower.py reads
from . import (ops_accumulate, ops_blas, ops_dynamic, ops_elementwise,  # noqa: F401
               ops_index, ops_linalg, ops_reduce, ops_scalar, ops_shape, ops_struct, ops_views)


class LLVMBackend:
    """Compiles the programs of `program(fn, signature)` (see myia.backend): one
    Dispatcher per function, which compiles one program per signature."""

    name = "llvm"

    def __init__(self, program):
        self._program = program
        self._dispatchers = {}
        self._by_fn = {}

    def typed_program(self, fn, args):
        """The program of `fn` (a graph, a function or a transform) for `args`."""
        return self._program(fn, signature_of(args))

    def compile(self, program):
        """The native code of `program`, a typed, optimized graph, as a callable."""
        return compile_program(program)

    def entry(self, fn):
        """(the dispatcher of `fn`, its parameter names) once `run` called it, else
        None (myia.api.CompiledFunction installs the dispatcher's last compiled entry
        as its own call)."""
        entry = self._by_fn.get(fn)
        return None if entry is None else entry[:2]

    def dispatcher(self, graph, source=None, name=None):
        """The dispatcher of `graph` (or of any key), whose programs are those of
        `source` (what the graph was made from: a transform builds a graph per
        signature) or of the graph itself."""
        d = self._dispatchers.get(graph)
        if d is None:
            source = graph if source is None else source
            d = Dispatcher(lambda args, s=source: self.typed_program(s, args),
                           name or graph.name)
            self._dispatchers[graph] = d
        return d

    def __call__(self, graph, args):
        return self.dispatcher(graph)(*args)

    def run(self, fn, args):
        """Call `fn` (a Python function, a transformed one, or a Graph) compiled for
        `args`: the dispatcher is found by the function object itself, so a call does
        not even look up the graph (nor build one: a transform builds its program per
        signature)."""
        entry = self._by_fn.get(fn)
        if entry is None:
            name, names, defaults = header(fn)
            entry = self._by_fn[fn] = (self.dispatcher(fn, fn, name), names, defaults)
        d, names, defaults = entry
        if len(args) < len(names):
            args = _with_defaults(names, defaults, args)
        return d(*args)


def _with_defaults(names, defaults, args):
    """`args` completed with the defaults of the missing parameters (the compiled code
    takes every parameter); unchanged when some missing one has no default
    (specialization then says which arguments are missing)."""
    missing = names[len(args):]
    if all(name in defaults for name in missing):
        return tuple(args) + tuple(defaults[name] for name in missing)
    return args


def interrupt():
    """Ask running compiled code to stop: it raises KeyboardInterrupt within about a
    millisecond (call from a signal handler or another thread)."""
    request_interrupt()


__all__ = ["LLVMBackend", "interrupt", "request_interrupt", "clear_interrupt"]
