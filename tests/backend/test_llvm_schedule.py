"""How the LLVM backend orders and combines the operations of a graph."""

import math

import myia
from tests.ad.test_must_hold import sin_loop
from tests.helpers import llvm_ir


def rotate(x):
    return math.sin(x) * 2.0 + math.cos(x)


def test_sin_and_cos_of_one_value_are_one_sincos():
    text = llvm_ir(rotate, 0.3)
    assert "@sincos(" in text and "@sin(" not in text and "@cos(" not in text
    assert myia.compile(rotate, backend="llvm")(0.3) == rotate(0.3)


def test_the_forward_pass_computes_the_cos_its_backpropagator_needs():
    # cos(x) moves from the backpropagator to the forward pass, next to sin(x), and the
    # call of the rest of the loop comes after both: one sincos per iteration
    text = llvm_ir(myia.grad(sin_loop), 0.5, 10)
    assert "@sincos(" in text and "@cos(" not in text
    want = myia.compile(myia.grad(sin_loop), backend="vm")(0.5, 1000)
    assert math.isclose(myia.compile(myia.grad(sin_loop), backend="llvm")(0.5, 1000), want,
                        rel_tol=1e-12)
