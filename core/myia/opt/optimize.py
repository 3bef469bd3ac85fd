"""The optimization pipeline: which rules run, in which order."""

from . import rules as R
from .cse import cse
from .pass_manager import PassLog, count_ops, run_pass


def optimize(root, log=None):
    """Optimize the program whose entry is `root`, in place; returns `root`.

    1. simplify: structure (tuples, environments, switch on constants), the rules
       for derivative programs, algebra and constant folding, and inlining, to a
       fixed point;
    2. CSE, then simplify again (merging can expose more), until nothing changes.
    """
    log = log if log is not None else PassLog()
    for round_ in range(10):
        before = count_ops(root)
        run_pass(root, R.ALL, name=f"simplify #{round_ + 1}", log=log)
        merged = cse(root)
        if merged:
            log.counts["cse"] += merged
        if not merged and count_ops(root) == before and round_ > 0:
            break
    return root
