"""Taylor mode: myia.jet(f, order=K) against closed forms, nested grad, finite
differences and autograd, on both backends."""

import math
import types

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import myia
from myia.errors import MyiaGradError
from myia.prim import ops as P

BACKENDS = ["vm", "llvm"]


def poly(x):
    return 0.5 * x ** 6 - 2.0 * x ** 5 + x ** 3 - 3.0 * x + 1.0


POLY = np.polynomial.Polynomial([1.0, -3.0, 0.0, 1.0, 0.0, -2.0, 0.5])


def sin_exp(x):
    return np.sin(x) * np.exp(x)


def sin_exp_derivative(x, k):
    # d^k/dx^k e^x sin x = 2^(k/2) e^x sin(x + k pi / 4)
    return 2.0 ** (k / 2) * math.exp(x) * math.sin(x + k * math.pi / 4)


def loop(x):
    i = 0
    while i < 6:
        x = np.sin(x) * 1.1
        i = i + 1
    return x


def branch(x):
    if x > 0.0:
        return x * x * np.exp(x)
    return -x


def mixed(x):
    return (np.tanh(x) + np.sqrt(x + 2.0) / np.log(x + 3.0) + np.arctan(x) * np.cos(x)
            + x ** 2.5 + np.tan(x / 3.0) - 1.0 / (1.0 + x * x))


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def with_closure(x):
    def scaled(y):
        return np.sin(x * y)

    return scaled(2.0) + scaled(x)


def autograd_derivatives(fn, x, order):
    out, g = [fn(x)], fn
    for _ in range(order):
        g = autograd.grad(g)
        out.append(g(x))
    return np.array(out)


def a_mixed(x):
    return (anp.tanh(x) + anp.sqrt(x + 2.0) / anp.log(x + 3.0) + anp.arctan(x) * anp.cos(x)
            + x ** 2.5 + anp.tan(x / 3.0) - 1.0 / (1.0 + x * x))


def a_loop(x):
    for _ in range(6):
        x = anp.sin(x) * 1.1
    return x


def jet_on(backend, fn, order, *args):
    return np.array(myia.compile(myia.jet(fn, order=order), backend=backend)(*args))


@pytest.mark.parametrize("backend", BACKENDS)
def test_order_10_of_a_polynomial_is_exact(backend):
    for x in (0.0, 0.7, -1.3):
        got = jet_on(backend, poly, 10, x)
        want = [POLY.deriv(k)(x) if k else POLY(x) for k in range(11)]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        # beyond the degree the derivatives are zero by construction, not by rounding
        assert list(got[7:]) == [0.0] * 4


@pytest.mark.parametrize("backend", BACKENDS)
def test_order_10_of_sin_times_exp_matches_its_closed_form(backend):
    for x in (0.0, 0.7, -2.0):
        got = jet_on(backend, sin_exp, 10, x)
        want = [sin_exp_derivative(x, k) for k in range(11)]
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, afn, x", [
    (mixed, a_mixed, 0.7), (loop, a_loop, 0.4), (sin_exp, lambda x: anp.sin(x) * anp.exp(x), 1.1),
], ids=["mixed", "loop", "sin_exp"])
def test_against_autograd(backend, fn, afn, x):
    np.testing.assert_allclose(jet_on(backend, fn, 5, x), autograd_derivatives(afn, x, 5),
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, x", [(branch, 0.8), (branch, -0.5), (loop, 0.3),
                                   (with_closure, 0.6), (mixed, 0.2)],
                         ids=["if_true", "if_false", "while", "closure", "mixed"])
def test_against_nested_grad(backend, fn, x):
    want, g = [fn(x)], fn
    for _ in range(3):
        g = myia.grad(g)
        want.append(myia.compile(g, backend="vm")(x))
    np.testing.assert_allclose(jet_on(backend, fn, 3, x), want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_through_recursion_and_a_static_argument(backend):
    # x ** 5 by recursion: the derivatives of a monomial
    got = jet_on(backend, power, 6, 1.5, 5)
    want = [math.perm(5, k) * 1.5 ** (5 - k) for k in range(7)]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_each_derivative_is_the_slope_of_the_one_before(backend):
    j = myia.compile(myia.jet(mixed, order=4), backend=backend)
    x, h = 0.5, 1e-5
    here, up, down = (np.array(j(v)) for v in (x, x + h, x - h))
    np.testing.assert_allclose((up[:-1] - down[:-1]) / (2 * h), here[1:], rtol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_on_an_array_every_element_moves_together(backend):
    xs = np.linspace(-1.0, 1.0, 7)
    got = myia.compile(myia.jet(sin_exp, order=6), backend=backend)(xs)
    assert len(got) == 7
    for k, arr in enumerate(got):
        np.testing.assert_allclose(arr, [sin_exp_derivative(x, k) for x in xs], rtol=1e-9,
                                   atol=1e-12)


def test_a_second_argument_is_held_fixed():
    def f(x, y):
        return np.exp(x * y)

    got = np.array(myia.jet(f, order=4, argnums=1)(2.0, 0.5))
    np.testing.assert_allclose(got, [2.0 ** k * math.exp(1.0) for k in range(5)], rtol=1e-12)


def test_jet_of_a_gradient_gives_the_next_derivatives():
    got = np.array(myia.jet(myia.grad(sin_exp), order=4)(0.3))
    np.testing.assert_allclose(got, [sin_exp_derivative(0.3, k) for k in range(1, 6)],
                               rtol=1e-9)


def test_straight_line_code_keeps_its_zeros():
    # order 10 of a degree-6 polynomial: the coefficients past 6 are never computed
    # and the Horner-free expansion stays small
    view = myia.ir(myia.jet(poly, order=10), 0.5, stage="optimized")
    assert view.op_count() < 100
    assert "zeros_like" not in str(view)


def test_equal_jets_are_one_object():
    assert myia.jet(poly, order=3) is myia.jet(poly, order=3)
    assert repr(myia.jet(poly, order=3)) == "<myia.jet(poly, order=3, argnums=0)>"
    assert repr(myia.jet(myia.grad(poly), order=2)) == \
        "<myia.jet(grad(poly, argnums=0), order=2, argnums=0)>"
    assert myia.jet(poly, order=3) is not myia.jet(poly, order=4)


@pytest.mark.parametrize("bad", [-1, 2.0, True])
def test_order_must_be_a_non_negative_int(bad):
    with pytest.raises(MyiaGradError, match="int order"):
        myia.jet(poly, order=bad)


def test_refuses_an_integer_argument_and_a_tuple_output():
    with pytest.raises(MyiaGradError, match="integer"):
        myia.jet(poly, order=2)(3)

    def pair(x):
        return (x, x)

    with pytest.raises(MyiaGradError, match="returns a float or an array"):
        myia.jet(pair, order=2)(1.0)


def test_order_zero_is_the_value():
    assert myia.jet(poly, order=0)(0.5) == (poly(0.5),)


def apply_to(f, x):
    return f(x)


def sin_through_a_function_value(x):
    return apply_to(np.sin, x) * x


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_parsed_program_carries_a_primitive_passed_as_a_value(backend):
    # the path a program takes when J cannot read its optimized form: here the parsed
    # program, where np.sin is a value passed to another function
    from myia.ad.taylor import jet_entry_graph
    from myia.parser.programs import to_graph

    g = jet_entry_graph(to_graph(sin_through_a_function_value), 3, 0)
    got = myia.compile(g, backend=backend)(0.5)
    s, c = math.sin(0.5), math.cos(0.5)
    np.testing.assert_allclose(got, [s * 0.5, c * 0.5 + s, -s * 0.5 + 2 * c, -c * 0.5 - 3 * s],
                               rtol=1e-12)


def libm_unary(x):
    return (np.exp2(x) + np.expm1(x) + np.log2(x + 2.0) + np.log10(x + 2.0) + np.log1p(x)
            + np.arcsin(x) + np.arccos(x) + np.sinh(x) + np.cosh(x) + np.arcsinh(x)
            + np.arccosh(x + 2.0) + np.arctanh(x)
            + P.erf(x) + P.erfc(x * 2.0) + P.gammaln(x + 0.5) + P.gammaln(x - 1.5))


def a_libm_unary(x):
    import autograd.scipy.special as asp

    return (anp.exp2(x) + anp.expm1(x) + anp.log2(x + 2.0) + anp.log10(x + 2.0)
            + anp.log1p(x) + anp.arcsin(x) + anp.arccos(x) + anp.sinh(x) + anp.cosh(x)
            + anp.arcsinh(x) + anp.arccosh(x + 2.0) + anp.arctanh(x)
            + asp.erf(x) + asp.erfc(x * 2.0) + asp.gammaln(x + 0.5) + asp.gammaln(x - 1.5))


def libm_binary(x):
    return np.arctan2(x, 1.5 - x) * np.hypot(x, x * x + 0.5)


def a_libm_binary(x):
    return anp.arctan2(x, 1.5 - x) * anp.hypot(x, x * x + 0.5)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, afn, x", [(libm_unary, a_libm_unary, 0.3),
                                        (libm_binary, a_libm_binary, 0.4)],
                         ids=["unary", "binary"])
def test_the_c_math_library_functions_against_autograd(backend, fn, afn, x):
    """Each Taylor rule of myia.prim.mathfn, to order 5."""
    np.testing.assert_allclose(jet_on(backend, fn, 5, x), autograd_derivatives(afn, x, 5),
                               rtol=1e-8, atol=1e-10)


# ---- products and scans (myia.prim.cumulative): the reference multiplies one by one ----------

SCAN_A = np.array([[2.0, -1.0, 0.5], [1.5, 3.0, -2.0]])
SCAN_B = np.array([[-1.0, 0.3, 0.2], [0.4, -1.5, 1.0]])  # at x = 0.5, the factor [0, 0] is 0
SCAN_W = np.array([[0.7, -1.2, 0.4], [1.1, 0.3, -0.8]])


def scans(x):
    y = x * SCAN_A + SCAN_B
    return (np.sum(np.prod(y, axis=1) * SCAN_W[:, 0]) + np.prod(y)
            + np.sum(np.cumprod(y, axis=1) * SCAN_W) + np.sum(P.cumprod(y, 0, True) * SCAN_W)
            + np.sum(np.cumsum(y * y, axis=0) * SCAN_W)
            + np.sum(P.linear_recurrence(y, x * x * SCAN_B, 1, False) * SCAN_W))


def a_scans(x):
    y = [[x * SCAN_A[r, c] + SCAN_B[r, c] for c in range(3)] for r in range(2)]
    total = 0.0
    everything = 1.0
    for r in range(2):
        product, running = 1.0, 0.0
        for c in range(3):
            product = product * y[r][c]
            everything = everything * y[r][c]
            total = total + product * SCAN_W[r, c]
            running = y[r][c] * running + x * x * SCAN_B[r, c]  # linear_recurrence
            total = total + running * SCAN_W[r, c]
        total = total + product * SCAN_W[r, 0]
    for c in range(3):
        total = total + y[1][c] * SCAN_W[1, c] + y[0][c] * y[1][c] * SCAN_W[0, c]  # backwards
        total = total + y[0][c] ** 2 * SCAN_W[0, c] + (y[0][c] ** 2 + y[1][c] ** 2) * SCAN_W[1, c]
    return total + everything


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("x", [0.5, -0.3])
def test_products_and_scans_against_autograd(backend, x):
    """The Taylor rules of reduce_prod, cumprod, cumsum and linear_recurrence, to order 5
    (at x = 0.5 one factor is zero: the rules never divide)."""
    np.testing.assert_allclose(jet_on(backend, scans, 5, x), autograd_derivatives(a_scans, x, 5),
                               rtol=1e-9, atol=1e-9)


# ---- broadcasting: a scalar's coefficients broadcast with its value ------------------------

W3 = np.array([0.5, -1.0, 2.0])
M23 = np.array([[1.0, 2.0, -1.0], [0.5, -0.3, 0.8]])
MASK = np.array([True, False, True])


def sum_of_broadcast(x):
    return np.sum(x + np.zeros(3))


def index_of_broadcast(x):
    return (x + np.array([0.0, 1.0]))[1]


def with_autograd_numpy(fn):
    """`fn` with `np` bound to autograd.numpy: the same source, differentiated by autograd."""
    return types.FunctionType(fn.__code__, {**fn.__globals__, "np": anp}, fn.__name__)


def nested_grads(fn, x, order):
    want, g = [fn(x)], fn
    for _ in range(order):
        g = myia.grad(g)
        want.append(myia.compile(g, backend="vm")(x))
    return np.array(want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_scalar_broadcast_to_an_array_moves_each_element(backend):
    # each of the 3 elements of x + zeros(3) moves with x: the sum's slope is 3, not 1
    assert list(jet_on(backend, sum_of_broadcast, 2, 0.5)) == [1.5, 3.0, 0.0]
    # the higher coefficients of x + [0, 1] are arrays too, so they can be indexed
    assert list(jet_on(backend, index_of_broadcast, 2, 0.5)) == [1.5, 1.0, 0.0]


BROADCASTS = {
    "sum": sum_of_broadcast,
    "index": index_of_broadcast,
    "index_exp": lambda x: np.exp(x + np.zeros(3))[2] * x,
    "sub_from_array": lambda x: np.sum(np.array([1.0, 2.0]) - x),
    "product_of_broadcasts": lambda x: np.sum((x + W3) * (x - np.zeros(3))),
    "dot": lambda x: np.dot(x + np.zeros(3), W3),
    "matmul": lambda x: np.sum(((x + np.zeros((2, 3))) @ M23.T) ** 2),
    "sum_axis_0": lambda x: np.sum(np.sum(x * M23, axis=0) * W3),
    "sum_axis_1_of_sum": lambda x: np.sum(np.sum(x + M23, axis=1) ** 2),
    "concatenate": lambda x: np.sum(np.concatenate((np.array([1.0, 2.0]), x + np.zeros(3))) ** 3),
    "stack": lambda x: np.sum(np.stack((W3, x + np.zeros(3))) ** 2 * M23),
    "reshape": lambda x: np.sum(np.reshape(x + np.zeros(6), (2, 3)) ** 2 * M23),
    "mean": lambda x: np.mean(np.exp(x - np.zeros(4))),
    "mean_axis": lambda x: np.sum(np.mean(np.sin(x * M23 + 1.0), axis=0) * W3),
    "div_by_broadcast": lambda x: np.sum(W3 / (x + np.ones(3))),
    "div_of_broadcast": lambda x: np.sum((x + np.zeros(3)) / (W3 + 3.0)),
    "pow": lambda x: np.sum((x + np.zeros(3)) ** 3 * W3),
    "array_to_the_x": lambda x: np.sum((W3 + 3.0) ** x),
    "x_to_an_array": lambda x: np.sum(x ** (W3 + 3.0)),
    "maximum": lambda x: np.sum(np.maximum(x, W3) * W3),
    "minimum": lambda x: np.sum(np.minimum(x * x, W3) * W3),
    "max_reduction": lambda x: np.max(x * W3 + x * x),
    "two_axes": lambda x: np.sum((x + np.zeros((2, 1)) + np.zeros(3)) * M23),
    "tanh": lambda x: np.sum(np.tanh(x + np.zeros(3)) * W3),
    "arctan2_hypot": lambda x: np.sum(np.arctan2(x, W3 + 2.0) + np.hypot(x, W3)),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", BROADCASTS.values(), ids=BROADCASTS.keys())
def test_through_broadcasting_against_nested_grad_and_autograd(backend, fn):
    """Order 4 against autograd, order 3 against grad(grad(grad(f)))."""
    got = jet_on(backend, fn, 4, 0.7)
    np.testing.assert_allclose(got[:4], nested_grads(fn, 0.7, 3), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got, autograd_derivatives(with_autograd_numpy(fn), 0.7, 4),
                               rtol=1e-9, atol=1e-12)


WHERES = {
    "scalar_or_array": (lambda x: np.sum(np.where(MASK, x, W3)),
                        lambda x: [2 * x + W3[1], 2.0, 0.0, 0.0]),
    "array_or_square": (lambda x: np.sum(np.where(MASK, W3, x * x) * W3),
                        lambda x: [W3[0] ** 2 + W3[2] ** 2 - x * x, -2 * x, -2.0, 0.0]),
    "compare_then_square": (lambda x: np.sum(np.where(x > W3, x, W3) ** 2),
                            lambda x: [2 * x * x + W3[2] ** 2, 4 * x, 4.0, 0.0]),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, closed_form", WHERES.values(), ids=WHERES.keys())
def test_where_of_a_scalar_and_an_array(backend, fn, closed_form):
    # (autograd's where does not sum a scalar's gradient over the broadcast: here the
    # references are nested grad, central differences and the closed form)
    x, h = 0.7, 1e-6
    got = jet_on(backend, fn, 3, x)
    np.testing.assert_allclose(got, nested_grads(fn, x, 3), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got, closed_form(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[1], (fn(x + h) - fn(x - h)) / (2 * h), rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_parsed_program_of_an_array_literal(backend):
    # np.array([...]) in the parsed program makes `()` with make_tuple(), a primitive of
    # no argument, whose series still has order + 1 terms
    from myia.ad.taylor import jet_entry_graph
    from myia.parser.programs import to_graph

    for fn in (index_of_broadcast, BROADCASTS["concatenate"]):
        got = myia.compile(jet_entry_graph(to_graph(fn), 3, 0), backend=backend)(0.7)
        np.testing.assert_allclose(got, jet_on(backend, fn, 3, 0.7), rtol=1e-12)


def test_scalar_code_has_no_broadcast_left():
    # the broadcast of a coefficient alone is dropped where the shapes agree already
    text = str(myia.ir(myia.jet(mixed, order=4), 0.5, stage="optimized"))
    assert "broadcast_to" not in text and "shape(" not in text
