"""`f(*args)`: a call whose positional arguments come from a tuple, a list or an
array's rows (myia.lib.unpacking), as Python runs it: values against Python on vm and
llvm, derivatives against autograd, and the mutation check following the elements."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import myia
from myia.errors import MyiaSyntaxError, MyiaTypeError

from .helpers import check_error

pytestmark = pytest.mark.usefixtures("backend")


def affine(x, a, b=0.5):
    return a * x + b


def from_a_tuple(x, ab):
    return affine(x, *ab)


def between_others(x, rest):
    return affine(*(x,), *rest, 2.0)  # two starred, then a plain one


def with_a_default(x, t):
    return affine(x, *t)  # b from its default


def rows_of_an_array(m):
    return np.maximum(*m)  # a primitive, each row an argument


def methods(x, d):
    shape = x.shape
    return np.reshape(x, (-1,)).reshape(*shape).sum(*(0,)) * d.get(*("k", 1.0))


def collects(*values):
    return values[0] * values[-1]


def into_a_star_parameter(x, lst):
    return collects(x, *lst)


X = np.array([0.5, -1.0, 2.0])


@pytest.mark.parametrize("fn, args", [
    (from_a_tuple, (X, (2.0, 3.0))),
    (between_others, (X, [3.0])),
    (with_a_default, (X, (4.0,))),
    (rows_of_an_array, (np.array([[1.0, -2.0], [0.5, 3.0]]),)),
    (methods, (np.arange(6.0).reshape(2, 3), {"k": 3.0})),
    (into_a_star_parameter, (X, [2.0, 7.0])),
], ids=lambda v: getattr(v, "__name__", ""))
def test_values_are_python_s(fn, args):
    np.testing.assert_allclose(myia.compile(fn)(*args), fn(*args), rtol=1e-15)


def scaled_sum(x, t):
    return np.sum(affine(np.sin(x), *t) ** 2)


def scaled_sum_ag(x, t):
    return anp.sum((t[0] * anp.sin(x) + t[1]) ** 2)


def test_derivatives_flow_through_the_unpacked_arguments():
    t = (1.5, -0.25)
    want = autograd.grad(scaled_sum_ag)(X, t)
    np.testing.assert_allclose(myia.grad(scaled_sum)(X, t), want, rtol=1e-14)
    dt = myia.grad(scaled_sum, 1)(X, t)
    want_t = autograd.grad(scaled_sum_ag, 1)(X, t)
    np.testing.assert_allclose(np.array(dt), np.array(want_t), rtol=1e-14)
    # second order: the Hessian's diagonal, by jacfwd of the gradient
    H = myia.hessian(scaled_sum)(X, t)
    np.testing.assert_allclose(H, autograd.hessian(scaled_sum_ag)(X, t), rtol=1e-13)


def test_too_many_arguments_is_a_located_error():
    def many(x):
        return affine(*(x,) * 17)

    with pytest.raises(MyiaTypeError) as e:
        myia.compile(many)(1.0)
    check_error(e.value, many, "affine(*(x,) * 17)", "17 unpacked arguments",
                "at most 16")

    def gathered(x):  # (a `*values` parameter takes any number)
        return collects(*(x,) * 17)

    assert myia.compile(gathered)(3.0) == 9.0


def identity(a):
    return a


def test_an_element_passed_through_a_star_is_still_the_caller_s():
    # Python: y is x itself, and `y[0] = 5.0` would change the caller's array
    def aliased(x):
        y = identity(*(x,))
        y[0] = 5.0
        return y + x

    with pytest.raises(MyiaSyntaxError) as e:
        myia.compile(aliased)(X)
    check_error(e.value, aliased, "y[0] = 5.0", "holds the argument `x`", at="y[0]")

    def copied(x):
        y = identity(*[np.copy(x)])
        y[0] = 5.0
        return y + x

    np.testing.assert_allclose(myia.compile(copied)(X), copied(X.copy()), rtol=1e-15)
