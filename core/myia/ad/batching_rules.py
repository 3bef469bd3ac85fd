"""What a batching rule works with (myia.ad.batching, vmap): specs, BValues and the
Builder.

A value of a batched program is either *unbatched* (the same for every example) or
*batched* (the examples' values stacked on a new leading axis of size B).  A spec says
which: True or False for a number or an array, a tuple of specs for a tuple, `FN` for a
function value, `ENV` for an environment of sensitivities (whose entries are all
batched).  A primitive's rule (`@batch(p)`, next to the primitive) receives its inputs
as BValues and builds its batched output with a Builder; an elementwise primitive's rule
comes from its trait (`elementwise_rule`).
"""

from ..abstract import AArray, AConstant, AEnv, AFunction, AScalar, ATuple, abstract_of
from ..errors import MyiaBatchingError
from ..ir import Constant
from ..prim import ops as P

FN = "fn"
ENV = "env"


def abstract_of_node(node):
    a = getattr(node, "abstract", None)
    if a is None and node.__class__ is Constant:
        a = abstract_of(node.value)
    return a


def full_spec(a, flag=True):
    """The spec of a value of abstract `a` whose every leaf is batched (flag True) or
    unbatched (False)."""
    if a.__class__ is ATuple:
        return tuple(full_spec(e, flag) for e in a.elements)
    if a.__class__ is AFunction:
        return FN
    if a.__class__ is AEnv:
        return ENV
    if a.__class__ is AConstant:  # (None, a string, a slice: the same for every example)
        return False
    return flag


def is_batched(spec):
    if spec is True or spec is ENV:
        return True
    if spec.__class__ is tuple:
        return any(map(is_batched, spec))
    return False


def join_specs(a, b):
    if a.__class__ is tuple and b.__class__ is tuple:
        return tuple(join_specs(x, y) for x, y in zip(a, b))
    if a in (FN, ENV) or b in (FN, ENV):
        return a if a in (FN, ENV) else b
    return bool(a) or bool(b)


class BValue:
    """A value of the batched program: its node, whether it is batched, and the
    abstract of one example's value (what the typed program said)."""

    __slots__ = ("node", "batched", "abstract")

    def __init__(self, node, batched, abstract):
        self.node = node
        self.batched = batched
        self.abstract = abstract

    @property
    def shape(self):
        a = self.abstract
        return a.shape if a.__class__ is AArray else ()

    @property
    def rank(self):
        return len(self.shape)

    @property
    def dtype(self):
        return self.abstract.dtype

    @property
    def value(self):
        """Its value, when it is a constant (axes, shapes, keys); else NotImplemented."""
        n = self.node
        if n.__class__ is Constant:
            return n.value
        a = self.abstract
        if a.__class__ is AScalar and a.known:
            return a.value
        return NotImplemented


class Builder:
    """What a batching rule builds with: `apply` in the graph being made, `B` the
    batch size, `out` the abstract of one example's result, `loc` the node's line."""

    def __init__(self, graph, B, out, loc):
        self.graph = graph
        self.B = B
        self.out = out
        self.loc = loc

    @property
    def out_shape(self):
        return self.out.shape if self.out.__class__ is AArray else ()

    def apply(self, fn, *args):
        args = [a.node if a.__class__ is BValue else a for a in args]
        return self.graph.apply(fn, *args, loc=self.loc)

    def batched(self, v):
        """The node of `v` with the batch axis in front (an unbatched value is
        broadcast to it)."""
        if v.batched:
            return v.node
        return self.apply(P.broadcast_to, v, (self.B,) + v.shape)

    def aligned(self, v, rank):
        """`v` batched, reshaped to (B, 1, ..., 1, *shape) of rank 1 + `rank`: NumPy's
        broadcasting then lines its axes up with those of rank-`rank` values."""
        node = self.batched(v)
        if v.rank == rank:
            return node
        return self.apply(P.reshape, node, (self.B,) + (1,) * (rank - v.rank) + v.shape)

    def axes(self, axis, rank):
        """Axes of one example (an int, a tuple, or None for all of them) as axes of
        the batched array, whose batch axis is in front."""
        if axis is None:
            return tuple(range(1, rank + 1))
        if isinstance(axis, tuple):
            return tuple(int(a) % rank + 1 for a in axis)
        return int(axis) % rank + 1

    def constant(self, v, what):
        """The constant value of the input `v` (an axis, a shape), or a clear error."""
        value = v.value
        if value is NotImplemented:
            raise self.error(f"vmap needs {what} known when compiling")
        return value

    def sum_to(self, node, shape, to_shape):
        """The batched `node` (one example: `shape`) summed down to `to_shape` per
        example, as NumPy broadcasting would have spread it."""
        lead = len(shape) - len(to_shape)
        axes = tuple(range(1, lead + 1)) + tuple(
            i + lead + 1 for i, n in enumerate(to_shape) if n == 1 and shape[i + lead] != 1)
        if axes:
            node = self.apply(P.reduce_sum, node, axes, False)
            node = self.apply(P.reshape, node, (self.B,) + tuple(to_shape))
        return node

    def error(self, message, hint=None):
        return MyiaBatchingError(message, self.loc, hint)


def elementwise_rule(prim):
    n = prim.elementwise

    def rule(b, *args):
        rank = b.out.ndim if b.out.__class__ is AArray else 0
        nodes = [b.aligned(a, rank) if a.batched else a.node for a in args[:n]]
        return b.apply(prim, *nodes, *args[n:])

    return rule


def rule_of(prim):
    rule = prim.rules.get("batch")
    if rule is None and prim.elementwise:
        rule = prim.rules["batch"] = elementwise_rule(prim)
    return rule
