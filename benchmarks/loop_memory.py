"""What the gradient of a long loop keeps per step (issues 22 and 38).

Loops of the shapes real programs have, each differentiated with respect to its first
argument by Myia (llvm) and by JAX (a `fori_loop`, which reverse mode turns into a
scan that keeps what each step's backward pass reads): `x = sin(x)` alone; with a
loop-invariant parameter, as a `for` and as a `while`; two carried values; a state
that does not depend on x; an RNN step with a weight matrix.  Each system runs in a
child process (`python -m benchmarks.loop_memory --child SYSTEM LOOP`): the growth
of its peak resident memory during the call, divided by the trip count, is what the
backward pass kept per step (both compile first, and run a short loop, so that code
and pools exist before the measurement; the time is a second call).
"""

import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
N = 1_000_000
RNN_SIZE = 16


def sin_alone(x, n):
    for i in range(n):
        x = np.sin(x)
    return x


def with_invariant(x, a, n):
    for i in range(n):
        x = np.sin(x) * a
    return x


def while_with_invariant(x, a, n):
    i = 0
    while i < n:
        x = np.sin(x) * a
        i = i + 1
    return x


def two_carried(x, a, n):
    y = x
    for i in range(n):
        x, y = np.sin(y) * a, np.cos(x)
    return x + y


def state_without_x(x, n):
    s = 0.0
    i = 0
    while i < n:
        s = s + np.sin(i * 1.0)
        i = i + 1
    return s * x


def rnn_step(h, W, b, n):
    for i in range(n):
        h = np.tanh(W @ h + b)
    return np.sum(h)


def _rnn_args():
    rng = np.random.default_rng(0)
    return (np.full(RNN_SIZE, 0.1), rng.standard_normal((RNN_SIZE, RNN_SIZE)) * 0.3,
            np.zeros(RNN_SIZE))


#: name -> (Myia's program, its arguments before n, the trip count, what it is)
LOOPS = {
    "sin": (sin_alone, lambda: (0.5,), N, "for: x = sin(x)"),
    "invariant": (with_invariant, lambda: (0.5, 1.0), N, "for: x = sin(x) * a"),
    "while": (while_with_invariant, lambda: (0.5, 1.0), N, "while: x = sin(x) * a"),
    "two": (two_carried, lambda: (0.5, 1.0), N, "for: x, y = sin(y) * a, cos(x)"),
    "independent": (state_without_x, lambda: (0.5,), N,
                    "while: s = s + sin(i), return s * x"),
    "rnn": (rnn_step, _rnn_args, N // 10, f"for: h = tanh(W @ h + b), {RNN_SIZE} floats"),
}


def _jax_loop(name, n):
    import jax
    import jax.numpy as jnp

    def fori(body, init):
        return jax.lax.fori_loop(0, n, body, init)

    if name == "sin":
        return lambda x: fori(lambda i, v: jnp.sin(v), x)
    if name in ("invariant", "while"):
        return lambda x, a: fori(lambda i, v: jnp.sin(v) * a, x)
    if name == "two":
        def two(x, a):
            x, y = fori(lambda i, c: (jnp.sin(c[1]) * a, jnp.cos(c[0])), (x, x))
            return x + y
        return two
    if name == "independent":
        return lambda x: fori(lambda i, s: s + jnp.sin(i * 1.0), 0.0) * x
    if name == "rnn":
        return lambda h, W, b: jnp.sum(fori(lambda i, v: jnp.tanh(W @ v + b), h))
    raise KeyError(name)


def _peak():
    """The process's peak resident memory in bytes (VmHWM: getrusage's ru_maxrss
    would carry the parent's peak across exec)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status (Linux only)")


def _child(system, name):
    sys.path[:0] = [os.path.join(ROOT, "core"), ROOT]
    fn, make_args, n, _ = LOOPS[name]
    args = make_args()
    if system == "myia":
        import myia

        g = myia.compile(myia.grad(fn), backend="llvm")
        g(*args, 1000)  # compiled for any n

        def call():
            return g(*args, n)
    else:
        import jax

        jax.config.update("jax_enable_x64", True)
        f = jax.jit(jax.grad(_jax_loop(name, 1000)))
        jax.block_until_ready(f(*args))  # the runtime's start-up
        compiled = jax.jit(jax.grad(_jax_loop(name, n))).lower(*args).compile()

        def call():
            return jax.block_until_ready(compiled(*args))

    before = _peak()
    value = call()  # the first run of n steps: what it keeps is new memory
    kept = (_peak() - before) / n
    t0 = time.perf_counter()
    call()
    seconds = time.perf_counter() - t0
    return {"bytes_per_iteration": kept, "seconds": seconds,
            "value": float(np.sum(np.asarray(value)))}


def measure(system, name):
    out = subprocess.run([sys.executable, "-m", "benchmarks.loop_memory", "--child", system,
                          name], cwd=ROOT, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else
                           f"exit status {out.returncode}")
    return json.loads(out.stdout.strip().splitlines()[-1])


#: below this many bytes per step, what a process's peak measures is noise
FLOOR = 1.0


def bench_loop_memory(t):
    from benchmarks.run import fmt, optional

    jax, why = optional("jax")
    for key, (_, _, n, what) in LOOPS.items():
        name = f"memory kept by a loop's gradient, {n:,} steps, {what} (per step)"
        print(name)
        ref = None
        if jax is None:
            t.add(name, "JAX jit (fori_loop: scan)", None, note=f"skipped: {why}")
        else:
            try:
                ref = measure("jax", key)
                t.add(name, "JAX jit (fori_loop: scan)", ref["seconds"], None,
                      f"{ref['bytes_per_iteration']:.1f} bytes per step")
            except Exception as e:  # noqa: BLE001
                t.add(name, "JAX jit (fori_loop: scan)", None, note=f"failed: {e}"[:160])
        try:
            mine = measure("myia", key)
        except Exception as e:  # noqa: BLE001
            t.add(name, "Myia (llvm)", None, note=f"failed: {e}"[:160])
            continue
        kept, note = mine["bytes_per_iteration"], ""
        if ref:
            theirs = ref["bytes_per_iteration"]
            note = f" ({kept / theirs:.1f}x JAX's)" if theirs >= FLOOR else ""
            same = abs(mine["value"] - ref["value"]) <= 1e-9 * max(1.0, abs(ref["value"]))
            note += "" if same else f"; value {mine['value']!r}, JAX's {ref['value']!r}"
            t.target(f"loop gradient, {what}: at most 1.5x JAX's bytes per step",
                     f"{kept:.1f} vs {theirs:.1f} bytes",
                     kept <= 1.5 * max(theirs, FLOOR) and same)
        t.add(name, "Myia (llvm)", mine["seconds"], ref and ref["seconds"],
              f"{kept:.1f} bytes per step{note}")
        print(f"  (Myia's gradient call: {fmt(mine['seconds'])})")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(_child(sys.argv[2], sys.argv[3])))
