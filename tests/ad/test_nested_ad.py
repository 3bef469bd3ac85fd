"""Every transform inside compiled code, nested in every order.

`grad`, `value_and_grad`, `jvp` and `vjp` written in subset code, on functions that
capture nothing, closures (over numbers, arrays and lists of arrays), lambdas and
functions passed as arguments; each pair of nestings (ff: jvp of jvp, fr: jvp of grad,
rf: grad of jvp, rr: grad of grad) and three deep; perturbation confusion in the
spirit of Siskind and Pearlmutter.  Values against closed forms, central differences
and autograd, on "vm" and "llvm" (the `backend` fixture)."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import myia
from myia import grad, jvp, value_and_grad, vjp
from myia.errors import MyiaGradError

pytestmark = pytest.mark.usefixtures("backend")


def run(fn, *args):
    return myia.compile(fn)(*args)


def central(f, x, h=1e-5):
    return (f(x + h) - f(x - h)) / (2 * h)


def cube(x):
    return x * x * x


# ---- each transform inside compiled code -------------------------------------------------


def jvp_of_global(x):
    return jvp(cube, (x,), (1.0,))


def jvp_of_closure(x, a):
    def h(u):
        return np.sin(a * u) * u
    return jvp(h, (x,), (0.5,))[1]


def jvp_of_lambda_on_arrays(x, v):
    return jvp(lambda u: np.sum(np.tanh(u) * u), (x,), (v,))[1]


def jvp_two_primals(x, y):
    return jvp(lambda a, b: a * np.exp(b), (x, y), (1.0, 2.0))[1]


def vjp_two_primals(x, y):
    out, back = vjp(lambda a, b: a * a * b, x, y)
    dx, dy = back(1.0)
    return out, dx, dy


def value_and_grad_of_closure(x, a):
    return value_and_grad(lambda u: a * u * u)(x)


def test_jvp_of_a_function_that_captures_nothing():
    assert run(jvp_of_global, 2.0) == (8.0, 12.0)


def test_jvp_of_a_closure():
    x, a = 0.7, 1.3
    want = 0.5 * (a * np.cos(a * x) * x + np.sin(a * x))
    assert run(jvp_of_closure, x, a) == pytest.approx(want, rel=1e-12)


def test_jvp_of_a_lambda_on_arrays_against_autograd():
    x = np.array([0.3, -1.2, 2.0])
    v = np.array([1.0, 0.5, -2.0])
    g = autograd.grad(lambda u: anp.sum(anp.tanh(u) * u))(x)
    assert run(jvp_of_lambda_on_arrays, x, v) == pytest.approx(g @ v, rel=1e-12)


def test_jvp_of_two_primals():
    assert run(jvp_two_primals, 1.5, 0.25) == pytest.approx(np.exp(0.25) * (1 + 2 * 1.5))


def test_vjp_inside_compiled_code():
    out, dx, dy = run(vjp_two_primals, 3.0, 2.0)
    assert (out, dx, dy) == (18.0, 12.0, 9.0)


def test_value_and_grad_of_a_closure():
    assert run(value_and_grad_of_closure, 3.0, 2.0) == (18.0, 12.0)


# ---- each pair of nestings, and three deep -------------------------------------------------


def d_f(fn, x):  # the derivative of a scalar function, by forward mode
    return jvp(fn, (x,), (1.0,))[1]


def d_r(fn, x):  # by reverse mode
    return grad(fn)(x)


def quartic_like(x):
    return np.sin(x) * x * x


def second(outer, inner):
    """x -> d/dx (d/dx quartic_like), the outer and inner derivatives by the modes
    given (each one a function of (fn, x) taken inside the program)."""
    def f(x):
        return outer(lambda u: inner(quartic_like, u), x)
    return f


def third(a, b, c):
    def f(x):
        return a(lambda u: b(lambda v: c(quartic_like, v), u), x)
    return f


def d2_quartic_like(x):
    return (2 - x * x) * np.sin(x) + 4 * x * np.cos(x)


def d3_quartic_like(x):
    return (6 - x * x) * np.cos(x) - 6 * x * np.sin(x)


@pytest.mark.parametrize("outer,inner", [(d_f, d_f), (d_f, d_r), (d_r, d_f), (d_r, d_r)],
                         ids=["ff", "fr", "rf", "rr"])
def test_second_derivative_in_every_order(outer, inner):
    x = 0.8
    assert run(second(outer, inner), x) == pytest.approx(d2_quartic_like(x), rel=1e-12)


@pytest.mark.parametrize("modes", ["fff", "frf", "rfr", "rrf"])
def test_third_derivative_three_deep(modes):
    d = {"f": d_f, "r": d_r}
    x = 0.8
    assert run(third(*(d[m] for m in modes)), x) == \
        pytest.approx(d3_quartic_like(x), rel=1e-11)


def nested_closures(x, y):
    """Closures over the outer variable at each level: d/dx d/dy (x^2 y^3) = 6 x y^2."""
    def dy(xx):
        def h(yy):
            return xx * xx * yy * yy * yy
        return jvp(h, (y,), (1.0,))[1]
    return grad(dy)(x)


def test_nested_closures_capture_the_outer_variable():
    assert run(nested_closures, 1.5, 2.0) == pytest.approx(6 * 1.5 * 4.0)


# ---- perturbation confusion ----------------------------------------------------------------
# Siskind and Pearlmutter: d/dx (x * d/dy (x + y) at y = 1) at x = 1 is 1; a system that
# confuses the two perturbations says 2.


def confusion(outer, inner):
    def f(x):
        def g(y):
            return x + y
        return outer(lambda u: u * inner(lambda y: u + y, 1.0), x)
    return f


@pytest.mark.parametrize("outer,inner", [(d_f, d_f), (d_f, d_r), (d_r, d_f), (d_r, d_r)],
                         ids=["ff", "fr", "rf", "rr"])
def test_no_perturbation_confusion(outer, inner):
    assert run(confusion(outer, inner), 1.0) == 1.0


def confusion_through_a_closure(x):
    """The inner derivative's function captures x; the outer derivative is taken
    through the capture: d/dx (x * d/dy (x * y)) = d/dx (x * x) = 2x."""
    def inner(y):
        return x * y
    return x * jvp(inner, (3.0,), (1.0,))[1]


def test_perturbation_through_a_captured_value():
    f = lambda x: jvp(confusion_through_a_closure, (x,), (1.0,))[1]  # noqa: E731
    assert run(f, 2.5) == 5.0
    assert run(lambda x: grad(confusion_through_a_closure)(x), 2.5) == 5.0


# ---- closures over lists, functions passed in -------------------------------------------------


def potential_gradients(x, w):
    """GradBench particle's inner gradient: a closure over a list of arrays."""
    charges = [np.array([10.0, 10.0 - w]), np.array([10.0, 0.0])]

    def p(u):
        return sum(1.0 / np.linalg.norm(u - c) for c in charges)
    e0 = np.array([1.0, 0.0])
    e1 = np.array([0.0, 1.0])
    forward = np.array([jvp(p, (x,), (e0,))[1], jvp(p, (x,), (e1,))[1]])
    return forward, grad(p)(x)


def potential_np(x, w):
    return sum(1.0 / np.linalg.norm(x - c) for c in [np.array([10.0, 10.0 - w]),
                                                     np.array([10.0, 0.0])])


def test_transforms_of_a_closure_over_a_list_of_arrays():
    x, w = np.array([1.0, 7.5]), 0.3
    forward, reverse = run(potential_gradients, x, w)
    fd = [central(lambda t: potential_np(x + t * e, w), 0.0) for e in np.eye(2)]
    np.testing.assert_allclose(forward, fd, rtol=1e-7)
    np.testing.assert_allclose(reverse, forward, rtol=1e-13)


def pick_then_jvp(x, k):
    fs = (np.sin, np.cos, cube)
    return jvp(fs[k], (x,), (1.0,))[1]


def test_a_function_chosen_by_a_constant_index():
    assert run(lambda x: pick_then_jvp(x, 2), 2.0) == 12.0


def chosen_at_run_time(x, k):
    fs = (np.sin, cube)
    return jvp(fs[k], (x,), (1.0,))[1]


def test_jvp_of_a_function_chosen_at_run_time():
    assert run(chosen_at_run_time, 2.0, 1) == 12.0
    assert run(chosen_at_run_time, 2.0, 0) == pytest.approx(np.cos(2.0))


def closures_chosen_at_run_time(x, k, a):
    fs = (lambda u: a * u, lambda u: u * u, np.sin)
    return jvp(fs[k], (x,), (1.0,))[1]


def pick_and_jvp(fs, k, x):
    return jvp(fs[k], (x,), (0.5,))


def closures_made_elsewhere_chosen_at_run_time(x, k, a):
    """The closures reach the jvp through a call: their values are records that the
    jvp reads what each captured from."""
    return pick_and_jvp((lambda u: a * np.exp(u), lambda u: np.sin(a * u)), k, x)


def test_jvp_of_closures_chosen_at_run_time():
    x, a = 2.0, 3.0
    for k, want in enumerate((a, 2 * x, np.cos(x))):
        assert run(closures_chosen_at_run_time, x, k, a) == pytest.approx(want, rel=1e-14)
    x = 0.5
    for k, (f, df) in enumerate(((lambda u: a * np.exp(u), lambda u: a * np.exp(u)),
                                 (lambda u: np.sin(a * u), lambda u: a * np.cos(a * u)))):
        got = run(closures_made_elsewhere_chosen_at_run_time, x, k, a)
        assert got == pytest.approx((f(x), 0.5 * df(x)), rel=1e-14)
        assert got[1] == pytest.approx(0.5 * central(f, x), rel=1e-8)


def grad_of_one_of_several_that_jvps_a_closure(x, k, a):
    h = lambda u: a * u ** 3  # noqa: E731
    fs = (lambda u: jvp(h, (u,), (1.0,))[1], lambda u: np.sin(u) * a)
    return grad(fs[k])(x)


def test_grad_of_a_function_chosen_at_run_time_that_jvps_a_captured_closure():
    x, a = 0.5, 3.0
    assert run(grad_of_one_of_several_that_jvps_a_closure, x, 0, a) == \
        pytest.approx(6 * a * x, rel=1e-14)
    assert run(grad_of_one_of_several_that_jvps_a_closure, x, 1, a) == \
        pytest.approx(a * np.cos(x), rel=1e-14)


def grad_over_a_jvp_of_closures_chosen_at_run_time(x, k, a):
    return grad(lambda b: jvp((lambda u: b * u * u, lambda u: b * np.sin(u))[k],
                              (x,), (1.0,))[1])(a)


def test_grad_over_a_jvp_of_closures_chosen_at_run_time_is_refused_with_its_line():
    with pytest.raises(myia.errors.MyiaError, match="resolved only at run time") as e:
        run(grad_over_a_jvp_of_closures_chosen_at_run_time, 0.5, 0, 3.0)
    assert e.value.loc.line == \
        grad_over_a_jvp_of_closures_chosen_at_run_time.__code__.co_firstlineno + 1


def grad_chosen_at_run_time(x, k):
    fs = (np.sin, cube)
    return grad(fs[k])(x)


def test_grad_of_a_function_chosen_at_run_time():
    assert run(grad_chosen_at_run_time, 2.0, 1) == 12.0
    assert run(grad_chosen_at_run_time, 2.0, 0) == pytest.approx(np.cos(2.0))


def newton(fn, x):
    """Newton's method for a root of fn, the derivative by jvp, in a while loop."""
    i = 0
    while i < 20:
        v, d = jvp(fn, (x,), (1.0,))
        x = x - v / d
        i = i + 1
    return x


def root_of_shifted_cube(a):
    return newton(lambda u: u * u * u - a, 1.0)


def test_jvp_in_a_loop_and_grad_through_it():
    assert run(root_of_shifted_cube, 8.0) == pytest.approx(2.0, rel=1e-14)
    # d/da a^(1/3) = a^(-2/3) / 3: the derivative through twenty Newton steps
    assert run(lambda a: grad(root_of_shifted_cube)(a), 8.0) == \
        pytest.approx(1.0 / 12.0, rel=1e-9)


# ---- from Python: compiled once ----------------------------------------------------------------


def test_jvp_from_python_builds_its_program_once():
    def f(x):
        return np.sum(np.sin(x) * x)
    x, t = np.linspace(0.0, 1.0, 5), np.ones(5)
    first = myia.jvp(f, (x,), (t,))
    t_obj = myia.api._jvp_function(f)
    programs = dict(t_obj._by_signature)
    second = myia.jvp(f, (x + 1.0,), (t,))
    assert myia.api._jvp_function(f) is t_obj and t_obj._by_signature == programs
    assert first[1] == pytest.approx(np.sum(np.cos(x) * x + np.sin(x)))
    assert second[1] == pytest.approx(np.sum(np.cos(x + 1) * (x + 1) + np.sin(x + 1)))


def test_transforms_called_again_from_python_take_their_fast_paths_correctly():
    """vjp, hessian and jvp called again with the same function reuse their compiled
    programs (a look-up and native calls): new values give new answers, and what the
    first call refused is still refused (an integer primal, tangents that do not match
    the primals)."""
    def f(x):
        return np.sum(np.sin(x) * x)

    def df(x):
        return np.cos(x) * x + np.sin(x)
    x = np.linspace(0.1, 1.0, 4)
    for shift in (0.0, 0.5, 1.0):
        out, back = myia.vjp(f, x + shift)
        assert out == pytest.approx(f(x + shift))
        np.testing.assert_allclose(back(2.0)[0], 2.0 * df(x + shift), rtol=1e-13)
        np.testing.assert_allclose(myia.hessian(f)(x + shift),
                                   np.diag(2 * np.cos(x + shift) - (x + shift) * np.sin(x + shift)),
                                   atol=1e-13)
    with pytest.raises(MyiaGradError, match="an integer"):
        myia.vjp(f, np.arange(4))
    out, back = myia.vjp(f, x)  # (and the fast path again after the refusal)
    np.testing.assert_allclose(back(1.0)[0], df(x), rtol=1e-13)

    def g(a, b):
        return a * np.exp(b)
    assert myia.jvp(g, (0.5, 0.2), (1.0, 0.0))[1] == pytest.approx(np.exp(0.2))
    with pytest.raises(MyiaGradError, match="2 primals but 1 tangents"):
        myia.jvp(g, (0.5, 0.2), (1.0,))
    with pytest.raises(MyiaGradError, match="3 primals but 1 tangents"):
        myia.jvp(g, (0.5, 0.2, 1.0), (1.0,))
    assert myia.jvp(g, (0.5, 0.2), (0.0, 1.0))[1] == pytest.approx(0.5 * np.exp(0.2))
    with pytest.raises(MyiaGradError, match="has shape"):
        myia.jvp(f, (x,), (np.ones(3),))

    def h(y):
        return np.sin(y)
    for order in (2, 2, 3):
        series = myia.jet(h, order)(0.3)
        assert len(series) == order + 1
        assert series[2] == pytest.approx(-np.sin(0.3))
    assert myia.jet(h, 3)(1.1)[3] == pytest.approx(-np.cos(1.1))


def test_compiling_a_lambda_that_calls_myia_jvp():
    """JAX's `jit(lambda p, t: jvp(f, p, t))` form."""
    compiled = myia.compile(lambda p, t: myia.jvp(quartic_like, (p,), (t,)))
    out, tangent = compiled(0.8, 2.0)
    assert out == pytest.approx(quartic_like(0.8))
    assert tangent == pytest.approx(2.0 * (np.cos(0.8) * 0.64 + 2 * 0.8 * np.sin(0.8)))


# ---- hessian and jet inside compiled code ---------------------------------------------------


def sin_times(x):
    return np.sum(np.sin(x) * x)


def scaled_cube(a, x):
    return a * x * x * x


def test_hessian_inside_compiled_code_on_an_array_and_by_argnums():
    x = np.array([0.1, 0.5, 0.9])
    got = run(lambda u: myia.hessian(sin_times)(u), x)
    np.testing.assert_allclose(got, myia.hessian(sin_times)(x), rtol=1e-13)
    np.testing.assert_allclose(got, np.diag(2 * np.cos(x) - x * np.sin(x)), atol=1e-13)
    assert run(lambda a, x: myia.hessian(scaled_cube, 1)(a, x), 2.0, 1.5) == 18.0


def make_scaled(a):
    return lambda y: a * np.sum(y * y * y)


def hessian_of_what_it_gets(f, x):
    return myia.hessian(f)(x)


def test_hessian_of_closures_inside_compiled_code():
    """hessian of a closure: made where it is taken, made by another function (read
    from its record), passed to a function that takes the hessian, capturing another
    closure; against autograd."""
    x = np.array([0.5, -1.0, 2.0])
    a = 1.7
    want = autograd.hessian(lambda y: a * anp.sum(y * y * y))(x)
    np.testing.assert_allclose(
        run(lambda x, a: myia.hessian(lambda u: a * np.sum(u * u * u))(x), x, a), want,
        rtol=1e-13)
    np.testing.assert_allclose(
        run(lambda x, a: myia.hessian(make_scaled(a))(x), x, a), want, rtol=1e-13)
    np.testing.assert_allclose(
        run(lambda x, a: hessian_of_what_it_gets(make_scaled(a), x), x, a), want,
        rtol=1e-13)

    def closure_of_a_closure(x, a):
        h = lambda y: np.sin(a * y)  # noqa: E731
        g = lambda y: h(y) * y  # noqa: E731
        return myia.hessian(g)(x)
    assert run(closure_of_a_closure, 0.5, a) == pytest.approx(
        autograd.hessian(lambda y: anp.sin(a * y) * y)(0.5), rel=1e-12)


def jvp_of_grad_of_what_it_gets(f, x):
    return jvp(grad(f), (x,), (1.0,))[1]


def test_forward_over_reverse_of_closures_passed_along():
    """jvp of grad of a closure that a function receives (its frame is not visible
    there), jvp of that again, and grad over a hessian of a closure (three deep)."""
    a, x = 1.3, 0.6

    def passed(x, a):
        return jvp_of_grad_of_what_it_gets(lambda y: np.sin(a * y), x)
    assert run(passed, x, a) == pytest.approx(-a * a * np.sin(a * x), rel=1e-13)

    def third(x, a):
        g = lambda y: a * y ** 4  # noqa: E731
        second = lambda y: jvp_of_grad_of_what_it_gets(g, y)  # noqa: E731
        return jvp(second, (x,), (1.0,))[1]
    assert run(third, x, a) == pytest.approx(24 * a * x, rel=1e-13)

    def grad_over_hessian(x, a):
        def outer(b):
            return myia.hessian(lambda y: b * y ** 4)(x)
        return grad(outer)(a)
    assert run(grad_over_hessian, x, a) == pytest.approx(12 * x * x, rel=1e-13)


def cubed_times(a):
    return lambda y: a * y ** 3


def test_reverse_mode_over_forward_mode_of_a_closure_made_elsewhere():
    """grad of a closure k that takes a jvp (or a hessian) of a closure h that another
    function made: J of k's typed program, with h made again inside it from what h
    captured (read from h's record); then grad and jvp over all of that."""
    x, a = 0.5, 2.0

    def grad_over_jvp(x, a):
        h = cubed_times(a)
        return grad(lambda b: b * jvp(h, (x,), (1.0,))[1])(a)  # 3 a x^2
    assert run(grad_over_jvp, x, a) == pytest.approx(3 * a * x * x, rel=1e-14)

    def grad_over_hessian(x, a):
        h = cubed_times(a)
        return grad(lambda b: np.sin(b * myia.hessian(h)(x)))(a)
    assert run(grad_over_hessian, x, a) == pytest.approx(
        6 * a * x * np.cos(6 * a * a * x), rel=1e-13)

    def inner(x, a):
        h = cubed_times(a)
        return grad(lambda b: b * a * jvp(h, (x,), (1.0,))[1])(a)  # 3 a^2 x^2
    assert run(lambda x, a: grad(lambda c: inner(x, c))(a), x, a) == \
        pytest.approx(6 * a * x * x, rel=1e-13)
    assert run(lambda x, a: jvp(lambda c: inner(x, c), (a,), (1.0,))[1], x, a) == \
        pytest.approx(6 * a * x * x, rel=1e-13)


def nearest_cost(points, c):
    d = np.sum(points * points, axis=1)[:, None] - 2.0 * (points @ c.T)
    return np.sum(np.min(d, axis=1))


def gradient_and_curvature(points, c):
    return jvp(grad(lambda c: nearest_cost(points, c)), (c,), (np.ones_like(c),))


def test_jvp_over_grad_does_not_compute_with_the_seeds_zero_tangent():
    """The seed 1.0 of the inner gradient, broadcast by its sum's bprop, is an array
    constant in the gradient's optimized program; its tangent is a symbolic zero, so
    the tangent pass has one matrix product (the backward one's), not two (GradBench's
    kmeans `dir`: a 10,000 x 100 product of zeros)."""
    rng = np.random.default_rng(5)
    points = rng.random((30, 3))
    c = points[-4:].copy()
    J, H = run(gradient_and_curvature, points, c)
    np.testing.assert_allclose(
        J, autograd.grad(lambda c: anp.sum(anp.min(
            anp.sum(points * points, axis=1)[:, None] - 2.0 * anp.dot(points, c.T),
            axis=1)))(c), rtol=1e-12)
    np.testing.assert_array_equal(H, np.zeros_like(c))  # (the cost is linear in c)
    optimized = str(myia.ir(gradient_and_curvature, points, c, stage="optimized"))
    assert optimized.count("dot(") == 2


def test_jet_inside_compiled_code_and_grad_of_it():
    want = myia.jet(quartic_like, order=3)(0.7)
    assert run(lambda x: myia.jet(quartic_like, 3)(x), 0.7) == pytest.approx(want, rel=1e-14)
    # the third derivative as grad of jet's second
    assert run(lambda x: grad(lambda u: myia.jet(quartic_like, 2)(u)[2])(x), 0.7) == \
        pytest.approx(want[3], rel=1e-12)
    assert want[3] == pytest.approx(d3_quartic_like(0.7), rel=1e-12)

    def grad_of_a_closure_over_jet(x, a):
        return grad(lambda b: b * myia.jet(quartic_like, 2)(x)[2])(a)
    assert run(grad_of_a_closure_over_jet, 0.7, 2.0) == pytest.approx(want[2], rel=1e-13)


def jet_of_a_closure(x, a):
    return myia.jet(lambda u: a * np.sin(u) * u, 3)(x)


def jet_of_a_closure_made_elsewhere(x, a):
    return apply_jet(lambda u: np.exp(a * u * u), x)


def apply_jet(h, x):
    return myia.jet(h, 2)(x)


def jet_passed_on(x, a):
    j = myia.jet(lambda u, w: a * u * w * w, 2, 1)
    return call_at(j, x)


def call_at(j, x):
    return j(x, 0.5)


def test_jet_of_a_closure_holds_what_it_captured_fixed():
    x, a = 0.7, 2.0
    want = myia.jet(lambda u: a * np.sin(u) * u, order=3)(x)
    assert run(jet_of_a_closure, x, a) == pytest.approx(want, rel=1e-14)
    assert want[1:] == pytest.approx((a * (np.sin(x) + x * np.cos(x)),
                                      a * (2 * np.cos(x) - x * np.sin(x)),
                                      -a * (3 * np.sin(x) + x * np.cos(x))), rel=1e-13)
    # d/da of the third derivative: the derivative goes through what the closure captured
    assert run(lambda x, a: grad(lambda b: myia.jet(lambda u: b * np.sin(u) * u, 3)(x)[3])(a),
               x, a) == pytest.approx(want[3] / a, rel=1e-13)
    f = lambda u: np.exp(a * u * u)  # noqa: E731
    got = run(jet_of_a_closure_made_elsewhere, x, a)
    assert got == pytest.approx((f(x), 2 * a * x * f(x), (2 * a + (2 * a * x) ** 2) * f(x)),
                                rel=1e-13)
    # jet along the second argument, the function passed on before it is called
    assert run(jet_passed_on, x, a) == pytest.approx((a * x * 0.25, 2 * a * x * 0.5,
                                                      2 * a * x), rel=1e-14)


def test_grad_over_a_jvp_chosen_at_run_time_is_refused_then_the_rest_compiles():
    """A refused J must not leave its half-made graph cached (the next compilation of
    the same program, on another backend, crashed with an AttributeError)."""
    f = lambda x, k: grad(lambda u: chosen_at_run_time(u, k))(x)  # noqa: E731
    for _ in range(2):
        with pytest.raises(myia.errors.MyiaError, match="resolved only at run time"):
            run(f, 2.0, 1)
    assert run(chosen_at_run_time, 2.0, 1) == 12.0
