"""Dead outputs: what a graph returns that no caller reads, through any number of calls.

A backpropagator returns the sensitivities of everything its function closes over,
and a loop's backpropagator hands them on from iteration to iteration.  When the
caller wants only some of them (the gradient with respect to x of a loop that also
reads a parameter a), ∂a is still computed at every step, and what it needs (each
step's sin(x), and a) is kept for every step, for nothing:

    ◀body(dout) [free: cos_x, sin_x, a, ◀rest]:
        e = ◀rest(...)                         # the rest of the loop, first
        ∂x = e.x * a * cos_x
        ∂a = e.a + sin_x * e.x                 # read only to make the next ∂a
        return env{x: ∂x, a: ∂a}

A *path* names a float leaf of what a group of graphs returns (`callgraph`): tuple
entries and environment keys, e.g. entry 0's key a.  Optimistically, every path of
every group whose calls are all known is dead; a path is live if a caller reads it
into anything other than float arithmetic that ends in a dead path of the caller's
own result, until nothing changes (liveness, as for variables, over the call graph).
Each graph's result then holds a symbolic zero at its dead paths, and the local rules
remove what computed them (above: ∂a, and with it sin_x and a from the record).
"""

from ..ir import Apply, Constant
from ..abstract import AEnv, ATuple
from ..prim import ops as P
from .callgraph import CallGraph
from .match import calls
from .zeros import is_float_value, is_zero, zero_of

#: how deep a path goes into nested tuples and environments
MAX_PATH = 3
#: how many (node, path) steps the search from one read may take before it gives up
#: (and calls the path live, which is always sound)
MAX_STEPS = 4000

#: float operations that cannot fail: a value they read is dead if what they make is
_ARITHMETIC = {P.add, P.sub, P.mul, P.truediv, P.neg, P.sin, P.cos, P.tanh, P.exp}


def _paths(a, prefix=(), out=None):
    """The paths of the float leaves of abstract `a`: tuples of ("t", index) and
    ("e", key) steps."""
    out = set() if out is None else out
    if len(prefix) < MAX_PATH:
        if type(a) is ATuple:
            for i, e in enumerate(a.elements):
                _paths(e, prefix + (("t", i),), out)
            return out
        if type(a) is AEnv and a.entries:
            for k, e in a.entries.items():
                _paths(e, prefix + (("e", k),), out)
            return out
    if prefix and is_float_value(a):
        out.add(prefix)
    return out


def _const(node):
    return node.value if node.__class__ is Constant else _NOT_CONSTANT


_NOT_CONSTANT = object()


def _destinations(start, path, mng, returned_by, group_of):
    """Where the leaf at `path` of the value of `start` goes: a set of (group, path)
    of results it may end in, or None if something else reads it."""
    out = set()
    todo = [(start, path)]
    seen = set()
    while todo:
        state = todo.pop()
        if state in seen:
            continue
        seen.add(state)
        if len(seen) > MAX_STEPS:
            return None
        n, sp = state
        for g in returned_by.get(n, ()):
            gi = group_of.get(g)
            if gi is None or not sp:
                return None
            out.add((gi, sp))
        for u, i in mng.users(n):
            if u.__class__ is not Apply or u.inputs[0].__class__ is not Constant:
                return None  # a call, or a value a call receives
            prim = u.inputs[0].value
            if prim is P.tuple_getitem or prim is P.env_getitem:
                step = ("t" if prim is P.tuple_getitem else "e", _const(u.inputs[2]))
                if i != 1 or not sp or step[1] is _NOT_CONSTANT:
                    return None
                if sp[0] == step:
                    todo.append((u, sp[1:]))
            elif prim is P.tuple_setitem or prim is P.env_setitem:
                step = ("t" if prim is P.tuple_setitem else "e", _const(u.inputs[2]))
                if step[1] is _NOT_CONSTANT:
                    return None
                if i == 1:  # the tuple or environment updated: unless overwritten
                    if not sp or sp[0] != step:
                        todo.append((u, sp))
                elif i == 3:
                    todo.append((u, (step,) + sp))
                else:
                    return None
            elif prim is P.make_tuple:
                todo.append((u, (("t", i - 1),) + sp))
            elif prim is P.switch and i >= 2:
                todo.append((u, sp))
            elif prim in _ARITHMETIC and not sp and is_float_value(u.abstract):
                todo.append((u, ()))
            else:
                return None
    return out


def _slots(node, path, mng, out):
    """The (node, input index) edges that hold the leaf at `path` of the value that
    `node` builds (through make_tuple, tuple_setitem, env_setitem and switch nodes
    that nothing else uses)."""
    head, rest = path[0], path[1:]
    if calls(node, P.switch):
        for branch in node.inputs[2:]:
            if len(mng.users(branch)) == 1:
                _slots(branch, path, mng, out)
        return out
    if calls(node, P.make_tuple) and head[0] == "t" and head[1] + 1 < len(node.inputs):
        index = head[1] + 1
    elif (calls(node, P.tuple_setitem) and head[0] == "t"
          or calls(node, P.env_setitem) and head[0] == "e"):
        if _const(node.inputs[2]) != head[1]:
            base = node.inputs[1]
            if len(mng.users(base)) == 1:
                _slots(base, path, mng, out)
            return out
        index = 3
    else:
        return out  # a call's result: the callee's own slots, if it is in the group
    child = node.inputs[index]
    if not rest:
        out.append((node, index))
    elif len(mng.users(child)) == 1:
        _slots(child, rest, mng, out)
    return out


def drop_dead_outputs(root, cg=None):
    """Replace the dead paths of every group's results by symbolic zeros (see the
    module doc).  Returns the number of values replaced."""
    cg = cg or CallGraph(root)
    if not cg.ok:
        return 0
    mng = cg.mng
    groups = cg.call_groups().groups
    group_of = {}
    paths = []
    for gi, (members, sites) in enumerate(groups):
        for g in members:
            group_of[g] = gi
        common = _paths(sites[0].abstract)
        for s in sites[1:]:
            common &= _paths(s.abstract)
        paths.append(common)
    candidates = {(gi, p) for gi, ps in enumerate(paths) for p in ps}
    if not candidates:
        return 0
    returned_by = {}
    for g in mng.graphs:
        returned_by.setdefault(g.output, []).append(g)
    live = set()
    ends = {}  # (group, path) -> where its value may go
    for gi, (members, sites) in enumerate(groups):
        for p in paths[gi]:
            dest = set()
            for site in sites:
                d = _destinations(site, p, mng, returned_by, group_of)
                if d is None:
                    break
                dest |= d
            else:
                if dest <= candidates:
                    ends[(gi, p)] = dest
                    continue
            live.add((gi, p))
    changed = True
    while changed:
        changed = False
        for key, dest in ends.items():
            if key not in live and not dest.isdisjoint(live):
                live.add(key)
                changed = True
    count = 0
    for gi, p in candidates - live:
        for g in groups[gi][0]:
            out = g.output
            if mng.users(out) or any(group_of.get(h) != gi for h in returned_by[out]):
                continue  # read here too, or returned by another group's graph
            for node, index in _slots(out, p, mng, []):
                leaf = node.inputs[index]
                if is_zero(leaf) or not is_float_value(leaf.abstract):
                    continue
                node.inputs[index] = zero_of(leaf, node.graph)
                count += 1
    if count:
        mng.invalidate()
    return count
