"""CUDA C for fused elementwise groups: plain data, built and tested without a GPU.

Each elementwise primitive has one C template here (`EW_OPS`); a fused group is the
list of its nodes in order, each one `const T tN = <template>;`, then the outputs
assigned.  The same body serves an `ElementwiseKernel` (the statements themselves) and
the map of a `ReductionKernel` (a `__device__` function in the preamble).

Semantics follow the primitives' impls (NumPy): operands are converted to the node's
dtype (as NumPy computes in the result dtype), `maximum`/`minimum` propagate NaN,
`x ** 2` is `x * x` (what `np.power` returns exactly), `bool + bool` is `or`.
"""

import math

import numpy as np

from ...prim import ops as P
from ...prim.mathfn import LIBM

#: our dtype names -> (CuPy parameter type, C type)
DTYPES = {
    "float64": ("float64", "double"),
    "float32": ("float32", "float"),
    "int64": ("int64", "long long"),
    "int32": ("int32", "int"),
    "bool": ("bool", "bool"),
}
FLOATS = ("float64", "float32")

#: a few things NVRTC has no header for; the CPU emulator defines the same names
PREAMBLE = """\
#define MYIA_INF __longlong_as_double(0x7ff0000000000000ULL)
#define MYIA_INF_F __int_as_float(0x7f800000)
"""


def ctype(dtype):
    return DTYPES[dtype][1]


def literal(value, dtype):
    """A C literal for a finite constant of `dtype`, or None (pass it as a parameter)."""
    if dtype == "bool":
        return "true" if value else "false"
    if dtype in ("int64", "int32"):
        v = int(value)
        return f"{v}LL" if dtype == "int64" else str(v)
    v = float(value)
    if not math.isfinite(v):
        return None
    text = repr(v)
    if "e" not in text and "." not in text:
        text += ".0"
    return text + ("f" if dtype == "float32" else "")


def cast(expr, src, dst):
    """`expr` (of dtype src) converted to dst."""
    if src == dst:
        return expr
    if dst == "bool":
        return f"({expr} != 0)"
    return f"(({ctype(dst)}){expr})"


class Operand:
    """A C expression and its dtype (an input of a template)."""

    __slots__ = ("expr", "dtype", "const")

    def __init__(self, expr, dtype, const=None):
        self.expr = expr
        self.dtype = dtype
        self.const = const  # the Python value when the operand is a literal

    def to(self, dtype):
        if self.const is not None and self.dtype != dtype:
            lit = literal(self.const, dtype)
            if lit is not None:
                return lit
        return cast(self.expr, self.dtype, dtype)


class Unsupported(Exception):
    """This node (primitive, dtypes) has no C template: it is not fused."""


def _binary(op, bool_op=None):
    def gen(out, a, b):
        if out == "bool":
            if bool_op is None:
                raise Unsupported(op)
            return f"({a.to('bool')} {bool_op} {b.to('bool')})"
        return f"({a.to(out)} {op} {b.to(out)})"

    return gen


def _truediv(out, a, b):
    if out not in FLOATS:
        raise Unsupported("integer truediv result")
    return f"({a.to(out)} / {b.to(out)})"


def _pow(out, a, b):
    if out not in FLOATS:
        raise Unsupported("integer power")
    if b.const is not None and not isinstance(b.const, bool):
        if b.const == 1:
            return a.to(out)
        if b.const == 2:
            x = a.to(out)
            return f"({x} * {x})"
    return f"pow({a.to(out)}, {b.to(out)})"


def _neg(out, a):
    if out == "bool":
        raise Unsupported("neg of bool")
    return f"(-{a.to(out)})"


def _math(fn):
    def gen(out, *args):
        if out not in FLOATS:
            raise Unsupported(fn)
        return f"{fn}({', '.join(a.to(out) for a in args)})"

    return gen


def _abs(out, a):
    if out in FLOATS:
        return f"fabs({a.to(out)})"
    if out == "bool":
        return a.to(out)
    x = a.to(out)
    return f"({x} < 0 ? -{x} : {x})"


def _sign(out, a):
    x = a.to(out)
    if out == "bool":
        raise Unsupported("sign of bool")
    if out in FLOATS:
        t = ctype(out)
        return f"({x} != {x} ? {x} : ({t})(({x} > 0) - ({x} < 0)))"
    return f"(({ctype(out)})(({x} > 0) - ({x} < 0)))"


def _minmax(cmp):
    def gen(out, a, b):
        x, y = a.to(out), b.to(out)
        if out in FLOATS:  # NaN wins, as in NumPy
            return f"(({x} != {x} || {x} {cmp} {y}) ? {x} : {y})"
        return f"({x} {cmp} {y} ? {x} : {y})"

    return gen


def _fminmax(fn, cmp):
    def gen(out, a, b):
        x, y = a.to(out), b.to(out)
        if out in FLOATS:  # CUDA's fmax/fmin: a NaN loses to a number, as in NumPy
            return f"{fn}({x}, {y})"
        return f"({x} {cmp} {y} ? {x} : {y})"

    return gen


def _compare(op):
    def gen(out, a, b):
        return f"({a.expr} {op} {b.expr})"

    return gen


def _where(out, c, a, b):
    return f"({c.to('bool')} ? {a.to(out)} : {b.to(out)})"


def _not(out, a):
    return f"(!{a.to('bool')})"


def _identity(out, a, *static):
    return a.to(out)


#: primitive -> template(out dtype, *operands) -> C expression.  Static arguments
#: (a dtype name, a shape) are dropped by the fusion pass before the call.
EW_OPS = {
    P.add: _binary("+", "||"),
    P.sub: _binary("-"),
    P.mul: _binary("*", "&&"),
    P.truediv: _truediv,
    P.pow: _pow,
    P.neg: _neg,
    **{p: _math(cname) for p, (cname, _) in LIBM.items()},  # CUDA's libm: the same names
    P.bitwise_and: _binary("&", "&&"),
    P.bitwise_or: _binary("|", "||"),
    P.bitwise_xor: _binary("^", "!="),
    P.invert: lambda out, a: f"(!{a.to('bool')})" if out == "bool" else f"(~{a.to(out)})",
    P.floor: _math("floor"),
    P.ceil: _math("ceil"),
    P.trunc: _math("trunc"),
    P.rint: _math("rint"),
    P.abs: _abs,
    P.sign: _sign,
    P.maximum: _minmax(">="),
    P.minimum: _minmax("<="),
    P.fmax: _fminmax("fmax", ">="),
    P.fmin: _fminmax("fmin", "<="),
    P.where: _where,
    P.eq: _compare("=="),
    P.ne: _compare("!="),
    P.lt: _compare("<"),
    P.le: _compare("<="),
    P.gt: _compare(">"),
    P.ge: _compare(">="),
    P.not_: _not,
    # conversions and broadcasts: the value, converted to the node's dtype
    P.astype: _identity,
    P.to_float: _identity,
    P.to_int: _identity,
    P.broadcast_to: _identity,
    P.reshape: _identity,
    P.unbroadcast: _identity,
    P.sum_to: _identity,
}


# ---- kernel sources ------------------------------------------------------------------


class ElementwiseSource:
    """What `cupy.ElementwiseKernel(in_params, out_params, operation, name,
    preamble=...)` is built from."""

    kind = "elementwise"

    def __init__(self, name, in_params, out_params, operation, preamble=""):
        self.name = name
        self.in_params = in_params
        self.out_params = out_params
        self.operation = operation
        self.preamble = preamble

    @property
    def key(self):
        """The cache key: same source and signature, same kernel."""
        return (self.kind, self.in_params, self.out_params, self.operation, self.preamble)

    def __str__(self):
        return (f"ElementwiseKernel {self.name}\n  in:  {self.in_params}\n"
                f"  out: {self.out_params}\n" + _indent(self.operation))


class ReductionSource:
    """What `cupy.ReductionKernel(in_params, out_params, map_expr, reduce_expr,
    post_map_expr, identity, name, reduce_type, preamble=...)` is built from."""

    kind = "reduction"

    def __init__(self, name, in_params, out_params, map_expr, reduce_expr, post_map_expr,
                 identity, reduce_type, preamble):
        self.name = name
        self.in_params = in_params
        self.out_params = out_params
        self.map_expr = map_expr
        self.reduce_expr = reduce_expr
        self.post_map_expr = post_map_expr
        self.identity = identity
        self.reduce_type = reduce_type
        self.preamble = preamble

    @property
    def key(self):
        return (self.kind, self.in_params, self.out_params, self.map_expr, self.reduce_expr,
                self.post_map_expr, self.identity, self.reduce_type, self.preamble)

    def __str__(self):
        return (f"ReductionKernel {self.name}\n  in:  {self.in_params}\n"
                f"  out: {self.out_params}\n  map: {self.map_expr}\n"
                f"  reduce: {self.reduce_expr}  identity: {self.identity}\n"
                + _indent(self.preamble))


def _indent(text):
    return "\n".join("    " + line for line in text.splitlines())


def params(names_dtypes):
    return ", ".join(f"{DTYPES[d][0]} {n}" for n, d in names_dtypes)


def reduce_parts(op, dtype):
    """(reduce_expr, identity) of a sum or a max over values of `dtype`."""
    if op == "sum":
        return "a + b", ("false" if dtype == "bool" else "0")
    if op == "max":
        if dtype in FLOATS:
            inf = "MYIA_INF" if dtype == "float64" else "MYIA_INF_F"
            return "((a != a || a >= b) ? a : b)", f"-{inf}"
        if dtype == "bool":
            return "(a || b)", "false"
        lowest = int(np.iinfo(dtype).min)
        return "(a >= b ? a : b)", (f"({lowest + 1}LL - 1)" if dtype == "int64"
                                    else f"({lowest + 1} - 1)")
    raise Unsupported(op)


__all__ = ["DTYPES", "EW_OPS", "ElementwiseSource", "Operand", "PREAMBLE", "ReductionSource",
           "Unsupported", "cast", "ctype", "literal", "params", "reduce_parts"]
