"""Transforms of NumPy ufuncs and `math` functions that Myia knows, passed directly,
as JAX takes `jnp.sin`: `myia.grad(np.sin)` was "cannot parse `sin`: it is a builtin"."""

import math

import numpy as np
import pytest

import myia
from myia import MyiaSourceError


def central(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize("fn", [np.sin, np.tanh, np.exp, math.exp, math.log1p, np.arctan])
def test_grad_jvp_jet_and_hessian_of_a_library_function(fn, backend):
    x = 0.7
    d1 = central(fn, x)
    d2 = central(lambda u: central(fn, u, 1e-4), x, 1e-4)
    assert myia.compile(fn, backend)(x) == pytest.approx(fn(x), rel=1e-12)
    assert myia.compile(myia.grad(fn), backend)(x) == pytest.approx(d1, rel=1e-7)
    value, tangent = myia.jvp(fn, (x,), (1.0,))
    assert value == pytest.approx(fn(x), rel=1e-12) and tangent == pytest.approx(d1, rel=1e-7)
    coefficients = myia.jet(fn, 2)(x)
    assert coefficients[1] == pytest.approx(d1, rel=1e-7)
    assert coefficients[2] == pytest.approx(d2, rel=1e-4)
    assert myia.hessian(fn)(x) == pytest.approx(coefficients[2], rel=1e-12)


def test_a_binary_ufunc_differentiates_in_each_argument(backend):
    g = myia.compile(myia.grad(np.arctan2, (0, 1)), backend)
    dy, dx = g(1.0, 2.0)
    assert dy == pytest.approx(2.0 / 5.0) and dx == pytest.approx(-1.0 / 5.0)


def test_a_function_myia_does_not_map_is_still_refused():
    with pytest.raises(MyiaSourceError, match="cannot parse `print`"):
        myia.grad(print)(1.0)


def test_in_a_kernel_cell():
    from myia_kernel.session import Session

    s = Session(backend="vm")
    r = s.execute("jvp(np.sin, (1.0,), (1.0,))")
    assert r.value == pytest.approx((math.sin(1.0), math.cos(1.0)))
    r = s.execute("grad(np.tanh)(0.5)")
    assert r.value == pytest.approx(1.0 - math.tanh(0.5) ** 2)
