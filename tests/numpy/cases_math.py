"""Elementwise functions (issue 18, ufuncs): cases for tests/numpy/test_math.py.

Everything above `# ---- cases` is machinery; below, subset code written with `np.`
(re-executed with autograd.numpy for the reference gradients).
"""

import numpy as np

from .harness import collector

CASES, case = collector()
_rng = np.random.default_rng(0)


def rand(*shape):
    return _rng.standard_normal(shape)


def unit(*shape):
    """In (-0.9, 0.9): inside the domain of arcsin, arctanh..."""
    return _rng.uniform(-0.9, 0.9, shape)


def pos(*shape):
    """In [0.5, 2.0)."""
    return _rng.uniform(0.5, 2.0, shape)


# ---- cases


@case("exp", rand(3, 4))
def exp_(x):
    return np.exp(x)


@case("exp2", rand(3, 4))
def exp2_(x):
    return np.exp2(x)


@case("expm1", rand(5) * 1e-4)
def expm1_(x):
    return np.expm1(x)


@case("log", pos(3, 4))
def log_(x):
    return np.log(x)


@case("log2", pos(3, 4))
def log2_(x):
    return np.log2(x)


@case("log10", pos(3, 4))
def log10_(x):
    return np.log10(x)


@case("log1p", pos(3, 4) * 1e-3)
def log1p_(x):
    return np.log1p(x)


@case("sqrt", pos(3, 4))
def sqrt_(x):
    return np.sqrt(x)


@case("sin", rand(3, 4))
def sin_(x):
    return np.sin(x)


@case("cos", rand(3, 4))
def cos_(x):
    return np.cos(x)


@case("tan", unit(3, 4))
def tan_(x):
    return np.tan(x)


@case("arcsin", unit(3, 4))
def arcsin_(x):
    return np.arcsin(x)


@case("arccos", unit(3, 4))
def arccos_(x):
    return np.arccos(x)


@case("arctan", rand(3, 4))
def arctan_(x):
    return np.arctan(x)


@case("sinh", rand(3, 4))
def sinh_(x):
    return np.sinh(x)


@case("cosh", rand(3, 4))
def cosh_(x):
    return np.cosh(x)


@case("tanh", rand(3, 4))
def tanh_(x):
    return np.tanh(x)


@case("arcsinh", rand(3, 4))
def arcsinh_(x):
    return np.arcsinh(x)


@case("arccosh", pos(3, 4) + 1.0)
def arccosh_(x):
    return np.arccosh(x)


@case("arctanh", unit(3, 4))
def arctanh_(x):
    return np.arctanh(x)


@case("arctan2", rand(3, 4), rand(3, 4))
def arctan2_(y, x):
    return np.arctan2(y, x)


@case("arctan2", rand(3, 1), rand(4))
def arctan2_broadcast(y, x):
    return np.arctan2(y, x)


@case("hypot", rand(3, 4), rand(3, 4))
def hypot_(x, y):
    return np.hypot(x, y)


@case("hypot", rand(3, 4), 0.5)
def hypot_scalar(x, y):
    return np.hypot(x, y)


# ---- arithmetic ufuncs as functions


@case("add", rand(3, 4), rand(4))
def add_(x, y):
    return np.add(x, y)


@case("subtract", rand(3, 4), rand(3, 1))
def subtract_(x, y):
    return np.subtract(x, y)


@case("multiply", rand(3, 4), rand(4))
def multiply_(x, y):
    return np.multiply(x, y)


@case("divide", rand(3, 4), pos(3, 4))
def divide_(x, y):
    return np.divide(x, y)


@case("true_divide", rand(3, 4), pos(4))
def true_divide_(x, y):
    return np.true_divide(x, y)


@case("power", pos(3, 4), rand(3, 4))
def power_(x, y):
    return np.power(x, y)


@case("float_power", pos(3, 4), rand(4), autograd=False)
def float_power_(x, y):
    return np.float_power(x, y)


@case("negative", rand(3, 4))
def negative_(x):
    return np.negative(x)


@case("positive", rand(3, 4), autograd=False)
def positive_(x):
    return np.positive(x)


@case("reciprocal", pos(3, 4))
def reciprocal_(x):
    return np.reciprocal(x)


@case("remainder", pos(3, 4) * 3.0, pos(3, 4))
def remainder_(x, y):
    return np.remainder(x, y)


@case("mod", pos(3, 4) * 3.0, 0.7)
def mod_(x, y):
    return np.mod(x, y)


@case("floor_divide", pos(3, 4) * 3.0, pos(3, 4), order=0)
def floor_divide_(x, y):
    return np.floor_divide(x, y)


@case("square", rand(3, 4))
def square_(x):
    return np.square(x)


@case("square", np.arange(6).reshape(2, 3), order=0)
def square_int(x):
    return np.square(x)


@case("abs", rand(3, 4))
def abs_(x):
    return np.abs(x)


@case("absolute", rand(3, 4))
def absolute_(x):
    return np.absolute(x)


@case("fabs", rand(3, 4))
def fabs_(x):
    return np.fabs(x)


@case("fabs", np.array([-3, 2, 0]), order=0)
def fabs_int(x):
    return np.fabs(x)


@case("sign", rand(3, 4), order=0)
def sign_(x):
    return np.sign(x)


# ---- angles, sinc, sums of exponentials


@case("deg2rad", rand(3, 4) * 90.0)
def deg2rad_(x):
    return np.deg2rad(x)


@case("radians", rand(3, 4) * 90.0)
def radians_(x):
    return np.radians(x)


@case("rad2deg", rand(3, 4))
def rad2deg_(x):
    return np.rad2deg(x)


@case("degrees", rand(3, 4))
def degrees_(x):
    return np.degrees(x)


@case("sinc", rand(3, 4))
def sinc_(x):
    return np.sinc(x)


@case("logaddexp", rand(3, 4), rand(3, 4))
def logaddexp_(x, y):
    return np.logaddexp(x, y)


@case("logaddexp", rand(3, 4) * 800.0, rand(4) * 800.0)
def logaddexp_far_apart(x, y):
    return np.logaddexp(x, y)


@case("logaddexp2", rand(3, 4), rand(4))
def logaddexp2_(x, y):
    return np.logaddexp2(x, y)


# ---- maximum, minimum, NaN-ignoring ones, clip, where


@case("maximum", rand(3, 4), rand(4))
def maximum_(x, y):
    return np.maximum(x, y)


@case("minimum", rand(3, 4), 0.1)
def minimum_(x, y):
    return np.minimum(x, y)


@case("fmax", rand(3, 4), rand(3, 4))
def fmax_(x, y):
    return np.fmax(x, y)


@case("fmin", rand(3, 4), rand(4))
def fmin_(x, y):
    return np.fmin(x, y)


@case("fmax", np.array([1.0, np.nan, np.nan, -2.0]), np.array([np.nan, 3.0, np.nan, 1.0]),
      order=0)
def fmax_nan(x, y):
    return np.fmax(x, y)


@case("fmin", np.array([1.0, np.nan, np.nan, -2.0]), np.array([np.nan, 3.0, np.nan, 1.0]),
      order=0)
def fmin_nan(x, y):
    return np.fmin(x, y)


@case("clip", rand(3, 4))
def clip_(x):
    return np.clip(x, -0.5, 0.7)


@case("clip", rand(3, 4))
def clip_below_only(x):
    return np.clip(x, -0.5, None)


@case("clip", rand(3, 4), rand(4) * 0.1, argnums=(0,))
def clip_by_array(x, lo):
    return np.clip(x, lo, 1.0)


@case("where", rand(3, 4), rand(3, 4))
def where_(x, y):
    return np.where(x > y, x * y, x - y)


# ---- rounding (piecewise constant: values only; gradients are zero)


@case("floor", rand(3, 4) * 3.0, order=0)
def floor_(x):
    return np.floor(x)


@case("ceil", rand(3, 4) * 3.0, order=0)
def ceil_(x):
    return np.ceil(x)


@case("trunc", rand(3, 4) * 3.0, order=0)
def trunc_(x):
    return np.trunc(x)


@case("rint", np.array([0.5, 1.5, 2.5, -0.5, -1.5, 0.49]), order=0)
def rint_(x):
    return np.rint(x)


@case("fix", rand(3, 4) * 3.0, order=0)
def fix_(x):
    return np.fix(x)


@case("round", np.array([0.5, 1.5, 2.5, -0.5, 1.234567, -7.777]), order=0)
def round_(x):
    return np.round(x)


@case("round", np.array([1.234567, -7.777, 123.456]), order=0)
def round_decimals(x):
    return np.round(x, 2)


@case("round", np.array([1234.5, -777.0, 150.0]), order=0)
def round_negative_decimals(x):
    return np.round(x, -2)


@case("round", np.array([1234, -777, 150]), order=0)
def round_int(x):
    return np.round(x, -2)


# ---- floating-point classes, nan_to_num


SPECIAL = np.array([1.0, np.nan, np.inf, -np.inf, -0.5, 0.0])


@case("isnan", SPECIAL, order=0)
def isnan_(x):
    return np.isnan(x)


@case("isinf", SPECIAL, order=0)
def isinf_(x):
    return np.isinf(x)


@case("isfinite", SPECIAL, order=0)
def isfinite_(x):
    return np.isfinite(x)


@case("nan_to_num", SPECIAL, order=0)
def nan_to_num_(x):
    return np.nan_to_num(x)


@case("nan_to_num", SPECIAL, order=0)
def nan_to_num_values(x):
    return np.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0)


@case("nan_to_num", rand(3, 4))
def nan_to_num_finite(x):
    return np.nan_to_num(x)


# ---- comparisons and logic (values only)


@case("greater", rand(3, 4), rand(4), order=0)
def greater_(x, y):
    return np.greater(x, y)


@case("less_equal", rand(3, 4), 0.0, order=0)
def less_equal_(x, y):
    return np.less_equal(x, y)


@case("equal", np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 3.0]), order=0)
def equal_(x, y):
    return np.equal(x, y)


@case("logical_and", rand(3, 4), rand(3, 4), order=0)
def logical_and_(x, y):
    return np.logical_and(x > 0, y > 0)


@case("logical_or", rand(3, 4), rand(3, 4), order=0)
def logical_or_(x, y):
    return np.logical_or(x > 0, y > 0)


@case("logical_xor", rand(3, 4), rand(3, 4), order=0)
def logical_xor_(x, y):
    return np.logical_xor(x > 0, y > 0)


@case("logical_not", rand(3, 4), order=0)
def logical_not_(x):
    return np.logical_not(x > 0)


# ---- float32 stays float32, integers promote as in NumPy


@case("exp", rand(3, 4).astype(np.float32), rtol=1e-6, grad_rtol=1e-4)
def exp_float32(x):
    return np.exp(x) * 2.0 + np.arcsinh(x)


@case("arctan2", rand(3, 4).astype(np.float32), rand(4).astype(np.float32), rtol=1e-6,
      grad_rtol=1e-4)
def arctan2_float32(y, x):
    return np.arctan2(y, x)


@case("sqrt", np.arange(1, 7).reshape(2, 3), order=0)
def sqrt_int(x):
    return np.sqrt(x) + np.log1p(x)
