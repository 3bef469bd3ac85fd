"""Automatic differentiation by source transformation: reverse mode (`reverse`, the
J transform), forward mode (`forward`, jvp) and Taylor mode (`taylor`, jet)."""

from .grad import GRAD, VALUE_AND_GRAD, GradMacro, check_argnums, grad_graph, vjp_apply_graph
from .reverse import J_graph, lift_closure, prim_fprop

__all__ = ["GRAD", "VALUE_AND_GRAD", "GradMacro", "J_graph", "check_argnums", "grad_graph",
           "lift_closure", "prim_fprop", "vjp_apply_graph"]
