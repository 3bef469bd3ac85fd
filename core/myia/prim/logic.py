"""Comparisons, logic and conversions between scalar types."""

import operator

import numpy as np

from ..errors import MyiaOverflowError, MyiaTypeError, MyiaValueError
from .primitive import Primitive, batch, bprop, jet, jvp, linear_in
from .shape import unbroadcast

_COMPARISON = dict(nondiff=True, elementwise=2, foldable=True)
eq = Primitive("eq", operator.eq, "x == y", commutative=True, **_COMPARISON)
ne = Primitive("ne", operator.ne, "x != y", commutative=True, **_COMPARISON)
lt = Primitive("lt", operator.lt, "x < y", **_COMPARISON)
le = Primitive("le", operator.le, "x <= y", **_COMPARISON)
gt = Primitive("gt", operator.gt, "x > y", **_COMPARISON)
ge = Primitive("ge", operator.ge, "x >= y", **_COMPARISON)


def _not(x):
    if isinstance(x, (np.ndarray, np.generic)):
        return np.logical_not(x)  # (a NumPy scalar gives one)
    return not x


def _truth(x):
    """The truth value of a condition: scalars only (like NumPy, an array of more
    than one element is ambiguous)."""
    if isinstance(x, np.ndarray):
        if x.size != 1:
            raise MyiaValueError(
                f"the truth value of an array of shape {x.shape} is ambiguous",
                hint="use np.any(...) or np.all(...), or compare one element")
        return bool(x)
    if isinstance(x, tuple):
        return len(x) > 0
    return bool(x)


#: what converting a float that no int64 holds says, on every backend
TO_INT_NAN = "cannot convert nan to an int"
TO_INT_RANGE = "cannot convert a float that is infinite or out of int64's range to an int"


def _to_int(x):
    if isinstance(x, np.ndarray):
        return x.astype(np.int64)
    if isinstance(x, (float, np.floating)):
        if x != x:
            raise MyiaValueError(TO_INT_NAN)
        if not -9.223372036854775808e18 <= x < 9.223372036854775808e18:
            raise MyiaOverflowError(TO_INT_RANGE)
    return int(x)


def _to_float(x):
    if isinstance(x, np.ndarray):
        return x.astype(np.float64)
    if isinstance(x, tuple):
        raise MyiaTypeError("float() of a tuple")
    return float(x)


not_ = Primitive("not", _not, "logical negation", nondiff=True, elementwise=1, foldable=True)
def _bitwise(op, name):
    def impl(*args):
        if any(isinstance(a, (float, np.floating)) or
               (isinstance(a, np.ndarray) and a.dtype.kind == "f") for a in args):
            raise MyiaTypeError(f"{name} is defined for bools and integers, not floats",
                                hint="compare floats to make masks: (x > 0) & (y < 1)")
        return op(*args)

    impl.__name__ = name
    return impl


# `&`, `|`, `^`, `~`: logical on bools (masks), bitwise on integers, as in NumPy
_BITWISE = dict(nondiff=True, elementwise=2, commutative=True, foldable=True)
bitwise_and = Primitive("bitwise_and", _bitwise(operator.and_, "&"), "x & y", **_BITWISE)
bitwise_or = Primitive("bitwise_or", _bitwise(operator.or_, "|"), "x | y", **_BITWISE)
bitwise_xor = Primitive("bitwise_xor", _bitwise(operator.xor, "^"), "x ^ y", **_BITWISE)
invert = Primitive("invert", _bitwise(lambda x: ~x if not isinstance(x, bool) else not x, "~"),
                   "~x (not x for a bool)", nondiff=True, elementwise=1, foldable=True)
#: the bitwise primitives, by their LLVM instruction
BITWISE = {bitwise_and: "and_", bitwise_or: "or_", bitwise_xor: "xor", invert: "not_"}

# `x is None`: a question about x's type, answered at compile time (an array, a number
# or a tuple is never None), so that `if a_min is None:` chooses a branch statically
is_none = Primitive("is_none", lambda x: x is None, "x is None", nondiff=True)
# whether x is a Python number (bool, int, float), not a NumPy scalar nor an array: also
# a question about x's type, for NumPy's functions, whose result on Python numbers alone
# is a NumPy scalar (see myia.lib.np_math)
python_number = Primitive("python_number", lambda x: type(x) in (bool, int, float),
                          "x is a Python number", nondiff=True)
# range_bound(n, what, hint): n, the start, stop or step (`what`) of `for i in range(...)`
# where it is not an int constant.  Inference refuses a float or an array, as Python
# does when running (its TypeError, located; `hint`: the call rewritten with an int);
# the optimizer removes it.
range_bound = Primitive("range_bound", lambda n, what, hint: n,
                        "n, an int bound of range()", nondiff=True)


def range_message(what, kind):
    """What a bound or step of range() that is no int is told (Python: "'float' object
    cannot be interpreted as an integer"); `kind`: "a float64", "an array of int64"."""
    return f"range() takes integers, but its {what} is {kind}"


truth = Primitive("truth", _truth, "the truth value of a condition (bool(x))", nondiff=True,
                  foldable=True)
to_int = Primitive("to_int", _to_int, "int(x), truncating", nondiff=True, elementwise=1,
                   foldable=True)
to_float = Primitive("to_float", _to_float, "float(x)", elementwise=1, foldable=True)


@bprop(to_float)
def bprop_to_float(x, out, dout):
    return (unbroadcast(dout, x),)



@jvp(to_float)
def jvp_to_float(x, dx):
    return to_float(dx)


jet(to_float)(linear_in(0))


@batch(truth)
def batch_truth(b, x):
    return b.apply(ne, b.batched(x), 0)


# (a marker: inference checked the example's bound; the batched bounds pass through)
batch(range_bound)(lambda b, n, what, hint: b.batched(n))
