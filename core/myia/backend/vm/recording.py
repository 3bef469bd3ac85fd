"""The values a program computes, node by node, for a drawing that shows them (the
`values` view of `%grad`: each forward node with its value, each backward node with
its sensitivity, as micrograd draws them).

`run_recording(graph, args)` runs `graph` on the reference VM and records, for every
node that a primitive computes and every parameter of a graph that is called, the last
value it took (a loop's body runs several times: `counts` says how many).
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
        elif node is not None:
            self.values[node] = result
        return frame, result


def run_recording(graph, args):
    """(the result, {node: value}, {node: how many times it ran}) of calling `graph`
    (a graph without free variables) on `args`."""
    vm = RecordingVM()
    result = vm.call(Closure(graph, None), list(args))
    return result, vm.values, vm.counts
