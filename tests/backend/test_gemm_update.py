"""`W - lr * (A @ B)` on LLVM: one gemm into a copy of W (myia.backend.llvm.gemm_update),
against the VM and NumPy, in every form it takes and in those it leaves to the plain
product and loop."""

import re

import numpy as np
import pytest

import myia

from ..helpers import llvm_ir

RNG = np.random.default_rng(20261203)


def gemm_calls(fn, *args):
    return len(re.findall(r"call void @[ds]gemm\(", llvm_ir(fn, *args)))


def sgd(W, X, D, lr):
    return W - lr * (X.T @ D)


def scale_after(W, X, D, lr):
    return W - (X.T @ D) * lr


def plain(W, X, D, lr):
    return W - X.T @ D


def added(W, X, D, lr):
    return lr * (X.T @ D) + W


def int_scale(W, X, D, lr):
    return W + 3 * (X.T @ D)


FORMS = [sgd, scale_after, plain, added, int_scale]


def operands(dtype, k=7, m=30, n=20):
    W = RNG.standard_normal((m, n)).astype(dtype)
    X = RNG.standard_normal((k, m)).astype(dtype)
    D = RNG.standard_normal((k, n)).astype(dtype)
    return W, X, D, dtype(0.25)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.__name__)
def test_an_update_agrees_with_the_vm_and_numpy(form, dtype):
    tol = 1e-13 if dtype is np.float64 else 2e-5
    W, X, D, lr = operands(dtype)
    before = W.copy()
    strided_W = np.repeat(W, 2, axis=1)[:, ::2]  # not C-contiguous: copied by a loop
    transposed_X = np.ascontiguousarray(X.T).T  # a transposed operand is a BLAS flag
    for args in [(W, X, D, lr), (strided_W, X, D, lr), (W, transposed_X, D, lr)]:
        want = form(*args)
        got = myia.compile(form, backend="llvm")(*args)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, myia.compile(form, backend="vm")(*args), rtol=tol,
                                   atol=tol)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    assert not np.shares_memory(got, W)
    np.testing.assert_array_equal(W, before)  # W itself is not written


def test_the_update_is_one_gemm_call():
    W, X, D, lr = operands(np.float64)
    # a scaled update: its gemm, and the one of the branch for a scale of 0 (below)
    assert gemm_calls(sgd, W, X, D, lr) == 2
    # W - P: gemm's alpha is -1
    assert gemm_calls(plain, W, X, D, lr) == 1
    assert "double -1.000000e+00" in llvm_ir(plain, W, X, D, lr)


def onto_an_expression(W, X, D, lr):
    return np.tanh(W) * 2.0 - lr * (X.T @ D)


def used_twice(W, X, D, lr):
    P = X.T @ D
    return W - lr * P, P


def broadcast_row(w, X, D, lr):
    return w - lr * (X.T @ D)


def array_scale(W, X, D, s):
    return W - s * (X.T @ D)


def mixed_dtypes(W, X, D, lr):
    return W - lr * (X.T @ D)


def test_other_forms_keep_the_product_and_the_loop():
    W, X, D, lr = operands(np.float64)
    # the product is also returned: computed on its own, then the loop
    assert gemm_calls(used_twice, W, X, D, lr) == 1
    got, P = myia.compile(used_twice, backend="llvm")(W, X, D, lr)
    np.testing.assert_allclose(got, W - lr * (X.T @ D), rtol=1e-13)
    np.testing.assert_allclose(P, X.T @ D, rtol=1e-13)
    # W broadcast along the rows, a scale that is an array, W of another dtype, or
    # an expression computed in the update's own loop
    w = W[:1]
    s = RNG.uniform(0.5, 1.0, W.shape[1])
    W32 = W.astype(np.float32)
    for fn, args, want in [
            (onto_an_expression, (W, X, D, lr), np.tanh(W) * 2.0 - lr * (X.T @ D)),
            (broadcast_row, (w, X, D, lr), w - lr * (X.T @ D)),
            (array_scale, (W, X, D, s), W - s * (X.T @ D)),
            (mixed_dtypes, (W32, X, D, lr), W32 - lr * (X.T @ D))]:
        assert gemm_calls(fn, *args) == 1, fn.__name__
        got = myia.compile(fn, backend="llvm")(*args)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_a_zero_scale_keeps_the_nan_of_an_infinite_product():
    # gemm with alpha = 0 does not read A and B; W - 0 * inf is nan in NumPy
    W, X, D, _ = operands(np.float64)
    X[0, 0] = np.inf
    with np.errstate(invalid="ignore"):
        want = W - 0.0 * (X.T @ D)
    got = myia.compile(sgd, backend="llvm")(W, X, D, 0.0)
    assert np.isnan(want).any()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[~np.isnan(want)], want[~np.isnan(want)], rtol=1e-13)


def loss(W, X, Y):
    return np.sum((np.tanh(X @ W) - Y) ** 2)


def step(W, X, Y, lr):
    return W - lr * myia.grad(loss)(W, X, Y)


def test_a_gradient_step_agrees_with_autograd():
    agrad = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    W, X, _, lr = operands(np.float64, k=9, m=12, n=5)
    Y = RNG.standard_normal((9, 5))
    # the forward product, the update's and the one of its branch for a zero scale
    assert gemm_calls(step, W, X, Y, lr) == 3
    g = agrad.grad(lambda W: anp.sum((anp.tanh(X @ W) - Y) ** 2))(W)
    np.testing.assert_allclose(myia.compile(step, backend="llvm")(W, X, Y, lr), W - lr * g,
                               rtol=1e-12)
