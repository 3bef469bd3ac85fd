"""Programs of shapes the project's own tests did not choose (issue 31), each checked
by Myia's transforms against one another (tests/ad/agree.py): grad∘grad, hessian,
jvp∘grad, jet and central differences of grad give one second derivative, on "vm"
and "llvm"."""

import numpy as np
import pytest

from tests.ad.agree import assert_agree, second_derivatives
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


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, x, args, want", [
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
