"""NumPy code as people write it: `...` and None in every indexing position, np.real,
np.imag and np.conj of real values, the scalar types as casts (np.float64(x),
np.int64(x)), np.select, and the functions of the `operator` module as values (with
functools.reduce or a function of the user's): cases for
tests/numpy/test_written_as_people_do.py.

Everything above `# ---- cases` is machinery; below, subset code written with `np.`
(re-executed with autograd.numpy for the reference gradients: autograd has np.real,
np.imag, np.conj and np.select, and its arrays work with `operator` and
functools.reduce).  A cast to a NumPy scalar type is not differentiable in autograd
(`autograd=False`: finite differences only).  Most indexings are linear, so their
second order is zero: the cases that multiply an indexing by its input make it a
quadratic form, whose second order goes through the transpose of the rule.
"""

import functools
import operator
from operator import add, mul

import numpy as np

from .harness import collector

CASES, case = collector()
_rng = np.random.default_rng(2024)


def rand(*shape):
    return _rng.standard_normal(shape)


#: a global index array (a constant of the programs)
PERM = np.array([2, 0, 1, 2])


# ---- cases


# `...` and None in every position: the cases, then more


@case("ellipsis", rand(3))
def ellipsis_new_first_axis(mu):
    return mu[None, ...]


@case("ellipsis", rand(2, 3, 4))
def ellipsis_last_int(x):
    return x[..., 0]


@case("ellipsis", rand(2, 3, 4))
def ellipsis_between_int_and_none(x):
    return x[0, ..., None]


@case("ellipsis", rand(2, 3, 4))
def ellipsis_last_slice(x):
    return x[..., 1:3]


@case("ellipsis", rand(2, 3, 4))
def ellipsis_between_nones(x):
    return x[None, :, ..., None]


@case("ellipsis", rand(2, 3, 4))
def ellipsis_alone(x):
    return x[...] * x


@case("ellipsis", rand(2, 3, 4))
def ellipsis_of_nothing(x):
    # `...` where the other items index every axis: it stands for no axis
    return x[1, ..., 2, 0:3]


@case("ellipsis", rand(3))
def ellipsis_zero_d(v):
    # NumPy's v[0, ...] is a 0-d array (v[0] is a scalar)
    return v[0, ...] * v


@case("ellipsis", rand(2, 3, 4))
def ellipsis_negative_step(x):
    return x[..., ::-1] * x


@case("ellipsis", rand(2, 3, 4))
def ellipsis_none_after(x):
    return x[..., None, 1] * x[..., 0, None]


@case("ellipsis", rand(3, 4))
def ellipsis_centering(x):
    m = np.mean(x, axis=-1)[..., None]
    return (x - m) * x


@case("ellipsis", rand(3), rand(4))
def ellipsis_outer(u, v):
    return u[..., None] * v[None, ...]


@case("ellipsis", rand(2, 3, 4), 1)
def ellipsis_run_time_int(x, i):
    return x[..., i] * x[i, ...][:, 0]


@case("ellipsis", rand(2, 3, 4), 1)
def ellipsis_run_time_slice(x, i):
    return x[i, ..., i:i + 2]


@case("ellipsis", rand(2, 3, 3))
def ellipsis_index_array(x):
    return x[..., PERM[:3]] * x


@case("ellipsis", rand(3, 4))
def ellipsis_index_list(x):
    return x[[0, 2, 2], ...]


@case("ellipsis", rand(2, 3, 4))
def ellipsis_in_a_variable(x):
    k = (Ellipsis, 1)
    return x[k]


# np.real, np.imag, np.conj of real values


@case("real", rand(2, 3))
def real_imag_conj(x):
    return np.real(x) * x + np.imag(x) + np.conj(x) * np.conjugate(x)


@case("real", rand(3), rand(3))
def real_of_conjugate_product(x, y):
    return np.real(np.sum(x * np.conj(y))) * np.real(x)


@case("real", 1.5)
def real_of_a_number(a):
    return np.real(a) * np.conj(a) + np.imag(a)


@case("real", rand(4))
def abs_squared(x):
    return np.real(x * np.conj(x))


# the scalar types as casts


@case("float64", 2.5, autograd=False)
def float64_of_a_number(a):
    return np.float64(a) * a


@case("float64", rand(3), autograd=False)
def float64_of_an_array(x):
    return np.float64(x) * x


@case("float64", rand(3), autograd=False)
def float64_of_an_element(x):
    return np.float64(x[1]) * x


@case("float32", rand(3), order=0, rtol=1e-6)
def float32_of_an_array(x):
    return np.float32(x) * 2.0


@case("float32", 2.5, order=0, rtol=1e-6)
def float32_of_a_number(a):
    return np.float32(a)


@case("int64", 2.7, order=0)
def int64_of_a_positive_float(a):
    return np.int64(a)


@case("int64", -2.7, order=0)
def int64_truncates_toward_zero(a):
    return np.int64(a)


@case("int64", rand(5) * 4, order=0)
def int64_of_an_array(x):
    return np.int64(x)


@case("int64", rand(4), 2.7, argnums=(0,))
def int64_as_an_index(x, t):
    return x[np.int64(t)] * x


@case("bool_", rand(4), order=0)
def bool_of_an_array(x):
    return np.bool_(x > 0) & np.bool_(np.int64(x * 3))


# np.select: the first true condition wins


@case("select", rand(6))
def select_tuples(x):
    return np.select((x > 0.5, x < -0.5), (x * 2, x ** 2), default=0)


@case("select", rand(6))
def select_lists_overlapping(x):
    return np.select([x > 0, x > -1], [x, x * x], x * 3)


@case("select", rand(2, 3), rand(3))
def select_broadcast(x, y):
    return np.select([x > 0, y > 0], [x * y, y], default=1.5)


@case("select", rand(5))
def select_scalar_choice(x):
    return np.select([x < 0], [0.0], x) * x


@case("select", rand(5))
def select_piecewise(x):
    # a piecewise polynomial, as people write it
    return np.select([x < -1, x < 1], [-2 * x - 1, x * x], default=2 * x - 1)


# the operator module as values


def apply(f, a, b):
    return f(a, b)


def apply1(f, a):
    return f(a)


@case("operator", rand(3), rand(3))
def operator_arithmetic(x, y):
    return (apply(operator.add, x, y) * apply(operator.sub, x, y)
            + apply(operator.mul, x, 2.0) + apply(operator.truediv, y, 3.0)
            + apply1(operator.neg, x) + apply(operator.pow, x, 2))


@case("operator", rand(3), rand(3))
def operator_imported_names(x, y):
    return apply(add, x, y) * apply(mul, x, y)


@case("operator", rand(2, 3), rand(3, 2))
def operator_matmul(a, b):
    return apply(operator.matmul, a, b)


@case("operator", rand(4), rand(4))
def operator_comparisons(x, y):
    lt = apply(operator.lt, x, y)
    ge = apply(operator.ge, x, 0.0)
    return np.where(lt, x, y) + np.where(ge, x * x, 0.0)


@case("operator", rand(3), rand(3))
def operator_reduce(x, y):
    return functools.reduce(operator.mul, [x, y, x]) + functools.reduce(add, (x, y), 1.0)


@case("operator", rand(4, 3))
def operator_reduce_rows(x):
    return functools.reduce(operator.add, x) * x[0]


@case("operator", rand(2, 3, 4))
def operator_getitem(x):
    return operator.getitem(x, (Ellipsis, 1)) * apply(operator.getitem, x, 0)[:, 1]


@case("operator", rand(4, 3))
def operator_getitem_list(x):
    return operator.getitem(x, [0, 2]) * x[1:3]


@case("operator", rand(3))
def operator_unary(x):
    return apply1(operator.abs, x) * apply1(operator.neg, x)
