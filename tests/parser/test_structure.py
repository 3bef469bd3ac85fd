"""The shapes of parsed graphs: blocks, switches, loops, phis, closures, locations."""

import math

import numpy as np
import pytest

from myia.lib import builtins, np_create, np_linalg, np_reduce, np_shape
from myia.ir import Apply, Constant, Graph, Parameter, manage
from myia.parser import EFFECTS, parse, parse_source
from myia.prim import ops as P

from .helpers import applies, block, calls, graphs_of, jump_target, line_range, prim_of, switch_of

SCALE = 3.0
COEFFS = (1.0, 2.0)


def square(x):
    return x * x


def cube(x):
    return x * x * x


FUNCS = (square, cube)

# ---------------------------------------------------------------- functions, calls


def simple(x, y):
    z = x * y + 1.0
    return z


def test_function_graph():
    g = parse(simple)
    assert g.name == "simple"
    assert [p.name for p in g.parameters] == ["x", "y"]
    assert all(isinstance(p, Parameter) and p.graph is g for p in g.parameters)
    assert g.loc.line == line_range(simple)[0]
    out = g.output
    assert prim_of(out) is P.add and out.name == "z"
    mul = out.inputs[1]
    assert prim_of(mul) is P.mul and mul.inputs[1:] == g.parameters
    assert isinstance(out.inputs[2], Constant) and out.inputs[2].value == 1.0


def test_cached_per_function():
    assert parse(simple) is parse(simple)


def factorial(n):
    if n <= 1:
        return 1
    return n * factorial(n - 1)


def test_recursion_refers_to_the_same_graph():
    g = parse(factorial)
    rec = [n for n in applies(g) if isinstance(n.inputs[0], Constant) and n.inputs[0].value is g]
    assert len(rec) == 1


def is_even(n):
    return True if n == 0 else is_odd(n - 1)


def is_odd(n):
    return False if n == 0 else is_even(n - 1)


def test_mutual_recursion_of_globals():
    ge = parse(is_even)
    go = parse(is_odd)
    assert go in graphs_of(ge) and ge in graphs_of(go)


def uses_globals(x):
    return square(x) + SCALE * math.pi + np.exp(x) + COEFFS[0]


def test_global_resolution():
    g = parse(uses_globals)
    fns = [n.inputs[0].value for n in applies(g)]
    assert parse(square) in fns
    assert P.exp in fns
    consts = [i.value for n in applies(g) for i in n.inputs if isinstance(i, Constant)]
    assert SCALE in consts and math.pi in consts and COEFFS in consts


def tuple_of_functions(x):
    return FUNCS[1](x)


def test_global_tuple_of_functions_is_a_make_tuple():
    g = parse(tuple_of_functions)
    (mt,) = calls(g, P.make_tuple)
    assert [i.value for i in mt.inputs[1:]] == [parse(square), parse(cube)]


def test_python_closure_cells_are_globals():
    k = 3.0

    def inner(x):
        return x * k

    g = parse(inner)
    assert prim_of(g.output) is P.mul
    assert g.output.inputs[2].value == 3.0


def dtypes_and_conversions(x):
    return float(x), np.zeros((2,), dtype=float), np.ones((2,), np.float32)


def test_dtype_objects_are_dtype_names_as_values_and_conversions_as_callees():
    g = parse(dtypes_and_conversions)
    conv, zeros, ones = g.output.inputs[1:]
    assert prim_of(conv) is P.to_float
    assert zeros.inputs[2].value == "float64" and ones.inputs[2].value == "float32"


class _Special:
    pass


SPECIAL = _Special()


def uses_special(x):
    return SPECIAL(x)


def test_special_values_are_resolved_through_the_registry():
    from myia.parser import SPECIAL_VALUES, register_special

    marker = object()
    register_special(SPECIAL, marker)
    try:
        g = parse(uses_special)
    finally:
        del SPECIAL_VALUES[SPECIAL]
    assert g.output.inputs[0].value is marker


def scaled(x, scale=2.0, shift=-1, dtype=np.float32, pair=(1, -2.5), s=-SCALE, n=None):
    return x * scale + shift


def test_defaults_are_constants():
    g = parse(scaled)
    assert g.defaults == {"scale": 2.0, "shift": -1, "dtype": "float32", "pair": (1, -2.5),
                          "s": -3.0, "n": None}


def keywords(x):
    return scaled(shift=5, x=x) + scaled(x, 3.0)


def test_keywords_and_defaults_are_resolved_at_parse_time():
    g = parse(keywords)
    target = parse(scaled)
    c1, c2 = [n for n in applies(g) if isinstance(n.inputs[0], Constant)
              and n.inputs[0].value is target]
    args = sorted([c1.inputs[1:], c2.inputs[1:]], key=lambda a: isinstance(a[1], Constant))
    for args in (c1.inputs[1:], c2.inputs[1:]):
        assert len(args) == 7
        assert args[0] is g.parameters[0]
        assert [a.value for a in args[3:]] == ["float32", (1, -2.5), -3.0, None]
    values = {(c.inputs[2].value, c.inputs[3].value) for c in (c1, c2)}
    assert values == {(2.0, 5), (3.0, -1)}


def numpy_keywords(x):
    return np.sum(x, axis=0) + np.zeros((3,), dtype=np.float32)


def test_keywords_of_numpy_functions():
    g = parse(numpy_keywords)
    np_sum = parse(np_reduce.np_sum)
    (call,) = [n for n in applies(g) if getattr(n.inputs[0], "value", None) is np_sum]
    # np.sum(a, axis=None, dtype=None, out=None, keepdims=False): defaults filled in
    assert [getattr(a, "value", a) for a in call.inputs[1:]] == [g.parameters[0], 0, None,
                                                                 None, False]
    assert np_sum.flags.get("core")
    zeros = parse(np_create.np_zeros)
    (call,) = [n for n in applies(g) if getattr(n.inputs[0], "value", None) is zeros]
    assert call.inputs[2].value == "float32"


def methods(x, y):
    a = x.sum(axis=1)
    b = x.reshape(2, 3)
    c = x.reshape((3, 2))
    d = x.T
    e = x.shape
    f = x.dot(y)
    t = x.transpose(1, 0)
    return a, b, c, d, e, f, t


def test_array_methods_and_attributes():
    g = parse(methods)
    x = g.parameters[0]
    by_name = {n.name: n for n in manage(g).nodes(g) if isinstance(n, Apply) and n.name}
    a = by_name["a"]
    assert a.inputs[0].value is parse(np_reduce.np_sum)
    assert a.inputs[1] is x and [c.value for c in a.inputs[2:]] == [1, None, None, False]
    b = by_name["b"]
    assert b.inputs[0].value is parse(np_shape.np_reshape)
    assert prim_of(b.inputs[2]) is P.make_tuple
    assert [c.value for c in b.inputs[2].inputs[1:]] == [2, 3]
    d = by_name["d"]
    assert d.inputs[0].value is parse(np_shape.np_transpose) and d.inputs[2].value is None
    assert prim_of(by_name["e"]) is P.shape
    assert by_name["f"].inputs[0].value is parse(np_linalg.np_dot)
    assert prim_of(by_name["t"].inputs[2]) is P.make_tuple


# ---------------------------------------------------------------- operators


def operators(a, b):
    return (a + b, a - b, a * b, a / b, a // b, a % b, a ** b, a @ b,
            -a, +a, not a, a == b, a != b, a < b, a <= b, a > b, a >= b, -1, -2.5)


def test_operators():
    g = parse(operators)
    elts = g.output.inputs[1:]
    matmul = parse(np_linalg.np_matmul)  # `@` is np.matmul
    positive = parse(builtins.py_pos)  # (+True is 1)
    expected = [P.add, P.sub, P.mul, P.truediv, P.floordiv, P.mod, P.pow, matmul, P.neg,
                positive, P.not_, P.eq, P.ne, P.lt, P.le, P.gt, P.ge]
    for node, prim in zip(elts, expected):
        if isinstance(prim, Graph):
            assert node.inputs[0].value is prim
        else:
            assert prim_of(node) is prim
    assert isinstance(elts[-2], Constant) and elts[-2].value == -1
    assert isinstance(elts[-1], Constant) and elts[-1].value == -2.5


def is_none(x, y=None):
    return y is None, x is not None


def test_is_none_asks_about_the_type():
    g = parse(is_none)
    a, b = g.output.inputs[1:]
    assert prim_of(a) is P.is_none and a.inputs[1] is g.parameters[1]
    assert prim_of(b) is P.not_ and prim_of(b.inputs[1]) is P.is_none


def chained(a, b, c):
    return a < b < c


def test_chained_comparison():
    g = parse(chained)
    a, b, c = g.parameters
    cond, g_rest, g_keep = switch_of(g)
    assert prim_of(cond) is P.truth
    first = cond.inputs[1]
    assert prim_of(first) is P.lt and first.inputs[1:] == [a, b]
    assert g_rest.name == "chained:and_rhs" and g_keep.name == "chained:and_lhs"
    assert g_keep.output is first  # the value of `a < b` when it is false
    second = g_rest.output
    assert prim_of(second) is P.lt and second.inputs[1:] == [b, c]  # b evaluated once


def and_or(a, b):
    return (a and b) or a


def test_and_or_are_switches_on_branch_graphs():
    g = parse(and_or)
    a, b = g.parameters
    cond, g_lhs, g_rhs = switch_of(g)  # or: true -> lhs
    assert g_lhs.name == "and_or:or_lhs" and g_rhs.name == "and_or:or_rhs"
    assert g_rhs.output is a
    inner = cond.inputs[1]  # truth(a and b)
    sw = inner.inputs[0]
    assert prim_of(sw) is P.switch
    g_and_rhs, g_and_lhs = sw.inputs[2].value, sw.inputs[3].value
    assert g_and_rhs.output is b and g_and_lhs.output is a


def ifexp(x):
    return x * 2 if x > 0 else -x


def test_conditional_expression():
    g = parse(ifexp)
    cond, g1, g2 = switch_of(g)
    assert prim_of(cond) is P.truth and prim_of(cond.inputs[1]) is P.gt
    assert prim_of(g1.output) is P.mul and prim_of(g2.output) is P.neg
    assert g1.parameters == [] and g2.parameters == []
    assert manage(g).free_variables_direct(g1) == [g.parameters[0]]


def indexing(x, t, i, j):
    return t[0], x[1:3], x[:, 0], x[0, 1], x[::-1], x[i:j], t[-1]


def test_subscripts():
    g = parse(indexing)
    x, t, i, j = g.parameters
    elts = g.output.inputs[1:]
    assert all(prim_of(e) is P.getitem for e in elts)
    idx = [e.inputs[2] for e in elts]
    assert idx[0].value == 0
    assert idx[1].value == slice(1, 3, None)
    assert prim_of(idx[2]) is P.make_tuple
    assert [k.value for k in idx[2].inputs[1:]] == [slice(None, None, None), 0]
    assert [k.value for k in idx[3].inputs[1:]] == [0, 1]
    assert idx[4].value == slice(None, None, -1)
    assert prim_of(idx[5]) is P.make_slice and idx[5].inputs[1:3] == [i, j]
    assert idx[5].inputs[3].value is None
    assert idx[6].value == -1


# ---------------------------------------------------------------- statements


def assignments(x, t):
    a = b = x + 1
    c, (d, e) = t
    a += 1
    a -= d
    a *= e
    a /= 2
    a //= 3
    a %= 4
    a **= 2
    a @= b
    return a, b, c


def test_assignments():
    g = parse(assignments)
    x, t = g.parameters
    a, b, c = g.output.inputs[1:]
    assert prim_of(b) is P.add and b.name == "a"  # the first name wins
    assert prim_of(c) is P.tuple_getitem and c.inputs[1:] == [t, c.inputs[2]]
    assert c.name == "c" and c.inputs[2].value == 0
    ops = []
    node = a
    while prim_of(node) is not P.add:
        ops.append(prim_of(node) or node.inputs[0].value)
        assert node.name == "a"
        node = node.inputs[1]
    matmul = parse(np_linalg.np_matmul)  # `a @= b` is np.matmul
    assert ops[::-1] == [P.add, P.sub, P.mul, P.truediv, P.floordiv, P.mod, P.pow, matmul][1:]
    getters = calls(g, P.tuple_getitem)
    assert sorted(n.name for n in getters if n.name) == ["c", "d", "e"]


def branches(x):
    if x > 0:
        y = x * 2
    else:
        y = -x
    return y + x


def test_if_is_a_switch_and_join():
    g = parse(branches)
    x = g.parameters[0]
    cond, g_true, g_false = switch_of(g)
    assert prim_of(cond) is P.truth and prim_of(cond.inputs[1]) is P.gt
    assert (g_true.name, g_false.name) == ("branches:if_true", "branches:if_false")
    after = block(g, "branches:after_if")
    assert jump_target(g_true) is after and jump_target(g_false) is after
    # y is a phi (a parameter of the join); x is read directly (its phi was trivial)
    assert [p.name for p in after.parameters] == ["y"]
    assert len(g_true.output.inputs) == 2 and prim_of(g_true.output.inputs[1]) is P.mul
    assert after.output.inputs[1:] == [after.parameters[0], x]
    # the branches read x from the entry block: free variables, no parameters
    mng = manage(g)
    assert g_true.parameters == [] and mng.free_variables_direct(g_true) == [x]


def elif_chain(x):
    if x < 0:
        r = -1
    elif x == 0:
        r = 0
    else:
        return 1
    return r


def test_elif_and_single_predecessor_join():
    g = parse(elif_chain)
    _, g_true, g_false = switch_of(g)
    after = jump_target(g_true)
    assert after.name == "elif_chain:after_if"
    assert [p.name for p in after.parameters] == ["r"]
    assert jump_target(g_true) is after and g_true.output.inputs[1].value == -1
    # elif: the false branch holds the nested if
    _, g2_true, g2_false = switch_of(g_false)
    assert isinstance(g2_false.output, Constant) and g2_false.output.value == 1
    # the inner join has one predecessor (the else returns): no phi, it jumps on
    inner_after = jump_target(g2_true)
    assert inner_after.parameters == []
    assert jump_target(inner_after) is after and inner_after.output.inputs[1].value == 0


def both_return(x):
    if x > 0:
        return 1
    else:
        return 2
    return x * 1000  # unreachable: dropped


def test_code_after_returning_branches_is_dropped():
    g = parse(both_return)
    names = [h.name for h in graphs_of(g)]
    assert "both_return:after_if" not in names
    assert not any(prim_of(n) is P.mul for n in applies(g))


def while_loop(x, n):
    k = 0
    while k < n:
        x = x * 2
        k += 1
    return x + k


def test_while_is_a_tail_recursive_header():
    g = parse(while_loop)
    x, n = g.parameters
    header = jump_target(g)
    assert header.name == "while_loop:while_header"
    # n does not change in the loop: its phi is trivial and removed.  Phis come in the
    # order of the first reads (k in the test).
    assert [p.name for p in header.parameters] == ["k", "x"]
    assert g.output.inputs[1].value == 0 and g.output.inputs[2] is x
    cond, body, after = switch_of(header)
    assert body.name == "while_loop:while_body" and after.name == "while_loop:after_while"
    assert prim_of(cond.inputs[1]) is P.lt and cond.inputs[1].inputs[2] is n
    assert jump_target(body) is header  # the back edge, in tail position
    new_k, new_x = body.output.inputs[1:]
    assert prim_of(new_x) is P.mul and prim_of(new_k) is P.add
    assert prim_of(after.output) is P.add and after.output.inputs[1:] == header.parameters[::-1]


def for_range(n):
    s = 0
    for i in range(n):
        s += i
    return s


def test_for_range_counts_with_a_hidden_counter():
    g = parse(for_range)
    header = jump_target(g)
    assert header.name == "for_range:for_header"
    assert [p.name for p in header.parameters] == ["i.range", "s"]
    assert [a.value for a in g.output.inputs[1:]] == [0, 0]
    cond, body, after = switch_of(header)
    assert prim_of(cond) is P.lt and cond.inputs[1] is header.parameters[0]
    counter, s = body.output.inputs[1:]
    assert prim_of(counter) is P.add and counter.inputs[2].value == 1
    assert jump_target(body) is header


def for_range_steps(a, b, c):
    s = 0
    for i in range(a, b, -2):
        s += i
    for j in range(a, b, c):
        s += j
    return s


def test_for_range_steps():
    g = parse(for_range_steps)
    a, b, c = g.parameters
    h1 = jump_target(g)
    cond, body, after = switch_of(h1)
    assert prim_of(cond) is P.gt  # negative constant step counts down
    h2 = jump_target(after)
    assert [p.name for p in h2.parameters] == ["j.range", "s"]
    cond2, _, after2 = switch_of(h2)
    assert prim_of(cond2) is P.switch  # the direction depends on the sign of c
    # a step that is not constant is checked: the return depends on an assert
    out = after2.output
    assert prim_of(out) is P.tuple_getitem
    assert prim_of(out.inputs[1].inputs[1]) is P.assert_


def for_tuple(t):
    acc = 0.0
    for i, (a, b) in t:
        acc = acc + i * a - b
    return acc


def test_for_over_a_sequence_steps_a_hidden_state():
    # the state and its steps are the library's (myia.lib.builtins): a loop over a
    # tuple, a list or a dict walks its tail, one over an array counts its rows
    from myia.lib import builtins

    g = parse(for_tuple)
    start = calls(g, parse(builtins.iter_start))
    assert len(start) == 1 and start[0].inputs[1] is g.parameters[0]
    header = jump_target(g)
    assert [p.name for p in header.parameters] == ["for.iter", "acc"]
    cond, body, after = switch_of(header)
    assert prim_of(cond) is parse(builtins.iter_more)
    assert cond.inputs[1] is header.parameters[0]
    state_next, _ = body.output.inputs[1:]
    assert prim_of(state_next) is P.tuple_getitem and state_next.inputs[2].value == 1
    assert prim_of(state_next.inputs[1]) is parse(builtins.iter_next)
    names = {n.name for n in calls(body, P.tuple_getitem)}
    assert {"i", "a", "b"} <= names


def breaks(n):
    found = -1
    for i in range(n):
        if i * i > 10:
            found = i
            break
        if i == 2:
            continue
        found = found - 1
    return found


def test_break_and_continue():
    g = parse(breaks)
    header = jump_target(g)
    _, body, exit_block = switch_of(header)
    assert exit_block.name == "breaks:for_exit"
    after = block(g, "breaks:after_for")
    assert jump_target(exit_block) is after
    assert [p.name for p in after.parameters] == ["found"]
    jumpers = [h for h in graphs_of(g) if jump_target(h) is after]
    assert len(jumpers) == 2  # the exit branch and the break
    back = [h for h in graphs_of(g) if jump_target(h) is header and h is not g]
    assert len(back) == 2  # the end of the body and the continue


def while_true(x):
    while True:
        z = x * 2
        x = x + 1
        if z > 10:
            break
    return z


def test_while_true_has_no_test():
    g = parse(while_true)
    header = jump_target(g)
    assert header.name == "while_true:while_header"
    assert not calls(header, P.truth) or not any(
        isinstance(i, Constant) and i.value is True for n in calls(header, P.truth)
        for i in n.inputs)
    # the header is the body: its output is the `if` of the body
    _, g_true, _ = switch_of(header)
    after = block(g, "while_true:after_while")
    assert jump_target(g_true) is after
    # z is only assigned in the loop, but the loop only ends at the break, where z is
    # defined: the after block has that one predecessor and reads z directly
    assert after.parameters == [] and prim_of(after.output) is P.mul


def return_in_loop(x):
    for i in range(10):
        x = x * 2
        if x > 100:
            return x
    return -x


def test_return_inside_loop():
    g = parse(return_in_loop)
    ret = block(g, "return_in_loop:if_true")
    body = block(g, "return_in_loop:for_body")
    # the return is the output of its block (a free variable here), not a jump
    assert prim_of(ret.output) is P.mul and ret.output.graph is body
    assert jump_target(ret) is None
    after = block(g, "return_in_loop:after_for")
    assert prim_of(after.output) is P.neg


def asserts(x):
    assert x > 0, "positive"
    return x * 2


def test_assert_is_sequenced_before_the_return():
    g = parse(asserts)
    out = g.output
    assert prim_of(out) is P.tuple_getitem and out.inputs[2].value == 1
    pair = out.inputs[1]
    assert prim_of(pair) is P.make_tuple
    check, value = pair.inputs[1:]
    assert prim_of(check) is P.assert_ and check.inputs[2].value == "positive"
    assert prim_of(check.inputs[1]) is P.truth
    assert prim_of(value) is P.mul


def assert_in_loop(n):
    s = 0
    for i in range(n):
        assert i < 5
        s += i
    return s


def test_assert_in_a_loop_is_carried_by_a_phi():
    g = parse(assert_in_loop)
    header = jump_target(g)
    assert EFFECTS in [p.name for p in header.parameters]
    after = block(g, "assert_in_loop:after_for")
    assert prim_of(after.output) is P.tuple_getitem


def no_effects(x):
    if x > 0:
        return 1
    return 2


def test_returns_without_asserts_are_plain():
    g = parse(no_effects)
    for h in graphs_of(g):
        assert EFFECTS not in [p.name for p in h.parameters]
        assert prim_of(h.output) is not P.tuple_getitem


def docstring_and_pass(x):
    """A docstring."""
    pass
    square(x)  # evaluated and dropped
    return x


def test_docstring_pass_and_expression_statements():
    g = parse(docstring_and_pass)
    assert g.output is g.parameters[0]


def no_return(x):
    y = x


def test_implicit_return_none():
    g = parse(no_return)
    assert isinstance(g.output, Constant) and g.output.value is None


# ---------------------------------------------------------------- nested functions


def nested(x, y):
    def inner(z):
        return z * x

    return inner(y)


def test_nested_def_has_free_variables():
    g = parse(nested)
    x, y = g.parameters
    (inner,) = [h for h in graphs_of(g) if h.name == "inner"]
    mng = manage(g)
    assert mng.free_variables_direct(inner) == [x]
    assert mng.parent(inner) is g
    assert g.output.inputs[0].value is inner and g.output.inputs[1] is y


def nested_recursive(n):
    def go(k, acc):
        if k == 0:
            return acc
        return go(k - 1, acc + k)

    return go(n, 0)


def test_nested_recursion():
    g = parse(nested_recursive)
    go = block(g, "go")
    uses = [n for n in applies(g) if isinstance(n.inputs[0], Constant) and n.inputs[0].value is go]
    assert len(uses) == 2


def nested_mutual(n):
    def even(k):
        if k == 0:
            return True
        return odd(k - 1)

    def odd(k):
        if k == 0:
            return False
        return even(k - 1)

    return even(n)


def test_nested_mutual_recursion():
    g = parse(nested_mutual)
    even = block(g, "even")
    odd = block(g, "odd")
    assert odd in graphs_of(even) and even in graphs_of(odd)


def lambdas(x):
    f = lambda y, k=2: y * k  # noqa: E731
    return f(x) + f(x, k=3)


def test_lambda_with_defaults_and_keywords():
    g = parse(lambdas)
    lam = block(g, "<lambda>")
    assert lam.defaults == {"k": 2}
    args = sorted(tuple(a.value for a in n.inputs[2:]) for n in applies(g)
                  if n.inputs[0].value is lam)
    assert args == [(2,), (3,)]


pair_of_lambdas = (lambda x: x + 1, lambda y: y * 2)  # two lambdas on one line


def test_lambdas_sharing_a_line():
    g0 = parse(pair_of_lambdas[0])
    g1 = parse(pair_of_lambdas[1])
    assert g0.name == "<lambda>" and prim_of(g0.output) is P.add
    assert prim_of(g1.output) is P.mul
    assert g1.loc.col > g0.loc.col


def closure_in_loop(x, n):
    acc = x
    for i in range(n):
        def step(y):
            return y + i * x

        acc = step(acc)
    return acc


def test_closure_captures_the_value_at_the_def():
    g = parse(closure_in_loop)
    step = block(g, "step")
    body = block(g, "closure_in_loop:for_body")
    header = jump_target(g)
    mng = manage(g)
    fvs = mng.free_variables_direct(step)
    assert header.parameters[0] in fvs and g.parameters[0] in fvs
    assert mng.parent(step) is header
    assert body in mng.graph_users(step)


# ---------------------------------------------------------------- locations, printing


PROGRAMS = [simple, factorial, uses_globals, keywords, methods, operators, chained, and_or,
            ifexp, indexing, assignments, branches, elif_chain, while_loop, for_range,
            for_range_steps, for_tuple, breaks, while_true, return_in_loop, asserts,
            assert_in_loop, nested, nested_recursive, nested_mutual, lambdas,
            closure_in_loop]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_every_node_has_a_location_in_its_function(fn):
    g = parse(fn)
    first, last = line_range(fn)
    mine = [h for h in graphs_of(g)
            if h.loc is not None and h.loc.filename == __file__ and first <= h.loc.line <= last]
    assert g in mine and len(mine) >= 1
    mng = manage(g)
    for h in mine:
        assert h.loc.filename == __file__
        for p in h.parameters:
            assert p.loc is not None and first <= p.loc.line <= last
        for node in mng.nodes(h):
            assert isinstance(node, Apply)
            assert node.loc is not None, node
            assert node.loc.filename == __file__
            assert first <= node.loc.line <= last, (node, node.loc)
            for i in node.inputs:
                if isinstance(i, Constant) and not isinstance(i.value, Graph):
                    assert i.loc is not None and first <= i.loc.line <= last


def test_locations_point_at_the_expression():
    g = parse(simple)
    mul = g.output.inputs[1]
    line = line_range(simple)[0] + 1
    assert (mul.loc.line, mul.loc.col, mul.loc.end_col) == (line, 8, 13)  # `x * y`
    assert mul.loc.source_line.strip() == "z = x * y + 1.0"


def test_printed_ir_shows_blocks_and_source_lines():
    text = str(parse(while_loop))
    first = line_range(while_loop)[0]
    assert text.startswith("graph @while_loop(%x, %n) {")
    assert f"tests/parser/test_structure.py:{first}" in text
    assert "graph @while_loop:while_header(" in text
    assert "switch(" in text and "@while_loop:while_body" in text
    assert f"# {first + 3}: x = x * 2" in text
    assert "[free: " in text


# ---------------------------------------------------------------- source text (the kernel)

CELL = '''\
def even(n):
    return True if n == 0 else odd(n - 1)

def odd(n):
    return False if n == 0 else even(n - 1)

def scale(x, k=FACTOR):
    return np.sin(x) * k + previous(x)

y = 3  # not a def: ignored
'''


def test_parse_source_sees_the_other_defs_and_the_globals():
    prev = parse(square)
    graphs = parse_source(CELL, "<cell-1>", {"np": np, "FACTOR": 2.5, "previous": prev})
    assert set(graphs) == {"even", "odd", "scale"}
    assert graphs["odd"] in graphs_of(graphs["even"])
    assert graphs["scale"].defaults == {"k": 2.5}
    assert prev in graphs_of(graphs["scale"])
    assert graphs["even"].loc.filename == "<cell-1>" and graphs["even"].loc.line == 1


def test_parse_source_errors_show_the_cell_line():
    from myia.errors import MyiaSyntaxError

    with pytest.raises(MyiaSyntaxError) as info:
        parse_source("def f(x):\n    return {x}\n", "<cell-2>", {})
    text = str(info.value)
    assert 'File "<cell-2>", line 2, column 12' in text
    assert "    return {x}\n           ^^^" in text
