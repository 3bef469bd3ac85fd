"""Training an MLP (784-256-10, and 64-64-10 as the digits example; tanh, softmax
cross-entropy, plain SGD), issue 22.

The same model, the same initial weights and the same batches for each system:

- Myia, one compiled step (`value_and_grad` and the update in the subset) called
  from Python per batch;
- Myia, a whole epoch in the subset (the batches are run-time slices of a
  permutation, the loop, the update and the running loss are compiled: one call);
- JAX, a jitted step (value_and_grad and the update), called per batch;
- PyTorch, autograd and an in-place update under no_grad (what a PyTorch user
  writes), per batch;
- NumPy, the hand-written gradient, per batch;
- and, as a floor, the step's two large products alone in OpenBLAS, XLA and MKL.

Systems are timed in interleaved chunks of a few steps each (A B C D E, A B C D E,
...), so that a change in the machine's load falls on all of them alike; the figure
of a system is its median chunk, and the ratios are taken chunk by chunk, paired,
with their spread.  The losses after the same number of steps are compared.
"""

import statistics
import time

import numpy as np

import myia

# ---- the model, in the subset -------------------------------------------------------------


def loss(W1, b1, W2, b2, X, Y):
    H = np.tanh(X @ W1 + b1)
    Z = H @ W2 + b2
    m = np.max(Z, axis=1, keepdims=True)
    logp = Z - m - np.log(np.sum(np.exp(Z - m), axis=1, keepdims=True))
    return -np.sum(Y * logp) / X.shape[0]


def step(W1, b1, W2, b2, X, Y, lr):
    value, (g1, gb1, g2, gb2) = myia.value_and_grad(loss, argnums=(0, 1, 2, 3))(
        W1, b1, W2, b2, X, Y)
    return W1 - lr * g1, b1 - lr * gb1, W2 - lr * g2, b2 - lr * gb2, value


def make_epoch(bs):
    """One pass over the examples `perm` picks, `bs` at a time (a constant of the
    closure: the slices perm[i:i + bs] have a static length): the mean loss."""

    def epoch(W1, b1, W2, b2, X, Y, perm, lr):
        total = 0.0
        for i in range(0, perm.shape[0] - perm.shape[0] % bs, bs):
            idx = perm[i:i + bs]
            W1, b1, W2, b2, value = step(W1, b1, W2, b2, X[idx], Y[idx], lr)
            total = total + value
        return W1, b1, W2, b2, total / (perm.shape[0] // bs)

    return epoch


# ---- the competitors ----------------------------------------------------------------------


def numpy_step(W1, b1, W2, b2, X, Y, lr):
    A = X @ W1 + b1
    H = np.tanh(A)
    Z = H @ W2 + b2
    m = Z.max(axis=1, keepdims=True)
    e = np.exp(Z - m)
    s = e.sum(axis=1, keepdims=True)
    n = X.shape[0]
    value = -np.sum(Y * (Z - m - np.log(s))) / n
    dZ = (e / s * Y.sum(axis=1, keepdims=True) - Y) / n
    dA = (dZ @ W2.T) * (1 - H * H)
    return (W1 - lr * (X.T @ dA), b1 - lr * dA.sum(axis=0), W2 - lr * (H.T @ dZ),
            b2 - lr * dZ.sum(axis=0), value)


def jax_step(dtype):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)

    def jloss(W1, b1, W2, b2, X, Y):
        H = jnp.tanh(X @ W1 + b1)
        Z = H @ W2 + b2
        return -jnp.sum(Y * jax.nn.log_softmax(Z, axis=1)) / X.shape[0]

    @jax.jit
    def jstep(W1, b1, W2, b2, X, Y, lr):
        value, grads = jax.value_and_grad(jloss, argnums=(0, 1, 2, 3))(W1, b1, W2, b2, X, Y)
        return (*(p - lr * g for p, g in zip((W1, b1, W2, b2), grads)), value)

    def run(params, batches, lr):
        params = [jnp.asarray(p) for p in params]
        lr = dtype(lr)
        for X, Y in batches:
            *params, value = jstep(*params, X, Y, lr)
        return [np.asarray(jax.block_until_ready(p)) for p in params]

    return run, lambda a: jnp.asarray(a)


def torch_step(dtype):
    import torch

    torch.set_num_threads(1)

    def run(params, batches, lr):
        ps = [torch.tensor(p, requires_grad=True) for p in params]
        W1, b1, W2, b2 = ps
        for X, Y in batches:
            H = torch.tanh(X @ W1 + b1)
            Z = H @ W2 + b2
            value = -(Y * torch.log_softmax(Z, dim=1)).sum() / X.shape[0]
            value.backward()
            with torch.no_grad():
                for p in ps:
                    p -= lr * p.grad
                    p.grad = None
        return [p.detach().numpy() for p in ps]

    return run, torch.from_numpy


# ---- the benchmark -------------------------------------------------------------------------


def data(dtype, n, features, rng):
    """Random inputs and labels: speed and agreement, not accuracy, are measured
    here (examples/train_digits.py learns real digits)."""
    X = rng.standard_normal((n, features)).astype(dtype)
    Y = np.eye(10, dtype=dtype)[rng.integers(0, 10, n)]
    return X, Y


def init(dtype, rng, features=784, hidden=256):
    return [(rng.standard_normal((features, hidden)) / np.sqrt(features)).astype(dtype),
            np.zeros(hidden, dtype),
            (rng.standard_normal((hidden, 10)) / np.sqrt(hidden)).astype(dtype),
            np.zeros(10, dtype)]


def systems(dtype, bs, X, Y, perm, lr, optional):
    """{name: run(params) -> the final parameters}: each runs len(perm) // bs steps
    on the batches X[perm[i:i + bs]] from the same parameters.  Myia's and NumPy's
    steps slice their batches in the Python loop, as their users write it; JAX's and
    PyTorch's batches are made (and converted) before the clock starts, which favours
    them."""
    out = {}
    starts = range(0, len(perm) - len(perm) % bs, bs)
    compiled = myia.compile(step, backend="llvm")
    lr = dtype(lr)

    def myia_steps(params):
        for i in starts:
            idx = perm[i:i + bs]
            *params, value = compiled(*params, X[idx], Y[idx], lr)
        return params

    out["Myia (llvm), one call per step"] = myia_steps
    whole = myia.compile(make_epoch(bs), backend="llvm")

    def myia_epoch(params):
        return whole(*params, X, Y, perm, lr)[:4]

    out["Myia (llvm), whole epoch in the subset"] = myia_epoch
    for name, make in (("JAX jit", jax_step), ("PyTorch", torch_step)):
        module, why = optional("jax" if name == "JAX jit" else "torch")
        if module is None:
            out[name] = why
            continue
        run, convert = make(dtype)
        batches = [(convert(X[perm[i:i + bs]]), convert(Y[perm[i:i + bs]])) for i in starts]
        out[name] = (lambda run, batches: lambda params: run(params, batches, lr))(run, batches)

    def numpy_steps(params):
        for i in starts:
            idx = perm[i:i + bs]
            *params, value = numpy_step(*params, X[idx], Y[idx], lr)
        return params

    out["NumPy, hand-written gradient"] = numpy_steps
    return out


def products_alone(dtype, bs, X, perm, hidden, optional):
    """{name: run(params) -> None}: only the step's two large products, X_b @ W1 and
    X_b.T @ dA (what the forward and the gradient of the first layer cannot do
    without), on the same batches, sliced before the clock starts, in each library's
    own GEMM.  Their time bounds from below what any step built on that GEMM can take."""
    rng = np.random.default_rng(1)
    starts = range(0, len(perm) - len(perm) % bs, bs)
    xs = [X[perm[i:i + bs]] for i in starts]
    W = rng.standard_normal((X.shape[1], hidden)).astype(dtype)
    D = rng.standard_normal((bs, hidden)).astype(dtype)

    def numpy_products(params):
        for x in xs:
            x @ W, x.T @ D

    out = {"OpenBLAS (NumPy)": numpy_products}
    jax, why = optional("jax")
    if jax is None:
        out["XLA (JAX jit)"] = why
    else:
        jax.config.update("jax_enable_x64", True)
        both = jax.jit(lambda x, W, D: (x @ W, x.T @ D))
        jxs, jW, jD = [jax.numpy.asarray(x) for x in xs], jax.numpy.asarray(W), jax.numpy.asarray(D)

        def jax_products(params):
            for x in jxs:
                r = both(x, jW, jD)
            jax.block_until_ready(r)

        out["XLA (JAX jit)"] = jax_products
    torch, why = optional("torch")
    if torch is None:
        out["MKL (PyTorch)"] = why
    else:
        txs, tW, tD = [torch.from_numpy(x) for x in xs], torch.from_numpy(W), torch.from_numpy(D)

        def torch_products(params):
            for x in txs:
                x @ tW, x.T @ tD

        out["MKL (PyTorch)"] = torch_products
    return {f"the two large products alone, {n}": r for n, r in out.items()}


def fmt_time(seconds):
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.0f} us"


def interleaved(runs, params, rounds):
    """Each run once per round, in turn: {name: [seconds per round]} and {name: the
    final parameters} (of the runs that return them)."""
    times = {n: [] for n in runs}
    losses = {}
    for _ in range(rounds):
        for name, run in runs.items():
            t0 = time.perf_counter()
            final = run(params)  # (the parameters: see bench_training)
            times[name].append(time.perf_counter() - t0)
            if final is not None:
                losses[name] = final
    return times, losses


def bench_training(t):
    from benchmarks import run as R

    optional = R.optional
    rng = np.random.default_rng(0)
    rounds = 5 if R.QUICK else 11
    epoch_ratios = []
    # (dtype, batch, features, hidden, steps per chunk, whether the chunk is an epoch
    # whose speed against one call per step is a target)
    configs = [(dtype, bs, 784, 256, 16 if bs == 64 else 8, False)
               for dtype in (np.float64, np.float32) for bs in (64, 256)]
    # the digits example's size, a whole epoch of 32,768 examples per chunk
    configs.append((np.float64, 32, 64, 64, 1024, True))
    mine_names = ("Myia (llvm), one call per step", "Myia (llvm), whole epoch in the subset")
    for dtype, bs, features, hidden, steps, epoch_target in configs:
        name = (f"MLP {features}-{hidden}-10 training, {np.dtype(dtype).name}, batch {bs} "
                f"({steps} SGD steps per chunk, {rounds} interleaved chunks)")
        print(name)
        X, Y = data(dtype, 4 * steps * bs if steps < 100 else steps * bs, features, rng)
        perm = rng.permutation(len(X))[: steps * bs].astype(np.int64)
        params = init(dtype, rng, features, hidden)
        runs = systems(dtype, bs, X, Y, perm, 0.1, optional)
        if features == 784:
            runs.update(products_alone(dtype, bs, X, perm, hidden, optional))
        ready = {}
        for n, run in runs.items():
            if isinstance(run, str):
                t.add(name, n, None, note=f"skipped: {run}")
                continue
            try:
                run(params)  # compile, warm up
                ready[n] = run
            except Exception as e:  # noqa: BLE001
                msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
                t.add(name, n, None, note=f"failed: {type(e).__name__}: {msg}"[:160])
        times, finals = interleaved(ready, params, rounds)
        # the loss of each system's final parameters on the first batch, in NumPy
        xb, yb = X[perm[:bs]], Y[perm[:bs]]
        losses = {n: float(numpy_step(*[np.asarray(p) for p in ps], xb, yb, dtype(0))[-1])
                  for n, ps in finals.items()}
        ref = mine_names[0]
        tol = 1e-9 if dtype is np.float64 else 1e-4
        medians = {n: statistics.median(ts) / steps for n, ts in times.items()}
        base = medians.get(ref)
        for n in times:
            if n not in losses:  # the products alone
                paired = sorted(a / b for a, b in zip(times[n], times[ref]))
                t.add(name, n + " (per step)", medians[n], base,
                      f"paired {paired[1]:.2f}-{paired[-2]:.2f}x")
                continue
            note = f"final loss {losses[n]:.7g}"
            if ref in losses and n != ref:
                diff = abs(losses[n] - losses[ref]) / abs(losses[ref])
                note += f" (rel. diff {diff:.0e}{', DIFFERS' if diff > tol else ''})"
                paired = sorted(a / b for a, b in zip(times[n], times[ref]))
                note += f"; paired {paired[1]:.2f}-{paired[-2]:.2f}x"
            t.add(name, n + " (per step)", medians[n], base, note)
        mine = min((medians[n] for n in mine_names if n in medians), default=None)
        alone = {n: m for n, m in medians.items() if n not in losses}
        for other in ("JAX jit", "PyTorch"):
            if other in medians and mine:
                speed = medians[other] / mine
                measured = f"{speed:.2f}x"
                if alone:
                    fastest = min(alone, key=alone.get)
                    measured += (f" (1.3x needs a step of {fmt_time(medians[other] / 1.3)}; "
                                 f"the two large products alone take "
                                 f"{fmt_time(alone[fastest])} in "
                                 f"{fastest.rsplit(', ', 1)[1]}, the fastest GEMM here)")
                t.target(f"training {features}-{hidden}-10, {np.dtype(dtype).name}, batch {bs}: "
                         f"at least 1.3x {other}'s steps per second (Myia's faster way)",
                         measured, speed >= 1.3)
        if epoch_target and all(n in times for n in mine_names):
            epoch_ratios = [a / b for a, b in zip(times[mine_names[0]], times[mine_names[1]])]
        print()
    if epoch_ratios:
        r = sorted(epoch_ratios)
        t.target("a whole epoch in the subset at least 1.2x faster than one call per step "
                 "(digits-sized MLP, 32,768 examples)",
                 f"{statistics.median(r):.2f}x (paired rounds {r[0]:.2f}-{r[-1]:.2f}x)",
                 statistics.median(r) >= 1.2)
