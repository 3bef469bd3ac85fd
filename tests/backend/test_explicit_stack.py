"""Recursions with one recursive call run as loops: over an explicit stack
(myia.backend.llvm.explicit_stack), or, where the call's result only goes into the
closure the function returns, linking closures as it goes (cons_loop).  Results equal
plain Python's and the VM's, across many chunks of the stack, with values of every
kind saved across the call; the lowered functions no longer call themselves."""

import re

import numpy as np
import pytest

import myia
from myia.backend.llvm.dispatch import compile_program
from myia.pipeline import Pipeline

from ..compare import assert_same


def saves_values_of_every_kind(n, v, pair):
    # what follows the call uses an array, a tuple, an int and a float computed before
    if n == 0:
        return v
    w = v * 2.0 + pair[1]
    k = n * 3
    r = saves_values_of_every_kind(n - 1, w * 0.5, (pair[1], pair[0]))
    return r * 0.5 + w * pair[0] + k


def reenters_after_the_call(n, acc):
    # after the recursive call, a tail call of itself starts a new recursion while
    # calls are still pending on the stack
    if n <= 0:
        return acc
    r = reenters_after_the_call(n - 1, acc + 1.0)
    if n % 5 == 0 and r > 3.0:
        return reenters_after_the_call(n // 5 - 1, r * 0.5)
    return r + n


def chooses_what_to_call(n, x):
    # the recursive call is one option of a function value; the other ends the chain
    f = chooses_what_to_call if n > 0 else stop
    y = f(n - 1, x * 1.5)
    return y - x


def stop(n, x):
    return x


@pytest.mark.parametrize("n", [0, 1, 7, 3000])
def test_a_recursion_saving_values_of_every_kind(n):
    v = np.linspace(0.0, 1.0, 5)
    args = (n, v, (0.25, 0.5))
    want = myia.compile(saves_values_of_every_kind, backend="vm")(*args) if n < 100 else \
        _python(saves_values_of_every_kind, args)
    assert_same(myia.compile(saves_values_of_every_kind, backend="llvm")(*args), want)


@pytest.mark.parametrize("n", [0, 4, 25, 2000])
def test_a_recursion_that_reenters_itself_after_the_call(n):
    want = _python(reenters_after_the_call, (n, 0.0))
    assert myia.compile(reenters_after_the_call, backend="llvm")(n, 0.0) == want
    if n < 100:
        assert myia.compile(reenters_after_the_call, backend="vm")(n, 0.0) == want


@pytest.mark.parametrize("n", [0, 3, 1000])
def test_a_recursion_through_a_function_value(n):
    want = _python(chooses_what_to_call, (n, 0.75))
    assert myia.compile(chooses_what_to_call, backend="llvm")(n, 0.75) == \
        pytest.approx(want, rel=1e-12)


def test_the_gradient_of_a_loop_is_lowered_without_recursion():
    def loop(x, n):
        i = 0
        while i < n:
            x = np.sin(x) * 0.5 + x * 0.5
            i = i + 1
        return x

    g = Pipeline(backend="llvm").optimized(myia.grad(loop), (0.5, 10))[0]
    dump = {}
    compile_program(g, dump=dump)
    ir_text = dump["ir"]
    functions = re.findall(r'define internal i32 @"([^"]+)"', ir_text)
    assert len(functions) > 1
    for name in functions:
        body = ir_text.split(f'define internal i32 @"{name}"', 1)[1].split("\n}\n", 1)[0]
        assert f'@"{name}"(' not in body, f"{name} still calls itself"
    want = myia.compile(myia.grad(loop), backend="vm")(0.5, 50)
    assert myia.compile(myia.grad(loop), backend="llvm")(0.5, 50) == pytest.approx(want,
                                                                                   rel=1e-12)


def _python(fn, args):
    """`fn` run as plain Python (a subset function is ordinary Python), with a
    recursion limit large enough for the deep cases."""
    import sys

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20000))
    try:
        return fn(*args)
    finally:
        sys.setrecursionlimit(old)


# ---- closures made by the recursion (myia.backend.llvm.cons_loop) --------------------


def chain(n, x):
    # each level returns a closure over what it computed and what the rest returned:
    # its record is made before the call, with a hole for the rest (a cons loop)
    if n == 0:
        def last():
            return x

        return last
    c = x * 2.0
    rest = chain(n - 1, x + 1.0)

    def link():
        return rest() * 0.5 + c  # calling the chain: a stack loop

    return link


def call_chain(n, x):
    return chain(n, x)()


@pytest.mark.parametrize("n", [0, 1, 6, 3000])
def test_a_recursion_that_returns_closures_over_its_result(n):
    want = _python(call_chain, (n, 0.25))
    assert myia.compile(call_chain, backend="llvm")(n, 0.25) == pytest.approx(want, rel=1e-12)
    if n < 100:
        assert myia.compile(call_chain, backend="vm")(n, 0.25) == pytest.approx(want, rel=1e-12)


def test_which_recursions_become_loops():
    # the forward pass is a cons loop making a chain of records (backend/llvm/chain.py),
    # the backward pass a stack loop that walks it back (ChainWalk)
    from myia.backend.llvm import lower
    from myia.backend.llvm.chain import ChainWalk
    from myia.backend.llvm.cons_loop import ConsLoop

    seen = []
    original = lower.FnLowering.lower

    def spy(self):
        original(self)
        seen.append((self.entry.name, type(self.stack)))

    lower.FnLowering.lower = spy
    try:
        myia.compile(call_chain, backend="llvm")(3, 0.25)
    finally:
        lower.FnLowering.lower = original
    kinds = {kind for _, kind in seen}
    assert {ConsLoop, ChainWalk} <= kinds, seen
