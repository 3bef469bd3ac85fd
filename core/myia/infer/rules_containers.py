"""Inference of lists and dicts: the container primitives (myia.prim.containers) and
what tuples' rules (myia.infer.rules) ask about kinds.

A list and a dict are tuples with a kind (see myia.abstract); the operations
Python defines on them keep it: a list plus a list is a list, a slice of a list a
list, `d["k"]` reads the value at the position of key "k" (the key must be known at
compile time).  What Python refuses (a list plus a tuple, a dict plus anything) is a
MyiaTypeError that says what to write instead.
"""

import numpy as np

from ..errors import MyiaStaticError, MyiaTypeError, MyiaValueError
from ..prim import ops as P
from ..prim.arith import check_repetition
from ..abstract import (
    KEY_TYPES,
    LIST,
    NOT_CONSTANT,
    TUPLE,
    AConstant,
    AScalar,
    ASlice,
    ATuple,
    abstract_of,
    constant_value,
    dict_kind,
    is_dict_kind,
    join_kinds,
    kind_name,
)
from .rules import rule


def concat(x, y):
    """x + y for containers: a tuple or a list of the elements of both."""
    if x.is_dict or y.is_dict:
        raise MyiaTypeError(
            f"`+` is not defined for dicts ({x} + {y})",
            hint="merge dicts with {**a, **b}")
    if x.kind != y.kind:
        raise MyiaTypeError(
            f"can only concatenate {kind_name(x.kind)} (not {kind_name(y.kind)}) to "
            f"{kind_name(x.kind)}",
            hint=f"convert one of them first: {kind_name(x.kind)}(...)")
    return ATuple(x.elements + y.elements, x.kind)


def repeat(x, y):
    """`[a] * n` and `n * [a]`: n copies of the elements (n known at compile time)."""
    seq, n = (x, y) if isinstance(x, ATuple) else (y, x)
    count = constant_value(n)
    if seq.is_dict or not isinstance(n, AScalar) or n.dtype != "int64":
        raise MyiaTypeError(f"`*` is not defined for {x} and {y}",
                            hint="a list or a tuple repeats by an int: [0.0] * 3")
    if count is NOT_CONSTANT:
        raise MyiaTypeError(
            f"the number of repetitions of a {kind_name(seq.kind)} must be known at "
            f"compile time, got {n}",
            hint="the length of a list is static: repeat it by a constant, or by a "
                 "length or a shape")
    check_repetition(len(seq.elements), count)
    return ATuple(seq.elements * max(int(count), 0), seq.kind)


def key_position(d, key):
    """The position of the value of `key` (an abstract) in the dict `d`."""
    k = constant_value(key)
    if k is NOT_CONSTANT or isinstance(k, (tuple, np.ndarray)):
        raise MyiaStaticError(
            f"the key of a dict must be known at compile time, got {key}",
            hint="dicts have static keys: write d[\"name\"], or iterate over d.items()")
    for i, existing in enumerate(d.keys):
        if existing == k and type(existing) is type(k):
            return i
    raise MyiaValueError(f"key {k!r} is not in the dict {d}",
                         hint=f"its keys are {', '.join(map(repr, d.keys))}")


def getitem_container(t, i, by_key=True):
    """t[i] for a dict (a key, or a position when not `by_key`) or a container sliced
    by a constant slice; None otherwise (the tuples' rule)."""
    if t.is_dict and by_key:
        if isinstance(i, AConstant) and isinstance(i.value, slice):
            raise MyiaTypeError(f"a dict cannot be sliced: {t}",
                                hint="read its values by key: d[\"k\"]")
        return t.elements[key_position(t, i)]
    if isinstance(i, AConstant) and isinstance(i.value, slice):
        return ATuple(t.elements[i.value], TUPLE if t.is_dict else t.kind)
    if isinstance(i, ASlice):
        raise MyiaTypeError(
            f"the bounds of a slice of a {kind_name(t.kind)} must be known at compile "
            f"time, got {i}",
            hint="the length of a tuple or a list is part of its type: slice it by "
                 "constants or lengths (xs[1:], xs[:len(ys)])")
    return None


def retag(value, model):
    """The abstract `value` (a folded constant) with the kinds of `model` (the same
    structure, from the rule): implementations fold lists to plain tuples."""
    if not (isinstance(value, ATuple) and isinstance(model, ATuple)) \
            or len(value) != len(model):
        return value
    return ATuple((retag(v, m) for v, m in zip(value.elements, model.elements)), model.kind)


def has_dict(args):
    """Whether some argument is a dict (whose implementation would read its values by
    position: not folded)."""
    return any(isinstance(a, ATuple) and a.is_dict for a in args)


def has_kinds(args):
    """Whether some argument holds a list or a dict."""
    for a in args:
        if isinstance(a, ATuple) and (a.kind is not TUPLE or has_kinds(a.elements)):
            return True
    return False


# ---- the container primitives ----------------------------------------------------------


def _kind(kind):
    """The kind that the constant abstract `kind` names, checked."""
    v = constant_value(kind)
    if v == "tuple" or v == "list":
        return TUPLE if v == "tuple" else LIST
    if isinstance(v, tuple) and len(v) == 2 and v[0] == "dict" and isinstance(v[1], tuple):
        keys = tuple(v[1])
        for k in keys:
            if not isinstance(k, KEY_TYPES) or isinstance(k, np.generic):
                raise MyiaTypeError(
                    f"a dict key must be a string, an int, a bool or None, got {k!r}")
        seen = set()
        for k in keys:
            if (type(k), k) in seen:
                raise MyiaValueError(f"the key {k!r} appears twice in this dict",
                                     hint="give each key once")
            seen.add((type(k), k))
        return dict_kind(keys)
    if v is NOT_CONSTANT and isinstance(kind, ATuple) and len(kind) == 2:
        raise MyiaStaticError(
            f"the keys of a dict must be known at compile time, got {kind.elements[1]}",
            hint="dicts have static keys: use constants, or keys computed from constants")
    raise MyiaTypeError(f"tuple_as of an unknown kind {kind}")


@rule(P.tuple_as)
def infer_tuple_as(t, kind):
    k = _kind(kind)
    if not isinstance(t, ATuple):
        raise MyiaTypeError(f"a {kind_name(k)} is made of a tuple of values, got {t}")
    if is_dict_kind(k) and len(k[1]) != len(t):
        raise MyiaTypeError(f"a dict of {len(k[1])} keys cannot hold {len(t)} values")
    return ATuple(t.elements, k)


def structure_like(d, x):
    """d with the container kinds of x, where their structures agree."""
    if isinstance(d, ATuple) and isinstance(x, ATuple) and len(d) == len(x):
        kind = x.kind if join_kinds(d.kind, x.kind) is not None or d.kind is TUPLE \
            else d.kind
        return ATuple((structure_like(a, b) for a, b in zip(d.elements, x.elements)), kind)
    return d


@rule(P.structure_like)
def infer_structure_like(d, x):
    return structure_like(d, x)


@rule(P.kind_of)
def infer_kind_of(x):
    if isinstance(x, ATuple):
        return abstract_of(x.kind)
    return AConstant(None)


__all__ = ["concat", "getitem_container", "has_dict", "has_kinds", "key_position", "repeat",
           "retag", "structure_like"]
