"""`python -m benchmarks [--quick] [--only mlp,sin,...] [--threads N]`.

BLAS and the competitors' thread pools get N threads (default 1: on a small shared
machine, several OpenBLAS pools (NumPy's and SciPy's) and XLA's spinning side by side
make medians meaningless).  Set before NumPy is imported, hence here.

With one thread the process is also pinned to one core: XLA's CPU runtime (jax 0.10)
runs work on a second thread whatever its flags say (1.5-1.7 cores of CPU time per
second of wall time in a jitted training step on this 2-core machine), so without
the pin "one thread" held for every system but JAX."""

import os
import sys

threads = "1"
argv = list(sys.argv[1:])
if "--threads" in argv:
    i = argv.index("--threads")
    threads = argv[i + 1]
    del argv[i:i + 2]
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, threads)
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=" +
                      ("false" if threads == "1" else "true"))
os.environ["MYIA_BENCH_THREADS"] = threads
if threads == "1" and hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

from benchmarks.run import main  # noqa: E402

main(argv)
