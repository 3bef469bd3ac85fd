"""Rewrite rules and the pass manager that applies them to a fixed point.

A rule is a function `rule(node, ctx) -> Node | None`: given a node, it returns the
node to use in its place, or None to leave it.  Rules are data: lists composed with
`+`, each with a docstring whose first line is the rewrite (`x * 1 -> x`).  The
manager sweeps every reachable graph, inputs first, applies the rules, and repeats
until a sweep changes nothing.  It logs which rule fired how many times.
"""

import collections
import time

from ..ir import Apply, Constant, Graph, manage
from ..ir.clone import snapshot
from ..prim import Primitive


#: `rule(on=CALLS)`: the rule rewrites calls of anything but a primitive (a graph, a
#: closure, a switch's result), never a primitive's call
CALLS = "calls"


class Rule:
    __slots__ = ("name", "fn", "doc", "on")

    def __init__(self, fn, on=None):
        self.fn = fn
        self.name = fn.__name__
        self.doc = (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else ""
        self.on = on if on is None or on == CALLS or callable(on) else frozenset(on)

    def __call__(self, node, ctx):
        return self.fn(node, ctx)

    def applies_to(self, p):
        """Whether the rule may rewrite a call of the primitive `p` (None: a call of
        anything else)."""
        on = self.on
        if on is None:
            return True
        if on == CALLS:
            return p is None
        if p is None:
            return False
        return on(p) if callable(on) else p in on

    def __repr__(self):
        return f"<Rule {self.name}: {self.doc}>"


def rule(fn=None, *, on=None):
    """`@rule`, or `@rule(on=...)` for a rule that rewrites only some calls, which the
    pass manager then tries only there: `on` is a collection of primitives
    (`[P.gadd, ...]`), a test of the primitive (`lambda p: p.foldable`), or CALLS (calls
    of anything but a primitive).  A sweep tries several rules at each of tens of
    thousands of nodes: most rules say where they apply."""
    if fn is None:
        return lambda f: Rule(f, on)
    return Rule(fn, on)


class _Dispatch:
    """The rules of a list that may rewrite a node, by the primitive it calls (in the
    list's order), as (name, function) pairs."""

    def __init__(self, rules):
        self.rules = rules
        self.others = [(r.name, r.fn) for r in rules if r.applies_to(None)]
        self.by_prim = {}

    def __call__(self, node):
        fn = node.inputs[0]
        if fn.__class__ is not Constant or not isinstance(fn.value, Primitive):
            return self.others
        p = fn.value
        rs = self.by_prim.get(p)
        if rs is None:
            rs = self.by_prim[p] = [(r.name, r.fn) for r in self.rules if r.applies_to(p)]
        return rs


class PassLog:
    """Which rules fired, how often, per pass; and how long each pass took.

    Each pass starts where the previous one ended (its `before` is the previous
    `after`).  With `keep_programs`, a copy of the program is kept before the first
    pass and after each one (`programs`: [(copy of the entry graph, {copied node or
    graph: the one it copies})]), to draw what each pass removed and added."""

    def __init__(self, keep_programs=False):
        self.counts = collections.Counter()
        self.passes = []  # (pass name, Counter, seconds, ops before, ops after)
        self.programs = [] if keep_programs else None

    def record(self, name, counts, seconds, before, after):
        self.passes.append((name, counts, seconds, before, after))
        self.counts.update(counts)

    def keep(self, root, mng):
        """After a pass (or before the first): copy the program, if programs are kept."""
        if self.programs is not None:
            self.programs.append(snapshot(root, mng))

    def __str__(self):
        lines = []
        for name, counts, seconds, before, after in self.passes:
            lines.append(f"{name}: {before} -> {after} operations ({seconds * 1000:.1f} ms)")
            for rule_name, n in counts.most_common():
                lines.append(f"  {rule_name:<28} {n:>5}")
        return "\n".join(lines) if lines else "(no passes ran)"


class Context:
    """What rules may ask about: the manager of the program being rewritten."""

    def __init__(self, mng):
        self.mng = mng
        self._recursive = None
        self.edited = set()  # graphs whose nodes this sweep has changed

    def unedited(self, graph):
        """True if this sweep has not changed `graph` nor the graphs nested in it, so
        that the manager still describes them (inlining can copy them without a
        fresh whole-program analysis)."""
        edited = self.edited
        return not any(h in edited for h in self.mng.scope(graph))

    def knows(self, graph):
        """False for a graph made during this sweep (it is seen at the next one)."""
        return graph in self.mng

    def is_recursive(self, graph):
        """True if `graph` can call itself (directly or through other graphs)."""
        if self._recursive is None:
            self._recursive = recursive_graphs(self.mng)
        return graph in self._recursive

    def same_loop(self, g, h):
        """True if `g` and `h` are on one cycle of calls (each can call the other): the
        graphs of one loop (its header, its body, its branches)."""
        self.is_recursive(g)
        loop = self._recursive.get(g)
        return loop is not None and loop == self._recursive.get(h)


def recursive_graphs(mng):
    """Graphs on a cycle of the 'uses as a constant' relation (Tarjan's SCC), each with
    the number of its cycle: {graph: number}."""
    graphs = mng.graphs
    succ = {g: [h for h in mng.graphs_used(g)] for g in graphs}
    # a graph also "uses" what its nested graphs use
    for g in graphs:
        p = mng.parent(g)
        while p is not None:
            succ[p].extend(succ[g])
            p = mng.parent(p)
    index, low, on_stack, stack, result = {}, {}, set(), [], {}
    counter = [0]

    for root in graphs:
        if root in index:
            continue
        work = [(root, iter(succ.get(root, ())))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            g, it = work[-1]
            advanced = False
            for h in it:
                if h not in index:
                    index[h] = low[h] = counter[0]
                    counter[0] += 1
                    stack.append(h)
                    on_stack.add(h)
                    work.append((h, iter(succ.get(h, ()))))
                    advanced = True
                    break
                if h in on_stack:
                    low[g] = min(low[g], index[h])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[g])
            if low[g] == index[g]:
                comp = []
                while True:
                    h = stack.pop()
                    on_stack.discard(h)
                    comp.append(h)
                    if h is g:
                        break
                if len(comp) > 1 or g in succ.get(g, ()):
                    result.update((h, index[g]) for h in comp)
    return result


def count_ops(root, mng=None):
    mng = mng or manage(root)
    return sum(1 for g in mng.graphs for n in mng.nodes(g)
               if isinstance(n, Apply) and isinstance(n.inputs[0], Constant)
               and isinstance(n.inputs[0].value, Primitive))


def run_pass(root, rules, name="opt", log=None, max_sweeps=200, like=None):
    """Apply `rules` over the graphs reachable from `root` until nothing changes.
    Returns (how many rewrites were made, a manager of the program as it is now).
    `like`: a manager of a similar program, to seed the analysis (see `manage`)."""
    t0 = time.perf_counter()
    mng = manage(root, like=like)
    if log is not None and log.programs is not None and not log.programs:
        log.keep(root, mng)  # the program before the first pass
    before = count_ops(root, mng)
    counts = collections.Counter()
    dispatch = _Dispatch(rules)
    for _ in range(max_sweeps):
        changed, after = _sweep(root, dispatch, counts, mng)
        if not changed:
            break  # nothing was edited: `mng` still describes the program
        mng = after
    if log is not None:
        log.record(name, counts, time.perf_counter() - t0, before, count_ops(root, mng))
        log.keep(root, mng)
    return sum(counts.values()), mng


def _sweep(root, dispatch, counts, mng):
    """One pass of `rules` over every node, inputs first.  The nodes a rewrite makes in
    the same graph (an inlined body, the pieces of a split tuple) are rewritten right
    away, their inputs first, so that chains of rewrites finish in one sweep; graphs a
    rewrite makes wait for the next sweep, when the manager describes them."""
    ctx = Context(mng)
    repl = {}
    seen = set()

    def resolve(n):
        while n in repl:
            n = repl[n]
        return n

    changed = False

    def rewrite(node, g):
        """Apply the rules at `node`; return the node that replaced it, or None."""
        nonlocal changed
        inputs = [resolve(i) for i in node.inputs]
        if any(a is not b for a, b in zip(inputs, node.inputs)):
            node.inputs = inputs
            ctx.edited.add(g)
        for name, fn in dispatch(node):
            new = fn(node, ctx)
            if new is not None and new is not node:
                if new.__class__ is Apply:
                    # the same value: it keeps the user's name and line for it
                    if new.name is None:
                        new.name = node.name
                    if new.loc is None:
                        new.loc = node.loc
                counts[name] += 1
                changed = True
                ctx.edited.add(g)
                repl[node] = new
                return resolve(new)
        return None

    for g in reversed(mng.graphs):
        for start in mng.nodes(g):
            stack = [(start, False)]
            while stack:
                node, ready = stack.pop()
                if ready:
                    new = rewrite(node, g)
                    if new is not None:
                        stack.append((new, False))
                    continue
                if node in seen or node.__class__ is not Apply or node.graph is not g:
                    continue
                seen.add(node)
                stack.append((node, True))
                stack.extend((resolve(i), False) for i in reversed(node.inputs))
    if not changed:
        return False, mng
    edited = ctx.edited
    _resolve_everywhere(root, resolve, edited)
    # (rules return new nodes and never change one in place: the graphs this sweep
    # rewrote, and those whose uses it pointed at replacements, are all it changed)
    return True, manage(root, like=mng, edited=edited)


def _resolve_everywhere(root, resolve, edited):
    """Point every use reachable from `root` (graph outputs included) at the
    replacements, adding the graphs it changes to `edited`.  One walk: a
    replacement's own inputs are resolved when it is reached, so uses that the
    replacements bring in are fixed too."""
    seen = set()
    graphs = [root]
    seen_graphs = set()
    while graphs:
        g = graphs.pop()
        if g in seen_graphs:
            continue
        seen_graphs.add(g)
        out = resolve(g.output)
        if out is not g.output:
            g.output = out
            edited.add(g)
        stack = [g.output]
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            if n.__class__ is Apply:
                inputs = [resolve(i) for i in n.inputs]
                if any(a is not b for a, b in zip(inputs, n.inputs)):
                    n.inputs = inputs
                    edited.add(n.graph)
                stack.extend(inputs)
            elif n.__class__ is Constant and n.value.__class__ is Graph:
                graphs.append(n.value)

