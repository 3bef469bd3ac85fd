"""myia.custom_vjp: a reverse-mode derivative given by the user's rule (JAX's
`jax.custom_vjp`), used by grad, vjp, the Jacobians and their nestings, from Python
and inside subset code, on vm and llvm; a second derivative differentiates the rule;
forward mode refuses it, located, as JAX does.  Each rule below differs from the
derivative of the function's body, so a result that ignored the rule would fail."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import myia
from myia import custom_vjp
from myia.errors import MyiaGradError, MyiaTypeError

pytestmark = pytest.mark.usefixtures("backend")


# ---- a numerically stable gradient ------------------------------------------------------


def softplus0(x):
    return np.log(1.0 + np.exp(x))


def softplus_fwd(x):
    return softplus0(x), x


def softplus_bwd(x, g):
    return (g / (1.0 + np.exp(-x)),)  # the sigmoid: finite for every x


softplus = custom_vjp(softplus0, fwd=softplus_fwd, bwd=softplus_bwd)


def sigmoid(x):
    return 1.0 / (1.0 + anp.exp(-x))


def test_the_rule_gives_the_gradient_where_the_body_overflows():
    with np.errstate(over="ignore", invalid="ignore"):
        assert np.isnan(myia.grad(softplus0)(800.0))  # exp(800) / (1 + exp(800))
        assert myia.grad(softplus)(800.0) == 1.0
    assert myia.grad(softplus)(0.3) == pytest.approx(sigmoid(0.3), rel=1e-15)
    assert softplus(0.3) == pytest.approx(np.log1p(np.exp(0.3)), rel=1e-15)


def test_second_order_differentiates_the_rule():
    def loss(x):
        return 2.0 * softplus(x * x)

    ref = lambda x: 2.0 * anp.log(1.0 + anp.exp(x * x))  # noqa: E731  (same derivatives)
    for x in (0.7, -1.3):
        assert myia.grad(loss)(x) == pytest.approx(autograd.grad(ref)(x), rel=1e-13)
        assert myia.grad(myia.grad(loss))(x) == pytest.approx(
            autograd.grad(autograd.grad(ref))(x), rel=1e-13)
        # three deep: the rule's own derivative differentiated again
        assert myia.grad(myia.grad(myia.grad(loss)))(x) == pytest.approx(
            autograd.grad(autograd.grad(autograd.grad(ref)))(x), rel=1e-12)


# ---- a rule that is not the derivative of the body: a straight-through estimator ------


def clip0(x, lo):
    return np.maximum(x, lo)


def clip_fwd(x, lo):
    return np.maximum(x, lo), (x.shape,)


def clip_bwd(res, g):
    return (g * 1.0, 0.0)  # straight through: as if clip were the identity in x


clip = custom_vjp(clip0, fwd=clip_fwd, bwd=clip_bwd)
X = np.array([-2.0, 0.5, 3.0])
W = np.array([1.5, -1.0, 0.25])


def clipped_loss(x):
    return np.sum(clip(x, 0.0) ** 2 * W)


def test_straight_through():
    # d/dx of sum(clip(x)^2 w) with d clip/dx := 1: 2 clip(x) w
    expected = 2.0 * np.maximum(X, 0.0) * W
    np.testing.assert_allclose(myia.grad(clipped_loss)(X), expected, rtol=1e-15)
    value, g = myia.value_and_grad(clipped_loss)(X)
    assert value == pytest.approx(float(np.sum(np.maximum(X, 0.0) ** 2 * W)))
    np.testing.assert_allclose(g, expected, rtol=1e-15)
    out, vjp_fn = myia.vjp(lambda x: clip(x, 0.0) * 3.0, X)
    (d,) = vjp_fn(np.array([1.0, 2.0, -1.0]))
    np.testing.assert_allclose(d, [3.0, 6.0, -3.0])  # the cotangent, straight through
    np.testing.assert_allclose(myia.jacrev(lambda x: clip(x, 0.0) * 3.0)(X), 3.0 * np.eye(3))


def test_transforms_agree_through_the_rule():
    """hessian = jacrev of grad = finite differences of grad (the rule's Jacobian)."""
    def f(x):
        return np.sum(softplus(x * W) * x)

    x = np.array([0.3, -0.8, 1.1])
    h = myia.hessian(f)(x)
    np.testing.assert_allclose(myia.jacrev(myia.grad(f))(x), h, rtol=1e-12, atol=1e-14)
    g = myia.grad(f)
    eps = 1e-6
    fd = np.array([(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(3)]).T
    np.testing.assert_allclose(h, fd, rtol=1e-6, atol=1e-8)


# ---- an implicit derivative: a solver's iterations are not differentiated --------------


def newton_sqrt0(a):
    x = a
    i = 0
    while i < 30:
        x = 0.5 * (x + a / x)
        i = i + 1
    return x


def newton_sqrt_fwd(a):
    s = newton_sqrt0(a)
    return s, s


def newton_sqrt_bwd(s, g):
    return (g / (2.0 * s),)  # implicit function theorem: s^2 = a


newton_sqrt = custom_vjp(newton_sqrt0, fwd=newton_sqrt_fwd, bwd=newton_sqrt_bwd)


def test_implicit_derivative_of_a_solver():
    def f(a):
        return newton_sqrt(a) * a

    a = 2.0
    assert myia.grad(f)(a) == pytest.approx(1.5 * np.sqrt(a), rel=1e-14)
    assert myia.grad(myia.grad(f))(a) == pytest.approx(0.75 / np.sqrt(a), rel=1e-13)


# ---- inside subset code -------------------------------------------------------------------


def grad_of(fn, x):
    return myia.grad(fn)(x)


def inside(x):
    # grad of a closure that calls the custom function, and the custom function as an
    # argument of another function
    w = x * 0.5
    closure = grad_of(lambda y: np.sum(clip(y, 0.0) * w), x)
    return closure + grad_of(lambda y: np.sum(softplus(y)), x)


def chosen(x, i):
    fns = (softplus, np.tanh)
    return myia.grad(lambda y: np.sum(fns[i](y)))(x)


def kept_loop(x, n):
    i = 0
    while i < n:
        x = np.sin(clip(x, 0.0))
        i = i + 1
    return np.sum(x)


def test_inside_compiled_code():
    x = np.array([-1.0, 0.4, 2.0])
    expected = x * 0.5 + sigmoid(x)
    np.testing.assert_allclose(myia.compile(inside)(x), expected, rtol=1e-14)
    np.testing.assert_allclose(myia.compile(chosen)(x, 0), sigmoid(x), rtol=1e-14)
    np.testing.assert_allclose(myia.compile(chosen)(x, 1), 1.0 - np.tanh(x) ** 2, rtol=1e-14)


def test_a_loop_kept_at_run_time():
    x = np.array([-1.0, 0.4, 2.0])
    # d/dx sin(clip(x)) with the straight-through rule: cos(clip(x)); by the chain rule
    d, v = np.ones(3), x
    for _ in range(3):
        v = np.maximum(v, 0.0)
        d = d * np.cos(v)
        v = np.sin(v)
    np.testing.assert_allclose(myia.grad(kept_loop)(x, 3), d, rtol=1e-14)


# ---- what forward mode and wrong rules get ----------------------------------------------


def test_forward_mode_is_refused_located():
    for call in (lambda: myia.jvp(softplus, (1.0,), (1.0,)),
                 lambda: myia.jet(softplus, order=2)(1.0),
                 lambda: myia.jacfwd(lambda x: clip(x, 0.0))(X)):
        with pytest.raises(MyiaGradError, match="custom_vjp rule") as e:
            call()
        assert e.value.loc is not None and e.value.loc.line > 0


def _double(x):
    return 2.0 * x


def _not_a_pair(x):
    return 2.0 * x


def _pair(x):
    return 2.0 * x, x


def _bare(x, g):
    return 2.0 * g


def _three(x, g):
    return (g, g, g)


@pytest.mark.parametrize("fwd, bwd, message, where", [
    (_not_a_pair, _three, "fwd rule of _double returned a value that is not a tuple",
     _not_a_pair),
    (_pair, _bare, "bwd rule of _double returned a value that is not a tuple", _bare),
    (_pair, _three, "bwd rule of _double returned a tuple of 3; it must return a tuple "
     "of 1", _three),
])
def test_a_wrong_rule_is_located_at_its_def(fwd, bwd, message, where):
    f = custom_vjp(_double, fwd=fwd, bwd=bwd)
    with pytest.raises(MyiaTypeError, match=message) as e:
        myia.grad(lambda x: f(x) * 1.0)(1.0)
    assert e.value.loc.line == where.__code__.co_firstlineno


def test_a_function_without_its_rule():
    f = custom_vjp(_double)
    with pytest.raises(MyiaGradError, match="without its rule"):
        f(1.0)
    f.defvjp(_pair, lambda x, g: (3.0 * g,))  # (JAX's form, as a decorator would)
    assert f(1.0) == 2.0
    assert myia.grad(f)(1.0) == 3.0
    with pytest.raises(MyiaTypeError, match="must be a function"):
        f.defvjp(3, _bare)
