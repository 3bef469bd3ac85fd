"""Train a small MLP on scikit-learn's handwritten digits, each epoch one compiled call.

    python examples/train_digits.py                   20 epochs, a plot in digits_loss.png
    python examples/train_digits.py --epochs 5 --limit 400 --plot none

The whole epoch is written in the subset (`make_epoch` below): the loop over batches, the
batches themselves (`X[perm[i:i + bs]]`: a run-time slice of the permutation, then a
gather of its rows), the gradient, the SGD update and the running loss.  Python only
draws a new permutation per epoch, prints the progress bar and plots the loss.

Needs scikit-learn for the data (`pip install -e '.[examples]'`) and matplotlib for
the plot.
"""

import argparse
import sys
import time

import numpy as np

import myia

# ---- the model, in the subset --------------------------------------------------------------


def predict(W1, b1, W2, b2, X):
    H = np.tanh(X @ W1 + b1)
    return H @ W2 + b2


def loss(W1, b1, W2, b2, X, Y):
    """Softmax cross-entropy; Y holds one-hot rows."""
    Z = predict(W1, b1, W2, b2, X)
    m = np.max(Z, axis=1, keepdims=True)
    logp = Z - m - np.log(np.sum(np.exp(Z - m), axis=1, keepdims=True))
    return -np.sum(Y * logp) / X.shape[0]


def make_epoch(bs):
    """The epoch for batches of `bs` examples.  `bs` is fixed when the epoch is
    compiled (it is a constant of the closure), so each batch perm[i:i + bs] has a
    length known at compile time, as JAX's dynamic_slice needs too."""

    def epoch(W1, b1, W2, b2, X, Y, perm, lr):
        """One pass of SGD over the examples in `perm`, `bs` at a time (the last
        partial batch is left out): the new weights and the mean loss of the batches."""
        total = 0.0
        n = perm.shape[0] - perm.shape[0] % bs
        for i in range(0, n, bs):
            idx = perm[i:i + bs]
            xb = X[idx]
            yb = Y[idx]
            value, (g1, gb1, g2, gb2) = myia.value_and_grad(loss, argnums=(0, 1, 2, 3))(
                W1, b1, W2, b2, xb, yb)
            W1 = W1 - lr * g1
            b1 = b1 - lr * gb1
            W2 = W2 - lr * g2
            b2 = b2 - lr * gb2
            total = total + value
        return W1, b1, W2, b2, total / (n // bs)

    return epoch


def accuracy(W1, b1, W2, b2, X, labels):
    return np.mean(np.argmax(predict(W1, b1, W2, b2, X), axis=1) == labels)


# ---- the data and the loop, in Python ------------------------------------------------------


def load(limit=None, seed=0):
    """The 8x8 digits (1,797 images), scaled, split 80/20; at most `limit` examples."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    X = digits.data / 16.0
    labels = digits.target
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(X))[:limit]
    X, labels = X[order], labels[order]
    split = int(0.8 * len(X))
    Y = np.eye(10)[labels]
    return (X[:split], Y[:split], labels[:split]), (X[split:], labels[split:])


def bar(done, total, width=30):
    full = round(width * done / total)
    return "[" + "#" * full + "." * (width - full) + "]"


def train(epochs=20, hidden=64, bs=32, lr=0.5, limit=None, backend="llvm", seed=0,
          out=sys.stdout):
    (X, Y, labels), (Xt, lt) = load(limit, seed)
    rng = np.random.default_rng(seed)
    params = [rng.standard_normal((X.shape[1], hidden)) / np.sqrt(X.shape[1]),
              np.zeros(hidden), rng.standard_normal((hidden, 10)) / np.sqrt(hidden),
              np.zeros(10)]
    run_epoch = myia.compile(make_epoch(bs), backend=backend)
    measure = myia.compile(accuracy, backend=backend)
    losses = []
    for k in range(1, epochs + 1):
        t0 = time.perf_counter()
        perm = rng.permutation(len(X))
        *params, mean_loss = run_epoch(*params, X, Y, perm, lr)
        ms = (time.perf_counter() - t0) * 1e3
        losses.append(float(mean_loss))
        print(f"\repoch {k:>3}/{epochs} {bar(k, epochs)} loss {mean_loss:.4f}  "
              f"train acc {measure(*params, X, labels):.3f}  "
              f"test acc {measure(*params, Xt, lt):.3f}  ({ms:.1f} ms)",
              end="" if k < epochs else "\n", file=out, flush=True)
    return params, losses, float(measure(*params, Xt, lt))


def plot(losses, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(range(1, len(losses) + 1), losses, marker="o")
    ax.set_xlabel("epoch")
    ax.set_ylabel("mean training loss")
    ax.set_title("MLP on scikit-learn's digits (each epoch one compiled call)")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--limit", type=int, default=None, help="use at most N examples")
    ap.add_argument("--backend", default="llvm", choices=["llvm", "vm", "cupy"])
    ap.add_argument("--plot", default="digits_loss.png", help="PNG path, or 'none'")
    a = ap.parse_args(argv)
    _, losses, acc = train(a.epochs, a.hidden, a.batch, a.lr, a.limit, a.backend)
    print(f"test accuracy {acc:.3f}")
    if a.plot != "none":
        plot(losses, a.plot)
        print(f"loss plot written to {a.plot}")


if __name__ == "__main__":
    main()
