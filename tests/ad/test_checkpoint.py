"""myia.checkpoint: a function whose backward pass computes its forward pass again
instead of keeping its values (JAX's `jax.checkpoint`).  Every transform gives the
same numbers as without it (against the function itself and autograd, on vm and
llvm); on llvm, the gradient of a long loop checkpointed in segments fits in a
memory limit that the same gradient without checkpoint does not."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import myia
from myia import checkpoint
from myia.errors import MyiaGradError, MyiaMemoryError, MyiaTypeError
from tests.ad.test_must_hold import sin_loop


def block(W, x):
    return np.tanh(W @ x) + 0.5 * np.sin(x)


ck_block = checkpoint(block)


def net(W, x):
    for _ in range(3):
        x = ck_block(W, x)
    return np.sum(x * x)


def net_plain(W, x):
    for _ in range(3):
        x = block(W, x)
    return np.sum(x * x)


def net_autograd(W, x):
    for _ in range(3):
        x = anp.tanh(anp.dot(W, x)) + 0.5 * anp.sin(x)
    return anp.sum(x * x)


RNG = np.random.default_rng(0)
W = RNG.standard_normal((4, 4)) * 0.5
X = RNG.standard_normal(4)


@pytest.mark.usefixtures("backend")
def test_reverse_mode_gives_the_functions_derivatives():
    gW, gx = myia.grad(net, argnums=(0, 1))(W, X)
    aW, ax = autograd.grad(net_autograd, argnum=(0, 1))(W, X)
    np.testing.assert_allclose(gW, aW, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(gx, ax, rtol=1e-13, atol=1e-15)
    v, d = myia.value_and_grad(net, 1)(W, X)
    assert v == pytest.approx(net_autograd(W, X), rel=1e-14)
    np.testing.assert_allclose(d, ax, rtol=1e-13, atol=1e-15)
    out, vjp_fn = myia.vjp(ck_block, W, X)
    ct = np.array([1.0, -2.0, 0.5, 3.0])
    np.testing.assert_allclose(vjp_fn(ct)[1], myia.vjp(block, W, X)[1](ct)[1], rtol=1e-14)
    np.testing.assert_allclose(myia.jacrev(lambda x: ck_block(W, x))(X),
                               autograd.jacobian(lambda x: anp.tanh(anp.dot(W, x)) +
                                                 0.5 * anp.sin(x))(X), rtol=1e-13)


@pytest.mark.usefixtures("backend")
def test_forward_mode_and_higher_orders_agree_with_the_function():
    h = autograd.hessian(lambda x: net_autograd(W, x))(X)
    np.testing.assert_allclose(myia.hessian(lambda x: net(W, x))(X), h, rtol=1e-12,
                               atol=1e-14)
    t = np.array([0.5, 1.0, -1.0, 0.25])
    jv = myia.jvp(lambda x: myia.grad(net, 1)(W, x), (X,), (t,))[1]
    np.testing.assert_allclose(jv, h @ t, rtol=1e-12, atol=1e-14)
    assert myia.jvp(net, (W, X), (np.zeros_like(W), t))[1] == pytest.approx(
        myia.jvp(net_plain, (W, X), (np.zeros_like(W), t))[1], rel=1e-14)
    np.testing.assert_allclose(myia.jacfwd(lambda x: ck_block(W, x))(X),
                               myia.jacfwd(lambda x: block(W, x))(X), rtol=1e-14)
    s = checkpoint(np.sin)
    assert myia.jet(lambda y: s(y) * y, order=3)(0.4) == pytest.approx(
        myia.jet(lambda y: np.sin(y) * y, order=3)(0.4), rel=1e-14)
    assert myia.grad(myia.grad(lambda y: s(y) * y))(0.4) == pytest.approx(
        2 * np.cos(0.4) - 0.4 * np.sin(0.4), rel=1e-14)


def inside(W, x):
    return myia.grad(lambda v: net(W, v))(x) + myia.jvp(lambda v: ck_block(W, v),
                                                         (x,), (x,))[1]


@pytest.mark.usefixtures("backend")
def test_inside_compiled_code():
    expect = autograd.grad(net_autograd, 1)(W, X) + \
        autograd.make_jvp(lambda v: anp.tanh(anp.dot(W, v)) + 0.5 * anp.sin(v))(X)(X)[1]
    np.testing.assert_allclose(myia.compile(inside)(W, X), expect, rtol=1e-13)


segment = sin_loop  # (k steps of x = sin(x))
ck_segment = checkpoint(segment)


def long_loop(x, m, k):
    j = 0
    while j < m:
        x = ck_segment(x, k)
        j = j + 1
    return x


def long_loop_plain(x, m, k):
    j = 0
    while j < m:
        x = segment(x, k)
        j = j + 1
    return x


def test_a_million_steps_in_segments_keep_one_segments_values(memory_limit):
    # 1000 segments of 1000 steps: the gradient keeps the 1000 segments' inputs and,
    # while it recomputes one, that segment's values; without checkpoint it keeps
    # every step's (~10 MB)
    g = myia.compile(myia.grad(long_loop), backend="llvm")
    plain = myia.compile(myia.grad(long_loop_plain), backend="llvm")
    assert g(0.5, 30, 20) == pytest.approx(plain(0.5, 30, 20), rel=1e-14)
    assert g(0.5, 30, 20) == pytest.approx(
        myia.compile(myia.grad(long_loop), backend="vm")(0.5, 30, 20), rel=1e-14)
    expect = myia.compile(myia.grad(segment), backend="llvm")(0.5, 1_000_000)
    memory_limit(2 << 20)
    assert g(0.5, 1000, 1000) == pytest.approx(expect, rel=1e-9)
    with pytest.raises(MyiaMemoryError, match="limit"):
        plain(0.5, 1000, 1000)


def rnn_segment(W, x, k):
    i = 0
    while i < k:
        x = np.tanh(W @ x) + 0.1 * x
        i = i + 1
    return x


ck_rnn = checkpoint(rnn_segment)


def rnn(W, x, m, k):
    j = 0
    while j < m:
        x = ck_rnn(W, x, k)
        j = j + 1
    return np.sum(x * x)


def rnn_plain(W, x, m, k):
    j = 0
    while j < m:
        x = rnn_segment(W, x, k)
        j = j + 1
    return np.sum(x * x)


def rnn_autograd(W, x, n):
    for _ in range(n):
        x = anp.tanh(anp.dot(W, x)) + 0.1 * x
    return anp.sum(x * x)


def test_array_segments_against_autograd_under_a_memory_limit(memory_limit):
    # (the cotangents a recomputed segment returns are copied out of the memory it
    # frees; the caller goes on in the chunk it was filling)
    rng = np.random.default_rng(1)
    W0 = rng.standard_normal((8, 8)) * 0.3
    x0 = rng.standard_normal(8)
    g = myia.compile(myia.grad(rnn, argnums=(0, 1)), backend="llvm")
    aW, ax = autograd.grad(rnn_autograd, argnum=(0, 1))(W0, x0, 12)
    for got, want in zip(g(W0, x0, 3, 4), (aW, ax)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    plain = myia.compile(myia.grad(rnn_plain, argnums=(0, 1)), backend="llvm")
    expect = plain(W0, x0, 100, 100)  # 10,000 steps: ~40 MB without checkpoint
    memory_limit(6 << 20)
    for got, want in zip(g(W0, x0, 100, 100), expect):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    with pytest.raises(MyiaMemoryError, match="limit"):
        plain(W0, x0, 100, 100)


def _twice_sigmoid_bwd(x, g):
    return (2.0 * g / (1.0 + np.exp(-x)),)  # (not softplus' derivative: twice it)


softplus2 = myia.custom_vjp(lambda x: np.log(1.0 + np.exp(x)),
                            fwd=lambda x: (np.log(1.0 + np.exp(x)), x),
                            bwd=_twice_sigmoid_bwd)


def with_rule(x):
    return softplus2(x) * x


ck_with_rule = checkpoint(with_rule)


@pytest.mark.usefixtures("backend")
def test_a_rule_inside_a_checkpoint_gives_the_same_derivatives_at_every_order():
    # (the output of the forward pass comes from the rule's fwd, as without
    # checkpoint: a second derivative differentiates the same program)
    for f, f0 in ((lambda x: ck_with_rule(x) * x, lambda x: with_rule(x) * x),
                  (lambda x: ck_with_rule(ck_with_rule(x)), lambda x: with_rule(with_rule(x)))):
        assert myia.grad(f)(0.3) == pytest.approx(myia.grad(f0)(0.3), rel=1e-14)
        d = myia.grad(f0)
        fd = (d(0.3 + 1e-6) - d(0.3 - 1e-6)) / 2e-6
        assert myia.grad(myia.grad(f))(0.3) == pytest.approx(fd, rel=1e-7)
        assert myia.grad(myia.grad(f))(0.3) == pytest.approx(myia.grad(myia.grad(f0))(0.3),
                                                             rel=1e-14)


def steps(x):
    for _ in range(3):
        x = np.sin(x) * 1.2
    return x


def steps_in_checkpoints(x):
    for _ in range(3):
        x = checkpoint(steps)(x)  # (made inside the program, as with jax.checkpoint)
    return x


def steps_plain(x):
    for _ in range(3):
        x = steps(x)
    return x


@pytest.mark.usefixtures("backend")
def test_checkpoint_called_inside_subset_code():
    f, f0 = steps_in_checkpoints, steps_plain
    assert myia.grad(f)(0.4) == pytest.approx(myia.grad(f0)(0.4), rel=1e-14)
    assert myia.compile(lambda x: myia.grad(f)(x))(0.4) == pytest.approx(
        myia.grad(f0)(0.4), rel=1e-14)
    assert myia.jvp(f, (0.4,), (1.0,)) == pytest.approx(myia.jvp(f0, (0.4,), (1.0,)),
                                                        rel=1e-14)
    assert myia.grad(myia.grad(f))(0.4) == pytest.approx(myia.grad(myia.grad(f0))(0.4),
                                                         rel=1e-13)
    assert myia.jet(f, order=3)(0.4) == pytest.approx(myia.jet(f0, order=3)(0.4), rel=1e-13)
    for refused in (lambda: myia.vjp(f, 0.4), lambda: myia.hessian(f)(0.4)):
        with pytest.raises(MyiaGradError, match="of a program that calls checkpoint "
                                                "inside") as e:
            refused()
        assert "myia.checkpoint(segment)` at module level" in str(e.value)
    # of an array, hessian and jacrev are batched programs of the optimized derivative
    x = np.array([0.4, -0.3])
    total = lambda v: np.sum(f(v))  # noqa: E731
    np.testing.assert_allclose(myia.hessian(total)(x),
                               myia.hessian(lambda v: np.sum(f0(v)))(x), rtol=1e-13)
    np.testing.assert_allclose(myia.jacrev(f)(x), myia.jacrev(f0)(x), rtol=1e-13)


def closure_checkpointed(x, w):
    s = lambda y: np.sin(y) * w  # noqa: E731
    return checkpoint(s)(x)


def test_checkpoint_of_a_closure_inside_subset_code_is_refused_at_its_line():
    with pytest.raises(MyiaGradError, match="checkpoint inside compiled code takes one def "
                                            "that captures nothing") as e:
        myia.grad(closure_checkpointed)(0.4, 2.0)
    assert e.value.loc.line == closure_checkpointed.__code__.co_firstlineno + 2


def test_errors():
    with pytest.raises(MyiaTypeError, match="checkpoint takes a function"):
        checkpoint(2.0)
