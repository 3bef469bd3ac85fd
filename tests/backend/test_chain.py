"""A loop gradient's backpropagators as flat records (myia.backend.llvm.chain).

The forward pass of a loop's gradient stores each iteration's residuals one after
another in segments, without a pointer to the next iteration's closure; the backward
pass walks them back without saving anything per level.  Checked against the VM,
against Python and autograd, across segment boundaries, between chains, and under a
memory limit that the old layout (a 24-byte record and an 8-byte stack entry per
iteration) does not fit in."""

import math

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import myia
from myia.errors import MyiaMemoryError
from tests.ad.test_must_hold import sin_loop


def _sin_loop_grad(x, n):
    d = 1.0
    for _ in range(n):
        d *= math.cos(x)
        x = math.sin(x)
    return d


# segments hold 8, 16, 32, ... records: these cross the first few boundaries
@pytest.mark.parametrize("n", [0, 1, 2, 7, 8, 9, 23, 24, 25, 57, 1000])
def test_a_loop_gradient_across_segment_boundaries(n):
    g = myia.compile(myia.grad(sin_loop), backend="llvm")(0.5, n)
    assert g == pytest.approx(_sin_loop_grad(0.5, n), rel=1e-12)
    if n < 100:
        assert g == pytest.approx(myia.compile(myia.grad(sin_loop), backend="vm")(0.5, n),
                                  rel=1e-12)


def test_a_long_loop_gradient_fills_full_size_segments():
    # past 131,064 records the segments stop growing (65,536 records each)
    n = 200_003
    g = myia.compile(myia.grad(sin_loop), backend="llvm")(0.5, n)
    assert g == pytest.approx(_sin_loop_grad(0.5, n), rel=1e-9)


def test_a_million_step_loop_gradient_keeps_about_ten_bytes_an_iteration(memory_limit):
    # 10^6 records of one float and a 2-byte position: ~10 MB; the old layout needed
    # 32 MB (a 24-byte record and an 8-byte stack entry an iteration)
    memory_limit(14 << 20)
    n = 1_000_000
    g = myia.compile(myia.grad(sin_loop), backend="llvm")(0.5, n)
    assert g == pytest.approx(_sin_loop_grad(0.5, n), rel=1e-9)
    memory_limit(6 << 20)  # and the limit still holds: half of what it needs
    with pytest.raises(MyiaMemoryError, match="limit"):
        myia.compile(myia.grad(sin_loop), backend="llvm")(0.5, n)


def rnn(W, x, n):
    i = 0
    while i < n:
        x = np.tanh(W @ x) + 0.1 * x
        i = i + 1
    return np.sum(x * x)


def _rnn_autograd(W, x, n):
    for _ in range(n):
        x = anp.tanh(anp.dot(W, x)) + 0.1 * x
    return anp.sum(x * x)


@pytest.mark.parametrize("n", [0, 1, 9, 30])
def test_array_residuals_against_the_vm_and_autograd(n):
    rng = np.random.default_rng(0)
    W = rng.standard_normal((5, 5)) * 0.5
    x = rng.standard_normal(5)
    gW, gx = myia.compile(myia.grad(rnn, argnums=(0, 1)), backend="llvm")(W, x, n)
    vW, vx = myia.compile(myia.grad(rnn, argnums=(0, 1)), backend="vm")(W, x, n)
    aW, ax = autograd.grad(_rnn_autograd, argnum=(0, 1))(W, x, n)
    np.testing.assert_allclose(gW, vW, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(gx, vx, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(gW, aW, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gx, ax, rtol=1e-10, atol=1e-12)


def cubed_loop(x, n):
    # the loop's sensitivity is computed (3 y^2), not the constant 1.0
    y = sin_loop(x, n)
    return y * y * y


@pytest.mark.parametrize("n", [0, 3, 40])
def test_a_computed_sensitivity_flows_through_the_chain(n):
    g = myia.compile(myia.grad(cubed_loop), backend="llvm")(0.7, n)
    assert g == pytest.approx(myia.compile(myia.grad(cubed_loop), backend="vm")(0.7, n),
                              rel=1e-12)
    assert g == pytest.approx(autograd.grad(lambda x: _sin_loop_a(x, n) ** 3)(0.7), rel=1e-10)


def _sin_loop_a(x, n):
    for _ in range(n):
        x = anp.sin(x)
    return x


@pytest.mark.parametrize("n", [0, 2, 11])
def test_second_derivative_of_a_loop(n):
    gg = myia.compile(myia.grad(myia.grad(sin_loop)), backend="llvm")(0.5, n)
    assert gg == pytest.approx(myia.compile(myia.grad(myia.grad(sin_loop)), backend="vm")(0.5, n),
                               rel=1e-10)
    assert gg == pytest.approx(autograd.grad(autograd.grad(_sin_loop_a))(0.5, n), rel=1e-10)


def nested(x, n, m):
    i = 0
    while i < n:
        j = 0
        while j < m:
            x = np.sin(x) * 0.9 + 0.1 * x
            j = j + 1
        x = x * np.cos(x)
        i = i + 1
    return x


@pytest.mark.parametrize("n,m", [(0, 3), (3, 0), (4, 5), (12, 9)])
def test_nested_loops_chains_of_chains(n, m):
    g = myia.compile(myia.grad(nested), backend="llvm")(0.4, n, m)
    assert g == pytest.approx(myia.compile(myia.grad(nested), backend="vm")(0.4, n, m),
                              rel=1e-12)


# ---- chains that lead into other chains ------------------------------------------------


def chain(n, x, tail):
    if n == 0:
        return tail
    c = x * 2.0
    rest = chain(n - 1, x + 1.0, tail)

    def link():
        return rest() * 0.5 + c

    return link


def two_chains(n, m, x):
    def last():
        return x

    first = chain(m, x, last)
    second = chain(n, x + 0.5, first)  # its last record links to first's first
    return second()


def _two_chains(n, m, x):
    v = x
    for k in reversed(range(m)):
        v = v * 0.5 + (x + k) * 2.0
    for k in reversed(range(n)):
        v = v * 0.5 + (x + 0.5 + k) * 2.0
    return v


@pytest.mark.parametrize("n,m", [(0, 0), (0, 5), (5, 0), (3, 4), (9, 30), (40, 40)])
def test_a_walk_from_one_chain_into_another(n, m):
    want = _two_chains(n, m, 0.25)
    assert myia.compile(two_chains, backend="llvm")(n, m, 0.25) == pytest.approx(want, rel=1e-12)
    assert myia.compile(two_chains, backend="vm")(n, m, 0.25) == pytest.approx(want, rel=1e-12)


def chain_with_argument(n, x):
    if n == 0:
        def last(y):
            return x + y

        return last
    c = x * 2.0
    rest = chain_with_argument(n - 1, x + 1.0)

    def link(y):
        return rest(y + 1.0) * y + c  # y, an argument, is needed after the call

    return link


def _chain_with_argument(n, x, y):
    if n == 0:
        return x + y
    return _chain_with_argument(n - 1, x + 1.0, y + 1.0) * y + x * 2.0


@pytest.mark.parametrize("n", [0, 1, 8, 9, 100])
def test_a_chain_whose_levels_save_an_argument(n):
    def run(n, x, y):
        return chain_with_argument(n, x)(y)

    want = _chain_with_argument(n, 0.25, 0.01)
    assert myia.compile(run, backend="llvm")(n, 0.25, 0.01) == pytest.approx(want, rel=1e-12)
    assert myia.compile(run, backend="vm")(n, 0.25, 0.01) == pytest.approx(want, rel=1e-12)
