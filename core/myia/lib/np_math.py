"""NumPy's elementwise functions (its ufuncs and their relatives).

The C math library's functions are primitives (myia.prim.mathfn), and so are the
arithmetic operators and the rounding functions; the others are written here over
primitives, so their derivatives come from the primitives' rules.  Where a formula
would lose what NumPy computes exactly (the log of a sum of exponentials overflowing,
sinc at 0, NaN ignored by fmax), it is written the way NumPy's C code is.
"""

import math

import numpy as np

from ..prim import compile_time
from ..prim import ops as P
from ..prim.mathfn import LIBM

PI = math.pi
LN2 = math.log(2.0)


@compile_time
def _is_int_kind(dtype):
    """Whether a dtype name is an integer or bool one."""
    return dtype in ("int64", "int32", "bool")


@compile_time
def _largest(dtype):
    """The largest finite value of a float dtype (what nan_to_num puts for inf)."""
    return float(np.finfo(dtype).max)


# ---- arithmetic ---------------------------------------------------------------------------


def np_add(x1, x2):
    return x1 + x2


def np_subtract(x1, x2):
    return x1 - x2


def np_multiply(x1, x2):
    return x1 * x2


def np_divide(x1, x2):
    return x1 / x2


def np_floor_divide(x1, x2):
    return x1 // x2


def np_remainder(x1, x2):
    return x1 % x2


def np_power(x1, x2):
    return x1 ** x2


def np_float_power(x1, x2):
    return P.astype(x1, "float64") ** P.astype(x2, "float64")


def np_negative(x):
    return -x


def np_positive(x):
    return x


def np_reciprocal(x):
    return 1.0 / x


def np_square(x):
    return x * x


def np_fabs(x):
    if _is_int_kind(P.dtype(x)):
        return P.astype(P.abs(x), "float64")
    return P.abs(x)


def np_sign(x):
    return P.sign(x)


# ---- angles -------------------------------------------------------------------------------


def np_deg2rad(x):
    return x * (PI / 180.0)


def np_rad2deg(x):
    return x * (180.0 / PI)


def np_sinc(x):
    # sin(pi x) / (pi x), 1 at 0: the quotient is taken where it is defined, so that
    # the gradient at 0 is the limit's (0), not 0 * nan
    safe = P.where(x == 0.0, 1.0, x)
    y = PI * safe
    return P.where(x == 0.0, 1.0, P.sin(y) / y)


# ---- sums of exponentials -------------------------------------------------------------------


def np_logaddexp(x1, x2):
    # log(e^x1 + e^x2) = max + log1p(e^-|x1 - x2|): never overflows; two equal
    # infinities (where x1 - x2 is nan) give that infinity, as NumPy
    big = P.maximum(x1, x2)
    d = P.abs(x1 - x2)
    return P.where(d != d, x1 + x2, big + P.log1p(P.exp(-d)))


def np_logaddexp2(x1, x2):
    big = P.maximum(x1, x2)
    d = P.abs(x1 - x2)
    return P.where(d != d, x1 + x2, big + P.log1p(P.exp2(-d)) / LN2)


# ---- comparisons that ignore NaN, clipping ---------------------------------------------------


def np_fmax(x1, x2):
    return P.fmax(x1, x2)


def np_fmin(x1, x2):
    return P.fmin(x1, x2)


def np_clip(a, a_min, a_max):
    if a_min is None:
        if a_max is None:
            return a
        return P.minimum(a, a_max)
    if a_max is None:
        return P.maximum(a, a_min)
    return P.minimum(P.maximum(a, a_min), a_max)


# ---- rounding -------------------------------------------------------------------------------


@compile_time
def _scale(decimals):
    return 10.0 ** abs(decimals)


def np_round(a, decimals=0):
    # NumPy's own method: rint of the value scaled by 10^decimals (halves to even);
    # an integer array is returned as it is for decimals >= 0
    if _is_int_kind(P.dtype(a)):
        if decimals >= 0:
            return a
        s = _scale(decimals)
        return P.astype(P.rint(a / s) * s, P.dtype(a))
    if decimals == 0:
        return P.rint(a)
    if decimals > 0:
        s = _scale(decimals)
        return P.rint(a * s) / s
    s = _scale(decimals)
    return P.rint(a / s) * s


# ---- floating-point classes -----------------------------------------------------------------


def np_isnan(x):
    return x != x


def np_isinf(x):
    return P.abs(x) == math.inf


def np_isfinite(x):
    return P.abs(x) < math.inf


def np_nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    if _is_int_kind(P.dtype(x)):
        return x
    big = _largest(P.dtype(x))
    hi = big if posinf is None else posinf
    lo = -big if neginf is None else neginf
    y = P.where(x != x, nan, x)
    return P.where(y == math.inf, hi, P.where(y == -math.inf, lo, y))


# ---- comparisons and logic ------------------------------------------------------------------


def np_equal(x1, x2):
    return x1 == x2


def np_not_equal(x1, x2):
    return x1 != x2


def np_less(x1, x2):
    return x1 < x2


def np_less_equal(x1, x2):
    return x1 <= x2


def np_greater(x1, x2):
    return x1 > x2


def np_greater_equal(x1, x2):
    return x1 >= x2


def np_logical_not(x):
    return P.not_(x)


def np_logical_and(x1, x2):
    return P.mul(x1 != 0, x2 != 0)


def np_logical_or(x1, x2):
    return P.not_(P.mul(x1 == 0, x2 == 0))


def np_logical_xor(x1, x2):
    return (x1 != 0) != (x2 != 0)


def np_where(condition, x, y):
    return P.where(condition, x, y)


NAMES = {
    **{getattr(np, p.name): p for p in LIBM},  # np.exp, np.arcsinh, np.arctan2...
    np.add: np_add,
    np.subtract: np_subtract,
    np.multiply: np_multiply,
    np.divide: np_divide,
    np.true_divide: np_divide,
    np.floor_divide: np_floor_divide,
    np.remainder: np_remainder,
    np.mod: np_remainder,
    np.power: np_power,
    np.float_power: np_float_power,
    np.negative: np_negative,
    np.positive: np_positive,
    np.reciprocal: np_reciprocal,
    np.square: np_square,
    np.abs: P.abs,
    np.fabs: np_fabs,
    np.sign: np_sign,
    np.deg2rad: np_deg2rad,
    np.radians: np_deg2rad,
    np.rad2deg: np_rad2deg,
    np.degrees: np_rad2deg,
    np.sinc: np_sinc,
    np.logaddexp: np_logaddexp,
    np.logaddexp2: np_logaddexp2,
    np.maximum: P.maximum,
    np.minimum: P.minimum,
    np.fmax: np_fmax,
    np.fmin: np_fmin,
    np.clip: np_clip,
    np.floor: P.floor,
    np.ceil: P.ceil,
    np.trunc: P.trunc,
    np.rint: P.rint,
    np.fix: P.trunc,
    np.round: np_round,
    np.isnan: np_isnan,
    np.isinf: np_isinf,
    np.isfinite: np_isfinite,
    np.nan_to_num: np_nan_to_num,
    np.equal: np_equal,
    np.not_equal: np_not_equal,
    np.less: np_less,
    np.less_equal: np_less_equal,
    np.greater: np_greater,
    np.greater_equal: np_greater_equal,
    np.logical_not: np_logical_not,
    np.logical_and: np_logical_and,
    np.logical_or: np_logical_or,
    np.logical_xor: np_logical_xor,
    np.where: np_where,
    np.bitwise_and: P.bitwise_and,
    np.bitwise_or: P.bitwise_or,
    np.bitwise_xor: P.bitwise_xor,
    np.invert: P.invert,
}
if hasattr(np, "around"):  # deprecated in NumPy 2
    NAMES[np.around] = np_round
