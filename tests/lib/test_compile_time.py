"""@compile_time helpers: Python on values known at compile time, folded by inference
(numbers, tuples and arrays alike), a located error for a value known only at run time."""

import numpy as np
import pytest

import myia
from myia.errors import MyiaTypeError
from myia.prim import compile_time
from myia.prim import ops as P


@compile_time
def _moved(ndim, source, destination):
    """The permutation of np.moveaxis."""
    order = [i for i in range(ndim) if i != source % ndim]
    order.insert(destination % ndim, source % ndim)
    return tuple(order)


@compile_time
def _lower(n, m):
    """np.tri(n, m): ones on and below the diagonal."""
    return np.tri(n, m)


def move_first_last(x):
    return P.transpose(x, _moved(P.ndim(x), 0, -1))


def lower_part(x):
    s = P.shape(x)
    return x * _lower(s[0], s[1])


def move_by(x, a):
    return P.transpose(x, _moved(P.ndim(x), a, -1))


@pytest.mark.parametrize("backend", ["vm", "llvm"])
def test_helpers_fold_to_constants(backend):
    y = np.arange(24.0).reshape(2, 3, 4)
    assert myia.compile(move_first_last, backend=backend)(y).shape == (3, 4, 2)
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(myia.compile(lower_part, backend=backend)(x), np.tril(x))
    d = myia.compile(myia.grad(lambda x: np.sum(lower_part(x))), backend=backend)(x)
    np.testing.assert_array_equal(d, np.tri(3, 4))


def test_nothing_of_them_is_left_to_run():
    view = myia.ir(lower_part, np.ones((3, 4)), stage="typed")
    mul = view.graph.output
    assert mul.inputs[0].value is P.mul  # x * <a constant array>: no helper call left
    np.testing.assert_array_equal(mul.inputs[2].value, np.tri(3, 4))


def test_a_run_time_value_is_a_located_error():
    with pytest.raises(MyiaTypeError, match="moved needs values known at compile time") as e:
        myia.compile(move_by, backend="vm")(np.ones((2, 3)), 0)
    assert "_moved(P.ndim(x), a, -1)" in e.value.loc.source_line
