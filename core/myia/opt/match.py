"""What the rewrite rules ask of nodes and how they make typed ones: small predicates
and constructors shared by myia.opt.rules and myia.opt.zeros."""

import numpy as np

from ..ir import Apply, Constant, Graph
from ..prim import Primitive


def calls(node, prim):
    """Whether `node` is an application of the primitive `prim`."""
    return isinstance(node, Apply) and isinstance(node.inputs[0], Constant) \
        and node.inputs[0].value is prim


def is_const(node):
    """A constant that is data (not a graph or a primitive)."""
    return isinstance(node, Constant) and not isinstance(node.value, (Graph, Primitive))


def typed_apply(graph, abstract, fn, *args, loc=None):
    """fn(*args) made in `graph`, of type `abstract`."""
    new = graph.apply(fn, *args, loc=loc)
    new.abstract = abstract
    return new


def typed_constant(value, like):
    """A constant of `value` with the location and the type of the node `like`."""
    c = Constant(value, like.loc)
    c.abstract = like.abstract
    return c


def is_number(node, value):
    return is_const(node) and isinstance(node.value, (int, float, np.number)) \
        and not isinstance(node.value, bool) and node.value == value


def same_type(a, b):
    """True when a and b have the same known type (so one may replace the other).
    Types are compared as printed: dtype and shape, not constant values."""
    return a.abstract is not None and b.abstract is not None \
        and str(a.abstract) == str(b.abstract)


def scalar_dtype(node):
    """The dtype of a scalar node, else None."""
    ab = node.abstract
    return getattr(ab, "dtype", None) if ab is not None and not hasattr(ab, "shape") else None


def number_tuple(node):
    """A constant tuple of numbers (bools and nested tuples of them included)."""
    return is_const(node) and type(node.value) is tuple and all_numbers(node.value)


def all_numbers(t):
    return all(all_numbers(x) if type(x) is tuple else isinstance(x, (int, float)) for x in t)


def all_zeros(t):
    return all(all_zeros(x) if type(x) is tuple else not x for x in t)


def zero_tuple(node):
    """A constant tuple of zeros (a zero sensitivity of a tuple of numbers)."""
    return number_tuple(node) and all_zeros(node.value)
