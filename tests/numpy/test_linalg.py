"""Products: values against NumPy on both backends, gradients against autograd (first and
second order) and finite differences (cases: cases_linalg.py); then what the cases
cannot show: the products a program is left with, Taylor mode through batch_matmul,
and the errors of operands that do not fit."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import myia
from myia.errors import MyiaShapeError, MyiaValueError
from myia.ir import manage
from myia.prim import Primitive
from myia.prim import ops as P

from . import cases_linalg
from .harness import BACKENDS, autograd_twin, check_fd, check_grad, check_value

pytestmark = [
    # NumPy 2 deprecates np.cross of 2-vectors (it still computes them): its own warning
    pytest.mark.filterwarnings(
        "ignore:Arrays of 2-dimensional vectors are deprecated:DeprecationWarning"),
    # autograd's, on a second derivative that is zero (products are bilinear)
    pytest.mark.filterwarnings("ignore:Output seems independent of input:UserWarning"),
]

CASES = cases_linalg.CASES
GRAD = [c for c in CASES if c.order >= 1]
SECOND = [c for c in CASES if c.order >= 2]


@pytest.fixture(scope="module")
def twin():
    return autograd_twin(cases_linalg)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_value(case, backend):
    check_value(case, backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", GRAD, ids=str)
def test_grad(case, backend, twin):
    check_grad(case, backend, twin, order=1)


@pytest.mark.parametrize("case", [c for c in GRAD if c.fd], ids=str)
def test_grad_finite_differences(case):
    check_fd(case, "vm")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", SECOND, ids=str)
def test_second_order(case, backend, twin):
    check_grad(case, backend, twin, order=2)


# ---- what a program is left with ---------------------------------------------------------


def primitives(fn, *args, stage="optimized"):
    """{primitive name: how many applications} in the program of fn for args."""
    view = myia.ir(fn, *args, stage=stage)
    mng = manage(view.graph)
    out = {}
    for g in mng.graphs:
        for n in mng.nodes(g):
            if n.is_apply() and n.inputs[0].is_constant(Primitive):
                name = n.inputs[0].value.name
                out[name] = out.get(name, 0) + 1
    return out


def test_a_stack_times_a_matrix_is_one_product():
    """(..., m, k) @ (k, n): the batch folds into the rows of one dot (one gemm)."""
    ops = primitives(lambda a, b: a @ b, np.ones((5, 2, 3)), np.ones((3, 4)))
    assert ops.get("dot") == 1 and "batch_matmul" not in ops


def test_a_batched_product_and_its_gradient_are_batched_products():
    def f(a, b):
        return np.sum(np.matmul(a, b))

    ops = primitives(myia.grad(f, (0, 1)), np.ones((5, 2, 3)), np.ones((5, 3, 4)))
    assert ops.get("batch_matmul") == 2 and "dot" not in ops


def test_an_einsum_is_planned_at_compile_time():
    """Only views and one product are left: no helper runs at run time."""
    ops = primitives(lambda a, b: np.einsum("bij,bjk->bik", a, b), np.ones((5, 2, 3)),
                     np.ones((5, 3, 4)))
    assert ops == {"batch_matmul": 1}
    ops = primitives(lambda a, b: np.einsum("ij,jk->ki", a, b), np.ones((2, 3)),
                     np.ones((3, 4)))
    assert ops == {"dot": 1, "transpose": 1}


@pytest.mark.parametrize("backend", BACKENDS)
def test_batch_matmul_of_broadcast_and_transposed_stacks(backend):
    """Operands with a zero stride on a batch axis, and without a unit stride on
    either matrix axis (copied), against NumPy."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((4, 3, 2)), rng.standard_normal((5, 1, 6, 5))

    def f(a, b):
        # (2, 4, 3) matrices with strides (6, 2), times (5, 1, 3, 3) ones with strides
        # (10, 2), the batch axes (2,) and (5, 1) broadcast to (5, 2)
        return np.matmul(np.transpose(a, (2, 0, 1)), b[:, :, ::2, ::2])

    want = f(a, b)
    got = myia.compile(f, backend=backend)(a, b)
    assert got.shape == (5, 2, 4, 3)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shapes", [((2, 0, 3), (2, 3, 4)), ((2, 3, 0), (2, 0, 4)),
                                    ((0, 3, 4), (0, 4, 2))], ids=str)
def test_empty_batched_products(backend, shapes):
    a, b = np.ones(shapes[0]), np.ones(shapes[1])
    got = myia.compile(lambda a, b: a @ b, backend=backend)(a, b)
    np.testing.assert_array_equal(got, a @ b)
    assert got.shape == (a @ b).shape


@pytest.mark.parametrize("backend", BACKENDS)
def test_bool_products_are_logical(backend):
    rng = np.random.default_rng(5)
    a, b = rng.random((2, 3, 4)) > 0.7, rng.random((2, 4, 3)) > 0.7
    got = myia.compile(lambda a, b: (a @ b, np.dot(a[0], b[0])), backend=backend)(a, b)
    np.testing.assert_array_equal(got[0], a @ b)
    np.testing.assert_array_equal(got[1], np.dot(a[0], b[0]))
    assert got[0].dtype == np.bool_ and got[1].dtype == np.bool_


def test_batched_products_stay_on_the_device():
    """On the CuPy backend (its CPU emulator): a batched matmul and its gradient run as
    device operations, none on the host."""
    from myia.backend.cupy import CupyBackend
    from myia.backend.cupy.emulator import Emulator, compiler
    from myia.pipeline import optimized_program

    if compiler() is None:
        pytest.fail("the emulator needs a C++ compiler (g++): apt-get install g++")

    def f(a, b):
        return np.sum(np.tanh(np.matmul(a, b)))

    rng = np.random.default_rng(4)
    args = (rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5)))
    g = myia.grad(f, (0, 1))
    b = CupyBackend(optimized_program, xp=Emulator())
    got = b.run(g, args, to_numpy=True)
    assert b.stats["host_fallback"] == 0
    for x, y in zip(got, myia.compile(g, backend="vm")(*args)):
        np.testing.assert_allclose(x, y, rtol=1e-12)


# ---- Taylor mode ----------------------------------------------------------------------------

_M1 = np.random.default_rng(8).standard_normal((2, 3, 4))
_M2 = np.random.default_rng(9).standard_normal((2, 4, 3))


def stacked_products(x):
    return np.sum(np.matmul(np.sin(x * _M1), np.cos(x * _M2)))


def a_stacked_products(x):
    return anp.sum(anp.matmul(anp.sin(x * _M1), anp.cos(x * _M2)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_taylor_mode_through_batch_matmul(backend):
    got = np.array(myia.compile(myia.jet(stacked_products, order=4), backend=backend)(0.3))
    want, g = [a_stacked_products(0.3)], a_stacked_products
    for _ in range(4):
        g = autograd.grad(g)
        want.append(g(0.3))
    np.testing.assert_allclose(got, want, rtol=1e-9)


# ---- operands that do not fit ---------------------------------------------------------------


def _fails(fn, args, exc, match):
    with pytest.raises(exc, match=match):
        myia.compile(fn, backend="vm")(*args)


def test_matmul_refuses_a_scalar():
    _fails(lambda a: a @ 2.0, (np.ones((2, 2)),), MyiaShapeError,
           r"operand 1 is a scalar; matmul needs arrays")


def test_misaligned_products():
    _fails(lambda a, b: a @ b, (np.ones((2, 3, 4)), np.ones((2, 5, 2))), MyiaShapeError,
           r"inner dimensions 4 and 5 differ")
    _fails(lambda a, b: a @ b, (np.ones((2, 3, 4)), np.ones((3, 4, 2))), MyiaShapeError,
           r"batch axes \(2,\) and \(3,\) do not broadcast")
    _fails(lambda a, b: np.dot(a, b), (np.ones((2, 3, 4)), np.ones((2, 5, 2))), MyiaShapeError,
           r"shapes not aligned: 4 \(dim 2\) != 5 \(dim 1\)")
    _fails(lambda a, b: np.inner(a, b), (np.ones((2, 3)), np.ones(4)), MyiaShapeError,
           r"last dimensions 3 and 4 differ")
    _fails(lambda a, b: np.vdot(a, b), (np.ones((2, 3)), np.ones(5)), MyiaShapeError,
           r"6 and 5 elements")
    _fails(lambda a, b: np.tensordot(a, b), (np.ones((2, 3)), np.ones((3, 2))),
           MyiaShapeError, r"axis 0 of a \(2\) and axis 0 of b \(3\)")
    _fails(lambda a, b: np.tensordot(a, b, 3), (np.ones((2, 3)), np.ones((2, 3))),
           MyiaValueError, r"last 3 axes")
    _fails(lambda a, b: np.cross(a, b), (np.ones(4), np.ones(3)), MyiaValueError,
           r"dimension must be 2 or 3")


def test_batch_matmul_needs_equal_batch_axes():
    """The primitive itself (the library broadcasts before calling it)."""
    def f(a, b):
        return P.batch_matmul(a, b)

    _fails(f, (np.ones((2, 3, 4)), np.ones((3, 4, 5))), MyiaShapeError,
           r"batch_matmul of shapes \(2, 3, 4\) and \(3, 4, 5\): the leading \(batch\) axes")
    _fails(f, (np.ones((2, 3, 4)), np.ones((4, 5))), MyiaShapeError,
           r"expected two arrays of the same rank, at least 2")
    _fails(f, (np.ones((2, 3, 4)), np.ones((2, 3, 5))), MyiaShapeError,
           r"the inner dimensions 4 and 3 differ")
    with pytest.raises(MyiaShapeError, match="same leading axes"):
        P.batch_matmul.impl(np.ones((2, 3, 4)), np.ones((3, 4, 5)))


@pytest.mark.parametrize("subscripts, shapes, match", [
    ("ij,jk", [(2, 3)], r"2 operands in the subscripts, 1 given"),
    ("ijk", [(2, 3)], r"operand 0 has 2 dimensions but its subscripts 'ijk' name 3"),
    ("ii", [(2, 3)], r"the axes of operand 0 labelled 'i' differ \(2 != 3\)"),
    ("i,i", [(3,), (4,)], r"the label 'i' is 3 long in one operand and 4 in operand 1"),
    ("i->ii", [(3,)], r"the output names 'i' twice"),
    ("i->j", [(3,)], r"the output names 'j', which no operand has"),
    ("...i->i", [(2, 3)], r"the output has no '...'"),
    ("i1", [(2, 3)], r"'1' is not a valid subscript"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_einsum_refuses_bad_subscripts(subscripts, shapes, match):
    args = tuple(np.ones(s) for s in shapes)
    fn = {1: lambda a: np.einsum(subscripts, a), 2: lambda a, b: np.einsum(subscripts, a, b)}
    _fails(fn[len(args)], args, MyiaValueError, match)

