"""Myia's LLVM backend against NumPy, JAX, numba and autograd, side by side in one
process: medians and ratios, printed and written to benchmarks/results.md.

    python -m benchmarks            (or: make bench)
    python -m benchmarks --quick    fewer repetitions
    python -m benchmarks --only mlp,sin
    python -m benchmarks --threads 2   BLAS threads (default 1, see __main__.py)

Missing optional competitors (jax, numba, autograd, torch: the `bench` extras) are reported
as skipped.  Nothing here asserts a time: the targets of issues 6 and 17 are checked
and the verdicts written next to the figures (higher orders and Taylor mode:
benchmarks/higher_order.py, each first call in a fresh process).
"""

import argparse
import datetime
import gc
import importlib
import math
import os
import platform
import statistics
import sys
import time
import timeit
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for p in (os.path.join(ROOT, "core"), ROOT):
    if p not in sys.path:
        sys.path.insert(0, p)

import myia  # noqa: E402
from benchmarks import programs as B  # noqa: E402

QUICK = False


# ---- measuring -------------------------------------------------------------------------------


def median_time(f, *args, repeat=None, batch=0.05):
    """Median seconds per call of f(*args) (batches of at least `batch` seconds)."""
    repeat = repeat or (3 if QUICK else 7)
    names = [f"a{i}" for i in range(len(args))]
    env = {"f": f, **dict(zip(names, args))}
    timer = timeit.Timer(f"f({', '.join(names)})", globals=env)
    f(*args)  # warm up (compiles)
    number = 1
    while True:
        t = timer.timeit(number)
        if t >= batch or number >= 1 << 24:
            break
        number = max(number * 2, int(number * batch / max(t, 1e-9) * 1.2))
    gc.collect()
    times = [timer.timeit(number) / number for _ in range(repeat)]
    return statistics.median(times)


def optional(name):
    try:
        return importlib.import_module(name), None
    except Exception as e:  # noqa: BLE001
        return None, f"{name} not installed ({type(e).__name__})"


class Table:
    def __init__(self):
        self.rows = []  # (benchmark, system, seconds or None, ratio text, note)
        self.targets = []  # (target, measured, verdict)

    def add(self, bench, system, seconds, base=None, note=""):
        ratio = ""
        if seconds is not None and base is not None and base > 0:
            r = seconds / base
            ratio = f"{r:.2f}x" if r >= 0.05 else f"1/{1 / r:,.0f}"
        self.rows.append((bench, system, seconds, ratio, note))
        shown = "skipped" if seconds is None else fmt(seconds)
        print(f"  {system:<34} {shown:>12} {ratio:>9}  {note}", flush=True)

    def target(self, what, measured, ok):
        verdict = "met" if ok else ("NOT met" if ok is not None else "not measured")
        self.targets.append((what, measured, verdict))


def fmt(s):
    if s is None:
        return "skipped"
    if s < 1e-6:
        return f"{s * 1e9:.0f} ns"
    if s < 1e-3:
        return f"{s * 1e6:.2f} us"
    if s < 1:
        return f"{s * 1e3:.3f} ms"
    return f"{s:.2f} s"


def attempt(table, bench, system, fn, base=None, note=""):
    """Measure fn() -> seconds; a failure is a row that says why."""
    try:
        s = fn()
    except Exception as e:  # noqa: BLE001
        msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
        table.add(bench, system, None, note=f"failed: {type(e).__name__}: {msg}"[:160])
        if os.environ.get("MYIA_BENCH_DEBUG"):
            traceback.print_exc()
        return None
    table.add(bench, system, s, base, note)
    return s


# ---- benchmarks -------------------------------------------------------------------------------


def mlp_args():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((784, 256)) * 0.05, np.zeros(256),
            rng.standard_normal((256, 10)) * 0.05, np.zeros(10),
            rng.standard_normal((64, 784)), rng.standard_normal((64, 10)))


def bench_mlp(t):
    name = "MLP value_and_grad (64x784-256-10, tanh, squared loss)"
    print(name)
    args = mlp_args()
    from myia.backend.llvm import runtime
    parse_module = importlib.import_module("myia.parser.parse")

    e = runtime.engine()  # the process's JIT, made once (reported apart)
    import tempfile

    def compile_and_call():
        parse_module._cache.pop(B.mlp_loss, None)
        e._memory_cache.clear()
        t0 = time.perf_counter()
        f = myia.compile(myia.value_and_grad(B.mlp_loss, argnums=(0, 1, 2, 3)), backend="llvm")
        r = f(*args)
        return time.perf_counter() - t0, f, r

    saved = e.disk.path  # the on-disk code cache (myia.backend.llvm.objcache)
    with tempfile.TemporaryDirectory() as tmp:
        e.disk.path = tmp  # an empty code cache: everything is compiled
        # the compiler's own start-up (its modules, the engine's runtime helpers), as
        # the first use of any program pays it: a scalar gradient, sharing nothing
        # with the MLP but `mul`
        myia.compile(myia.grad(B.square), backend="llvm")(1.0)
        first, vg, out = compile_and_call()
        cached, _, _ = compile_and_call()  # the machine code is found in the cache
    again = []
    for _ in range(3):  # the MLP's primitives' derivative rules are parsed by now
        with tempfile.TemporaryDirectory() as tmp:
            e.disk.path = tmp
            again.append(compile_and_call()[0])
    e.disk.path = saved
    ref = B.numpy_mlp_value_and_grad(*args)
    err = max(abs(out[0] - ref[0]), *(float(np.abs(a - b).max()) for a, b in zip(out[1], ref[1])))
    base = attempt(t, name, "NumPy, hand-written gradient",
                   lambda: median_time(B.numpy_mlp_value_and_grad, *args))
    mine = attempt(t, name, "Myia (llvm)", lambda: median_time(vg, *args), base,
                   f"max abs diff vs NumPy {err:.1e}")
    t.add(name, "Myia: parse to first call, code cache empty", first, None,
          "first in the process; the compiler's start-up excluded")
    t.add(name, "Myia: parse to first call, code cache empty, again", sorted(again)[1], None,
          "median of 3; derivative rules already parsed")
    t.add(name, "Myia: parse to first call, code cache warm", cached, None,
          "machine code loaded from the on-disk cache")
    jax_s = None
    jax, why = optional("jax")
    if jax is None:
        t.add(name, "JAX jit", None, note=f"skipped: {why}")
    else:
        def run_jax():
            progs = B.jax_programs()
            f = progs["mlp_vg"]
            # JAX's own start-up excluded too, as Myia's (see above)
            jax.block_until_ready(jax.jit(lambda x: x * x)(1.0))
            t0 = time.perf_counter()
            jax.block_until_ready(f(*args))
            t.add(name, "JAX jit: compile + first call", time.perf_counter() - t0)
            return median_time(lambda *a: jax.block_until_ready(f(*a)), *args)
        jax_s = attempt(t, name, "JAX jit", run_jax, base)
    numba, why = optional("numba")
    if numba is None:
        t.add(name, "numba, hand-written gradient", None, note=f"skipped: {why}")
    else:
        attempt(t, name, "numba, hand-written gradient",
                lambda: median_time(B.make_numba_mlp(), *args), base)
    ag, why = optional("autograd")
    if ag is None:
        t.add(name, "autograd", None, note=f"skipped: {why}")
    else:
        attempt(t, name, "autograd", lambda: median_time(B.autograd_programs()["mlp_vg"], *args),
                base)
    if mine is not None and base:
        t.target("MLP: at most 1.0x NumPy's hand-written gradient (stretch 0.75x)",
                 f"{mine / base:.2f}x", mine <= base)
    if mine is not None and jax_s:
        t.target("MLP: faster than JAX jit", f"{mine / jax_s:.2f}x JAX", mine < jax_s)
    t.target("MLP: compile + first call under 100 ms (empty code cache)", fmt(first),
             first < 0.1)
    t.target("MLP: compile + first call under 100 ms (warm code cache)", fmt(cached),
             cached < 0.1)


def bench_sin(t):
    n = 10_000
    name = f"grad of a {n:,}-iteration x = sin(x) loop"
    print(name)
    g = myia.compile(myia.grad(B.sin_loop), backend="llvm")
    f = myia.compile(B.sin_loop, backend="llvm")
    numba, why = optional("numba")
    base = None
    if numba is None:
        t.add(name, "numba, hand-written derivative", None, note=f"skipped: {why}")
    else:
        nb = B.make_numba_sin_loop_grad()
        base = attempt(t, name, "numba, hand-written derivative", lambda: median_time(nb, 0.5, n))
    expected = math.prod(math.cos(x) for x in _sin_iterates(0.5, n))
    mine = attempt(t, name, "Myia (llvm) grad", lambda: median_time(g, 0.5, n), base,
                   f"value {g(0.5, n):.6g} (expected {expected:.6g})")
    fwd = attempt(t, name, "Myia (llvm) forward", lambda: median_time(f, 0.5, n), base)
    attempt(t, name, "plain Python forward", lambda: median_time(B.python_sin_loop, 0.5, n), base)
    jax, why = optional("jax")
    if jax is None:
        t.add(name, "JAX jit (fori_loop) grad", None, note=f"skipped: {why}")
    else:
        progs = B.jax_programs()
        attempt(t, name, "JAX jit (fori_loop) grad",
                lambda: median_time(lambda x: jax.block_until_ready(progs["sin_grad"](x, n)), 0.5),
                base)
    ag, why = optional("autograd")
    ag_s = None
    if ag is None:
        t.add(name, "autograd", None, note=f"skipped: {why}")
    else:
        agf = B.autograd_programs()["sin_grad"]
        ag_s = attempt(t, name, "autograd", lambda: median_time(agf, 0.5, n, repeat=3), base)
    if mine is not None and base:
        t.target("sin loop: grad at most 2x numba's hand-written derivative",
                 f"{mine / base:.2f}x", mine <= 2 * base)
    if mine is not None and ag_s:
        t.target("sin loop: at least 500x faster than autograd", f"{ag_s / mine:.0f}x faster",
                 ag_s >= 500 * mine)
    if mine is not None and fwd:
        t.target("sin loop: grad at most 3x the forward", f"{mine / fwd:.2f}x", mine <= 3 * fwd)


def _sin_iterates(x, n):
    for _ in range(n):
        yield x
        x = math.sin(x)


def bench_fan(t):
    n = 1000
    name = f"grad of a {n:,}-iteration x = (x + x) / 2 loop (fan-in/fan-out)"
    print(name)
    g = myia.compile(myia.grad(B.fan_loop), backend="llvm")
    f = myia.compile(B.fan_loop, backend="llvm")
    fwd = attempt(t, name, "Myia (llvm) forward", lambda: median_time(f, 0.5, n))
    mine = attempt(t, name, "Myia (llvm) grad", lambda: median_time(g, 0.5, n), fwd,
                   f"value {g(0.5, n)!r} (expected 1.0)")
    ag, why = optional("autograd")
    if ag is None:
        t.add(name, "autograd grad", None, note=f"skipped: {why}")
    else:
        agf = B.autograd_programs()["fan_grad"]
        attempt(t, name, "autograd grad", lambda: median_time(agf, 0.5, n, repeat=3), fwd)
    if mine is not None and fwd:
        t.target("fan loop: grad at most 5x the forward", f"{mine / fwd:.2f}x", mine <= 5 * fwd)


def bench_call(t):
    """One call from Python of a compiled scalar gradient: what entering and leaving
    compiled code costs (issue 22: at most 1.5x a numba function's call on the same
    work, here the derivative of x * x, written by hand for numba)."""
    name = "one call of a compiled grad(lambda x: x * x) from Python"
    print(name)
    nb, why = optional("numba")
    base = None
    if nb is None:
        t.add(name, "numba njit (2 * x by hand)", None, note=f"skipped: {why}")
    else:
        twice = nb.njit(B.twice)
        base = attempt(t, name, "numba njit (2 * x by hand)", lambda: median_time(twice, 3.0))
    c = myia.compile(myia.grad(B.square), backend="llvm")
    mine = attempt(t, name, "Myia (llvm): myia.compile(myia.grad(f))(x)",
                   lambda: median_time(c, 3.0), base)
    g = myia.grad(B.square)  # (also reads $MYIA_BACKEND on each call)
    attempt(t, name, "Myia (llvm): myia.grad(f)(x)", lambda: median_time(g, 3.0), base,
            note="reads $MYIA_BACKEND at each call")
    jax, why = optional("jax")
    if jax is None:
        t.add(name, "JAX jit", None, note=f"skipped: {why}")
    else:
        jf = B.jax_programs()["square_grad"]
        attempt(t, name, "JAX jit", lambda: median_time(lambda x: jax.block_until_ready(jf(x)), 3.0),
                base)
    ag, why = optional("autograd")
    if ag is None:
        t.add(name, "autograd", None, note=f"skipped: {why}")
    else:
        attempt(t, name, "autograd", lambda: median_time(B.autograd_programs()["square_grad"], 3.0),
                base)
    if mine is not None:
        t.target("one call of compiled grad(x*x): under 1 microsecond", fmt(mine), mine < 1e-6)
        if base is not None:
            t.target("one call of a compiled scalar gradient: at most 1.5x numba's call",
                     f"{mine / base:.2f}x", mine / base <= 1.5)


def bench_dynamic(t):
    """Recursion and while loops with data-dependent trip counts (JAX cannot compile
    these), their gradients and second derivatives: the LLVM backend against the
    reference VM."""
    cases = [  # (label, function, arguments, order of the derivative)
        ("fib(20), tree recursion", B.fib, (20,), 0),
        ("Collatz steps for 1..300, nested while", B.collatz_total, (300,), 0),
        ("power(1.0001, 1000), recursion", B.power, (1.0001, 1000), 0),
        ("grad of power(x, 1000)", B.power, (1.0001, 1000), 1),
        ("grad of grad of power(x, 1000)", B.power, (1.0001, 1000), 2),
        ("sqrt_steps(1e300), value-dependent recursion", B.sqrt_steps, (1e300,), 0),
        ("grad of sqrt_steps(1e300)", B.sqrt_steps, (1e300,), 1),
        ("grad of newton(2.0), while to convergence", B.newton, (2.0,), 1),
        ("grad of grad of newton(2.0)", B.newton, (2.0,), 2),
    ]
    for label, fn, args, order in cases:
        name = f"{label} (JAX: cannot compile)"
        print(name)
        target = fn
        for _ in range(order):
            target = myia.grad(target)
        vm = myia.compile(target, backend="vm")
        nat = myia.compile(target, backend="llvm")
        want = None
        try:
            want = vm(*args)
            base = attempt(t, name, "Myia VM", lambda: median_time(vm, *args, repeat=3))
        except Exception as e:  # noqa: BLE001
            base = None
            t.add(name, "Myia VM", None, note=f"failed: {type(e).__name__}")
        note = ""
        try:
            got = nat(*args)
            if want is not None:
                same = np.allclose(got, want, rtol=1e-9)
                note = "same result as the VM" if same else f"DIFFERS: {got!r} vs {want!r}"
        except Exception:  # noqa: BLE001
            pass
        attempt(t, name, "Myia (llvm)", lambda: median_time(nat, *args), base, note)


def bench_pipeline(t):
    name = "pipeline of a 20-line function (parse to optimized graph)"
    print(name)
    from myia.infer import signature_of, specialize
    from myia.opt import optimize
    parse_module = importlib.import_module("myia.parser.parse")
    from myia.parser.programs import to_graph

    args = (0.5, 0.25, 10)
    sig = list(signature_of(args))

    def stages():
        parse_module._cache.pop(B.twenty_lines, None)
        t0 = time.perf_counter()
        g = to_graph(B.twenty_lines)
        t1 = time.perf_counter()
        typed = specialize(g, sig)
        t2 = time.perf_counter()
        optimize(typed)
        t3 = time.perf_counter()
        return t1 - t0, t2 - t1, t3 - t2, typed

    stages()
    runs = [stages() for _ in range(3 if QUICK else 9)]
    parse_s = statistics.median(r[0] for r in runs)
    infer_s = statistics.median(r[1] for r in runs)
    opt_s = statistics.median(r[2] for r in runs)
    total = parse_s + infer_s + opt_s
    t.add(name, "parse", parse_s)
    t.add(name, "infer + specialize", infer_s)
    t.add(name, "optimize", opt_s)
    t.add(name, "total (parse to optimized graph)", total)
    from myia.backend.llvm.dispatch import compile_program

    typed = runs[-1][3]
    t0 = time.perf_counter()
    compile_program(typed)
    t.add(name, "LLVM: lower + O3 + machine code", time.perf_counter() - t0)
    t.target("pipeline, parse to optimized graph: under 50 ms (issue 4)", fmt(total), total < 0.05)


from benchmarks.higher_order import bench_higher_order, bench_jet  # noqa: E402
from benchmarks.drawing import bench_drawing  # noqa: E402
from benchmarks.numpy_functions import bench_numpy_functions  # noqa: E402
from benchmarks.training import bench_training  # noqa: E402
from benchmarks.loop_memory import bench_loop_memory  # noqa: E402
from benchmarks.checkpoint_memory import bench_checkpoint  # noqa: E402
from benchmarks.jacobians import bench_jacobians  # noqa: E402
from benchmarks.nested_ad import bench_nested  # noqa: E402
from benchmarks.vmap import bench_vmap  # noqa: E402

BENCHES = {"mlp": bench_mlp, "sin": bench_sin, "fan": bench_fan, "call": bench_call,
           "dynamic": bench_dynamic, "pipeline": bench_pipeline,
           "higher_order": bench_higher_order, "jet": bench_jet,
           "numpy": bench_numpy_functions, "drawing": bench_drawing,
           "training": bench_training, "loop_memory": bench_loop_memory,
           "checkpoint": bench_checkpoint, "jacobians": bench_jacobians,
           "nested": bench_nested, "vmap": bench_vmap}


# ---- the report --------------------------------------------------------------------------------


def machine():
    lines = []
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    lines.append(f"- CPU: {model}, {os.cpu_count()} logical cores ({platform.machine()})")
    try:
        from myia.backend.llvm import runtime

        e = runtime.engine()
        feats = [f for f in ("avx2", "fma", "avx512f") if f"+{f}" in e.features.split(",")]
        mvec = "yes" if runtime.MVEC else "no"
        lines.append(f"- LLVM target: {e.cpu} ({', '.join(feats)}); libmvec used: {mvec}")
    except Exception as ex:  # noqa: BLE001
        lines.append(f"- LLVM engine unavailable: {ex}")
    lines.append(f"- Python {platform.python_version()} ({platform.python_implementation()}), "
                 f"{platform.system()} {platform.release()}")
    versions = []
    for mod in ("numpy", "scipy", "llvmlite", "jax", "jaxlib", "numba", "autograd", "torch"):
        m, _ = optional(mod)
        v = getattr(m, "__version__", None) if m is not None else None
        if m is not None and v is None:
            try:
                from importlib.metadata import version

                v = version(mod)
            except Exception:  # noqa: BLE001
                v = "?"
        versions.append(f"{mod} {v}" if m is not None else f"{mod} (not installed)")
    lines.append("- " + ", ".join(versions))
    try:
        import numpy as _np

        cfg = _np.show_config(mode="dicts")
        blas = cfg.get("Build Dependencies", {}).get("blas", {}).get("name", "?")
        lines.append(f"- NumPy's BLAS: {blas}; Myia's BLAS: scipy.linalg.cython_blas")
    except Exception:  # noqa: BLE001
        pass
    lines.append(f"- BLAS threads: {os.environ.get('OPENBLAS_NUM_THREADS', 'default')} "
                 "(`python -m benchmarks --threads N`)")
    if hasattr(os, "sched_getaffinity"):
        cpus = sorted(os.sched_getaffinity(0))
        lines.append(f"- runs on CPUs {cpus} of {os.cpu_count()} (one thread: pinned to one "
                     "core, so that JAX's second thread is not a second core)")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    if load is not None:
        lines.append(f"- load average at the start: {load:.2f}")
    return lines


def write_report(t, path, started, elapsed, command="python -m benchmarks"):
    out = ["# Benchmarks: Myia's LLVM backend side by side", "",
           f"Run {started:%Y-%m-%d %H:%M} UTC by `{command}` ({elapsed:.0f} s). "
           "Medians of repeated batches, in one process; a ratio is the row's time over the "
           "first row of its benchmark with a time (the reference), so below 1.00x is "
           "faster than the reference (1/N: N times faster).", "", "## Machine", ""]
    out += machine()
    out += ["", "## Results", ""]
    current = None
    for bench, system, seconds, ratio, note in t.rows:
        if bench != current:
            out += ["", f"### {bench}", "", "| system | median | ratio | note |",
                    "|---|---:|---:|---|"]
            current = bench
        out.append(f"| {system} | {fmt(seconds)} | {ratio} | {note} |")
    out += ["", "## Targets", "", "| target | measured | verdict |",
            "|---|---|---|"]
    for what, measured, verdict in t.targets:
        out.append(f"| {what} | {measured} | {verdict} |")
    notes_path = os.path.join(HERE, "NOTES.md")
    if os.path.exists(notes_path):
        with open(notes_path) as fh:
            out += ["", fh.read().strip()]
    with open(path, "w") as fh:
        fh.write("\n".join(out) + "\n")


def main(argv=None):
    global QUICK
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--only", default="", help="comma-separated: " + ",".join(BENCHES))
    ap.add_argument("--out", default=os.path.join(HERE, "results.md"))
    a = ap.parse_args(argv)
    QUICK = a.quick
    started = datetime.datetime.utcnow()
    t0 = time.time()
    t = Table()
    names = [n for n in a.only.split(",") if n] or list(BENCHES)
    for n in names:
        try:
            BENCHES[n](t)
        except Exception as e:  # noqa: BLE001
            print(f"benchmark {n} failed: {type(e).__name__}: {e}")
            traceback.print_exc()
            t.add(n, "(benchmark)", None, note=f"failed: {type(e).__name__}: {e}"[:160])
        print()
    print("Targets:")
    for what, measured, verdict in t.targets:
        print(f"  [{verdict:>12}] {what}: {measured}")
    command = " ".join(["python -m benchmarks", *(argv if argv is not None else sys.argv[1:])])
    write_report(t, a.out, started, time.time() - t0, command)
    print(f"\nwritten to {a.out}")


if __name__ == "__main__":
    main()
