"""The reference VM: tail calls and deep recursion on its own stack; then closures and
errors, checked on every backend."""

import sys

import numpy as np
import pytest

import myia
from myia.backend.vm import vm as vm_module
from myia.errors import MyiaRecursionError, MyiaTypeError


def count_up(n):
    i = 0
    total = 0
    while i < n:
        total = total + i
        i = i + 1
    return total


def test_million_iteration_loop_runs_in_constant_python_stack():
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # the VM must not recurse in Python per iteration
    try:
        assert myia.compile(count_up, backend="vm")(1_000_000) == count_up(1_000_000)
    finally:
        sys.setrecursionlimit(limit)


def depth(n):
    if n == 0:
        return 0
    return 1 + depth(n - 1)


def test_deep_non_tail_recursion_uses_the_heap():
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)
    try:
        assert myia.compile(depth, backend="vm")(50_000) == 50_000
    finally:
        sys.setrecursionlimit(limit)


def test_recursion_past_the_limit_is_an_error(monkeypatch):
    monkeypatch.setattr(vm_module, "MAX_DEPTH", 1000)
    with pytest.raises(MyiaRecursionError) as e:
        myia.compile(depth, backend="vm")(5000)
    assert "recursion deeper than 1000" in str(e.value)
    assert "return 1 + depth(n - 1)" in str(e.value)


def sines_of(x, n):
    s = 0.0
    i = 0
    while i < n:
        s = s + np.sin(x * i)
        i = i + 1
    return s


def test_a_loop_derivative_past_the_limit_names_the_loop(monkeypatch):
    # issue 38: no recursion of the user's, but the derivative's forward pass keeps a
    # frame per iteration
    monkeypatch.setattr(vm_module, "MAX_DEPTH", 1000)
    with pytest.raises(MyiaRecursionError, match="the derivative of this loop") as e:
        myia.compile(myia.grad(sines_of), backend="vm")(0.5, 5000)
    assert e.value.loc.line == sines_of.__code__.co_firstlineno + 3
    assert "myia.checkpoint" in str(e.value)


# ---- closures and errors, on every backend ------------------------------------------


def make_adder(k):
    def add(x):
        return x + k
    return add


def use_adder(x):
    return make_adder(3.0)(x) * make_adder(x)(1.0)


@pytest.mark.usefixtures("backend")
def test_closures_escape_their_frame():
    assert myia.compile(use_adder)(2.0) == use_adder(2.0)




def two_args(x, y):
    return x + y


def calls_with_too_many(x):
    return two_args(x, x, x)


@pytest.mark.usefixtures("backend")
def test_wrong_argument_count_names_the_function_and_the_line():
    with pytest.raises(myia.MyiaError) as e:
        myia.compile(calls_with_too_many)(1.0)
    text = str(e.value)
    assert "two_args" in text and "3" in text
    assert "return two_args(x, x, x)" in text


def adds_tuple(x):
    return x + (1, 2)


@pytest.mark.usefixtures("backend")
def test_runtime_type_error_points_at_the_line():
    with pytest.raises(MyiaTypeError) as e:
        myia.compile(adds_tuple)(1.0)
    assert "return x + (1, 2)" in str(e.value)
    assert "^" in str(e.value)


@pytest.mark.usefixtures("backend")
def test_errors_carry_no_compiler_traceback():
    with pytest.raises(MyiaTypeError) as e:
        myia.compile(adds_tuple)(1.0)
    frames = [f.name for f in e.traceback]
    assert not any("_run" == name for name in frames), frames


def array_index(x, i):
    return x[i]


@pytest.mark.usefixtures("backend")
def test_array_index_out_of_range_is_a_clear_error():
    with pytest.raises(myia.MyiaValueError) as e:
        myia.compile(array_index)(np.zeros(3), 5)
    text = str(e.value)  # the index, the size, and the line
    assert "5" in text and "3" in text and ("out of range" in text or "out of bounds" in text)
    assert "return x[i]" in text and "^" in text


def float_division(x):
    return x / 0.0


def int_division(n):
    return n // 0


@pytest.mark.usefixtures("backend")
def test_division_semantics():
    assert myia.compile(float_division)(1.0) == float("inf")
    with pytest.raises(myia.MyiaValueError) as e:
        myia.compile(int_division)(3)
    assert "integer division by zero" in str(e.value)
