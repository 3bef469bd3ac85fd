"""Specialization: typed copies per context that run like the original on the VM (the
whole corpus, and gradient programs), the "typed" stage, and the cache of
`myia.compile` per argument types."""

import myia
import re

import numpy as np
import pytest
from myia.backend.vm import VM, Closure
from myia.infer import AScalar, signature_of, specialize
from myia.ir import Constant, Graph, manage
from myia.parser.programs import to_graph
from myia.prim import ops as P

from ..compare import assert_same
from ..corpus import CASES, by_tag


def run(graph, args):
    return VM().call(Closure(graph, None), list(args))


def all_nodes(graph):
    mng = manage(graph)
    return [(g, n) for g in mng.graphs for n in mng.nodes(g)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_corpus_runs_the_same_specialized(case):
    from myia.arguments import exit_value, internal_values

    graph = specialize(to_graph(case.fn), signature_of(case.args))
    assert not manage(graph).free_variables(graph)  # a closed program
    # (a list or a dict is a tuple inside the program; its type says what it is)
    got = run(graph, internal_values(case.args))
    assert_same(exit_value(got, graph.flags["result"]), case.run())
    # every node of the typed program has a type
    for g, n in all_nodes(graph):
        assert n.abstract is not None, (g.name, n)


GRAD_CASES = by_tag("differentiable")[::2]


@pytest.mark.parametrize("case", GRAD_CASES, ids=lambda c: c.name)
def test_gradient_programs_run_the_same_specialized(case):
    """The adjoint programs (closures, environments, J of primitives) infer, and their
    specialization computes the same gradient."""
    graph = to_graph(myia.grad(case.fn))
    want = run(graph, case.args)
    typed = specialize(graph, signature_of(case.args))
    assert not manage(typed).free_variables(typed)
    assert_same(run(typed, case.args), want, rtol=1e-7)


def square(x):
    return x * x


def grad_inside(x):
    return myia.grad(square)(x) + myia.grad(lambda y: x * y * y)(2.0)


def grad_of_grad_inside(x):
    return myia.grad(myia.grad(square))(x)


@pytest.mark.parametrize("fn", [grad_inside, grad_of_grad_inside])
def test_grad_written_in_subset_code(fn):
    graph = to_graph(fn)
    typed = specialize(graph, signature_of((1.5,)))
    assert run(typed, (1.5,)) == pytest.approx(run(graph, (1.5,)))
    # grad of it too (J of the macro, J of J)
    g = to_graph(myia.grad(fn))
    assert run(specialize(g, signature_of((1.5,))), (1.5,)) == pytest.approx(run(g, (1.5,)))


def test_macro_and_J_of_a_known_function_are_replaced():
    typed = specialize(to_graph(lambda_free_grad), signature_of((1.5,)))
    for g, n in all_nodes(typed):
        assert not n.is_apply(P.J), g.name
        fn = n.inputs[0] if n.is_apply() else None
        assert not (isinstance(fn, Constant) and hasattr(fn.value, "expand")), g.name


def lambda_free_grad(x):
    return myia.grad(square)(x)


@pytest.mark.parametrize("case", by_tag("closure"), ids=lambda c: c.name)
def test_closure_converted_programs_infer(case):
    """After closure conversion (make_closure records, called as partial
    applications), programs still infer and run the same."""
    closure_convert = pytest.importorskip("myia.opt.closure_convert").closure_convert
    graph = specialize(closure_convert(to_graph(case.fn)), signature_of(case.args))
    assert_same(run(graph, case.args), case.run())


# ---------------------------------------------------------------- the typed stage


def test_typed_printout():
    text = str(myia.ir(square, 3.0, stage="typed"))
    assert "graph @square(%x : f64) {" in text
    assert "%1 = mul(%x, %x) : f64" in text


def sum_axis(x):
    return np.sum(x, axis=1)


def test_typed_stage_shows_static_shapes():
    text = str(myia.ir(sum_axis, np.ones((3, 4)), stage="typed"))
    assert "@sum_axis(%x : f64[3,4])" in text
    assert re.search(r"reduce_sum\(%a[.\d]*, 1, False\) : f64\[3\]", text)  # a constant axis


def test_typed_stage_of_a_gradient():
    view = myia.ir(myia.grad(square), 3.0, stage="typed")
    text = str(view)
    assert "@grad_square(%x : f64)" in text
    assert ": (f64, fn(◀square))" in text
    assert "grad_seed" not in text  # folded to 1.0
    assert view.op_count() > 0


def test_one_copy_per_context():
    """square called with a float and with an array: two typed copies."""
    def both(x, a):
        return square(x) + np.sum(square(a))

    typed = specialize(to_graph(both), signature_of((1.0, np.ones(3))))
    squares = [g for g in manage(typed).graphs if g.name == "square"]
    assert sorted(str(g.parameters[0].abstract) for g in squares) == ["f64", "f64[3]"]


def int_or_float(x, n):
    y = 0
    if n > 0:
        y = x
    return y


def test_paths_of_int_and_float_meet_as_float():
    typed = specialize(to_graph(int_or_float), signature_of((1.5, 0)))
    assert typed.output.abstract == AScalar("float64")
    r = run(typed, (1.5, 0))
    assert r == 0.0 and isinstance(r, float)


def asserts_then_constant(x):
    assert x > 0.0
    return 2.0


def test_effects_are_not_folded_away():
    typed = specialize(to_graph(asserts_then_constant), signature_of((1.0,)))
    assert any(n.is_apply(P.assert_) for _, n in all_nodes(typed))
    with pytest.raises(myia.MyiaError, match="assertion failed"):
        run(typed, (-1.0,))


@pytest.mark.usefixtures("backend")
def test_closure_returned_to_python_is_explicitly_untyped():
    """vjp's backpropagator leaves the program without being called in it: on the VM,
    it is copied without types (flag "untyped"), and still works (on "llvm", which
    cannot hand a closure to Python, vjp_fn runs a program that applies it)."""
    out, bprop = myia.vjp(square, 3.0)
    assert out == 9.0
    assert bprop(1.0) == (6.0,)


# ---------------------------------------------------------------- the cache


@pytest.mark.usefixtures("backend")
def test_compile_specializes_once_per_signature():
    from myia.parser.programs import to_graph

    f = myia.compile(square)
    graph = to_graph(square)

    def typed():  # the typed programs kept on the graph, per signature
        return {k: v for k, v in graph.derived.items() if k[0] == "typed"}

    graph.derived.clear()
    assert f(2.0) == 4.0
    assert len(typed()) == 1
    assert f(3.0) == 9.0  # same types: no new specialization
    assert len(typed()) == 1
    assert f(3) == 9  # an int: a new one
    assert len(typed()) == 2
    assert_same(f(np.ones(3)), np.ones(3))
    assert_same(f(np.ones(4)), np.ones(4))  # another shape: another one
    assert len(typed()) == 4
    graphs = list(typed().values())
    assert all(isinstance(g, Graph) for g in graphs)
    assert str(graphs[0].parameters[0].abstract) == "f64"
