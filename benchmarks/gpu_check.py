"""The GPU check, in one run (a GPU session has minutes): the `gpu`-marked tests,
then the MLP step on the CuPy backend against the same step written by hand in CuPy.

    python benchmarks/gpu_check.py            # tests, then batch 64 and 4096
    python benchmarks/gpu_check.py --no-tests

Prints medians (ms), the ratio myia / hand-written (target at batch 4096: <= 1.1),
and the kernels each launches per step: for myia, the fused kernels it launched
(counted by the backend) plus the device operations that launch one (matmuls...),
counted by wrapping the backend's primitive table; for the hand-written step, its
operations (written out below, one kernel each).  Without a GPU it says
"no GPU: skipped" and exits 0.
"""

import collections
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "core"), ROOT]

import numpy as np  # noqa: E402

SIZES = (784, 256, 10)
BATCHES = (64, 4096)
REPS = {64: 200, 4096: 50}
#: device operations that do not launch a kernel (views, metadata)
NO_KERNEL = {"transpose", "reshape", "broadcast_to", "shape", "ndim", "dtype", "len",
             "tuple_getitem", "make_tuple"}


def mlp_loss(W1, b1, W2, b2, X, Y):
    H = np.tanh(X @ W1 + b1)
    out = H @ W2 + b2
    return np.sum((out - Y) ** 2)


def hand_step(cp, W1, b1, W2, b2, X, Y):
    """value_and_grad of mlp_loss, by hand: 12 kernels and 5 matmuls."""
    H = cp.tanh(X @ W1 + b1)          # matmul, add, tanh
    diff = H @ W2 + b2 - Y            # matmul, add, sub
    loss = cp.sum(diff * diff)        # mul, sum
    dout = 2.0 * diff                 # mul
    gW2 = H.T @ dout                  # matmul
    gb2 = dout.sum(axis=0)            # sum
    dZ = (dout @ W2.T) * (1.0 - H * H)  # matmul, mul, sub, mul
    gW1 = X.T @ dZ                    # matmul
    gb1 = dZ.sum(axis=0)              # sum
    return float(loss), (gW1, gb1, gW2, gb2)


HAND_KERNELS = 12
HAND_MATMULS = 5


def run_gpu_tests():
    print("== pytest -m gpu", flush=True)
    r = subprocess.run([sys.executable, "-m", "pytest", "-m", "gpu", "-q", "-p", "no:cacheprovider",
                        "tests/backend"], cwd=ROOT, capture_output=True, text=True, timeout=420)
    lines = (r.stdout + r.stderr).strip().splitlines()
    print("\n".join(lines[-25:]))
    return r.returncode


def median_ms(fn, reps, sync):
    for _ in range(3):
        fn()
    sync()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def count_device_ops(backend):
    """Wrap the backend's device table so that each primitive call is counted."""
    counts = collections.Counter()
    for prim, impl in list(backend.table.device.items()):
        def counted(*args, _impl=impl, _name=prim.name):
            counts[_name] += 1
            return _impl(*args)

        backend.table.device[prim] = counted
    return counts


def benchmark(cp, emulated=False):
    import myia
    from myia.backend.cupy import CupyBackend
    from myia.pipeline import optimized_program

    vg = myia.value_and_grad(mlp_loss, argnums=(0, 1, 2, 3))
    backend = CupyBackend(optimized_program, xp=cp if emulated else None)
    ops = count_device_ops(backend)
    sync = (lambda: None) if emulated else cp.cuda.Device().synchronize
    rng = np.random.default_rng(0)
    n_in, n_hid, n_out = SIZES
    print(f"== MLP value_and_grad {n_in}-{n_hid}-{n_out}, tanh, squared loss, float64")
    ok = True
    for batch in BATCHES:
        host = [rng.standard_normal(s) * 0.05 for s in
                [(n_in, n_hid), (n_hid,), (n_hid, n_out), (n_out,), (batch, n_in),
                 (batch, n_out)]]
        args = tuple(cp.asarray(a) for a in host)
        t0 = time.perf_counter()
        ours = backend.run(vg, args)
        sync()
        compile_s = time.perf_counter() - t0
        theirs = hand_step(cp, *args)
        err = max([float(abs(ours[0] - theirs[0]) / abs(theirs[0]))] + [
            float(cp.max(cp.abs(a - b)) / (cp.max(cp.abs(b)) + 1e-300))
            for a, b in zip(ours[1], theirs[1])])
        # kernels per step
        before = backend.stats["launches"]
        ops.clear()
        backend.run(vg, args)
        fused = backend.stats["launches"] - before
        step_ops = dict(ops)
        matmuls = step_ops.get("dot", 0)
        other = sum(n for name, n in step_ops.items() if name not in NO_KERNEL and name != "dot")
        t_ours = median_ms(lambda: backend.run(vg, args), REPS[batch], sync)
        t_hand = median_ms(lambda: hand_step(cp, *args), REPS[batch], sync)
        ratio = t_ours / t_hand
        print(f"batch {batch:5d}: myia {t_ours:8.3f} ms   hand-written CuPy {t_hand:8.3f} ms   "
              f"ratio {ratio:5.2f}   (first call, with compiling: {compile_s:.2f} s; "
              f"max relative difference {err:.1e})")
        print(f"             kernels per step: myia {fused} fused + {other} other "
              f"+ {matmuls} matmuls; hand-written {HAND_KERNELS} + {HAND_MATMULS} matmuls "
              f"(device ops: {step_ops})")
        if err > 1e-8:
            ok = False
            print("             RESULTS DIFFER")
        if batch == max(BATCHES):
            print(f"             target ratio <= 1.1 at batch {batch}: "
                  f"{'met' if ratio <= 1.1 else 'NOT met'}; fused elementwise kernels "
                  f"<= hand-written: {'met' if fused + other <= HAND_KERNELS else 'NOT met'}")
    print(f"host fallbacks: {backend.stats['host_fallback']}")
    return ok


def main():
    if "--emulate" in sys.argv:  # the script's own check, on the CPU emulator
        from myia.backend.cupy.emulator import Emulator

        REPS.update({64: 3, 4096: 2})
        print("EMULATED on the CPU: the timings mean nothing")
        return 0 if benchmark(Emulator(), emulated=True) else 1
    try:
        import cupy as cp
    except ImportError:
        print("no GPU: skipped (CuPy is not installed: pip install myia[gpu])")
        return 0
    from myia.backend.cupy import device_problem

    problem = device_problem(cp)
    if problem is not None:
        print(f"no GPU: skipped ({problem})")
        return 0
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    print(f"GPU: {props['name'].decode()}, CuPy {cp.__version__}, "
          f"CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}")
    status = 0
    if "--no-tests" not in sys.argv:
        status = run_gpu_tests()
    if not benchmark(cp):
        status = status or 1
    return status


if __name__ == "__main__":
    sys.exit(main())
