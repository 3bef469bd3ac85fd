"""jacrev of a 100 -> 100 function against JAX jit (issue 36's target), in this process:
the first call (compile and run) and the median of later calls, each system's
result checked against the other's.  f(x) = tanh(W x) + x sin(x), W fixed.
"""

import time

import numpy as np

N = 100
W = np.random.default_rng(0).standard_normal((N, N)) / np.sqrt(N)


def layer(x):
    return np.tanh(W @ x) + x * np.sin(x)


def bench_jacobians(t):
    import myia

    from benchmarks.run import attempt, median_time, optional

    name = f"jacrev of a {N} -> {N} function (tanh(W x) + x sin(x))"
    print(name)
    x = np.linspace(-1.0, 1.0, N)
    jax, why = optional("jax")
    ref = base = first_jax = None
    if jax is None:
        t.add(name, "JAX jit", None, note=f"skipped: {why}")
    else:
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        Wj = jnp.asarray(W)
        jf = jax.jit(jax.jacrev(lambda v: jnp.tanh(Wj @ v) + v * jnp.sin(v)))
        t0 = time.perf_counter()
        ref = np.asarray(jax.block_until_ready(jf(x)))
        first_jax = time.perf_counter() - t0
        base = attempt(t, name, "JAX jit: a call (median)",
                       lambda: median_time(lambda v: jax.block_until_ready(jf(v)), x))
        t.add(name, "JAX jit: first call (compiles)", first_jax)
    f = myia.compile(myia.jacrev(layer), backend="llvm")
    t0 = time.perf_counter()
    got = f(x)
    first = time.perf_counter() - t0
    same = ref is None or np.allclose(got, ref, rtol=1e-12, atol=1e-14)
    mine = attempt(t, name, "Myia (llvm): a call (median)", lambda: median_time(f, x), base,
                   note="same as JAX's" if ref is not None and same else
                   ("" if ref is None else "DIFFERENT from JAX's"))
    t.add(name, "Myia (llvm): first call (compiles)", first, first_jax)
    if base and mine:
        t.target("jacrev of a 100 -> 100 function: per call at most 1.0x JAX jit",
                 f"{mine / base:.2f}x", mine <= base and same)
