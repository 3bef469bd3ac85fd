"""The text form of graphs: one line per node, ANF style, with the source line.

    graph square(%x) {                              # demo.py:3
      %1 = mul(%x, %x)                              # 4: return x * x
      return %1
    }

A graph nested in another is printed after it; its header lists the free variables it
uses.  Types are shown after a colon once inference has filled them in.
"""

import numpy as np

from .anf import Apply, Constant, Graph, Parameter
from .manager import manage

COMMENT_COLUMN = 48


class Namer:
    """Gives every node and graph of one dump a unique, readable name."""

    def __init__(self):
        self.names = {}
        self.taken = set()
        self.counter = 0

    def _fresh(self, base):
        name = base
        k = 2
        while name in self.taken:
            name = f"{base}.{k}"
            k += 1
        self.taken.add(name)
        return name

    def node(self, node):
        if node not in self.names:
            if node.name:
                self.names[node] = "%" + self._fresh(node.name)
            else:
                self.counter += 1
                self.names[node] = "%" + self._fresh(str(self.counter))
        return self.names[node]

    def graph(self, g):
        if g not in self.names:
            self.names[g] = "@" + self._fresh("@" + g.name)[1:]
        return self.names[g]


def format_value(value, namer=None):
    """A short text for a constant."""
    if isinstance(value, Graph):
        return namer.graph(value) if namer else f"@{value.name}"
    if isinstance(value, np.ndarray):
        return f"array({value.dtype}, shape={value.shape})" if value.size > 4 else repr(value.tolist())
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, tuple):
        inner = ", ".join(format_value(v, namer) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    name = getattr(value, "ir_name", None)
    if name is not None:
        return name
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    return repr(value)


def format_input(node, namer):
    if isinstance(node, Constant):
        return format_value(node.value, namer)
    return namer.node(node)


def _type_suffix(node):
    return f" : {node.abstract}" if node.abstract is not None else ""


def _with_comment(text, loc, show_file=False):
    if loc is None:
        return text
    src = loc.source_line.strip()
    where = f"{loc.filename}:{loc.line}" if show_file else f"{loc.line}: {src}"
    pad = max(COMMENT_COLUMN - len(text), 2)
    return f"{text}{' ' * pad}# {where}"


def format_graphs(graphs, manager=None, namer=None, note=None):
    """Text of several graphs, each followed by the graphs nested in it.  `note(node)`:
    a short text shown after an operation's type (a value it took), or None."""
    mng = manager or manage(*graphs)
    namer = namer or Namer()
    ordered = []
    for g in graphs:
        for s in mng.scope(g):
            if s not in ordered:
                ordered.append(s)
    # also graphs merely used (e.g. a called top-level function) after the rest
    for g in mng.graphs:
        if g not in ordered:
            ordered.append(g)
    # name parameters first so that they keep their plain names
    for g in ordered:
        namer.graph(g)
        for p in g.parameters:
            namer.node(p)
    return "\n\n".join(_format_one(g, mng, namer, note) for g in ordered)


def _format_one(g, mng, namer, note=None):
    params = ", ".join(namer.node(p) + _type_suffix(p) for p in g.parameters)
    header = f"graph {namer.graph(g)}({params})"
    fvs = mng.free_variables_direct(g)
    if fvs:
        header += " [free: " + ", ".join(namer.node(n) for n in fvs) + "]"
    lines = [_with_comment(header + " {", g.loc, show_file=True)]
    for node in mng.nodes(g):
        if not isinstance(node, Apply):
            continue
        fn, *args = node.inputs
        text = f"  {namer.node(node)} = {format_input(fn, namer)}("
        text += ", ".join(format_input(a, namer) for a in args) + ")"
        text += _type_suffix(node)
        shown = note(node) if note is not None else None
        if shown is not None:
            text += f"  → {shown}"
        lines.append(_with_comment(text, node.loc))
    lines.append(f"  return {format_input(g.output, namer)}")
    lines.append("}")
    return "\n".join(lines)


def format_graph(graph, manager=None):
    return format_graphs([graph], manager)


__all__ = ["format_graph", "format_graphs", "format_value", "Namer", "Parameter"]
