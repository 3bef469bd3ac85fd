"""Unrolling loops whose trip count the constants at their call fix.

A `while` loop is a recursive header graph: `header(i, x) = switch(i < n, body,
after)()`, where `body` computes the next values and calls `header` again.  When the
arguments that the condition reads are constants at a call (`header(0, x)`, with n a
constant), the whole sequence of iterations is known at compile time: the loop is
simulated on those constants, and if it ends within UNROLL_TRIPS iterations (and the
copies stay under UNROLL_SIZE nodes) the call is inlined; constant folding picks the
branch, the next call's arguments fold to constants, and the rule fires again, until
the loop is straight-line code.  This is what JAX's trace does to a Python loop; here
a derivative of the unrolled code is a derivative of straight-line code, with no
backpropagator closure per iteration.  Loops with a run-time trip count are left as
they are.
"""

import numpy as np

from ..abstract import AArray, AScalar, ATuple
from ..ir import Apply, Constant, Graph, Parameter, inline
from ..prim import ops as P
from .pass_manager import CALLS, rule

UNROLL_TRIPS = 32
UNROLL_SIZE = 2000
#: a loop that carries an array of this many elements or more stays a loop
UNROLL_ARRAY_ELEMENTS = 16384

#: integer and boolean primitives the simulation evaluates (on Python values)
_STATIC = {P.add, P.sub, P.mul, P.floordiv, P.mod, P.neg, P.lt, P.le, P.gt, P.ge, P.eq,
           P.ne, P.not_, P.truth}


@rule(on=CALLS)
def unroll_counted_loop(node, ctx):
    """header(constants...) -> the body of header, for a loop whose trip count the
    constant arguments fix (at most UNROLL_TRIPS iterations)"""
    fn = node.inputs[0]
    if not (isinstance(fn, Constant) and isinstance(fn.value, Graph)):
        return None
    g = fn.value
    args = node.inputs[1:]
    if len(args) != len(g.parameters) or not ctx.knows(g) or not ctx.is_recursive(g):
        return None
    if g.flags.get("noinline") or not ctx.unedited(g) or node.graph is g:
        return None
    if any(_large_array(p.abstract) for p in g.parameters):
        return None
    trips = trip_count(g, args, ctx.mng)
    if trips is None:
        return None
    size = sum(len(ctx.mng.nodes(h)) for h in ctx.mng.scope(g))
    if (trips + 1) * size > UNROLL_SIZE:
        return None
    return inline(g, node.graph, args, manager=ctx.mng)


def _large_array(a):
    if isinstance(a, ATuple):
        return any(_large_array(e) for e in a.elements)
    return isinstance(a, AArray) and (None in a.shape or
                                      int(np.prod(a.shape)) >= UNROLL_ARRAY_ELEMENTS)


def trip_count(header, args, mng):
    """How many times the loop `header` runs from a call with `args`, if the constants
    among them decide it within UNROLL_TRIPS iterations; else None."""
    shape = _loop_shape(header, mng)
    if shape is None:
        return None
    cond, calls = shape
    params = header.parameters
    env = {p: a.value for p, a in zip(params, args)
           if isinstance(a, Constant) and _is_static_value(a.value)}
    for trips in range(UNROLL_TRIPS + 1):
        memo = {}  # one evaluation per node and iteration: the arguments share subtrees
        c = _evaluate(cond, env, memo)
        if not isinstance(c, (bool, np.bool_)):
            return None
        if not c:
            return trips
        # the next iteration's constants: the same from every call of the header
        nexts = []
        for call in calls:
            nxt = {}
            for p, a in zip(params, call.inputs[1:]):
                v = _evaluate(a, env, memo)
                if v is not _UNKNOWN:
                    nxt[p] = v
            nexts.append(nxt)
        if any(n != nexts[0] for n in nexts[1:]):
            return None
        env = nexts[0]
    return None


def _loop_shape(header, mng):
    """(condition, [the call of header in the loop's body]) of a while header, or None.
    (In a derivative's forward sweep the call is not the body's output: the body
    returns its backpropagator.)"""
    out = header.output
    if not (isinstance(out, Apply) and len(out.inputs) == 1 and isinstance(out.inputs[0], Apply)):
        return None
    sw = out.inputs[0]
    if not (sw.is_apply(P.switch) and all(isinstance(i, Constant) and isinstance(i.value, Graph)
                                         for i in sw.inputs[2:])):
        return None
    g = sw.inputs[2].value  # the body
    for _ in range(4):
        calls = [n for n in mng.nodes(g) if isinstance(n, Apply)
                 and isinstance(n.inputs[0], Constant) and n.inputs[0].value is header]
        if calls:
            break
        # the body may end in a call of a join (after an `if` turned select) that
        # only it calls: the header call is there
        out = g.output
        if not (isinstance(out, Apply) and isinstance(out.inputs[0], Constant)
                and isinstance(out.inputs[0].value, Graph)):
            return None
        nxt = out.inputs[0].value
        if nxt is header or mng.graph_users(nxt) != [g]:
            return None
        g = nxt
    # one call: where the body branches, each branch (or the join they share, inlined
    # into each) calls the header, and unrolling would copy the rest of the loop into
    # both (2^n copies)
    if len(calls) != 1:
        return None
    return sw.inputs[1], calls


_UNKNOWN = object()


def _is_static_value(v):
    return isinstance(v, (bool, int, np.integer, np.bool_))


def _evaluate(node, env, memo, depth=0):
    """The value of `node` from the constants `env` (parameter -> value), or _UNKNOWN.
    `memo` holds the nodes already evaluated in `env`: without it a float expression
    unrolled from an inner loop (each step reading the last twice) costs 2^depth."""
    if isinstance(node, Constant):
        return node.value if _is_static_value(node.value) else _UNKNOWN
    if isinstance(node, Parameter):
        return env.get(node, _UNKNOWN)
    if depth > 20 or not isinstance(node, Apply) or not isinstance(node.inputs[0], Constant) \
            or node.inputs[0].value not in _STATIC or not _may_be_static(node.abstract):
        return _UNKNOWN
    if node in memo:
        return memo[node]
    vals = [_evaluate(i, env, memo, depth + 1) for i in node.inputs[1:]]
    v = _UNKNOWN
    if not any(x is _UNKNOWN for x in vals):
        try:
            v = node.inputs[0].value.impl(*vals)
        except Exception:  # noqa: BLE001  (an overflow, a division by zero: left to run time)
            v = _UNKNOWN
        else:
            v = bool(v) if isinstance(v, np.bool_) else v
    memo[node] = v
    return v


def _may_be_static(a):
    """False for a node typed as anything but a bool or an int (a float, an array): never
    an input of a trip count."""
    return a is None or isinstance(a, AScalar) and np.dtype(a.dtype).kind in "biu"
