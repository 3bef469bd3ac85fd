"""Primitives: one definition each, with all of its rules next to it.

`from myia.prim import ops as P` gives every primitive by name (`P.add`, `P.switch`).
"""

from . import arith, array, grad_ops, logic, shape, structure  # noqa: F401
from .primitive import Primitive, all_primitives, bprop, compile_time, get_primitive, jet, jvp

__all__ = ["Primitive", "all_primitives", "bprop", "compile_time", "get_primitive", "jet", "jvp"]
