"""A loop frees what each iteration made (issue 22): at a branch back to its header,
the LLVM backend frees the arena blocks made since the function began, except those
holding the arrays the loop carries.  Without it a whole training epoch in the subset
held every step's arrays until it returned (3.7 MB a step for a 784-256-10 MLP).

Checked with the memory limit of one call (the locked kernel's): a loop that makes
1 MB per iteration for 400 iterations runs under a 48 MB limit, and what it carries
(arrays of its own, small ones in the arena's chunks, views, tuples) keeps its values,
as on the VM."""

import numpy as np
import pytest

import myia
from myia.backend.llvm import runtime
from myia.errors import MyiaMemoryError


@pytest.fixture
def limit_48mb():
    before = runtime.memory_limit()
    runtime.set_memory_limit(48 << 20)
    yield
    runtime.set_memory_limit(before)


def grow(x, n):
    total = 0.0
    for i in range(n):
        big = np.ones(131072) * x[0]  # 1 MB, dead at the end of the iteration
        x = x * 0.5 + np.sum(big) * 1e-7
        total = total + x[1]
    return x, total


def carried(x, small, n):
    view = x[1:]
    pair = (x, small)
    i = 0
    while i < n:
        tmp = np.exp(x * 0.001)  # a temporary of each iteration
        x = tmp * 0.5 + pair[0][0]
        small = small + np.sum(view[:3])  # a small array: in a chunk of the arena
        view = x[2:]  # a view of an array this iteration made
        pair = (view[:4] * 2.0, small)
        i = i + 1
    return x, small, view, pair


def both(fn, *args):
    return myia.compile(fn, backend="vm")(*args), myia.compile(fn, backend="llvm")(*args)


def test_each_iteration_frees_its_arrays(limit_48mb):
    x = np.arange(1.0, 1001.0)
    got = myia.compile(grow, backend="llvm")(x, 400)
    want = grow(x, 400)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    assert got[1] == pytest.approx(want[1], rel=1e-12)


def test_the_limit_still_holds(limit_48mb):
    def keep(acc, n):
        i = 0
        while i < n:
            both_halves = np.concatenate([acc, acc + 1.0])  # 2 MB, dead at the back edge
            acc = both_halves[:131072] * 0.5 + both_halves[131072:] * 0.5
            i = i + 1
        return acc

    acc = np.zeros(131072)  # 1 MB carried, 4 MB of temporaries per iteration
    np.testing.assert_allclose(myia.compile(keep, backend="llvm")(acc, 300), keep(acc, 300))

    def outer(x):
        return np.outer(x, x)

    with pytest.raises(MyiaMemoryError, match="limit"):
        myia.compile(outer, backend="llvm")(np.ones(4000))  # 128 MB


def test_carried_arrays_views_and_tuples_keep_their_values():
    x = np.linspace(0.0, 1.0, 3000)  # 24 kB: a block of its own
    small = np.array([1.0, 2.0, 3.0])  # 24 bytes: in a chunk
    vm, llvm = both(carried, x, small, 50)
    for a, b in zip(vm[:3], llvm[:3]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(vm[3][0], llvm[3][0], rtol=1e-12)
    np.testing.assert_allclose(vm[3][1], llvm[3][1], rtol=1e-12)


def test_a_loop_gradient_inside_a_loop():
    def inner(w, x):
        i = 0
        while i < 5:
            x = np.tanh(x * w)
            i = i + 1
        return np.sum(x)

    def train(w, x, n):
        for _ in range(n):
            w = w - 0.01 * myia.grad(inner)(w, x)
        return w

    x = np.linspace(-1.0, 1.0, 600)
    vm, llvm = both(train, 0.9, x, 40)
    assert llvm == pytest.approx(vm, rel=1e-12)


def nested(x, n, m):
    outer = np.zeros(4)  # carried by the outer loop, not used by the inner one
    i = 0
    while i < n:
        acc = np.broadcast_to(np.sum(x) * 0.0 + i, (5000,))  # a view of a tiny temporary
        j = 0
        while j < m:
            acc = np.reshape(np.reshape(acc * 0.5, (50, 100)) + 1.0, (5000,))  # views
            j = j + 1
        outer = outer + acc[:4]
        x = x * 0.99
        i = i + 1
    return outer, x


def test_nested_loops_broadcasts_and_reshaped_views_keep_their_values():
    x = np.linspace(0.0, 1.0, 3000)
    vm, llvm = both(nested, x, 30, 7)
    for a, b in zip(vm, llvm):
        np.testing.assert_allclose(a, b, rtol=1e-12)
