"""A corpus of small programs written in the Python subset (see DESIGN.md).

Each program is registered with one or more sets of example arguments through the
``@case`` decorator.  Tests compile every case (``myia.compile(case.fn, backend=...)``),
run it on ``case.args`` and compare with plain Python; the cases tagged
``"differentiable"`` are also differentiated with ``myia.grad`` (w.r.t. argument 0) and
compared with autograd (see ``cases_with_numpy``).

Tags (``Case.tags``):

- ``scalar`` / ``array``: the program works on Python scalars only / uses NumPy arrays
  (``array`` is added automatically when an argument is an ndarray, ``scalar`` when a
  case is not tagged ``array``).
- ``differentiable``: the result is a float (Python float, NumPy float or 0-d array) and
  a smooth function of the first argument (a float or a float64 array) at the example
  arguments: no ties in max/abs/where, no integer-valued dependence.  Such programs use
  ``np.*`` functions only (never ``math.*``, which autograd cannot trace), so that
  ``np`` can be replaced by ``autograd.numpy``.
- features: ``arith``, ``int``, ``float``, ``bool``, ``compare``, ``logic``
  (and/or/not), ``branch``, ``loop``, ``while``, ``for``, ``break``, ``continue``,
  ``early_return``, ``nested_loop``, ``augassign``, ``unpack``, ``tuple``, ``assert``,
  ``default_args``, ``kwargs``, ``nested_def``, ``lambda``, ``closure``,
  ``higher_order``, ``recursion``, ``mutual_recursion``, ``math``, ``broadcast``,
  ``matmul``, ``reduction``, ``indexing``, ``reshape``, ``constructor``, ``model``,
  ``container`` (lists, dicts, comprehensions, zip/enumerate/sum; some return a list or
  a dict, which every backend gives back as one).

The programs follow the subset: no classes, try, with, global, generators,
f-strings, print, *args/**kwargs, list or dict mutation, or attribute access other
than ``np.``/``math.`` functions, the array's ``.T``, ``.shape``, ``.reshape(...)`` and
``.sum(...)``, and a dict's ``.keys()``, ``.values()`` and ``.items()``.  Everything above the marker line
``# ---- programs`` is test machinery, not subset code.
"""

import math
from dataclasses import dataclass

import numpy as np


@dataclass
class Case:
    name: str
    fn: object
    args: tuple
    tags: frozenset

    def __repr__(self):
        return "Case(" + self.name + ")"

    def run(self):
        """Run the program in plain Python."""
        return self.fn(*self.args)


CASES = []


def _has_array(x):
    if isinstance(x, np.ndarray):
        return True
    if isinstance(x, dict):
        x = tuple(x.values())
    if isinstance(x, (tuple, list)):
        for y in x:
            if _has_array(y):
                return True
    return False


def case(*args, tags=(), name=None):
    """Register the decorated function with example ``args``.

    Stackable: each decorator adds one case.  Decorators apply bottom-up, so the case
    nearest the ``def`` gets the function's name and the ones above get ``_1``,
    ``_2``, ... suffixes; ``name=`` overrides the base name.  Returns the function
    unchanged, so cases can call each other."""
    if isinstance(tags, str):
        tags = (tags,)

    def register(fn):
        all_tags = set(tags)
        if _has_array(args):
            all_tags.add("array")
        if "array" not in all_tags:
            all_tags.add("scalar")
        base = name or fn.__name__
        taken = set(c.name for c in CASES)
        nm = base
        k = 1
        while nm in taken:
            nm = base + "_" + str(k)
            k += 1
        CASES.append(Case(nm, fn, tuple(args), frozenset(all_tags)))
        return fn

    return register


def _rand(seed, shape, positive=False):
    """A float64 array from a fixed generator (positive: values in [0.5, 1.5))."""
    rng = np.random.default_rng(seed)
    if positive:
        return rng.random(shape) + 0.5
    return rng.standard_normal(shape)


def _onehot(seed, n, k):
    rng = np.random.default_rng(seed)
    return np.eye(k)[rng.integers(0, k, size=n)]


D = "differentiable"

# ---- programs ---------------------------------------------------------------------

# ---------------------------------------------------------------- helpers (subset code)


def square(x):
    return x * x


def cube(x):
    return x * x * x


def halve(x):
    return x / 2.0


def apply_twice(f, x):
    return f(f(x))


def compose(f, g):
    return lambda x: f(g(x))


def iterate(f, x, n):
    for _ in range(n):
        x = f(x)
    return x


def fold_range(f, init, n):
    acc = init
    for i in range(n):
        acc = f(acc, i)
    return acc


def make_scaler(a):
    def scale(x):
        return a * x

    return scale


def make_affine(a, b):
    return lambda x: a * x + b


def curry3(a):
    def take_b(b):
        def take_c(c):
            return a * b + c

        return take_c

    return take_b


def choose(k):
    if k > 0:
        return square
    return cube


def scaled(x, scale=2.0, shift=0.0):
    return x * scale + shift


def weighted_sum(a, b, wa=1.0, wb=1.0):
    return wa * a + wb * b


def horner(coeffs, x):
    acc = 0.0
    for c in coeffs:
        acc = acc * x + c
    return acc


def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


def descend_a(x, n):
    if n <= 0:
        return x
    return descend_b(x * 1.1, n - 1)


def descend_b(x, n):
    if n <= 0:
        return x
    return descend_a(np.sin(x), n - 1)


def min_max_pair(a, b):
    if a < b:
        return a, b
    return b, a


# ---------------------------------------------------------------- arithmetic


@case(7, 3, tags=("arith", "int"))
@case(-7, 3, tags=("arith", "int"))
@case(7, -2, tags=("arith", "int"))
def int_arithmetic(a, b):
    return a + b * 2 - a // b + a % b - (-b) + a ** 2


@case(1.5, 2.5, tags=("arith", "float", D))
@case(-0.3, 4.0, tags=("arith", "float", D))
def float_arithmetic(x, y):
    return x ** 2 + x / y - -x * y + y ** 0.5 - 3.0 * x


@case(7.5, 2.0, tags=("arith", "float"))
@case(-7.5, 2.0, tags=("arith", "float"))
@case(7.5, -2.0, tags=("arith", "float"))
def float_floordiv_mod(x, y):
    return x // y, x % y


@case(True, False, tags=("arith", "bool"))
@case(True, True, tags=("arith", "bool"))
def bool_arithmetic(a, b):
    return a + b, a * 3 + b, -a, a / 2, a - (not b)


@case(0.8, 5, tags=("arith", "float", "int", D))
def mixed_int_float(x, n):
    return n / 2 + x * n - n // 3 * x + (n % 3) * x ** 2


@case(1.7, tags=("arith", "float", D))
def unary_negation(x):
    y = -x
    return -y * 2.0 + -(-x) - (-(x * y))


@case(1.2, tags=("arith", "float", "augassign", D))
def augmented_assignment_float(x):
    y = x
    y += 1.0
    y *= 2.0
    y -= 3.0 * x
    y /= 4.0
    y **= 2
    return y + x


@case(17, tags=("arith", "int", "augassign"))
@case(-17, tags=("arith", "int", "augassign"))
def augmented_assignment_int(n):
    m = n
    m += 5
    m *= 3
    m //= 4
    m %= 7
    m -= 1
    m **= 2
    return m


@case(2.0, 3, tags=("arith", "int"))
def int_true_division(x, n):
    return (n / 2, 7 / n, x / n)


# ---------------------------------------------------------------- comparisons and logic


@case(1, 2, tags=("compare", "tuple", "int"))
@case(2, 2, tags=("compare", "tuple", "int"))
@case(2.5, 1.0, tags=("compare", "tuple", "float"))
def comparisons(a, b):
    return (a < b, a <= b, a == b, a != b, a > b, a >= b)


@case(0.5, tags=("compare", "branch", D))
@case(1.5, tags=("compare", "branch", D))
@case(-1.0, tags=("compare", "branch", D))
def chained_comparison(x):
    if 0 < x < 1:
        return x * x
    return -x


@case(1, 2, 2, tags=("compare", "int"))
@case(1, 2, 1, tags=("compare", "int"))
@case(3, 2, 5, tags=("compare", "int"))
def chained_comparison_three(a, b, c):
    return a < b <= c != a


@case(3.0, 2.0, tags=("logic", "compare", "branch", D))
@case(3.0, 0.0, tags=("logic", "compare", "branch"))
@case(1.0, 2.0, tags=("logic", "compare", "branch"))
def short_circuit_and(x, y):
    if y != 0 and x / y > 1:
        return x / y
    return 0.0


@case(-1.0, tags=("logic", "compare", "branch", "math"))
@case(0.5, tags=("logic", "compare", "branch", "math"))
@case(3.0, tags=("logic", "compare", "branch", "math"))
def short_circuit_or(x):
    if x <= 0.0 or math.log(x) < 0.0:
        return 0.0
    return math.log(x)


@case(True, False, tags=("logic", "bool"))
@case(True, True, tags=("logic", "bool"))
@case(False, False, tags=("logic", "bool"))
def not_and_or(a, b):
    return (not a or not b and a, not (a and b), a or b, not not a)


@case(0, 5, tags=("logic", "int", "tuple"))
@case(3, 5, tags=("logic", "int", "tuple"))
def and_or_values(x, y):
    return (x and y, x or y, not x)


# ---------------------------------------------------------------- branches


@case(-2.0, tags=("branch", D))
@case(0.5, tags=("branch", D))
@case(3.0, tags=("branch", D))
def if_elif_else(x):
    if x < -1.0:
        return -x * 3.0
    elif x < 1.0:
        y = x * x
    else:
        y = np.sqrt(x) + 1.0
    return y * 2.0


@case(1.5, tags=("branch", D))
@case(-0.5, tags=("branch", D))
def conditional_expression(x):
    y = x * x if x > 0 else -x * 0.5
    return y + (x if y > 1.0 else 2.0 * x)


@case(1.0, 2.0, tags=("branch", D))
@case(-1.0, 2.0, tags=("branch", D))
@case(1.0, -2.0, tags=("branch", D))
@case(-1.0, -2.0, tags=("branch", D))
def nested_branches(x, y):
    if x > 0:
        if y > 0:
            r = x * y
        else:
            r = x - y
    else:
        if y > 0:
            r = x * x + y
        else:
            r = -x * y * y
    return r


@case(1.5, tags=("branch", "assert", D))
def assert_statement(x):
    assert x > 0
    assert x < 100.0, "x out of range"
    return np.sqrt(x) * x


# ---------------------------------------------------------------- loops


@case(27, tags=("loop", "while", "int", "branch"))
@case(1, tags=("loop", "while", "int", "branch"))
def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@case(10.0, tags=("loop", "while", D))
@case(0.7, tags=("loop", "while", D))
def while_halving(x):
    k = 0
    while x > 1.0:
        x = x / 2.0
        k += 1
    return x + k


@case(10, tags=("loop", "for", "int"))
@case(0, tags=("loop", "for", "int"))
def for_range_sum_squares(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


@case(3, 9, tags=("loop", "for", "int"))
@case(5, 2, tags=("loop", "for", "int"))
def for_range_start_stop(a, b):
    s = 0
    for i in range(a, b):
        s = s * 2 + i
    return s


@case(20, tags=("loop", "for", "int"))
@case(2, tags=("loop", "for", "int"))
def for_range_step(n):
    s = 0
    for i in range(1, n, 3):
        s += i
    return s


@case(10, tags=("loop", "for", "int", "tuple"))
@case(3, tags=("loop", "for", "int", "tuple"))
def for_range_negative_step(n):
    s = 0
    for i in range(n, 0, -2):
        s = s * 3 + i
    t = 0
    for j in range(5, -n, -3):
        t += j
    return s, t


@case(10, tags=("loop", "for", "int", "float"))
def harmonic_sum(n):
    s = 0.0
    for i in range(1, n + 1):
        s += 1.0 / i
    return s


@case(0.7, 5, tags=("loop", "for", D))
def for_range_polynomial(x, n):
    acc = 1.0
    for i in range(n):
        acc = acc * x + i
    return acc


@case(0.6, tags=("loop", "for", "tuple", D))
def for_over_constant_tuple(x):
    acc = 0.0
    for c in (1.0, -2.0, 3.0, 0.5):
        acc = acc * x + c
    return acc


@case((1.0, 2.0, 3.0, 4.0), tags=("loop", "for", "tuple"))
def for_over_tuple_arg(xs):
    total = 0.0
    weight = 1.0
    for v in xs:
        total += v * weight
        weight = weight * 0.5
    return total


@case(50, tags=("loop", "for", "break", "int", "branch"))
@case(0, tags=("loop", "for", "break", "int", "branch"))
def for_break_first_square(n):
    found = -1
    for i in range(100):
        if i * i > n:
            found = i
            break
    return found


@case(1.3, tags=("loop", "while", "break", "branch", D))
def while_true_break(x):
    k = 0
    while True:
        x = x * 1.5
        k += 1
        if x > 20.0:
            break
    return x - k


@case(15, tags=("loop", "for", "continue", "int", "branch"))
def for_continue_odd_sum(n):
    s = 0
    for i in range(n):
        if i % 2 == 0:
            continue
        s += i
    return s


@case(0.9, 7, tags=("loop", "while", "continue", "branch", D))
def while_continue(x, n):
    i = 0
    acc = 0.0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        acc = acc + x ** i
    return acc


@case(1.1, tags=("loop", "for", "early_return", "branch", D))
@case(0.5, tags=("loop", "for", "early_return", "branch", D))
def return_inside_loop(x):
    for i in range(20):
        x = x * 1.5
        if x > 10.0:
            return x + i
    return -x


@case(37, tags=("loop", "while", "early_return", "branch", "int", "bool"))
@case(91, tags=("loop", "while", "early_return", "branch", "int", "bool"))
def is_prime(n):
    if n < 2:
        return False
    d = 2
    while d * d <= n:
        if n % d == 0:
            return False
        d += 1
    return True


@case(4, 5, tags=("loop", "for", "nested_loop", "int"))
def nested_loops(n, m):
    s = 0
    for i in range(n):
        for j in range(m):
            s += i * j + 1
    return s


@case(6, tags=("loop", "for", "nested_loop", "break", "continue", "int", "branch"))
def nested_loops_break_continue(n):
    count = 0
    for i in range(n):
        if i == 1:
            continue
        for j in range(n):
            if j > i:
                break
            count += i - j
    return count


@case(0.3, 4, tags=("loop", "for", "nested_loop", D))
def nested_loops_float(x, n):
    acc = x
    for i in range(n):
        for j in range(i):
            acc = acc + np.sin(acc * j) * 0.1
        acc = acc * 1.01
    return acc


# A parameter aliased through an `if` and used with itself in a loop: inlining the code
# after the `if` into each branch copied the loop's backpropagators, which the llvm
# backend took for one function (issue 16: its gradient was 6.0 instead of 9.0, and
# with `while`, garbage read from a record of another layout).
@case(1.5, 0.5, tags=("branch", "loop", "for", D))
@case(2.0, -0.5, tags=("branch", "loop", "for", D))
def aliased_through_if_for(x, y):
    if y > 0.0:
        v = x
    else:
        v = x * y
    s = 0.0
    for k in range(3):
        s = s + x * v
    return s


@case(1.5, 0.5, tags=("branch", "loop", "while", D))
@case(2.0, -0.5, tags=("branch", "loop", "while", D))
def aliased_through_if_while(x, y):
    if y > 0.0:
        v = x
    else:
        v = x * y
    s = 0.0
    k = 0
    while k < 3:
        s = s + x * v
        k = k + 1
    return s


@case(5, 7, tags=("loop", "while", "nested_loop", "early_return", "int", "tuple"))
def find_pair_with_sum(n, target):
    i = 0
    while i < n:
        j = i
        while j < n:
            if i + j == target:
                return i, j
            j += 1
        i += 1
    return -1, -1


# ---------------------------------------------------------------- tuples


@case(1.5, tags=("tuple", "unpack", D))
def nested_tuple_unpacking(x):
    (a, (b, c)) = (x, (x * 2.0, x + 3.0))
    d, e = c, b
    return a + b * c - d * e * 0.5


@case(20, tags=("tuple", "unpack", "loop", "for", "int"))
def fibonacci_iterative(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


@case(0.8, tags=("tuple", D))
def tuple_returned_and_indexed(x):
    t = (x, x * x, np.sin(x))
    u = min_max_pair(t[2], t[1])
    return t[0] + t[1] * t[2] + t[-1] - u[0] * u[1]


@case((1.0, (2.0, 3.0)), 4, tags=("tuple", "unpack"))
def tuple_argument(t, k):
    (a, (b, c)) = t
    return (a * k, (b + c, t[1][0] - k), t[0])


@case(2.0, 0.5, tags=("tuple", "unpack", "branch", D))
def tuple_swap_by_value(x, y):
    lo, hi = min_max_pair(x, y)
    return hi * 2.0 - lo * lo


# ---------------------------------------------------------------- calls, defaults, kwargs


@case(1.3, tags=("default_args", "kwargs", D))
def default_and_keyword_args(x):
    return (scaled(x) + scaled(x, 3.0) + scaled(x, shift=1.0)
            + scaled(shift=-2.0, x=x, scale=0.5))


@case(0.7, 2.0, tags=("default_args", "kwargs", D))
def keyword_args_reordered(x, y):
    return weighted_sum(x, y) + weighted_sum(b=x, a=y, wa=2.0) + weighted_sum(x, y, wb=-1.0)


# ---------------------------------------------------------------- nested def, lambda, closures


@case(1.2, tags=("nested_def", D))
def nested_def(x):
    def inner(y):
        return y * y + 1.0

    return inner(x) + inner(2.0 * x)


@case(0.4, tags=("lambda", D))
def lambda_simple(x):
    f = lambda y: y * 3.0 + 1.0  # noqa: E731
    g = lambda a, b: a * b - b  # noqa: E731
    return f(f(x)) + g(x, 2.0)


@case(1.5, 0.5, tags=("closure", "nested_def", D))
def closure_capture(x, y):
    def add_scaled(z):
        return z + y * x

    return add_scaled(x) * add_scaled(1.0)


@case(0.9, 2.0, tags=("closure", "higher_order", D))
def closure_returned(x, y):
    f = make_affine(x, y)
    g = make_scaler(x)
    return f(2.0) + g(y) * g(x)


@case(1.1, tags=("closure", "higher_order", "nested_def", D))
def curried_closures(x):
    return curry3(x)(2.0)(x * x)


@case(0.8, 4, tags=("closure", "loop", "for", "nested_def", D))
def closure_capturing_loop_variable(x, n):
    acc = x
    for i in range(n):
        def step(y):
            return y * 0.5 + i * x

        acc = step(acc)
    return acc


@case(0.5, tags=("closure", "lambda", "loop", "for", D))
def lambda_capturing_loop_variable(x):
    acc = 0.0
    for k in range(1, 5):
        f = lambda y: np.sin(y * k)  # noqa: E731
        acc = acc + f(x)
    return acc


@case(6, tags=("closure", "nested_def", "recursion", "int"))
def nested_recursive_function(n):
    def go(k, acc):
        if k == 0:
            return acc
        return go(k - 1, acc + k * k)

    return go(n, 0)


@case(1.5, tags=("closure", "nested_def", D))
def closure_capturing_closure(x):
    def outer(a):
        def middle(b):
            def inner(c):
                return a * b * c + a
            return inner(b + 1.0)
        return middle(a * 2.0)

    return outer(x)


# ---------------------------------------------------------------- higher-order functions


@case(1.1, tags=("higher_order", "lambda", D))
def higher_order_apply_twice(x):
    return apply_twice(square, x) + apply_twice(lambda y: y + x, 1.0)


@case(0.7, tags=("higher_order", "closure", D))
def higher_order_compose(x):
    h = compose(np.sin, square)
    k = compose(square, np.tanh)
    return h(x) + k(x) + compose(h, k)(x)


@case(0.9, tags=("higher_order", "tuple", D))
def tuple_of_functions(x):
    fs = (square, cube, np.tanh, halve)
    return fs[0](x) + fs[1](x) * fs[2](x) - fs[3](x)


@case(1.5, tags=("higher_order", "branch", D))
@case(-1.5, tags=("higher_order", "branch", D))
def function_chosen_by_branch(x):
    f = square if x > 0 else cube
    return f(x) + 1.0


@case(1.5, 1, tags=("higher_order", "branch", D))
@case(1.5, -1, tags=("higher_order", "branch", D))
def function_returned_by_value(x, k):
    return choose(k)(x) * x


@case(10, tags=("higher_order", "lambda", "loop", "int"))
def higher_order_fold(n):
    return fold_range(lambda acc, i: acc + i * i, 0, n)


@case(0.5, tags=("higher_order", "lambda", "loop", D))
def iterate_lambda(x):
    return iterate(lambda y: np.cos(y) * 0.9 + 0.1 * x, x, 10)


# ---------------------------------------------------------------- recursion


@case(0, tags=("recursion", "int", "branch"))
@case(10, tags=("recursion", "int", "branch"))
def factorial(n):
    if n <= 1:
        return 1
    return n * factorial(n - 1)


@case(12, tags=("recursion", "int", "branch"))
def fibonacci(n):
    if n < 2:
        return n
    return fibonacci(n - 1) + fibonacci(n - 2)


@case(1.3, 10, tags=("recursion", "branch", D))
@case(0.9, 7, tags=("recursion", "branch", D))
@case(2.0, 0, tags=("recursion", "branch"))
def power_by_squaring(x, n):
    if n == 0:
        return 1.0
    if n % 2 == 0:
        h = power_by_squaring(x, n // 2)
        return h * h
    return x * power_by_squaring(x, n - 1)


@case(50.0, tags=("recursion", "branch", D))
@case(1.5, tags=("recursion", "branch", D))
def value_dependent_recursion(x):
    if x < 2.0:
        return x * x
    return 1.0 + value_dependent_recursion(np.sqrt(x))


@case(0.5, 4, tags=("recursion", "branch", D))
def rising_factorial(x, n):
    return 1.0 if n == 0 else (x + n) * rising_factorial(x, n - 1)


@case(10, tags=("recursion", "mutual_recursion", "int", "bool", "tuple"))
@case(7, tags=("recursion", "mutual_recursion", "int", "bool", "tuple"))
def parity_mutual_recursion(n):
    return (is_even(n), is_odd(n))


@case(0.7, 6, tags=("recursion", "mutual_recursion", D))
def mutual_recursion_float(x, n):
    return descend_a(x, n)


# ---------------------------------------------------------------- math module (scalars)


@case(0.7, tags=("math", "float"))
def math_functions(x):
    return (math.sin(x) + math.cos(x) * math.exp(-x) + math.log(x)
            + math.sqrt(x) + math.tanh(x) + math.pi)


@case(2.0, tags=("math", "float", "tuple"))
def circle_measures(r):
    return (math.pi * r ** 2, 2.0 * math.pi * r)


@case(3.0, 4.0, tags=("math", "float", "loop", "while"))
def math_newton_sqrt_tolerance(a, x0):
    x = x0
    while math.fabs(x * x - a) > 1e-12:
        x = 0.5 * (x + a / x)
    return x, math.sqrt(a)


@case(0.7, tags=("float", D))
def numpy_scalar_functions(x):
    return (np.sin(x) + np.cos(x) * np.exp(-x) + np.log(x)
            + np.sqrt(x) + np.tanh(x) + math.pi * x)


# ---------------------------------------------------------------- named scalar algorithms


@case(0.3, tags=("loop", "for", D))
def sin_loop_100(x):
    for _ in range(100):
        x = np.sin(x)
    return x


@case(2.0, tags=("loop", "for", D))
@case(10.0, tags=("loop", "for", D))
def newton_sqrt(a):
    x = a
    for _ in range(20):
        x = 0.5 * (x + a / x)
    return x


@case(5.0, tags=("loop", "while", D))
def newton_sqrt_while(a):
    x = a
    while (x * x - a) ** 2 > 1e-20:
        x = 0.5 * (x + a / x)
    return x


@case(0.6, tags=("loop", "tuple", "higher_order", D))
def polynomial_horner(x):
    return horner((2.0, -3.0, 0.5, 1.0), x)


@case(1.3, (1.0, 0.0, -2.0, 0.25, 4.0), tags=("loop", "tuple", D))
def polynomial_horner_coeffs_arg(x, coeffs):
    return horner(coeffs, x)


@case(1.0, 0.1, 10, tags=("loop", "for", "tuple", "unpack", D))
def euler_oscillator(p0, dt, n):
    p, v = p0, 0.0
    for _ in range(n):
        p, v = p + dt * v, v - dt * p
    return p * p + v * v


# ---------------------------------------------------------- arrays: elementwise, broadcasting


@case(_rand(1, (3, 4)), _rand(2, (3, 4)), tags=("broadcast", D))
def array_elementwise(x, y):
    z = x * y + x / (1.0 + y * y) - x ** 2 + 2.0 * x - y
    return np.sum(z)


@case(_rand(3, (3, 4)), _rand(4, (3, 4)), tags=())
def array_elementwise_result(x, y):
    return x * y + 1.0 - x / (2.0 + y * y)


@case(_rand(5, (3, 4)), _rand(6, (4,)), _rand(7, (3, 1)), tags=("broadcast", D))
def broadcasting(x, b, c):
    return np.sum((x + b) * c - b * b)


@case(_rand(8, (2, 3)), 1.5, tags=("broadcast",))
def broadcasting_scalar_result(x, s):
    return x * s + 1.0 - s / (1.0 + x * x)


@case(1.5, _rand(9, (2, 3)), tags=("broadcast", D))
def broadcast_scalar_first(s, x):
    return np.sum(x * s + s * s)


@case(_rand(10, (5,)), tags=(D,))
def array_unary_functions(x):
    y = (np.exp(x) + np.log(np.abs(x) + 1.0) + np.sin(x) * np.cos(x)
         + np.tanh(x) + np.sqrt(x * x + 1.0) + np.abs(x))
    return np.sum(y)


@case(_rand(11, (6,), positive=True), tags=(D,))
def array_log_sqrt_positive(x):
    return np.sum(np.log(x) * np.sqrt(x) + 1.0 / x)


@case(_rand(12, (4, 3)), _rand(13, (4, 3)), tags=("broadcast", D))
def maximum_minimum(x, y):
    return np.sum(np.maximum(x, y) * 2.0 - np.minimum(x, 0.5 * y) + np.maximum(x, 0.1))


@case(_rand(14, (7,)), tags=("branch", D))
def where_select(x):
    return np.sum(np.where(x > 0.0, x * x, -x * 0.5))


@case(_rand(15, (7,)), _rand(16, (7,)), tags=())
def where_result(x, y):
    return np.where(x > y, x - y, np.zeros((7,)))


@case(_rand(17, (3, 5)), tags=(D,))
def relu_sum(x):
    return np.sum(np.maximum(x, 0.0) ** 2)


# ---------------------------------------------------------------- arrays: dot, matmul


@case(_rand(18, (4,)), _rand(19, (3, 4)), tags=("matmul", D))
def dot_matvec(x, W):
    return np.sum(np.tanh(np.dot(W, x)))


@case(_rand(20, (5,)), _rand(21, (5,)), tags=("matmul", D))
def dot_vecvec(x, y):
    return np.dot(x, y) + np.dot(x, x)


@case(_rand(22, (2, 3)), _rand(23, (3, 4)), tags=("matmul", D))
def matmul_operator(A, B):
    C = A @ B
    return np.sum(C * C) + np.sum(A @ B @ B.T)


@case(_rand(24, (2, 3)), _rand(25, (3, 4)), tags=("matmul",))
def matmul_result(A, B):
    return A @ B


@case(_rand(26, (4, 3)), tags=("matmul", "reshape", D))
def gram_matrix(X):
    G = np.dot(X.T, X)
    return np.sum(G * G)


# ---------------------------------------------------------------- arrays: reductions


@case(_rand(27, (3, 4)), tags=("reduction", D))
def sum_axes(x):
    a = np.sum(x, axis=0)
    b = np.sum(x, axis=1)
    c = np.sum(x, axis=-1)
    return np.sum(a * a) + np.sum(b * c) + np.sum(x, axis=None) + np.sum(x)


@case(_rand(28, (3, 4)), tags=("reduction", D))
def mean_axes(x):
    a = np.mean(x, axis=0)
    b = np.mean(x, axis=1)
    return np.sum(a * a) + np.mean(b) * np.mean(x, axis=-2)[1] + np.mean(x)


@case(_rand(29, (3, 4)), tags=("reduction", D))
def max_axes(x):
    a = np.max(x, axis=0)
    b = np.max(x, axis=1)
    c = np.max(x, axis=-1)
    return np.sum(a * a) + np.sum(b * c) + np.max(x, axis=None) + np.max(x)


@case(_rand(30, (3, 4)), tags=("reduction",))
def reductions_result(x):
    return (np.sum(x, axis=0), np.mean(x, axis=1), np.max(x, axis=-1), np.max(x), np.sum(x))


@case(_rand(31, (2, 5)), tags=("reduction", D))
def sum_method(x):
    return (x * x).sum(axis=1).sum() + x.sum(axis=0).sum(axis=0)


@case(_rand(32, (2, 3, 4)), tags=("reduction", D))
def reductions_3d(x):
    a = np.sum(x, axis=1)
    b = np.max(x, axis=-1)
    c = np.mean(x, axis=0)
    return np.sum(a) + np.sum(b * b) + np.sum(c * c)


# ---------------------------------------------------------------- arrays: shapes, indexing


@case(_rand(33, (2, 6)), tags=("reshape", "matmul", D))
def reshape_transpose(x):
    y = x.reshape((3, 4))
    z = y.T
    w = x.reshape((12,))
    return np.sum(z @ y) + np.sum(w[:6] * w[6:])


@case(_rand(34, (2, 6)), tags=("reshape",))
def reshape_transpose_result(x):
    return x.reshape((3, 4)).T


@case(_rand(35, (4, 5)), tags=("indexing", D))
def indexing_slicing_2d(x):
    return (np.sum(x[0]) + np.sum(x[1:3]) * 0.5 + np.sum(x[:, 0] * x[:, 1])
            + x[0, 1] * x[2, 3] + np.sum(x[-1]) + np.sum(x[1:3, 2:4]) + np.sum(x[::2]))


@case(_rand(36, (4, 5)), tags=("indexing", "tuple"))
def indexing_slicing_result(x):
    return (x[0], x[1:3], x[:, 0], x[0, 1], x[-1, -2], x[1:3, 2:4])


@case(_rand(37, (6,)), tags=("indexing", D))
def vector_slicing(x):
    return np.sum(x[1:3] * x[:2]) + np.sum(x[-2:]) + x[0] * x[5] + np.sum(x[::-1] * x)


@case(_rand(38, (5,)), tags=("indexing", "loop", "for", D))
def loop_indexing_with_shape(x):
    acc = 0.0
    for i in range(x.shape[0]):
        acc = acc + x[i] * i - x[i] ** 2
    return acc


@case(_rand(39, (3, 4)), tags=("indexing", "tuple"))
def shape_attribute(x):
    n, m = x.shape
    return (n * m, x.shape[0] + 1, x.T.shape)


# ---------------------------------------------------------------- arrays: constructors


@case(_rand(40, (3,)), tags=("constructor", "broadcast", D))
def zeros_ones_full(x):
    z = np.zeros((3,))
    o = np.ones((2, 3))
    f = np.full((3,), 2.5)
    return np.sum(o * (x + z) * f) + np.sum(np.zeros((2, 3)) + x)


@case(1.5, tags=("constructor", "broadcast"))
def constant_arrays_result(s):
    return np.zeros((2, 3)) + np.ones((2, 3)) * s + np.full((2, 3), 0.5)


@case(0.7, tags=("constructor", "broadcast", "array", D))
def constant_arrays_scalar_arg(s):
    a = np.ones((2, 3)) * s + np.full((2, 3), 0.5)
    return np.sum(np.sin(a) * a)


@case(_rand(41, (3,)), 4, tags=("constructor", "loop", "for", D))
def zeros_accumulate(x, n):
    acc = np.zeros((3,))
    for i in range(n):
        acc = acc + x * i + np.sin(acc)
    return np.sum(acc * acc)


# ---------------------------------------------------------------- arrays: loops, branches


@case(_rand(42, (4,)) * 3.0, tags=("loop", "while", "reduction", D))
def array_while_shrink(x):
    k = 0
    while np.sum(x * x) > 1.0:
        x = x * 0.5
        k += 1
    return np.sum(x) + k


@case(_rand(43, (4,)), tags=("loop", "for", D))
def array_sin_loop_100(x):
    for _ in range(100):
        x = np.sin(x)
    return np.sum(x)


@case(_rand(44, (3,)), tags=("branch", "reduction", D))
@case(-_rand(44, (3,)) - 5.0, tags=("branch", "reduction", D))
def array_branch_on_reduction(x):
    if np.sum(x) > 0.0:
        return np.sum(np.exp(x))
    return np.sum(x * x)


@case(_rand(45, (3,)), tags=("higher_order", "closure", D))
def array_higher_order(x):
    f = compose(np.tanh, make_scaler(2.0))
    return np.sum(apply_twice(f, x))


@case(_rand(46, (4,)), _rand(47, (4,)), tags=("tuple", "unpack", D))
def array_tuple_unpacking(x, y):
    (a, (b, c)) = (x * 2.0, (y, x * y))
    return np.sum(a * b + c)


# ---------------------------------------------------------------- models


@case(_rand(48, (3, 5)), _rand(49, (5,)), _rand(50, (5, 2)), _rand(51, (2,)),
      _rand(52, (8, 3)), _rand(53, (8, 2)), tags=("model", "matmul", "broadcast", D))
def mlp_loss(W1, b1, W2, b2, X, Y):
    H = np.tanh(X @ W1 + b1)
    out = np.dot(H, W2) + b2
    return np.mean((out - Y) ** 2)


@case(_rand(54, (3, 5)), (_rand(55, (5,)), (_rand(56, (5, 2)), _rand(57, (2,)))),
      _rand(58, (8, 3)), _rand(59, (8, 2)),
      tags=("model", "matmul", "tuple", "unpack", D))
def mlp_loss_params_tuple(W1, params, X, Y):
    (b1, (W2, b2)) = params
    H = np.tanh(X @ W1 + b1)
    out = H @ W2 + b2
    return 0.5 * np.sum((out - Y) ** 2) / X.shape[0]


@case(_rand(60, (5, 4)) * 3.0, _onehot(61, 5, 4), tags=("model", "reduction", "reshape", D))
def softmax_cross_entropy(logits, labels):
    m = np.max(logits, axis=1)
    z = logits - m.reshape((logits.shape[0], 1))
    lse = np.log(np.sum(np.exp(z), axis=1))
    logp = z - lse.reshape((z.shape[0], 1))
    return -np.mean(np.sum(labels * logp, axis=1))


@case(_rand(62, (4, 4)) * 0.5, _rand(63, (4, 3)), _rand(64, (4,)),
      (_rand(65, (3,)), _rand(66, (3,)), _rand(67, (3,))),
      tags=("model", "matmul", "loop", "for", "tuple", D))
def rnn_unrolled(W, U, h0, xs):
    h = h0
    for x in xs:
        h = np.tanh(np.dot(W, h) + np.dot(U, x))
    return np.sum(h * h)


@case(_rand(68, (3,)), _rand(69, (10, 3)), np.sign(_rand(70, (10,))),
      tags=("model", "matmul", D))
def logistic_regression_loss(w, X, y):
    margins = y * (X @ w)
    return np.mean(np.log(1.0 + np.exp(-margins))) + 0.01 * np.sum(w * w)


@case(_rand(71, (3,)), _rand(72, (6, 3)), _rand(73, (6,)), 0.1,
      tags=("model", "matmul", "loop", "for", D))
def gradient_descent_unrolled(w, X, y, lr):
    for _ in range(3):
        r = X @ w - y
        w = w - lr * (X.T @ r) / X.shape[0]
    return np.sum((X @ w - y) ** 2)


# ---------------------------------------------------------------- containers


@case(1.3, tags=("container", "indexing", D))
def list_literal_and_index(x):
    xs = [x, 2.0 * x, x * x]
    return xs[1] * xs[-1] + len(xs) + xs[0]


@case(0.7, tags=("container", "loop", "for", D))
def list_comprehension_sum(x):
    return sum([np.sin(x) * k for k in range(4)]) + sum(x * x for _ in range(2))


@case(1.5, tags=("container", "loop", "for", "branch"))
def list_comprehension_filter(x):
    return [x * i for i in range(6) if i % 2 == 0]


@case(0.9, tags=("container", "loop", "for", D))
def dict_literal_and_loops(x):
    p = {"w": x, "b": 2.0, "c": x * x}
    s = p["w"] * p["b"]
    for k in p:
        s = s + p[k]
    for k, v in p.items():
        s = s + v * len(k)
    return s + sum(p.values())


@case(_rand(74, (5, 3)), tags=("container", "loop", "for", "reduction", D))
def for_rows_of_an_array(X):
    s = 0.0
    for row in X:
        s = s + np.sum(np.tanh(row)) ** 2
    return s


@case(_rand(75, (3,)), _rand(76, (4, 3)), _rand(77, (4,)),
      tags=("container", "loop", "for", "model", D))
def zip_and_enumerate(w, X, y):
    s = 0.0
    for xi, yi in zip(X, y):
        s = s + (np.dot(w, xi) - yi) ** 2
    for i, wi in enumerate([w, 2.0 * w]):
        s = s + (i + 1) * np.sum(wi * wi)
    return s


@case(_rand(78, (4, 3)), _rand(79, (3, 5)) * 0.5, _rand(80, (5, 2)) * 0.5,
      tags=("container", "loop", "for", "matmul", "model", D))
def list_of_layers(X, W1, W2):
    layers = [W1, W2]
    h = X
    for W in layers:
        h = np.tanh(h @ W)
    return np.sum(h * h)


@case(1.25, tags=("container", "loop", "for"))
def nested_comprehensions(x):
    return [[x * i + j for j in range(2)] for i in range(3)]


@case(0.5, tags=("container", "loop", "for"))
def dict_comprehension_result(x):
    d = {k: x * (i + 1) for i, k in enumerate(["a", "b", "c"])}
    return {"scaled": d, "keys": list(d.keys()), "pairs": [(k, v) for k, v in d.items()]}


# (the gradients of `+` and `*` of lists: tests/test_containers.py; the reference of the
# corpus' gradients, J of the untyped program, does not know lists)
@case(0.8, tags=("container", "arith"))
def list_concat_and_repeat(x):
    xs = [x] * 3 + [2.0] + list((x, x))
    ys = xs[1:4] + xs[::2]
    return sum(ys) * len(ys) + max(xs) - min(ys)


@case(1.1, tags=("container", "augassign", "loop", "for"))
def list_built_in_a_loop(x):
    xs = []
    for i in range(4):
        xs = xs + [x ** i]
    xs += [x]
    return sum(xs) + ("k" in {"k": 1}) + (x in xs)


# ---------------------------------------------------------------- utilities


def by_tag(*tags):
    """The cases having all the given tags."""
    wanted = set(tags)
    return [c for c in CASES if wanted <= c.tags]


def cases_with_numpy(np_module, path=None):
    """Re-execute this file as a new module whose ``np`` is ``np_module`` (e.g.
    ``autograd.numpy``) and return its list of cases (same names, same example
    arguments, which are built with real NumPy).  The helper functions called by the
    programs see the substituted module too.  The new module is registered in
    ``sys.modules`` (as ``corpus_with_<module name>``) and keeps this file's name and
    line numbers, so ``inspect.getsource``/``inspect.getmodule`` work on its functions."""
    import sys
    import types

    path = path or __file__
    modname = "corpus_with_" + np_module.__name__.replace(".", "_")
    mod = sys.modules.get(modname)
    if mod is None:
        with open(path) as f:
            source = f.read()
        mod = types.ModuleType(modname)
        mod.__file__ = path
        sys.modules[modname] = mod
        exec(compile(source, path, "exec"), mod.__dict__)
        mod.np = np_module
    return mod.CASES


def _is_float_result(r):
    if isinstance(r, (float, np.floating)):
        return True
    return isinstance(r, np.ndarray) and r.shape == () and r.dtype.kind == "f"


if __name__ == "__main__":
    names = set()
    fns = set()
    for c in CASES:
        assert c.name not in names, c.name
        names.add(c.name)
        fns.add(c.fn)
        r = c.run()
        if D in c.tags:
            assert _is_float_result(r), (c.name, type(r))
            a0 = c.args[0]
            assert isinstance(a0, float) or (isinstance(a0, np.ndarray)
                                             and a0.dtype == np.float64), c.name
    counts = {}
    for c in CASES:
        for t in c.tags:
            counts[t] = counts.get(t, 0) + 1
    print("cases:", len(CASES), "programs:", len(fns),
          "differentiable programs:", len(set(c.fn for c in by_tag(D))))
    for t in sorted(counts):
        print("  %-18s %d" % (t, counts[t]))
