"""What a caller of the Python API gets wrong is a Myia error with a hint (issue 32,
item 6), and keywords are bound as for a def (as jax.jit binds them)."""

import numpy as np
import pytest

import myia
from myia import MyiaGradError, MyiaTypeError, MyiaValueError


def scaled(x, y=1.0):
    return x * np.sin(y)


def first(xs):
    return xs[0]


@pytest.mark.parametrize("backend", ["vm", "llvm"])
def test_keyword_arguments_are_bound_by_name(backend):
    f = myia.compile(scaled, backend=backend)
    assert f(2.0, y=0.5) == f(2.0, 0.5) == scaled(2.0, y=0.5)
    assert f(y=0.5, x=2.0) == scaled(2.0, 0.5)
    g = myia.grad(scaled)
    assert g(2.0, y=0.5) == pytest.approx(np.sin(0.5))
    dy = myia.grad(scaled, argnums=1)
    assert dy(2.0, y=0.5) == pytest.approx(2.0 * np.cos(0.5))


def test_a_keyword_the_function_lacks_or_a_repeated_one_is_a_type_error():
    with pytest.raises(MyiaTypeError, match=r"scaled\(\) has no parameter `z`") as info:
        myia.grad(scaled)(2.0, z=1.0)
    assert "its parameters: x, y" in str(info.value)
    with pytest.raises(MyiaTypeError, match="got the argument `x` twice"):
        myia.compile(scaled)(2.0, x=1.0)


@pytest.mark.parametrize("transform", [myia.grad, myia.value_and_grad, myia.jacfwd,
                                       myia.jacrev, myia.hessian])
def test_argnums_out_of_range_points_at_the_def(transform):
    # (inside subset code the error points at the call; from Python, at the function
    # whose parameters were counted)
    with pytest.raises(MyiaGradError, match="argnums 2 is out of range") as info:
        transform(scaled, 2)(2.0, 0.5)
    e = info.value
    assert e.loc is not None and e.loc.filename == __file__
    assert "    def scaled(x, y=1.0):" in str(e)


def test_an_unknown_backend_names_the_ones_there_are():
    with pytest.raises(MyiaValueError, match="unknown backend 'gpu'") as info:
        myia.compile(scaled, backend="gpu")
    assert "choose one of vm, llvm" in str(info.value)


def test_a_jet_of_too_high_an_order_says_why():
    with pytest.raises(MyiaGradError, match="at most 170, not 200") as info:
        myia.jet(np.sin, order=200)
    assert "lower order" in str(info.value)
    # the highest order it takes computes: sin's 170th derivative at 0 is 0
    assert myia.jet(scaled, order=170)(0.5)[170] == pytest.approx(0.0)


@pytest.mark.parametrize("backend", ["vm", "llvm"])
def test_a_list_that_holds_itself_is_refused(backend):
    xs = [1.0]
    xs.append(xs)
    with pytest.raises(MyiaTypeError, match="holds itself"):
        myia.compile(first, backend=backend)(xs)


def test_compiling_a_hessian_compiles_its_program():
    """myia.hessian(f) is one program (forward over reverse): myia.compile of it is
    that program, as for grad (it used to be refused: a hessian ran in Python)."""
    def cube(x):
        return x * x * x

    assert myia.compile(myia.hessian(cube))(2.0) == pytest.approx(12.0)
    def sum_cube(x):
        return np.sum(x * x * x)
    np.testing.assert_allclose(myia.compile(myia.hessian(sum_cube))(np.array([1.0, 2.0])),
                               np.diag([6.0, 12.0]))
    assert myia.hessian(cube)(2.0) == pytest.approx(12.0)
