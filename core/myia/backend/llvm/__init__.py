"""The LLVM backend: typed graphs to native code with llvmlite (see DESIGN.md, "Backends").

    runtime     the JIT engine, external symbols (BLAS, libmvec, CPython, NumPy), the
                status codes and the per-call context, the interrupt flag
    capi        struct layouts of the CPython and NumPy objects native code reads
    ltypes      the backend's types and their native representation
    abstracts   inference's abstract values -> ltypes
    lower       graphs -> LLVM functions (calls, loops, closures, recursion, errors)
    explicit_stack  a recursion with one recursive call as a loop over a stack
    cons_loop   a recursion that wraps its call's result in a closure, as a loop
    ops_scalar  scalar primitives and the elementwise operations arrays share
    ops_struct  tuples, closures, environments, sensitivities
    ops_array   fused loops, reductions, views, BLAS products, creation
    wrapper     the native METH_FASTCALL entry point (unboxing and boxing)
    dispatch    compiling a program; the per-signature dispatcher; deep stacks

    from myia.backend.llvm import LLVMBackend
    run = LLVMBackend().dispatcher(graph)     # run(*args): compiled per signature
"""

from .runtime import clear_interrupt, request_interrupt


class LLVMBackend:
    """Compiles graphs: one Dispatcher per graph, specializing it with inference and
    optimizing it before lowering."""

    name = "llvm"

    def __init__(self, specialize=None, optimize=True):
        self._specialize = specialize
        self._optimize = optimize
        self._dispatchers = {}
        self._by_fn = {}

    def typed_program(self, graph, args):
        """The specialized, optimized program of `graph` for `args`."""
        if self._specialize is not None:
            return self._specialize(graph, args)
        from ...infer import signature_of, specialize
        from ...opt import optimize

        typed = specialize(graph, list(signature_of(args)))
        if self._optimize:
            optimize(typed)
        return typed

    def dispatcher(self, graph):
        d = self._dispatchers.get(graph)
        if d is None:
            from .dispatch import Dispatcher

            d = Dispatcher(lambda args, g=graph: self.typed_program(g, args), graph.name)
            self._dispatchers[graph] = d
        return d

    def __call__(self, graph, args):
        return self.dispatcher(graph)(*args)

    def run(self, fn, args):
        """Call `fn` (a Python function, a transformed one, or a Graph) compiled for
        `args`: the dispatcher is found by the function object itself, so a call does
        not even look up the graph."""
        entry = self._by_fn.get(fn)
        if entry is None:
            from ...pipeline import to_graph

            graph = to_graph(fn)
            entry = self._by_fn[fn] = (self.dispatcher(graph), graph)
        d, graph = entry
        if len(args) < len(graph.parameters):
            args = _with_defaults(graph, args)
        return d(*args)


def _with_defaults(graph, args):
    """`args` completed with the defaults of the missing parameters of `graph` (the
    compiled code takes every parameter); unchanged when some missing one has no
    default (specialization then says which arguments are missing)."""
    missing = [p.name for p in graph.parameters[len(args):]]
    if all(name in graph.defaults for name in missing):
        return tuple(args) + tuple(graph.defaults[name] for name in missing)
    return args


def interrupt():
    """Ask running compiled code to stop: it raises KeyboardInterrupt within about a
    millisecond (call from a signal handler or another thread)."""
    request_interrupt()


__all__ = ["LLVMBackend", "interrupt", "request_interrupt", "clear_interrupt"]
