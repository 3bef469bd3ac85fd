"""Parsed programs run on each backend ("vm" and "llvm", the `backend` fixture of
tests/conftest.py) and give Python's results.

The corpus (tests/corpus.py) runs in tests/backend/test_vm_corpus.py; here are the
programs that exercise the parser's corners: every control-flow shape, closures,
defaults and keywords, asserts kept alive, loops with break/continue/return.
"""

import math

import numpy as np
import pytest

import myia
from myia.errors import MyiaAssertionError

from ..compare import assert_same

OFFSET = 0.5


def scaled(x, scale=2.0, shift=0.0):
    return x * scale + shift


def add_pair(a, b=10):
    return a * 100 + b


# ---------------------------------------------------------------- programs


def branches_all_shapes(x):
    if x < -10:
        return -1.0
    elif x < 0:
        y = -x
    elif x == 0:
        y = 0.0
    else:
        y = x * 2
        if y > 5:
            y = 5.0
    return y + 1


def nested_ifexp_and_or(a, b):
    c = a if a > b else b
    d = (a and b) or (not a and 3)
    e = a or b or 7
    return c, d, e, 0 < a <= b < 10, a < b > 1


def loops_break_continue_return(n):
    total = 0
    i = 0
    while True:
        i += 1
        if i > n:
            break
        if i % 3 == 0:
            continue
        for j in range(i, 0, -1):
            if j == 2:
                break
            total += j
        if total > 1000:
            return -total
    return total


def range_variable_step(a, b, s):
    acc = 0
    for i in range(a, b, s):
        acc = acc * 3 + i
    return acc


def range_three_forms(n):
    a = 0
    for i in range(n):
        a += i
    for i in range(2, n):
        a += i * 10
    for i in range(n, 0, -2):
        a += i * 100
    return a


def tuple_loops(t):
    s = 0.0
    for i, (a, b) in t:
        s = s + i * a - b
    count = 0
    for _ in t:
        count += 1
    return s, count


def defaults_and_keywords(x):
    def local(a, b=1, c=2):
        return a + 10 * b + 100 * c

    f = lambda u, v=3: u * v  # noqa: E731
    return (scaled(x), scaled(x, shift=1.0), scaled(shift=-1.0, x=x, scale=3.0),
            add_pair(b=1, a=2), local(x, c=5), local(c=0, a=1), f(x), f(x, v=-1))


def closures(x):
    k = x * 2

    def add_k(y):
        return y + k

    def twice(f, y):
        return f(f(y))

    g = lambda y: add_k(y) * OFFSET  # noqa: E731
    return twice(add_k, x), twice(g, 1.0), (lambda: k + x)()


def nested_mutual_recursion(n):
    def even(k):
        if k == 0:
            return True
        return odd(k - 1)

    def odd(k):
        if k == 0:
            return False
        return even(k - 1)

    return even(n), odd(n)


def function_phi(x):
    if x > 0:
        def g(n):
            return 0 if n == 0 else 1 + g(n - 1)
    else:
        def g(n):
            return -n
    return g(3) + x


def closure_in_loop(x, n):
    acc = 0.0
    for i in range(n):
        def step(y):
            return y + i * x

        acc = step(acc)
    fs = (lambda y: y + 1, lambda y: y * 2)
    return acc, fs[0](acc), fs[1](acc)


def unpacking_and_augassign(t):
    a, (b, c) = t
    x = y = a + b
    x += c
    y *= 2
    x -= 1
    y //= 3
    x **= 2
    y %= 5
    x /= 4
    return x, y, c


def arrays_and_indexing(x):
    y = x.reshape(2, 3)
    z = y.T
    s = y.sum(axis=0) + np.sum(z, axis=1)
    return (s, y[:, 1], y[1, ::-1], x[-2:], z.shape, y[0, 1], x[1:4:2],
            np.zeros((2,), dtype=np.float64) + y.ndim)


def is_none_default(x, y=None):
    if y is None:
        return x
    return x + y


def with_docstring_and_pass(x):
    """Docstrings are ignored."""
    pass
    scaled(x)
    return x


def asserts_in_loop(n):
    s = 0
    for i in range(n):
        assert i < 3, "i too large"
        s += i
    return s


def assert_in_branch(x):
    if x > 0:
        assert x < 10, "too big"
        y = x
    else:
        y = -x
    return y


def math_and_constants(x):
    return math.sin(x) + math.pi * OFFSET - abs(-x) + max(x, 1.0) + min(x, 1.0) + float(3)


def python_closure_cell(k):
    def inner(x):
        return x * k + OFFSET

    return inner


PROGRAMS = [
    (branches_all_shapes, [(-20.0,), (-3.0,), (0.0,), (1.0,), (4.0,)]),
    (nested_ifexp_and_or, [(1, 2), (0, 5), (3, 3), (2, 0)]),
    (loops_break_continue_return, [(0,), (5,), (12,), (60,)]),
    (range_variable_step, [(0, 10, 3), (10, 0, -3), (0, 5, -1), (5, 5, 1)]),
    (range_three_forms, [(0,), (1,), (7,)]),
    (tuple_loops, [(((1, (2.0, 3.0)), (2, (0.5, 1.0))),)]),
    (defaults_and_keywords, [(2.0,)]),
    (closures, [(1.5,)]),
    (nested_mutual_recursion, [(7,), (10,)]),
    (function_phi, [(1.0,), (-1.0,)]),
    (closure_in_loop, [(0.5, 4)]),
    (unpacking_and_augassign, [((7, (3, 2)),)]),
    (arrays_and_indexing, [(np.arange(6.0),)]),
    (is_none_default, [(1.0,), (1.0, 2.0)]),
    (with_docstring_and_pass, [(3.0,)]),
    (asserts_in_loop, [(0,), (3,)]),
    (assert_in_branch, [(3.0,), (-30.0,)]),
    (math_and_constants, [(0.3,), (2.0,)]),
    (python_closure_cell(3.0), [(2.0,)]),
]


@pytest.mark.parametrize(
    "fn, args",
    [(fn, args) for fn, arglist in PROGRAMS for args in arglist],
    ids=[f"{fn.__name__}{args}" for fn, arglist in PROGRAMS for args in arglist],
)
def test_program_runs_like_python(fn, args, backend):
    assert_same(myia.compile(fn, backend=backend)(*args), fn(*args))


@pytest.mark.parametrize("fn, args, message", [
    (asserts_in_loop, (5,), "i too large"),
    (assert_in_branch, (30.0,), "too big"),
    (range_variable_step, (0, 5, 0), "step"),
])
def test_asserts_are_kept_alive(fn, args, message, backend):
    with pytest.raises(MyiaAssertionError, match=message):
        myia.compile(fn, backend=backend)(*args)


def total_of(first, *rest):
    acc = first
    for r in rest:
        acc = acc + r
    return acc


def uses_varargs(x):
    return total_of(x) + total_of(x, 1.0, 2.0) + total_of(first=x)


def test_star_args_collect_the_extra_positional_arguments():
    import myia
    from myia.errors import MyiaError

    for backend in ("vm", "llvm"):
        assert myia.compile(uses_varargs, backend=backend)(1.5) == 7.5
    assert myia.grad(uses_varargs)(1.5) == 3.0
    with pytest.raises(MyiaError, match="only subset code can call it"):
        myia.compile(total_of)(1.0, 2.0)


def test_defaults_from_the_enclosing_scope():
    """`def fun(x, num=num)`: Python evaluated the default when the def ran."""
    num = 3
    scale = np.array([1.0, 2.0])

    def fun(x, n=num, s=scale, dt=np.float32):
        return np.sum(x * s) * n + np.zeros(2, dtype=dt).sum()

    for backend in ("vm", "llvm"):
        assert myia.compile(fun, backend=backend)(np.ones(2)) == 9.0
    np.testing.assert_array_equal(myia.grad(fun)(np.ones(2)), [3.0, 6.0])


def padded(x, mode="constant"):
    return np.pad(x, 1, mode=mode)


def test_a_string_argument_is_static():
    """A string (a mode, a dtype name) specializes the program, as None does."""
    x = np.array([1.0, 2.0, 3.0])
    for backend in ("vm", "llvm"):
        f = myia.compile(padded, backend=backend)
        np.testing.assert_array_equal(f(x), np.pad(x, 1))
        np.testing.assert_array_equal(f(x, "edge"), np.pad(x, 1, mode="edge"))
        np.testing.assert_array_equal(f(x, "reflect"), np.pad(x, 1, mode="reflect"))
