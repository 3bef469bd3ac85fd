"""The pipeline: parse -> (infer -> specialize -> optimize) -> run on a backend.

Each stage is a named step; `Pipeline.stage(fn, args, name)` returns the program as it
is after that stage (what `myia.ir` and the kernel's `%ir` show).
"""

from .backend.vm import VM, Closure
from .errors import MyiaError
from .ir import Graph, manage
from .ir.print import format_graphs

STAGES = ("parsed",)


def to_graph(fn):
    """The IR graph for a Python function or a transformed function (grad...)."""
    from .parser import parse

    as_graph = getattr(fn, "__myia_graph__", None)
    if as_graph is not None:
        return as_graph()
    if isinstance(fn, Graph):
        return fn
    return parse(fn)


class IRView:
    """A program at one stage: prints as text, counts operations, draws itself."""

    def __init__(self, graph, stage):
        self.graph = graph
        self.stage = stage

    def __str__(self):
        return format_graphs([self.graph])

    def __repr__(self):
        return str(self)

    def graphs(self):
        return manage(self.graph).graphs

    def op_count(self):
        """Primitive applications in all graphs reachable from this one."""
        from .prim import Primitive

        mng = manage(self.graph)
        return sum(
            1
            for g in mng.graphs
            for n in mng.nodes(g)
            if n.is_apply() and n.inputs[0].is_constant(Primitive)
        )


class Pipeline:
    def __init__(self, backend="vm"):
        self.backend = backend
        self.vm = VM()

    def stage(self, fn, args, name):
        if name not in STAGES:
            raise MyiaError(
                f"unknown stage {name!r}", hint=f"choose one of {', '.join(STAGES)}")
        return IRView(to_graph(fn), name)

    def run(self, fn, args, kwargs):
        if kwargs:
            raise MyiaError("keyword arguments are not supported when calling a compiled function",
                            hint="pass the arguments by position")
        graph = to_graph(fn)
        return self.vm.call(Closure(graph, None), list(args))
