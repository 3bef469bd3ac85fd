"""Elementwise functions: values against NumPy on both backends, gradients against
autograd (first and second order) and finite differences.  Cases: cases_math.py."""

import numpy as np
import pytest

import myia

from . import cases_math
from .harness import BACKENDS, autograd_twin, check_fd, check_grad, check_value

CASES = cases_math.CASES
GRAD = [c for c in CASES if c.order >= 1]
SECOND = [c for c in CASES if c.order >= 2]


@pytest.fixture(scope="module")
def twin():
    return autograd_twin(cases_math)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_value(case, backend):
    check_value(case, backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", GRAD, ids=str)
def test_grad(case, backend, twin):
    check_grad(case, backend, twin, order=1)


@pytest.mark.parametrize("case", [c for c in GRAD if c.fd], ids=str)
def test_grad_finite_differences(case):
    check_fd(case, "vm")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", SECOND, ids=str)
def test_second_order(case, backend, twin):
    check_grad(case, backend, twin, order=2)


def _weighted_fmax(x, y):
    return np.sum(np.fmax(x, y) * np.array([1.0, 2.0, 3.0, 4.0]))


def _weighted_fmin(x, y):
    return np.sum(np.fmin(x, y) * np.array([1.0, 2.0, 3.0, 4.0]))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_gradients_where_one_side_is_nan(backend, name):
    """np.fmax ignores a NaN: its sensitivity goes to the number (autograd's rule too),
    half to each side at a tie."""
    import autograd
    import autograd.numpy as anp

    x = np.array([1.0, np.nan, 2.0, 0.5])
    y = np.array([np.nan, 3.0, 2.0, -1.0])
    f = _weighted_fmax if name == "fmax" else _weighted_fmin
    a_fn = getattr(anp, name)
    got = myia.compile(myia.grad(f, argnums=(0, 1)), backend=backend)(x, y)
    want = autograd.grad(lambda x, y: anp.sum(a_fn(x, y) * anp.array([1.0, 2.0, 3.0, 4.0])),
                         argnum=[0, 1])(x, y)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
