"""The dtype matrix: NumPy 2's promotion (NEP 50) on every kind of operand, against
NumPy itself, on both backends.

Every elementwise function of the library (unary, binary, clip, where, select; the
scalar types called as casts, np.float64(x); the Python operators too), every reduction
and every creation function is applied to each kind of operand (each pair, for a binary
one):

    A_b A_i A_f32 A_f64    bool, int64, float32 and float64 arrays
    S_b S_i S_f32 S_f64    NumPy scalars of those dtypes (np.True_, np.int64(3)...)
    P_b P_i P_f            Python bool, int and float: passed as arguments, and written
                           as constants of the program (`L_...`, a literal: NumPy
                           treats both as "weak", a compiler may fold one)

and the result must be NumPy's: its dtype, its Python type (a Python float, an
np.float64 and a float32 array differ; compiled code has no 0-d arrays, so where NumPy
gives one, np.where(True, 1, 2.0), the NumPy scalar of its dtype stands for it) and its
value.  NumPy's answer is the same call run as plain Python.  Where NumPy raises, or
gives a dtype that compiled code does not have (np.sqrt of a bool is a float16, the
floor division of two bools an int8), compiling must raise a MyiaError.

The tables below generate the cases; each case is a small closure `call(x, y)` (its
constants are in its closure cells, which the compiler reads as constants, as it reads
literals).  To keep this fast, a few programs per function hold all its cases that
NumPy answers, `[calls[0](xs[0], ys[0]), calls[1](xs[1], ys[1]), ...]` (CHUNK cases
each), each inferred once and compiled once per backend; the cases where NumPy raises
are compiled one by one (inference refuses them quickly).  A case that fails is named
in the failure, with what it gave and the backend.  Where Myia and NumPy still differ
on purpose, `KNOWN` says why (strict xfails).
"""

import functools
import warnings

import numpy as np
import pytest

import myia
from myia.errors import MyiaError

from .harness import BACKENDS

# ---- operands ---------------------------------------------------------------------------------

KINDS = ("A_b", "A_i", "A_f32", "A_f64", "S_b", "S_i", "S_f32", "S_f64", "P_b", "P_i", "P_f")

#: the values operands take, by domain: (floats, ints, bools) of a (3,) array; a scalar
#: takes one of them (see `operand`)
DOMAINS = {
    "any": ((-1.5, 0.5, 2.25), (-2, 1, 3), (True, False, True)),
    "pos": ((0.5, 1.5, 2.25), (1, 2, 3), (True, False, True)),
    "nonzero": ((-1.5, 0.5, 2.25), (-2, 1, 3), (True, True, True)),
    "unit": ((-0.5, 0.25, 0.75), (-1, 0, 1), (True, False, True)),
    "open_unit": ((-0.5, 0.25, 0.75), (0, 0, 0), (False, False, False)),
    "ge1": ((1.0, 1.5, 2.25), (1, 2, 3), (True, True, True)),
    "exponent": ((0.5, 1.5, 2.0), (0, 1, 2), (True, False, True)),
    "lo": ((-1.0, 0.0, 0.5), (-1, 0, 1), (False, False, True)),
    "hi": ((1.0, 2.0, 2.5), (1, 2, 2), (True, True, True)),
}

#: the Python numbers written as constants, by domain (0 and 1 and their float and bool
#: twins: what an optimizer's algebra may fold)
LITERALS = {
    "any": (False, 0, 1, 0.0, 1.0, 2.5),
    "pos": (True, 1, 2, 1.0, 2.5),
    "nonzero": (True, 1, 2, 1.0, 2.5),
    "unit": (False, True, 0, 0.5),
    "open_unit": (False, 0, 0.5),
    "ge1": (True, 1, 2, 1.5),
    "exponent": (False, 0, 1, 2, 0.0, 2.5),
    "lo": (False, 0, -1, 0.0, 0.5),
    "hi": (True, 1, 2, 1.0, 2.5),
}

#: the operands a constant is paired with (with a Python number, both are Python's)
NOT_PYTHON = [k for k in KINDS if k[0] != "P"]


def representatives(literals):
    """One constant of each Python type (the last: not a 0 or a 1)."""
    return tuple({type(c): c for c in literals}.values())


def operand(kind, domain, side=0):
    """The operand of `kind` in `domain`: the left one of a pair (side 0) is a (3,) array
    or the third value, the right one (side 1) a (2, 3) array or the second value."""
    floats, ints, bools = DOMAINS[domain]
    values = {"b": bools, "i": ints, "f32": floats, "f64": floats, "f": floats}[kind.split("_")[1]]
    if kind[0] == "A":
        dtype = {"A_b": bool, "A_i": np.int64, "A_f32": np.float32, "A_f64": np.float64}[kind]
        rows = [values] if side == 0 else [values, values[::-1]]
        a = np.array(rows, dtype=dtype)
        return a[0] if side == 0 else a
    v = values[2 - side]
    if kind[0] == "S":
        return {"S_b": np.bool_, "S_i": np.int64, "S_f32": np.float32, "S_f64": np.float64}[kind](v)
    return {"P_b": bool, "P_i": int, "P_f": float}[kind](v)


def _literal_name(c):
    return f"L_{type(c).__name__}({c!r})"


# ---- the functions ----------------------------------------------------------------------------

_ANY = ("abs negative positive square sign exp exp2 expm1 sin cos tan arctan sinh cosh tanh "
        "arcsinh deg2rad rad2deg sinc floor ceil trunc fix rint round isnan isinf isfinite "
        "nan_to_num logical_not invert fabs real imag conjugate float64 float32 int64 "
        "bool_").split()
UNARY = {**{name: (getattr(np, name), "any") for name in _ANY},
         **{name: (getattr(np, name), "pos") for name in "sqrt log log2 log10 log1p".split()},
         "reciprocal": (np.reciprocal, "nonzero"),
         "arcsin": (np.arcsin, "unit"), "arccos": (np.arccos, "unit"),
         "arctanh": (np.arctanh, "open_unit"), "arccosh": (np.arccosh, "ge1"),
         # Python's operators and builtins
         "op_neg": (lambda x: -x, "any"),
         "op_pos": (lambda x: +x, "any"),
         "op_invert": (lambda x: ~x, "any"),
         "op_abs": (lambda x: abs(x), "any")}

#: Python's binary operators
OPERATORS = {
    "op_add": lambda x, y: x + y,
    "op_sub": lambda x, y: x - y,
    "op_mul": lambda x, y: x * y,
    "op_truediv": lambda x, y: x / y,
    "op_floordiv": lambda x, y: x // y,
    "op_mod": lambda x, y: x % y,
    "op_pow": lambda x, y: x ** y,
    "op_lt": lambda x, y: x < y,
    "op_le": lambda x, y: x <= y,
    "op_gt": lambda x, y: x > y,
    "op_ge": lambda x, y: x >= y,
    "op_eq": lambda x, y: x == y,
    "op_ne": lambda x, y: x != y,
    "op_and": lambda x, y: x & y,
    "op_or": lambda x, y: x | y,
    "op_xor": lambda x, y: x ^ y,
}

#: name: (function, domain of the left operand, of the right one)
BINARY = {
    **{name: (getattr(np, name), "any", "any") for name in (
        "add subtract multiply arctan2 hypot logaddexp logaddexp2 maximum minimum fmax fmin "
        "equal not_equal less less_equal greater greater_equal logical_and logical_or "
        "logical_xor bitwise_and bitwise_or bitwise_xor").split()},
    **{name: (getattr(np, name), "any", "nonzero") for name in
       "divide floor_divide remainder".split()},
    "power": (np.power, "pos", "exponent"),
    "float_power": (np.float_power, "pos", "exponent"),
    **{name: (fn, "any", "any") for name, fn in OPERATORS.items()
       if name not in ("op_truediv", "op_floordiv", "op_mod", "op_pow")},
    **{name: (OPERATORS[name], "any", "nonzero")
       for name in ("op_truediv", "op_floordiv", "op_mod")},
    "op_pow": (OPERATORS["op_pow"], "pos", "exponent"),
}

#: names NumPy gives one function under two names: checked to be the same in the library
#: and in NumPy, and run once
ALIASES = {"absolute": "abs", "degrees": "rad2deg", "radians": "deg2rad",
           "true_divide": "divide", "mod": "remainder", "amax": "max", "amin": "min",
           "conj": "conjugate"}


# ---- cases ------------------------------------------------------------------------------------
#
# A case is (name, call, x, y): `call(x, y)` is run by NumPy and compiled; its operands
# are x and y (None where unused); constants are in the closure of `call`.


def _unary(F):
    def call(x, y):
        return F(x)
    return call


def _unary_literal(F, a):
    def call(x, y):
        return F(a)
    return call


def _binary(F):
    def call(x, y):
        return F(x, y)
    return call


def _left_literal(F, a):
    def call(x, y):
        return F(a, y)
    return call


def _right_literal(F, b):
    def call(x, y):
        return F(x, b)
    return call


def _both_literal(F, a, b):
    def call(x, y):
        return F(a, b)
    return call


def _ternary(F):
    def call(x, y):
        return F(x, y[0], y[1])
    return call


def _ternary_literal(F, b, c):
    def call(x, y):
        return F(x, b, c)
    return call


def unary_cases(F, domain):
    cases = [(k, _unary(F), operand(k, domain), None) for k in KINDS]
    cases += [(_literal_name(a), _unary_literal(F, a), None, None) for a in LITERALS[domain]]
    return cases


#: the functions whose constants the optimizer's algebra may fold (x * 1, x + 0.0, x ** 1):
#: each constant of LITERALS with each kind; the others take one constant of each type
ALGEBRA = ("add", "subtract", "multiply", "divide", "floor_divide", "remainder", "power",
           "float_power")


def binary_cases(name, F, left, right):
    """Each pair of kinds; constants on either side (with the operands that are not
    Python numbers), and both constants."""
    lits_left, lits_right = LITERALS[left], LITERALS[right]
    if name not in ALGEBRA:
        lits_left, lits_right = representatives(lits_left), representatives(lits_right)
    cases = [(f"{k1},{k2}", _binary(F), operand(k1, left, 0), operand(k2, right, 1))
             for k1 in KINDS for k2 in KINDS]
    for a in lits_left:
        cases += [(f"{_literal_name(a)},{k}", _left_literal(F, a), None, operand(k, right, 1))
                  for k in NOT_PYTHON]
    for b in lits_right:
        cases += [(f"{k},{_literal_name(b)}", _right_literal(F, b), operand(k, left, 0), None)
                  for k in NOT_PYTHON]
    cases += [(f"{_literal_name(a)},{_literal_name(b)}", _both_literal(F, a, b), None, None)
              for a in representatives(LITERALS[left])
              for b in representatives(LITERALS[right])]
    return cases


def operator_cases(F, left, right):
    """Python's operators: on arrays and NumPy scalars they are NumPy's functions (the
    same primitives: see the np.* groups); here, where Python's semantics or the
    constants matter: Python numbers, and a constant of each type with each kind."""
    python = ("P_b", "P_i", "P_f")
    cases = [(f"{k1},{k2}", _binary(F), operand(k1, left, 0), operand(k2, right, 1))
             for k1 in python for k2 in python]
    for a in representatives(LITERALS[left]):
        cases += [(f"{_literal_name(a)},{k}", _left_literal(F, a), None, operand(k, right, 1))
                  for k in KINDS]
    for b in representatives(LITERALS[right]):
        cases += [(f"{k},{_literal_name(b)}", _right_literal(F, b), operand(k, left, 0), None)
                  for k in KINDS]
    cases += [(f"{_literal_name(a)},{_literal_name(b)}", _both_literal(F, a, b), None, None)
              for a in representatives(LITERALS[left])
              for b in representatives(LITERALS[right])]
    return cases


def clip_cases():
    """np.clip(a, lo, hi): a of each kind; lo and hi of one kind, or one of them None."""
    F = np.clip
    cases = []
    for k in KINDS:
        a = operand(k, "any", 0)
        for k2 in KINDS:
            lo, hi = operand(k2, "lo", 1), operand(k2, "hi", 1)
            cases.append((f"{k},{k2},{k2}", _ternary(F), a, (lo, hi)))
            if k2 in ("P_i", "P_f", "S_f64", "A_f32"):  # (else: as np.maximum, np.minimum)
                cases += [(f"{k},{k2},None", _ternary(F), a, (lo, None)),
                          (f"{k},None,{k2}", _ternary(F), a, (None, hi))]
        for lo, hi in ((0, 1), (0.0, 1.0), (False, True), (-1, 2.5), (None, 1), (0.5, None)):
            cases.append((f"{k},{_literal_name(lo)},{_literal_name(hi)}",
                          _ternary_literal(F, lo, hi), a, None))
    return cases


def where_cases():
    """np.where(c, x, y): c a bool array, x and y of every kind; c a bool scalar, x and
    y of one kind; constants for x or y."""
    F = np.where
    cases = []
    c = operand("A_b", "any", 0)
    for k1 in KINDS:
        for k2 in KINDS:
            cases.append((f"A_b,{k1},{k2}", _ternary(F), c,
                          (operand(k1, "any", 0), operand(k2, "any", 1))))
    for ck in ("S_b", "P_b"):
        for k in KINDS:
            cases.append((f"{ck},{k},{k}", _ternary(F), operand(ck, "any", 0),
                          (operand(k, "any", 0), operand(k, "any", 1))))
    for lit in LITERALS["any"]:
        for k in NOT_PYTHON:
            cases.append((f"A_b,{k},{_literal_name(lit)}", _where_right_literal(lit), c,
                          operand(k, "any", 0)))
        cases.append((f"L_bool(False),{_literal_name(lit)},L_float(2.5)", _where_literals(lit),
                      None, None))
    return cases


def select_cases():
    """np.select((c1, c2), (x, y), default): the choices of every kind (c1 a bool array,
    c2 a bool scalar), the default omitted, a constant, or of every kind."""
    c1, c2 = operand("A_b", "any", 0), np.False_
    cases = []
    for k1 in KINDS:
        for k2 in KINDS:
            cases.append((f"{k1},{k2}", _select(), (c1, c2),
                          (operand(k1, "any", 0), operand(k2, "any", 1))))
        cases += [(f"{k1},{k1},{k2}", _select_default(), (c1, c2),
                   (operand(k1, "any", 0), operand(k1, "any", 1), operand(k2, "any", 1)))
                  for k2 in KINDS]
        cases += [(f"{k1},{k1},{_literal_name(lit)}", _select_literal(lit), (c1, c2),
                   (operand(k1, "any", 0), operand(k1, "any", 1)))
                  for lit in representatives(LITERALS["any"])]
    return cases


def _select():
    def call(x, y):
        return np.select(x, y)
    return call


def _select_default():
    def call(x, y):
        return np.select(x, y[:2], y[2])
    return call


def _select_literal(d):
    def call(x, y):
        return np.select(x, y, d)
    return call


def _where_right_literal(b):
    def call(x, y):
        return np.where(x, y, b)
    return call


def _where_literals(a):
    def call(x, y):
        return np.where(False, a, 2.5)
    return call


# ---- reductions ---------------------------------------------------------------------------------

#: name: (function, takes keepdims=, takes dtype=, takes ddof=)
REDUCTIONS = {
    "sum": (np.sum, True, True, False), "prod": (np.prod, True, True, False),
    "mean": (np.mean, True, True, False), "std": (np.std, True, True, True),
    "var": (np.var, True, True, True), "max": (np.max, True, False, False),
    "min": (np.min, True, False, False), "argmax": (np.argmax, True, False, False),
    "argmin": (np.argmin, True, False, False), "any": (np.any, True, False, False),
    "all": (np.all, True, False, False), "cumsum": (np.cumsum, False, True, False),
    "cumprod": (np.cumprod, False, True, False), "diff": (np.diff, False, False, False),
    "gradient": (np.gradient, False, False, False), "trace": (np.trace, False, True, False),
}

#: the dtypes a `dtype=` argument names (OMIT: no dtype argument)
OMIT = "omitted"
DTYPES = (OMIT, None, bool, int, float, np.bool_, np.int64, np.float32, np.float64)


def _dtype_name(d):
    return d if d is OMIT else "None" if d is None else getattr(d, "__name__", str(d))


def _axis(F, axis):
    def call(x, y):
        return F(x, axis=axis)
    return call


def _keepdims(F, axis):
    def call(x, y):
        return F(x, axis=axis, keepdims=True)
    return call


def _dtype_kw(F, dtype):
    def call(x, y):
        return F(x, dtype=dtype)
    return call


def _ddof(F):
    def call(x, y):
        return F(x, ddof=1)
    return call


def _with_dtype(F, dtype):
    return _unary(F) if dtype is OMIT else _dtype_kw(F, dtype)


def reduction_cases(F, keepdims, dtype, ddof):
    """Each kind of operand ((2, 3) arrays), with axis=None, 0, -1 (keepdims), a dtype,
    ddof=1, where the function takes them."""
    cases = []
    for k in KINDS:
        x = operand(k, "pos", 1)
        cases += [(k, _unary(F), x, None), (f"{k},axis=0", _axis(F, 0), x, None)]
        if keepdims:
            cases.append((f"{k},axis=-1,keepdims", _keepdims(F, -1), x, None))
        if dtype:
            cases += [(f"{k},dtype={_dtype_name(d)}", _dtype_kw(F, d), x, None)
                      for d in (bool, np.int64, np.float32, np.float64)]
        if ddof:
            cases.append((f"{k},ddof=1", _ddof(F), x, None))
    cases += [(_literal_name(a), _unary_literal(F, a), None, None) for a in LITERALS["pos"]]
    return cases


# ---- creation -----------------------------------------------------------------------------------


def _shaped(F, dtype):
    def call(x, y):
        return F((2, 3), dtype=dtype)
    return call


def _shaped_omitted(F):
    def call(x, y):
        return F((2, 3))
    return call


def _square(F, dtype):
    def call(x, y):
        return F(3, dtype=dtype)
    return call


def _square_omitted(F):
    def call(x, y):
        return F(3)
    return call


def _full(dtype):
    def call(x, y):
        return np.full((2, 3), x, dtype=dtype)
    return call


def _full_literal(value, dtype):
    def call(x, y):
        return np.full((2, 3), value, dtype=dtype)
    return call


def _full_like(dtype):
    def call(x, y):
        return np.full_like(x, y, dtype=dtype)
    return call


def _full_like_literal(value, dtype):
    def call(x, y):
        return np.full_like(x, value, dtype=dtype)
    return call


def _arange(a, b, s, dtype):
    def call(x, y):
        return np.arange(a, b, s, dtype=dtype)
    return call


def _linspace(dtype):
    def call(x, y):
        return np.linspace(x, y, 3, dtype=dtype)
    return call


def _linspace_literal(a, b, dtype):
    def call(x, y):
        return np.linspace(a, b, 4, dtype=dtype)
    return call


def _pair(F):
    def call(x, y):
        return F([x, y])
    return call


#: the fill values and elements of arrays: each scalar kind, and constants
SCALARS = [k for k in KINDS if k[0] != "A"]


def creation_cases():
    """{name: cases} for the creation functions: each dtype argument; fill values,
    elements and bounds of each kind (arguments and constants)."""
    out = {}
    for name in ("zeros", "ones", "empty"):
        F = getattr(np, name)
        out[name] = [(_dtype_name(d), _shaped_omitted(F) if d is OMIT else _shaped(F, d),
                      None, None) for d in DTYPES]
    for name in ("eye", "identity"):
        F = getattr(np, name)
        out[name] = [(_dtype_name(d), _square_omitted(F) if d is OMIT else _square(F, d),
                      None, None) for d in DTYPES]
    for name in ("zeros_like", "ones_like", "empty_like", "array", "asarray", "copy"):
        F = getattr(np, name)
        dtypes = (OMIT,) if name == "copy" else DTYPES if name == "array" else \
            (OMIT, None, bool, np.int64, np.float32, float)
        out[name] = [(f"{k},dtype={_dtype_name(d)}", _with_dtype(F, d), operand(k, "any", 1),
                      None) for k in KINDS for d in dtypes]
    out["array"] += [(f"[{k1},{k2}]", _pair(np.array), operand(k1, "any", 0),
                      operand(k2, "any", 1)) for k1 in SCALARS for k2 in SCALARS]
    full = [(f"{k},dtype=None", _full(None), operand(k, "any", 0), None) for k in KINDS]
    full += [(f"{k},dtype={_dtype_name(d)}", _full(d), operand(k, "any", 0), None)
             for k in SCALARS for d in (bool, np.int64, np.float32, float)]
    full += [(f"{_literal_name(v)},dtype={_dtype_name(d)}", _full_literal(v, d), None, None)
             for v in LITERALS["any"] for d in (None, bool, np.int64, np.float32, float)]
    out["full"] = full
    full_like = []
    for k in KINDS[:4]:
        a = operand(k, "any", 1)
        full_like += [(f"{k},{k2},dtype={_dtype_name(d)}", _full_like(d), a, operand(k2, "any", 0))
                      for k2 in SCALARS for d in (None, bool, np.int64, np.float32)]
        full_like += [(f"{k},{_literal_name(v)},dtype={_dtype_name(d)}",
                       _full_like_literal(v, d), a, None)
                      for v in LITERALS["any"] for d in (None, np.float32)]
    out["full_like"] = full_like
    bounds = [(3, None, None), (3.0, None, None), (True, None, None), (np.int64(3), None, None),
              (np.float32(3.0), None, None), (1, 4, None), (0.5, 3, None), (0, 3, 0.5),
              (1, 7, 2), (np.float32(0.5), 2, 0.5)]
    out["arange"] = [(f"{a!r},{b!r},{s!r},dtype={_dtype_name(d)}", _arange(a, b, s, d), None, None)
                     for a, b, s in bounds for d in (None, np.int64, np.float32, float)]
    linspace = [(f"{k},{k},dtype={_dtype_name(d)}", _linspace(d), operand(k, "lo", 1),
                 operand(k, "hi", 1)) for k in KINDS for d in (None, np.float32, np.int64)]
    linspace += [(f"{a!r},{b!r},dtype={_dtype_name(d)}", _linspace_literal(a, b, d), None, None)
                 for a, b in ((0, 1), (0.0, 1.0), (1, 4), (False, True), (np.float32(0), 1.0))
                 for d in (None, np.float32, np.int64, bool)]
    out["linspace"] = linspace
    return out


def all_groups():
    """{group name: cases}: one group per function (one program per group and backend)."""
    groups = {}
    for name, (F, domain) in UNARY.items():
        groups[name] = unary_cases(F, domain)
    for name, (F, left, right) in BINARY.items():
        make = operator_cases if name.startswith("op_") else functools.partial(binary_cases, name)
        groups[name] = make(F, left, right)
    groups["clip"] = clip_cases()
    groups["where"] = where_cases()
    groups["select"] = select_cases()
    for name, spec in REDUCTIONS.items():
        groups[name] = reduction_cases(*spec)
    groups.update(creation_cases())
    return groups


GROUPS = all_groups()

#: cases where Myia and NumPy still differ, each with the reason: {(group, case): reason}
KNOWN = {
    **{("op_invert", c): "`~` of a Python bool is `not` in the subset (a mask's logic, as "
                         "NumPy's ~np.True_); Python's ~True is -2 (deprecated since 3.12)"
       for c in ("P_b", "L_bool(False)")},
    ("op_pow", "A_b,L_int(2)"): "NumPy's `**` takes np.square's path for the exponent 2, "
                                "whose square of a bool array is an int8 (NumPy's np.power "
                                "gives int64): a dtype that depends on the exponent's value",
}


def _integer_variances():
    """np.std and np.var with an integer or bool dtype=: refused (MyiaTypeError), where
    NumPy computes in that dtype, truncating each step (var([1, 2, 3], dtype=int) is 0)."""
    reason = ("NumPy computes a variance with dtype=int or bool in that dtype, truncating "
              "each step (np.var([1, 2, 3], dtype=int) is 0): refused")
    for name in ("std", "var"):
        for k in KINDS:
            for d in (bool, np.int64):
                case = f"{k},dtype={_dtype_name(d)}"
                call = next(c for c in GROUPS[name] if c[0] == case)
                if numpy_answer(call)[0] == "value":
                    KNOWN[(name, case)] = reason

#: functions whose values are not defined (their dtypes and types are)
UNINITIALIZED = ("empty", "empty_like")


# ---- NumPy's answers, and comparing with them ----------------------------------------------------

#: the dtypes compiled code has
SUPPORTED = ("bool", "int64", "float32", "float64")


def _unsupported(v):
    """The dtype of `v` (or of a part of it) that compiled code does not have, or None."""
    if isinstance(v, (tuple, list)):
        return next((u for u in map(_unsupported, v) if u), None)
    if isinstance(v, (np.ndarray, np.generic)) and v.dtype.name not in SUPPORTED:
        return v.dtype.name
    return None


def numpy_answer(case):
    """("value", NumPy's result) or ("raises", why)."""
    _, call, x, y = case
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            v = call(x, y)
        except Exception as e:  # noqa: BLE001
            return ("raises", f"{type(e).__name__}: {e}")
    u = _unsupported(v)
    if u:
        return ("raises", f"NumPy's result is a {u}, which compiled code does not have")
    return ("value", v)


_integer_variances()


def describe(v):
    """What must agree besides the value: the container, the Python type, the dtype, the
    shape (a 0-d array is described as the NumPy scalar of its dtype)."""
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, tuple(describe(e) for e in v))
    if isinstance(v, np.ndarray):
        if v.ndim == 0:
            return ("NumPy scalar", v.dtype.name)
        return ("array", v.dtype.name, v.shape)
    if isinstance(v, np.generic):
        return ("NumPy scalar", v.dtype.name)
    return ("Python " + type(v).__name__,)


def disagreement(got, want, values=True):
    """None if `got` is NumPy's `want` (its value too, if `values`), else what differs."""
    d_got, d_want = describe(got), describe(want)
    if d_got != d_want:
        return f"got {d_got}, NumPy {d_want}: {got!r} vs {want!r}"
    if not values:
        return None
    if isinstance(want, (tuple, list)):
        return next((d for d in map(disagreement, got, want) if d), None)
    g, w = np.asarray(got), np.asarray(want)
    if w.dtype.kind == "f":
        rtol = 2e-6 if w.dtype == np.float32 else 1e-12
        ok = np.allclose(g, w, rtol=rtol, atol=rtol * 1e-3, equal_nan=True)
    else:
        ok = np.array_equal(g, w)
    return None if ok else f"value {got!r}, NumPy {want!r}"


# ---- compiling and running ----------------------------------------------------------------------


def program(calls):
    """One subset function that makes the list of every call on its operands."""
    idx = tuple(range(len(calls)))

    def matrix(xs, ys):
        return [calls[i](xs[i], ys[i]) for i in idx]

    return matrix


def single(call):
    def one(x, y):
        return call(x, y)

    return one


#: cases per program: compiling takes a time that grows faster than the program
CHUNK = 48


class Group:
    """The cases of one function, NumPy's answers, and what each backend gives."""

    def __init__(self, name, cases):
        self.name = name
        self.cases = cases
        self.answers = [numpy_answer(c) for c in cases]
        self.answered = [(c, a[1]) for c, a in zip(cases, self.answers)
                         if a[0] == "value" and (name, c[0]) not in KNOWN]
        self.raising = [c for c, a in zip(cases, self.answers)
                        if a[0] == "raises" and (name, c[0]) not in KNOWN]
        cases = [c for c, _ in self.answered]
        self.chunks = [(cases[k:k + CHUNK], program(tuple(c[1] for c in cases[k:k + CHUNK])))
                       for k in range(0, len(cases), CHUNK)]

    def results(self, backend):
        """{case name: what it gave}, each an ("ok", value) or an ("error", e)."""
        out = {}
        for cases, prog in self.chunks:  # (the same programs on each backend: one inference)
            xs = tuple(c[2] for c in cases)
            ys = tuple(c[3] for c in cases)
            try:
                values = myia.compile(prog, backend=backend)(xs, ys)
                out.update({c[0]: ("ok", v) for c, v in zip(cases, values)})
            except Exception:  # noqa: BLE001  (then each case alone, to say which)
                out.update({c[0]: run_one(c, backend) for c in cases})
        return out


def run_one(case, backend):
    _, call, x, y = case
    try:
        return ("ok", myia.compile(single(call), backend=backend)(x, y))
    except Exception as e:  # noqa: BLE001
        return ("error", e)


def check_case(case, want, got, values=True):
    """None, or what is wrong with `got` (an ("ok", v) or ("error", e)) for `case`."""
    status, v = got
    if status == "error":
        return f"{case[0]}: raised {type(v).__name__}: {v}".splitlines()[0]
    d = disagreement(v, want, values)
    return f"{case[0]}: {d}" if d else None


def _fail_with(problems, what):
    if problems:
        shown = "\n  ".join(problems[:40])
        more = f"\n  ... and {len(problems) - 40} more" if len(problems) > 40 else ""
        pytest.fail(f"{len(problems)} {what}:\n  {shown}{more}", pytrace=False)


# ---- the tests ----------------------------------------------------------------------------------
#
# One test per function runs it on both backends (so that their programs share one
# inference, also under pytest-xdist); a failure names the backend and each case.


@pytest.mark.parametrize("name", list(GROUPS))
def test_values(name):
    """Every case NumPy answers: the same dtype, Python type and value, on each backend."""
    g = Group(name, GROUPS[name])
    problems = []
    for backend in BACKENDS:
        got = g.results(backend)
        problems += [f"[{backend}] {p}" for p in
                     (check_case(c, want, got[c[0]], values=name not in UNINITIALIZED)
                      for c, want in g.answered) if p]
    _fail_with(problems, f"cases of {name} differ from NumPy")


@pytest.mark.parametrize("name", [n for n in GROUPS if any(
    numpy_answer(c)[0] == "raises" and (n, c[0]) not in KNOWN for c in GROUPS[n])])
def test_refused_where_numpy_raises(name):
    """Where NumPy raises (or gives a dtype compiled code lacks), a MyiaError."""
    problems = []
    for case in Group(name, GROUPS[name]).raising:
        for backend in BACKENDS:
            status, v = run_one(case, backend)
            if status == "ok":
                problems.append(f"[{backend}] {case[0]}: gave {v!r}")
            elif not isinstance(v, MyiaError):
                problems.append(f"[{backend}] {case[0]}: raised {type(v).__name__} "
                                f"(not a MyiaError): {v}")
    _fail_with(problems, f"cases of {name} that NumPy refuses are not refused")


def _known_params():
    return [pytest.param(name, case_name, backend, id=f"{name}-{case_name}-{backend}",
                         marks=pytest.mark.xfail(strict=True, reason=reason))
            for (name, case_name), reason in KNOWN.items() for backend in BACKENDS]


@pytest.mark.parametrize("name, case_name, backend", _known_params())
def test_known_disagreements(name, case_name, backend):
    case = next(c for c in GROUPS[name] if c[0] == case_name)
    kind, want = numpy_answer(case)
    got = run_one(case, backend)
    if kind == "raises":
        assert got[0] == "error" and isinstance(got[1], MyiaError), got
    else:
        assert check_case(case, want, got) is None, check_case(case, want, got)


@pytest.mark.parametrize("alias, name", sorted(ALIASES.items()))
def test_aliases_are_one_function(alias, name):
    """np.absolute is np.abs in the library, and in NumPy on every operand."""
    from myia import lib

    assert lib.lookup(getattr(np, alias)) is lib.lookup(getattr(np, name))
    for k in KINDS:
        x = operand(k, "pos", 1)
        with np.errstate(all="ignore"):
            try:
                want = getattr(np, name)(x)
            except TypeError:
                continue
            assert disagreement(getattr(np, alias)(x), want) is None


# ---- gradients through maximum, minimum, fmax, fmin and clip of mixed operands ----------------
#
# np.maximum(x, 1) is a float of x's dtype whichever wins: its gradient with respect to x
# has x's dtype (a float32 stays float32) and is 1 where x wins, 0 where the other does.

GRAD_XS = {"P_f": 0.75, "S_f64": np.float64(0.75), "S_f32": np.float32(0.75),
           "A_f64": np.array([0.25, 0.75, 1.5]), "A_f32": np.array([0.25, 0.75, 1.5], np.float32)}
GRAD_OTHERS = {"P_i": 1, "P_b": True, "P_f": 0.5, "S_i": np.int64(1), "S_f64": np.float64(0.5),
               "S_f32": np.float32(0.5), "A_i": np.array([1, 0, 2])}
GRAD_LITERALS = (1, True, 0.5, 0)


def _reduced(F):
    def f(x, c):
        return np.sum(F(x, c))
    return f


def _reduced_literal(F, c):
    def f(x, unused):
        return np.sum(F(x, c))
    return f


def _clip_reduced(x, c):
    return np.sum(np.clip(x, c[0], c[1]))


def grad_cases(name):
    """(case name, f(x, c), x, c) for the gradient of np.<name>."""
    cases = []
    for kx, x in GRAD_XS.items():
        if name == "clip":
            for k, c in GRAD_OTHERS.items():
                if k[0] != "A":
                    cases.append((f"{kx},{k},{k}", _clip_reduced, x,
                                  (type(c)(0), type(c)(2 * c))))
            cases.append((f"{kx},L_int(0),L_int(1)", _reduced_literal(
                lambda a, c: np.clip(a, 0, 1), None), x, None))
            continue
        F = getattr(np, name)
        cases += [(f"{kx},{k}", _reduced(F), x, c) for k, c in GRAD_OTHERS.items()]
        cases += [(f"{kx},{_literal_name(c)}", _reduced_literal(F, c), x, None)
                  for c in GRAD_LITERALS]
    return cases


def _numeric_grad(f, x, c, eps=1e-6):
    x64 = np.array(x, dtype=np.float64)
    out = np.zeros_like(x64)
    flat = out.reshape(-1)
    for k in range(x64.size):
        e = np.zeros_like(x64).reshape(-1)
        e[k] = eps
        e = e.reshape(x64.shape)
        flat[k] = (f(x64 + e, c) - f(x64 - e, c)) / (2 * eps)
    return out


def _grad_program(fns):
    idx = tuple(range(len(fns)))
    grads = tuple(myia.grad(f) for f in fns)

    def grads_of(xs, cs):
        return [grads[i](xs[i], cs[i]) for i in idx]

    return grads_of


_GRADS = {}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin", "clip"])
def test_gradients_of_mixed_operands(name, backend):
    if name not in _GRADS:
        cases = grad_cases(name)
        _GRADS[name] = (cases, _grad_program(tuple(c[1] for c in cases)))
    cases, prog = _GRADS[name]
    got = myia.compile(prog, backend=backend)(tuple(c[2] for c in cases),
                                              tuple(c[3] for c in cases))
    problems = []
    for (case_name, f, x, c), g in zip(cases, got):
        want = _numeric_grad(f, x, c)
        if np.asarray(g).dtype != np.asarray(x).dtype or np.shape(g) != np.shape(x):
            problems.append(f"{case_name}: gradient {g!r}, of x {x!r}")
        elif not np.allclose(g, want, atol=1e-6):
            problems.append(f"{case_name}: gradient {g!r}, want {want!r}")
    _fail_with(problems, f"gradients of {name} are wrong on {backend}")


# ---- a NumPy scalar crossing the boundary ------------------------------------------------------


def _times(x, s):
    return x * s


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_numpy_scalar_is_not_a_python_number(backend):
    """Each is a signature of its own (a compiled program for a float does not take an
    np.float64), and comes back as what it is."""
    f = myia.compile(_times, backend=backend)
    x32 = np.ones(3, np.float32)
    for _ in range(2):  # (the second time through the entry that the first made)
        assert f(x32, 2.0).dtype == np.float32  # a Python float does not promote
        assert f(x32, np.float64(2.0)).dtype == np.float64  # an np.float64 does
        assert f(x32, 2).dtype == np.float32 and f(x32, np.int64(2)).dtype == np.float64
        assert type(f(1.5, 2.0)) is float and type(f(np.float64(1.5), 2.0)) is np.float64
        assert type(f(3, 2)) is int and type(f(np.int64(3), 2)) is np.int64
        assert type(f(True, True)) is int  # Python: True * True is 1
        assert type(f(np.True_, True)) is np.bool_  # NumPy: np.True_ * True is np.True_
