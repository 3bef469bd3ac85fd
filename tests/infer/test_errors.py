"""Type and shape errors found by inference, before anything runs: each names the
types or shapes involved, the file and line, and shows the source line with a caret.
None of them hangs (each fails past a 60 s timeout).  Each runs on "vm" and on "llvm" (the
`backend` fixture, tests/conftest.py): the LLVM backend compiles the optimized program,
and the error must still come from inference, before anything runs."""

import myia
import numpy as np
import pytest
from myia.errors import MyiaShapeError, MyiaTypeError
from myia.infer import abstract_of, specialize
from myia.parser import parse

pytestmark = [pytest.mark.usefixtures("backend"), pytest.mark.timeout(60)]


def error_of(fn, *args, error=MyiaTypeError):
    """The error that compiling and calling `fn(*args)` raises (nothing runs)."""
    with pytest.raises(error) as info:
        myia.compile(fn)(*args)
    return info.value


def check_message(err, fn, snippet, *fragments):
    """`err` points at the line of `fn` holding `snippet`, with a caret, and its text
    contains every fragment."""
    import inspect

    lines, start = inspect.getsourcelines(fn)
    line = start + next(i for i, text in enumerate(lines) if snippet in text)
    text = str(err)
    assert err.loc is not None, text
    assert err.loc.line == line, text
    assert f"line {line}" in text, text
    assert snippet in text, text
    assert "^" in text, text
    for f in fragments:
        assert f in text, text


# ---------------------------------------------------------------- the programs


def add_tuple(x):
    return x + (1, 2)


def literal_add_tuple():
    return 1.0 + (1, 2)


def call_with(f, x):
    return f(x)


def wrong_argument_count(x):
    return call_with(lambda a, b: a + b, x)


def matmul(a, b):
    return a @ b


def branches_differ(x):
    if x > 0:
        return x * 2.0
    return (x, x)


def no_base_case(x):
    return no_base_case(x - 1.0)


def calls_no_base_case(x):
    return no_base_case(x) + 1.0


def endless_loop(x):
    while True:
        x = x + 1.0
    return x


def ping(x):
    return pong(x * 2.0)


def pong(x):
    return ping(x - 1.0)


def sum_bad_axis(x):
    return np.sum(x, axis=2)


def reshape_bad(x):
    return x.reshape((5, 3))


def broadcast_bad(x, y):
    return x + y


# ---------------------------------------------------------------- the tests


def test_float_plus_tuple():
    err = error_of(add_tuple, 1.0)
    check_message(err, add_tuple, "return x + (1, 2)", "f64", "(i64, i64)", "`+`")


def test_literal_float_plus_tuple():
    err = error_of(literal_add_tuple)
    check_message(err, literal_add_tuple, "return 1.0 + (1, 2)", "f64 and (i64, i64)")


def test_wrong_number_of_arguments():
    err = error_of(wrong_argument_count, 1.0)
    check_message(err, call_with, "return f(x)",
                  "takes 2 arguments (a, b) but 1 was given")


def test_matmul_shapes():
    err = error_of(matmul, np.ones((3, 4)), np.ones((5, 2)), error=MyiaShapeError)
    check_message(err, matmul, "return a @ b", "matmul of shapes (3, 4) and (5, 2)")


def test_branches_of_different_types():
    err = error_of(branches_differ, 1.0)
    check_message(err, branches_differ, "if x > 0:",
                  "the two branches of this `if` return different types: f64 and (f64, f64)")


def test_recursion_without_base_case():
    err = error_of(no_base_case, 1.0)
    check_message(err, no_base_case, "def no_base_case", "`no_base_case` never returns",
                  "every path recurses")


def test_recursion_without_base_case_called_from_elsewhere():
    err = error_of(calls_no_base_case, 1.0)
    check_message(err, no_base_case, "def no_base_case", "`no_base_case` never returns")


def test_mutual_recursion_without_base_case():
    err = error_of(ping, 1.0)
    assert "never returns" in str(err)
    assert err.loc.line in (ping.__code__.co_firstlineno, pong.__code__.co_firstlineno)


def test_loop_that_never_ends():
    err = error_of(endless_loop, 1.0)
    check_message(err, endless_loop, "while True:", "loop", "never ends")


def test_reduction_axis_out_of_bounds():
    err = error_of(sum_bad_axis, np.ones((3, 4)), error=MyiaShapeError)
    # np.sum is written in the subset (myia.lib): the error points there,
    # and says which axis and rank
    assert "axis 2 is out of bounds for an array of rank 2" in str(err)


def test_reshape_size_mismatch():
    err = error_of(reshape_bad, np.ones((2, 6)), error=MyiaShapeError)
    assert "cannot reshape an array of shape (2, 6) into shape (5, 3)" in str(err)


def test_broadcast_mismatch():
    err = error_of(broadcast_bad, np.ones((3, 4)), np.ones(5), error=MyiaShapeError)
    check_message(err, broadcast_bad, "return x + y", "cannot broadcast shapes (3, 4) and (5,)")


def test_errors_come_before_running():
    """The typed stage reports the same error, without any argument value."""
    with pytest.raises(MyiaShapeError, match=r"matmul of shapes \(3, 4\) and"):
        myia.ir(matmul, np.ones((3, 4)), np.ones((5, 2)), stage="typed")
    with pytest.raises(MyiaTypeError, match="never returns"):
        specialize(parse(no_base_case), [abstract_of(1.0)])
