"""Helpers for the parser tests: walking parsed graphs, checking error messages."""

import inspect

from myia.ir import Apply, Constant, Graph, manage


def graphs_of(graph):
    """Every graph reachable from `graph` (its blocks, nested functions, callees)."""
    return manage(graph).graphs


def applies(graph):
    """Every Apply of every graph reachable from `graph`."""
    mng = manage(graph)
    return [n for g in mng.graphs for n in mng.nodes(g) if isinstance(n, Apply)]


def block(graph, name):
    """The reachable graph named `name` (e.g. "f:if_true"); it must be unique."""
    found = [g for g in graphs_of(graph) if g.name == name]
    assert len(found) == 1, (name, [g.name for g in graphs_of(graph)])
    return found[0]


def prim_of(node):
    """The primitive an Apply calls, or None."""
    fn = node.inputs[0] if isinstance(node, Apply) else None
    return fn.value if isinstance(fn, Constant) else None


def calls(graph, prim):
    """The Applies of `prim` in `graph`'s own nodes."""
    return [n for n in manage(graph).nodes(graph) if isinstance(n, Apply) and prim_of(n) is prim]


def jump_target(graph):
    """The graph that `graph` jumps to in tail position, or None."""
    out = graph.output
    if isinstance(out, Apply) and isinstance(out.inputs[0], Constant) \
            and isinstance(out.inputs[0].value, Graph):
        return out.inputs[0].value
    return None


def switch_of(graph):
    """(cond, true graph, false graph) when `graph` ends with switch(c, g1, g2)()."""
    from myia.prim import ops as P

    out = graph.output
    assert isinstance(out, Apply) and len(out.inputs) == 1, out
    sw = out.inputs[0]
    assert prim_of(sw) is P.switch, sw
    cond, g1, g2 = sw.inputs[1:]
    return cond, g1.value, g2.value


def source_line(fn, snippet):
    """(line number in the file, text) of the first line of `fn` containing snippet."""
    lines, start = inspect.getsourcelines(fn)
    for i, text in enumerate(lines):
        if snippet in text:
            return start + i, text.rstrip("\n")
    raise AssertionError(f"{snippet!r} not in the source of {fn}")


def line_range(fn):
    lines, start = inspect.getsourcelines(fn)
    return start, start + len(lines) - 1


def check_error(err, fn, snippet, *words, at=None):
    """`err` names `words`, the file of `fn`, the line of `fn` that contains `snippet`,
    and shows that line with a caret under `at` (default: the snippet)."""
    text = str(err)
    for w in words:
        assert w in text, (w, text)
    filename = inspect.getsourcefile(fn)
    assert err.loc is not None and err.loc.filename == filename, text
    assert f'File "{filename}"' in text, text
    line, src = source_line(fn, snippet)
    assert f"line {line}," in text, (line, text)
    col = src.index(at or snippet)
    stripped = src.lstrip()
    indent = len(src) - len(stripped)
    shown = text.splitlines()
    i = shown.index("    " + stripped)
    caret = shown[i + 1]
    assert caret.index("^") - 4 == col - indent, (caret, text)
    return text
