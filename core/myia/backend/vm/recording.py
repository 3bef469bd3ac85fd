"""The values a program computes, node by node, for a drawing that shows them (the
`values` view of `%grad`: each forward node with its value, each backward node with
its sensitivity, as micrograd draws them).

`run_recording(graph, args)` runs `graph` on the reference VM and records, for every
node that a primitive computes, every call and every parameter of a graph that is
called, the last value it took; a node that ran several times (in a loop's body, a
recursion) has a `Repeated` value: the last one, and how many times it ran.
"""

from .vm import VM, Closure


class RecordingVM(VM):
    """The reference VM, noting the value of each primitive node and parameter."""

    def __init__(self):
        super().__init__()
        self.values = {}
        self.counts = {}

    def impl_for(self, node, prim):
        impl = prim.impl
        if node is None:
            return impl
        values, counts = self.values, self.counts

        def run(*args):
            out = impl(*args)
            values[node] = out
            counts[node] = counts.get(node, 0) + 1
            return out

        return run

    def _enter(self, fn, args, node):
        frame, result = super()._enter(fn, args, node)
        if frame is not None:
            for p, v in zip(frame.plan.graph.parameters, frame.values):
                self.values[p] = v
                self.counts[p] = self.counts.get(p, 0) + 1
            if node is not None:  # its value: what the graph it called returned
                self.callees[node] = frame.plan.graph
                self.counts[node] = self.counts.get(node, 0) + 1
        elif node is not None:
            self.values[node] = result
            self.counts[node] = self.counts.get(node, 0) + 1
        return frame, result

    callees = None


class Repeated:
    """The value of a node that ran `count` times: the last one."""

    __slots__ = ("value", "count")

    def __init__(self, value, count):
        self.value, self.count = value, count


def run_recording(graph, args):
    """(the result, {node: value}, {node: how many times it ran}) of calling `graph`
    (a graph without free variables) on `args`; a value that a node took several
    times is a `Repeated` (the last one)."""
    vm = RecordingVM()
    vm.callees = {}
    result = vm.call(Closure(graph, None), list(args))
    values = vm.values
    for node, callee in vm.callees.items():
        out = callee.output
        if out in values:
            values[node] = values[out]
        elif out.is_constant():
            values[node] = out.value
    for node, n in vm.counts.items():
        if n > 1 and node in values:
            values[node] = Repeated(values[node], n)
    return result, values, vm.counts
