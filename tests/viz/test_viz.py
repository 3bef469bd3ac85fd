"""Graphviz drawings (myia.viz): the DOT structure, determinism, SVG, and the path
where Graphviz's `dot` is not installed."""

import inspect
import math
import re
import shutil
import subprocess
import warnings

import graphviz
import numpy as np
import pytest

import myia
from myia.api import JVPFunction
from myia.errors import Location
from myia.ir import Graph, clone
from myia.prim import ops as P
from myia.viz import PALETTES, VizUnavailable, render, to_svg, trace
from myia.viz.draw import too_big
from myia.viz.trace import is_library

needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="Graphviz's dot is not installed")

# ---------------------------------------------------------------- programs


def f(x):
    return math.sin(x) * x


def closure(x):
    a = x * 2.0
    def g(y):
        return a * y + x
    return g(x) + g(3.0)


def loop(x):
    y = 1.0
    i = 0
    while i < 3:
        y = y * x
        i = i + 1
    return y


def diff(a, b):
    return a - b


def prod(a, b):
    return a * b


def make_adder(x):
    def add(y):
        return x + y
    return add


def use_adder(x):
    h = make_adder(x * x)
    return h(3.0) - x


def ten(x):
    a = math.sin(x)
    b = a * x
    c = math.cos(b) + a
    d = c * c
    e = math.exp(d) / (1.0 + x)
    f1 = e - b
    g = f1 * 3.0
    h = math.tanh(g)
    k = h * x + d
    return k * k


# ---------------------------------------------------------------- helpers


def node_line(source, node_id):
    """The DOT statement that declares node `node_id`."""
    for line in source.splitlines():
        if re.match(rf'\s*"?{re.escape(node_id)}"? \[', line):
            return line
    raise AssertionError(f"no node {node_id} in\n{source}")


def edge_lines(source, src, dst):
    """The DOT edges src -> dst (src may be a parameter: a port of its graph's row of
    inputs, `row:src:s`)."""
    src_re = rf'("?[\w.-]+_inputs"?:)?"?{re.escape(src)}"?(:s)?'
    return [line for line in source.splitlines()
            if re.match(rf'\s*{src_re} -> "?{re.escape(dst)}"?( |$)', line)]


def items_of(scene, graph_name):
    (c,) = [c for c in scene.clusters if c.graph.name == graph_name]
    return c.items


def source_line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return start + i
    raise AssertionError(text)


class FakeType:
    """What inference puts in `node.abstract`: something that prints short."""

    def __init__(self, text):
        self.text = text

    def __str__(self):
        return self.text


# ---------------------------------------------------------------- structure


def test_one_cluster_per_graph_side_by_side():
    view = myia.ir(closure)
    d = render(view)
    clusters = re.findall(r"^(\t*)subgraph (cluster_\S+) \{", d.source, re.M)
    assert [name for _, name in clusters] == ["cluster_closure", "cluster_g"]
    assert len(clusters) == len(view.graphs())
    # not nested: every cluster sits at the top level of the digraph
    assert all(indent == "\t" for indent, _ in clusters)
    assert "label=<<b>closure</b>(x)>" in d.source
    assert "label=<<b>g</b>(y)>" in d.source
    assert "compound=true" in d.source


def test_nodes_parameters_and_a_return_per_graph():
    scene = trace(myia.ir(f).graph)
    roles = [(it.role, it.label) for it in items_of(scene, "f")]
    assert roles == [("parameter", "x"), ("apply", "sin"), ("apply", "mul"), ("return", "return")]
    d = render(myia.ir(f))
    assert "shape=invhouse" in node_line(d.source, "x")
    assert "shape=box" in node_line(d.source, "n2")
    assert edge_lines(d.source, "n2", "return_f")


def test_free_variables_are_dashed_edges_from_the_parent_node():
    d = render(myia.ir(closure))
    scene = trace(myia.ir(closure).graph)
    free = [e for e in scene.edges if e.kind == "free"]
    assert {(scene.items[e.src].label, scene.items[e.dst].label) for e in free} == {
        ("x", "add"), ("mul(·, 2.0)", "mul")}
    for e in free:
        assert scene.items[e.src].graph.name == "closure"
        assert scene.items[e.dst].graph.name == "g"
        (line,) = edge_lines(d.source, e.src, e.dst)
        assert "style=dashed" in line
    # data edges are solid
    (line,) = edge_lines(d.source, "x", "a")
    assert "dashed" not in line


def test_graph_constants_are_dashed_edges_to_the_callee_cluster():
    d = render(myia.ir(closure))
    scene = trace(myia.ir(closure).graph)
    calls = [it for it in items_of(scene, "closure") if it.label.startswith("@g")]
    assert sorted(it.label for it in calls) == ["@g", "@g(3.0)"]
    for it in calls:
        (line,) = edge_lines(d.source, it.id, "return_g")
        assert "style=dashed" in line and "lhead=cluster_g" in line and "arrowhead=empty" in line


def test_closure_creation_and_calls_of_computed_functions():
    view = myia.ir(use_adder)
    d = render(view)
    scene = trace(view.graph)
    # make_adder returns the closure @add: its return node points at add's cluster
    (line,) = edge_lines(d.source, "return_make_adder", "return_add")
    assert "lhead=cluster_add" in line and "style=dashed" in line
    assert "return @add" in node_line(d.source, "return_make_adder")
    # h(3.0) calls a computed function, known statically to be the closure @add
    (call,) = [it for it in items_of(scene, "use_adder") if it.label.startswith("call")]
    assert call.label == "call @add(3.0)"
    (fn_edge,) = [e for e in scene.edges if e.dst == call.id and e.label == "fn"]
    assert scene.items[fn_edge.src].label == "@make_adder"


def graph_clusters(source):
    """The clusters of graphs (not the boxes that group a backpropagator's steps)."""
    return [ln for ln in source.splitlines() if "subgraph cluster_" in ln and "_undo" not in ln]


def test_loop_graphs_and_a_free_variable_returned():
    d = render(myia.ir(loop))
    assert len(graph_clusters(d.source)) == 4
    # after_while returns y, a parameter of while_header: a dashed edge into its return
    (line,) = edge_lines(d.source, "y", "return_loop__after_while")
    assert "style=dashed" in line
    # the recursive call of while_header from while_body goes back to its cluster
    assert "lhead=cluster_loop__while_header" in d.source


def test_a_graph_calling_itself_has_no_lhead_into_its_own_cluster():
    g = Graph("spin")
    x = g.add_parameter("x")
    g.output = g.apply(g, x)
    d = render(g)
    lines = edge_lines(d.source, "n1", "return_spin")
    (data,) = [line for line in lines if "dashed" not in line]
    (call,) = [line for line in lines if "dashed" in line]
    assert "lhead" not in call and "constraint=false" in call


def test_argument_positions_only_when_ambiguous():
    scene = trace(myia.ir(diff).graph)
    labels = sorted(e.label for e in scene.edges if scene.items[e.dst].label == "sub")
    assert labels == ["0", "1"]
    scene = trace(myia.ir(prod).graph)
    assert [e.label for e in scene.edges if scene.items[e.dst].label == "mul"] == [None, None]
    # a folded constant shows the position itself: mul(·, 2.0)
    scene = trace(myia.ir(closure).graph)
    (mul,) = [it for it in items_of(scene, "closure") if it.label == "mul(·, 2.0)"]
    assert [e.label for e in scene.edges if e.dst == mul.id] == [None]


def test_compact_folds_constants_else_small_plaintext_nodes():
    compact = render(myia.ir(closure)).source
    assert "plaintext" not in compact
    assert "mul(·, 2.0)" in compact
    loose = render(myia.ir(closure), compact=False).source
    consts = [line for line in loose.splitlines() if "shape=plaintext" in line]
    assert len(consts) == 2  # 2.0 for mul and 3.0 for g: one small node per use
    assert "mul(·, 2.0)" not in loose


def test_user_variable_names_are_shown_and_kept():
    d = render(myia.ir(closure))
    line = node_line(d.source, "a")  # the id comes from the user's name
    assert 'color="#5f6b76">a</font>' in line


# ---------------------------------------------------------------- colours and kinds


def test_adjoint_nodes_are_coloured_apart_from_primal_ones():
    view = myia.ir(myia.grad(f), 2.0)
    scene = trace(view.graph)
    d = render(view)
    kinds = {c.graph.name: c.kind for c in scene.clusters}
    assert kinds["grad_f"] == "adjoint"
    assert kinds["▶f"] == "primal" and kinds["◀f"] == "bprop"
    bprop_fill, primal_fill = PALETTES["bprop"][0], PALETTES["primal"][0]
    for c in scene.clusters:
        fill = PALETTES[c.kind][0]
        for it in c.items:
            if it.role == "apply":
                assert f'fillcolor="{fill}"' in node_line(d.source, it.id)
    bwd = [it for it in items_of(scene, "◀f") if it.role == "apply"]
    fwd = [it for it in items_of(scene, "▶f") if it.role == "apply"]
    assert bwd and fwd
    assert all(f'fillcolor="{bprop_fill}"' in node_line(d.source, it.id) for it in bwd)
    assert all(f'fillcolor="{primal_fill}"' in node_line(d.source, it.id) for it in fwd)
    # J writes each primitive's rule in the backpropagator: d sin(x) = cos(x) dx
    assert any(it.label.startswith("cos") for it in bwd)
    # with more than one kind, a legend
    assert "backward (bprop)" in d.source


def test_tangent_graphs_have_their_own_colour():
    scene = trace(myia.ir(JVPFunction(f)).graph)
    assert {c.kind for c in scene.clusters} == {"tangent"}
    d = render(myia.ir(JVPFunction(f)))
    assert f'fillcolor="{PALETTES["tangent"][0]}"' in d.source


def test_a_graph_named_like_a_backpropagator_is_drawn_as_one():
    g = Graph("◀h")
    x = g.add_parameter("dout")
    g.output = g.apply(P.neg, x)
    assert trace(g).clusters[0].kind == "bprop"


# ---------------------------------------------------------------- types and tooltips


def test_types_in_labels_when_inferred():
    view = myia.ir(f)
    view.graph = clone(view.graph)  # the parsed graph is cached: leave it untyped
    x = view.graph.parameters[0]
    x.abstract = FakeType("f64")
    view.graph.output.abstract = FakeType("f64[3,4]")
    src = render(view).source
    assert 'color="#5f6b76">f64</font>' in node_line(src, "x")
    assert 'color="#5f6b76">f64[3,4]</font>' in node_line(src, "n2")
    assert 'point-size="9"' in node_line(src, "n2")
    assert "%2 = mul(%1, %x) : f64[3,4]" in src  # the IR line in the tooltip
    hidden = render(view, show_types=False).source
    assert "label=<mul> " in node_line(hidden, "n2")


def test_every_node_has_a_tooltip_with_its_source_line_and_ir_line():
    view = myia.ir(f)
    src = render(view).source
    line_no = source_line_of(f, "return math.sin(x) * x")
    mul = node_line(src, "n2")
    assert f'tooltip="test_viz.py:{line_no}: return math.sin(x) * x\\n%2 = mul(%1, %x)"' in mul
    nodes = [line for line in src.splitlines()
             if re.match(r"\s*\S+ \[", line) and not re.match(r"\s*(node|edge) \[", line)]
    assert len(nodes) == 4 and all("tooltip=" in line for line in nodes)


def test_tooltip_names_are_the_text_ir_names():
    view = myia.ir(myia.grad(closure), 2.0)
    text = str(view)
    scene = trace(view.graph)
    for it in scene.items.values():
        if it.role == "apply":
            ir_line = it.tooltip.splitlines()[-1]
            assert re.search(rf"^  {re.escape(ir_line)}( |$)", text, re.M), ir_line


def test_nodes_made_by_ad_point_back_to_the_users_line():
    view = myia.ir(myia.grad(f), 2.0)
    scene = trace(view.graph)
    line_no = source_line_of(f, "return math.sin(x) * x")
    # the operations of the primitives' rules, written in ◀f, point at the line they undo
    rules = [it for it in items_of(scene, "◀f")
             if it.label.startswith(("mul", "cos"))]
    assert len(rules) == 4  # dout * x, sin(x) * dout, cos(x), cos(x) * (dout * x)
    assert all(f"test_viz.py:{line_no}: return math.sin" in it.tooltip for it in rules)


def test_tooltips_and_labels_are_taken_literally():
    g = Graph("odd<name>")
    x = g.add_parameter("x", Location("weird.py", 3, 0, text='y = x  # "quoted" \\n <b>'))
    g.output = g.apply(P.mul, x, 2.0)
    d = render(g)
    line = node_line(d.source, "x")
    assert r'weird.py:3: y = x  # \"quoted\" \\n <b>' in line
    assert "odd&lt;name&gt;" in d.source


# ---------------------------------------------------------------- determinism, options


def test_the_same_program_renders_to_the_same_dot_source():
    a = render(myia.ir(myia.grad(closure), 2.0)).source
    b = render(myia.ir(myia.grad(closure), 2.0)).source  # fresh graphs, fresh node ids
    assert a == b
    view = myia.ir(loop)
    assert render(view).source == render(view).source


def test_highlight_nodes_graphs_and_names():
    view = myia.ir(closure)
    red = 'color="#d62728"'
    by_name = render(view, highlight="a").source
    assert red in node_line(by_name, "a")
    assert red not in node_line(by_name, "x")
    mul = view.graph.output.inputs[1]
    by_node = render(view, highlight=[mul]).source
    assert red in by_node
    assert red not in render(view).source
    by_ir_name = render(view, highlight=["%a"]).source
    assert red in node_line(by_ir_name, "a")
    by_graph = render(view, highlight="@g").source
    (cluster_g,) = [line for line in by_graph.splitlines() if "id=cluster_g " in line]
    assert red in cluster_g


def test_title_and_what_render_accepts():
    view = myia.ir(f)
    assert "Square and sine" in render(view, title="Square and sine").source
    assert render(view.graph).source == render(view).source
    with pytest.raises(TypeError, match=r"myia.ir\(f\).render\(\)"):
        render(f)


def test_irview_render_returns_a_digraph():
    d = myia.ir(f).render(title="f")
    assert isinstance(d, graphviz.Digraph)
    assert "cluster_f" in d.source


def test_the_adjoint_of_a_ten_line_function_is_drawn_whole():
    view = myia.ir(myia.grad(ten), 2.0)
    scene = trace(view.graph)
    assert len(scene.items) > 70 and not too_big(scene)
    d = render(view)
    assert len(view.graphs()) == 3  # grad_ten, ▶ten, ◀ten
    assert len(graph_clusters(d.source)) == len(view.graphs())
    assert "a large drawing" not in d.source


def test_without_cross_edges_free_variables_are_named_inside_each_graph():
    view = myia.ir(closure)
    scene = trace(view.graph, cross_edges=False)
    assert not [e for e in scene.edges if e.kind == "graph"]
    by_id = scene.items
    for e in scene.edges:  # every edge stays inside one cluster
        assert by_id[e.src].graph is by_id[e.dst].graph
    # in labels (↑: from an enclosing graph), as constants are
    labels = sorted(it.label for it in items_of(scene, "g") if it.role == "apply")
    assert labels == ["add(·, x↑)", "mul(a↑, ·)"]
    # without folding, as small dashed nodes named after them
    scene = trace(view.graph, cross_edges=False, compact=False)
    free = [it for it in items_of(scene, "g") if it.role == "free"]
    assert sorted(it.label for it in free) == ["a", "x"]
    assert all(it.var == "from closure" and "computed in @closure" in it.tooltip for it in free)
    src = render(view, cross_edges=False, compact=False).source
    assert "rounded,filled,dashed" in node_line(src, free[0].id)
    assert "free variables are drawn by name" in src


def apply_to(h, x):
    return h(x)


def sin_as_a_value(x):
    return apply_to(math.sin, x) * x


def test_library_graphs_can_be_left_out():
    # a primitive passed as a value has its J from the library (▶sin, ◀sin, bprop_sin)
    view = myia.ir(myia.grad(sin_as_a_value), 2.0)
    names = {c.graph.name for c in trace(view.graph).clusters}
    assert {"bprop_sin", "▶sin", "◀sin"} <= names
    shown = trace(view.graph, library=False)
    assert {c.graph.name for c in shown.clusters} == {
        "grad_sin_as_a_value", "▶sin_as_a_value", "◀sin_as_a_value", "▶apply_to", "◀apply_to"}
    assert not any(is_library(c.graph) for c in shown.clusters)
    # calls still name the library's graphs, and no edge leads out of the drawing
    assert any("@▶sin" in it.label for it in items_of(shown, "▶sin_as_a_value"))
    assert all(e.src in shown.items and e.dst in shown.items for e in shown.edges)
    src = render(view, library=False).source
    assert "library's graphs are left out" in src
    assert not re.search(r"-> \S*_sin\b", src)  # no edge into ▶sin, ◀sin, bprop_sin


def test_a_very_large_program_is_drawn_simplified_by_default():
    view = myia.ir(myia.grad(myia.grad(myia.grad(closure))), 2.0)
    assert too_big(trace(view.graph))
    d = render(view)
    assert "a large drawing" in d.source
    assert "lhead" not in d.source  # no edges between graphs
    assert "library" not in re.sub(r"<font[^>]*>a large drawing[^<]*</font>", "", d.source)
    assert render(view).source == d.source
    full = render(view, cross_edges=True, library=True)
    assert "lhead" in full.source and "a large drawing" not in full.source


# ---------------------------------------------------------------- SVG


@needs_dot
def test_svg_has_tooltips_ids_and_no_version_comment():
    svg = to_svg(render(myia.ir(f)))
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert "Generated by graphviz version" not in svg
    assert 'id="cluster_f"' in svg and 'id="n2"' in svg
    line_no = source_line_of(f, "return math.sin(x) * x")
    tip = f"test_viz.py:{line_no}: return math.sin(x) * x&#10;%2 = mul(%1, %x)"
    assert f'xlink:title="{tip}"' in svg


@needs_dot
def test_svg_of_an_adjoint_and_irview_in_jupyter():
    view = myia.ir(myia.grad(closure), 2.0)
    assert to_svg(view.render()) == to_svg(view.render())
    bundle = view._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "image/svg+xml"}
    assert bundle["text/plain"] == str(view)
    assert "<svg" in bundle["image/svg+xml"]
    assert "<svg" in view._repr_svg_()


@needs_dot
@pytest.mark.parametrize(
    "program", ["closure", "loop", "use_adder", "grad closure", "grad loop", "spin"])
def test_dot_lays_out_without_warnings(program):
    if program == "spin":
        g = Graph("spin")
        g.output = g.apply(g, g.add_parameter("x"))
        view = g
    elif program.startswith("grad "):
        view = myia.ir(myia.grad(globals()[program[5:]]), 2.0)
    else:
        view = myia.ir(globals()[program])
    for options in ({}, {"cross_edges": False}, {"compact": False}):
        source = render(view, **options).source
        done = subprocess.run([shutil.which("dot"), "-Tsvg"], input=source.encode(),
                              capture_output=True, timeout=60)
        assert done.returncode == 0 and done.stderr == b"", done.stderr.decode()


# ---------------------------------------------------------------- without dot


@pytest.fixture
def no_dot(monkeypatch, tmp_path):
    """A PATH where `dot` cannot be found."""
    monkeypatch.setenv("PATH", str(tmp_path))
    return tmp_path


def test_missing_dot_raises_vizunavailable_with_the_dot_source(no_dot):
    d = render(myia.ir(f))
    with pytest.raises(graphviz.ExecutableNotFound):
        d.pipe(format="svg")
    with pytest.raises(VizUnavailable) as info:
        to_svg(d)
    e = info.value
    message = str(e)
    assert "Graphviz's `dot` program is not installed" in message
    assert "apt-get install graphviz" in message and "brew install graphviz" in message
    assert e.source == d.source
    assert "subgraph cluster_f" in e.source


def test_missing_dot_in_jupyter_shows_text_and_warns(no_dot):
    view = myia.ir(f)
    with pytest.warns(RuntimeWarning, match="not installed"):
        bundle = view._repr_mimebundle_()
    assert bundle == {"text/plain": str(view)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert view._repr_svg_() is None


def sin_times(x):
    return np.sin(x) * x


def test_a_value_the_backward_pass_reads_is_named_by_what_computes_it():
    """◀sin_times reads sin(x), which ▶sin_times kept: an unnamed value of an
    enclosing graph is labelled `sin(x)↑`, not by its text IR number (`%3↑`)."""
    view = myia.ir(myia.grad(sin_times), 0.5)
    labels = {it.label for it in trace(view.graph, cross_edges=False).items.values()}
    assert "mul(sin(x)↑, ·)" in labels, sorted(labels)
    assert not any(re.search(r"%\d+↑", lab or "") for lab in labels), sorted(labels)
