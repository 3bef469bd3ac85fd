"""What the optimizer must achieve on derivative programs (issue: the cheap gradient)."""

import math

import numpy as np
import pytest

import myia
from myia.ir import Constant, Graph, manage
from myia.prim import Primitive
from tests.compare import assert_same
from tests.corpus import CASES


def optimized(fn, *args):
    return myia.ir(fn, *args, stage="optimized")


def prim_names(view):
    mng = manage(view.graph)
    return [n.inputs[0].value.name for g in mng.graphs for n in mng.nodes(g)
            if n.is_apply() and isinstance(n.inputs[0], Constant)
            and isinstance(n.inputs[0].value, Primitive)]


def square(x):
    return x * x


def poly(x):
    return x ** 3 + 2 * x * x - x / 3 + 7


@pytest.mark.usefixtures("backend")
def test_gradient_of_square_is_two_operations_at_most():
    view = optimized(myia.grad(square), 3.0)
    assert view.op_count() <= 2, str(view)
    assert myia.compile(myia.grad(square))(3.0) == 6.0


def test_gradient_of_a_polynomial_is_eight_operations_at_most():
    view = optimized(myia.grad(poly), 2.0)
    assert view.op_count() <= 8, str(view)


def straight_scalar(x, y):
    a = math.sin(x) * y
    b = a / (1.0 + x * x)
    return math.exp(b) - a * y


def straight_array(w, x):
    h = np.tanh(x @ w)
    return np.sum(h * h) / 2.0


STRAIGHT = [(straight_scalar, (0.5, 2.0)), (straight_array, (np.ones((3, 2)) * 0.1, np.ones((4, 3)))),
            (square, (3.0,)), (poly, (2.0,))]

FORBIDDEN = {"J", "Jinv", "env_new", "env_setitem", "env_getitem", "env_add", "make_tuple",
             "tuple_getitem", "make_closure", "gadd", "zeros_like", "unbroadcast", "grad_seed"}


@pytest.mark.parametrize("fn,args", STRAIGHT, ids=[f.__name__ for f, _ in STRAIGHT])
def test_straight_line_adjoint_has_no_closure_env_J_or_tuple(fn, args):
    view = optimized(myia.grad(fn, tuple(range(len(args)))) if len(args) > 1 else myia.grad(fn), *args)
    mng = manage(view.graph)
    assert len(mng.graphs) == 1, "no closures left:\n" + str(view)
    names = set(prim_names(view))
    # the gradient with respect to several arguments is a tuple: one make_tuple at the end
    leftover = (names & FORBIDDEN) - ({"make_tuple"} if len(args) > 1 else set())
    assert not leftover, f"{leftover} left in:\n{view}"


@pytest.mark.usefixtures("backend")
def test_second_and_third_derivatives_fold_into_one_graph():
    # zeros of tuples and of functions, sums of tuples and of environments fold away:
    # no closure, environment or J is left, and the third derivative stays small
    from tests.ad.test_must_hold import quintic

    d2 = myia.grad(myia.grad(quintic))
    d3 = myia.grad(d2)
    for d, most in ((d2, 16), (d3, 80)):
        view = optimized(d, -3.0)
        assert len(manage(view.graph).graphs) == 1, str(view)
        left = set(prim_names(view)) & (FORBIDDEN - {"make_tuple", "tuple_getitem", "gadd"})
        assert not left, f"{left} left in:\n{view}"
        assert view.op_count() <= most, str(view)
    assert myia.compile(d2)(-3.0) == pytest.approx(20 * -27.0)
    assert myia.compile(d3)(-3.0) == pytest.approx(60 * 9.0)


def mlp_loss(w1, w2, x, y):
    h = np.tanh(x @ w1)
    out = h @ w2
    return np.sum((out - y) ** 2)


def sin_loop(x):
    for i in range(10000):
        x = np.sin(x)
    return x


def test_cheap_gradient_mlp():
    rng = np.random.default_rng(0)
    args = (rng.normal(size=(5, 4)), rng.normal(size=(4, 3)), rng.normal(size=(2, 5)),
            rng.normal(size=(2, 3)))
    forward = optimized(mlp_loss, *args).op_count()
    both = optimized(myia.value_and_grad(mlp_loss, (0, 1)), *args).op_count()
    assert both <= 3 * forward, f"{both} operations for a forward of {forward}"


def test_cheap_gradient_loop():
    forward = optimized(sin_loop, 0.5).op_count()
    both = optimized(myia.value_and_grad(sin_loop), 0.5).op_count()
    assert both <= 3 * forward, f"{both} operations for a forward of {forward}"


def test_pass_log_says_which_rules_fired():
    view = optimized(myia.grad(square), 3.0)
    log = view.log
    assert log.counts["inline_call"] > 0
    assert log.counts["getitem_of_make_tuple"] > 0
    text = str(log)
    assert "inline_call" in text and "->" in text


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_optimized_corpus_gives_the_same_results(case):
    from myia.arguments import exit_value, internal_values
    from myia.backend.vm import VM, Closure

    view = optimized(case.fn, *case.args)
    got = VM().call(Closure(view.graph, None), internal_values(case.args))
    # (a list or a dict is a tuple inside the program)
    assert_same(exit_value(got, view.graph.flags.get("result")), case.fn(*case.args))


DIFF = [c for c in CASES if "differentiable" in c.tags]


@pytest.mark.parametrize("case", DIFF, ids=[c.name for c in DIFF])
def test_optimized_gradients_give_the_same_results(case):
    from myia.backend.vm import VM, Closure

    view = optimized(myia.grad(case.fn), *case.args)
    want = myia.compile(myia.grad(case.fn), backend="vm")(*case.args)
    assert_same(VM().call(Closure(view.graph, None), list(case.args)), want, rtol=1e-8)
