"""No derivative with respect to an integer or a bool (issue 31): grad, value_and_grad,
vjp, hessian and jet refuse one with a located error, wherever the transform is
applied: called from Python, compiled, inside subset code, of a closure, and for an
integer inside a tuple.  (JAX and autograd raise a TypeError; Myia used to return 0.)
A float argument next to an integer one is still differentiated."""

import numpy as np
import pytest

import myia
from myia import MyiaGradError, grad

pytestmark = pytest.mark.usefixtures("backend")


def half(x):
    return x * 0.5


def power(x, n):
    return x ** n


def grad_in_subset(n):
    return grad(half)(n)


def grad_of_a_closure(n):
    f = lambda y: y * n  # noqa: E731
    return grad(f)(n)


def pair_product(t):
    return t[0] * t[1]


CASES = {
    "grad": lambda: myia.grad(half)(3),
    "compile(grad)": lambda: myia.compile(myia.grad(half))(3),
    "value_and_grad of an int array": lambda: myia.value_and_grad(half)(np.arange(3)),
    "grad of a bool": lambda: myia.grad(half)(True),
    "grad in subset code": lambda: myia.compile(grad_in_subset)(3),
    "grad of a closure": lambda: myia.compile(grad_of_a_closure)(3),
    "vjp": lambda: myia.vjp(half, 3),
    "hessian": lambda: myia.hessian(half)(3),
    "jet": lambda: myia.jet(half, order=2)(3),
    "an int in a tuple": lambda: myia.grad(pair_product)((1.5, 2)),
    "argnums of the int": lambda: myia.grad(power, argnums=1)(1.5, 2),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_derivative_with_respect_to_an_integer_is_a_located_error(case):
    with pytest.raises(MyiaGradError) as info:
        CASES[case]()
    e = info.value
    assert "cannot differentiate with respect to argument" in str(e)
    assert "an integer" in str(e) or "a bool" in str(e)
    assert e.loc is not None and e.loc.filename == __file__  # the user's line
    assert "Hint" in str(e)


def test_the_error_names_the_argument_and_the_element():
    with pytest.raises(MyiaGradError, match=r"argument 0 \('t'\) of pair_product: its "
                                            r"element \[1\] is an integer \(i64\)"):
        myia.grad(pair_product)((1.5, 2))
    with pytest.raises(MyiaGradError, match=r"argument 1 \('n'\) of power: it is an integer"):
        myia.grad(power, argnums=1)(1.5, 2)


def test_a_float_next_to_an_integer_is_differentiated():
    assert myia.grad(power)(1.5, 2) == pytest.approx(3.0)
    assert myia.compile(myia.grad(power))(1.5, 3) == pytest.approx(3 * 1.5 ** 2)
    assert myia.jet(power, order=2)(1.5, 2) == pytest.approx((2.25, 3.0, 2.0))
    assert myia.grad(half)(3.0) == 0.5
