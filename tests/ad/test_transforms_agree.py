"""Programs of shapes the project's own tests did not choose (issue 31), each checked
by Myia's transforms against one another (tests/ad/agree.py): grad∘grad, hessian,
jvp∘grad, jet and central differences of grad give one second derivative, on "vm"
and "llvm".  And gradients that a zero AD knows of must not turn into NaN."""

import numpy as np
import pytest

import myia
from tests.ad.agree import assert_agree, first_derivatives, second_derivatives
from tests.conftest import BACKENDS

A = np.ones(3)


def closure_called_twice_after_a_kept_loop(x, a):
    for p in a:  # a loop that stays a loop
        pass

    def lam(u):
        return x / (2.0 + u)

    return lam(lam(x))


def closure_called_twice(x, a):
    def lam(u):
        return x / (2.0 + u)

    return lam(lam(x))


def loop_over_a_tuple_of_functions(x, a):
    for p in a:
        pass

    def t0(u):
        return a

    def t1(u):
        return a * x * x

    v = a
    for fn in (t0, t1):
        v = np.tanh(fn(v))
    return np.sum(v)


def where_of_a_broadcast(x, c):
    for p in np.ones(3):
        pass
    v = np.where(c > 0, x, 0.9) + np.zeros(3)
    return np.sum(np.where(v > 0.0, 1.0, v) * x)


def two_ifs_on_the_same_value(x):
    # (found by test_transforms_fuzz.py) the branches of both ifs return x: in jvp,
    # one (value, tangent) pair that both return; the inner if's callers read only its
    # value, and the optimizer dropped the tangent of the pair the outer one returns
    return x + (x if (x if 1.5 < x else x) < 0.4 else x)


def loop_over_two_functions(x, y):
    # (found by test_transforms_fuzz.py) in forward mode each call of the loop's header
    # went through a value, so all shared one signature: the tuple shrinks each time
    v = x
    for fn in (np.sin, lambda u: u * y):
        v = fn(v)
    return v * y


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, x, args, want", [
    (two_ifs_on_the_same_value, 0.0, (), 0.0),
    (loop_over_two_functions, 0.3, (1.5,), None),
    # the second J met two inlined copies of one backpropagator's node, and gave the
    # sensitivities of both one environment key (the node they were the image of)
    (closure_called_twice_after_a_kept_loop, 0.45, (A,), -0.10448612824202907),
    (closure_called_twice, 0.45, (A,), -0.10448612824202907),
    (loop_over_a_tuple_of_functions, 0.6875, (A,), None),
    (where_of_a_broadcast, 0.7, (1.0,), 0.0),
])
def test_second_derivatives_agree(fn, x, args, want, backend):
    views = second_derivatives(fn, x, args, backend)
    assert_agree(views, reference=want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, x, args, want", [
    (two_ifs_on_the_same_value, 0.0, (), 2.0),
    (loop_over_two_functions, 0.3, (1.5,), np.cos(0.3) * 1.5 * 1.5),
])
def test_first_derivatives_agree(fn, x, args, want, backend):
    assert_agree(first_derivatives(fn, x, args, backend), reference=want)


def unused_argument_of_a_chosen_function(x):
    def first(u):
        return u * 2.0

    def second(u):  # ignores its argument: the derivative of std is never needed
        return x * 3.0

    fs = (first, second)
    return fs[1](np.std(x + np.zeros(3))) * fs[-1](1.0)


def unused_argument_after_a_kept_loop(x, a):
    for p in a:
        pass

    def second(u):
        return x * 3.0

    return second(np.std(x + np.zeros(3))) * second(1.0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, args", [
    # std of equal values has an infinite derivative; the sensitivity it meets is a
    # zero AD knows of (second ignores u), and 0 * inf must not be computed: 18 x
    (unused_argument_of_a_chosen_function, ()),
    (unused_argument_after_a_kept_loop, (A,)),
])
def test_a_zero_ad_knows_of_stays_zero(fn, args, backend):
    x = 0.3
    assert myia.compile(myia.grad(fn), backend=backend)(x, *args) == pytest.approx(18 * x)
    assert_agree(first_derivatives(fn, x, args, backend), reference=18 * x)
