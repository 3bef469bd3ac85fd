"""The graph IR (see `anf` for what the nodes mean)."""

from .anf import (Apply, Constant, EnvKey, Graph, Node, Parameter, is_graph_constant,
                  is_loop_graph)
from .clone import clone, clone_many, inline
from .manager import GraphManager, manage
from .print import format_graph, format_graphs

__all__ = [
    "Apply", "Constant", "EnvKey", "Graph", "Node", "Parameter", "is_graph_constant",
    "is_loop_graph",
    "clone", "clone_many", "inline", "GraphManager", "manage", "format_graph", "format_graphs",
]
