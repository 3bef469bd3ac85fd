"""The gradient of every corpus program tagged "differentiable", against autograd.

`myia.grad(case.fn)(*case.args)` (with respect to argument 0) is compared with
`autograd.grad` of the same program re-executed with `np` bound to autograd.numpy
(`cases_with_numpy`).  For the programs whose argument 0 is a float, the second
derivative `grad(grad(f))` is compared too.

The gradients and the second derivatives run on "vm" and on "llvm" (the `backend`
fixture, tests/conftest.py).
"""

import warnings

import numpy as np
import pytest

import myia

from .. import corpus
from ..helpers import assert_tree_close

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")

RTOL = 1e-6
ATOL = 1e-12

DIFFERENTIABLE = corpus.by_tag("differentiable")
SCALAR_ARG = [c for c in DIFFERENTIABLE if isinstance(c.args[0], float)]


def _autograd_twin(case):
    twins = {c.name: c for c in corpus.cases_with_numpy(anp)}
    return twins[case.name]


def _autograd(fn, order, args):
    g = fn
    for _ in range(order):
        g = autograd.grad(g)
    with warnings.catch_warnings():
        # "Output seems independent of input": a zero derivative, which is fine
        warnings.simplefilter("ignore", UserWarning)
        return g(*args)


def test_corpus_has_differentiable_cases():
    assert len(DIFFERENTIABLE) >= 50
    assert len(SCALAR_ARG) >= 20


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("case", DIFFERENTIABLE, ids=lambda c: c.name)
def test_grad_vs_autograd(case):
    ours = myia.grad(case.fn)(*case.args)
    theirs = _autograd(_autograd_twin(case).fn, 1, case.args)
    if isinstance(theirs, (list, tuple)):
        theirs = tuple(theirs)
    assert_tree_close(ours, theirs, rtol=RTOL, atol=ATOL, what=f"grad of {case.name}")
    # the gradient has the argument's structure (a float for a float, an array of the
    # same shape for an array)
    assert np.shape(ours) == np.shape(case.args[0]) or isinstance(ours, tuple)


@pytest.mark.parametrize("case", SCALAR_ARG, ids=lambda c: c.name)
@pytest.mark.timeout(300)  # nested loops: ~30 s
def test_second_derivative_vs_autograd(case, backend):
    try:
        theirs = _autograd(_autograd_twin(case).fn, 2, case.args)
    except Exception as e:  # noqa: BLE001  (autograd cannot always differentiate twice)
        pytest.skip(f"autograd cannot take the second derivative: {type(e).__name__}: {e}")
    ours = myia.grad(myia.grad(case.fn))(*case.args)
    assert_tree_close(ours, theirs, rtol=RTOL, atol=1e-10,
                      what=f"second derivative of {case.name}")
