"""The LLVM backend's registry: each primitive's lowering rule, and the errors that
name what the backend cannot compile.

The ops_* modules register their rules here (`@rule(P.add)`); `myia.backend.llvm`
imports them all (see its __init__), and `lower.py` reads `RULES`.
"""

from collections import namedtuple

from ...errors import MyiaBackendError

#: Primitive -> its lowering rule; filled by the ops_* modules through `rule`
RULES = {}


def rule(*prims):
    """`@rule(P.add, P.sub)`: def lower(fl, node, args, types, out) -> value.

    `args` are the LLVM values of the inputs, `types` their LTypes, `out` the LType of
    the result."""

    def deco(fn):
        for p in prims:
            if p in RULES:  # one lowering per primitive, in one place
                raise AssertionError(f"{p.name} has two LLVM lowerings: "
                                     f"{RULES[p].__name__} and {fn.__name__}")
            RULES[p] = fn
        return fn

    return deco


def backend_error(what, node=None, hint=None):
    loc = getattr(node, "loc", None)
    return MyiaBackendError(f"the LLVM backend cannot compile {what}", loc, hint)


def what_is_made(node):
    """What the node's result is, for a memory error: "an array of shape (n, m),
    float64" when the shape is known when compiling."""
    a = getattr(node, "abstract", None)
    shape = getattr(a, "shape", None)
    dtype = getattr(a, "dtype", None)
    if shape is not None and dtype is not None:
        dims = tuple(shape)
        if all(isinstance(d, int) for d in dims):
            return f"an array of shape {dims}, {dtype}"
        return f"an array of {dtype} (its shape depends on the arguments)"
    return "the values this line makes"


class LoopRecords(namedtuple("LoopRecords", "step_bytes holds_arrays")):
    """What the derivative of a loop allocates, for a memory error: a record a step
    (`step_bytes` each; `holds_arrays`: the arrays they point to are more)."""
