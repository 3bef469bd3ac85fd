"""Graphviz drawings of graphs: `render(graph)` is a `graphviz.Digraph`.

Traversal (`trace`: what is drawn, as plain data) is separate from drawing (`draw`:
the Digraph); `to_svg` makes the picture, or raises `VizUnavailable` (with the DOT
source) where Graphviz's `dot` is not installed.

    import myia, myia.viz
    d = myia.viz.render(myia.ir(myia.grad(f), 2.0))
    svg = myia.viz.to_svg(d)
"""

from .draw import PALETTES, draw, render
from .fit import fits, label_px, pictures
from .svg import VizUnavailable, to_svg
from .trace import Scene, graph_kind, graph_kinds, trace

__all__ = [
    "render", "draw", "trace", "to_svg", "VizUnavailable", "Scene", "graph_kind", "graph_kinds",
    "PALETTES", "pictures", "fits", "label_px",
]
