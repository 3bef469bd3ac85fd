"""The call of a compiled function from Python after its first call goes straight to
the native entry of its last signature (issue 22: a scalar gradient's call costs about
what a numba function's does; benchmarks/run.py measures it).  What that path must not
lose: the checks of `grad` (an int argument is refused), defaults, new signatures,
keyword arguments, $MYIA_BACKEND read again, and errors without the compiler's frames."""

import os
import types

import numpy as np
import pytest

import myia
from myia.errors import MyiaGradError


def poly(x, k=3.0):
    return k * x * x + np.sin(x)


def cubic(x):
    return x * x * x + np.sin(x)


def test_grad_calls_after_the_first_keep_their_checks():
    g = myia.grad(cubic)
    assert g(1.5) == pytest.approx(3 * 1.5 ** 2 + np.cos(1.5))
    assert g._fast is not None  # the next calls take the native entry
    assert g(0.5) == pytest.approx(0.75 + np.cos(0.5))
    with pytest.raises(MyiaGradError, match="it is an integer"):
        g(2)  # not the float the entry was compiled for: the full path, and its check
    assert g(np.float32(0.5)) == pytest.approx(0.75 + np.cos(0.5), rel=1e-6)
    assert g(0.5) == pytest.approx(0.75 + np.cos(0.5))  # and back
    d = myia.grad(poly)  # with a default: fewer arguments than the entry takes
    assert d(0.5) == pytest.approx(3.0 + np.cos(0.5))
    assert d(0.5, 1.0) == pytest.approx(1.0 + np.cos(0.5))
    assert d(0.5) == pytest.approx(3.0 + np.cos(0.5))


def test_compiled_calls_after_the_first_fill_defaults_and_take_keywords():
    c = myia.compile(poly, backend="llvm")
    assert c(2.0, 1.0) == pytest.approx(4.0 + np.sin(2.0))
    # the native entry is the compiled function's own __call__: a builtin
    assert isinstance(type(c).__call__, types.BuiltinFunctionType)
    assert c(2.0) == pytest.approx(12.0 + np.sin(2.0))  # the default, through MISMATCH
    x = np.linspace(0, 1, 5)
    np.testing.assert_allclose(c(x), 3.0 * x * x + np.sin(x))
    assert c(2.0, k=1.0) == pytest.approx(c(2.0, 1.0))  # bound by name, as jax.jit does
    with pytest.raises(myia.errors.MyiaTypeError, match="has no parameter `z`"):
        c(2.0, z=1.0)


def test_the_backend_is_read_again_when_the_environment_changes(monkeypatch):
    g = myia.grad(cubic)
    monkeypatch.setenv("MYIA_BACKEND", "llvm")
    assert g(1.0) == pytest.approx(3.0 + np.cos(1.0))
    assert g._fast is not None
    monkeypatch.setenv("MYIA_BACKEND", "vm")
    assert g(1.0) == pytest.approx(3.0 + np.cos(1.0))
    assert "vm" in g._compiled  # the VM ran it: the fast path saw the change
    assert os.environ["MYIA_BACKEND"] == "vm"


def test_errors_from_the_fast_path_have_no_compiler_frames():
    def bad_index(x, i):
        return x[i]

    c = myia.compile(bad_index, backend="llvm")
    x = np.arange(3.0)
    assert c(x, 1) == 1.0
    with pytest.raises(myia.errors.MyiaError) as info:
        c(x, 7)
    # none of the compiler's frames: the native entry (the function's __call__) raises it
    frames = [f for f in info.traceback if "myia" + os.sep in str(f.path)]
    assert [os.path.basename(str(f.path)) for f in frames] == []


def two_calls_deep(n):
    if n == 0:
        return 0
    return two_calls_deep(n - 1) + two_calls_deep(0) + 1  # two calls: native recursion


def test_a_call_that_needs_a_deep_stack_goes_through_the_fallback():
    # the native __call__ runs out of its stack budget and hands the call to the full
    # path, which runs it again on the big stack
    c = myia.compile(two_calls_deep, backend="llvm")
    assert c(10) == 10
    assert isinstance(type(c).__call__, types.BuiltinFunctionType)
    assert c(300_000) == 300_000
    assert c(12) == 12
