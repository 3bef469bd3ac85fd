"""Per-example gradients of an MLP against JAX jit (issue 36's target), in this
process: `vmap(grad(loss), in_axes=(None, None, None, None, 0, 0))` of a 784-256-10
network with a softmax cross-entropy loss, a batch of 64 (each example's gradient of
every weight: 64 x 203,530 numbers).  Beside it, the same gradients by a Python loop
of Myia's `grad` over the examples (what vmap replaces), and each system's result
checked against the other's.
"""

import time

import numpy as np

SIZES = (784, 256, 10)
BATCH = 64


def loss(w1, b1, w2, b2, x, y):
    """Softmax cross-entropy of one example (y one-hot)."""
    h = np.tanh(w1 @ x + b1)
    logits = w2 @ h + b2
    m = np.max(logits)
    return m + np.log(np.sum(np.exp(logits - m))) - np.dot(y, logits)


def _data():
    rng = np.random.default_rng(0)
    n_in, n_hidden, n_out = SIZES
    params = (rng.standard_normal((n_hidden, n_in)) / np.sqrt(n_in), np.zeros(n_hidden),
              rng.standard_normal((n_out, n_hidden)) / np.sqrt(n_hidden), np.zeros(n_out))
    xs = rng.standard_normal((BATCH, n_in))
    ys = np.eye(n_out)[rng.integers(0, n_out, BATCH)]
    return params, xs, ys


def bench_vmap(t):
    import myia

    from benchmarks.run import attempt, median_time, optional

    name = f"per-example gradients, MLP {'-'.join(map(str, SIZES))}, batch {BATCH}"
    print(name)
    params, xs, ys = _data()
    axes = (None, None, None, None, 0, 0)
    jax, why = optional("jax")
    ref = base = first_jax = None
    if jax is None:
        t.add(name, "JAX jit", None, note=f"skipped: {why}")
    else:
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)

        def jloss(w1, b1, w2, b2, x, y):
            h = jnp.tanh(w1 @ x + b1)
            logits = w2 @ h + b2
            m = jnp.max(logits)
            return m + jnp.log(jnp.sum(jnp.exp(logits - m))) - jnp.dot(y, logits)

        jf = jax.jit(jax.vmap(jax.grad(jloss, (0, 1, 2, 3)), in_axes=axes))
        t0 = time.perf_counter()
        ref = [np.asarray(g) for g in jax.block_until_ready(jf(*params, xs, ys))]
        first_jax = time.perf_counter() - t0
        base = attempt(t, name, "JAX jit vmap(grad): a call (median)",
                       lambda: median_time(lambda *a: jax.block_until_ready(jf(*a)),
                                           *params, xs, ys))
        t.add(name, "JAX jit: first call (compiles)", first_jax)
    f = myia.compile(myia.vmap(myia.grad(loss, (0, 1, 2, 3)), in_axes=axes), backend="llvm")
    t0 = time.perf_counter()
    got = f(*params, xs, ys)
    first = time.perf_counter() - t0
    same = ref is None or all(np.allclose(g, r, rtol=1e-10, atol=1e-12)
                              for g, r in zip(got, ref))
    mine = attempt(t, name, "Myia (llvm) vmap(grad): a call (median)",
                   lambda: median_time(f, *params, xs, ys), base,
                   note="same as JAX's" if ref is not None and same else
                   ("" if ref is None else "DIFFERENT from JAX's"))
    t.add(name, "Myia (llvm) vmap(grad): first call (compiles)", first, first_jax)
    g = myia.compile(myia.grad(loss, (0, 1, 2, 3)), backend="llvm")
    attempt(t, name, "Myia (llvm): a Python loop of grad over the examples",
            lambda: median_time(lambda *a: [g(*params, x, y) for x, y in zip(xs, ys)],
                                *params, repeat=3), base)
    if base and mine:
        t.target("per-example gradients of an MLP (vmap of grad): per call at most 1.0x "
                 "JAX jit", f"{mine / base:.2f}x", mine <= base and same)
