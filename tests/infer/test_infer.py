"""The inference engine: fixed points of loops and recursion, function values,
constant propagation, and programs too deep for Python's recursion."""

import math

import numpy as np
import pytest
from myia import grad
from myia.infer import (
    AArray,
    AFunction,
    AScalar,
    ATuple,
    abstract_of,
    infer_graph,
    specialize,
)
from myia.abstract import broaden
from myia.ir import Graph
from myia.parser import parse
from myia.prim import ops as P

from ..compare import assert_same

F64 = AScalar("float64")
NP_F64 = AScalar("float64", numpy=True)  # an np.float64 (np.sin of a float gives one)
I64 = AScalar("int64")
B = AScalar("bool")


def infer(fn, *args):
    """The result abstract of `fn` for arguments of the types of `args`, and the
    inference result."""
    graph = fn if isinstance(fn, Graph) else parse(fn)
    return infer_graph(graph, [broaden(abstract_of(a)) for a in args])


def run_specialized(fn, *args):
    from myia.backend.vm import VM, Closure

    graph = specialize(parse(fn), [broaden(abstract_of(a)) for a in args])
    return VM().call(Closure(graph, None), list(args))


def contexts_named(result, name):
    return [c for c in result.contexts if c.graph.name == name]


# ---------------------------------------------------------------- loops


def while_int_counter_float_acc(x, n):
    i = 0
    acc = 0.0
    while i < n:
        acc = acc + x * i
        i = i + 1
    return acc, i


def test_while_loop_fixed_point():
    out, res = infer(while_int_counter_float_acc, 0.5, 10)
    assert out == ATuple([F64, I64])
    # the header is inferred with the initial constants, then once broadened
    headers = contexts_named(res, "while_int_counter_float_acc:while_header")
    assert 1 <= len(headers) <= 3
    assert_same(run_specialized(while_int_counter_float_acc, 0.5, 10),
                while_int_counter_float_acc(0.5, 10))


def int_then_float(n):
    x = 0
    while n > 0:
        x = x + 0.5
        n = n - 1
    return x


def test_loop_variable_int_then_float_is_promoted():
    out, _ = infer(int_then_float, 3)
    assert out == F64
    # where the int and the float paths meet, the int is converted
    zero_trips = run_specialized(int_then_float, 0)
    assert zero_trips == 0 and isinstance(zero_trips, float)
    assert run_specialized(int_then_float, 3) == 1.5


def sin_loop(x):
    for _ in range(10000):
        x = np.sin(x)
    return x


def test_long_loop_is_not_iterated():
    out, res = infer(sin_loop, 0.3)
    assert out == NP_F64
    assert len(res.contexts) < 20
    assert run_specialized(sin_loop, 0.3) == pytest.approx(sin_loop(0.3))


def recursive_sum(x, k, axis):
    if k == 0:
        return np.sum(x, axis=axis)
    return recursive_sum(x * 2.0, k - 1, axis)


def use_recursive_sum(x):
    return recursive_sum(x, 3, 1)


def test_values_passed_on_unchanged_stay_known():
    """A recursive call broadens the arguments that change (k), not the ones passed
    on as they are (axis, which a reduction needs as a constant)."""
    out, _ = infer(use_recursive_sum, np.ones((3, 4)))
    assert out == AArray("float64", (3,))
    assert_same(run_specialized(use_recursive_sum, np.ones((3, 4))), np.full(3, 32.0))


# ---------------------------------------------------------------- recursion


def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


def test_factorial():
    out, res = infer(fact, 5)
    assert out == I64
    assert len(contexts_named(res, "fact")) == 1
    # with a constant argument: the first call keeps it, the recursion broadens it
    out, res = infer_graph(parse(fact), [abstract_of(5)])
    assert out == I64
    assert len(contexts_named(res, "fact")) == 2


def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


def test_mutual_recursion():
    out, _ = infer(is_even, 7)
    assert out == B
    assert run_specialized(is_even, 7) is False


def float_recursion(x, n):
    if n == 0:
        return x
    return float_recursion(np.sin(x), n - 1) * 2.0


def test_recursion_result_found_from_the_base_case():
    out, _ = infer(float_recursion, 0.5, 3)
    assert out == NP_F64
    assert run_specialized(float_recursion, 0.5, 3) == pytest.approx(float_recursion(0.5, 3))


def for_over_mixed_tuple(x):
    acc = 0
    for v in (1, 2.5, x):
        acc = acc + v
    return acc


def test_for_over_a_tuple_of_different_types():
    out, _ = infer(for_over_mixed_tuple, np.ones(3))
    assert out == AArray("float64", (3,))
    out, _ = infer(for_over_mixed_tuple, 2)
    assert out == F64
    assert_same(run_specialized(for_over_mixed_tuple, np.ones(3)), np.full(3, 4.5))


def growing_tuple(n):
    t = ()
    while n > 0:
        t = (t, n)  # a new type at each iteration
        n = n - 1
    return n


def test_ever_growing_types_are_an_error():
    from myia.errors import MyiaTypeError

    with pytest.raises(MyiaTypeError, match="does not converge"):
        infer(growing_tuple, 3)


def make_around(f, a):
    def around(y):
        return f(a * y)

    return around


def grad_of_loop_nesting_closures(x, c):
    f = math.sin
    i = 0
    while i < 3:
        f = make_around(f, 2.0) if c else f  # a closure over the last: ever deeper
        i = i + 1
    return grad(f)(x)


def test_a_loop_that_nests_closures_is_an_error_not_a_hang():
    # the J of each closure in the loop state was once walked again for every closure
    # that captured it: exponential, and it never reached the error
    from myia.errors import MyiaTypeError

    with pytest.raises(MyiaTypeError, match="does not converge") as e:
        infer(grad_of_loop_nesting_closures, 0.5, True)
    assert len(str(e.value).splitlines()[0]) < 500  # the types are cut short


# ---------------------------------------------------------------- function values


def square(x):
    return x * x


def cube(x):
    return x * x * x


def choose(x):
    f = square if x > 0 else cube
    return f(x)


def apply_twice(f, x):
    return f(f(x))


def higher_order(x):
    return apply_twice(square, x) + apply_twice(lambda y: y + x, 1.0)


def test_function_values():
    out, res = infer(choose, 1.0)
    assert out == F64
    options = [a for a in res.root.values.values() if isinstance(a, AFunction)]
    assert "fn{cube, square}" in [str(a) for a in options]
    assert run_specialized(choose, -2.0) == -8.0
    out, _ = infer(higher_order, 2.0)
    assert out == F64
    assert run_specialized(higher_order, 2.0) == higher_order(2.0)


def make_adder(a):
    return lambda y: y + a


def closures(x):
    add2 = make_adder(2.0)
    addx = make_adder(x)
    return add2(x) + addx(3.0)


def test_closures_are_inferred_per_frame():
    out, res = infer(closures, 1.0)
    assert out == F64
    lambdas = contexts_named(res, "<lambda>")
    # one closure made with a = 2.0, one with a = x: two parents, two contexts
    assert len({c.parent for c in lambdas}) == 2
    assert run_specialized(closures, 1.0) == closures(1.0)


# ---------------------------------------------------------------- constants


def static_axis(x):
    return np.sum(x, axis=1)


def test_constant_axis_gives_a_static_shape():
    out, _ = infer(static_axis, np.ones((3, 4)))
    assert out == AArray("float64", (3,))


def folded_condition(x):
    n = 3
    if n < 5:
        return x
    return (x, x)  # never taken: its type does not matter


def test_known_conditions_choose_one_branch():
    out, _ = infer(folded_condition, 1.0)
    assert out == F64


def shape_arithmetic(x):
    n, m = x.shape
    return np.zeros((n * m, 2)) + x.reshape((-1, 1))


def test_shapes_propagate_as_constants():
    out, _ = infer(shape_arithmetic, np.ones((2, 3)))
    assert out == AArray("float64", (6, 2))


# ---------------------------------------------------------------- depth


def test_deep_chain_of_calls():
    """3000 graphs, each calling the next: no recursion in Python over the program
    (deeper than Python's recursion limit)."""
    graphs = [Graph(f"g{i}") for i in range(3000)]
    for i, g in enumerate(graphs):
        x = g.add_parameter("x")
        if i + 1 < len(graphs):
            g.output = g.apply(P.add, g.apply(graphs[i + 1], x), 1.0)
        else:
            g.output = x
    out, res = infer(graphs[0], 1.0)
    assert out == F64
    assert len(res.contexts) == 3000


def test_deep_nesting_of_closures():
    """Closures nested 1200 deep (deeper than Python's recursion limit), the
    innermost reading the outermost parameter."""
    outer = Graph("outer")
    x = outer.add_parameter("x")
    g = outer
    chain = []
    for i in range(1200):
        h = Graph(f"h{i}")
        chain.append((g, h))
        g = h
    g.output = g.apply(P.mul, x, 2.0)
    for parent, child in reversed(chain):
        parent.output = parent.apply(child)
    out, res = infer(outer, 1.5)
    assert out == F64
    assert len(res.contexts) == 1201


def test_defaults_fill_missing_arguments():
    def scaled(x, scale=2.0):
        return x * scale

    def caller(x):
        f = scaled
        return apply_twice(f, x)

    out, _ = infer(caller, 1.5)
    assert out == F64
