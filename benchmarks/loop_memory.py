"""What the gradient of a long loop keeps per iteration (issue 22, item 2).

The gradient of `x = sin(x)` repeated n = 10^6 times, Myia (llvm) against JAX (a
`fori_loop`, which reverse mode turns into a scan that saves one float per step).
Each system runs in a child process (`python -m benchmarks.loop_memory --child
SYSTEM N`): the growth of its peak resident memory during the call, divided by n, is
what the backward pass kept per iteration (both compile first, and run a short loop,
so that code and pools exist before the measurement; the time is a second call).  Also timed: the gradient call.
"""

import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
N = 1_000_000


def _peak():
    """The process's peak resident memory in bytes (VmHWM: getrusage's ru_maxrss
    would carry the parent's peak across exec)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status (Linux only)")


def _child(system, n):
    sys.path[:0] = [os.path.join(ROOT, "core"), ROOT]
    if system == "myia":
        import myia
        from benchmarks.programs import sin_loop

        g = myia.compile(myia.grad(sin_loop), backend="llvm")
        g(0.5, 1000)  # compiled for any n

        def call():
            return g(0.5, n)
    else:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        f = jax.jit(jax.grad(lambda x, n: jax.lax.fori_loop(0, n, lambda i, v: jnp.sin(v), x)),
                    static_argnums=1)
        jax.block_until_ready(f(0.5, 1000))  # the runtime's start-up
        compiled = f.lower(0.5, n).compile()  # n is static: compiled for this n

        def call():
            return float(jax.block_until_ready(compiled(0.5)))

    before = _peak()
    value = call()  # the first run of n steps: what it keeps is new memory
    kept = (_peak() - before) / n
    t0 = time.perf_counter()
    call()
    seconds = time.perf_counter() - t0
    return {"bytes_per_iteration": kept, "seconds": seconds, "value": float(value)}


def measure(system, n=N):
    out = subprocess.run([sys.executable, "-m", "benchmarks.loop_memory", "--child", system,
                          str(n)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else
                           f"exit status {out.returncode}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_loop_memory(t):
    from benchmarks.run import fmt, optional

    name = f"memory kept by the gradient of a {N:,}-step x = sin(x) loop (per iteration)"
    print(name)
    jax, why = optional("jax")
    ref = None
    if jax is None:
        t.add(name, "JAX jit (fori_loop: scan)", None, note=f"skipped: {why}")
    else:
        try:
            ref = measure("jax")
            t.add(name, "JAX jit (fori_loop: scan)", ref["seconds"], None,
                  f"{ref['bytes_per_iteration']:.1f} bytes per iteration")
        except Exception as e:  # noqa: BLE001
            t.add(name, "JAX jit (fori_loop: scan)", None, note=f"failed: {e}"[:160])
    try:
        mine = measure("myia")
    except Exception as e:  # noqa: BLE001
        t.add(name, "Myia (llvm)", None, note=f"failed: {e}"[:160])
        return
    ref = ref if ref and ref["bytes_per_iteration"] > 0 else None
    ratio = f" ({mine['bytes_per_iteration'] / ref['bytes_per_iteration']:.1f}x JAX's)" \
        if ref else ""
    t.add(name, "Myia (llvm)", mine["seconds"], ref and ref["seconds"],
          f"{mine['bytes_per_iteration']:.1f} bytes per iteration{ratio}")
    if ref:
        r = mine["bytes_per_iteration"] / ref["bytes_per_iteration"]
        t.target("loop gradient: at most 1.5x JAX's memory per iteration",
                 f"{mine['bytes_per_iteration']:.1f} vs {ref['bytes_per_iteration']:.1f} "
                 f"bytes ({r:.1f}x)", r <= 1.5)
    print(f"  (Myia's gradient call: {fmt(mine['seconds'])})")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(_child(sys.argv[2], int(sys.argv[3]))))
