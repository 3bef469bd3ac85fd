"""Lists, dicts and comprehensions: programs on each backend ("vm", "llvm") against
plain Python, gradients against autograd, and what crosses the boundary.

A list or a dict has a static structure (its length, its keys); its elements are any
values.  Inside a program they are tuples (see myia.abstract, "Containers"); a
list or a dict argument is taken as one, and a program that returns one gives one
back.  The parser's side (literals, comprehensions, refused mutations) is in
tests/parser/test_containers.py.
"""

import types

import numpy as np
import pytest

import myia
from myia.errors import MyiaTypeError, MyiaValueError

from .compare import assert_same

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")

pytestmark = pytest.mark.usefixtures("backend")

_rng = np.random.default_rng(18)


def rand(*shape):
    return _rng.standard_normal(shape)


LAYERS = [2.0, 3.0]
CONFIG = {"scale": 0.5, "sizes": (2, 3)}


# ---- programs: values --------------------------------------------------------------------


def literals_and_indexing(x):
    xs = [x, 2.0 * x, (x, 1.0), [x]]
    return xs[1] + xs[2][0] + xs[-1][0], xs[1:3], xs[::-1][0], len(xs)


def concatenation_and_repetition(x):
    xs = [x] * 3 + [1.0] + list((2.0, x))
    return xs, xs * 2, 2 * [x], [*xs[:2], x, *(1.0, 2.0)]


def conversions(x, X):
    return list((x, 1.0)), tuple([x, 2.0]), list(X), list({"a": x, "b": 1.0}), list(range(3))


def comprehensions(x, X):
    return ([x * i for i in range(4)],
            [x * i for i in range(6) if i % 2 == 0 if i > 0],
            [row * 2.0 for row in X],
            [a * b for a, b in zip([x, 2.0], (3.0, x))],
            [[i * j * x for j in range(2)] for i in range(3)],
            [(i, v) for i, v in enumerate([x, x * x], 1)],
            tuple(x * k for k in (1.0, 2.0)))


def builtins_over_sequences(x, X):
    xs = [x, 3.0, -1.0, 2.0 * x]
    return (sum(xs), sum(xs, 10.0), sum(X), sum(x * k for k in range(3)), max(xs), min(xs),
            max(x, 2.0), min(3, x), len(X), len(range(2, 9, 3)), list(reversed(xs)),
            any([x > 5.0, False]), all([x > 0.0, True]), 3.0 in xs, x not in xs)


def loops(x, X):
    s = 0.0
    for v in [x, 2.0, 3]:
        s = s + v
    for row in X:
        s = s + np.sum(row * row)
    for i, row in enumerate(X):
        s = s + i * row[0]
    for a, row, b in zip((1.0, 2.0), X, [x, x]):
        s = s + a * row[1] * b
    for v in reversed(X):
        s = s + v[0]
    for v in reversed([x, 1.0]):
        s = s * 0.5 + v
    for f in [np.sin, np.cos]:  # functions are values too
        s = s + f(x)
    return s


def building_a_list_in_a_loop(x, X):
    out = []
    for row in X:
        out = out + [np.sum(row) * x]
    acc = []
    for i in range(3):
        acc += [x ** i]
    return out, acc


def dicts(x, X):
    d = {"w": x, "b": 2.0, 3: X}
    s = d["w"] * d["b"] + np.sum(d[3])
    for k in d:
        s = s + (1.0 if k == 3 else 0.0)
    for k, v in {"a": x, "b": 1.0}.items():
        s = s + v * len(k)
    e = {**d, "b": x, "c": 4.0}
    return (s, list(d.keys()), list(d.values()), e, len(e), "w" in d, "z" in d,
            e.get("c"), e.get("z", -1.0), dict(a=x, b=1.0), dict(zip(("p", "q"), [x, 2.0])),
            dict({"a": x}, z=1.0))


def dict_comprehensions(x, X):
    params = {"w": X, "b": x}
    scaled = {k: v * 2.0 for k, v in params.items()}
    squares = {i: x ** i for i in range(3) if i != 1}
    return scaled, squares, {name: len(name) for name in ["ab", "c"]}


def globals_and_nesting(x):
    model = {"layers": [(x, 1.0), (2.0 * x, 3.0)], "n": 2, "scale": CONFIG["scale"]}
    return model, [LAYERS[0] * x, len(LAYERS)], CONFIG["sizes"][1]


def unpacking(x):
    a, b = [x, 2.0]
    (c, d), e = [(x, 1.0), 3.0]
    for (f, g), h in [((x, 2.0), 1.0)]:
        e = e + f * g * h
    return a * b + c * d + e


def comprehension_scope(x):
    i = x
    ys = [i * 2 for i in range(3)]
    return i, ys


PROGRAMS = [
    (literals_and_indexing, (1.5,)),
    (concatenation_and_repetition, (1.5,)),
    (conversions, (1.5, rand(2, 3))),
    (comprehensions, (1.5, rand(3, 2))),
    (builtins_over_sequences, (1.5, rand(3, 2))),
    (loops, (0.7, rand(3, 2))),
    (building_a_list_in_a_loop, (1.5, rand(4, 2))),
    (dicts, (1.5, rand(2, 2))),
    (dict_comprehensions, (1.5, rand(2, 2))),
    (globals_and_nesting, (1.5,)),
    (unpacking, (1.5,)),
    (comprehension_scope, (1.5,)),
]


@pytest.mark.parametrize("fn, args", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_values_are_pythons(fn, args):
    assert_same(myia.compile(fn)(*args), fn(*args))


# ---- the boundary ----------------------------------------------------------------------------


def scale_all(params, k):
    return {name: [w * k for w in ws] for name, ws in params.items()}


def first_and_length(xs):
    return xs[0], len(xs)


def test_lists_and_dicts_cross_the_boundary():
    f = myia.compile(scale_all)
    params = {"a": [1.0, np.ones(2)], "b": [3.0]}
    want = scale_all(params, 2.0)
    assert_same(f(params, 2.0), want)
    assert_same(f(params, 2.0), want)  # the compiled signature's own entry
    # the keys and their order are part of the signature: another order is another
    # program, whose result is in its order
    other = {"b": [3.0], "a": [1.0, np.ones(2)]}
    assert list(f(other, 2.0)) == ["b", "a"]
    assert_same(f(params, 3.0), scale_all(params, 3.0))


def test_a_list_argument_of_another_length_is_another_signature():
    f = myia.compile(first_and_length)
    assert f([1.0, 2.0]) == (1.0, 2)
    assert f([3.0, 2.0, 1.0]) == (3.0, 3)
    assert f((5.0,)) == (5.0, 1)  # a tuple is not a list: its own signature
    assert f([np.ones(2)])[1] == 1


def test_a_dict_argument_needs_constant_keys():
    with pytest.raises(MyiaTypeError, match="dict key of type float"):
        myia.compile(first_and_length)({1.5: 2.0})


# ---- gradients ---------------------------------------------------------------------------------


def with_autograd(fn):
    """`fn` with `np` bound to autograd.numpy (a copy: the same code, other globals)."""
    return types.FunctionType(fn.__code__, {**fn.__globals__, "np": anp}, fn.__name__,
                              fn.__defaults__, fn.__closure__)


def mlp_list(layers, X):
    h = X
    for W, b in layers:
        h = np.tanh(h @ W + b)
    return np.sum(h * h)


def mlp_dict(params, X):
    h = np.tanh(X @ params["W1"] + params["b1"])
    return np.sum((h @ params["W2"]) ** 2) * params["scale"]


def nested_params(p, X):
    s = 0.0
    for name, layer in p["layers"].items():
        s = s + np.sum(np.sin(X @ layer[0]) * layer[1]) * (len(name) + 1.0)
    return s + np.sum([w ** 2 for w in p["extra"]][0])


def comprehension_of_rows(w, X):
    return sum([np.dot(w, row) ** 2 for row in X]) + sum(np.sum(r) * w[0] for r in X)


def rows_and_zip(w, X, y):
    s = 0.0
    for xi, yi in zip(X, y):
        s = s + (np.dot(w, xi) - yi) ** 2
    for i, xi in enumerate(X):
        s = s + i * np.sum(np.tanh(xi * w))
    return s


def concatenated(ws, x):
    allw = ws + [2.0 * ws[0]] * 2
    return np.sum(allw[0] * allw[2] * x) + np.sum(allw[-1] * allw[1])


def built_in_a_loop(w, X):
    outs = []
    for row in X:
        outs = outs + [np.tanh(np.dot(w, row))]
    return sum(outs) + outs[0] * outs[-1]


def dict_of_list(p, x):
    return sum([np.sum(v * x) for v in p["ws"]]) * p["c"]


GRADIENTS = [
    (mlp_list, ([(rand(3, 4), rand(4)), (rand(4, 2), rand(2))], rand(5, 3)), 0),
    (mlp_dict, ({"W1": rand(3, 4), "b1": rand(4), "W2": rand(4, 2), "scale": 0.5},
                rand(5, 3)), 0),
    (nested_params, ({"layers": {"a": (rand(3, 2), rand(2)), "bc": (rand(3, 2), 2.0)},
                      "extra": [rand(2), rand(3)]}, rand(4, 3)), 0),
    (comprehension_of_rows, (rand(3), rand(4, 3)), 0),
    (rows_and_zip, (rand(3), rand(20, 3), rand(20)), 0),
    (concatenated, ([rand(2), rand(2)], rand(2)), (0, 1)),
    (built_in_a_loop, (rand(3), rand(4, 3)), 0),
    (dict_of_list, ({"ws": [rand(2), rand(2)], "c": 1.5}, rand(2)), (0, 1)),
]


@pytest.mark.parametrize("fn, args, argnums", GRADIENTS, ids=[f.__name__ for f, _, _ in GRADIENTS])
def test_gradients_have_the_arguments_structure(fn, args, argnums):
    ours = myia.grad(fn, argnums)(*args)
    theirs = autograd.grad(with_autograd(fn), argnums)(*args)
    if isinstance(argnums, tuple):
        theirs = tuple(theirs)
    assert_same(ours, theirs, rtol=1e-7, atol=1e-10)


def test_value_and_grad_of_a_dict():
    params, X = GRADIENTS[1][1]
    value, grads = myia.value_and_grad(mlp_dict)(params, X)
    assert_same(value, mlp_dict(params, X))
    assert_same(grads, autograd.grad(with_autograd(mlp_dict))(params, X), rtol=1e-7)


def loss_of_list(ws):
    return ws[0] * ws[1] + np.sin(ws[2])


def grad_inside(ws):
    g = myia.grad(loss_of_list)(ws)
    return g, g[0] * 2.0


def test_grad_inside_a_program_returns_a_list():
    ws = [1.0, 2.0, 0.5]
    assert_same(myia.compile(grad_inside)(ws), ([2.0, 1.0, np.cos(0.5)], 4.0))


def through_a_list(x):
    return loss_of_list([x, x * x, x])


def test_second_order_through_a_list():
    def f(x):
        return myia.grad(loss_of_list)([x, x * x, x])[1]

    assert_same(myia.grad(f)(0.7), 1.0)  # d/dx of ws[0]
    want = autograd.grad(autograd.grad(with_autograd(through_a_list)))(0.7)
    assert_same(myia.grad(myia.grad(through_a_list))(0.7), want)


def test_vjp_and_jvp_of_lists():
    ws = [1.0, 2.0, 0.5]
    out, vjp_fn = myia.vjp(loss_of_list, ws)
    assert_same(out, loss_of_list(ws))
    assert_same(vjp_fn(1.0), ([2.0, 1.0, np.cos(0.5)],))
    value, tangent = myia.jvp(loss_of_list, (ws,), ([1.0, 0.0, 1.0],))
    assert_same(tangent, 2.0 + np.cos(0.5))


# ---- errors ---------------------------------------------------------------------------------------


def missing_key(x):
    d = {"a": x}
    return d["b"]


def key_known_at_run_time(x, i):
    d = {0: x, 1: 2.0 * x}
    return d[i]


def list_plus_tuple(x):
    return [x] + (x,)


def dicts_do_not_add(x):
    return {"a": x} + {"b": x}


def keys_of_a_list(x):
    return [x].keys()


def iterate_a_number(x):
    s = 0.0
    for v in x:
        s = s + v
    return s


def length_known_at_run_time(x, n):
    acc = []
    while len(acc) < n:
        acc = acc + [x]
    return acc


def repeat_by_run_time_count(x, n):
    return [x] * n


def slice_by_run_time_bound(x, i):
    return [x, 2.0, 3.0][i:]


def index_by_run_time_value(x, i):
    return [x, 2.0, 3.0][i]  # fine: the elements have one type


def test_an_index_known_at_run_time():
    assert myia.compile(index_by_run_time_value)(1.5, 1) == 2.0
    assert myia.grad(index_by_run_time_value)(1.5, 0) == 1.0


@pytest.mark.parametrize("fn, args, error, words", [
    (missing_key, (1.0,), MyiaValueError, ["key 'b' is not in the dict", "'a'"]),
    (key_known_at_run_time, (1.0, 0), MyiaTypeError, ["key of a dict must be known at compile time"]),
    (list_plus_tuple, (1.0,), MyiaTypeError, ["can only concatenate list (not tuple) to list"]),
    (dicts_do_not_add, (1.0,), MyiaTypeError, ["`+` is not defined for dicts", "{**a, **b}"]),
    (keys_of_a_list, (1.0,), MyiaTypeError, ["`.keys()` is a method of dicts"]),
    (iterate_a_number, (1.0,), MyiaTypeError, ["cannot iterate over a number"]),
    (length_known_at_run_time, (1.0, 3), MyiaTypeError, ["known at compile time"]),
    (repeat_by_run_time_count, (1.0, 3), MyiaTypeError, ["must be known at compile time"]),
    (slice_by_run_time_bound, (1.0, 1), MyiaTypeError,
     ["bounds of a slice of a list must be known at compile time"]),
])
def test_errors_say_what_to_do(fn, args, error, words):
    with pytest.raises(error) as info:
        myia.compile(fn)(*args)
    text = str(info.value)
    for w in words:
        assert w in text, (w, text)
    assert info.value.loc is not None and info.value.loc.filename == __file__, text


def test_a_list_too_long_to_unroll(monkeypatch):
    from myia.infer import infer

    monkeypatch.setattr(infer, "MAX_UNROLL", 20)

    def long_list(x):
        return [x * i for i in range(40)]

    with pytest.raises(MyiaTypeError, match="at most 20 elements"):
        myia.compile(long_list)(1.0)
