"""Transform objects named in subset code, and J and T of them.

A transform object made in Python (`dh = myia.grad(h)` at module level, or in a kernel
cell) may be named in subset code: `def k(x): return dh(x) * 2.0`.  The name stands for
its *value graph* `(x1..xn) -> dh(x1..xn)` (myia.ir.protocol.value_graph), whose body
calls the object itself: inference builds the object's program for the types of that
call (see myia.abstract.TransformFunction), for `grad` the gradient of h's optimized
program for those types.  Called, passed to a function that calls it, stored in a
tuple: every call reaches the program built for its own types (the optimizer inlines
the value graph).  Returned to Python it is a function value, as a `def` would be.

When the program of k is transformed before it is specialized (J of the parsed
program: the first derivative of a program that keeps a loop; T: forward mode, jvp and
hessian), the call of `dh` in the value graph becomes a call of J(dh) or T(dh).  Those
are transforms again: the program of `J(dh)` for a signature is J of dh's program for
the same signature (J of data is the data), and the program of `T(dh)` for a signature
of (value, tangent) pairs is T of dh's program for the signature of the values.  Where
the signature holds functions (whose J or T differs from them) the generic program
stands: J (or T) of `dh.__myia_graph__()`.

The function protocol itself (`is_transform`, `value_graph`) is in myia.ir.protocol,
below the parser and inference, which read it.
"""

from ..abstract import TUPLE, AArray, AConstant, AScalar, ATuple
from .forward import T_graph
from .reverse import J_graph


def derived_transform(base, kind):
    """`J(base)` (kind "J") or `T(base)` (kind "T") of a transform object: one object
    per base and kind, so that every use of it in a program is the same function."""
    cache = base.__dict__.setdefault("_myia_derived_transforms", {})
    t = cache.get(kind)
    if t is None:
        t = cache[kind] = _KINDS[kind](base)
    return t


class _TransformOf:
    """A transform (J or T) of a transform object `base`."""

    kind = None

    def __init__(self, base):
        self.base = base

    @property
    def ir_name(self):
        inner = getattr(self.base, "ir_name", None) or getattr(self.base, "__name__", "?")
        return f"{self.kind}({inner})"

    @property
    def __name__(self):
        return self.ir_name

    def __repr__(self):
        return f"<{self.ir_name}>"

    def _apply(self, graph):
        raise NotImplementedError

    def _base_signature(self, signature):
        raise NotImplementedError

    def __myia_graph__(self):
        return self._apply(self.base.__myia_graph__())

    def __myia_graph_for__(self, signature):
        inner = self._base_signature(signature)
        if inner is None:
            return None
        graph = self.base.__myia_graph_for__(inner)
        return None if graph is None else self._apply(graph)

    def __myia_J__(self):
        return derived_transform(self, "J")

    def __myia_T__(self):
        return derived_transform(self, "T")


class JOfTransform(_TransformOf):
    """J of a transform object: for a signature of data, J of its program for it."""

    kind = "J"

    def _apply(self, graph):
        return J_graph(graph)

    def _base_signature(self, signature):
        return signature if all(map(_is_data, signature)) else None


class TOfTransform(_TransformOf):
    """T of a transform object: for a signature of (value, tangent) pairs of data, T of
    its program for the signature of the values."""

    kind = "T"

    def _apply(self, graph):
        return T_graph(graph)

    def _base_signature(self, signature):
        return pair_values(signature)


def pair_values(signature):
    """The abstracts of the values of a signature of (value, tangent) pairs of data,
    or None when it is not one."""
    values = []
    for a in signature:
        if a.__class__ is not ATuple or a.kind != TUPLE or len(a.elements) != 2 \
                or not _is_data(a.elements[0]):
            return None
        values.append(a.elements[0])
    return tuple(values)


def is_data_signature(signature):
    """Whether no abstract of `signature` holds a function."""
    return all(map(_is_data, signature))


_KINDS = {"J": JOfTransform, "T": TOfTransform}


def _is_data(a):
    """Whether the abstract `a` holds no function (its J is itself)."""
    if a.__class__ is ATuple:
        return all(_is_data(e) for e in a.elements)
    return a.__class__ in (AScalar, AArray, AConstant)
