"""A kernel soak (issues 20 and 32): 2,000 cells through the real kernel (on its
default backend, llvm), mixing definitions, redefinitions, values that depend on them,
errors, interrupts and drawings: most cells compile a new program.  The kernel's
resident memory is flat: from cell 500 to cell 2,000 it grows by less than 16 KB a
cell (a compiled program that nothing references is freed, and llvmlite's pipelines,
which keep ~56 KB for each module they optimize, run in a helper process that is
replaced: see backend/llvm/objects.py); and at the end every definition the user made
is there, with its latest body."""

import math
import os
import random
import time

import pytest

from .kernel_env import collect_iopub, execute, start_kernel

CELLS = 2000
#: memory is read from this cell on (the caches and pools of a session fill first)
SETTLED = 500
#: what a cell may add on average: its source, kept for tracebacks (~1 KB), and the
#: allocator's fragments
PER_CELL = 16 << 10
FUNCTIONS = 12
VALUES = 8


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def kernel_pid(km):
    process = getattr(getattr(km, "provisioner", None), "process", None) or km.kernel
    return process.pid


def result_of(outputs):
    for m in outputs:
        if m["msg_type"] == "execute_result":
            return m["content"]["data"]["text/plain"]
    return None


def interrupt_a_long_cell(km, kc):
    msg_id = kc.execute("spin(10 ** 11)")
    deadline = time.time() + 30
    while time.time() < deadline:
        msg = kc.get_iopub_msg(timeout=30)
        if msg["parent_header"].get("msg_id") == msg_id and \
                msg["msg_type"] == "execute_input":
            break
    time.sleep(0.2)
    km.interrupt_kernel()
    reply = kc.get_shell_msg(timeout=60)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kc.get_shell_msg(timeout=60)
    collect_iopub(kc, msg_id)
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "KeyboardInterrupt"


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads /proc (Linux)")
@pytest.mark.timeout(900)
def test_two_thousand_cells_keep_memory_flat_and_every_definition():
    rng = random.Random(20)
    # no disk cache: every new program is compiled (a rerun would load them)
    km, kc = start_kernel(MYIA_CACHE_DIR="off")
    try:
        pid = kernel_pid(km)
        consts = {}   # function index -> its constant (its latest body)
        values = {}   # value index -> (function index, argument), as last assigned
        execute(kc, "def spin(n):\n    s = 0.0\n    i = 0\n    while i < n:\n"
                    "        s = s + 1.0\n        i = i + 1\n    return s")
        rss_settled = None
        for cell in range(1, CELLS + 1):
            if cell % 100 == 50:
                interrupt_a_long_cell(km, kc)
                continue
            kind = rng.random()
            k = rng.randrange(FUNCTIONS)
            if kind < 0.3 or k not in consts:
                c = round(rng.uniform(0.5, 3.0), 3)
                reply, _ = execute(kc, f"def f{k}(x):\n    return x * {c} + np.sin(x)")
                assert reply["status"] == "ok", reply
                consts[k] = c
            elif kind < 0.45:
                v = rng.randrange(VALUES)
                x = round(rng.uniform(-2, 2), 3)
                reply, _ = execute(kc, f"v{v} = f{k}({x})")
                assert reply["status"] == "ok", reply
                values[v] = (k, x)
            elif kind < 0.7:
                x = round(rng.uniform(-2, 2), 3)
                reply, out = execute(kc, f"f{k}({x})")
                assert reply["status"] == "ok", reply
                assert math.isclose(float(result_of(out)), x * consts[k] + math.sin(x),
                                    rel_tol=1e-9, abs_tol=1e-12)
            elif kind < 0.85:
                code = rng.choice(["undefined_name + 1.0", "np.ones(3) + np.ones(4)",
                                   "def broken(x)\n    return x", "f0(", "import os",
                                   f"f{k}(1.0, 2.0)"])
                reply, out = execute(kc, code)
                assert reply["status"] == "error", code
                assert [m for m in out if m["msg_type"] == "error"], code
            elif kind < 0.95:
                reply, out = execute(kc, f"%grad f{k} 0 1.0 --view values")
                assert reply["status"] == "ok", reply
                assert any("image/svg+xml" in m["content"].get("data", {}) for m in out)
            else:
                reply, out = execute(kc, f"%ir f{k}")
                assert reply["status"] == "ok", reply
            if cell == SETTLED:
                rss_settled = rss_kb(pid)
        rss_end = rss_kb(pid)
        per_cell = (rss_end - rss_settled) * 1024 / (CELLS - SETTLED)
        assert per_cell < PER_CELL, (
            f"resident memory grew from {rss_settled / 1024:.0f} MB after {SETTLED} cells "
            f"to {rss_end / 1024:.0f} MB after {CELLS}: {per_cell / 1024:.1f} KB a cell")
        print(f"{rss_settled / 1024:.0f} MB after {SETTLED} cells, {rss_end / 1024:.0f} MB "
              f"after {CELLS}: {per_cell / 1024:.1f} KB a cell")
        # every definition is there, with its latest body; every value too
        for k, c in consts.items():
            reply, out = execute(kc, f"f{k}(0.5)")
            assert math.isclose(float(result_of(out)), 0.5 * c + math.sin(0.5)), k
        for v, (k, x) in values.items():
            reply, out = execute(kc, f"v{v}")
            assert reply["status"] == "ok", (v, reply)
            # a value is recomputed when the function it reads is redefined
            assert math.isclose(float(result_of(out)), x * consts[k] + math.sin(x)), v
        reply, out = execute(kc, "%who")
        listed = "".join(m["content"].get("text", "") for m in out)
        for k in consts:
            assert f"f{k}" in listed
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
