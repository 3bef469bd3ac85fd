"""Drawing: a `Scene` (see `myia.viz.trace`) as a `graphviz.Digraph`.

One cluster per graph, side by side (never nested: nested clusters become unreadable);
solid edges carry data, dashed grey edges free variables from an enclosing graph,
dashed violet edges with a hollow head go from the node that uses a graph's constant
(a call, or the closure it makes) to that graph's cluster.  Colours tell the primal
program (blue), backpropagators (orange), tangent programs (green) and the wrapper
that `grad` makes (lavender) apart.  Every node's tooltip is its source line and its
text IR line.
"""

import html
import re

import graphviz

from ..ir import Graph, Node
from .trace import trace

FONT = "Helvetica,Arial,sans-serif"

# kind -> (node fill, node border, cluster fill, cluster border, legend text)
PALETTES = {
    "primal": ("#dbe8f5", "#5a87b3", "#f5f9fd", "#a8c2dc", "primal"),
    "bprop": ("#fde2c6", "#c98540", "#fff8f0", "#e6c29c", "backward (bprop)"),
    "tangent": ("#d9eed3", "#5d9a55", "#f5fbf3", "#b0d3a8", "tangent (forward mode)"),
    "adjoint": ("#e6e1f3", "#7b6da8", "#f9f8fd", "#c4bcdf", "grad wrapper"),
}
HIGHLIGHT = "#d62728"
# Past these, edges between graphs make `dot` slow (seconds to minutes): see too_big.
LARGE_ITEMS = 700
LARGE_FREE_EDGES = 100
TYPE_COLOR = "#5f6b76"
VALUE_COLOR = "#1a5e1a"
GROUP_COLOR = "#d9a66b"
FAINT_GRAPH_EDGE = "#cdc6e3"
EDGE_COLORS = {"data": "#4d4d4d", "free": "#8f8f8f", "graph": "#7b6da8"}
# what a pass did to a node: (fill, border, legend text); see render's `marks`
MARKS = {
    "removed": ("#f9d3cf", "#c0392b", "removed by the pass"),
    "added": ("#d4f0d0", "#2e8b3a", "added by the pass"),
}


def _h(text):
    return html.escape(text, quote=False)


def _plain(text):
    """A DOT string taken literally (no HTML, no backslash escapes)."""
    return graphviz.escape(text)


def _tooltip(text):
    """Lines joined by DOT's "\\n" escape, the rest literal."""
    return graphviz.nohtml("\\n".join(line.replace("\\", "\\\\") for line in text.split("\n")))


def _label(text, small=None, bold=False, value=None):
    main = f"<b>{_h(text)}</b>" if bold else _h(text)
    if small:
        main += f'<br/><font point-size="9" color="{TYPE_COLOR}">{_h(small)}</font>'
    if value is not None:
        main += f'<br/><font point-size="10" color="{VALUE_COLOR}"><b>= {_h(value)}</b></font>'
    return f"<{main}>"


def _highlighted(highlight):
    """The set of Nodes and Graphs to emphasize, and names (str) to match."""
    if highlight is None:
        return set(), set()
    if isinstance(highlight, (Node, Graph, str)):
        highlight = [highlight]
    objs, names = set(), set()
    for h in highlight:
        (names if isinstance(h, str) else objs).add(h)
    return objs, names


def _graph_of(graph_or_view):
    if isinstance(graph_or_view, Graph):
        return graph_or_view
    graph = getattr(graph_or_view, "graph", None)
    if isinstance(graph, Graph):
        return graph
    raise TypeError(
        f"myia.viz.render draws a Graph or a myia.ir(...) view, not {type(graph_or_view).__name__}"
        " (for a Python function f, use myia.ir(f).render())")


def render(graph_or_view, *, title=None, show_types=True, compact=True, highlight=None,
           cross_edges=None, library=None, values=None, marks=None):
    """Draw a graph and every graph it reaches: a `graphviz.Digraph`.

    graph_or_view: a `Graph` or what `myia.ir(...)` returns.
    title: a line above the drawing.
    show_types: write each node's inferred type under its name (once inference ran).
    compact: fold constants into their user's label (`mul(·, 2.0)`); otherwise each
      use of a constant is a small node of its own.
    highlight: nodes or graphs (or names, as in the text IR or the user's code) to
      emphasize with a red border.
    cross_edges: draw the dashed edges between graphs (free variables, graph
      constants); without them, each free variable is a small dashed node, named
      after it, inside each graph that uses it, and calls name the graph they call.
    library: draw the library's graphs (primitives' rules) the program uses.
    values: {node: value} from a run of the program (`myia.backend.vm.recording`):
      each node shows the value computed there (a sensitivity, in a backpropagator).
    marks: {node or graph: "removed" | "added"}: painted red or green, with a legend
      (what an optimizer pass changed; see `IRView.passes`).
    Graphviz's layout time grows quickly with size and with long edges between
    graphs: by default (None for both), a drawing too big to lay out in about a
    second goes without edges between graphs and without the library's graphs.
    """
    graph = _graph_of(graph_or_view)
    scene = trace(graph, compact=compact, values=values)
    big = too_big(scene)
    cross_edges = not big if cross_edges is None else cross_edges
    library = not big if library is None else library
    notes = []
    if not library:
        notes.append("the library's graphs are left out")
    if not cross_edges:
        notes.append("free variables are drawn by name inside each graph that uses them, "
                     "and calls name the graph they call")
    if notes:
        scene = trace(graph, compact=compact, cross_edges=cross_edges, library=library,
                      values=values)
    note = ("a large drawing: " if big else "") + "; ".join(notes) if notes else None
    return draw(scene, title=title, show_types=show_types, highlight=highlight,
                name=graph.name, note=note, marks=marks)


def too_big(scene):
    """Whether Graphviz would take too long over the edges between graphs."""
    free = sum(e.kind == "free" for e in scene.edges)
    return len(scene.items) > LARGE_ITEMS or free > LARGE_FREE_EDGES


def draw(scene, *, title=None, show_types=True, highlight=None, name="myia", note=None,
         marks=None):
    """The Digraph of a Scene (see `render`); `note`: a small line under the title."""
    paint = _Painter(scene, show_types, highlight, marks)
    dot = graphviz.Digraph(name=_plain(name))
    # mclimit: almost no crossing minimization, so the graphs keep the scene's order
    # left to right (the wrapper, ▶f, ◀f; dot's reordering put ◀f left of ▶f in some
    # drawings and not in others) and the steps the order they are listed in
    dot.attr(
        compound="true", newrank="true", rankdir="TB", nodesep="0.25", ranksep="0.3",
        mclimit="0.01", fontname=FONT, fontsize="11",
    )
    if scene.clusters:
        dot.attr(id="myia_" + scene.clusters[0].id[len("cluster_"):])
    label = _graph_label(title, note, scene.kinds(), set((marks or {}).values()))
    if label:
        dot.attr(label=label, labelloc="t", labeljust="l")
    dot.attr("node", fontname=FONT, fontsize="11", height="0.3", margin="0.08,0.03")
    dot.attr("edge", fontname=FONT, fontsize="8", fontcolor="#777777", arrowsize="0.6",
             penwidth="0.9")
    for c in scene.clusters:
        with dot.subgraph(name=c.id) as sub:
            paint.cluster(sub, c)
    seen = {}
    for e in scene.edges:
        key = f"{e.src}--{e.dst}"
        seen[key] = k = seen.get(key, 0) + 1
        dot.edge(paint.endpoint(e.src), e.dst, **paint.edge(e, key if k == 1 else f"{key}-{k}"))
    return dot


class _Painter:
    """The Graphviz attributes of clusters, nodes and edges."""

    def __init__(self, scene, show_types, highlight, marks=None):
        self.scene = scene
        self.marks = marks or {}
        self.show_types = show_types
        self.objs, self.names = _highlighted(highlight)
        self.rows = {}  # parameter item id -> the id of its cluster's row of inputs
        for c in scene.clusters:
            params = [it for it in c.items if it.role == "parameter"]
            if len(params) > 1:
                for it in params:
                    self.rows[it.id] = self.inputs_id(c)

    def highlighted(self, obj):
        """Given itself, or its name in the user's code (`a`, `g`) or in the text IR
        (`%a.2`, `@g`)."""
        if obj is None:
            return False
        if obj in self.objs:
            return True
        return bool(self.names) and (
            obj.name in self.names or self.scene.ir_names.get(obj) in self.names)

    def cluster(self, sub, c):
        cfill, cborder = PALETTES[c.kind][2:4]
        style = "rounded,filled,dashed" if c.core else "rounded,filled"
        attrs = {"label": _cluster_label(c), "style": style,
                 "fillcolor": cfill, "color": cborder, "fontcolor": "#333333",
                 "tooltip": _tooltip(c.tooltip), "id": c.id, "margin": "10"}
        if self.highlighted(c.graph):
            attrs.update(color=HIGHLIGHT, penwidth="2")
        mark = self.marks.get(c.graph)
        if mark:
            attrs.update(color=MARKS[mark][1], penwidth="2.5")
        sub.attr(**attrs)
        params = [it for it in c.items if it.role == "parameter"]
        if len(params) == 1:
            sub.node(params[0].id, **self.node(params[0], c))
        elif params:
            # the inputs in one row, in the signature's order (as separate nodes, dot's
            # crossing minimization would reorder them)
            sub.node(self.inputs_id(c), **self.inputs_row(params, c))
        grouped = {}
        for grp in c.groups:
            for iid in grp.items:
                grouped[iid] = grp
        for grp in c.groups:  # a box per primal node the backpropagator undoes
            with sub.subgraph(name=grp.id) as box:
                box.attr(label=_label(grp.label), style="rounded,dashed", color=GROUP_COLOR,
                         fontsize="10", fontcolor="#8a5a24", id=grp.id,
                         tooltip=_tooltip(grp.tooltip), margin="6")
                for iid in grp.items:
                    it = self.scene.items[iid]
                    box.node(it.id, **self.node(it, c))
        for it in c.items:
            if it.role != "parameter" and it.id not in grouped:
                sub.node(it.id, **self.node(it, c))

    @staticmethod
    def inputs_id(c):
        return f"{c.id}_inputs"

    def inputs_row(self, params, c):
        """The attributes of the node that holds the parameters, one cell (and port,
        named after the parameter's id) each."""
        fill, border = PALETTES[c.kind][:2]
        cells = []
        for it in params:
            typ = it.type if self.show_types else None
            small = " : ".join(t for t in (it.var, typ) if t)
            text = f"<b>{_h(it.label)}</b>"
            if small:
                text += f'<br/><font point-size="9" color="{TYPE_COLOR}">{_h(small)}</font>'
            if it.value is not None:
                text += (f'<br/><font point-size="10" color="{VALUE_COLOR}"><b>= '
                         f'{_h(it.value)}</b></font>')
            color = HIGHLIGHT if self.highlighted(it.node) else border
            tip = html.escape(it.tooltip, quote=True).replace("\n", "&#10;")
            cells.append(f'<td port="{it.id}" id="{it.id}" bgcolor="{fill}" color="{color}" '
                         f'border="1" tooltip="{tip}" cellpadding="3">{text}</td>')
        label = f'<<table border="0" cellspacing="6" cellpadding="0"><tr>{"".join(cells)}</tr></table>>'
        return {"id": self.inputs_id(c), "label": label, "shape": "plaintext", "margin": "0",
                "tooltip": _tooltip("the parameters, in the order of the signature")}

    def endpoint(self, item_id):
        """Where an edge from `item_id` starts: a parameter of a row is a port of it."""
        row = self.rows.get(item_id)
        return f"{row}:{item_id}:s" if row else item_id

    def node(self, item, c):
        fill, border = PALETTES[item.kind or c.kind][:2]
        typ = item.type if self.show_types else None
        small = " : ".join(t for t in (item.var, typ) if t) or None
        attrs = {"id": item.id, "tooltip": _tooltip(item.tooltip), "color": border,
                 "label": _label(item.label, small, bold=item.role == "parameter",
                                 value=item.value)}
        if item.role == "apply":
            attrs.update(shape="box", style="rounded,filled", fillcolor=fill)
        elif item.role == "parameter":
            attrs.update(shape="invhouse", style="filled", fillcolor=fill)
        elif item.role == "free":  # a free variable by name (no edges between graphs)
            attrs.update(shape="box", style="rounded,filled,dashed", fillcolor=fill, fontsize="10")
        elif item.role == "return":
            attrs.update(shape="box", style="rounded,filled,bold", fillcolor="white")
        else:  # a constant of its own (compact=False)
            attrs.update(shape="plaintext", fontsize="9", fontcolor="#555555", height="0.2")
        if self.highlighted(item.node):
            attrs.update(color=HIGHLIGHT, penwidth="2.5")
        mark = self.marks.get(item.node) if item.node is not None else None
        if mark:
            fill, border, _ = MARKS[mark]
            attrs.update(fillcolor=fill, color=border, penwidth="2",
                         style=attrs.get("style", "filled"))
        return attrs

    def edge(self, e, id):
        attrs = {"id": id, "color": EDGE_COLORS[e.kind]}
        if e.label:
            attrs["label"] = _plain(e.label)
        if e.kind == "free":
            attrs["style"] = "dashed"
        elif e.kind == "graph":
            # never ranks the layout: calls go up (recursion) as often as down
            attrs.update(style="dashed", arrowhead="empty", constraint="false")
            if e.lhead:
                attrs["lhead"] = e.lhead
                if self.scene.cluster(e.lhead).core:  # a call of library code: recede
                    attrs.update(color=FAINT_GRAPH_EDGE, penwidth="0.6")
        return attrs


def spaced_marks(name):
    """A graph's name with a thin space between stacked marks (`◀ ▶f`: in bold,
    `◀▶` reads as one diamond)."""
    return re.sub("([◀▶])(?=[◀▶])", "\\1\u2009", name)


def _cluster_label(c):
    params = ", ".join(_h(p) for p in c.params)
    text = f"<b>{_h(spaced_marks(c.name))}</b>({params})"
    if c.core:
        text += '  <font point-size="8" color="#888888"><i>library</i></font>'
    return f"<{text}>"


def _graph_label(title, note, kinds, marks=()):
    rows = []
    if title:
        rows.append(f'<font point-size="14"><b>{_h(title)}</b></font>')
    if note:
        rows.append(f'<font point-size="9" color="#777777">{_h(note)}</font>')
    legend = [PALETTES[k][:2] + (PALETTES[k][4],) for k in PALETTES if k in kinds] \
        if len(kinds) > 1 else []
    legend += [MARKS[m] for m in MARKS if m in marks]
    if legend:
        cells = "".join(
            f'<td bgcolor="{fill}" border="1" color="{border}">'
            f'<font point-size="9">{_h(text)}</font></td>'
            for fill, border, text in legend)
        rows.append(f'<table border="0" cellspacing="4" cellpadding="2"><tr>{cells}</tr></table>')
    if not rows:
        return None
    if len(rows) == 1:
        return f"<{rows[0]}>"
    body = "".join(f'<tr><td align="left">{r}</td></tr>' for r in rows)
    return f'<<table border="0" cellspacing="0" cellpadding="0">{body}</table>>'
