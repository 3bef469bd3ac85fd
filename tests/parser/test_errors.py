"""Everything the parser refuses: the error's type, what it names, where it points.

Each refused program is a function defined inside its test (Python accepts all of
them); `check_error` checks that the message names the construct, the file and the
line, and that the caret is under the right column.
"""

import numpy as np
import pytest

import myia
from myia.errors import (
    MyiaError, MyiaNameError, MyiaSourceError, MyiaSyntaxError, MyiaTypeError, MyiaValueError,
)
from myia.parser import parse
from myia.parser.parse import _cache

from .helpers import check_error

GLOBAL_LIST = [1, 2]
GLOBAL_SET = {1, 2}


def refused(fn, error=MyiaSyntaxError):
    with pytest.raises(error) as info:
        parse(fn)
    assert fn not in _cache  # a failed parse leaves nothing behind
    return info.value


# ---------------------------------------------------------------- statements


def test_class():
    def f(x):
        class A:
            pass
        return x

    check_error(refused(f), f, "class A:", "`class` definitions", "not supported")


def test_try():
    def f(x):
        try:
            return x
        except ValueError:
            return 0

    check_error(refused(f), f, "try:", "`try`")


def test_raise():
    def f(x):
        raise ValueError(x)

    check_error(refused(f), f, "raise", "`raise`", "assert")


def test_with():
    def f(x):
        with x:
            return 1

    check_error(refused(f), f, "with x:", "`with`")


def test_global_and_nonlocal():
    def f(x):
        global GLOBAL_LIST
        return x

    check_error(refused(f), f, "global GLOBAL_LIST", "`global`")

    def g(x):
        def h():
            nonlocal x
            return x
        return h()

    check_error(refused(g), g, "nonlocal x", "`nonlocal`")


def test_import_inside_a_function():
    def f(x):
        import math
        return math.sin(x)

    check_error(refused(f), f, "import math", "`import`", "top of the file")

    def g(x):
        from math import sin
        return sin(x)

    check_error(refused(g), g, "from math import sin", "`import`")


def test_del():
    def f(x):
        y = x
        del y
        return x

    check_error(refused(f), f, "del y", "`del`")


def test_yield():
    def f(x):
        yield x

    check_error(refused(f), f, "yield x", "generators", "`yield`")

    def g(x):
        yield from x

    check_error(refused(g), g, "yield from x", "yield from")


def test_async():
    async def f(x):
        return x

    check_error(refused(f), f, "async def f", "`async def`")

    def g(x):
        async def h():
            return x
        return h

    check_error(refused(g), g, "async def h", "`async def`")


def test_while_else_and_for_else():
    def f(x):
        while x > 0:
            x = x - 1
        else:
            x = 10
        return x

    check_error(refused(f), f, "x = 10", "`while ... else`")

    def g(x):
        for i in range(3):
            x = x + i
        else:
            x = 0
        return x

    check_error(refused(g), g, "x = 0", "`for ... else`")


def test_match():
    def f(x):
        match x:
            case 1:
                return 2
        return x

    check_error(refused(f), f, "match x:", "`match`")


def test_subscript_and_attribute_assignment():
    def f(x):
        x[0] = 1.0
        return x

    # (an argument: Python would change the caller's array; see test_index_assignment)
    err = check_error(refused(f), f, "x[0] = 1.0", "cannot assign to `x[0]`", at="x[0]")
    assert "x = np.copy(x)" in err

    def g(x):
        x.a = 1.0
        return x

    check_error(refused(g), g, "x.a = 1.0", "attribute", at="x.a")

    def h(x):
        x[0] += 1.0
        return x

    check_error(refused(h), h, "x[0] += 1.0", "cannot assign to `x[0]`", at="x[0]")


def test_starred_assignment():
    def f(t):
        a, *b = t
        return a

    check_error(refused(f), f, "a, *b = t", "starred", at="*b")


def test_break_outside_a_loop_is_refused_by_python_first():
    src = "def f(x):\n    break\n"
    with pytest.raises(SyntaxError):
        compile(src, "<test>", "exec")


# ---------------------------------------------------------------- expressions


def test_set_comprehensions():
    # (list and dict comprehensions and generator expressions: tests/parser/test_containers.py)
    def f_set(x):
        return {i for i in x}

    check_error(refused(f_set), f_set, "{i for i in x}", "set comprehensions", "list")


def test_set_literals():
    # (list and dict literals: tests/parser/test_containers.py)
    def h(x):
        return {x}

    check_error(refused(h), h, "{x}", "set literals")


def test_fstring():
    def f(x):
        assert x > 0, f"bad {x}"
        return x

    check_error(refused(f), f, 'f"bad {x}"', "f-strings")


def test_walrus():
    def f(x):
        return (y := x + 1) * y

    check_error(refused(f), f, "y := x + 1", ":=")


def test_starred_arguments_with_keywords_and_double_starred_arguments():
    def f(t):
        return np.sum(*t, axis=0)

    check_error(refused(f), f, "axis=0", "keyword arguments beside starred ones",
                at="axis=0")

    def g(d):
        return max(1, **d)

    check_error(refused(g), g, "**d", "**kwargs", at="**d")


def test_parameters_outside_the_subset():
    def f(*args):
        return args

    # `*args` collects a call's extra arguments: from subset code only
    with pytest.raises(MyiaError, match="only subset code can call it"):
        myia.compile(f)(1.0, 2.0)

    def g(x, **kw):
        return x

    check_error(refused(g), g, "def g(x, **kw)", "`**kwargs`", at="kw")

    def h(x, *, k=1):
        return x

    check_error(refused(h), h, "def h(x, *, k=1)", "keyword-only", at="k=1")

    def i(x, /, y):
        return x

    check_error(refused(i), i, "def i(x, /, y)", "positional-only", at="x, /")

    def j(x):
        def inner(*a):
            return a
        return inner(x)

    assert myia.compile(j)(2.0) == (2.0,)

    def k(x):
        return (lambda *a: a)(x, x)

    assert myia.compile(k)(2.0) == (2.0, 2.0)


def test_decorated_nested_def():
    def f(x):
        @staticmethod
        def g(y):
            return y
        return g(x)

    check_error(refused(f), f, "@staticmethod", "decorators", at="staticmethod")


def test_is_refused_except_with_none():
    def f(x, y):
        return x is y

    check_error(refused(f), f, "x is y", "`is`", "None")

    # `is None` asks about the type of any value, at compile time
    def g(x, a=None):
        return ((x + 1) is None, a is None, x is not None, np.ones(2) is None)

    assert myia.compile(g)(1.0) == (False, True, True, False)
    assert myia.compile(g)(1.0, np.ones(3)) == (False, False, True, False)


def test_bitwise_operators():
    # &, |, ^, ~ work on bools and integers (tests/numpy/cases_dtypes.py); shifts do not
    def f(x, y):
        return x << y

    check_error(refused(f), f, "x << y", "`<<`")

    def g(x):
        return ~x

    with pytest.raises(MyiaTypeError, match="~ is defined for bools and integers"):
        myia.compile(g, backend="vm")(1.5)


def test_dunder_attributes():
    def f(x):
        return x.__class__

    check_error(refused(f), f, "x.__class__", "dunder attributes are not supported")

    def g(x):
        return np.__name__

    check_error(refused(g), g, "np.__name__", "dunder")


def test_unknown_attribute_and_method():
    def f(x):
        return x.real

    err = check_error(refused(f), f, "x.real", "`.real`")
    assert ".shape" in err  # the hint lists what is supported

    def g(x):
        return x.tofile("out.bin")

    check_error(refused(g), g, "x.tofile", "`.tofile`")

    def h(x):
        m = x.sum
        return m()

    check_error(refused(h), h, "x.sum", "must be called")


def test_module_as_a_value():
    def f(x):
        return (np, x)

    check_error(refused(f), f, "(np, x)", "module `np`", at="np,")


def test_non_constant_defaults():
    def f(x):
        def g(y, z=x):
            return y + z
        return g(1)

    check_error(refused(f), f, "def g(y, z=x)", "default value of parameter `z`",
                "constant", at="x)")

    # a def that Python ran has its defaults evaluated already: they are used
    def h(x, z=np.zeros(2).sum() + 1.0):
        return x + z

    assert myia.compile(h)(1.0) == 2.0


def test_assert_message_must_be_constant():
    def f(x):
        assert x > 0, x * 2
        return x

    check_error(refused(f), f, "assert x > 0, x * 2", "message", "constant", at="x * 2")


def test_range_step_zero_is_refused():
    def f(n):
        s = 0
        for i in range(0, n, 0):
            s += i
        return s

    check_error(refused(f, MyiaValueError), f, "range(0, n, 0)", "zero", at="0)")


def test_range_of_a_float_constant_is_refused(backend):
    # Python: TypeError: 'float' object cannot be interpreted as an integer
    def stop(x):
        s = 0.0
        for i in range(3.0):
            s = s + x
        return s

    def start(x):
        s = 0.0
        for i in range(-1.5, 3):
            s = s + x
        return s

    def step(x, n):
        s = 0.0
        for i in range(0, n, 2.0):
            s = s + x
        return s

    for fn, snippet, at, words in [
        (stop, "range(3.0)", "3.0", ["its stop is a float64", "use an int: range(3)"]),
        (start, "range(-1.5, 3)", "-1.5", ["its start is a float64", "range(int(-1.5), 3)"]),
        (step, "range(0, n, 2.0)", "2.0", ["its step is a float64", "range(0, n, 2)"]),
    ]:
        check_error(refused(fn, MyiaTypeError), fn, snippet, "range() takes integers", *words,
                    at=at)
        with pytest.raises(MyiaTypeError) as info:
            myia.compile(fn)(1.0, 4)
        check_error(info.value, fn, snippet, *words, at=at)


FLOAT_BOUND = 3.0


def test_range_of_a_float_argument_is_refused_when_compiling(backend):
    def stop(x, n):
        s = 0.0
        for i in range(n):
            s = s + x
        return s

    def start(x, n):
        s = 0.0
        for i in range(n * 2, 10):
            s = s + x
        return s

    def step(x, n):
        s = 0.0
        for i in range(0, 10, n):
            s = s + x
        return s

    def global_stop(x, n):
        s = 0.0
        for i in range(FLOAT_BOUND):
            s = s + x
        return s

    for fn, snippet, at, n, words in [
        (stop, "range(n)", "n)", 3.0, ["its stop is a float64", "use an int: range(int(n))"]),
        (stop, "range(n)", "n)", np.float32(3.0), ["its stop is a float32"]),
        (start, "range(n * 2, 10)", "n * 2", 1.0,
         ["its start is a float64", "range(int(n * 2), 10)"]),
        (step, "range(0, 10, n)", "n)", 2.0, ["its step is a float64", "range(0, 10, int(n))"]),
        (global_stop, "range(FLOAT_BOUND)", "FLOAT_BOUND", 0,
         ["its stop is a float64", "range(int(FLOAT_BOUND))"]),
    ]:
        with pytest.raises(MyiaTypeError) as info:
            myia.compile(fn)(1.0, n)
        check_error(info.value, fn, snippet, "range() takes integers", *words, at=at)
    # ints (and bools, which are ints) are what range takes
    assert myia.compile(stop)(1.0, 3) == 3.0
    assert myia.compile(step)(1.0, 3) == 4.0
    assert myia.compile(stop)(1.0, True) == 1.0


def test_range_of_a_float_in_a_comprehension_is_refused(backend):
    def f(x):
        return sum([x for i in range(3.0)])

    with pytest.raises(MyiaTypeError) as info:
        myia.compile(f)(1.0)
    check_error(info.value, f, "range(3.0)", "range() takes integers",
                "its stop is a float64", "range(int(n))")


# ---------------------------------------------------------------- names


def test_undefined_name_with_a_suggestion():
    def f(value):
        return valeu + 1  # noqa: F821

    err = check_error(refused(f, MyiaNameError), f, "valeu + 1", "`valeu`", "not defined",
                      at="valeu")
    assert "`value`" in err  # did you mean


def test_undefined_name_in_a_nested_function():
    def f(x):
        def g(value):
            return valeu.sum()  # noqa: F821
        return g(x)

    err = check_error(refused(f, MyiaNameError), f, "valeu.sum()", "`valeu`", at="valeu")
    assert "`value`" in err


def test_used_before_assignment():
    def f(x):
        y = z + x  # noqa: F821
        z = 1
        return y

    check_error(refused(f, MyiaNameError), f, "y = z + x", "`z`", "before it is assigned",
                at="z + x")


def test_assigned_on_some_paths_only():
    def f(x):
        if x > 0:
            y = 1
        return y

    check_error(refused(f, MyiaNameError), f, "return y", "`y`", "every path", at="y")

    def g(n):
        for i in range(n):
            pass
        return i

    check_error(refused(g, MyiaNameError), g, "return i", "`i`", "every path", at="i")


def test_closure_reads_a_variable_assigned_after_the_def():
    def f(x):
        def g():
            return y
        y = x
        return g()

    check_error(refused(f, MyiaNameError), f, "return y", "closure", "`y`",
                "assigned after", at="y")


def test_nested_function_used_before_its_def():
    def f(x):
        r = g(x)

        def g(y):
            return y
        return r

    check_error(refused(f, MyiaNameError), f, "r = g(x)", "`g`", "before its definition",
                at="g(x)")


def test_nested_function_def_never_reached():
    def f(x):
        def a(y):
            return b(y)
        return a(x)

        def b(y):
            return y

    check_error(refused(f), f, "return b(y)", "`b`", "never reached", at="b")


# ---------------------------------------------------------------- calls


def two_args(a, b=2):
    return a + b


def test_missing_argument():
    def f(x):
        return two_args(b=x)

    check_error(refused(f, MyiaTypeError), f, "two_args(b=x)", "missing", "`a`")


def test_unknown_keyword():
    def f(x):
        return two_args(x, c=1)

    err = check_error(refused(f, MyiaTypeError), f, "two_args(x, c=1)", "keyword", "`c`",
                      at="c=1")
    assert "a, b" in err


def test_too_many_arguments():
    def f(x):
        return two_args(x, 1, 2)

    check_error(refused(f, MyiaTypeError), f, "two_args(x, 1, 2)", "takes 2 arguments",
                "3 were given")


def test_argument_given_twice():
    def f(x):
        return two_args(x, a=1)

    check_error(refused(f, MyiaTypeError), f, "two_args(x, a=1)", "several values", "`a`",
                at="a=1")


def test_keywords_for_an_unknown_callee():
    def f(g, x):
        return g(x, k=1)

    check_error(refused(f), f, "g(x, k=1)", "keyword arguments", "`g`", at="k=1")

    def h(x):
        return abs(x=x)

    check_error(refused(h), h, "abs(x=x)", "`abs`", "no keyword", at="x=x")


# ---------------------------------------------------------------- values without an equivalent


def test_builtin_without_an_equivalent():
    def f(x):
        return hash(x)

    err = check_error(refused(f, MyiaSourceError), f, "hash(x)", "cannot compile `hash`",
                      "builtin function", "no equivalent", at="hash")
    assert "myia.lib" in err

    def p(x):
        print(x)
        return x

    # (issue 37: print says where values can be seen, not the nearest names)
    err = check_error(refused(p, MyiaSourceError), p, "print(x)", "cannot compile `print`",
                      "no output but its result", "--view values", at="print")
    assert "np.rint" not in err

    def g(x):
        return open(x)

    check_error(refused(g, MyiaSourceError), g, "open(x)", "`open`", at="open")


def test_numpy_function_without_an_equivalent():
    def f(x):
        return np.linalg.inv(x)

    check_error(refused(f, MyiaSourceError), f, "np.linalg.inv(x)", "`np.linalg.inv`",
                "no equivalent", at="np.linalg.inv")


def test_global_set_value():
    # (a global list or dict is a constant: tests/parser/test_containers.py)
    def f(x):
        return GLOBAL_SET

    check_error(refused(f, MyiaTypeError), f, "return GLOBAL_SET", "set", "tuples, lists",
                at="GLOBAL_SET")


def test_missing_module_attribute():
    def f(x):
        return np.no_such_function(x)

    check_error(refused(f, MyiaNameError), f, "np.no_such_function", "no_such_function")


def bad_even(n):
    if n == 0:
        return True
    r = bad_odd(n - 1)
    return {r}


def bad_odd(n):
    return bad_even(n)


def test_a_failed_parse_uncaches_the_functions_it_parsed():
    check_error(refused(bad_even), bad_even, "return {r}", "set literals", at="{r}")
    assert bad_odd not in _cache  # it parsed, but refers to bad_even's broken graph


def test_errors_in_called_functions_point_to_their_source():
    def helper(x):
        return {x}

    def f(x):
        return helper(x)

    check_error(refused(f), helper, "return {x}", "set literals", at="{x}")


# ---------------------------------------------------------------- functions without source


def test_parse_of_a_builtin():
    with pytest.raises(MyiaSourceError) as info:
        parse(print)
    assert info.value.loc is None
    assert "`print`" in str(info.value) and "builtin" in str(info.value)


def test_parse_of_a_function_without_source():
    ns = {}
    exec("def f(x):\n    return x\n", ns)
    with pytest.raises(MyiaSourceError) as info:
        parse(ns["f"])
    assert "source" in str(info.value)


def test_lambdas_with_the_same_parameters_on_one_line():
    fs = (lambda x: x + 1, lambda x: x * 2)  # noqa: E731
    g0, g1 = parse(fs[0]), parse(fs[1])
    assert g0.output.inputs[0].value.name == "add"
    assert g1.output.inputs[0].value.name == "mul"


def test_outside_the_subset_the_hint_names_what_works():
    def rnd(x):
        return np.random.randn(3) * x

    err = check_error(refused(rnd, MyiaSourceError), rnd, "np.random.randn(3)",
                      "cannot compile `np.random.randn`")
    assert "%%python" in err and "pass it as an argument" in err

    def load(x):
        return np.loadtxt("data.txt") * x

    assert "%%python" in check_error(refused(load, MyiaSourceError), load, "np.loadtxt",
                                     "cannot compile `np.loadtxt`")

    def typo(x):
        return np.nanmean(x)

    err = check_error(refused(typo, MyiaSourceError), typo, "np.nanmean", "`np.nanmean`")
    assert "`np.mean`" in err  # the nearest supported name

    def fill(x):
        x.fill(0.0)
        return x

    err = check_error(refused(fill, MyiaSyntaxError), fill, "x.fill(0.0)", "in place")
    assert "x = np.full_like(x, 0.0)" in err


# ---------------------------------------------------------------- finding the source


MODULE = '''\
import math

PADDING = [
{padding}]


def refused(x):
    try:
        return x
    except ValueError:
        return -x


twice = lambda x: x + x
'''


def test_a_function_is_found_without_parsing_its_whole_file(tmp_path):
    # a def is parsed from its own lines, at their real line and column (a library's
    # whole files took 20-35 ms of a first compile); a lambda from its file's tree
    import importlib.util

    from myia.parser import source

    path = tmp_path / "far_down.py"
    path.write_text(MODULE.format(padding="    0,\n" * 400))
    spec = importlib.util.spec_from_file_location("far_down", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        text = check_error(refused(module.refused), module.refused, "try:", "`try`")
        assert "line 408," in text
        assert str(path) not in source._trees
        assert parse(module.twice) is not None
        assert str(path) in source._trees
    finally:
        source._trees.pop(str(path), None)
