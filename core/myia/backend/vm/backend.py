"""The VM as a backend (see myia.backend): the pipeline's program, interpreted."""

import numpy as np

from ...arguments import entry_values, exit_value, fresh, internal_values
from ...infer import signature_of
from .vm import VM, Closure


class VMBackend:
    """Runs the programs of `program(fn, signature)` on the reference VM."""

    name = "vm"

    def __init__(self, program):
        self.program = program
        self.vm = VM()

    def compile(self, program):
        vm = self.vm
        closure = Closure(program, None)
        return lambda *args: vm.call(closure, list(args))

    def run(self, fn, args):
        args = entry_values(args)
        graph = self.program(fn, signature_of(args))
        values = internal_values(args)
        result = self.vm.call(Closure(graph, None), values)
        result = fresh(result, [a for a in values if isinstance(a, np.ndarray)])
        return exit_value(result, graph.flags.get("result"))  # (lists and dicts)


__all__ = ["VMBackend"]
