"""Dtypes (issue 18, item 4): float32 end to end, integer and bool arrays, NumPy's
promotion rules.  The harness compares dtypes exactly, and the gradient of a float32
argument must be float32."""

import numpy as np

from .harness import collector

CASES, case = collector()
_rng = np.random.default_rng(4)


def f32(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


def f64(*shape):
    return _rng.standard_normal(shape)


INTS = np.arange(-3, 9).reshape(3, 4)
BOOLS = np.array([[True, False, True, True], [False, False, True, False],
                  [True, True, False, True]])

F32 = dict(rtol=1e-5, grad_rtol=1e-3)

# ---- cases


@case("float32", f32(3, 4), f32(4), **F32)
def f32_arithmetic(x, y):
    return (x * y + x / (1.5 + y * y) - 2.0 * x) ** 2


@case("float32", f32(3, 4), **F32)
def f32_math(x):
    return np.tanh(x) * np.exp(-x * x) + np.sqrt(np.abs(x) + 1.0) + np.log1p(x * x)


@case("float32", f32(3, 4), f32(4, 2), **F32)
def f32_matmul(x, w):
    return np.tanh(x @ w)


@case("float32", f32(3, 4), **F32)
def f32_reductions(x):
    return np.sum(x * x, axis=0) + np.max(x, axis=0) + np.mean(x)


@case("float32", f32(3, 4), f64(4), **F32)
def f32_with_f64_promotes(x, y):
    return x * y  # float32 with float64: float64


@case("float32", f32(3, 4), **F32)
def f32_with_python_scalars_stays(x):
    return x * 3 + 0.5  # Python numbers do not promote (NEP 50)


@case("int64", INTS, order=0)
def int_arithmetic(x):
    return x * 3 + x // 2 - x % 5 + x ** 2


@case("int64", INTS, order=0)
def int_true_division_is_float(x):
    return x / 4 + np.sqrt(x * x)


@case("int64", INTS, f64(3, 4))
def int_with_float(n, y):
    return n * y + n


@case("int64", INTS, order=0)
def int_reductions(x):
    return np.sum(x, axis=1) + np.max(x, axis=0)[0] + np.sum(x)


@case("bool", BOOLS, order=0)
def bool_logic(b):
    return (b & ~b) | (b ^ True)


@case("bool", BOOLS, order=0)
def bool_sum_counts(b):
    return np.sum(b, axis=0) + np.sum(b)


@case("bool", BOOLS, f64(3, 4))
def bool_mask(b, y):
    return np.where(b, y, -y) + b * y


@case("bool", BOOLS, order=0)
def bool_arithmetic_promotes(b):
    return b + b, b * 2, b * 1.5


@case("bitwise_and", INTS, order=0)
def int_bitwise(n):
    return (n & 6) | (n ^ 3) + ~n + np.bitwise_and(n, 5) + np.invert(n)


@case("bitwise_or", BOOLS, order=0)
def bool_bitwise_functions(b):
    return np.bitwise_or(b, ~b) ^ np.bitwise_xor(b, True)
