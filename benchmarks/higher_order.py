"""Higher-order derivatives and Taylor mode (issue 17), side by side with JAX jit.

The first call of grad^k(f) is timed in a fresh process (parse to result for Myia,
trace, compile and run for JAX; the imports are not counted), so that nothing a
previous measurement compiled is reused: each measurement is a child process
(`python -m benchmarks.higher_order --child SYSTEM PROGRAM K`) that prints one JSON
line.  Myia's children share an object cache that holds only the runtime module (as
an installed Myia's cache does after its first program), never the program measured.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

PROGRAMS = ("poly6", "sin_exp", "while6", "twenty_lines_of_x")
ORDERS = (1, 2, 3, 4, 5)
X = 0.7
CHILD_TIMEOUT = 150  # seconds: a first call slower than this is reported as "> 150 s"


# ---- the children ------------------------------------------------------------------------


def _child_myia(name, k):
    t = time.perf_counter()
    import myia
    imported = time.perf_counter() - t
    from benchmarks import programs as B

    fn = getattr(B, name)
    t0 = time.perf_counter()
    g = fn
    for _ in range(k):
        g = myia.grad(g)
    value = g(X)
    first = time.perf_counter() - t0
    # a second grad^k(f) built afresh, as a new cell builds it
    t1 = time.perf_counter()
    g2 = fn
    for _ in range(k):
        g2 = myia.grad(g2)
    g2(X)
    again = time.perf_counter() - t1
    typed = myia.ir(g, X, stage="typed").op_count()
    optimized = myia.ir(g, X, stage="optimized")
    text = str(optimized)
    return {"import": imported, "first": first, "again": again, "value": float(value),
            "typed": typed,
            "optimized": optimized.op_count(),
            "plumbing": sum(text.count(w) for w in ("env_", "zeros_like"))}


def _child_jax(name, k):
    t = time.perf_counter()
    import jax
    imported = time.perf_counter() - t

    from benchmarks import programs as B

    jax.config.update("jax_enable_x64", True)
    fn = B.jax_higher_order_programs()[name]
    t0 = time.perf_counter()
    g = fn
    for _ in range(k):
        g = jax.grad(g)
    value = jax.block_until_ready(jax.jit(g)(X))
    return {"import": imported, "first": time.perf_counter() - t0, "value": float(value)}


def _child_jet(name, order, warm=False):
    import timeit

    import numpy as np

    import myia
    from benchmarks import programs as B

    fn = getattr(B, name)
    if warm:  # a process that compiled another program before (the kernel's case)
        myia.jet(B.cubic_plus, order=order)(X)
    t0 = time.perf_counter()
    j = myia.jet(fn, order=order)
    got = j(X)
    first = time.perf_counter() - t0
    call = min(timeit.repeat(lambda: j(X), number=20000, repeat=5)) / 20000
    # nested grad, on the VM, as the reference
    want, g = [float(fn(X))], fn
    for _ in range(order):
        g = myia.grad(g)
        want.append(float(myia.compile(g, backend="vm")(X)))
    rel = float(np.max(np.abs(np.array(got) - want) / np.maximum(np.abs(want), 1e-300)))
    return {"first": first, "call": call, "rel": rel}


def child(argv):
    system, name, k = argv[0], argv[1], int(argv[2])
    sys.path[:0] = [os.path.join(ROOT, "core"), ROOT]
    run = {"myia": _child_myia, "jax": _child_jax, "jet": _child_jet,
           "jetwarm": lambda n, k: _child_jet(n, k, warm=True)}[system]
    print(json.dumps(run(name, k)))


# ---- the parent -----------------------------------------------------------------------------


def _run_child(system, name, k, env):
    cmd = [sys.executable, "-m", "benchmarks.higher_order", "--child", system, name, str(k)]
    try:
        out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=CHILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"timeout": True}
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1][:160]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _env(cache_dir):
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: imports from .pyc files
    env["MYIA_CACHE_DIR"] = cache_dir
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "core"), ROOT])
    return env


def bench_higher_order(t):
    """grad^k for k = 1..5 of four programs: first call against JAX jit's, the typed
    size per order, a second fresh grad^k, and what is left in the optimized programs."""
    from benchmarks.run import fmt, optional

    name = "first call of grad^k(f), fresh process (Myia llvm vs JAX jit)"
    print(name)
    jax, why = optional("jax")
    with tempfile.TemporaryDirectory(prefix="myia-bench-cache-") as cache:
        env = _env(cache)
        _run_child("myia", "cubic_plus", 1, env)  # the runtime module into the cache
        results = {}
        for prog in PROGRAMS:
            for k in ORDERS:
                mine = _run_child("myia", prog, k, env)
                theirs = _run_child("jax", prog, k, env) if jax is not None else None
                results[prog, k] = (mine, theirs)
                row = f"{prog} k={k}"
                m_s = mine.get("first")
                j_s = theirs.get("first") if theirs else None
                note = _note(mine)
                t.add(name, f"{row}: JAX jit", j_s, note="" if theirs else f"skipped: {why}")
                t.add(name, f"{row}: Myia", m_s, j_s, note)
                print(f"  {row}: myia {fmt(m_s) if m_s else _why(mine)}, "
                      f"jax {fmt(j_s) if j_s else (_why(theirs) if theirs else 'skipped')}")
    # not counted above, for either system: what the process paid before the first call
    mine = sorted(m["import"] for m, _ in results.values() if "import" in m)
    theirs = sorted(j["import"] for _, j in results.values() if j and "import" in j)
    for module, times in (("import myia", mine), ("import jax", theirs)):
        if times:
            t.add(name, f"{module} (not counted above)", times[len(times) // 2],
                  note=f"median of {len(times)} fresh processes; each imports its compiler "
                       f"and its default backend")
    for prog in PROGRAMS:
        ratios = []
        for k in ORDERS:
            mine, theirs = results[prog, k]
            if mine.get("first") and theirs and theirs.get("first"):
                ratios.append(mine["first"] / theirs["first"])
            else:
                ratios.append(None)
        shown = ", ".join(f"{r:.2f}x" if r is not None else "n/a" for r in ratios)
        t.target(f"{prog}: first call of grad^k, k=1..5, at most 1.0x JAX jit", shown,
                 all(r is not None and r <= 1.0 for r in ratios))
        typed = [results[prog, k][0].get("typed") for k in ORDERS]
        growth = [b / a for a, b in zip(typed, typed[1:]) if a and b]
        t.target(f"{prog}: typed grad^k grows at most 3x per order",
                 "typed ops " + ", ".join(str(n) for n in typed)
                 + (f" (max {max(growth):.1f}x)" if growth else ""),
                 len(growth) == len(ORDERS) - 1 and max(growth) <= 3.0)
        again = [(results[prog, k][0].get("again"), results[prog, k][0].get("first"))
                 for k in ORDERS]
        fractions = [a / f for a, f in again if a is not None and f]
        t.target(f"{prog}: a second, fresh grad^k costs at most 5% of the first",
                 (f"at most {max(fractions):.1%}" if fractions else "n/a"),
                 len(fractions) == len(ORDERS) and max(fractions) <= 0.05)
    for prog in ("poly6", "sin_exp"):
        left = [results[prog, k][0].get("plumbing") for k in ORDERS]
        t.target(f"{prog}: no env_* or zeros_like left in grad^k (straight-line code)",
                 "left: " + ", ".join(str(n) for n in left), all(n == 0 for n in left))
    _constant_third(t)


def _constant_third(t):
    import myia
    from benchmarks import programs as B

    g3 = myia.grad(myia.grad(myia.grad(B.cubic_plus)))
    n = myia.ir(g3, X, stage="optimized").op_count()
    t.target("grad^3 of x^3 + 2x optimizes to a constant", f"{n} operations, value {g3(X)}",
             n == 0 and g3(X) == 6.0)


def bench_jet(t):
    """jet to order 10: compile, call, agreement with nested grad."""
    from benchmarks.run import fmt

    name = "myia.jet(f, order=10) on llvm"
    print(name)
    with tempfile.TemporaryDirectory(prefix="myia-bench-cache-") as cache:
        env = _env(cache)
        _run_child("myia", "cubic_plus", 1, env)
        for prog in ("poly6", "sin_exp"):
            fresh = _run_child("jet", prog, 10, env)
            r = _run_child("jetwarm", prog, 10, env)
            if "first" not in r or "first" not in fresh:
                t.add(name, prog, None, note=_why(r if "first" not in r else fresh))
                continue
            t.add(name, f"{prog}: compile + first call, fresh process", fresh["first"])
            t.add(name, f"{prog}: compile + first call, after another program", r["first"])
            t.add(name, f"{prog}: a call", r["call"])
            print(f"  {prog}: fresh {fmt(fresh['first'])}, warm {fmt(r['first'])}, "
                  f"call {fmt(r['call'])}, rel. difference from nested grad {r['rel']:.1e}")
            t.target(f"jet order 10 of {prog}: compile under 100 ms (after another program; "
                     f"in a fresh process {fmt(fresh['first'])})", fmt(r["first"]),
                     r["first"] < 0.1)
            t.target(f"jet order 10 of {prog}: a call under 10 us", fmt(r["call"]),
                     r["call"] < 10e-6)
            t.target(f"jet order 10 of {prog}: equal to nested grad to 1e-9 relative",
                     f"{r['rel']:.1e}", r["rel"] <= 1e-9)


def _note(r):
    if "first" not in r:
        return _why(r)
    return f"typed {r['typed']}, optimized {r['optimized']} ops; again {r['again'] * 1e3:.1f} ms"


def _why(r):
    if r is None:
        return "skipped"
    if r.get("timeout"):
        return f"> {CHILD_TIMEOUT} s (stopped)"
    return f"failed: {r.get('error', '?')}"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
