"""Closures and late binding (issue 31): Python's closure reads a captured variable
when it is called; Myia's reads it where the closure is made.  Where the two would
give different numbers (a captured variable assigned again before a use, or after the
closure was kept in a container), the program is refused with a located error; where
they agree (the variable is assigned after the last use, or never), it compiles and
gives Python's value, gradient included."""

import pytest

import myia
from myia import MyiaSyntaxError

pytestmark = pytest.mark.usefixtures("backend")


def reassigned_before_the_call(x):
    def g():
        return x

    x = x * 2.0
    return g()


def reassigned_in_the_loop(x, n):
    def g():
        return x

    i = 0
    s = 0.0
    while i < n:
        s = s + g()
        x = x + 1.0
        i = i + 1
    return s


def lambda_bound_to_a_name(x):
    h = lambda: x  # noqa: E731
    x = x + 1.0
    return h()


def kept_in_a_tuple(x):
    fs = (lambda: x,)
    x = x + 1.0
    return fs[0]()


def loop_variable_in_a_list(x):
    fs = []
    for i in range(3):
        fs = fs + [lambda y: y * i]
    return fs[0](x)


def lambda_called_in_a_loop_that_assigns(x, n):
    v = x * 0.5
    h = lambda u: u + v  # noqa: E731
    for _ in range(n):
        v = h(v) + 0.5  # (the name `h` is read through the loop's phi)
    return v


def lambda_called_after_an_if_that_assigns(x):
    v = x * 0.5
    h = lambda u: u + v  # noqa: E731
    if x > 0.0:
        v = v + 0.5
    else:
        v = v - 0.5
    return h(x)


def def_calling_a_named_lambda(x):
    v = x * 3.0
    h = lambda u: u * v  # noqa: E731

    def g(u):
        return h(u) + 1.0

    v = v * 2.0
    return g(x)


def factory(x):
    v = x * 3.0

    def mk():
        return lambda u: u * v

    m = mk()
    v = v * 2.0
    return m(x)


def factory_through_a_nested_def(x):
    v = x * 3.0

    def outer():
        def mk():
            def q(u):
                return u * v

            return q

        return mk()  # hands out what mk made

    m = outer()
    v = v * 2.0
    return m(x)


@pytest.mark.parametrize("fn, args, line, name", [
    (reassigned_before_the_call, (1.0,), 21, "x"),
    (reassigned_in_the_loop, (1.0, 3), 31, "x"),
    (lambda_bound_to_a_name, (1.0,), 40, "x"),
    (kept_in_a_tuple, (1.0,), 44, "x"),
    (loop_variable_in_a_list, (1.0,), 52, "i"),
    (lambda_called_in_a_loop_that_assigns, (1.0, 2), 60, "v"),
    (lambda_called_after_an_if_that_assigns, (1.0,), 71, "v"),
    (def_calling_a_named_lambda, (1.0,), 82, "v"),
    (factory, (1.0,), 93, "v"),
    (factory_through_a_nested_def, (1.0,), 110, "v"),
])
def test_where_python_would_read_a_later_value_it_is_refused(fn, args, line, name):
    with pytest.raises(MyiaSyntaxError) as info:
        myia.compile(fn)(*args)
    e = info.value
    assert f"variable `{name}`" in str(e) and "Python's closure" in str(e)
    assert e.loc.filename == __file__ and e.loc.line == line
    assert f"pass `{name}` to it as an argument" in str(e)


def closure_made_in_the_loop(x, n):
    i = 0
    s = 0.0
    while i < n:
        def g(u):
            return u * x

        s = s + myia.grad(g)(1.0) + g(2.0)
        x = x + 1.0  # after the last use in this iteration: Python agrees
        i = i + 1
    return s


def never_reassigned(x, n):
    def g():
        return x * x

    i = 0
    s = 0.0
    while i < n:
        s = s + g()
        i = i + 1
    return s


def reassigned_after_the_last_use(x):
    def g(u):
        return u * x

    y = g(2.0) + g(3.0)
    x = y * 2.0
    return x


def factory_made_and_called_in_the_loop(x, n):
    s = 0.0
    for k in range(n):
        def scaled(u):
            def by_x(t):
                return t * x

            return by_x(u) + by_x(k * 1.0)

        s = s + scaled(s)  # (k changes on the next pass, when a new `scaled` is made)
    return s


def factory_result_used_before_the_assignment(x, n):
    v = x * 0.5
    for _ in range(n):
        def mk(c):
            return lambda u: u * v

        m = mk(v)
        v = 0.5 * v + m(3.0)  # m reads v before it is assigned: Python agrees
    return v


def def_in_a_loop_calling_its_closures(x, n):
    # (found by tests/ad/test_transforms_fuzz.py: `g` only calls the closure it makes,
    # so the loop's next assignment of `v` is no late read; it was refused)
    v = x
    i = 0
    while i < n:
        def g(u):
            def q(w):
                return 1.0 / ((0.5 * n) if v > 2.0 else w)

            return q(u) + q(u * u + 1.0)

        v = 0.5 * v + g(v)
        i = i + 1
    return v


@pytest.mark.parametrize("fn, args", [
    (def_in_a_loop_calling_its_closures, (1.5, 3)),
    (closure_made_in_the_loop, (1.5, 3)),
    (factory_result_used_before_the_assignment, (1.5, 3)),
    (factory_made_and_called_in_the_loop, (1.5, 3)),
    (never_reassigned, (1.5, 3)),
    (reassigned_after_the_last_use, (1.5,)),
])
def test_where_python_agrees_it_compiles_and_differentiates(fn, args):
    assert myia.compile(fn)(*args) == pytest.approx(fn(*args))
    h = 1e-6
    fd = (fn(args[0] + h, *args[1:]) - fn(args[0] - h, *args[1:])) / (2 * h)
    assert myia.grad(fn)(*args) == pytest.approx(fd, rel=1e-6)
