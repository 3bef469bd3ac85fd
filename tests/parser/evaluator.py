"""A tiny evaluator of parsed graphs, to check the parser's graphs before the VM exists.

Test-only and throwaway (the real reference interpreter is myia.backend.vm).  Nodes are
evaluated on demand in frames; a free variable is evaluated in the frame of its owner
graph, found in the closure's chain of frames; calls in tail position loop instead of
recursing, so loops do not grow the Python stack.
"""

from myia.ir import Apply, Constant, Graph
from myia.prim import Primitive


class Closure:
    __slots__ = ("graph", "chain")

    def __init__(self, graph, chain):
        self.graph = graph
        self.chain = chain  # {graph: Frame} of the enclosing graphs

    def __call__(self, *args):
        return run(self.graph, args, self.chain)


class Frame:
    __slots__ = ("graph", "values", "chain")

    def __init__(self, graph, args, chain):
        if len(args) != len(graph.parameters):
            raise TypeError(f"{graph.name} takes {len(graph.parameters)} args, got {len(args)}")
        self.graph = graph
        self.values = dict(zip(graph.parameters, args))
        self.chain = chain

    def eval(self, node):
        if isinstance(node, Constant):
            if isinstance(node.value, Graph):
                return Closure(node.value, {**self.chain, self.graph: self})
            return node.value
        if node.graph is not self.graph:
            return self.chain[node.graph].eval(node)
        if node in self.values:
            return self.values[node]
        assert isinstance(node, Apply), node
        fn, *args = [self.eval(i) for i in node.inputs]
        value = call(fn, args)
        self.values[node] = value
        return value


def call(fn, args):
    if isinstance(fn, Primitive):
        return fn.impl(*args)
    if isinstance(fn, Closure):
        return run(fn.graph, args, fn.chain)
    raise TypeError(f"cannot call {fn!r}")


def run(graph, args, chain=None):
    chain = chain or {}
    while True:
        frame = Frame(graph, tuple(args), chain)
        out = graph.output
        if isinstance(out, Apply) and out.graph is graph:
            fn = frame.eval(out.inputs[0])
            args = [frame.eval(i) for i in out.inputs[1:]]
            if isinstance(fn, Closure):  # a tail call: loop
                graph, chain = fn.graph, fn.chain
                continue
            return call(fn, args)
        return frame.eval(out)


def evaluate(graph, *args):
    return run(graph, args)
