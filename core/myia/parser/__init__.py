"""The parser: Python functions to IR graphs, with a source location on every node.

    parse(fn) -> Graph      the graph of a Python function (cached per function object)
    parse_source(source, filename, globals) -> {name: Graph}   the defs of a source text

See `parse` for the shapes of the graphs it makes (its Parser's methods for expressions,
calls and loops are in `expressions`, `calls` and `loops`), `blocks` for the SSA
construction and `resolve` for how global names become nodes.
"""

from .blocks import Undefined
from .parse import EFFECTS, parse, parse_source
from .resolve import SPECIAL_VALUES, Resolver, register_special

__all__ = [
    "parse", "parse_source", "Resolver", "register_special", "SPECIAL_VALUES", "EFFECTS",
    "Undefined",
]
