"""Drawings that stay legible at notebook width.

A notebook shows a picture at most a column wide (about 1,000 px): a wider SVG is
scaled down, and its labels with it.  `label_px(svg)` is the median size of a
picture's labels, in pixels, once shown in such a column; a label under 9 px cannot be
read.  `pictures(graph_or_view, ...)` draws a program as one picture when it fits, and
otherwise as an overview (one box per graph, arrows for the calls and closures between
them) followed by one picture per graph, each of which fits.
"""

import re
import statistics

import graphviz

from ..ir import Graph
from .draw import FONT, PALETTES, _graph_of, _h, _plain, draw, render, spaced_marks
from .svg import to_svg
from .trace import Cluster, Edge, Item, Scene, trace

#: the width at which a notebook shows a picture, and the smallest legible label
COLUMN_PX = 1000
MIN_LABEL_PX = 9.0

_WIDTH = re.compile(r'<svg width="([\d.]+)pt"')
_FONT = re.compile(r'<text [^>]*font-size="([\d.]+)"')


def svg_width_pt(svg):
    m = _WIDTH.search(svg)
    return float(m.group(1)) if m else 0.0


def label_px(svg, column_px=COLUMN_PX):
    """The median label size, in pixels, of `svg` shown `column_px` wide (or at its own
    size when narrower): SVG points are 4/3 of a pixel."""
    sizes = [float(s) for s in _FONT.findall(svg)]
    if not sizes:
        return float("inf")
    width_px = svg_width_pt(svg) * 4 / 3
    scale = min(1.0, column_px / width_px) if width_px else 1.0
    return statistics.median(sizes) * 4 / 3 * scale


def fits(svg, column_px=COLUMN_PX):
    return label_px(svg, column_px) >= MIN_LABEL_PX


def pictures(graph_or_view, *, title=None, column_px=COLUMN_PX, **options):
    """[(caption, svg)]: the program in one picture if its labels are legible at
    `column_px`, else an overview and one picture per graph (options: see `render`).
    A graph still too wide is drawn with its backward steps collapsed (one box per
    forward node they undo), then with its most used values named in their users'
    labels instead of fans of long edges."""
    graph = _graph_of(graph_or_view)
    values = options.get("values")
    library = bool(options.get("library"))
    scene = trace(graph, cross_edges=False, library=library, values=values)
    kw = dict(show_types=options.get("show_types", True), highlight=options.get("highlight"),
              marks=options.get("marks"))
    singles = None
    if len(scene.clusters) > 1:
        # each graph alone first (quick to lay out): when side by side they could not be
        # read, the whole drawing (slow to lay out, with its edges between graphs) is
        # not tried
        singles = [to_svg(draw(_one_cluster(scene, c), name=c.name, **kw))
                   for c in scene.clusters]
    if singles is None or _could_fit(singles, column_px):
        svg = to_svg(render(graph_or_view, title=title, **options))
        if fits(svg, column_px):
            return [(None, svg)]
    out = []
    if len(scene.clusters) > 1:
        out.append(("overview: one box per graph; arrows show which graph calls or makes "
                    "which", to_svg(_overview(scene, title))))
    else:
        kw["title"] = title
    for k, c in enumerate(scene.clusters):
        caption = c.name if len(scene.clusters) > 1 else title
        svg = singles[k] if singles else to_svg(draw(_one_cluster(scene, c), name=c.name, **kw))
        if not fits(svg, column_px) and c.groups:
            # still too wide: one box per primal node the backpropagator undoes
            svg = to_svg(draw(_collapsed(_one_cluster(scene, c), c), name=c.name, **kw))
            caption = f"{c.name}, one box per step of the backward pass"
        for least_uses in (4, 3, 2):
            if fits(svg, column_px):
                break
            folded = _most_used(scene, c, least_uses)
            if not folded:
                continue
            again = trace(graph, cross_edges=False, library=library, values=values,
                          fold=folded)
            c2 = next(d for d in again.clusters if d.graph is c.graph)
            svg = to_svg(draw(_one_cluster(again, c2), name=c.name, note=(
                f"values used {least_uses} times or more are named in their users' "
                f"labels, not drawn as edges"), **kw))
        out.append((caption, svg))
    return out


def _could_fit(svgs, column_px):
    """Whether pictures drawn side by side (as the whole drawing puts its graphs) could
    have legible labels: their widths add up."""
    sizes = [float(x) for svg in svgs for x in _FONT.findall(svg)]
    if not sizes:
        return True
    width_px = sum(svg_width_pt(svg) for svg in svgs) * 4 / 3
    scale = min(1.0, column_px / width_px) if width_px else 1.0
    return statistics.median(sizes) * 4 / 3 * scale >= MIN_LABEL_PX


def _most_used(scene, cluster, least_uses):
    """The nodes of `cluster` (parameters and operations) that `least_uses` or more of
    its nodes take as inputs."""
    ids = {it.id: it for it in cluster.items}
    uses = {}
    for e in scene.edges:
        if e.kind == "data" and e.src in ids and e.dst in ids:
            uses[e.src] = uses.get(e.src, 0) + 1
    return {ids[i].node for i, n in uses.items()
            if n >= least_uses and ids[i].node is not None and ids[i].role in ("parameter",
                                                                             "apply")}


def _collapsed(part, cluster):
    """The scene of a backpropagator with each group (the steps that undo one primal
    node) drawn as one box, and the edges between boxes."""
    owner = {}
    c2 = Cluster(cluster.id, cluster.graph, cluster.kind, cluster.core, cluster.name,
                 cluster.params, cluster.tooltip)
    c2.ret = cluster.ret
    out = Scene()
    out.ir_names = part.ir_names
    for grp in cluster.groups:
        n = len(grp.items)
        box = Item(grp.id, "apply", grp.label, f"{n} operation{'s' if n != 1 else ''}",
                   grp.tooltip, None, cluster.graph)
        for iid in grp.items:
            owner[iid] = grp.id
        c2.items.append(box)
    for it in cluster.items:
        if it.id not in owner:
            c2.items.append(it)
    out.clusters = [c2]
    out.items = {it.id: it for it in c2.items}
    seen = set()
    for e in part.edges:
        src, dst = owner.get(e.src, e.src), owner.get(e.dst, e.dst)
        if src == dst or (src, dst) in seen:
            continue
        seen.add((src, dst))
        out.edges.append(Edge(src, dst, e.kind))
    return out


def _one_cluster(scene, cluster):
    """The scene of one cluster alone (drawn without edges between graphs, its free
    variables are small nodes named after them inside it)."""
    part = Scene()
    part.clusters = [cluster]
    ids = {it.id for it in cluster.items}
    part.items = {i: scene.items[i] for i in ids}
    part.edges = [e for e in scene.edges if e.src in ids and e.dst in ids]
    part.ir_names = scene.ir_names
    return part


def _overview(scene, title):
    """One box per graph (its kind's colour, its size), an arrow per graph it calls
    or whose closure it makes, and a dashed one per graph whose values it reads."""
    dot = graphviz.Digraph(name="overview")
    dot.attr(rankdir="LR", fontname=FONT, fontsize="11", nodesep="0.2", ranksep="0.35")
    if title:
        dot.attr(label=f"<<b>{_h(title)}</b>>", labelloc="t", labeljust="l")
    dot.attr("node", fontname=FONT, fontsize="11", shape="box", style="rounded,filled")
    by_graph = {c.graph: c for c in scene.clusters}
    edges = _overview_edges(scene, by_graph)
    cycles = _cycles(scene.clusters, [(a, b) for a, b, kind in edges if kind == "uses"])
    boxed = {}
    for k, members in enumerate(cycles):
        # a loop (or a recursion) is one box: its graphs call each other in a cycle
        loop = any(":for_" in c.name or ":while" in c.name for c in members)
        with dot.subgraph(name=f"cluster_cycle{k}") as box:
            box.attr(label="a loop: its graphs call each other" if loop else
                     "a recursion: these graphs call each other", style="rounded,dashed",
                     color="#9a8fc4", fontsize="9", fontcolor="#5b4f8a")
            for c in members:
                boxed[c.id] = box
                _overview_node(box, c)
    for c in scene.clusters:
        if c.id not in boxed:
            _overview_node(dot, c)
    for src, dst, kind in edges:
        dot.edge(src, dst, style="dashed" if kind == "free" else "solid",
                 color="#8f8f8f" if kind == "free" else "#7b6da8")
    return dot


def _overview_node(dot, c):
    fill, border = PALETTES[c.kind][:2]
    n = sum(it.role == "apply" for it in c.items)
    dot.node(c.id, label=f"<<b>{_h(spaced_marks(c.name))}</b><br/>"
             f'<font point-size="9">{n} operation{"s" if n != 1 else ""}</font>>',
             fillcolor=fill, color=border, tooltip=_plain(c.name))


def _cycles(clusters, edges):
    """The groups of clusters on a cycle of `edges` (cluster ids), as lists of clusters
    (a cluster that calls itself is a group of one)."""
    succ = {}
    for a, b in edges:
        succ.setdefault(a, set()).add(b)

    def reach(start):
        seen, todo = set(), [start]
        while todo:
            for nxt in succ.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    reached = {c.id: reach(c.id) for c in clusters}
    groups, done = [], set()
    for c in clusters:
        if c.id in done or c.id not in reached[c.id]:
            continue
        members = [d for d in clusters if d.id in reached[c.id] and c.id in reached[d.id]]
        done.update(d.id for d in members)
        groups.append(members)
    return groups


def _overview_edges(scene, by_graph):
    """[(src cluster id, dst cluster id, "uses" | "free")], once each."""
    out, seen = [], set()
    for c in scene.clusters:
        for it in c.items:
            node = it.node
            if node is None or it.role not in ("apply", "free"):
                continue
            targets = []
            if it.role == "free" and node.graph in by_graph:
                targets.append((by_graph[node.graph].id, c.id, "free"))
            for inp in getattr(node, "inputs", ()):
                g = getattr(inp, "value", None)
                if isinstance(g, Graph) and g in by_graph and g is not c.graph:
                    targets.append((c.id, by_graph[g].id, "uses"))
            for t in targets:
                if t not in seen:
                    seen.add(t)
                    out.append(t)
    return out


__all__ = ["COLUMN_PX", "MIN_LABEL_PX", "fits", "label_px", "pictures", "svg_width_pt"]
