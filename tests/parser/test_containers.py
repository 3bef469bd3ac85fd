"""Lists, dicts and comprehensions as the parser writes them, and the mutations it
refuses (with what to write instead).

What the programs compute, on every backend, is in tests/test_containers.py.
"""

import numpy as np
import pytest

import myia
from myia.errors import MyiaSyntaxError, MyiaTypeError
from myia.ir import Apply, Graph
from myia.lib import builtins
from myia.parser import parse
from myia.parser.parse import _cache
from myia.prim import ops as P

from .helpers import calls, check_error, graphs_of, jump_target, prim_of


def refused(fn, error=MyiaSyntaxError):
    with pytest.raises(error) as info:
        parse(fn)
    assert fn not in _cache
    return info.value


def output_of(fn):
    """The node `fn` returns (its graph's output, past the asserts' sequencing)."""
    return parse(fn).output


# ---- literals ---------------------------------------------------------------------------


def list_literal(x):
    return [x, 1.0]


def test_a_list_is_a_tuple_with_the_kind_list():
    out = output_of(list_literal)
    assert prim_of(out) is P.tuple_as and out.inputs[2].value == "list"
    t = out.inputs[1]
    assert prim_of(t) is P.make_tuple and t.inputs[1] is parse(list_literal).parameters[0]


def dict_literal(x, y):
    return {"w": x, "b": y, "w": 2.0}  # noqa: F601  (Python keeps the first place, the last value)


def test_a_dict_is_a_tuple_of_its_values_and_its_keys_are_its_kind():
    out = output_of(dict_literal)
    assert prim_of(out) is P.tuple_as
    assert out.inputs[2].value == ("dict", ("w", "b"))
    values = out.inputs[1].inputs[1:]
    assert values[0].value == 2.0 and values[1] is parse(dict_literal).parameters[1]
    assert myia.compile(dict_literal, backend="vm")(1.0, 3.0) == {"w": 2.0, "b": 3.0}


def computed_keys(x):
    k = "a" + "b"
    return {k: x, **{"c": x}}


def test_computed_keys_are_checked_by_inference():
    out = output_of(computed_keys)
    assert prim_of(out) is parse(builtins.dict_merge)  # {**a, **b}
    first = out.inputs[1]
    kind = first.inputs[2]
    assert prim_of(first) is P.tuple_as and prim_of(kind) is P.make_tuple
    assert myia.compile(computed_keys, backend="vm")(1.5) == {"ab": 1.5, "c": 1.5}


def starred(x, rest):
    return [x, *rest, x]


def test_a_starred_element_concatenates():
    assert prim_of(output_of(starred)) is parse(builtins.list_concat)
    assert myia.compile(starred, backend="vm")(1.0, (2.0, 3.0)) == [1.0, 2.0, 3.0, 1.0]


def starred_tuple(x, rest, shape):
    return (x, *rest, x), (*shape, 1)


def test_a_starred_element_of_a_tuple_concatenates():
    assert prim_of(output_of(starred_tuple).inputs[1]) is parse(builtins.tuple_concat)
    f = myia.compile(starred_tuple, backend="vm")
    assert f(1.0, [2.0, 3.0], (4, 5)) == ((1.0, 2.0, 3.0, 1.0), (4, 5, 1))
    # as a shape: weights.reshape((*weights.shape, 1))
    g = myia.compile(lambda w: np.sum(w.reshape((*w.shape, 1)) * np.ones(3), 1))
    np.testing.assert_array_equal(g(np.arange(6.0).reshape(2, 3)),
                                  np.arange(6.0).reshape(2, 3) @ np.ones((3, 3)))


# ---- comprehensions ---------------------------------------------------------------------


def comprehension(xs, y):
    return [x * y for x in xs if x > 0]


def test_a_comprehension_is_a_nested_function_called_in_place():
    g = parse(comprehension)
    call = g.output
    assert isinstance(call, Apply) and len(call.inputs) == 1
    comp = call.inputs[0].value
    assert isinstance(comp, Graph) and comp.name == "<listcomp>" and not comp.parameters
    # acc = (), a loop consing the elements, then (after the loop) acc reversed, a list
    ends = [h.output for h in graphs_of(comp)
            if h.loc.filename == __file__ and prim_of(h.output) is P.tuple_as]
    assert len(ends) == 1 and ends[0].inputs[2].value == "list"
    reversed_ = ends[0].inputs[1]
    assert prim_of(reversed_) is P.getitem and reversed_.inputs[2].value == slice(None, None, -1)
    assert any(prim_of(n) is P.tuple_cons for g2 in graphs_of(comp)
               for n in calls(g2, P.tuple_cons))
    # the loop walks the sequence as a tuple (an array or a range: its elements)
    assert calls(comp, parse(builtins.py_tuple))


def comprehension_scope(x):
    i = x
    ys = [i for i in range(3)]
    return i, ys


def test_the_variables_of_a_comprehension_are_its_own():
    comp = next(g for g in graphs_of(parse(comprehension_scope)) if g.name == "<listcomp>")
    assert not comp.parameters  # `i` is read in its own loop, not the function's
    assert myia.compile(comprehension_scope, backend="vm")(7.0) == (7.0, [0, 1, 2])


def generator_and_dict(xs):
    return sum(x * x for x in xs), {str_key: 1.0 for str_key in ("a", "b")}


def test_generator_expressions_and_dict_comprehensions():
    names = {g.name for g in graphs_of(parse(generator_and_dict))}
    assert {"<genexpr>", "<dictcomp>"} <= names
    got = myia.compile(generator_and_dict, backend="vm")((1.0, 2.0))
    assert got == (5.0, {"a": 1.0, "b": 1.0})


def zipped(xs, ys):
    s = 0.0
    for i, (x, y) in enumerate(zip(xs, ys)):
        s = s + i * x * y
    return s


def test_zip_walks_its_sequences_side_by_side():
    header = jump_target(parse(zipped))
    # one state per sequence of zip (enumerate counts with the first one's index)
    assert {"for.iter", "for.iter2"} <= {p.name for p in header.parameters}
    assert myia.compile(zipped, backend="vm")([1.0, 2.0, 3.0], (4.0, 5.0)) == 10.0


def membership(x, d):
    return x in d, "k" not in d


def test_in_asks_the_library():
    out = output_of(membership)
    first, second = out.inputs[1:]
    assert prim_of(first) is parse(builtins.py_contains)
    assert prim_of(second) is P.not_
    assert myia.compile(membership, backend="vm")(1.0, [1.0, 2.0]) == (True, True)


def methods(d):
    return d.keys(), d.values(), d.items(), d.get("a", 0.0)


def test_the_methods_of_dicts():
    out = output_of(methods)
    assert [prim_of(n) for n in out.inputs[1:]] == [
        parse(builtins.dict_keys), parse(builtins.dict_values), parse(builtins.dict_items),
        parse(builtins.dict_get)]


def rebinding(x):
    xs = [x]
    ys = xs
    xs += [2.0]
    return xs, ys


def test_augmented_assignment_of_a_list_rebinds_it():
    # `xs += [v]` is `xs = xs + [v]`: a new list; another name bound to the old one
    # keeps it (lists are values: in Python, ys would see the change)
    assert myia.compile(rebinding, backend="vm")(1.0) == ([1.0, 2.0], [1.0])


SIZES = [2, 3]
NAMES = {"a": 1.0, "b": (2.0, 3.0)}


def uses_globals(x):
    return [x * s for s in SIZES], NAMES["b"][1] * x, len(NAMES)


def test_global_lists_and_dicts_are_constants():
    assert myia.compile(uses_globals, backend="vm")(2.0) == ([4.0, 6.0], 6.0, 2)


# ---- mutations are refused -----------------------------------------------------------------


def append(xs, x):
    xs.append(x)
    return xs


def extend(xs, ys):
    xs.extend(ys)
    return xs


def pop(xs):
    return xs.pop()


def update(d, e):
    d.update(e)
    return d


def sort(xs):
    xs.sort()
    return xs


@pytest.mark.parametrize("fn, snippet, hint", [
    (pop, "xs.pop()", "`xs = xs[:-1]`"),
    (update, "d.update(e)", "`d = {**d, **other}`"),
    (sort, "xs.sort()", "np.sort"),
])
def test_methods_that_mutate(fn, snippet, hint):
    err = refused(fn)
    check_error(err, fn, snippet, "arrays, lists and dicts are values in Myia", f"`{snippet}`",
                "in place", hint)


@pytest.mark.parametrize("fn, snippet", [(append, "xs.append(x)"), (extend, "xs.extend(ys)")])
def test_appending_to_an_argument(fn, snippet):
    # (on a list the function made, x.append(v) is x = x + [v]: tests/numpy/
    # test_index_assignment.py)
    err = refused(fn)
    check_error(err, fn, snippet, f"cannot change `xs` with `{snippet}`",
                "holds the argument `xs`", "Python would change the caller's value in place",
                "`xs = list(xs)`")


def set_item(xs, x):
    xs[0] = x
    return xs


def set_key(d, x):
    d["k"] = x
    return d


def add_to_item(xs, x):
    xs[1] += x
    return xs


@pytest.mark.parametrize("fn, snippet, name", [
    (set_item, "xs[0] = x", "xs"), (set_key, 'd["k"] = x', "d"),
    (add_to_item, "xs[1] += x", "xs"),
])
def test_assignment_to_an_element_of_an_argument(fn, snippet, name):
    # Python would change the caller's list or dict (tests/numpy/test_index_assignment.py
    # has the assignments that are compiled)
    err = refused(fn)
    check_error(err, fn, snippet, f"`{name}` holds the argument `{name}`",
                "Python would change the caller's", f"{name} = np.copy({name})",
                f"list({name})", f"dict({name})", at=snippet.split(" ")[0])


def delete_item(xs):
    del xs[0]
    return xs


def delete_key(d):
    del d["k"]
    return d


@pytest.mark.parametrize("fn, snippet", [(delete_item, "xs[0]"), (delete_key, 'd["k"]')])
def test_deleting_an_element(fn, snippet):
    err = refused(fn)
    check_error(err, fn, f"del {snippet}", "deleting an element", "lst[:i] + lst[i + 1:]",
                "if k2 != k", at=snippet)


def unpack_an_array(x):
    a, b = x
    return a + b


def test_an_array_is_not_unpacked():
    with pytest.raises(MyiaTypeError, match="cannot be unpacked like a tuple") as info:
        myia.compile(unpack_an_array, backend="vm")(np.ones((2, 3)))
    assert "x[0], x[1]" in str(info.value) and info.value.loc is not None


def unknown_method(xs):
    return xs.index(1.0)


def test_unknown_methods_list_the_methods_of_dicts():
    err = refused(unknown_method)
    check_error(err, unknown_method, "xs.index", "`.index`", ".keys()", ".items()")
