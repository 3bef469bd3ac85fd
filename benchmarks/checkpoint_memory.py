"""What `myia.checkpoint` saves (issue 36, item 4): the gradient of a 10^6-step loop,
`x = sin(x)` run as M segments of K steps, with each segment checkpointed, against
the same gradient without checkpoint and against the loop's forward pass.

Each measurement runs in a child process (`python -m benchmarks.checkpoint_memory
--child WHICH`): it compiles, runs a short call (code and pools exist before the
measurement), then reads its peak resident memory (VmHWM) before and after one call
of 10^6 steps; the time is a second call.  The target reads the peaks whole (the
process included, as a user's `top` would); the growth during the call is what the
call itself kept.
"""

import json
import os
import subprocess
import sys
import time

from benchmarks.programs import sin_loop

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
M = K = 1000  # M segments of K steps


def loop(x, m, k):
    j = 0
    while j < m:
        x = sin_loop(x, k)  # (k steps of x = sin(x))
        j = j + 1
    return x


def checkpointed(x, m, k):
    j = 0
    while j < m:
        x = ck_segment(x, k)
        j = j + 1
    return x


def _peak():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status (Linux only)")


def _child(which):
    import myia

    global ck_segment
    ck_segment = myia.checkpoint(sin_loop)
    fn = {"forward": loop, "gradient": myia.grad(loop),
          "checkpointed gradient": myia.grad(checkpointed)}[which]
    f = myia.compile(fn, backend="llvm")
    f(0.5, 10, 10)
    before = _peak()
    value = f(0.5, M, K)
    after = _peak()
    t0 = time.perf_counter()
    f(0.5, M, K)
    seconds = time.perf_counter() - t0
    return {"peak": after, "growth": after - before, "seconds": seconds,
            "value": float(value)}


def measure(which):
    out = subprocess.run([sys.executable, "-m", "benchmarks.checkpoint_memory", "--child",
                          which], cwd=ROOT, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else
                           f"exit status {out.returncode}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_checkpoint(t):
    from benchmarks.run import fmt

    name = f"checkpoint: the gradient of a {M * K:,}-step x = sin(x) loop " \
           f"({M} segments of {K} steps)"
    print(name)
    got = {}
    for which in ("forward", "gradient", "checkpointed gradient"):
        try:
            got[which] = r = measure(which)
        except Exception as e:  # noqa: BLE001
            t.add(name, which, None, note=f"failed: {e}"[:160])
            continue
        base = got.get("forward")
        t.add(name, which, r["seconds"], base and base["seconds"],
              f"peak {r['peak'] / 2**20:.1f} MB, {r['growth'] / (M * K):.2f} bytes "
              f"per step kept")
    fwd, plain, ck = (got.get(k) for k in ("forward", "gradient", "checkpointed gradient"))
    if fwd and plain and ck:
        same = abs(ck["value"] - plain["value"]) <= 1e-12 * abs(plain["value"])
        t.target("checkpoint: the gradient's peak memory at most 2x the forward's",
                 f"{ck['peak'] / fwd['peak']:.2f}x ({ck['growth'] / 2**10:.0f} kB kept, "
                 f"without checkpoint {plain['growth'] / 2**20:.1f} MB)"
                 + ("" if same else "; DIFFERENT VALUE"), ck["peak"] <= 2 * fwd["peak"] and same)
        t.target("checkpoint: the gradient's time at most 2x that without checkpoint",
                 f"{ck['seconds'] / plain['seconds']:.2f}x ({fmt(ck['seconds'])} vs "
                 f"{fmt(plain['seconds'])})", ck["seconds"] <= 2 * plain["seconds"])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        sys.path[:0] = [os.path.join(ROOT, "core"), ROOT]
        print(json.dumps(_child(" ".join(sys.argv[2:]))))
