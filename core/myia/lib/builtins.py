"""Python's builtins and the `math` module, as the subset sees them."""

import math

from ..prim import ops as P


def py_max(a, b):
    if b > a:
        return b
    return a


def py_min(a, b):
    if b < a:
        return b
    return a


def py_bool(x):
    return P.truth(x)


def math_floor(x):
    return P.to_int(P.floor(x))


def math_pow(x, y):
    return P.to_float(x) ** P.to_float(y)


NAMES = {
    # builtins
    abs: P.abs,
    len: P.len_,
    float: P.to_float,
    int: P.to_int,
    bool: py_bool,
    max: py_max,
    min: py_min,
    # math
    math.sin: P.sin,
    math.cos: P.cos,
    math.tan: P.tan,
    math.tanh: P.tanh,
    math.exp: P.exp,
    math.log: P.log,
    math.sqrt: P.sqrt,
    math.atan: P.arctan,
    math.asin: P.arcsin,
    math.acos: P.arccos,
    math.sinh: P.sinh,
    math.cosh: P.cosh,
    math.asinh: P.arcsinh,
    math.acosh: P.arccosh,
    math.atanh: P.arctanh,
    math.atan2: P.arctan2,
    math.hypot: P.hypot,
    math.log2: P.log2,
    math.log10: P.log10,
    math.log1p: P.log1p,
    math.expm1: P.expm1,
    math.fabs: P.abs,
    math.floor: math_floor,
    math.pow: math_pow,
}
