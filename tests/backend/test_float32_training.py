"""A float32 training step stays float32 (issue 22, item 3): the MLP step of the
training benchmark, on the VM and on llvm, against a NumPy float32 step written by hand
and against autograd; in the optimized program no value is float64; in the machine
code every matrix product is sgemm, the elementwise functions call libmvec's
single-precision variants, and the only conversion to double is the boxing of the
float32 loss (lossless)."""

import re

import numpy as np
import pytest

import myia
from benchmarks.training import data, init, loss, numpy_step, step
from myia.backend.llvm import runtime
from myia.backend.llvm.dispatch import compile_program
from myia.infer import signature_of, specialize
from myia.opt import optimize
from myia.parser.programs import to_graph


def args32(bs=16):
    rng = np.random.default_rng(22)
    X, Y = data(np.float32, bs, 784, rng)
    return (*init(np.float32, rng), X, Y, np.float32(0.1))


@pytest.mark.parametrize("backend", ["vm", "llvm"])
def test_step_float32_values_against_numpy_and_autograd(backend):
    import autograd
    import autograd.numpy as anp

    args = args32()
    got = myia.compile(step, backend=backend)(*args)
    want = numpy_step(*args)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6)

    def aloss(W1, b1, W2, b2, X, Y):
        H = anp.tanh(anp.dot(X, W1) + b1)
        Z = anp.dot(H, W2) + b2
        m = anp.max(Z, axis=1, keepdims=True)
        return -anp.sum(Y * (Z - m - anp.log(anp.sum(anp.exp(Z - m), axis=1, keepdims=True)))) \
            / X.shape[0]

    grads = autograd.grad(aloss, argnum=[0, 1, 2, 3])(*args[:6])
    for p, g, new in zip(args[:4], grads, got[:4]):
        np.testing.assert_allclose(new, p - np.float32(0.1) * g, rtol=2e-5, atol=2e-6)
    assert got[4] == pytest.approx(float(loss(*args[:6])), rel=1e-5)


def test_llvm_agrees_with_the_vm_in_float32():
    args = args32(32)
    a = myia.compile(step, backend="vm")(*args)
    b = myia.compile(step, backend="llvm")(*args)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)


def test_no_float64_value_in_the_optimized_step():
    text = str(myia.ir(step, *args32(), stage="optimized"))
    assert "f32[" in text
    assert "f64" not in text, [line for line in text.splitlines() if "f64" in line][:3]


def test_machine_code_is_single_precision():
    args = args32()
    g = specialize(to_graph(step), list(signature_of(args)))
    optimize(g)
    dump = {}
    compile_program(g, dump=dump)
    ir = dump["optimized"]
    called = set(re.findall(r"call [^@]*@([\w.]+)\(", ir))
    assert "sgemm" in called and "dgemm" not in called, sorted(called)
    if ("tanh", "float32") in runtime.MVEC:
        assert any(c.startswith("_ZGV") and c.endswith("tanhf") for c in called), sorted(called)
    assert not any(c.startswith("_ZGV") and not c.endswith("f") for c in called), sorted(called)
    # a conversion to double only to box the float32 loss (np.float32(PyFloat))
    lines = ir.splitlines()
    for i, line in enumerate(lines):
        m = re.search(r"(%[\w.]+) = fpext float", line)
        if m:
            uses = [x for x in lines[i + 1:] if re.search(re.escape(m.group(1)) + r"\b", x)]
            assert uses and all("PyFloat_FromDouble" in u for u in uses), (line, uses)
