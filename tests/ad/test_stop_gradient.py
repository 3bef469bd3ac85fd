"""myia.stop_gradient: a value held constant by every derivative (JAX's
`lax.stop_gradient`), in every mode, order and nesting, from Python and inside subset
code; values against autograd with the stopped value written as a constant, on vm
and llvm."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import myia
from myia import stop_gradient
from myia.pipeline import Pipeline
from myia.prim import ops as P

pytestmark = pytest.mark.usefixtures("backend")

X = np.array([0.3, -1.2, 0.8])


def damped(x):
    # the weights depend on x, but only their value counts: a derivative sees them
    # as the constant C = cos(x) at the point
    return np.sum(np.sin(x) * stop_gradient(np.cos(x)) + 0.5 * x * x)


def damped_at(c):
    """damped with its stopped value fixed to c (what every derivative must see)."""
    return lambda x: anp.sum(anp.sin(x) * c + 0.5 * x * x)


def test_every_transform_sees_a_constant():
    ref = damped_at(np.cos(X))
    np.testing.assert_allclose(myia.grad(damped)(X), autograd.grad(ref)(X), rtol=1e-14)
    np.testing.assert_allclose(myia.hessian(damped)(X), autograd.hessian(ref)(X),
                               rtol=1e-14, atol=1e-15)
    t = np.array([1.0, 0.5, -2.0])
    y, dy = myia.jvp(damped, (X,), (t,))
    assert y == pytest.approx(float(ref(X)), rel=1e-14)
    assert dy == pytest.approx(float(autograd.grad(ref)(X) @ t), rel=1e-14)
    # Taylor mode along a scalar: the stopped value keeps its value, no derivative
    series = myia.jet(lambda s: damped(X * s), 3)(1.0)
    d1 = autograd.grad(lambda s: ref(X * s))
    d2 = autograd.grad(d1)
    d3 = autograd.grad(d2)
    np.testing.assert_allclose(series, [ref(X), d1(1.0), d2(1.0), d3(1.0)], rtol=1e-13)


def stopped_inside(x):
    # inside subset code, nested: derivatives of functions that stop part of their input
    inner = myia.grad(lambda z: z * z * stop_gradient(z))(x)  # 2 z c at c = z = x
    return inner + myia.jvp(lambda z: z * stop_gradient(z * z), (x,), (1.0,))[1]  # + x^2


def test_inside_subset_code_and_differentiated_again():
    x = 1.5
    assert myia.compile(stopped_inside)(x) == pytest.approx(3 * x * x, rel=1e-15)
    # the outer derivative sees 2 x stop(x) + stop(x^2): 2 stop(x) = 2 x, as JAX
    assert myia.grad(stopped_inside)(x) == pytest.approx(2 * x, rel=1e-15)


def pair_stopped(x):
    a, b = stop_gradient((x, x * x))  # a container: all of it held
    return a * b + x


def test_a_container_is_held_whole_and_the_program_keeps_nothing_of_it():
    assert myia.grad(pair_stopped)(2.0) == 1.0
    assert myia.compile(pair_stopped)(2.0) == 10.0
    assert stop_gradient((1.0, X))[1] is X  # from Python: the value itself
    # once every transform has seen it, the optimizer removes it
    optimized, _ = Pipeline().optimized(myia.grad(pair_stopped), (2.0,))
    from myia.ir import manage

    mng = manage(optimized)
    assert not any(n.is_apply(P.stop_gradient) for g in mng.graphs for n in mng.nodes(g))
