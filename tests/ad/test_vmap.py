"""myia.vmap (issue 36, item 1): a function written for one example, run on a batch.

The oracle is the definition: `vmap(f)(xs)` equals `np.stack([f(x) for x in xs])`,
computed by Myia's VM one example at a time (and by Python where f is plain NumPy).
Gradients through vmap and vmap of gradients are checked against a loop of `grad`,
against autograd, and against Myia's other transforms (jvp, hessian, jacfwd); every
test runs on vm and llvm (the `backend` fixture)."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import myia
from myia import grad, vmap
from myia.errors import MyiaError

pytestmark = pytest.mark.usefixtures("backend")

RNG = np.random.default_rng(36)
XS = RNG.normal(size=(5, 3))
W = RNG.normal(size=(4, 3))


def looped(f, in_axes, *args):
    """`f` applied one example at a time, by the VM, stacked on axis 0."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    n = next(np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None)
    run = myia.compile(f, backend="vm")
    outs = [run(*[a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, axes)])
            for i in range(n)]
    if isinstance(outs[0], tuple):
        return tuple(np.stack(o) for o in zip(*outs))
    return np.stack(outs)


def check(f, *args, in_axes=0, rtol=1e-12):
    got = vmap(f, in_axes)(*args)
    want = looped(f, in_axes, *args)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert np.shape(g) == np.shape(w)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-14)
    else:
        assert np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-14)
    return got


# ---- straight-line programs -------------------------------------------------------

def layer(x, w):
    return np.tanh(np.dot(w, x)) * 2.0 + np.sum(x ** 2)


def reductions(x):
    m = x.reshape(3, 1) * x  # (3, 3)
    return (np.sum(m, axis=0) + np.max(m, axis=1) + np.mean(m) + np.cumsum(x)
            + np.prod(x) + np.argmax(x) + m.T[0] + np.min(x))


def products(a, b):
    """Every rank pairing of dot with either side batched."""
    return (np.dot(a, b) + np.dot(b, a) + np.dot(a[0], b) * np.sum(a @ a, axis=0)
            + np.outer(b, b) @ a.T[0] + np.dot(b, b)
            # a column and a row: products over one element
            + np.dot(a, b.reshape(3, 1))[:, 0] + (b.reshape(3, 1) @ a[0].reshape(1, 3))[1])


def shaping(x):
    y = np.broadcast_to(x, (2, 3)) * np.arange(3.0)
    z = np.concatenate((x, x[::-1] * 2.0))
    return np.sum(y, axis=0) + z[1:4] + np.full(3, x[0]) + np.where(x > 0, x, -x)


def test_straight_line_programs_match_a_loop():
    check(layer, XS, W, in_axes=(0, None))
    check(layer, XS, np.stack([W] * 5), in_axes=(0, 0))
    check(layer, XS[0], np.stack([W * k for k in range(5)]), in_axes=(None, 0))
    check(reductions, XS)
    check(shaping, XS)
    A = RNG.normal(size=(5, 3, 3))
    check(products, A, XS)
    check(products, A[0], XS, in_axes=(None, 0))
    check(products, A, XS[0], in_axes=(0, None))


def test_scalars_tuples_and_axes():
    # an example of a vector is a number: batched numbers are arrays of the batch
    check(lambda t: (np.sin(t) * t, t + 1.0), XS[:, 0])
    # in_axes picks the mapped axis; out_axes places it in the result
    got = vmap(lambda x: np.cumsum(x), in_axes=1, out_axes=1)(XS.T)
    np.testing.assert_allclose(got, np.cumsum(XS.T, axis=0), rtol=1e-14)
    np.testing.assert_allclose(vmap(lambda x: np.sum(x), in_axes=1)(XS), XS.sum(axis=0), rtol=1e-14)
    # an unbatched output is stacked too (every example has it)
    np.testing.assert_allclose(vmap(lambda x, w: w[0], (0, None))(XS, W), np.stack([W[0]] * 5))
    # vmap of vmap: a function of one number over a matrix of them
    np.testing.assert_allclose(vmap(vmap(lambda a, b: a * b + 1.0))(XS, XS), XS * XS + 1.0)
    # int and bool examples
    np.testing.assert_array_equal(vmap(lambda n: n * 2 + 1)(np.arange(4)), np.arange(4) * 2 + 1)


IDX = np.array([2, 0, 4])


def sort_by_value(x):
    return np.take_along_axis(x, np.argsort(x), axis=0) * np.arange(5.0)


def fancy_index(x):
    return x[IDX] * 2.0 + x[1:4:2].sum()


def window(x, i):
    return x[i:i + 2] * x[i]


def split_scaled(x):
    a, b = np.split(x, [2])
    return np.sum(a) * b


def asserting(x):
    assert np.all(x > -10.0)
    return x * 2.0


def tuples_and_lists(x):
    t = (x[0], x[1])
    u = t + (x[2],)
    s = 0.0
    for v in [x[0], x[3], x[4]]:
        s = s + v * v
    return u[2] * len(u) + x.shape[0] + s


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m))) + np.cumprod(x[:3])


def index_assignment(x):
    y = np.copy(x)
    y[1] = 5.0
    y[2:4] += x[0]
    return y


LIBRARY = [(sort_by_value, 0), (fancy_index, 0), (window, (0, None)), (split_scaled, 0),
           (asserting, 0), (tuples_and_lists, 0), (logsumexp, 0), (index_assignment, 0)]


@pytest.mark.parametrize("f, in_axes", LIBRARY, ids=[f.__name__ for f, _ in LIBRARY])
def test_library_functions_and_their_gradients(f, in_axes):
    args = (RNG.normal(size=(4, 5)),) + ((1,) if f is window else ())
    check(f, *args, in_axes=in_axes)
    summed = (lambda x: np.sum(f(x))) if len(args) == 1 else (lambda x, i: np.sum(f(x, i)))
    check(grad(summed), *args, in_axes=in_axes, rtol=1e-11)


# ---- control flow -----------------------------------------------------------------

def piecewise(x):
    if x > 0.0:
        y = np.sin(x) * x
    else:
        y = x * x
    return y


def halvings(x):
    """A while loop whose trip count differs between the examples."""
    n = 0
    while x > 1.0:
        x = x / 2.0
        n = n + 1
    return x + n


def repeat_sin(x, n):
    i = 0
    while i < n:
        x = np.sin(x) * 1.5
        i = i + 1
    return x


def solve(a):
    """Newton's method on x^2 = a, stopping at a tolerance: each example stops at its
    own step."""
    x = a
    while np.abs(x * x - a) > 1e-12:
        x = 0.5 * (x + a / x)
    return x


def collatz_steps(n):
    """A while loop with an `if` in its body, both on the batched value."""
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps = steps + 1
    return steps


def scaled_walk(x, a):
    """A loop over an array's rows with an `if` on each: its derivative builds a
    backpropagator per row, chosen per example."""
    for p in a:
        if x < p:
            x = 0.5 * x + p
        else:
            x = x * p + 0.25
    return x


def test_branches_and_loops_on_batched_values():
    np.testing.assert_array_equal(check(collatz_steps, np.array([1, 6, 7, 27])),
                                  [0, 8, 16, 111])
    A = RNG.normal(size=(4, 5))
    check(scaled_walk, np.array([-0.5, 0.1, 0.4, 2.0]), A, in_axes=(0, 0))
    check(scaled_walk, np.array([-0.5, 0.1, 0.4, 2.0]), A[0], in_axes=(0, None))
    check(grad(scaled_walk, (0, 1)), np.array([-0.5, 0.1, 0.4, 2.0]), A, in_axes=(0, 0))
    xs = np.array([-1.5, -0.2, 0.3, 2.0])
    check(piecewise, xs)
    check(halvings, np.array([0.5, 3.0, 100.0, 1e6]))
    check(repeat_sin, np.ones((3, 2)) * 0.3, np.array([0, 1, 5]), in_axes=(0, 0))
    check(repeat_sin, np.ones((3, 2)) * 0.3, 4, in_axes=(0, None))
    np.testing.assert_allclose(vmap(solve)(np.array([2.0, 9.0, 1e4])),
                               np.sqrt([2.0, 9.0, 1e4]), rtol=1e-12)


def fact(n):
    if n <= 1.0:
        return 1.0
    return n * fact(n - 1.0)


def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


def test_recursion_runs_until_every_example_is_done():
    # each example has its own depth: the recursion goes on while any needs it
    ns = np.array([1.0, 3.0, 5.0, 2.5])
    np.testing.assert_allclose(check(fact, ns), [1.0, 6.0, 120.0, 3.75])
    check(grad(fact), ns + 0.5)
    # where the depth is shared, the recursion is batched like any call
    np.testing.assert_allclose(vmap(lambda x: fact(4.0) * x)(XS[:, 0]), 24.0 * XS[:, 0])


def nested_loops(x, n):
    k = 0
    while k < n:
        while x < 2.0:
            x = x * 1.5 + 0.1
        x = x - 1.0
        k = k + 1
    return x


def nested_and(x, n):
    k = 0
    while k < n:
        c = 0
        while x < 2.0 and c < 3:
            x = x * 1.5 + 0.1
            c = c + 1
        x = x - 1.0
        k = k + 1
    return x


def unrolled_outer(x):
    for k in range(3):
        while x < 2.0:
            x = x * 1.5 + 0.1
        x = x - 1.0
    return x


def test_inner_loops_on_a_batched_value():
    xs = np.array([0.1, 0.5, 1.7, 3.0])
    check(unrolled_outer, xs)
    check(nested_loops, xs, 2, in_axes=(0, None))  # (the outer loop's count is shared)
    check(nested_loops, xs, np.array([0, 1, 2, 3]))
    # not yet: an inner loop whose first test is itself a branch (`and`), and the
    # gradient of nested loops (its inner loop returns a backpropagator to the outer
    # one): refused at the inner loop's condition
    for f, line in ((nested_and, nested_and.__code__.co_firstlineno + 4),
                    (grad(nested_loops), nested_loops.__code__.co_firstlineno + 3)):
        with pytest.raises(MyiaError) as e:
            vmap(f)(np.array([0.1, 0.5]), np.array([1, 2]))
        assert e.value.kind == "MyiaBatchingError"
        assert "inner loop" in e.value.message
        assert e.value.loc.line == line


def test_a_mutual_recursion_on_a_batched_value_is_refused_at_its_condition():
    with pytest.raises(MyiaError) as e:
        vmap(is_even)(np.array([1, 2, 3]))
    assert e.value.kind == "MyiaBatchingError"
    assert "recurses through another function" in e.value.message
    # (at the condition of the function whose recursion goes through the other one)
    assert e.value.loc.line in (is_even.__code__.co_firstlineno + 1,
                                is_odd.__code__.co_firstlineno + 1)


# ---- with the other transforms ----------------------------------------------------

def mlp_loss(w1, b1, w2, x, y):
    h = np.tanh(w1 @ x + b1)
    return np.sum((w2 @ h - y) ** 2)


def mlp_loss_ag(w1, b1, w2, x, y):
    h = anp.tanh(anp.dot(w1, x) + b1)
    return anp.sum((anp.dot(w2, h) - y) ** 2)


def test_per_example_gradients():
    w1, b1, w2 = RNG.normal(size=(4, 3)), RNG.normal(size=4), RNG.normal(size=(2, 4))
    ys = RNG.normal(size=(5, 2))
    axes = (None, None, None, 0, 0)
    got = vmap(grad(mlp_loss, (0, 1, 2)), axes)(w1, b1, w2, XS, ys)
    assert [g.shape for g in got] == [(5, 4, 3), (5, 4), (5, 2, 4)]
    for i in range(5):
        want = autograd.grad(mlp_loss_ag, (0, 1, 2))(w1, b1, w2, XS[i], ys[i])
        for g, w in zip(got, want):
            np.testing.assert_allclose(g[i], w, rtol=1e-11)
    # the gradient of the batch's mean loss is the mean of the per-example gradients
    mean_loss = lambda w1, b1, w2, xs, ys: np.mean(vmap(mlp_loss, axes)(w1, b1, w2, xs, ys))
    for g, per in zip(grad(mean_loss, (0, 1, 2))(w1, b1, w2, XS, ys), got):
        np.testing.assert_allclose(g, per.mean(axis=0), rtol=1e-11)


def test_vmap_of_derivatives_through_control_flow():
    xs = np.array([-1.5, -0.2, 0.3, 2.0])
    check(grad(piecewise), xs)
    check(grad(halvings), np.array([0.5, 3.0, 100.0]))
    check(grad(repeat_sin), np.array([0.3, 0.7, 1.1]), np.array([0, 2, 5]), in_axes=(0, 0))
    check(myia.hessian(lambda x: np.sum(np.sin(x) ** 2)), XS)
    check(myia.jacfwd(reductions), XS[:2], rtol=1e-11)


def test_derivatives_of_vmap_agree_with_each_other():
    f = vmap(lambda x, w: layer(x, w) * x[0], (0, None))
    total = lambda xs, w: np.sum(f(xs, w))
    g = grad(total, (0, 1))(XS, W)
    # jvp along each direction of w equals the gradient's component
    dw = RNG.normal(size=W.shape)
    _, t = myia.jvp(total, (XS, W), (np.zeros_like(XS), dw))
    np.testing.assert_allclose(t, np.sum(g[1] * dw), rtol=1e-11)
    # jacrev of the batched function, summed over examples, is the gradient
    J = myia.jacrev(f)(XS, W)  # (5, 4) + (5, 3)
    np.testing.assert_allclose(J.sum(axis=(0, 1)), g[0], rtol=1e-11)
    # grad of vmap = vmap of grad where the examples are independent
    np.testing.assert_allclose(grad(lambda xs: np.sum(vmap(piecewise)(xs)))(XS[:, 0]),
                               vmap(grad(piecewise))(XS[:, 0]), rtol=1e-13)
    # second order through vmap: hessian of a sum over examples is block diagonal
    H = myia.hessian(lambda xs: np.sum(CUBES(xs)))(XS[:2])
    for i in range(2):
        np.testing.assert_allclose(
            H[i, :, i, :], myia.hessian(lambda x: np.sum(np.sin(x) ** 3))(XS[i]), rtol=1e-11)
    assert np.all(H[0, :, 1, :] == 0)


#: a vmap made outside the programs that call it (hessian, jacrev and vjp of a program
#: that writes vmap inside are refused: see the last test)
CUBES = vmap(lambda x: np.sum(np.sin(x) ** 3))


def wave(x):
    return np.sin(x) * np.exp(x)


def tangent_of_wave(x, t):
    return myia.jvp(wave, (x,), (t,))


def test_vmap_with_forward_and_taylor_modes():
    xs = np.array([0.1, 0.5, -0.3])
    # vmap of jet, jet of vmap, and vmap of a jvp written in the subset
    check(myia.jet(wave, order=3), xs)
    np.testing.assert_allclose(np.stack(myia.jet(vmap(wave), order=3)(xs)),
                               np.stack(looped(myia.jet(wave, order=3), 0, xs)),
                               rtol=1e-13)
    check(tangent_of_wave, xs, np.array([1.0, 2.0, -1.0]))


def inner(x, w):
    return np.sum(np.tanh(w @ x))


def batch_total(xs, w):
    return np.sum(vmap(inner, (0, None))(xs, w))


def test_vmap_inside_compiled_code():
    want = sum(inner(x, W) for x in XS)
    np.testing.assert_allclose(myia.compile(batch_total)(XS, W), want, rtol=1e-12)
    gw = grad(batch_total, 1)(XS, W)
    np.testing.assert_allclose(gw, sum(grad(inner, 1)(x, W) for x in XS), rtol=1e-11)
    dw = RNG.normal(size=W.shape)
    _, t = myia.jvp(batch_total, (XS, W), (np.zeros_like(XS), dw))
    np.testing.assert_allclose(t, np.sum(gw * dw), rtol=1e-11)
    gg = grad(lambda w: np.sum(grad(batch_total, 1)(XS, w) ** 2))(W)
    h = 1e-6
    e = np.zeros_like(W)
    e[1, 2] = h
    fd = (np.sum(grad(batch_total, 1)(XS, W + e) ** 2)
          - np.sum(grad(batch_total, 1)(XS, W - e) ** 2)) / (2 * h)
    np.testing.assert_allclose(gg[1, 2], fd, rtol=1e-6)
    # hessian of an array function: jacfwd of its optimized gradient, batched
    H = myia.hessian(lambda xs: np.sum(vmap(inner, (0, None))(xs, W)))(XS[:2])
    for i in range(2):
        np.testing.assert_allclose(H[i, :, i, :], myia.hessian(inner)(XS[i], W),
                                   rtol=1e-11)
    with pytest.raises(MyiaError, match="of a program that calls vmap inside"):
        myia.vjp(lambda xs: np.sum(vmap(inner, (0, None))(xs, W)), XS)


def tanh_rows(xs, w):
    return np.sum(vmap(lambda x: np.tanh(np.dot(w, x)))(xs))


def scaled_rows(xs, w):
    def row(x):
        return np.sum(w * x) * x
    return vmap(row)(xs)


def test_vmap_of_a_closure_inside_compiled_code():
    # what the closure captured is shared by every example
    want = sum(np.sum(np.tanh(W @ x)) for x in XS)
    np.testing.assert_allclose(myia.compile(tanh_rows)(XS, W), want, rtol=1e-12)
    per_example = [grad(lambda w, x=x: np.sum(np.tanh(np.dot(w, x))))(W) for x in XS]
    np.testing.assert_allclose(grad(tanh_rows, 1)(XS, W), sum(per_example), rtol=1e-11)
    w = RNG.normal(size=3)
    np.testing.assert_allclose(myia.compile(scaled_rows)(XS, w),
                               np.stack([np.sum(w * x) * x for x in XS]), rtol=1e-13)


def _clip0(x):
    return np.clip(x, -1.0, 1.0)


# a straight-through estimator: the gradient of clip taken as if it were the identity
clip_st = myia.custom_vjp(_clip0, fwd=lambda x: (_clip0(x), x), bwd=lambda x, ct: (ct,))


def three_steps(x):
    for i in range(3):
        x = np.sin(x) + x
    return x


CHECKPOINTED = myia.checkpoint(three_steps)


def test_vmap_of_custom_rules_checkpoint_and_stop_gradient():
    xs = np.array([-2.0, 0.3, 5.0])
    np.testing.assert_array_equal(vmap(grad(lambda x: clip_st(x) * 2.0))(xs), [2.0] * 3)
    check(grad(lambda x: CHECKPOINTED(x) * x), xs)
    np.testing.assert_allclose(vmap(grad(lambda x: CHECKPOINTED(x) * x))(xs),
                               looped(grad(lambda x: three_steps(x) * x), 0, xs),
                               rtol=1e-13)
    np.testing.assert_array_equal(vmap(grad(lambda x: x * myia.stop_gradient(x)))(xs), xs)


# ---- errors -------------------------------------------------------------------------

def test_errors_say_what_to_change():
    with pytest.raises(MyiaError, match="different sizes"):
        vmap(lambda a, b: a + b)(np.ones(3), np.ones(4))
    with pytest.raises(MyiaError, match="no axis 1"):
        vmap(lambda x: np.sin(x), in_axes=1)(np.ones(3))
    with pytest.raises(MyiaError, match="no argument is batched"):
        vmap(lambda x: np.sin(x), in_axes=None)(np.ones(3))
    with pytest.raises(MyiaError, match="boolean mask"):
        vmap(lambda x: np.sum(x[x > 0]))(XS)
