"""Loops with a constant trip count unroll; small linear branches become selects; and
neither changes a value or a derivative (vs autograd and finite differences)."""

import math

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import myia
from myia.ir import manage
from myia.opt.pass_manager import recursive_graphs
from myia.opt.unroll import UNROLL_TRIPS


def graphs_of(fn, *args):
    view = myia.ir(fn, *args, stage="optimized")
    mng = manage(view.graph)
    return view, mng.graphs, recursive_graphs(mng)


def six_steps(x):
    i = 0
    while i < 6:
        x = np.sin(x) * 1.1 + 0.1 * x
        i = i + 1
    return x


def a_six_steps(x):
    for _ in range(6):
        x = anp.sin(x) * 1.1 + 0.1 * x
    return x


def n_steps(x, n):
    i = 0
    while i < n:
        x = np.sin(x) * 1.1
        i = i + 1
    return x


def many_steps(x):
    i = 0
    while i < 1000:
        x = np.sin(x) * 1.1
        i = i + 1
    return x


def branchy(x):
    total = 0.0
    i = 0
    while i < 5:
        if x * i > 1.0:
            total = total + x * 2.0
        else:
            total = total - x
        i = i + 1
    return total if total > 0.0 else -total


def a_branchy(x):
    total = 0.0
    for i in range(5):
        total = total + x * 2.0 if x * i > 1.0 else total - x
    return total if total > 0.0 else -total


def sqrt_if_positive(x):
    # the branch not taken (sqrt of a negative number) must not make the gradient nan
    total = 0.0
    i = 0
    while i < 3:
        if x > 0.0:
            total = total + math.sqrt(x)
        else:
            total = total - x * x
        i = i + 1
    return total


@pytest.mark.usefixtures("backend")
def test_a_constant_trip_count_unrolls_into_straight_line_code():
    view, graphs, loops = graphs_of(six_steps, 0.7)
    assert len(graphs) == 1 and not loops, str(view)
    assert myia.compile(six_steps)(0.7) == pytest.approx(a_six_steps(0.7), rel=1e-12)
    for k, want in enumerate([autograd.grad(a_six_steps),
                              autograd.grad(autograd.grad(a_six_steps))]):
        g = myia.grad(six_steps) if k == 0 else myia.grad(myia.grad(six_steps))
        assert g(0.7) == pytest.approx(want(0.7), rel=1e-10)
        _, graphs, loops = graphs_of(g, 0.7)
        assert not loops  # the derivative of the unrolled loop is straight-line code


@pytest.mark.usefixtures("backend")
def test_a_run_time_or_long_trip_count_stays_a_loop():
    _, _, loops = graphs_of(n_steps, 0.7, 6)
    assert loops
    _, _, loops = graphs_of(many_steps, 0.7)
    assert loops and 1000 > UNROLL_TRIPS
    assert myia.compile(many_steps)(0.7) == pytest.approx(
        _python_many_steps(0.7), rel=1e-12)


def array_steps(w, x):
    for _ in range(6):
        w = w - 0.1 * np.tanh(x @ w)
    return w


def test_a_loop_that_carries_large_arrays_stays_a_loop():
    """Six steps of an update of a 200x200 matrix: unrolling would not speed up the
    matrix work, and as a loop it frees each step's arrays (issue 22); a small
    matrix's loop still unrolls."""
    from myia.opt.unroll import UNROLL_ARRAY_ELEMENTS

    rng = np.random.default_rng(3)
    big, small = 200, 8
    assert big * big >= UNROLL_ARRAY_ELEMENTS > small * small
    for n, want_loop in ((big, True), (small, False)):
        w, x = rng.standard_normal((n, n)) * 0.1, rng.standard_normal((n, n))
        _, _, loops = graphs_of(array_steps, w, x)
        assert bool(loops) == want_loop, n
        expected = w
        for _ in range(6):
            expected = expected - 0.1 * np.tanh(x @ expected)
        np.testing.assert_allclose(myia.compile(array_steps, backend="llvm")(w, x), expected,
                                   rtol=1e-10, atol=1e-13)  # (BLAS's order of sums)


def _python_many_steps(x):
    for _ in range(1000):
        x = np.sin(x) * 1.1
    return x


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("x", [0.1, 0.4, 0.9, -0.3])
def test_small_branches_in_a_loop_become_selects(x):
    view, graphs, loops = graphs_of(branchy, x)
    assert len(graphs) == 1 and not loops, str(view)
    assert myia.compile(branchy)(x) == pytest.approx(a_branchy(x), rel=1e-12)
    assert myia.grad(branchy)(x) == pytest.approx(autograd.grad(a_branchy)(x), rel=1e-10)
    assert myia.grad(myia.grad(branchy))(x) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("x", [-2.0, 0.0 - 0.5, 2.0])
def test_a_branch_whose_derivative_may_be_nan_is_not_computed_when_not_taken(x):
    g = myia.grad(sqrt_if_positive)(x)
    h = 1e-6
    fd = (sqrt_if_positive(x + h) - sqrt_if_positive(x - h)) / (2 * h)
    assert np.isfinite(g) and g == pytest.approx(fd, rel=1e-5)
    # and the unrolled loop keeps the branches apart: 3 ifs, not 2^3 copies of the rest
    _, graphs, _ = graphs_of(sqrt_if_positive, x)
    # (math.sqrt, as np.sqrt, gives an np.float64: from the first step on that path,
    # `total` is a NumPy scalar, and the loop is typed once per kind of float)
    assert sum(g.name.endswith(":if_true") for g in graphs) <= 3
