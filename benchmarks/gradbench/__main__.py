"""`python -m benchmarks.gradbench [--backend vm|llvm|cupy] [--multithreaded]`.

Speaks GradBench's protocol on stdin/stdout until stdin closes.  As GradBench's own
tools do, it runs single-threaded unless told otherwise: BLAS's thread count is fixed
before NumPy is imported, hence here, before any other import.
"""

import argparse
import os
import sys


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gradbench",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default=None,
                        help="Myia backend (vm, llvm, cupy); default: $MYIA_BACKEND, "
                             "else llvm")
    parser.add_argument("--multithreaded", action="store_true",
                        help="let BLAS use its own thread count")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if not args.multithreaded:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, "1")
    from benchmarks.gradbench.protocol import serve

    serve(sys.stdin, sys.stdout, backend=args.backend)


if __name__ == "__main__":
    main()
