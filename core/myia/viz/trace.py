"""Traversal: what a drawing of graphs shows, as plain data (no Graphviz here).

`trace(graph)` walks every graph reachable from `graph`, in the text printer's order
and with the text printer's names, and returns a `Scene`:

    Scene.clusters   one Cluster per graph: its items (parameters, applies, constants
                     when not folded, one return) in the manager's node order
    Scene.edges      Edge(src, dst, kind) with kind "data" (a value flows from src to
                     its user dst), "free" (dst, in a nested graph, reads src, a node
                     of an enclosing graph) or "graph" (dst is the graph whose
                     constant src uses: a call of it, or the closure src makes)

Every id is derived from the user's names (`%x.2` -> `x.2`), never from `id()`, so
the same graph gives the same scene, and a program before and after optimization
keeps the names of the values the user named.  `myia.viz.draw` turns a scene into
a `graphviz.Digraph`.
"""

import os

import numpy as np

from ..ir import Apply, Constant, Graph, manage
from ..ir.print import Namer, format_value


MAX_CONSTANT_CHARS = 18
MAX_TYPE_CHARS = 28

# The library's own graphs (primitives' rules, written in the subset) live here.
LIBRARY_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Characters of IR names that make poor DOT/SVG ids ("::" is a port in DOT).
_ID_CHARS = {"▶": "fwd_", "◀": "bwd_", ":": "__", "%": "", "@": "", " ": "_"}


class Item:
    """One drawn node.

    role: "parameter", "apply", "constant", "return", or "free": a free variable
      drawn by name inside the graph that uses it (see `trace(cross_edges=False)`).
    label: the main text (`mul`, `mul(·, 2.0)`, `@g`, `call`, `x`, `return`).
    var: for an apply, the user's variable name it was bound to, or None.
    type: the inferred type as short text, or None.
    tooltip: "file:line: source line" and the text IR line of the node.
    node: the IR node (None for a return), graph: the graph it is drawn in.
    kind: the colour to draw it in when not its cluster's (a free variable: its owner's).
    """

    __slots__ = ("id", "role", "label", "var", "type", "tooltip", "node", "graph", "kind",
                 "value")

    def __init__(self, id, role, label, type, tooltip, node, graph, var=None, kind=None):
        self.id = id
        self.role = role
        self.label = label
        self.var = var
        self.type = type
        self.tooltip = tooltip
        self.node = node
        self.graph = graph
        self.kind = kind
        self.value = None  # the value computed there, as short text (the values view)

    def __repr__(self):
        return f"<Item {self.id} {self.role} {self.label!r}>"


class Edge:
    """src -> dst; kind "data", "free" or "graph".

    label: the argument position (or "fn") where the drawing would be ambiguous
    without it.  For a "graph" edge, dst is the return item of the graph used and
    lhead its cluster (None when src is inside it: a graph that calls itself).
    """

    __slots__ = ("src", "dst", "kind", "label", "lhead")

    def __init__(self, src, dst, kind, label=None, lhead=None):
        self.src = src
        self.dst = dst
        self.kind = kind
        self.label = label
        self.lhead = lhead

    def __repr__(self):
        label = f" {self.label}" if self.label else ""
        return f"<Edge {self.src} -> {self.dst} {self.kind}{label}>"


class Cluster:
    """The drawing of one graph.

    kind: "primal", "bprop", "tangent" or "adjoint" (see `graph_kind`).
    core: True for the library's own graphs (primitives' rules, and their derivatives).
    name, params: the graph's name and its parameters' names, for the title;
    tooltip: the source line of the graph and its text IR header.
    ret: the id of the return item.
    groups: in a backpropagator, the items that undo one primal node together
      (`Group`: "◀ y = x * w (line 3)").
    """

    __slots__ = ("id", "graph", "kind", "core", "name", "params", "tooltip", "items", "ret",
                 "groups")

    def __init__(self, id, graph, kind, core, name, params, tooltip):
        self.id = id
        self.graph = graph
        self.kind = kind
        self.core = core
        self.name = name
        self.params = params
        self.tooltip = tooltip
        self.items = []
        self.ret = None
        self.groups = []


class Group:
    """The items of a backpropagator that compute the sensitivities of one primal
    node's inputs: drawn in a box labelled by that node (`◀ y = x * w (line 3)`)."""

    __slots__ = ("id", "label", "tooltip", "items")

    def __init__(self, id, label, tooltip, items):
        self.id = id
        self.label = label
        self.tooltip = tooltip
        self.items = items

    def __repr__(self):
        return f"<Group {self.id} {self.label!r} {len(self.items)} items>"


class Scene:
    """clusters (in drawing order), edges, items ({id: Item}), and ir_names: the
    text IR's name of every node and graph ("%x.2", "@g")."""

    __slots__ = ("clusters", "edges", "items", "ir_names", "_by_id")

    def __init__(self):
        self._by_id = {}
        self.ir_names = {}
        self.clusters = []
        self.edges = []
        self.items = {}

    def cluster(self, id):
        """The Cluster with this id."""
        if len(self._by_id) != len(self.clusters):
            self._by_id = {c.id: c for c in self.clusters}
        return self._by_id[id]

    def kinds(self):
        return list(dict.fromkeys(c.kind for c in self.clusters))


def graph_kind(graph):
    """"bprop" (a backpropagator), "tangent" (forward mode), "adjoint" (the wrapper
    that `grad` makes: runs the forward pass, seeds and calls the backpropagator),
    "primal" (the forward graphs "fprop" of the J transform), or None: a graph that
    says nothing (user code, or a primitive's bprop rule; see `graph_kinds`)."""
    kind = graph.flags.get("kind")
    if kind == "bprop" or graph.name.startswith("◀"):
        return "bprop"
    if kind in ("tangent", "adjoint"):
        return kind
    if kind == "fprop" or graph.name.startswith("▶"):
        return "primal"
    return None


def graph_kinds(graphs, mng):
    """The kind of every graph: its own (`graph_kind`), else the kind its users and
    its parent agree on (the rule `bprop_mul`, called only by backpropagators, is
    backward code too), else "primal"."""
    kinds = {g: graph_kind(g) for g in graphs}
    for _ in range(len(graphs)):
        changed = False
        for g in graphs:
            if kinds[g] is not None or graph_kind(g) is not None:
                continue
            around = [u for u in mng.graph_users(g) if u is not g]
            parent = mng.parent(g)
            if parent is not None:
                around.append(parent)
            found = {kinds.get(u) for u in around}
            if len(found) == 1 and None not in found:
                kinds[g] = found.pop()
                changed = True
        if not changed:
            break
    return {g: k or "primal" for g, k in kinds.items()}


# ---- text --------------------------------------------------------------------------


def shorten(text, limit):
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_type(abstract):
    """Short text of an inferred type (`f64`, `f64[3,4]`)."""
    short = getattr(abstract, "short", None)
    text = short() if callable(short) else str(abstract)
    return shorten(text, MAX_TYPE_CHARS)


def location_of(node, graph=None):
    """The source location of a node; for a node made by a transform, the location of
    the user's node it derives from; else the location of its graph."""
    seen = 0
    n = node
    while n is not None and seen < 16:
        if n.loc is not None:
            return n.loc
        n = n.primal
        seen += 1
    return graph.loc if graph is not None else None


def format_location(loc):
    if loc is None:
        return None
    src = loc.source_line.strip()
    where = f"{os.path.basename(loc.filename)}:{loc.line}"
    return f"{where}: {src}" if src else where


def _undo_label(primal, loc, shared, namer):
    """"◀ y = x * w (line 3)": what a group of backward items undoes; with the
    operation when the line holds several (`◀ tanh in z = np.tanh(y + b) (line 5)`)."""
    fn = primal.inputs[0] if isinstance(primal, Apply) else None
    op = None
    if isinstance(fn, Constant):
        op = format_value(fn.value, namer) if isinstance(fn.value, Graph) \
            else getattr(fn.value, "ir_name", None)
    if loc is None:
        what = op or (primal.name or "?")
        return f"◀ {what}"
    src = shorten(loc.source_line.strip(), 40)
    head = f"{op} in {src}" if shared and op else src
    if isinstance(primal, Apply) is False and primal.name:
        head = f"{primal.name} (a parameter)"
    return f"◀ {head} (line {loc.line})"


def _tooltip(loc, ir_line):
    where = format_location(loc)
    return f"{where}\n{ir_line}" if where else ir_line


class _Ids:
    """DOT/SVG ids from IR names: ASCII, unique, deterministic."""

    def __init__(self):
        self.taken = set()

    def make(self, base):
        safe = "".join(
            ch if ch.isascii() and (ch.isalnum() or ch in "_.-")
            else _ID_CHARS.get(ch, f"u{ord(ch):x}")
            for ch in base
        )
        if not safe or not safe[0].isalpha():
            safe = "n" + safe  # an SVG id starts with a letter
        name, k = safe, 2
        while name in self.taken:
            name = f"{safe}-{k}"
            k += 1
        self.taken.add(name)
        return name


# ---- the walk ------------------------------------------------------------------------


def resolve_function(node, depth=8):
    """The graph a computed function certainly is, when the IR says so statically,
    else None: `tuple_getitem(@G(...), k)` where G returns `make_tuple(..., @H, ...)`
    with @H at k (how the J transform hands out a backpropagator: `call @◀mul`), or
    `@G(...)` where G returns the closure @H (`call @add`)."""
    value = _static(node, depth)
    if isinstance(value, Constant) and isinstance(value.value, Graph):
        return value.value
    return None


def _static(node, depth):
    """The node that `node` certainly equals, following calls of constant graphs to
    what they return and tuple_getitem into make_tuple; `node` when nothing is known."""
    if depth == 0 or not isinstance(node, Apply):
        return node
    fn = node.inputs[0]
    if isinstance(fn, Constant) and isinstance(fn.value, Graph):
        out = fn.value.output
        return node if out is None else _static(out, depth - 1)
    if _is_prim(fn, "tuple_getitem") and len(node.inputs) == 3:
        key = node.inputs[2]
        if isinstance(key, Constant) and isinstance(key.value, int):
            tup = _static(node.inputs[1], depth - 1)
            if (isinstance(tup, Apply) and _is_prim(tup.inputs[0], "make_tuple")
                    and 0 <= key.value < len(tup.inputs) - 1):
                return _static(tup.inputs[key.value + 1], depth - 1)
    return node


# Checks that only inference reads, identities at run time: a gradient is asked of a
# float, a bound of range() is an int.  A drawing shows their argument in their place.
GUARDS = ("differentiable", "range_bound")


def see_through(node):
    """What a drawing shows for `node`: the argument of a guard, else `node`."""
    while isinstance(node, Apply) and any(_is_prim(node.inputs[0], g) for g in GUARDS):
        node = node.inputs[1]
    return node


def _is_prim(node, name):
    """A constant holding the primitive called `name` (viz knows only ir: by name)."""
    return (isinstance(node, Constant) and not isinstance(node.value, Graph)
            and getattr(node.value, "ir_name", None) == name)


def ordered_graphs(root, mng):
    """The graphs in the text printer's order: the root's scope, then graphs used."""
    out = list(mng.scope(root))
    for g in mng.graphs:
        if g not in out:
            out.append(g)
    return out


def _name_like_printer(graphs, mng, namer):
    """Name every node in the order `myia.ir.print` does, so the names in a drawing
    (and in its tooltips) are the names of `str(myia.ir(...))`."""
    for g in graphs:
        namer.graph(g)
        for p in g.parameters:
            namer.node(p)
    for g in graphs:
        for n in mng.free_variables_direct(g):
            namer.node(n)
        for node in mng.nodes(g):
            if isinstance(node, Apply):
                namer.node(node)
                for i in node.inputs:
                    if not isinstance(i, Constant):
                        namer.node(i)
                    elif isinstance(i.value, Graph):
                        namer.graph(i.value)
        if g.output is not None and not isinstance(g.output, Constant):
            namer.node(g.output)


def is_library(graph):
    """A graph of the library's own code: flagged "core", or written in myia/."""
    if graph.flags.get("core"):
        return True
    loc = graph.loc
    return loc is not None and os.path.abspath(loc.filename).startswith(LIBRARY_DIR + os.sep)


def format_short(value, width=26):
    """A value as a node shows it: a number with 4 significant digits, an array as
    its shape and its first numbers, a tuple by its elements."""
    if type(value).__name__ == "Repeated":  # (myia.backend.vm.recording)
        return shorten(f"{format_short(value.value, width)} (last of {value.count})",
                       width + 12)
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.4g}"
    if isinstance(value, np.ndarray):
        flat = value.reshape(-1)[:3]
        nums = " ".join(f"{float(v):.3g}" for v in flat) if value.dtype.kind in "fiub" else ""
        more = " …" if value.size > 3 else ""
        return shorten(f"{'×'.join(map(str, value.shape)) or '0-d'}: {nums}{more}", width)
    if isinstance(value, tuple):
        return shorten("(" + ", ".join(format_short(v, 10) for v in value) + ")", width)
    if value is None:
        return "None"
    name = type(value).__name__
    if name in ("Closure", "Partial", "Primitive"):
        return "fn"
    if name == "EnvInstance":
        return f"env({len(value.contents)})"
    return shorten(name, width)


def trace(graph, *, compact=True, cross_edges=True, library=True, values=None, fold=()):
    """The Scene of `graph` and every graph it reaches (see the module docstring).

    compact: fold constants into their user's label (`mul(·, 2.0)`); otherwise each
      use of a constant is a small node of its own.
    cross_edges: draw edges between graphs: from a free variable's node to its uses
      in nested graphs, and from a graph constant's use to that graph.  Without them
      (what keeps Graphviz fast on big programs), a free variable is a small node,
      named after it, inside each graph that uses it; a call names its graph.
    library: draw the library's own graphs (`is_library`) that the program uses;
      without them, their calls still name them (`@▶mul`).
    values: {node: value} computed by a run of the program (myia.backend.vm.recording):
      item shows its value (a backpropagator's, a sensitivity).
    fold: nodes named in their users' labels instead of drawn edges (`mul(x, ·)`):
      a value used all over a graph draws as a fan of long edges that makes the
      picture too wide to read (see myia.viz.fit).
    """
    mng = manage(graph)
    graphs = ordered_graphs(graph, mng)
    namer = Namer()
    _name_like_printer(graphs, mng, namer)  # all of them: names as in the text IR
    if not library and not is_library(graph):
        graphs = [g for g in graphs if not is_library(g)]
    scene = _Tracer(mng, namer, graphs, compact, cross_edges, fold).run()
    if values:
        for item in scene.items.values():
            if item.node is not None and item.node in values:
                item.value = format_short(values[item.node])
    return scene


class _Tracer:
    def __init__(self, mng, namer, graphs, compact, cross_edges, fold=()):
        self.mng = mng
        self.fold = set(fold)
        self.cross_edges = cross_edges
        self.proxies = {}
        self.namer = namer
        self.graphs = graphs
        self.kinds = graph_kinds(graphs, mng)
        self.compact = compact
        self.ids = _Ids()
        self.scene = Scene()
        self.node_ids = {}
        self.clusters = {}

    # ids -----------------------------------------------------------------------------

    def text(self, node):
        if isinstance(node, Constant):
            return format_value(node.value, self.namer)
        return self.namer.node(node)

    def short_name(self, node):
        """The user's name of a node (`x`, where the text IR may say `%x.2`), else
        its text IR name (`%7`)."""
        return node.name or self.namer.node(node)

    def free_name(self, node):
        """What a label calls a value of an enclosing graph: its user's name, else
        what computes it when that is short (`cos(x)`, a value the forward pass kept
        for the backward one), else its text IR name."""
        if node.name or not isinstance(node, Apply) or not node.inputs[0].is_constant():
            return self.short_name(node)
        args = node.inputs[1:]
        if len(args) > 2 or not all(a.name or a.is_constant() for a in args):
            return self.short_name(node)
        fn = node.inputs[0].value
        parts = [a.name if a.name else shorten(self.text(a), 8) for a in args]
        return f"{getattr(fn, 'name', fn)}({', '.join(parts)})"

    def node_id(self, node):
        if node not in self.node_ids:
            self.node_ids[node] = self.ids.make(self.namer.node(node))
        return self.node_ids[node]

    def add(self, cluster, item):
        cluster.items.append(item)
        self.scene.items[item.id] = item
        return item

    def edge(self, src, dst, kind, label=None, lhead=None):
        self.scene.edges.append(Edge(src, dst, kind, label, lhead))

    def typ(self, node):
        return format_type(node.abstract) if node.abstract is not None else None

    def type_suffix(self, node):
        return f" : {node.abstract}" if node.abstract is not None else ""

    # walk ----------------------------------------------------------------------------

    def run(self):
        # clusters (and their ids) first, so that edges can point at any of them
        for g in self.graphs:
            self.make_cluster(g)
        for g in self.graphs:
            self.fill_cluster(g)
        self.scene.ir_names = dict(self.namer.names)
        return self.scene

    def make_cluster(self, g):
        gname = self.namer.graph(g)
        cid = self.ids.make("cluster_" + gname)
        params = [self.short_name(p) for p in g.parameters]
        header = f"graph {gname}({', '.join(self.namer.node(p) for p in g.parameters)})"
        fvs = self.mng.free_variables_direct(g)
        if fvs:
            header += " [free: " + ", ".join(self.namer.node(n) for n in fvs) + "]"
        c = Cluster(cid, g, self.kinds[g], is_library(g), gname[1:], params,
                    _tooltip(g.loc, header))
        c.ret = self.ids.make("return_" + gname)
        self.clusters[g] = c
        self.scene.clusters.append(c)

    def fill_cluster(self, g):
        c = self.clusters[g]
        for p in g.parameters:
            ir_line = (f"parameter {self.namer.node(p)} of {self.namer.graph(g)}"
                       + self.type_suffix(p))
            self.add(c, Item(self.node_id(p), "parameter", self.short_name(p), self.typ(p),
                             _tooltip(location_of(p, g), ir_line), p, g))
        for node in self.mng.nodes(g):
            if isinstance(node, Apply) and see_through(node) is node:
                self.apply(c, node)
        self.ret(c)
        if c.kind == "bprop":
            self.group_adjoints(c)

    def group_adjoints(self, c):
        """Group the items of a backpropagator by the primal node they undo."""
        by_primal = {}
        for it in c.items:
            primal = getattr(it.node, "adjoint", None) if it.role == "apply" else None
            if primal is not None:
                by_primal.setdefault(primal, []).append(it.id)
        lines = {}
        for primal in by_primal:
            loc = location_of(primal)
            lines.setdefault((loc.filename, loc.line) if loc else None, []).append(primal)
        for k, (primal, items) in enumerate(by_primal.items()):
            loc = location_of(primal)
            shared = loc is not None and len(lines[(loc.filename, loc.line)]) > 1
            c.groups.append(Group(self.ids.make(f"{c.id}_undo{k}"),
                                  _undo_label(primal, loc, shared, self.namer),
                                  _tooltip(loc, f"the backward of {self.text(primal)}"),
                                  items))

    def apply(self, c, node):
        g = c.graph
        nid = self.node_id(node)
        ir_line = (f"{self.namer.node(node)} = {self.text(node.inputs[0])}("
                   + ", ".join(self.text(a) for a in node.inputs[1:]) + ")"
                   + self.type_suffix(node))
        fn, *args = (see_through(i) for i in node.inputs)
        edges = []  # (src id, kind, position), made once the label rule is known
        graph_refs = []
        if isinstance(fn, Constant):
            name = self.text(fn)
            if isinstance(fn.value, Graph):
                graph_refs.append(fn.value)
        else:
            name = "call"
            known = resolve_function(fn)
            if known is not None:
                name = f"call {self.namer.graph(known)}"
            edges.append(self.input_edge(fn, c, "fn"))
        shown = []  # what the label shows per argument: "·" for an edge
        node_positions = []
        for i, a in enumerate(args):
            if isinstance(a, Constant) and self.compact:
                shown.append(self.constant_text(a))
                if isinstance(a.value, Graph):
                    graph_refs.append(a.value)
            elif isinstance(a, Constant):
                shown.append("·")
                node_positions.append(i)
                cid = self.constant_item(c, a, nid, i)
                edges.append((cid, "data", i))
            elif a in self.fold and self.compact:
                shown.append(shorten(self.short_name(a), MAX_CONSTANT_CHARS))
            elif a.graph is not g and not self.cross_edges and self.compact:
                # a free variable, in a drawing without edges between graphs: named
                # in the label (↑: from an enclosing graph), like a constant
                shown.append(shorten(self.free_name(a), MAX_CONSTANT_CHARS) + "↑")
            else:
                shown.append("·")
                node_positions.append(i)
                edges.append(self.input_edge(a, c, i))
        folded = any(s != "·" for s in shown)
        label = f"{name}({', '.join(shown)})" if folded else name
        ambiguous = len(node_positions) > 1 and not (
            # (the arguments of a commutative primitive need no positions)
            getattr(fn.value if isinstance(fn, Constant) else None, "commutative", False)
            and len(node_positions) == 2)
        # a folded node shows the name its users' labels call it by
        var = node.name or (self.short_name(node) if node in self.fold else None)
        item = self.add(c, Item(nid, "apply", label, self.typ(node),
                                _tooltip(location_of(node, g), ir_line), node, g, var))
        for src, kind, pos in edges:
            if pos == "fn":
                text = "fn"
            else:
                text = str(pos) if ambiguous else None
            self.edge(src, item.id, kind, text)
        for callee in dict.fromkeys(graph_refs):
            self.graph_edge(item.id, g, callee)

    def input_edge(self, inp, c, pos):
        """(src id, kind, position) of the edge that brings `inp` to its user."""
        if inp.graph is c.graph:
            return (self.node_id(inp), "data", pos)
        if self.cross_edges and inp.graph in self.clusters:
            return (self.node_id(inp), "free", pos)
        return (self.proxy(c, inp), "free", pos)

    def proxy(self, c, fv):
        """The small node that stands for free variable `fv` inside cluster `c`."""
        key = (c.graph, fv)
        if key not in self.proxies:
            owner = self.namer.graph(fv.graph)
            pid = self.ids.make(f"{c.id[len('cluster_'):]}_free_{self.node_id(fv)}")
            where = format_location(location_of(fv, fv.graph))
            tip = f"free variable {self.namer.node(fv)}, computed in {owner}"
            self.add(c, Item(pid, "free", self.short_name(fv), self.typ(fv),
                             f"{where}\n{tip}" if where else tip, fv, c.graph,
                             var=f"from {owner[1:]}", kind=self.kinds.get(fv.graph)))
            self.proxies[key] = pid
        return self.proxies[key]

    def constant_text(self, const):
        """A constant as a label shows it: a graph by its whole name (a student looks
        it up among the drawing's graphs: `@repeat_sin:for_b…` named none), any other
        value cut at MAX_CONSTANT_CHARS."""
        text = self.text(const)
        return text if isinstance(const.value, Graph) else shorten(text, MAX_CONSTANT_CHARS)

    def constant_item(self, c, const, user_id, pos):
        """A constant drawn as its own small node (compact=False), one per use."""
        text = self.constant_text(const)
        cid = self.ids.make(f"const_{user_id}_{pos}")
        item = self.add(c, Item(cid, "constant", text, self.typ(const),
                                _tooltip(location_of(const, c.graph), self.text(const)),
                                const, c.graph))
        if isinstance(const.value, Graph):
            self.graph_edge(cid, c.graph, const.value)
        return item.id

    def graph_edge(self, src, g, callee):
        """src uses the constant of graph `callee` (calls it, or makes its closure)."""
        target = self.clusters.get(callee)
        if target is None or not self.cross_edges:
            return
        self.edge(src, target.ret, "graph", None, None if callee is g else target.id)

    def ret(self, c):
        g = c.graph
        out = see_through(g.output)
        label = "return"
        src = None
        if out is None:
            label = "return ?"
        elif isinstance(out, Constant) and self.compact:
            label = f"return {self.constant_text(out)}"
        elif isinstance(out, Constant):
            src = self.constant_item(c, out, c.ret, 0)
        else:
            src, kind, _ = self.input_edge(out, c, None)
        returned = self.text(out) if out is not None else "?"
        ir_line = f"return {returned}  (end of {self.namer.graph(g)})"
        loc = location_of(out, g) if out is not None and not isinstance(out, Constant) else g.loc
        item = self.add(c, Item(c.ret, "return", label, None, _tooltip(loc, ir_line), None, g))
        if src is not None:
            self.edge(src, item.id, "data" if isinstance(out, Constant) else kind)
        if isinstance(out, Constant) and isinstance(out.value, Graph) and self.compact:
            self.graph_edge(item.id, g, out.value)
