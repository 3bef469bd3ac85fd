"""Arithmetic, elementwise: on Python scalars and on NumPy arrays (with broadcasting).

Semantics: float operations follow IEEE 754 as NumPy does (1.0 / 0.0 is inf, the log
of a negative number is nan); integer division or modulo by zero is an error.
Integers are int64 on every backend: a scalar result outside its range is a
MyiaOverflowError (Python would give a big int, NumPy would wrap); an integer raised
to a negative integer power is an error (NumPy's rule: the result is no integer).
Integer *arrays* wrap on overflow, as NumPy's do.
Python numbers and NumPy scalars: Python's operators (add, sub, mul, truediv, floordiv,
mod, pow, neg, abs) are Python's on Python numbers (`True + True` is 2, `1 + 0.5` a
float) and NumPy's on NumPy scalars and arrays (np.True_ + np.True_ is np.True_);
NumPy's functions (maximum, minimum, fmax, fmin, where, sign, floor...) are NumPy's on
everything: on numbers, a NumPy scalar of NumPy's promoted type (np.maximum(1, 0.5) is
np.float64(1.0)).  Inference runs these implementations on samples of each type (see
myia.infer.rules), so the two always agree on a result's dtype and kind.
Each bprop returns one sensitivity per input, passed through `unbroadcast` so that it
has the input's shape and dtype (and is zero for integer inputs).
"""

import functools
import operator

import numpy as np

from ..errors import MyiaOverflowError, MyiaValueError
from .grad_ops import zeros_like
from .logic import eq, gt, lt, ne
from .mathfn import log
from . import series as S
from .primitive import PIECEWISE_LINEAR, Primitive, bprop, jet, jvp, linear_in
from .shape import unbroadcast


def _is_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1

#: what an int64 overflow says, on every backend (the LLVM backend fills {a} and {b})
OVERFLOW = {
    "add": "integer overflow: {a} + {b} is out of int64's range",
    "sub": "integer overflow: {a} - {b} is out of int64's range",
    "mul": "integer overflow: {a} * {b} is out of int64's range",
    "floordiv": "integer overflow: {a} // {b} is out of int64's range",
    "pow": "integer overflow: {a} ** {b} is out of int64's range",
    "neg": "integer overflow: -({a}) is out of int64's range",
    "abs": "integer overflow: abs({a}) is out of int64's range",
}
NEGATIVE_POWER = "an integer raised to a negative integer power ({a}) is not an integer"
#: the same on integer arrays: NumPy's words, which the VM passes on from np.power
NEGATIVE_POWER_ARRAY = "Integers to negative integer powers are not allowed."


def _numpy_scalars(*args):
    """Whether an operation on scalars is NumPy's: one of them is a NumPy scalar
    (np.float64, np.int64, np.bool_, np.float32), and so is its result.  On Python
    numbers alone it is Python's (see myia.abstract, AScalar's `numpy`)."""
    return any(isinstance(a, np.generic) for a in args)


def _int64(fn, name):
    """`fn` on scalars that are ints (bools included) computes in Python ints and
    checks that the result is an int64 (an np.int64 when an operand is a NumPy
    scalar); on anything else it is `fn` itself."""
    @functools.wraps(fn)  # its signature gives the primitive's arity
    def impl(*args):
        if all(isinstance(a, (int, np.integer, np.bool_)) for a in args) \
                and not all(isinstance(a, (bool, np.bool_)) for a in args):
            ints = [int(a) for a in args]
            r = fn(*ints)
            if not INT64_MIN <= r <= INT64_MAX:
                raise MyiaOverflowError(OVERFLOW[name].format(
                    a=ints[0], b=ints[1] if len(ints) > 1 else None))
            return np.int64(r) if _numpy_scalars(*args) else r
        return fn(*args)
    return impl


#: the most elements a tuple or a list repetition makes: their length is static, each
#: element a value the compiler types (some 10 us and 1 KB each)
MAX_REPEATED = 10_000


def check_repetition(length, n):
    """`[0.0] * n` (or `n * (a, b)`) of a sequence of `length` elements, refused before
    it is built where it would be too long to compile (constant folding calls `_mul`
    before the inference rule of a repetition)."""
    total = length * max(int(n), 0)
    if total > MAX_REPEATED:
        raise MyiaValueError(
            f"this repetition makes a list or tuple of {total} elements; a list's length "
            f"is static in Myia (each element is typed when the program compiles), and "
            f"at most {MAX_REPEATED} are made this way",
            hint="use an array for many numbers: np.zeros(n), np.full(n, value)")


def _mul(x, y):
    if isinstance(x, (tuple, list)) and isinstance(y, (int, np.integer)):
        check_repetition(len(x), y)
    elif isinstance(y, (tuple, list)) and isinstance(x, (int, np.integer)):
        check_repetition(len(y), x)
    return x * y


def _any_array(x, y):
    return isinstance(x, np.ndarray) or isinstance(y, np.ndarray)


def _check_int_divisor(x, y, what):
    if _is_int(y) and y == 0 and _is_int(x):
        raise MyiaValueError(f"integer {what} by zero")


def _by_zero(np_fn, x, y):
    """x / y (//, %) by a zero: IEEE's inf or nan, no exception; NumPy's dtype for
    NumPy scalars, a Python float for Python numbers."""
    with np.errstate(all="ignore"):
        if _numpy_scalars(x, y):
            return np_fn(x, y)
        return float(np_fn(np.float64(x), np.float64(y)))


def _truediv(x, y):
    if _any_array(x, y) or y != 0:
        return x / y
    return _by_zero(np.true_divide, x, y)


def _floordiv(x, y):
    _check_int_divisor(x, y, "division")
    if _any_array(x, y):
        return np.floor_divide(x, y)
    if y == 0:
        return _by_zero(np.floor_divide, x, y)
    return x // y


_floordiv = _int64(_floordiv, "floordiv")


def _mod(x, y):
    _check_int_divisor(x, y, "modulo")
    if _any_array(x, y):
        return np.mod(x, y)
    if y == 0:
        return _by_zero(np.mod, x, y)
    return x % y


def _pow(x, y):
    # (Python's bools are ints there: True ** 2 is the int 1)
    if (_is_int(x) and _is_int(y)) or (isinstance(x, int) and isinstance(y, int)):
        if y < 0:
            raise MyiaValueError(NEGATIVE_POWER.format(a=y))
        return _int_pow(x, y)
    if _any_array(x, y) or _numpy_scalars(x, y):
        with np.errstate(all="ignore"):
            return np.power(x, y)  # (NumPy's dtype: a float32 stays one, bools give int8)
    return float(np.power(np.float64(x), np.float64(y)))


def _bounded_pow(x, y):
    # |x| >= 2 and y >= 64 is out of int64's range for sure: say so before Python
    # computes a big int that no time limit can stop (10 ** 10 ** 10 in a cell)
    if abs(x) >= 2 and y >= 64:
        return INT64_MAX + 1
    return x ** y


_int_pow = _int64(_bounded_pow, "pow")

add = Primitive("add", _int64(operator.add, "add"), "x + y", elementwise=2, commutative=True,
                foldable=True)
sub = Primitive("sub", _int64(operator.sub, "sub"), "x - y", elementwise=2, foldable=True)
mul = Primitive("mul", _int64(_mul, "mul"), "x * y", elementwise=2, commutative=True,
                foldable=True)
truediv = Primitive("truediv", _truediv, "x / y", elementwise=2, foldable=True)
floordiv = Primitive("floordiv", _floordiv, "x // y", nondiff=True, elementwise=2,
                     foldable=True)
mod = Primitive("mod", _mod, "x % y", elementwise=2, foldable=True)
pow = Primitive("pow", _pow, "x ** y", elementwise=2, foldable=True)
neg = Primitive("neg", _int64(operator.neg, "neg"), "-x", elementwise=1, foldable=True)


@bprop(add)
def bprop_add(x, y, out, dout):
    return (unbroadcast(dout, x), unbroadcast(dout, y))


@jvp(add)
def jvp_add(x, y, dx, dy):
    return dx + dy


@jet(add)
def jet_add(out, x, y):
    return [out] + S.elementwise(x, y, lambda a, b: a + b, out)


@bprop(sub)
def bprop_sub(x, y, out, dout):
    return (unbroadcast(dout, x), unbroadcast(-dout, y))


@jvp(sub)
def jvp_sub(x, y, dx, dy):
    return dx - dy


@jet(sub)
def jet_sub(out, x, y):
    return [out] + S.elementwise(x, y, lambda a, b: a - b, out)


@bprop(mul)
def bprop_mul(x, y, out, dout):
    return (unbroadcast(dout * y, x), unbroadcast(x * dout, y))


@jvp(mul)
def jvp_mul(x, y, dx, dy):
    return dx * y + x * dy


@jet(mul)
def jet_mul(out, x, y):
    return S.cauchy(x, y, out)


@bprop(truediv)
def bprop_truediv(x, y, out, dout):
    return (unbroadcast(dout / y, x), unbroadcast(-dout * out / y, y))


@jvp(truediv)
def jvp_truediv(x, y, dx, dy):
    return (dx - x / y * dy) / y


@jet(truediv)
def jet_truediv(out, x, y):
    if all(c is S.ZERO for c in y[1:]):  # by a constant: each coefficient alone
        return [out] + [c / y[0] for c in x[1:]]
    return S.divide(x, y, out)


@bprop(mod)
def bprop_mod(x, y, out, dout):
    return (unbroadcast(dout, x), unbroadcast(-dout * floor(x / y), y))


@jvp(mod)
def jvp_mod(x, y, dx, dy):
    return dx - dy * floor(x / y)


jet(mod)(PIECEWISE_LINEAR)


@bprop(pow)
def bprop_pow(x, y, out, dout):
    # d/dy x**y = x**y log x, taken as 0 where x <= 0 (where it is undefined)
    return (unbroadcast(dout * y * x ** (y - 1), x),
            unbroadcast(dout * out * log(where(x > 0, x, 1.0)), y))


@jvp(pow)
def jvp_pow(x, y, dx, dy):
    return dx * y * x ** (y - 1) + dy * x ** y * log(where(x > 0, x, 1.0))


@jet(pow)
def jet_pow(out, x, y):
    if any(c is not S.ZERO for c in y[1:]):  # x ** y = exp(y log x)
        return S.exp(S.cauchy(y, S.log(x, x[0].map(log))), out)
    r = y[0].node
    if r.is_constant() and isinstance(r.value, (int, float)) and not isinstance(r.value, bool):
        if float(r.value).is_integer() and 0 <= r.value <= 64:
            return S.integer_power(x, int(r.value), out)
        return S.power(x, float(r.value), out)
    return S.power(x, y[0], out)


@bprop(neg)
def bprop_neg(x, out, dout):
    return (-dout,)


@jvp(neg)
def jvp_neg(x, dx):
    return -dx


@jet(neg)
def jet_neg(out, x):
    return [out] + [-c for c in x[1:]]


def _sign(x):
    return np.sign(x)  # (a NumPy scalar of a number; NumPy refuses bools)


abs = Primitive("abs", _int64(lambda x: np.abs(x) if isinstance(x, np.ndarray) else operator.abs(x),
                              "abs"), elementwise=1, foldable=True)
sign = Primitive("sign", _sign, "-1, 0 or 1", nondiff=True, elementwise=1, foldable=True)


def _rounding(np_fn):
    def impl(x):
        return np_fn(x)  # (NumPy's: of a number, a NumPy scalar; of an int, an int)

    impl.__name__ = np_fn.__name__
    return impl


# Rounding to an integral float (NumPy: a float result; piecewise constant, so not
# differentiable: the sensitivity is zero, as autograd and JAX give).  Each is the C
# function (and LLVM intrinsic) of the same name; np.round is rint (halves to even).
floor = Primitive("floor", _rounding(np.floor), "round down", nondiff=True, elementwise=1,
                  foldable=True)
ceil = Primitive("ceil", _rounding(np.ceil), "round up", nondiff=True, elementwise=1,
                 foldable=True)
trunc = Primitive("trunc", _rounding(np.trunc), "round toward zero", nondiff=True,
                  elementwise=1, foldable=True)
rint = Primitive("rint", _rounding(np.rint), "round to nearest, halves to even", nondiff=True,
                 elementwise=1, foldable=True)
#: the rounding primitives, by the name of their C function
ROUNDING = {floor: "floor", ceil: "ceil", trunc: "trunc", rint: "rint"}


@bprop(abs)
def bprop_abs(x, out, dout):
    return (unbroadcast(dout * sign(x), x),)


@jvp(abs)
def jvp_abs(x, dx):
    return dx * sign(x)


jet(abs)(PIECEWISE_LINEAR)


# NumPy's functions, on numbers too (np.maximum(1, 0.5) is np.float64(1.0), of the
# promoted type whichever wins; a NaN wins)
def _maximum(x, y):
    return np.maximum(x, y)


def _minimum(x, y):
    return np.minimum(x, y)


maximum = Primitive("maximum", _maximum, "elementwise max", elementwise=2, foldable=True)
minimum = Primitive("minimum", _minimum, "elementwise min", elementwise=2, foldable=True)


def _fmax(x, y):
    return np.fmax(x, y)


def _fmin(x, y):
    return np.fmin(x, y)


# np.fmax and np.fmin: max and min where a NaN loses to a number (llvm's maxnum, C's
# fmax); a primitive of their own, as one vector instruction each where three selects
# of where/maximum were 1.2x NumPy's time
fmax = Primitive("fmax", _fmax, "elementwise max, NaN ignored (np.fmax)", elementwise=2,
                 foldable=True)
fmin = Primitive("fmin", _fmin, "elementwise min, NaN ignored (np.fmin)", elementwise=2,
                 foldable=True)


def _where(c, x, y):
    if _any_array(c, x) or isinstance(y, np.ndarray):
        return np.where(c, x, y)
    return np.where(c, x, y)[()]  # (NumPy's 0-d array: its NumPy scalar)


where = Primitive("where", _where, "elementwise select: cond ? x : y", elementwise=3,
                  foldable=True)


# At a tie, max and min split the sensitivity evenly between x and y (as autograd and
# JAX do), so that the gradient is the average of the two one-sided ones.
def _max_share(x, y, greater):
    """x's share of the sensitivity of maximum (greater) or minimum: 1 where x wins,
    half at a tie, else 0."""
    wins = gt(x, y) if greater else lt(x, y)
    return where(wins, 1.0, where(eq(x, y), 0.5, 0.0))


@bprop(maximum)
def bprop_maximum(x, y, out, dout):
    share = _max_share(x, y, True)
    return (unbroadcast(dout * share, x), unbroadcast(dout * (1.0 - share), y))


@jvp(maximum)
def jvp_maximum(x, y, dx, dy):
    share = _max_share(x, y, True)
    return dx * share + dy * (1.0 - share)


jet(maximum)(PIECEWISE_LINEAR)


def _fmax_share(x, y, greater):
    """x's share of the sensitivity of fmax (greater) or fmin: all of it where y is
    NaN, none where x is, else as maximum's (half each at a tie)."""
    return where(ne(x, x), 0.0, where(ne(y, y), 1.0, _max_share(x, y, greater)))


@bprop(fmax)
def bprop_fmax(x, y, out, dout):
    share = _fmax_share(x, y, True)
    return (unbroadcast(dout * share, x), unbroadcast(dout * (1.0 - share), y))


@jvp(fmax)
def jvp_fmax(x, y, dx, dy):
    share = _fmax_share(x, y, True)
    return dx * share + dy * (1.0 - share)


jet(fmax)(PIECEWISE_LINEAR)


@bprop(fmin)
def bprop_fmin(x, y, out, dout):
    share = _fmax_share(x, y, False)
    return (unbroadcast(dout * share, x), unbroadcast(dout * (1.0 - share), y))


@jvp(fmin)
def jvp_fmin(x, y, dx, dy):
    share = _fmax_share(x, y, False)
    return dx * share + dy * (1.0 - share)


jet(fmin)(PIECEWISE_LINEAR)


@bprop(minimum)
def bprop_minimum(x, y, out, dout):
    share = _max_share(x, y, False)
    return (unbroadcast(dout * share, x), unbroadcast(dout * (1.0 - share), y))


@jvp(minimum)
def jvp_minimum(x, y, dx, dy):
    share = _max_share(x, y, False)
    return dx * share + dy * (1.0 - share)


jet(minimum)(PIECEWISE_LINEAR)


@bprop(where)
def bprop_where(c, x, y, out, dout):
    return (zeros_like(c), unbroadcast(where(c, dout, 0.0), x), unbroadcast(where(c, 0.0, dout), y))



@jvp(where)
def jvp_where(c, x, y, dc, dx, dy):
    return where(c, dx, dy)


jet(where)(linear_in(1, 2))