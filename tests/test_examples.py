"""The examples run as a user runs them (examples/train_digits.py on a slice of the
digits, in CI too): the whole epoch in the subset learns, and it computes what the same
SGD loop written in NumPy computes, on llvm as on the VM."""

import io
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))

pytest.importorskip("sklearn", reason="the digits example needs scikit-learn (test extras)")

import train_digits as T  # noqa: E402


def numpy_epoch(W1, b1, W2, b2, X, Y, perm, lr, bs):
    """T.make_epoch(bs) written in NumPy, the gradient by hand."""
    total, n = 0.0, len(perm) - len(perm) % bs
    for i in range(0, n, bs):
        xb, yb = X[perm[i:i + bs]], Y[perm[i:i + bs]]
        H = np.tanh(xb @ W1 + b1)
        Z = H @ W2 + b2
        e = np.exp(Z - Z.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)
        total += -np.sum(yb * np.log(p)) / bs
        dZ = (p - yb) / bs
        dA = dZ @ W2.T * (1 - H * H)
        W1, b1, W2, b2 = (W1 - lr * (xb.T @ dA), b1 - lr * dA.sum(0), W2 - lr * (H.T @ dZ),
                          b2 - lr * dZ.sum(0))
    return W1, b1, W2, b2, total / (n // bs)


@pytest.mark.parametrize("backend", ["vm", "llvm"])
def test_one_epoch_equals_the_numpy_loop(backend):
    import myia

    (X, Y, _), _ = T.load(limit=200)
    rng = np.random.default_rng(1)
    params = [rng.standard_normal((64, 16)) * 0.1, np.zeros(16),
              rng.standard_normal((16, 10)) * 0.1, np.zeros(10)]
    perm = rng.permutation(len(X))
    got = myia.compile(T.make_epoch(16), backend=backend)(*params, X, Y, perm, 0.5)
    want = numpy_epoch(*params, X, Y, perm, 0.5, 16)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_training_learns_the_digits():
    out = io.StringIO()
    _, losses, accuracy = T.train(epochs=6, limit=400, out=out)
    assert losses[-1] < 0.5 * losses[0], losses
    assert accuracy > 0.7, accuracy  # ten classes: chance is 0.1
    text = out.getvalue()
    assert "epoch   6/6 [" in text and "test acc" in text


def test_the_script_runs_and_plots(tmp_path):
    png = tmp_path / "loss.png"
    r = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "train_digits.py"),
                        "--epochs", "3", "--limit", "300", "--plot", str(png)],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "test accuracy" in r.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
