"""Small scalar branches as selects (if-conversion).

The parser turns `if c: v = a else: v = b` into two branch graphs that each call the
join with their value: `switch(c, if_true, if_false)()`, `if_true() = join(a)`,
`if_false() = join(b)`.  When both branches only compute a few scalar sums and scaled
values (nothing that can fail, and nothing whose derivative could turn the zero
sensitivity of the branch not taken into a nan), computing both and selecting is
cheaper than a call through a switch, and it leaves one call of the join: `join(switch(c, a, b))` (what `jnp.where` is to a
JAX user).  A loop whose body holds such an `if` then calls its header once, so
`unroll` can unroll it, and its derivative is straight-line code.
"""

from ..ir import Apply, Constant, Graph, inline
from ..prim import ops as P
from .pass_manager import CALLS, rule

#: at most this many operations in each branch, besides the call of the join
BRANCH_SIZE = 12

#: float operations a branch may hold.  Computing the branch not taken must change
#: neither the value (these raise nothing) nor the derivative: the sensitivity of the
#: branch not taken is zero, and zero times an infinite or nan partial is nan (the
#: gradient of `jnp.where(x > 0, x, np.sqrt(x))` at x = -1).  So only operations whose
#: backpropagators never multiply by a value the branch computed: sums, negation,
#: selects, and products by a constant or an integer (see `_bounded_product`).
_LINEAR_FLOAT = {P.add, P.sub, P.neg, P.switch, P.maximum, P.minimum}
_PURE_ANY = {P.lt, P.le, P.gt, P.ge, P.eq, P.ne, P.not_, P.truth}


@rule(on=CALLS)
def branches_to_select(node, ctx):
    """switch(c, G1, G2)() -> join(switch(c, a, b)), where G1() = join(a) and
    G2() = join(b) (or -> switch(c, a, b) where G1() = a and G2() = b) compute scalars
    a and b with a few operations that cannot fail"""
    if not (isinstance(node, Apply) and len(node.inputs) == 1 and node.abstract is not None):
        return None
    sw = node.inputs[0]
    if not sw.is_apply(P.switch):
        return None
    _, cond, t, f = sw.inputs
    if not all(isinstance(b, Constant) and isinstance(b.value, Graph) for b in (t, f)):
        return None
    g1, g2 = t.value, f.value
    if _branch_value(g1, ctx) and _branch_value(g2, ctx):  # `a if c else b`
        a = inline(g1, node.graph, [], manager=ctx.mng)
        b = inline(g2, node.graph, [], manager=ctx.mng)
        new = node.graph.apply(P.switch, cond, a, b, loc=node.loc)
        new.abstract = node.abstract
        return new
    calls = [_join_call(g, ctx) for g in (g1, g2)]
    if None in calls or calls[0].inputs[0].value is not calls[1].inputs[0].value \
            or len(calls[0].inputs) != len(calls[1].inputs):
        return None
    out1 = inline(g1, node.graph, [], manager=ctx.mng)
    out2 = inline(g2, node.graph, [], manager=ctx.mng)
    args = []
    for a, b in zip(out1.inputs[1:], out2.inputs[1:]):
        if a is b:
            args.append(a)
        else:
            s = node.graph.apply(P.switch, cond, a, b, loc=node.loc)
            s.abstract = a.abstract
            args.append(s)
    new = node.graph.apply(out1.inputs[0], *args, loc=node.loc)
    new.abstract = node.abstract
    return new


def _branch_value(g, ctx):
    """True if `g` computes a scalar with a few operations that cannot fail."""
    out = g.output
    if isinstance(out, Apply) and isinstance(out.inputs[0], Constant) \
            and isinstance(out.inputs[0].value, Graph):
        return False  # a call: a join (see _join_call) or a function of the user's
    return _simple(g, ctx, None) and _is_scalar(out)


def _join_call(g, ctx):
    """The call `join(...)` that `g` returns, if g takes no parameters, nests no graph,
    and computes only a few operations that cannot fail; else None."""
    call = g.output
    if not (isinstance(call, Apply) and isinstance(call.inputs[0], Constant)
            and isinstance(call.inputs[0].value, Graph)):
        return None
    if not _simple(g, ctx, call) or not all(_is_scalar(a) for a in call.inputs[1:]):
        return None  # the join takes a tuple, an array or a function: not a select
    return call


def _is_scalar(node):
    ab = node.abstract
    return ab is not None and not hasattr(ab, "shape") and getattr(ab, "dtype", None) is not None


def _simple(g, ctx, call):
    """`g` takes no parameters, nests no graph, and (besides `call`) computes only a
    few scalar operations that cannot fail."""
    if g.parameters or not ctx.knows(g) or ctx.mng.children(g) or not ctx.unedited(g):
        return False
    nodes = [n for n in ctx.mng.nodes(g) if isinstance(n, Apply) and n is not call]
    if len(nodes) > BRANCH_SIZE:
        return False
    for n in nodes + ([call] if call is not None else []):
        for i in n.inputs[1:]:
            if isinstance(i, Constant) and isinstance(i.value, Graph):
                return False  # a function value: not a scalar computation
    for n in nodes:
        fn = n.inputs[0]
        if not isinstance(fn, Constant):
            return False
        ab = n.abstract
        if fn.value in _PURE_ANY and ab is not None:
            continue
        if _is_scalar(n) and ab.dtype in ("float64", "float32") and (
                fn.value in _LINEAR_FLOAT or fn.value is P.mul and _bounded_product(n)):
            continue
        return False
    return True


def _bounded_product(node):
    """x * c where c is a constant or an integer: its backpropagator multiplies the
    sensitivity by c, which is finite, never by a value the branch computed."""
    return any(isinstance(i, Constant) and isinstance(i.value, (int, float))
               and not isinstance(i.value, bool) and abs(i.value) != float("inf")
               or i.abstract is not None and getattr(i.abstract, "dtype", "") == "int64"
               for i in node.inputs[1:])
