"""One arithmetic, checked sizes and checked arguments, the same on every backend
(issue 16): int64 overflow is a located MyiaOverflowError, never a wrap; an array too
big to exist is refused before anything is allocated; what crosses from Python is
converted (a float subclass is a float) or refused; errors are Myia errors of the
kind the LLVM backend raises, with the source line.  Each test runs on "vm" and on
"llvm" (the `backend` fixture)."""

import inspect
import math

import numpy as np
import pytest

import myia
from myia.errors import MyiaOverflowError, MyiaTypeError, MyiaValueError
from myia.prim import ops as P

pytestmark = pytest.mark.usefixtures("backend")

BIG = 2 ** 62
INT64_MIN = -2 ** 63
INT64_MAX = 2 ** 63 - 1


def mul(a, b):
    return a * b


def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def power(a, b):
    return a ** b


def absolute(a):
    return abs(a)


def negate(a):
    return -a


def floor_div(a, b):
    return a // b


def modulo(a, b):
    return a % b


def to_int(x):
    return int(x)


def error_of(fn, *args, kind=MyiaOverflowError):
    with pytest.raises(kind) as info:
        myia.compile(fn)(*args)
    return info.value


def points_at(err, fn, snippet):
    lines, start = inspect.getsourcelines(fn)
    line = start + next(i for i, text in enumerate(lines) if snippet in text)
    assert err.loc is not None and err.loc.line == line, str(err)
    assert "^" in str(err)


@pytest.mark.parametrize("fn, args, text", [
    (mul, (BIG, 4), "4611686018427387904 * 4"),
    (add, (INT64_MAX, 1), "9223372036854775807 + 1"),
    (sub, (INT64_MIN, 1), "-9223372036854775808 - 1"),
    (power, (3, 50), "3 ** 50"),
    (power, (2, 63), "2 ** 63"),
    (absolute, (INT64_MIN,), "abs(-9223372036854775808)"),
    (negate, (INT64_MIN,), "-(-9223372036854775808)"),
    (floor_div, (INT64_MIN, -1), "-9223372036854775808 // -1"),
], ids=lambda v: getattr(v, "__name__", None))
def test_int64_overflow_is_a_located_error(fn, args, text):
    err = error_of(fn, *args)
    assert str(err).splitlines()[0] == f"integer overflow: {text} is out of int64's range"
    points_at(err, fn, "return")


@pytest.mark.parametrize("fn, args, want", [
    (mul, (3, 5), 15),
    (power, (-2, 63), INT64_MIN),  # the edge itself fits
    (power, (0, 0), 1),
    (power, (7, 1), 7),
    (add, (INT64_MAX, -1), INT64_MAX - 1),
    (modulo, (INT64_MIN, -1), 0),
    (floor_div, (7, -2), -4),
    (modulo, (-7, 3), 2),
    (mul, (True, 3), 3),
    (negate, (INT64_MAX,), -INT64_MAX),
], ids=lambda v: getattr(v, "__name__", None))
def test_in_range_integers_are_exact(fn, args, want):
    got = myia.compile(fn)(*args)
    assert got == want and type(got) is int


def overflow_in_a_loop(n):
    x = 1
    i = 0
    while i < n:
        x = x * 3
        i = i + 1
    return x


def test_overflow_is_found_where_it_happens():
    assert myia.compile(overflow_in_a_loop)(39) == 3 ** 39
    err = error_of(overflow_in_a_loop, 40)
    assert "12157665459056928801 * 3" not in str(err)  # no wrapped value is ever shown
    assert "4052555153018976267 * 3 is out of int64's range" in str(err)
    points_at(err, overflow_in_a_loop, "x = x * 3")


def test_a_negative_integer_power_is_refused_on_every_backend():
    err = error_of(power, 2, -1, kind=MyiaValueError)
    assert "negative integer power (-1)" in str(err)


def power_of_minus_one(x):
    return x ** -1


def power_of_a_sum(x, y):
    return np.sum((x + 1) ** (y - 1), axis=1)


WIDE = np.arange(1, 23).reshape(2, 11)  # rows of 11: vector lanes and a remainder
WIDE_LAST = np.ones((2, 11), dtype=np.int64)
WIDE_LAST[1, 10] = 0  # y - 1 is -1 at the very last element only


@pytest.mark.parametrize("fn, args", [
    (power_of_minus_one, (np.array([2, 1, 1]),)),
    (power, (np.array([2, 1, 1]), -1)),  # the exponent known only at run time
    (power, (np.array([2, 1, 1]), np.array([1, -1, 2]))),
    (power, (2, np.array([1, 2, -3]))),
    (power_of_minus_one, (np.array([True, False]),)),
    (power_of_minus_one, (WIDE,)),
    (power_of_a_sum, (WIDE, WIDE_LAST)),  # fused into a reduction
], ids=lambda v: getattr(v, "__name__", None))
def test_an_integer_array_to_a_negative_power_is_refused_as_numpy_refuses_it(fn, args):
    with pytest.raises(ValueError) as numpy_error:
        fn(*args)
    err = error_of(fn, *args, kind=MyiaValueError)
    assert str(err).splitlines()[0] == str(numpy_error.value)
    points_at(err, fn, "return")


@pytest.mark.parametrize("fn, args", [
    (power_of_minus_one, (np.zeros(0, dtype=np.int64),)),  # no element, no error
    (power_of_minus_one, (np.array([2.0, 4.0]),)),
    (power, (np.array([2, 1, 3]), 2)),
    (power, (np.array([2, 1, 3]), np.array([0, 5, 3]))),
    (power_of_a_sum, (WIDE, WIDE_LAST + 1)),
], ids=lambda v: getattr(v, "__name__", None))
def test_integer_arrays_to_non_negative_powers_are_numpy_s(fn, args):
    got = myia.compile(fn)(*args)
    want = fn(*args)
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_int_of_a_float_out_of_range():
    assert myia.compile(to_int)(-3.7) == -3
    err = error_of(to_int, 1e30)
    assert "out of int64's range" in str(err)
    err = error_of(to_int, math.inf)
    assert "out of int64's range" in str(err)
    err = error_of(to_int, math.nan, kind=MyiaValueError)
    assert not isinstance(err, MyiaOverflowError) and "nan" in str(err)


def folded_overflow():
    x = 2 ** 62
    return x * 4  # constants: the optimizer must not fold this into a wrapped value


def test_overflow_between_constants_is_not_folded_away():
    err = error_of(folded_overflow)
    points_at(err, folded_overflow, "x * 4")


# ---- sizes -------------------------------------------------------------------------------


def ones_of(n):
    return np.ones((n, 8))


def element_of_ones(n):
    return np.ones((n, 8))[0, 3]


def sum_of_full(x, n):
    return np.sum(np.full((n, 8), x))


def zeros_square(n):
    return np.zeros((n, n))


def reshaped_empty(n):
    return np.reshape(np.zeros(0), (n, 4))


def broadcast_sum(n):
    return np.sum(P.broadcast_to(np.zeros((1, 1)), (n, n)) + 1.0)


def where_of(n):
    return np.where(np.full((n, 8), 1.0) > 0.0, 1.0, 0.0)


@pytest.mark.parametrize("fn, args, shape", [
    (ones_of, (2 ** 61,), "(2305843009213693952, 8)"),
    (element_of_ones, (2 ** 61,), "(2305843009213693952, 8)"),
    (sum_of_full, (1.0, 2 ** 61), "(2305843009213693952, 8)"),
    (zeros_square, (2 ** 32,), "(4294967296, 4294967296)"),
    (reshaped_empty, (2 ** 62,), "(4611686018427387904, 4)"),
    (broadcast_sum, (2 ** 32,), "(4294967296, 4294967296)"),
    (where_of, (2 ** 61,), "(2305843009213693952, 8)"),
], ids=lambda v: getattr(v, "__name__", None))
def test_an_array_too_big_is_refused_before_it_is_allocated(fn, args, shape):
    err = error_of(fn, *args)
    assert str(err).splitlines()[0] == f"array of shape {shape} is too big"
    assert err.loc is not None


def test_the_gradient_of_a_too_big_array_is_refused_too():
    with pytest.raises(MyiaOverflowError, match="too big"):
        myia.compile(myia.grad(sum_of_full))(1.0, 2 ** 61)


def test_negative_dimensions():
    err = error_of(ones_of, -2, kind=MyiaValueError)
    assert str(err).splitlines()[0] == "negative dimensions are not allowed: (-2, 8)"


def test_the_gradient_of_full_is_its_size():
    # np.full(shape, x) holds x in every element (it was once taken as constant)
    g = myia.compile(myia.grad(sum_of_full))
    assert g(1.5, 3) == 24.0


# ---- arguments ---------------------------------------------------------------------------


class SneakyFloat(float):
    def __add__(self, other):
        return "not a number"

    __radd__ = __add__


class SneakyInt(int):
    def __mul__(self, other):
        return "not a number"


def test_a_float_subclass_is_read_as_the_number_it_holds():
    # no Python method of the argument runs inside the program
    got = myia.compile(add)(SneakyFloat(1.0), 2.0)
    assert got == 3.0 and type(got) is float
    got = myia.compile(mul)(SneakyInt(3), 2)
    assert got == 6 and type(got) is int


def test_numpy_scalars_are_numbers():
    assert myia.compile(add)(np.float64(1.5), np.int64(2)) == 3.5
    assert myia.compile(add)(np.int64(3), 1) == 4


@pytest.mark.parametrize("arg, kind, text", [
    (b"a", MyiaTypeError, "an argument of type bytes"),
    ({1.0}, MyiaTypeError, "an argument of type set"),
    (1 + 2j, MyiaTypeError, "an argument of type complex"),
    (np.array([1, 2], dtype=np.int32), MyiaTypeError, "an array argument of dtype int32"),
    (2 ** 70, MyiaOverflowError, "the argument 1180591620717411303424 is out of int64's range"),
])
def test_other_arguments_are_refused_with_what_to_pass(arg, kind, text):
    with pytest.raises(kind) as info:
        myia.compile(add)(arg, arg)
    assert text in str(info.value)
    assert info.value.hint


# ---- errors of the right kind ------------------------------------------------------------


def index_out_of_range(x):
    return x[5]


def test_errors_are_myia_errors_of_the_llvm_kind_with_the_line():
    with pytest.raises(MyiaValueError) as info:
        myia.compile(index_out_of_range)(np.ones(3))
    assert not str(info.value).startswith(("IndexError", "ValueError"))
    points_at(info.value, index_out_of_range, "x[5]")
