"""Closure conversion leaves no free variables and changes no result."""

import pytest

import myia
from myia.backend.vm import VM, Closure
from myia.ir import manage
from myia.opt.closure_convert import closure_convert
from myia.prim import ops as P
from tests.compare import assert_same
from tests.corpus import CASES


def run(graph, args):
    return VM().call(Closure(graph, None), list(args))


def assert_first_order(graph):
    mng = manage(graph)
    for g in mng.graphs:
        assert not mng.free_variables(g), f"{g.name} still has free variables"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus_after_closure_conversion(case):
    from myia.arguments import internal_values, structured_like

    converted = closure_convert(myia.ir(case.fn).graph)
    assert_first_order(converted)
    want = case.fn(*case.args)
    # (untyped, the program does not know which of its tuples are lists and dicts)
    assert_same(structured_like(run(converted, internal_values(case.args)), want), want)


DIFF = [c for c in CASES if "differentiable" in c.tags][:25]


@pytest.mark.parametrize("case", DIFF, ids=[c.name for c in DIFF])
def test_gradients_after_closure_conversion(case):
    converted = closure_convert(myia.ir(myia.grad(case.fn), *case.args).graph)
    assert_first_order(converted)
    assert_same(run(converted, case.args), myia.grad(case.fn)(*case.args))


def make_adder(k):
    return lambda x: x + k


def returns_closure(k):
    return make_adder(k)(1.0) + make_adder(2.0)(k)


def test_escaping_closure_becomes_a_record():
    converted = closure_convert(myia.ir(returns_closure).graph)
    mng = manage(converted)
    records = [n for g in mng.graphs for n in mng.nodes(g) if n.is_apply(P.make_closure)]
    assert records, "the lambda returned by make_adder must be an explicit closure record"
    assert run(converted, (3.0,)) == returns_closure(3.0)


def branchy(x):
    if x > 0:
        y = x * 2
    else:
        y = -x
    return y + x


def test_switch_branches_share_their_parameters():
    converted = closure_convert(myia.ir(branchy).graph)
    mng = manage(converted)
    switches = [n for g in mng.graphs for n in mng.nodes(g) if n.is_apply(P.switch)]
    for s in switches:
        g1, g2 = s.inputs[2].value, s.inputs[3].value
        assert len(g1.parameters) == len(g2.parameters)
    # no closure records are needed for branches
    assert not [n for g in mng.graphs for n in mng.nodes(g) if n.is_apply(P.make_closure)]
    assert run(converted, (2.0,)) == branchy(2.0) and run(converted, (-1.0,)) == branchy(-1.0)
