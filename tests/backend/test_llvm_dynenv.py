"""Environments of unknown contents on the LLVM backend (myia.backend.llvm.dynenv).

The second derivative of a loop or a recursion holds environments that nest without
bound; inference widens them to "unknown contents", and the backend lowers them as
lists typed at run time.  These programs check that path directly: that it is taken
(the module stores values in such lists) and that what it computes is the VM's
result and agrees with finite differences.
"""

import math

import numpy as np
import pytest

import myia
from myia.backend.llvm import LLVMBackend, dispatch
from myia.pipeline import optimized_program

from ..helpers import numerical_grad


def compiled_on_llvm(fn, *args):
    backend = LLVMBackend(optimized_program)
    return backend.compile(backend.typed_program(fn, args))


def scaled_powers(x, n):
    # a while loop with a data-dependent trip count whose body makes a closure
    s = 0.0
    k = 0
    while k < n:
        f = lambda t: t * x
        s = f(s) + math.sin(x * k)
        k = k + 1
    return s


def array_iterates(x, n):
    # the loop carries an array and a tuple: their sensitivities are stored in the
    # environments too (arrays are added elementwise when two environments merge);
    # n is known at run time only, so that the optimizer cannot unroll the loop
    v = np.ones(3) * x
    pair = (x, 2.0 * x)
    i = 0
    while i < n:
        v = np.tanh(v) * pair[1]
        pair = (pair[1], pair[0] * x)
        i = i + 1
    return np.sum(v) + pair[0]


def ping(x, n):
    return x if n == 0 else pong(math.sin(x * x), n - 1)


def pong(x, n):
    return x if n == 0 else ping(x * 1.5, n - 1)


CASES = [
    (scaled_powers, (0.7, 4)),
    (scaled_powers, (1.3, 0)),
    (array_iterates, (0.4, 3)),
    (ping, (0.8, 5)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=lambda v: getattr(v, "__name__", None))
def test_second_derivative_matches_the_vm_and_finite_differences(fn, args):
    d2 = myia.grad(myia.grad(fn))
    program = compiled_on_llvm(d2, *args)
    assert program.lowering.dynenv.types, "the program holds environments of unknown contents"
    got = program(*args)
    assert got == pytest.approx(myia.compile(d2, backend="vm")(*args), rel=1e-12, abs=1e-12)
    fd = numerical_grad(myia.compile(myia.grad(fn), backend="vm"), args, 0, 1e-6)
    assert got == pytest.approx(fd, rel=1e-5, abs=1e-6)


def test_stored_types_are_canonical():
    # two environments of one key must be addable: arrays of any static shape and
    # nested environments are stored in one type each
    from myia.backend.llvm.dynenv import canonical
    from myia.backend.llvm.ltypes import ANY_ENV, Array, Env, Scalar, Tuple

    t = Tuple([Array("float64", (3,)), Env([]), Scalar("float64")])
    assert canonical(t) == Tuple([Array("float64", (None,)), ANY_ENV, Scalar("float64")])
    assert canonical(canonical(t)) == canonical(t)


def test_set_get_add_on_lists_typed_at_run_time():
    # a program written directly in the IR, its types given as the backend's own:
    # two environments of unknown contents that share a key are added
    from myia.backend.llvm.ltypes import ANY_ENV, Scalar, Tuple
    from myia.ir import EnvKey, Graph
    from myia.prim import ops as P

    f64 = Scalar("float64")
    g = Graph("envs")
    a, b = g.add_parameter("a"), g.add_parameter("b")
    a.abstract = b.abstract = f64
    k1, k2, k3 = EnvKey(a), EnvKey(b), EnvKey(g)

    def op(prim, *args, t):
        node = g.apply(prim, *args)
        node.abstract = t
        return node

    empty = op(P.env_new, t=ANY_ENV)
    pair = op(P.make_tuple, a, b, t=Tuple([f64, f64]))
    e1 = op(P.env_setitem, op(P.env_setitem, empty, k1, a, t=ANY_ENV), k2, pair, t=ANY_ENV)
    e2 = op(P.env_setitem, empty, k2, pair, t=ANY_ENV)
    e2 = op(P.env_setitem, e2, k1, b, t=ANY_ENV)
    e2 = op(P.env_setitem, e2, k1, a, t=ANY_ENV)  # a key set again: the last value counts
    e3 = op(P.env_add, e1, e2, t=ANY_ENV)
    summed = op(P.env_getitem, e3, k1, 0.0, t=f64)  # a + a
    pair2 = op(P.env_getitem, e3, k2, (0.0, 0.0), t=Tuple([f64, f64]))  # (2a, 2b)
    second = op(P.tuple_getitem, pair2, 1, t=f64)
    absent = op(P.env_getitem, e3, k3, 5.0, t=f64)
    g.output = op(P.make_tuple, summed, second, absent, t=Tuple([f64, f64, f64]))
    program = dispatch.compile_program(g)
    assert program(1.5, 4.0) == (3.0, 8.0, 5.0)
