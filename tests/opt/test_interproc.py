"""Interprocedural rewrites: what every caller of a graph reads is all the graph computes."""

import importlib.util
import math

import numpy as np
import pytest

import myia
from benchmarks.loop_memory import state_without_x, two_carried, with_invariant
from myia.ir import Constant, manage
from myia.prim import Primitive
from tests.ad.test_must_hold import sin_loop
from tests.opt.test_targets import optimized, prim_names


def halve_until(x, n):
    if n == 0:
        return (x, x + 1.0)
    return halve_until(x * 0.5, n - 1)


def first_only(x, n):
    return halve_until(x, n)[0]


def both_entries(x, n):
    t = halve_until(x, n)
    return t[0] * t[1]


def test_an_entry_no_caller_reads_is_not_computed():
    view = optimized(first_only, 3.0, 4)
    names = prim_names(view)
    assert "add" not in names and "make_tuple" not in names and "tuple_getitem" not in names, \
        str(view)
    assert myia.compile(first_only, backend="vm")(3.0, 4) == first_only(3.0, 4)


def test_entries_a_caller_reads_are_kept():
    view = optimized(both_entries, 3.0, 4)
    names = prim_names(view)
    assert "add" in names and "make_tuple" in names, str(view)
    assert myia.compile(both_entries, backend="vm")(3.0, 4) == both_entries(3.0, 4)


ENV_OPS = {"env_new", "env_setitem", "env_getitem", "env_add"}


def test_loop_backpropagators_pass_no_environment():
    view = optimized(myia.value_and_grad(sin_loop), 0.5, 100)
    assert not ENV_OPS & set(prim_names(view)), str(view)


def test_gradient_of_a_loop_does_not_thread_the_forward_value():
    # grad (not value_and_grad): each iteration returns only its backpropagator
    view = optimized(myia.grad(sin_loop), 0.5, 100)
    names = prim_names(view)
    assert "make_tuple" not in names and "tuple_getitem" not in names, str(view)
    assert math.isclose(myia.compile(myia.grad(sin_loop), backend="vm")(0.5, 100),
                        myia.grad(sin_loop)(0.5, 100))


def test_closures_that_only_forward_are_removed():
    # the loop header's backpropagator only calls its branch's: eta-reduced away
    view = optimized(myia.grad(sin_loop), 0.5, 100)
    log = view.log
    assert log.counts["eta_reduce"] > 0 and log.counts["narrow_outputs"] > 0
    graphs = manage(view.graph).graphs
    assert not any(g.name.startswith("◀") and "header" in g.name for g in graphs), str(view)


def test_record_update_replacing_a_closure_runs_the_same_on_both_backends():
    # each iteration's pair becomes tuple_setitem(rest, 1, its own backpropagator): the
    # entry's type (one closure) differs from the rest's (either of two closures)
    view = optimized(myia.value_and_grad(sin_loop), 0.5, 100)
    assert "tuple_setitem" in prim_names(view), str(view)
    want = myia.compile(myia.value_and_grad(sin_loop), backend="vm")(0.5, 100)
    got = myia.compile(myia.value_and_grad(sin_loop), backend="llvm")(0.5, 100)
    assert got == want


def test_optimizing_a_program_leaves_the_shared_derivative_graphs_alone():
    # J of a primitive or a graph is cached and shared by every program; the optimizer
    # rewrites its own program in place, so it must work on copies of them
    from myia.ad.reverse import prim_fprop
    from myia.prim import ops as P
    from myia.pipeline import IRView
    from tests.ad.test_must_hold import third_derivative_mixed

    shared = [prim_fprop(p) for p in (P.mul, P.add, P.pow)]
    before = [str(IRView(g, "parsed")) for g in shared]
    assert myia.compile(third_derivative_mixed, backend="llvm")(-3.0) == 20 * 81.0
    assert [str(IRView(g, "parsed")) for g in shared] == before


def doubling_halving(x, n):
    # x = (x + x) / 2 keeps x: the derivative is 1 whatever the values of x
    i = 0
    while i < n:
        x = (x + x) / 2.0
        i = i + 1
    return x * 3.0


def with_value_needed(x, n):
    i = 0
    while i < n:
        x = x * x / 2.0
        i = i + 1
    return x


def forward_ops(view):
    mng = manage(view.graph)
    return [n.inputs[0].value.name for g in mng.graphs if g.name.startswith("▶")
            for n in mng.nodes(g) if n.is_apply() and isinstance(n.inputs[0], Constant)
            and isinstance(n.inputs[0].value, Primitive)]


def test_loop_values_the_gradient_does_not_need_are_not_computed(backend):
    # the forward pass of grad(doubling_halving) only counts the iterations
    view = optimized(myia.grad(doubling_halving), 0.7, 5)
    ops = forward_ops(view)
    assert "truediv" not in ops and "mul" not in ops, str(view)
    assert myia.compile(myia.grad(doubling_halving), backend=backend)(0.7, 5) == 3.0
    # x * x / 2: each backpropagator needs x, so the forward pass still computes it
    view = optimized(myia.grad(with_value_needed), 0.7, 5)
    assert "mul" in forward_ops(view), str(view)
    want = myia.compile(myia.grad(with_value_needed), backend="vm")(0.7, 3)
    assert myia.compile(myia.grad(with_value_needed), backend=backend)(0.7, 3) == \
        pytest.approx(want)
    assert want == pytest.approx(0.7 ** 7 / 2 ** 7 * 8, rel=1e-12)


# ---- symbolic zeros through a loop's carry (forward mode) ------------------------------
# jvp threads a tangent through every value a loop carries; a step size the loop
# halves on its own has a zero tangent at entry and keeps it: nothing computes it
# (JAX's symbolic zeros through a while loop)


def damped(x, n):
    eta = 1.0
    i = 0
    while i < n:
        eta = eta / 2.0
        x = x + eta * np.sin(x)
        i = i + 1
    return x


def damped_jvp(x, t, n):
    return myia.jvp(lambda y: damped(y, n), (x,), (t,))


def accumulated(x, n):
    # `a` starts as a constant, but its tangent is x's from the first iteration on
    a = 0.0
    i = 0
    while i < n:
        a = a * 0.5 + x
        i = i + 1
    return a


def accumulated_jvp(x, t, n):
    return myia.jvp(lambda y: accumulated(y, n), (x,), (t,))


def _central(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def test_a_tangent_a_loop_keeps_zero_is_not_computed(backend):
    names = prim_names(optimized(damped_jvp, 0.3, 1.0, 4))
    # eta / 2.0 once: the primal's; its tangent (0 / 2.0) is not computed
    assert names.count("truediv") == 1, names
    out, tangent = myia.compile(damped_jvp, backend=backend)(0.3, 1.0, 4)
    assert out == pytest.approx(damped(0.3, 4), rel=1e-12)
    assert tangent == pytest.approx(_central(lambda y: damped(y, 4), 0.3), rel=1e-7)
    assert (out, tangent) == pytest.approx(myia.compile(damped_jvp, backend="vm")(0.3, 1.0, 4))


def test_a_carry_whose_tangent_becomes_nonzero_keeps_it(backend):
    out, tangent = myia.compile(accumulated_jvp, backend=backend)(0.3, 1.0, 5)
    assert out == pytest.approx(accumulated(0.3, 5), rel=1e-12)
    assert tangent == pytest.approx(sum(0.5 ** k for k in range(5)), rel=1e-12)


def test_a_long_chain_into_a_loop_carry_is_followed_a_bounded_depth(tmp_path):
    # the body of a loop written out, 400 steps: the tangent its carry receives is a
    # chain 400 operations deep, which the search for symbolic zeros followed
    # recursively (a RecursionError, where the program compiled before)
    body = "        t = t * 0.5 + x\n" * 400
    path = tmp_path / "long_chain.py"
    path.write_text("import myia\n\n\ndef chain(x, n):\n    t = 0.0\n    i = 0\n"
                    f"    while i < n:\n{body}        i = i + 1\n    return t\n\n\n"
                    "def chain_jvp(x, tx, n):\n"
                    "    return myia.jvp(lambda y: chain(y, n), (x,), (tx,))\n")
    spec = importlib.util.spec_from_file_location("long_chain", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out, tangent = myia.compile(module.chain_jvp, backend="vm")(0.3, 1.0, 1)
    assert out == pytest.approx(0.6 * (1 - 0.5 ** 400))
    assert tangent == pytest.approx(2 * (1 - 0.5 ** 400))


# ---- `while True` loops: a branch that only calls the loop's continuation -----------
# (`if x > 0.0: x = x - v` ends by calling the block after the `if`, a closure that
# captures the new x: eta-reducing the branch into it took that closure out of the
# scope of the value it captures, and the scopes became a cycle the manager walked
# forever: the program never finished optimizing)


def break_in_else(x, v):
    while True:
        if x > 0.0:
            x = x - v
        else:
            break
    return x


def break_in_if(x, v):
    while True:
        if x <= 0.0:
            break
        else:
            x = x - v
    return x


def break_after_a_counter(x, n):
    i = 0
    while True:
        if i >= n:
            break
        x = x * 2.0
        i = i + 1
    return x


def nested_while_true(x, n):
    i = 0
    while True:
        j = 0
        while True:
            if j >= i:
                break
            x = x + 1.0
            j = j + 1
        if i >= n:
            break
        i = i + 1
    return x


def nested_break_in_else(x, v):
    while True:
        if x > 0.0:
            y = x
            while True:
                if y > 1.0:
                    y = y - 1.0
                else:
                    break
            x = x - v - y * 0.5
        else:
            break
    return x


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fn, args", [
    (break_in_else, (1.0, 0.3)),
    (break_in_if, (1.0, 0.3)),
    (break_after_a_counter, (1.5, 4)),
    (nested_while_true, (0.0, 4)),
    (nested_break_in_else, (2.5, 0.4)),
], ids=lambda v: getattr(v, "__name__", None))
def test_while_true_loops_compile_and_run_as_on_the_vm(fn, args, backend):
    want = fn(*args)
    assert myia.compile(fn, backend="vm")(*args) == pytest.approx(want, rel=1e-15)
    assert myia.compile(fn, backend=backend)(*args) == pytest.approx(want, rel=1e-15)
    grad_want = myia.compile(myia.grad(fn), backend="vm")(*args)
    assert myia.compile(myia.grad(fn), backend=backend)(*args) == pytest.approx(grad_want)


@pytest.mark.timeout(120)
def test_eta_reduction_keeps_a_closure_in_the_scope_of_what_it_captures():
    view = optimized(break_in_else, 1.0, 0.3)
    mng = manage(view.graph)
    for g in mng.graphs:  # a free variable belongs to a graph that encloses its user
        for fv in mng.free_variables_direct(g):
            assert fv.graph in mng.ancestors(g), str(view)


# ---- dead outputs and unboxed closures: what a loop's backward pass does not need ------


def backward_ops(view):
    mng = manage(view.graph)
    return [n.inputs[0].value.name for g in mng.graphs if g.name.startswith("◀")
            for n in mng.nodes(g) if n.is_apply() and isinstance(n.inputs[0], Constant)
            and isinstance(n.inputs[0].value, Primitive)]


def test_a_sensitivity_no_caller_reads_is_not_computed(backend):
    # grad with respect to x: ∂a (the sum of sin(x) * ∂x over the steps) is not
    # computed, so the backward pass neither adds nor keeps sin(x)
    view = optimized(myia.grad(with_invariant), 0.5, 0.9, 5)
    assert view.log.counts["drop_dead_outputs"] > 0
    ops = backward_ops(view)
    assert "add" not in ops and not ENV_OPS & set(ops), str(view)
    want = math.prod(math.cos(x) * 0.9 for x in _iterates(0.5, 0.9, 5))
    assert myia.compile(myia.grad(with_invariant), backend=backend)(0.5, 0.9, 5) == \
        pytest.approx(want, rel=1e-12)
    # with respect to both, it is
    gx, ga = myia.compile(myia.grad(with_invariant, argnums=(0, 1)), backend=backend)(
        0.5, 0.9, 5)
    assert gx == pytest.approx(want, rel=1e-12)
    assert ga == pytest.approx(_central(lambda a: _iterates(0.5, a, 6)[-1], 0.9), rel=1e-7)


def _iterates(x, a, n):
    out = [x]
    for _ in range(n - 1):
        out.append(math.sin(out[-1]) * a)
    return out


def test_a_step_that_only_repackages_the_rest_is_no_closure(backend):
    # ◀for_header turned the rest's environment {x, y} into its own tuple: unboxed,
    # one backpropagator a step is left, and no environment crosses the steps' calls
    view = optimized(myia.grad(two_carried), 0.5, 0.9, 5)
    assert view.log.counts["unbox_closures"] > 0
    graphs = manage(view.graph).graphs
    assert not any(g.name.startswith("◀") and "header" in g.name for g in graphs), str(view)
    assert "make_tuple" not in backward_ops(view), str(view)
    got = myia.compile(myia.grad(two_carried), backend=backend)(0.5, 0.9, 5)
    assert got == pytest.approx(_central(lambda x: _two(x, 0.9, 5), 0.5), rel=1e-7)


def _two(x, a, n):
    y = x
    for _ in range(n):
        x, y = math.sin(y) * a, math.cos(x)
    return x + y


def test_a_loop_state_that_does_not_depend_on_x_makes_no_backpropagators(backend):
    # ◀while_header(d) = rest(1.0), and every call passes 1.0: eta-reduced, though it
    # may be its own rest; the forward pass makes no closure a step
    view = optimized(myia.grad(state_without_x), 0.5, 5)
    graphs = manage(view.graph).graphs
    assert not any(g.name.startswith("◀") and "header" in g.name for g in graphs), str(view)
    assert myia.compile(myia.grad(state_without_x), backend=backend)(0.5, 7) == \
        pytest.approx(sum(math.sin(i) for i in range(7)), rel=1e-12)
