"""NumPy's elementwise functions (its ufuncs and their relatives).

The C math library's functions are primitives (myia.prim.mathfn), and so are the
arithmetic operators and the rounding functions; the others are written here over
primitives, so their derivatives come from the primitives' rules.  Where a formula
would lose what NumPy computes exactly (the log of a sum of exponentials overflowing,
sinc at 0, NaN ignored by fmax), it is written the way NumPy's C code is.

NumPy's functions of Python numbers alone compute on the NumPy scalars of their dtypes
and give a NumPy scalar: np.add(1, 0.5) is np.float64(1.5) and np.add(True, True) is
np.True_, where Python's `1 + 0.5` is the float 1.5 and `True + True` the int 2.  A
Python number next to an array or a NumPy scalar stays a Python number, which NumPy 2
does not promote (NEP 50: np.add(x32, 1.0) is float32).  The primitives that are
NumPy's functions (the C math library's, maximum, where, floor...) do that themselves;
those that are Python's operators (add, abs, eq...) are Python's on Python numbers, so
the functions here that use them first convert their operands when they are all Python
numbers (`_operand`, `_operands`).  Where NumPy's result has a dtype compiled code does
not have (np.square of a bool is an int8, np.deg2rad of one a float16), the function is
refused at compile time, as inference refuses the primitives.
"""

import math

import numpy as np

from ..errors import MyiaShapeError, MyiaTypeError, MyiaValueError
from ..prim import compile_time
from ..prim import ops as P
from ..prim.mathfn import LIBM
from .np_shape import as_array

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


# ---- the operands of NumPy's functions ----------------------------------------------------


def _same(x):
    return x


def _numpy_scalar(x):
    """A Python number as the NumPy scalar of its dtype (1.5: np.float64(1.5))."""
    return P.astype(x, P.dtype(x))


@compile_time
def _both(python1, python2):
    """1 where both operands are Python numbers (convert them), else 0."""
    return 1 if python1 and python2 else 0


def _operand(x):
    """The operand of a NumPy function of one argument (see the module's doc)."""
    return (_same, _numpy_scalar)[_both(P.python_number(x), True)](x)


def _operands(x1, x2):
    """The operands of a NumPy function of two arguments."""
    convert = (_same, _numpy_scalar)[_both(P.python_number(x1), P.python_number(x2))]
    return convert(x1), convert(x2)


@compile_time
def _not_bool(dtype, name, numpy_gives):
    """0 (an index), where NumPy's `name` of a `dtype` gives what compiled code has;
    for a bool it gives `numpy_gives`: refused."""
    if dtype == "bool":
        raise MyiaTypeError(f"np.{name} of a bool is {numpy_gives} in NumPy, which compiled "
                            f"code does not have",
                            hint="convert it first: x.astype(int) or x.astype(float)")
    return 0


@compile_time
def _not_bools(dtype1, dtype2, name, numpy_gives):
    """`_not_bool` for a function of two operands: refused where both are bools."""
    return _not_bool.impl(dtype1, name, numpy_gives) if dtype2 == "bool" else 0


# ---- arithmetic ---------------------------------------------------------------------------


def np_add(x1, x2):
    x1, x2 = _operands(x1, x2)
    return x1 + x2


def np_subtract(x1, x2):
    x1, x2 = _operands(x1, x2)
    return x1 - x2


def np_multiply(x1, x2):
    x1, x2 = _operands(x1, x2)
    return x1 * x2


def np_divide(x1, x2):
    x1, x2 = _operands(x1, x2)
    return x1 / x2


def np_floor_divide(x1, x2):
    x1, x2 = _operands(x1, x2)
    return x1 // x2


def np_remainder(x1, x2):
    x1, x2 = _operands(x1, x2)
    return x1 % x2


def np_power(x1, x2):
    x1, x2 = _operands(x1, x2)
    return x1 ** x2


def np_float_power(x1, x2):
    return P.astype(x1, "float64") ** P.astype(x2, "float64")


def np_negative(x):
    return -_operand(x)


def np_positive(x):
    x = _operand(x)
    return (x,)[_not_bool(P.dtype(x), "positive", "an error")]


def _int_reciprocal(x):
    # in integers, as NumPy's C code: 1 / x truncated, 0 unless x is 1 or -1
    return P.where(P.abs(x) == 1, x, 0)


def _float_reciprocal(x):
    return 1.0 / x


def np_reciprocal(x):
    x = _operand(x)
    kind = _is_int_kind(P.dtype(x)) + _not_bool(P.dtype(x), "reciprocal", "an int8")
    return (_float_reciprocal, _int_reciprocal)[kind](x)


def np_square(x):
    x = _operand(x)
    return (x * x,)[_not_bool(P.dtype(x), "square", "an int8")]


def np_abs(x):
    return P.abs(_operand(x))


def np_fabs(x):
    x = _operand(x)
    if _is_int_kind(P.dtype(x)):
        return P.astype(P.abs(x), _float_of_int(P.dtype(x), "fabs"))
    return P.abs(x)


@compile_time
def _float_of_int(dtype, name):
    """float64, NumPy's float of an integer dtype (of a bool it is a float16: refused)."""
    _not_bool.impl(dtype, name, "a float16")
    return "float64"


def np_sign(x):
    return P.sign(x)


# ---- angles -------------------------------------------------------------------------------


def np_deg2rad(x):
    x = _operand(x)
    return (x * (PI / 180.0),)[_not_bool(P.dtype(x), "deg2rad", "a float16")]


def np_rad2deg(x):
    x = _operand(x)
    return (x * (180.0 / PI),)[_not_bool(P.dtype(x), "rad2deg", "a float16")]


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
    x1, x2 = _operands(x1, x2)
    x1 = (x1,)[_not_bools(P.dtype(x1), P.dtype(x2), "logaddexp", "a float16")]
    big = P.maximum(x1, x2)
    d = P.abs(x1 - x2)
    return P.where(d != d, x1 + x2, big + P.log1p(P.exp(-d)))


def np_logaddexp2(x1, x2):
    x1, x2 = _operands(x1, x2)
    x1 = (x1,)[_not_bools(P.dtype(x1), P.dtype(x2), "logaddexp2", "a float16")]
    big = P.maximum(x1, x2)
    d = P.abs(x1 - x2)
    return P.where(d != d, x1 + x2, big + P.log1p(P.exp2(-d)) / LN2)


# ---- comparisons that ignore NaN, clipping ---------------------------------------------------


def np_fmax(x1, x2):
    return P.fmax(x1, x2)


def np_fmin(x1, x2):
    return P.fmin(x1, x2)


def np_clip(a, a_min, a_max):
    # NumPy makes `a` an array first (np.clip(1, 0, 2.5) is np.float64(1.0)); the bounds
    # stay what they are (np.clip(x32, 0, 2.5) is float32)
    a = _operand(a)
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
    a = _operand(a)
    a = (a,)[_not_bool(P.dtype(a), "round", "a float16")]
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
    x = _operand(x)
    return x != x


def np_isinf(x):
    return P.abs(_operand(x)) == math.inf


def np_isfinite(x):
    return P.abs(_operand(x)) < math.inf


def np_nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    x = _operand(x)
    if _is_int_kind(P.dtype(x)):
        return x
    big = _largest(P.dtype(x))
    hi = big if posinf is None else posinf
    lo = -big if neginf is None else neginf
    y = P.where(x != x, nan, x)
    return P.where(y == math.inf, hi, P.where(y == -math.inf, lo, y))


# ---- comparisons and logic ------------------------------------------------------------------


def np_equal(x1, x2):
    x1, x2 = _operands(x1, x2)
    return x1 == x2


def np_not_equal(x1, x2):
    x1, x2 = _operands(x1, x2)
    return x1 != x2


def np_less(x1, x2):
    x1, x2 = _operands(x1, x2)
    return x1 < x2


def np_less_equal(x1, x2):
    x1, x2 = _operands(x1, x2)
    return x1 <= x2


def np_greater(x1, x2):
    x1, x2 = _operands(x1, x2)
    return x1 > x2


def np_greater_equal(x1, x2):
    x1, x2 = _operands(x1, x2)
    return x1 >= x2


def np_logical_not(x):
    return P.not_(_operand(x))


def np_logical_and(x1, x2):
    x1, x2 = _operands(x1, x2)
    return P.mul(x1 != 0, x2 != 0)


def np_logical_or(x1, x2):
    x1, x2 = _operands(x1, x2)
    return P.not_(P.mul(x1 == 0, x2 == 0))


def np_logical_xor(x1, x2):
    x1, x2 = _operands(x1, x2)
    return (x1 != 0) != (x2 != 0)


def np_bitwise_and(x1, x2):
    x1, x2 = _operands(x1, x2)
    return P.bitwise_and(x1, x2)


def np_bitwise_or(x1, x2):
    x1, x2 = _operands(x1, x2)
    return P.bitwise_or(x1, x2)


def np_bitwise_xor(x1, x2):
    x1, x2 = _operands(x1, x2)
    return P.bitwise_xor(x1, x2)


def np_invert(x):
    return P.invert(_operand(x))


def np_where(condition, x, y):
    return P.where(condition, x, y)  # (of numbers, NumPy's 0-d array: a NumPy scalar)


@compile_time
def _select_checks(n_conds, n_choices, cond_dtypes):
    """np.select's own errors, with NumPy's words."""
    if n_conds != n_choices:
        raise MyiaValueError("list of cases must be same length as list of conditions")
    if n_conds == 0:
        raise MyiaValueError("select with an empty condition list is not possible")
    for i, dt in enumerate(cond_dtypes):
        if dt != "bool":
            raise MyiaTypeError(f"invalid entry {i} in condlist: should be boolean ndarray "
                                f"(got {dt})", hint="compare to make a mask: x > 0")
    return 0


@compile_time
def _select_dtype(dtypes, python):
    """The dtype of np.select's result: NumPy's result_type of the choices and the
    default, where a Python int or float is weak (NEP 50) and everything else an array."""
    samples = [{"int64": 0, "float64": 0.0}[dt] if py and dt != "bool" else np.empty(0, dt)
               for dt, py in zip(dtypes, python)]
    return np.result_type(*samples).name


@compile_time
def _select_shape(shapes):
    """The broadcast shape of all the conditions and choices of np.select."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise MyiaShapeError(f"np.select: the conditions and the choices cannot be broadcast "
                             f"together (shapes {', '.join(str(tuple(s)) for s in shapes)})"
                             ) from None


def np_select(condlist, choicelist, default=0):
    """The choice of the first true condition, else the default: np.where from the last
    condition to the first (differentiable in the choices and the default)."""
    conds = [as_array(c) for c in condlist]
    choices = [_array_like(c) for c in choicelist]
    check = _select_checks(len(conds), len(choices), tuple([P.dtype(c) for c in conds]))
    values = choices + [_array_like(default)]
    dtype = _select_dtype(tuple([P.dtype(c) for c in values]),
                          tuple([P.python_number(c) for c in values]))
    shape = _select_shape(tuple([P.shape(c) for c in conds + values]))
    out = P.broadcast_to(as_array(P.astype(values[-1], dtype)), shape)
    for cond, choice in zip(reversed(conds), reversed(choices)):
        out = P.where(cond, P.astype(choice, dtype), out)
    return (out,)[check]


def _array_like(x):
    """A number or an array as it is; a list or a tuple as an array."""
    if P.kind_of(x) is None:
        return x
    return as_array(x)


# ---- the complex parts of real values ---------------------------------------------------------


@compile_time
def _python_bool(python_number, dtype):
    """1 for a Python bool (whose .real and .imag are ints), else 0."""
    return 1 if python_number and dtype == "bool" else 0


@compile_time
def _python_zero(dtype):
    """The .imag of a Python number of that dtype: 0.0 for a float, 0 for an int or a bool."""
    return 0.0 if dtype == "float64" else 0


def np_real(val):
    # val.real: the value itself for real numbers and arrays (a Python bool's is an int)
    val = _array_like(val)
    return (_same, P.to_int)[_python_bool(P.python_number(val), P.dtype(val))](val)


def _imag_of_python(val):
    return _python_zero(P.dtype(val))


def _imag_of_numpy(val):
    return P.astype(P.zeros_like(val), P.dtype(val))


def np_imag(val):
    # val.imag: zeros of the same dtype and shape for real values (0 for a Python int)
    val = _array_like(val)
    return (_imag_of_numpy, _imag_of_python)[_both(P.python_number(val), True)](val)


def np_conjugate(x):
    # a ufunc: a Python number becomes a NumPy scalar, a 0-d array too; of a bool it is
    # an int8
    x = _operand(_array_like(x))
    x = (x,)[_not_bool(P.dtype(x), "conjugate", "an int8")]
    if P.ndim(x) == 0:
        return P.array_to_scalar(x)
    return x


NAMES = {
    # np.exp, np.arcsinh, np.arctan2... (erf, erfc, gammaln: scipy.special, lib.scipy_special)
    **{getattr(np, p.name): p for p in LIBM if hasattr(np, p.name)},
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
    np.abs: np_abs,
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
    np.select: np_select,
    np.real: np_real,
    np.imag: np_imag,
    np.conjugate: np_conjugate,  # (np.conj is np.conjugate)
    np.bitwise_and: np_bitwise_and,
    np.bitwise_or: np_bitwise_or,
    np.bitwise_xor: np_bitwise_xor,
    np.invert: np_invert,
}
if hasattr(np, "around"):  # deprecated in NumPy 2
    NAMES[np.around] = np_round
