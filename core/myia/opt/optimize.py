"""The optimization pipeline: which rules run, in which order."""

import time
from collections import Counter

from ..ir import Apply, Constant, Graph, clone_many, manage
from . import rules as R
from .cse import cse
from .interproc import interprocedural
from .pass_manager import PassLog, count_ops, run_pass


def optimize(root, log=None, private=False, finish=True):
    """Optimize the program whose entry is `root`, in place; returns `root`.
    `private`: the caller made every graph `root` reaches its own (else they are
    copied first, see `_make_private`).  `finish`: run the finishing rules, which
    prepare the program for the backends (a program that J will transform again
    stops before them).

    1. simplify: structure (tuples, environments, switch on constants), the rules
       for derivative programs, algebra and constant folding, and inlining, to a
       fixed point;
    2. CSE and the interprocedural rewrites (narrowing outputs every caller projects,
       eta-reducing forwarding closures), then simplify again (each can expose more),
       until nothing changes;
    3. the finishing rules (record updates).
    """
    log = log if log is not None else PassLog()
    if not private:
        _make_private(root)
    mng = None  # each stage hands the next a manager of the program as it left it
    for round_ in range(10):
        # loops unroll from the second round on, once the first has turned the small
        # branches in their bodies into selects (see opt.unroll, opt.select)
        rules = R.ALL if round_ else R.BEFORE_UNROLL
        rewrites, mng = run_pass(root, rules, name=f"simplify #{round_ + 1}", log=log, like=mng)
        t0 = time.perf_counter()
        merged = cse(root, mng)
        if merged:
            mng = manage(root, like=mng)
            _record(log, f"cse #{round_ + 1}", Counter(cse=merged), t0, root, mng)
        t0 = time.perf_counter()
        counts = Counter()
        fired, mng = interprocedural(root, counts, mng)
        if fired:
            _record(log, f"interprocedural #{round_ + 1}", counts, t0, root, mng)
        if round_ and not rewrites and not merged and not fired:
            break
    if finish:
        run_pass(root, R.FINISH, name="finish", log=log, like=mng)
    return root


def _record(log, name, counts, t0, root, mng):
    """Log a step that is not a rule pass (CSE, the interprocedural rewrites) as one:
    it starts where the previous pass ended."""
    before = log.passes[-1][4] if log.passes else count_ops(root, mng)
    log.record(name, counts, time.perf_counter() - t0, before, count_ops(root, mng))
    log.keep(root, mng)


def _make_private(root):
    """Give `root` its own copies of every graph it reaches.

    The rewrites change graphs in place, and the graphs a program reaches are often
    shared: the J of a primitive, a bprop rule, a function of the user's called from
    several programs.  Only `root` itself belongs to the caller."""
    mng = manage(root)
    others = [g for g in mng.graphs if g is not root]
    if not others:
        return
    copies = clone_many(others, manager=mng)

    def remap(node):
        if isinstance(node, Constant) and isinstance(node.value, Graph) and node.value in copies:
            c = Constant(copies[node.value], node.loc)
            c.abstract = node.abstract
            return c
        return node

    for node in mng.nodes(root):
        if isinstance(node, Apply):
            node.inputs = [remap(i) for i in node.inputs]
    root.output = remap(root.output)
