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
