"""The pass manager: which rules it tries where, how far one sweep goes, and the
manager it hands on (myia.opt.pass_manager, myia.ir.manager); pausing the garbage
collector while compiling (myia.gc_pause)."""

import gc

import pytest

import myia
from myia.gc_pause import gc_paused
from myia.ir import Apply, manage
from myia.ir.clone import clone_many
from myia.opt.pass_manager import rule, run_pass
from myia.pipeline import Pipeline
from myia.prim import ops as P
from tests.ad.test_must_hold import quintic
from tests.opt.test_targets import square


def typed_copy(fn, *args):
    typed = Pipeline().specialize(fn, args)
    return clone_many(manage(typed).graphs)[typed]


def test_a_rule_on_some_primitives_sees_only_their_calls():
    seen = []

    @rule(on=[P.mul])
    def spy(node, ctx):
        seen.append(node.inputs[0].value)

    root = typed_copy(myia.grad(square), 3.0)
    run_pass(root, [spy])
    assert seen and set(seen) == {P.mul}


def test_what_a_rewrite_makes_is_rewritten_in_the_same_sweep():
    @rule(on=[P.mul])
    def mul_to_add(node, ctx):
        """x * y -> x + y (a new node, that the next rule rewrites)"""
        new = node.graph.apply(P.add, *node.inputs[1:], loc=node.loc)
        new.abstract = node.abstract
        return new

    @rule(on=[P.add])
    def add_to_sub(node, ctx):
        new = node.graph.apply(P.sub, *node.inputs[1:], loc=node.loc)
        new.abstract = node.abstract
        return new

    root = typed_copy(square, 3.0)  # x * x
    count, _ = run_pass(root, [mul_to_add, add_to_sub], max_sweeps=1)
    assert count == 2
    assert root.output.is_apply(P.sub)


def _description(mng):
    return {g: (list(mng.nodes(g)), set(mng.free_variables(g)), mng.parent(g),
                {n: sorted((id(u), i) for u, i in mng.users(n))
                 for n in mng.nodes(g) if isinstance(n, Apply)})
            for g in mng.graphs}


@pytest.mark.parametrize("order", [2, 3])
def test_the_manager_a_sweep_hands_on_describes_the_program(order):
    # after a sweep, the manager starts from the free variables of the program before
    # it (a hint); it must answer as a fresh one does (it once kept nodes that only a
    # stale hint made it walk)
    from myia.opt import rules as R

    f = quintic
    for _ in range(order):
        f = myia.grad(f)
    root = typed_copy(f, -3.0)
    mng = manage(root)
    for _ in range(4):
        _, mng = run_pass(root, R.ALL, max_sweeps=1, like=mng)
        assert _description(mng) == _description(manage(root))


def test_gc_paused_restores_the_collector():
    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError), gc_paused():
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # (the outer pause still holds)
        raise ZeroDivisionError
    assert gc.isenabled()
    with pytest.raises(myia.errors.MyiaError):
        myia.compile(square, backend="llvm")("not a number")
    assert gc.isenabled()
