"""The IR: nodes, the manager's answers, cloning, and the text printer."""

import myia
from myia.backend.vm import VM, Closure
from myia.ir import Apply, Constant, Graph, clone, inline, manage
from myia.prim import ops as P


def build_nested():
    """f(x) = g(2.0) where g(y) = x * y (g is a closure over f's x)."""
    f = Graph("f")
    x = f.add_parameter("x")
    g = Graph("g")
    y = g.add_parameter("y")
    g.output = g.apply(P.mul, x, y, name="prod")
    f.output = f.apply(g, 2.0)
    return f, g, x, y


def test_free_variables_parents_and_scope():
    f, g, x, y = build_nested()
    mng = manage(f)
    assert set(mng.graphs) == {f, g}
    assert mng.free_variables(g) == [x]
    assert mng.free_variables(f) == []
    assert mng.parent(g) is f and mng.parent(f) is None
    assert mng.children(f) == [g]
    assert mng.scope(f) == [f, g]
    assert mng.graphs_used(f) == [g]


def test_users():
    f, g, x, y = build_nested()
    mng = manage(f)
    (user, index), = mng.users(x)
    assert user is g.output and index == 1


def test_node_needed_only_by_a_closure_is_computed_by_its_owner():
    # f(x) = h() where h() = sq + 1 and sq = x * x is only used by h
    f = Graph("f")
    x = f.add_parameter("x")
    sq = Apply(f, [Constant(P.mul), x, x])
    h = Graph("h")
    h.output = h.apply(P.add, sq, 1.0)
    f.output = f.apply(h)
    mng = manage(f)
    assert sq in mng.nodes(f)
    assert mng.nodes(f).index(sq) < mng.nodes(f).index(f.output)
    assert VM().call(Closure(f, None), [3.0]) == 10.0


def test_clone_copies_nested_graphs_and_keeps_meaning():
    f, g, x, y = build_nested()
    f2 = clone(f)
    mng = manage(f2)
    assert f2 is not f and not set(mng.graphs) & {f, g}
    assert VM().call(Closure(f2, None), [5.0]) == 10.0


def test_inline_copies_a_body_into_another_graph():
    sq = Graph("sq")
    a = sq.add_parameter("a")
    sq.output = sq.apply(P.mul, a, a)
    h = Graph("h")
    z = h.add_parameter("z")
    h.output = inline(sq, h, [z])
    assert h.output.graph is h
    assert VM().call(Closure(h, None), [4.0]) == 16.0


def square_plus(x):
    y = x * x
    return y + 1.0


def test_printer_shows_one_line_per_node_with_source():
    text = str(myia.ir(square_plus))
    lines = text.splitlines()
    assert lines[0].startswith("graph @square_plus(%x) {")
    assert lines[0].endswith("test_ir.py:" + str(square_plus.__code__.co_firstlineno))
    assert lines[1].split("#")[0].strip() == "%y = mul(%x, %x)"
    first = square_plus.__code__.co_firstlineno
    assert lines[1].split("#")[1].strip() == f"{first + 1}: y = x * x"
    assert lines[2].split("#")[0].strip() == "%1 = add(%y, 1.0)"
    assert lines[2].split("#")[1].strip() == f"{first + 2}: return y + 1.0"
    assert lines[3] == "  return %1"
    assert lines[4] == "}"


def test_every_parsed_node_has_a_location():
    g = myia.ir(square_plus).graph
    mng = manage(g)
    for node in mng.nodes(g):
        assert node.loc is not None and node.loc.line > square_plus.__code__.co_firstlineno


def outer(x):
    def inner(y):
        return x * y
    return inner(3.0)


def test_printer_lists_free_variables_of_nested_graphs():
    text = str(myia.ir(outer))
    assert "graph @inner(%y) [free: %x] {" in text


def test_op_count_counts_primitive_applications():
    assert myia.ir(square_plus).op_count() == 2


def test_a_manager_leaves_no_cyclic_garbage():
    """Its tables (users, free variables, parents) are freed when it goes, without
    waiting for a full collection (they held the compile's millions of objects)."""
    import sys

    def inner(x):
        def h(y):
            return x * y
        return h(x) + x

    graph = myia.ir(inner).graph
    mng = manage(graph)
    parents = [mng.parent(g) for g in mng.graphs]
    state = mng._state
    del mng
    assert parents == [None, graph]  # inner, then h nested in it
    # nothing but this function holds the tables: reference counting frees them
    assert sys.getrefcount(state) == 2  # `state`, and getrefcount's argument
