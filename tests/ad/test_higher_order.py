"""Derivatives of order 1 to 5 (issue 17): the gradient of a gradient differentiates the
optimized program of the inner gradient for the call's types, from Python and in subset
code.  Values against autograd and finite differences, through if/while/recursion/
closures, on "vm" and "llvm" (the `backend` fixture); the size of each order's program;
reuse of freshly built transforms; the zeros AD knows of, gone."""

import math

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import myia
from myia import grad
from myia.pipeline import Pipeline
from myia.parser.programs import header

pytestmark = pytest.mark.usefixtures("backend")


def poly(x):
    return 0.5 * x ** 6 - 2.0 * x ** 5 + 3.0 * x ** 4 - x ** 3 + 2.0 * x * x - x + 1.0


def sin_exp(x):
    return np.sin(x) * np.exp(x)


def while_loop(x):
    i = 0
    while i < 6:
        x = np.sin(x) * 1.1 + x * 0.5
        i = i + 1
    return x


def branchy(x):
    """If and while together, a value carried around the loop."""
    y = x
    if x > 0.0:
        y = np.sin(x) * x
    else:
        y = x * x
    k = 0
    s = 0.0
    while k < 3:
        if s > 1.0:
            s = s * 0.5 + y
        else:
            s = s + y * x
        k = k + 1
    return s + y


def nest(x, n):
    if n == 0:
        return x
    return np.sin(nest(x, n - 1)) * x


def nest3(x):
    return nest(x, 3)


def with_closure(x):
    def scaled(y):
        return np.tanh(y * x) + y

    return scaled(x * x) * scaled(0.5)


PROGRAMS = [(poly, 1.3), (sin_exp, 0.7), (while_loop, 0.3), (branchy, 0.8), (nest3, 0.6),
            (with_closure, 0.4)]


def autograd_version(fn):
    """`fn` with autograd.numpy in place of numpy (the helpers it calls too)."""
    import types

    g = dict(fn.__globals__, np=anp)
    for name in ("nest",):
        if name in g:
            g[name] = types.FunctionType(g[name].__code__, g, name)
    return types.FunctionType(fn.__code__, g, fn.__name__)


def nested(fn, k, transform=grad):
    for _ in range(k):
        fn = transform(fn)
    return fn


# the orders each program is checked to (the fifth of a loop or a recursion costs
# seconds: the first four are checked, the fifth in one test below)
ORDERS = {poly: 5, sin_exp: 5, while_loop: 4, branchy: 3, nest3: 4, with_closure: 4}


@pytest.mark.timeout(600)
@pytest.mark.parametrize("fn, x", PROGRAMS, ids=lambda v: getattr(v, "__name__", None))
def test_derivatives_up_to_order_k_match_autograd(fn, x):
    ag = autograd_version(fn)
    for k in range(1, ORDERS[fn] + 1):
        got = myia.compile(nested(fn, k))(x)
        want = nested(ag, k, autograd.grad)(x)
        assert got == pytest.approx(want, rel=1e-8, abs=1e-9), f"order {k}"


@pytest.mark.timeout(600)
@pytest.mark.parametrize("fn, x", PROGRAMS[:3], ids=lambda v: getattr(v, "__name__", None))
def test_the_fifth_derivative_matches_finite_differences_of_the_fourth(fn, x):
    d4 = myia.compile(nested(fn, 4))
    h = 1e-4
    fd = (d4(x + h) - d4(x - h)) / (2 * h)
    assert myia.compile(nested(fn, 5))(x) == pytest.approx(fd, rel=1e-5, abs=1e-6)


def third_in_subset(x):
    return grad(grad(grad(while_loop)))(x)


def fourth_in_subset(x):
    return grad(grad(grad(grad(poly))))(x) + grad(grad(sin_exp))(x)


@pytest.mark.timeout(300)
def test_derivatives_written_in_subset_code_take_the_same_path():
    x = 0.8
    assert myia.compile(third_in_subset)(x) == pytest.approx(
        myia.compile(nested(while_loop, 3))(x), rel=1e-12)
    want = nested(autograd_version(poly), 4, autograd.grad)(x) + \
        nested(autograd_version(sin_exp), 2, autograd.grad)(x)
    assert myia.compile(fourth_in_subset)(x) == pytest.approx(want, rel=1e-9)


# ---- the path each transform takes -------------------------------------------------------


def test_orders_above_one_differentiate_the_optimized_program():
    d1 = grad(poly)
    d3 = grad(grad(d1))
    assert myia.compile(d3)(1.5) == pytest.approx(
        nested(autograd_version(poly), 3, autograd.grad)(1.5))
    (sig,) = d3._by_signature
    assert d3._by_signature[sig] is not None and sig not in d3.old_path_reason
    # straight-line code: the first derivative differentiates the optimized program too
    assert d1._by_signature[sig] is not None and sig not in d1.old_path_reason


def loop_of_n(x, n):
    i = 0
    while i < n:
        x = np.sin(x) * x
        i = i + 1
    return x


def test_a_first_derivative_of_a_loop_that_stays_keeps_the_parsed_program():
    # a run-time trip count: the loop stays, and J of the parsed loop is smaller than J
    # of the loop whose first iteration inference peeled
    d1 = grad(loop_of_n)
    d2 = grad(d1)
    h = 1e-5
    assert d1(0.5, 4) == pytest.approx((loop_of_n(0.5 + h, 4) - loop_of_n(0.5 - h, 4)) / (2 * h),
                                       rel=1e-6)
    assert d2(0.5, 4) == pytest.approx((d1(0.5 + h, 4) - d1(0.5 - h, 4)) / (2 * h), rel=1e-6)
    (reason,) = d1.old_path_reason.values()
    assert reason.startswith("a first derivative of a loop or a recursion that stays (line ")
    assert not d2.old_path_reason  # the second differentiates the optimized first


@pytest.mark.timeout(300)
def test_what_J_cannot_read_keeps_the_parsed_program_and_says_why():
    """A closure made in a loop and differentiated there stays a record in the optimized
    gradient (make_closure): J of it would have no sensitivity for what the record
    holds, so that second derivative differentiates the parsed program."""
    from tests.ad.test_closure_records import grad_of_loop_carried, loop_carried_reference

    d2 = grad(grad(grad_of_loop_carried))
    h = 1e-5
    fd = (grad(loop_carried_reference)(0.3 + h, 3) - grad(loop_carried_reference)(0.3 - h, 3)) / (2 * h)
    assert myia.compile(d2)(0.3, 3) == pytest.approx(fd, rel=1e-6)
    (reason,) = d2.old_path_reason.values()
    assert reason.startswith("make_closure (line ")


# ---- cost ---------------------------------------------------------------------------------


def sizes(fn, x, k_max):
    p = Pipeline("vm")
    out = []
    for k in range(1, k_max + 1):
        t = nested(fn, k)
        out.append((p.stage(t, (x,), "typed").op_count(), p.stage(t, (x,), "optimized").op_count()))
    return out


@pytest.mark.parametrize("fn, k_max", [(poly, 5), (sin_exp, 5), (while_loop, 4)],
                         ids=lambda v: getattr(v, "__name__", None))
def test_each_order_costs_about_what_it_differentiates(fn, k_max):
    """The typed program of order k+1 is J of the optimized order k: it grows at most
    about 3x per order (it grew ~12x when J met the parsed inner derivative)."""
    s = sizes(fn, 0.7, k_max)
    for (t1, o1), (t2, _) in zip(s, s[1:]):
        assert t2 <= 3.5 * max(t1, 4 * o1), s


def cubic(x):
    return x ** 3 + 2.0 * x


def test_zeros_that_AD_knows_of_vanish():
    """grad^3 of x^3 + 2x is the constant 6, grad^4 the constant 0: no environment,
    zeros_like or product by a structural zero is left."""
    p = Pipeline("vm")
    for k, value in ((3, 6.0), (4, 0.0), (5, 0.0)):
        view = p.stage(nested(cubic, k), (1.5,), "optimized")
        assert view.op_count() == 0, str(view)
        assert myia.compile(nested(cubic, k))(1.5) == value
    text = str(p.stage(nested(poly, 3), (1.5,), "optimized"))
    for word in ("env_", "zeros_like", "gadd"):
        assert word not in text


def test_a_fresh_transform_of_the_same_function_is_the_same_one():
    a = grad(grad(grad(poly)))
    b = grad(grad(grad(poly)))
    assert a is b
    assert grad(poly, 0) is grad(poly, 0) and grad(poly) is not myia.value_and_grad(poly)
    assert a(1.1) == b(1.1)
    # its header is known without building any graph
    assert header(a)[1] == ["x"]


def ramp(x):
    return x * x + np.floor(x) * 2.0


def test_J_writes_each_primitive_rule_in_place():
    """J of a program of primitives is three graphs: the gradient, ▶f and ◀f, whose
    body is the primitives' bprop rules applied in place (no ▶mul pair, no ◀mul
    closure); what a rule gives as a structural zero (floor's) adds nothing."""
    view = myia.ir(grad(ramp))  # the parsed stage: J as the transform writes it
    assert {g.name for g in view.graphs()} == {"grad_ramp", "▶ramp", "◀ramp"}
    text = str(view)
    assert "zeros_like" not in text and "floor" in text
    assert grad(ramp)(1.5) == pytest.approx(3.0)
    assert myia.compile(grad(ramp), backend="vm")(1.5) == pytest.approx(3.0)


def branchy(x):
    if x > 0.0:
        return x * x * x
    return -x


def branchy_vector(v):
    if np.sum(v) > 0.0:
        return np.sum(v ** 3)
    return np.sum(v * v)


@pytest.mark.usefixtures("backend")
def test_hessian_through_an_if():
    """Forward over reverse through a branch: the tangent of a function value is an
    empty environment, so the two branches' sensitivities join (it was None against
    an environment: a type error)."""
    h = myia.hessian(branchy)
    assert h(2.0) == pytest.approx(12.0) and h(-2.0) == pytest.approx(0.0)
    v = np.array([1.0, 2.0, -0.5])
    np.testing.assert_allclose(myia.hessian(branchy_vector)(v), np.diag(6.0 * v))
    np.testing.assert_allclose(myia.hessian(branchy_vector)(-v), 2.0 * np.eye(3))
