"""myia.custom_jvp: a forward-mode derivative given by the user's rule (JAX's
`jax.custom_jvp`): jvp and jacfwd use the rule; grad, vjp and jacrev use its
transpose (J of the rule's tangent map); the transforms agree with each other and a
second derivative differentiates the rule; from Python and inside subset code, on vm
and llvm.  Each rule differs from the derivative of the function's body (a factor, or
a finite value where the body's is nan), so ignoring it would fail."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import myia
from myia import custom_jvp
from myia.errors import MyiaGradError, MyiaTypeError

pytestmark = pytest.mark.usefixtures("backend")


def sigmoid(x):
    return 1.0 / (1.0 + anp.exp(-x))


def softplus0(x):
    return np.log(1.0 + np.exp(x))


softplus = custom_jvp(softplus0)


def softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softplus(x), t / (1.0 + np.exp(-x))  # calls the custom function itself


softplus.defjvp(softplus_jvp)


def scaled_mul0(x, y):
    return x * y


def scaled_mul_jvp(primals, tangents):
    (x, y), (dx, dy) = primals, tangents
    return x * y, 3.0 * (dx * y + x * dy)  # three times the product rule


scaled_mul = custom_jvp(scaled_mul0, jvp=scaled_mul_jvp)
X = np.array([0.5, -1.0, 2.0])


def test_every_mode_uses_the_rule():
    with np.errstate(over="ignore", invalid="ignore"):
        assert np.isnan(myia.grad(softplus0)(800.0))
        assert myia.grad(softplus)(800.0) == 1.0
        assert myia.jvp(softplus, (800.0,), (2.0,))[1] == 2.0
    assert myia.jvp(softplus, (0.3,), (2.0,)) == pytest.approx(
        (np.log1p(np.exp(0.3)), 2.0 * sigmoid(0.3)), rel=1e-15)
    assert myia.grad(scaled_mul, (0, 1))(2.0, 5.0) == (15.0, 6.0)
    _, vjp_fn = myia.vjp(scaled_mul, X, 2.0)
    dx, dy = vjp_fn(np.ones(3))
    np.testing.assert_allclose(dx, 6.0 * np.ones(3))
    assert dy == pytest.approx(3.0 * np.sum(X))
    j = 3.0 * 2.0 * np.diag(X)  # of v -> scaled_mul(v, v)
    np.testing.assert_allclose(myia.jacfwd(lambda v: scaled_mul(v, v))(X), j, atol=1e-15)
    np.testing.assert_allclose(myia.jacrev(lambda v: scaled_mul(v, v))(X), j, atol=1e-15)


def test_transforms_agree_and_differentiate_the_rule():
    def f(x):
        return np.sum(softplus(x * x) * x)

    # with the rule written as autograd would differentiate it
    ref = lambda x: anp.sum(anp.log(1.0 + anp.exp(x * x)) * x)  # noqa: E731
    x = np.array([0.3, -0.8, 1.1])
    np.testing.assert_allclose(myia.grad(f)(x), autograd.grad(ref)(x), rtol=1e-14)
    h = autograd.hessian(ref)(x)
    np.testing.assert_allclose(myia.hessian(f)(x), h, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(myia.jacfwd(myia.grad(f))(x), h, rtol=1e-13, atol=1e-15)
    t = np.array([1.0, -0.5, 0.25])
    np.testing.assert_allclose(myia.jvp(myia.grad(f), (x,), (t,))[1], h @ t, rtol=1e-13)
    d2 = myia.grad(myia.grad(softplus))(0.7)  # the rule's derivative: sigmoid'
    assert d2 == pytest.approx(sigmoid(0.7) * (1.0 - sigmoid(0.7)), rel=1e-14)
    inner = lambda y: myia.jvp(softplus, (y,), (1.0,))[1]  # noqa: E731  forward over forward
    assert myia.jvp(inner, (0.7,), (1.0,))[1] == pytest.approx(d2, rel=1e-14)


def halving(x, n):
    i = 0
    while i < n:
        x = softplus(x) * 0.5
        i = i + 1
    return np.sum(x)


def test_a_loop_kept_at_run_time():
    d, v = np.ones(3), X
    for _ in range(3):
        d = d * sigmoid(v) * 0.5
        v = np.log1p(np.exp(v)) * 0.5
    np.testing.assert_allclose(myia.grad(halving)(X, 3), d, rtol=1e-14)
    assert myia.jvp(halving, (X, 3), (np.ones(3), 0))[1] == pytest.approx(np.sum(d))
    g = lambda y: myia.grad(halving)(y, 2)  # noqa: E731
    eps = 1e-6
    assert myia.grad(g)(0.3) == pytest.approx((g(0.3 + eps) - g(0.3 - eps)) / (2 * eps),
                                              rel=1e-6)


def inside(x):
    return myia.grad(lambda y: np.sum(softplus(y * x)))(x) + \
        myia.jvp(softplus, (x,), (np.ones_like(x),))[1]


def test_inside_compiled_code():
    np.testing.assert_allclose(myia.compile(inside)(X), sigmoid(X * X) * X + sigmoid(X),
                               rtol=1e-14)


def test_reverse_over_reverse_through_vjp_is_refused_at_the_rule():
    # (J of the derivative before it is optimized would transpose the rule's primal
    # call of softplus too, which is transposed again, without end)
    total = lambda v: np.sum(softplus(v))  # noqa: E731
    with pytest.raises(MyiaGradError, match="reverse mode over the reverse mode of "
                                            "softplus0") as e:
        myia.vjp(myia.grad(total), np.array([0.3]))
    assert e.value.loc.line == softplus_jvp.__code__.co_firstlineno
    assert "grad of grad, hessian, or jvp of grad" in str(e.value)
    # jacrev of float arrays batches the backward pass of the optimized derivative
    x = np.array([0.3, -0.2])
    s = sigmoid(x)
    np.testing.assert_allclose(myia.jacrev(myia.grad(total))(x), np.diag(s * (1 - s)),
                               rtol=1e-14)


def _not_a_pair(primals, tangents):
    return primals[0] * 2.0


def test_errors():
    with pytest.raises(MyiaGradError, match="custom_jvp rule: a rule gives first") as e:
        myia.jet(softplus, order=2)(1.0)
    assert e.value.loc.line == softplus0.__code__.co_firstlineno
    f = custom_jvp(softplus0, jvp=_not_a_pair)
    with pytest.raises(MyiaTypeError, match="jvp rule of softplus0 returned a value that "
                                            "is not a tuple") as e:
        myia.jvp(f, (1.0,), (1.0,))
    assert e.value.loc.line == _not_a_pair.__code__.co_firstlineno
    with pytest.raises(MyiaGradError, match="custom_jvp function without its rule"):
        custom_jvp(softplus0)(1.0)
    with pytest.raises(MyiaTypeError, match="must be a function"):
        custom_jvp(softplus0, jvp=2.0)
