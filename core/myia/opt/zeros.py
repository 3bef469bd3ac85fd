"""Symbolic zeros: the rules about `zeros_like`.

In a derivative program, `zeros_like(x)` is a sensitivity that AD knows to be zero
(user code's `np.zeros_like` is `full`, never this primitive); of a float it is the
constant `ZERO` (myia.prim.grad_ops), a 0.0 every backend reads as a number.  The
optimizer keeps both as structure, as JAX keeps its symbolic zeros: what they feed in
the linear steps of a bprop rule is zero whatever the other operands hold, inf and
NaN included.  So the gradient of `second(np.std(v))`, where `second` ignores its
argument, is not NaN because the derivative of std is infinite where the zero meets
it (0 * inf).
"""

import numpy as np

from ..abstract import AArray, AFunction, AScalar, abstract_of
from ..ir import Constant, Graph
from ..prim import Primitive, all_primitives
from ..prim import ops as P
from ..prim.grad_ops import ZERO, SymbolicZero, zero_inputs
from .match import calls, same_type, scalar_dtype, typed_apply, typed_constant, zero_tuple
from .pass_manager import rule

_FLOATS = ("float64", "float32")


def is_zero(node):
    """A sensitivity AD knows to be zero."""
    return calls(node, P.zeros_like) or node.__class__ is Constant \
        and node.value.__class__ is SymbolicZero


@rule(on=[P.zeros_like])
def zeros_like_of_scalar(node, ctx):
    """zeros_like(x) -> 0 (or False), for an integer or bool x;  zeros_like(x) -> ZERO
    (0.0, symbolic), for a float x"""
    if calls(node, P.zeros_like):
        dtype = scalar_dtype(node.inputs[1])
        if dtype in ("int64", "bool"):
            return typed_constant(False if dtype == "bool" else 0, node)
        if dtype in _FLOATS:
            return _constant(ZERO, node.loc)
    return None


@rule(on=[P.zeros_like])
def zeros_like_of_function(node, ctx):
    """zeros_like(f) -> env_new(), for f a function (a graph, a primitive, or typed so)"""
    if calls(node, P.zeros_like):
        x = node.inputs[1]
        if isinstance(x, Constant) and isinstance(x.value, (Graph, Primitive)) \
                or isinstance(x.abstract, AFunction):
            new = node.graph.apply(P.env_new, loc=node.loc)
            new.abstract = node.abstract
            return new
    return None


@rule(on=[P.zeros_like])
def zeros_like_of_tuple(node, ctx):
    """zeros_like(t) -> make_tuple(zeros_like(t[0]), ..., zeros_like(t[n])), for a typed
    tuple t (each element's zero then folds on its own)"""
    if calls(node, P.zeros_like):
        t = node.inputs[1]
        a, ta = node.abstract, t.abstract
        if hasattr(a, "elements") and hasattr(ta, "elements") \
                and len(a.elements) == len(ta.elements):
            g, loc = node.graph, node.loc
            zeros = [typed_apply(g, za, P.zeros_like,
                                 typed_apply(g, ea, P.tuple_getitem, t, i, loc=loc), loc=loc)
                     for i, (za, ea) in enumerate(zip(a.elements, ta.elements))]
            return typed_apply(g, a, P.make_tuple, *zeros, loc=loc)
    return None


@rule(on=[P.gadd])
def add_zeros_like(node, ctx):
    """gadd(x, zeros_like(y)) -> x;  gadd(zeros_like(y), x) -> x;  the same with
    env_new() (the zero of functions and environments) and a constant tuple of zeros"""
    if calls(node, P.gadd):
        _, a, b = node.inputs
        if is_zero(b) or (calls(b, P.env_new) or zero_tuple(b)) and same_type(a, node):
            return a
        if is_zero(a) or (calls(a, P.env_new) or zero_tuple(a)) and same_type(b, node):
            return b
    return None


@rule(on=[P.add, P.sub])
def add_symbolic_zero(node, ctx):
    """x + zeros_like(y) -> x;  zeros_like(y) + x -> x;  x - zeros_like(y) -> x;
    zeros_like(y) - x -> -x  (when x has the result's type)"""
    if calls(node, P.add) or calls(node, P.sub):
        _, a, b = node.inputs
        if is_zero(b) and same_type(a, node):
            return a
        if is_zero(a) and same_type(b, node):
            if calls(node, P.add):
                return b
            return typed_apply(node.graph, node.abstract, P.neg, b, loc=node.loc)
    return None


_LINEAR_ZERO = {p: zero_inputs(p) for p in all_primitives().values() if any(zero_inputs(p))}


def linear_zero_inputs(prim):
    """(the inputs any of which makes `prim`'s result zero, the inputs all of which do):
    see myia.prim.grad_ops.zero_inputs."""
    return _LINEAR_ZERO.get(prim, ((), ()))


def _zero_input(node):
    """A zero, or a tuple of zeros (what concatenate reads)."""
    return is_zero(node) or calls(node, P.make_tuple) and len(node.inputs) > 1 \
        and all(is_zero(e) for e in node.inputs[1:])


@rule(on=sorted(_LINEAR_ZERO, key=lambda p: p.name))
def zero_through_linear(node, ctx):
    """p(..., zeros_like(a), ...) -> the zero of p's type, where p is zero when that
    input is: a product or a quotient's numerator, or a linear p (reshape, sum,
    transpose, where's branches, concatenate of zeros...) all of whose linear inputs
    are zero"""
    if not zero_by_inputs(node, _zero_input):
        return None
    any_of, all_of = linear_zero_inputs(node.inputs[0].value)
    args = node.inputs[1:]
    zero = next((args[i] for i in any_of if i < len(args) and is_zero(args[i])),
                args[all_of[0]] if all_of else None)
    return zero if zero is not None and same_type(zero, node) else zero_of(node)


def zero_by_inputs(node, input_zero):
    """Whether the application `node` (of a primitive, its result a float or floats) is
    zero when the inputs `input_zero(input)` says are: a factor or a numerator, or all
    the inputs a linear primitive is linear in (see `linear_zero_inputs`)."""
    if not is_float_value(node.abstract):
        return False
    any_of, all_of = linear_zero_inputs(node.inputs[0].value)
    args = node.inputs[1:]
    if any(i < len(args) and input_zero(args[i]) for i in any_of):
        return True
    return bool(all_of) and all(i < len(args) and input_zero(args[i]) for i in all_of)


def is_float_value(a):
    """A float or an array of floats, of a known shape."""
    return isinstance(a, (AScalar, AArray)) and a.dtype in _FLOATS \
        and None not in getattr(a, "shape", ())


def zero_of(node, graph=None):
    """A symbolic zero of `node`'s type (a float or an array of floats), which depends
    on nothing: ZERO, or zeros_like(full(shape, 0, dtype)) made in `graph` (by default
    the node's own)."""
    a, g, loc = node.abstract, graph or node.graph, node.loc
    if isinstance(a, AScalar):
        # (a float32 zero is a plain number: ZERO is a float64)
        return _constant(np.float32(0.0) if a.dtype == "float32" else ZERO, loc)
    like = typed_apply(g, a, P.full, _constant(a.shape, loc), _constant(0, loc),
                       _constant(a.dtype, loc), loc=loc)
    return typed_apply(g, a, P.zeros_like, like, loc=loc)


def _constant(value, loc):
    c = Constant(value, loc)
    c.abstract = abstract_of(value)
    return c


#: the rules of symbolic zeros
RULES = [zeros_like_of_scalar, zeros_like_of_function, zeros_like_of_tuple, add_zeros_like,
         add_symbolic_zero, zero_through_linear]
