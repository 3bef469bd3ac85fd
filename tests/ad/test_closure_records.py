"""`grad` inside subset code of a closure made in a frame it cannot see: a closure
returned by a function, made by a recursion, carried through a loop.  J needs what the
closure captured; specialization makes each value of such a closure a record of those
values (`make_closure`) and J reads them back (`closure_bound`), see
myia.infer.specialize.  Each program is checked on both backends against its derivative
worked out by hand, and its second derivative against finite differences too.
"""

import math

import numpy as np
import pytest

import myia
from myia import grad
from myia.pipeline import Pipeline
from myia.prim import ops as P

from ..helpers import assert_tree_close, numerical_grad

# ---- programs ---------------------------------------------------------------------


def make_cubic(a, b):
    def cubic(y):
        return a * y * y * y + b * y

    return cubic


def grad_of_made_cubic(x):
    return grad(make_cubic(x, x * x))(1.5)  # 3 a y^2 + b = 6.75 x + x^2


def make_scaled_by_recursion(a, n):
    # a recursion: the optimizer cannot inline it into the caller
    if n == 0:
        def scaled(y):
            return a * math.sin(y)

        return scaled
    return make_scaled_by_recursion(a * 2.0, n - 1)


def grad_of_recursion_made(x, n):
    return grad(make_scaled_by_recursion(x, n))(0.5)  # x 2^n cos(0.5)


def grad_of_loop_carried(x, n):
    f = make_cubic(x, 1.0)
    i = 0
    while i < n:  # the closure is loop state: a record through the loop's calls
        f = make_cubic(x * f(1.0), 1.0)
        i = i + 1
    return grad(f)(2.0)


def make_layer(w, shift):
    bias, scale = shift

    def layer(v):
        return np.sum(np.tanh(w * v + bias)) * scale

    return layer


def grad_of_made_layer(w, v):
    return grad(make_layer(w, (0.25, 2.0)))(v)  # an array gradient


def loss_of_made_layer(w, v):
    return np.sum(grad_of_made_layer(w, v) * v)


def make_composed(a):
    def composed(y):
        return math.exp(a * y)  # captures only data; calls a primitive

    return composed


def make_around(f, a):
    def around(y):
        return f(a * y)

    return around


def grad_of_captured_primitive(x):
    return grad(make_around(math.sin, x))(0.5)  # x cos(0.5 x)


def grad_of_captured_closure(x):
    return grad(make_around(make_composed(x), 2.0))(0.5)  # 2 x exp(x)


def grad_of_closure_over_made_closure(x):
    inner = make_cubic(x, 1.0)  # made elsewhere: J reads its record
    first = grad(inner)(1.0)  # 3 x + 1

    def outer(y):  # written here, captures that closure
        return inner(y) * y  # x y^4 + y^2

    return first + grad(outer)(2.0)  # + 32 x + 4


# ---- first and second derivatives --------------------------------------------------


def loop_carried_reference(x, n):
    a = x
    for _ in range(n):
        a = x * (a + 1.0)  # f(1.0) of the cubic a y^3 + y
    return 12.0 * a + 1.0  # f'(2.0)


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("fn, args, first, second", [
    (grad_of_made_cubic, (0.7,), lambda x: 6.75 * x + x * x, lambda x: 6.75 + 2 * x),
    (grad_of_recursion_made, (0.7, 3), lambda x, n: x * 2 ** n * math.cos(0.5),
     lambda x, n: 2 ** n * math.cos(0.5)),
    (grad_of_loop_carried, (0.3, 3), loop_carried_reference, None),
    (grad_of_captured_primitive, (0.9,), lambda x: x * math.cos(0.5 * x),
     lambda x: math.cos(0.5 * x) - 0.5 * x * math.sin(0.5 * x)),
    (grad_of_closure_over_made_closure, (0.5,), lambda x: 35 * x + 5, lambda x: 35.0),
], ids=lambda v: getattr(v, "__name__", ""))
def test_grad_of_closure_made_elsewhere(fn, args, first, second):
    assert myia.compile(fn)(*args) == pytest.approx(first(*args), rel=1e-12)
    d2 = myia.grad(fn)(*args)
    assert d2 == pytest.approx(numerical_grad(first, args, 0, 1e-6), rel=1e-6)
    if second is not None:
        assert d2 == pytest.approx(second(*args), rel=1e-12)


def made_layer_reference(w, v):
    t = np.tanh(w * v + 0.25)
    return 2.0 * np.sum((1 - t * t) * w, axis=0)


@pytest.mark.usefixtures("backend")
def test_grad_of_closure_capturing_an_array_and_a_tuple():
    rng = np.random.default_rng(0)
    w, v = rng.normal(size=(3, 4)), rng.normal(size=4)
    assert_tree_close(myia.compile(grad_of_made_layer)(w, v), made_layer_reference(w, v),
                      rtol=1e-12)
    dw = myia.grad(loss_of_made_layer)(w, v)
    want = numerical_grad(lambda w: np.sum(made_layer_reference(w, v) * v), (w,), 0, 1e-6)
    assert_tree_close(dw, want, rtol=1e-6, atol=1e-8)


def test_the_program_reads_the_record():
    # the typed program makes the closure as a record and J reads its values back
    typed = Pipeline().specialize(grad_of_recursion_made, (0.7, 3))
    from myia.ir import manage

    mng = manage(typed)
    prims = {n.inputs[0].value for g in mng.graphs for n in mng.nodes(g)
             if n.is_apply() and n.inputs[0].is_constant(P.Primitive)}
    assert {P.make_closure, P.closure_bound} <= prims
    assert P.J not in prims


@pytest.mark.usefixtures("backend")
def test_grad_of_closure_capturing_a_closure():
    # J of `around` reads `composed` from its record, and J of `composed` reads x
    x = 0.4
    assert myia.compile(grad_of_captured_closure)(x) == pytest.approx(2 * x * math.exp(x))
    assert myia.grad(grad_of_captured_closure)(x) == pytest.approx(2 * (1 + x) * math.exp(x))


def make_square_plus(a):
    def square_plus(y):
        return y * y + a

    return square_plus


def grad_of_chosen_closure(x, c):
    return grad(make_cubic(x, 1.0) if c else make_square_plus(x))(2.0)


def grad_of_one_closure_alone_and_among_two(x, c):
    inner = make_cubic(x, 1.0)
    first = grad(inner)(1.0)  # J meets `inner` alone here...
    f = inner if c else make_square_plus(x)
    return first + grad(f)(2.0)  # ...and among two closures here


def grad_among_a_local_closure_and_a_made_one(x, c):
    def local(y):
        return x * y * y

    return grad(local if c else make_cubic(x + 1.0, 0.0))(2.0)


def grad_of_closure_capturing_a_chosen_closure(x, c):
    return grad(make_around(make_cubic(x, 1.0) if c else make_square_plus(x), 2.0))(0.5)


def grad_of_local_closure_capturing_a_chosen_closure(x, c):
    f = make_cubic(x, 1.0) if c else make_square_plus(x)

    def outer(y):  # written here: J reads its frame, and the record of f
        return f(y) * y

    return grad(outer)(1.0)


def cube(y):
    return y * y * y


def grad_of_a_grad_or_a_closure(x, c):
    # grad(cube)'s record holds only a function known statically: it takes no room
    return grad(grad(cube) if c else make_square_plus(x))(1.0)


def grad_of_a_grad_or_a_primitive(x, c):
    return grad(grad(cube) if c else math.sin)(x)


def grad_of_one_of_two_grads(x, c):
    return grad(grad(cube) if c else grad(make_cubic(x, 1.0)))(1.0)


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("fn, first, second", [
    # J of a value that may be one of several closures: a branch on which one it is,
    # each closure's record read by its reader graph
    (grad_of_chosen_closure, lambda x, c: 12 * x + 1 if c else 4.0,
     lambda x, c: 12.0 if c else 0.0),
    (grad_of_one_closure_alone_and_among_two,
     lambda x, c: 3 * x + 1 + (12 * x + 1 if c else 4.0), lambda x, c: 15.0 if c else 3.0),
    (grad_among_a_local_closure_and_a_made_one, lambda x, c: 4 * x if c else 12 * (x + 1),
     lambda x, c: 4.0 if c else 12.0),
    (grad_of_closure_capturing_a_chosen_closure, lambda x, c: 6 * x + 2 if c else 4.0,
     lambda x, c: 6.0 if c else 0.0),
    (grad_of_local_closure_capturing_a_chosen_closure, lambda x, c: 4 * x + 2 if c else 3 + x,
     lambda x, c: 4.0 if c else 1.0),
    (grad_of_a_grad_or_a_closure, lambda x, c: 6.0 if c else 2.0, lambda x, c: 0.0),
    (grad_of_a_grad_or_a_primitive, lambda x, c: 6 * x if c else math.cos(x),
     lambda x, c: 6.0 if c else -math.sin(x)),
    (grad_of_one_of_two_grads, lambda x, c: 6.0 if c else 6 * x,
     lambda x, c: 0.0 if c else 6.0),
], ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("c", [True, False])
def test_grad_of_one_of_several_closures(fn, first, second, c):
    x = 0.5
    assert myia.compile(fn)(x, c) == pytest.approx(first(x, c), rel=1e-12)
    assert myia.grad(fn)(x, c) == pytest.approx(second(x, c), rel=1e-12)


def make_pair_user(fs):
    def both(y):
        return fs[0](y) + fs[1](y)

    return both


def grad_of_closure_capturing_a_tuple_of_closures(x):
    # J of `both` reads the tuple from its record, and J of each closure in it from
    # the closure's record
    return grad(make_pair_user((make_cubic(x, 1.0), make_square_plus(x))))(2.0)


def make_weighted(p):
    def weighted(y):  # data, a closure and a primitive, in nested tuples
        return p[0] * p[1][0](y) * p[1][1](y)

    return weighted


def grad_of_closure_capturing_nested_tuples(x):
    return grad(make_weighted((x, (make_composed(x), math.sin))))(0.5)


def weighted_reference(x):
    y = 0.5
    return x * math.exp(x * y) * (x * math.sin(y) + math.cos(y))


def grad_of_local_closure_capturing_a_tuple(x, c):
    fs = (make_cubic(x, 1.0) if c else make_square_plus(x), make_composed(x))

    def outer(y):  # written here: J reads the tuple from its frame, element by element
        return fs[0](y) * fs[1](y)

    return grad(outer)(1.0)


def local_tuple_reference(x, c):
    f, df = (x + 1.0, 3 * x + 1.0) if c else (1.0 + x, 2.0)  # f(1), f'(1)
    return (df + f * x) * math.exp(x)


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("fn, args, first", [
    (grad_of_closure_capturing_a_tuple_of_closures, (0.5,), lambda x: 12 * x + 5),
    (grad_of_closure_capturing_nested_tuples, (0.7,), weighted_reference),
    (grad_of_local_closure_capturing_a_tuple, (0.6, True), local_tuple_reference),
    (grad_of_local_closure_capturing_a_tuple, (0.6, False), local_tuple_reference),
], ids=lambda v: getattr(v, "__name__", repr(v)))
def test_grad_of_closure_capturing_a_tuple(fn, args, first):
    assert myia.compile(fn)(*args) == pytest.approx(first(*args), rel=1e-12)
    d2 = myia.grad(fn)(*args)
    assert d2 == pytest.approx(numerical_grad(first, args, 0, 1e-6), rel=1e-6)


def test_J_reads_a_captured_tuple_element_by_element():
    typed = Pipeline().specialize(grad_of_closure_capturing_a_tuple_of_closures, (0.5,))
    from myia.ir import manage

    mng = manage(typed)
    J_nodes = [n for g in mng.graphs for n in mng.nodes(g)
               if n.is_apply() and n.inputs[0].is_constant(P.Primitive)
               and n.inputs[0].value is P.J]
    assert J_nodes == []  # no J left for run time


def grad_of_closure_over_a_tuple(x, pair):
    return grad(lambda t: np.sum(t * pair[0]) * pair[1])(x)  # pair[0] * pair[1]


def jacobian_of_closure_over_a_made_tuple(x, a):
    pair = (a, 2.0 * a)
    return myia.jacrev(lambda t: t * pair[0] + pair[1])(x)  # diag(a)


@pytest.mark.usefixtures("backend")
def test_grad_of_a_closure_capturing_a_tuple_of_data():
    # a captured tuple of arrays and numbers is its own J, as the data in it is
    x, a = np.array([0.5, -1.0, 2.0]), np.array([1.5, 2.0, -0.5])
    np.testing.assert_allclose(myia.compile(grad_of_closure_over_a_tuple)(x, (a, 3.0)),
                               3.0 * a, rtol=1e-14)
    np.testing.assert_allclose(myia.compile(jacobian_of_closure_over_a_made_tuple)(x, a),
                               np.diag(a), rtol=1e-14)
    # and differentiated again: d/da of sum(a * a * b) with b = 3, and d/db
    def again(a, b):
        return np.sum(grad_of_closure_over_a_tuple(x, (a, b)) * a)

    da, db = myia.grad(again, (0, 1))(a, 3.0)
    np.testing.assert_allclose(da, 6.0 * a, rtol=1e-14)
    assert db == pytest.approx(np.sum(a * a), rel=1e-14)
