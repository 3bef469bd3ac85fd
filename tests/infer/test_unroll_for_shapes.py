"""A loop whose counter decides a shape is unrolled at compile time when its trip
count is known: GradBench's det, written with minors, compiles as written."""

import inspect

import numpy as np
import pytest

import myia
from myia.errors import MyiaBackendError, MyiaShapeError

# GradBench's det, as the GradBench tool serves it: Laplace expansion along the first
# row, whose minors' widths depend on the loop counter j
from benchmarks.gradbench.evals.det import det

BACKENDS = ["vm", "llvm"]


def windows(x, k):
    # a running sum of windows of growing width: the width is the counter
    total = 0.0
    for j in range(1, k + 1):
        total = total + np.sum(np.sin(x[:j]) * j)
    return total


def matrices(n, seed=0):
    return np.random.RandomState(seed + n).randn(n, n)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_det_by_minors(backend, n):
    A = matrices(n)
    assert myia.compile(det, backend=backend)(A) == pytest.approx(np.linalg.det(A), rel=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_gradient_of_det_by_minors(backend):
    A = matrices(4)
    g = myia.compile(myia.grad(det), backend=backend)(A)
    # d det / dA = det(A) inv(A)^T
    np.testing.assert_allclose(g, np.linalg.det(A) * np.linalg.inv(A).T, rtol=1e-10, atol=1e-12)


def sum_of_det_gradient(A):
    return np.sum(myia.grad(det)(A))


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_second_derivative_of_det_by_minors(backend):
    A = matrices(3)
    g2 = myia.compile(myia.grad(sum_of_det_gradient), backend=backend)(A)
    # against finite differences of the closed form of the first derivative
    def first(B):
        return np.sum(np.linalg.det(B) * np.linalg.inv(B).T)

    h = 1e-6
    fd = np.zeros_like(A)
    for i in range(3):
        for j in range(3):
            E = np.zeros_like(A)
            E[i, j] = h
            fd[i, j] = (first(A + E) - first(A - E)) / (2 * h)
    np.testing.assert_allclose(g2, fd, rtol=1e-6, atol=1e-7)


def test_a_window_whose_width_is_the_counter():
    # nothing fails in inference (x[:j] has a length known at run time), so nothing is
    # unrolled: the VM runs it; the llvm backend, which needs a static length there,
    # says where and what to write
    x = np.linspace(0.1, 0.9, 6)
    want = sum(np.sum(np.sin(x[:j]) * j) for j in range(1, 6))
    f = myia.compile(windows, backend="vm", static_argnums=1)
    assert f(x, 5) == pytest.approx(want, rel=1e-13)
    g = myia.compile(myia.grad(windows), backend="vm", static_argnums=1)(x, 5)
    np.testing.assert_allclose(g, [np.cos(x[i]) * sum(range(i + 1, 6)) for i in range(6)],
                               rtol=1e-13)
    with pytest.raises(MyiaBackendError) as e:
        myia.compile(windows, backend="llvm", static_argnums=1)(x, 5)
    lines, start = inspect.getsourcelines(windows)
    line = start + next(i for i, t in enumerate(lines) if "x[:j]" in t)
    assert f"line {line}," in str(e.value) and "with n known at compile time" in str(e.value)


def too_many_windows(x):
    total = 0.0
    for j in range(3000):
        total = total + np.sum(np.concatenate((x[:j], x[:1])))
    return total


def test_a_loop_too_long_to_unroll_keeps_its_error():
    with pytest.raises(MyiaShapeError, match="concatenate needs static shapes"):
        myia.compile(too_many_windows, backend="vm")(np.ones(4000))


def test_the_optimizer_does_not_copy_the_minors_factorially():
    # each size's det calls the next smaller one once per column; inlining every call
    # would copy det_4 five times into each of six det_5s (9,927 operations for 6 x 6)
    sizes = [myia.ir(det, matrices(n), stage="optimized").op_count() for n in (5, 6, 7)]
    assert sizes[1] < 2 * sizes[0] and sizes[2] < 2 * sizes[0], sizes
