"""The inference rules of the primitives, family by family (`infer_primitive` on
abstract values), and constant folding."""

import numpy as np
import pytest
from myia.errors import MyiaGradError, MyiaShapeError, MyiaTypeError, MyiaValueError
from myia.abstract import (
    ENV_ANY,
    AArray,
    AConstant,
    AEnv,
    AFunction,
    AScalar,
    ASlice,
    ATuple,
    PrimitiveFunction,
    abstract_of,
    broaden,
)
from myia.infer.rules import RULES, broadcast_shapes, infer_primitive
from myia.ir import EnvKey, Graph
from myia.prim import all_primitives
from myia.prim import ops as P
from myia.prim.grad_ops import ZERO, SymbolicZero

F64 = AScalar("float64")
NP_F64 = AScalar("float64", numpy=True)  # an np.float64: an element, a sum, a dot...
F32 = AScalar("float32")
I64 = AScalar("int64")
B = AScalar("bool")


def arr(*shape, dtype="float64"):
    return AArray(dtype, shape)


def c(v):
    """The abstract of a constant."""
    return abstract_of(v)


def shape_of(*dims):
    return ATuple([c(d) for d in dims])


def infer(prim, *args):
    return infer_primitive(prim, list(args))


def test_every_primitive_has_a_rule():
    missing = [name for name, p in all_primitives().items()
               if p not in RULES and "compile_time" not in p.rules]
    assert not missing, f"primitives without an inference rule: {missing}"


# ---------------------------------------------------------------- arithmetic


def test_scalar_arithmetic_types():
    assert infer(P.add, I64, I64) == I64
    assert infer(P.add, I64, F64) == F64
    assert infer(P.mul, F32, F32) == F32
    assert infer(P.truediv, I64, I64) == F64  # true division of ints
    assert infer(P.floordiv, I64, I64) == I64
    assert infer(P.floordiv, F64, F64) == F64
    assert infer(P.mod, I64, I64) == I64
    assert infer(P.pow, I64, I64) == I64
    assert infer(P.pow, F64, I64) == F64
    assert infer(P.add, B, B) == I64  # Python: True + True == 2
    assert infer(P.neg, B) == I64
    assert infer(P.exp, I64) == NP_F64  # NumPy's function: np.exp(1) is an np.float64
    assert infer(P.abs, I64) == I64
    assert infer(P.floor, F64) == NP_F64


def test_comparisons_are_bool():
    for p in (P.eq, P.ne, P.lt, P.le, P.gt, P.ge):
        assert infer(p, I64, F64) == B
        assert infer(p, arr(3), F64) == arr(3, dtype="bool")


def test_array_arithmetic_promotion():
    assert infer(P.add, arr(3, dtype="int64"), F64) == arr(3)
    assert infer(P.mul, arr(3, dtype="float32"), F64) == arr(3, dtype="float32")  # NumPy: weak scalar
    assert infer(P.add, arr(3, dtype="float32"), arr(3)) == arr(3)
    assert infer(P.truediv, arr(3, dtype="int64"), I64) == arr(3)
    assert infer(P.sin, arr(2, 2, dtype="float32")) == arr(2, 2, dtype="float32")


def test_broadcasting():
    assert infer(P.add, arr(3, 4), arr(4)) == arr(3, 4)
    assert infer(P.mul, arr(3, 1), arr(1, 5)) == arr(3, 5)
    assert infer(P.add, arr(3, 4), F64) == arr(3, 4)
    assert infer(P.add, AArray("float64", (None, 4)), arr(3, 1)) == arr(3, 4)
    assert broadcast_shapes((None, 4), (1, 4)) == (None, 4)
    with pytest.raises(MyiaShapeError, match=r"cannot broadcast shapes \(3, 4\) and \(5,\)"):
        infer(P.add, arr(3, 4), arr(5))


def test_arithmetic_on_tuples():
    with pytest.raises(MyiaTypeError, match=r"`\+` \(add\) is not defined for f64 and \(i64, i64\)"):
        infer(P.add, F64, c((1, 2)))
    assert infer(P.add, ATuple([F64]), ATuple([I64])) == ATuple([F64, I64])  # concatenation


def test_equality_with_none_and_tuples():
    """`x is None` compiles to eq: a number never equals None."""
    assert infer(P.eq, F64, c(None)) == c(False)
    assert infer(P.ne, F64, c(None)) == c(True)
    assert infer(P.eq, c(None), c(None)) == c(True)
    assert infer(P.eq, ATuple([F64]), ATuple([F64])) == B
    assert infer(P.eq, arr(3), c(None)) == arr(3, dtype="bool")


def test_maximum_where():
    assert infer(P.maximum, arr(3), F64) == arr(3)
    assert infer(P.maximum, I64, F64) == NP_F64  # np.maximum(1, 0.5): np.float64(1.0)
    assert infer(P.where, arr(3, dtype="bool"), arr(3), F64) == arr(3)
    assert infer(P.where, c(True), c(1.0), c(2)) == c(np.float64(1.0))


# ---------------------------------------------------------------- constant folding


def test_constant_folding():
    assert infer(P.add, c(2), c(3)) == c(5)
    assert infer(P.lt, c(2), c(3)) == c(True)
    assert infer(P.truediv, c(7), c(2)) == c(3.5)
    assert infer(P.tuple_getitem, c((1, 2.0)), c(1)) == c(2.0)
    assert infer(P.len_, c((1, 2, 3))) == c(3)
    assert infer(P.not_, c(False)) == c(True)
    # no folding with an unknown input
    assert infer(P.add, c(2), I64) == I64
    # an error at run time is not raised at compile time: the value stays unknown
    assert infer(P.floordiv, c(1), c(0)) == I64


def test_shape_queries_are_constants():
    assert infer(P.shape, arr(3, 4)) == shape_of(3, 4)
    assert infer(P.shape, AArray("float64", (None, 4))) == ATuple([I64, c(4)])
    assert infer(P.shape, F64) == ATuple([])
    assert infer(P.ndim, arr(3, 4)) == c(2)
    assert infer(P.dtype, arr(3, dtype="float32")) == AConstant("float32")
    assert infer(P.dtype, I64) == AConstant("int64")
    assert infer(P.len_, arr(5, 2)) == c(5)
    assert infer(P.reduced_size, shape_of(3, 4), c(1)) == c(4)
    assert infer(P.reduced_size, shape_of(3, 4), c(None)) == c(12)
    assert infer(P.reduced_shape, shape_of(3, 4), c(-1)) == shape_of(3, 1)
    assert infer(P.inverse_axes, c((1, 2, 0))) == c((2, 0, 1))
    assert infer(P.inverse_axes, c(None)) == c(None)


# ---------------------------------------------------------------- logic and conversions


def test_truth():
    assert infer(P.truth, F64) == B
    assert infer(P.truth, c(0.0)) == c(False)
    assert infer(P.truth, c((1,))) == c(True)
    assert infer(P.truth, arr(1)) == B
    with pytest.raises(MyiaValueError, match=r"array of shape \(3,\) is ambiguous"):
        infer(P.truth, arr(3))


def test_conversions():
    assert infer(P.to_int, F64) == I64
    assert infer(P.to_float, I64) == F64
    assert infer(P.to_float, arr(3, dtype="int64")) == arr(3)
    assert infer(P.to_int, c(2.7)) == c(2)
    with pytest.raises(MyiaTypeError, match="float"):
        infer(P.to_float, ATuple([F64]))
    assert infer(P.astype, arr(3), AConstant("float32")) == arr(3, dtype="float32")


# ---------------------------------------------------------------- reductions, dot


def test_reductions():
    x = arr(3, 4)
    assert infer(P.reduce_sum, x, c(0), c(False)) == arr(4)
    assert infer(P.reduce_sum, x, c(-1), c(False)) == arr(3)
    assert infer(P.reduce_sum, x, c(1), c(True)) == arr(3, 1)
    assert infer(P.reduce_sum, x, c(None), c(False)) == NP_F64
    assert infer(P.reduce_sum, x, c((0, 1)), c(True)) == arr(1, 1)
    assert infer(P.reduce_max, arr(2, 3, 4, dtype="int64"), c(1), c(False)) == arr(
        2, 4, dtype="int64")
    assert infer(P.reduce_sum, arr(3, dtype="bool"), c(None), c(False)) == AScalar(
        "int64", numpy=True)
    with pytest.raises(MyiaShapeError, match="axis 2 is out of bounds for an array of rank 2"):
        infer(P.reduce_sum, x, c(2), c(False))
    with pytest.raises(MyiaTypeError, match="axis of a reduction must be a constant"):
        infer(P.reduce_sum, x, I64, c(False))


def test_dot():
    assert infer(P.dot, arr(3, 4), arr(4, 2)) == arr(3, 2)
    assert infer(P.dot, arr(3, 4), arr(4)) == arr(3)
    assert infer(P.dot, arr(4), arr(4, 2)) == arr(2)
    assert infer(P.dot, arr(4), arr(4)) == NP_F64
    with pytest.raises(MyiaShapeError, match=r"matmul of shapes \(3, 4\) and \(5, 2\)"):
        infer(P.dot, arr(3, 4), arr(5, 2))
    with pytest.raises(MyiaShapeError, match="1-d and 2-d"):
        infer(P.dot, arr(2, 3, 4), arr(4))


# ---------------------------------------------------------------- shapes and creation


def test_reshape():
    assert infer(P.reshape, arr(2, 6), shape_of(3, 4)) == arr(3, 4)
    assert infer(P.reshape, arr(2, 6), shape_of(-1, 3)) == arr(4, 3)
    assert infer(P.reshape, arr(2, 6), c(12)) == arr(12)
    assert infer(P.reshape, arr(1, 1), ATuple([])) == NP_F64
    with pytest.raises(MyiaShapeError, match=r"cannot reshape an array of shape \(2, 6\) into "
                                             r"shape \(5, 2\)"):
        infer(P.reshape, arr(2, 6), shape_of(5, 2))
    with pytest.raises(MyiaShapeError):
        infer(P.reshape, arr(2, 6), shape_of(-1, 5))


def test_transpose():
    assert infer(P.transpose, arr(2, 3, 4), c(None)) == arr(4, 3, 2)
    assert infer(P.transpose, arr(2, 3, 4), c((1, 0, 2))) == arr(3, 2, 4)
    with pytest.raises(MyiaShapeError, match="not a permutation"):
        infer(P.transpose, arr(2, 3), c((0, 0)))


def test_full():
    assert infer(P.full, shape_of(2, 3), c(0), AConstant("float64")) == arr(2, 3)
    assert infer(P.full, c(3), c(1), AConstant("int64")) == arr(3, dtype="int64")
    assert infer(P.full, ATuple([I64, c(3)]), F64, AConstant("float32")) == AArray(
        "float32", (None, 3))
    with pytest.raises(MyiaTypeError, match="unsupported dtype"):
        infer(P.full, shape_of(2), c(0), AConstant("complex64"))


def test_broadcast_to_sum_to_unbroadcast():
    assert infer(P.broadcast_to, arr(3), shape_of(2, 3)) == arr(2, 3)
    assert infer(P.broadcast_to, F64, shape_of(2, 3)) == arr(2, 3)
    with pytest.raises(MyiaShapeError, match=r"cannot broadcast shape \(3,\) to \(2, 4\)"):
        infer(P.broadcast_to, arr(3), shape_of(2, 4))
    assert infer(P.sum_to, arr(2, 3), shape_of(3)) == arr(3)
    assert infer(P.sum_to, arr(2, 3), ATuple([])) == NP_F64
    assert infer(P.unbroadcast, arr(2, 3), arr(3)) == arr(3)
    assert infer(P.unbroadcast, arr(2, 3), F64) == F64
    assert infer(P.unbroadcast, F64, I64) == c(0)  # no sensitivity for an integer
    assert infer(P.array_to_scalar, arr(1, 1)) == NP_F64
    with pytest.raises(MyiaShapeError):
        infer(P.array_to_scalar, arr(2))


# ---------------------------------------------------------------- indexing


def test_getitem_arrays():
    x = arr(4, 5)
    assert infer(P.getitem, x, c(0)) == arr(5)
    assert infer(P.getitem, x, I64) == arr(5)
    assert infer(P.getitem, x, c(slice(1, 3))) == arr(2, 5)
    assert infer(P.getitem, x, c((slice(None), 0))) == arr(4)
    assert infer(P.getitem, x, c((0, 1))) == NP_F64
    assert infer(P.getitem, x, c(slice(None, None, 2))) == arr(2, 5)
    assert infer(P.getitem, x, ASlice(I64, c(None), c(None))) == AArray("float64", (None, 5))
    with pytest.raises(MyiaValueError, match="out of range"):
        infer(P.getitem, x, c(4))
    with pytest.raises(MyiaValueError, match="too many indices"):
        infer(P.getitem, x, c((0, 1, 2)))


def test_getitem_tuples():
    t = ATuple([F64, I64, arr(3)])
    assert infer(P.getitem, t, c(1)) == I64
    assert infer(P.getitem, t, c(-1)) == arr(3)
    assert infer(P.getitem, t, c(slice(1, None))) == ATuple([I64, arr(3)])
    with pytest.raises(MyiaValueError, match="tuple index 3 out of range"):
        infer(P.tuple_getitem, t, c(3))
    # an index known at run time only: fine when the elements have one type
    assert infer(P.tuple_getitem, ATuple([c(1.0), F64]), I64) == F64
    with pytest.raises(MyiaTypeError, match="must be a constant"):
        infer(P.tuple_getitem, t, I64)


def test_structure():
    t = ATuple([F64, I64])
    assert infer(P.make_tuple, F64, I64) == t
    assert infer(P.tuple_setitem, t, c(1), arr(2)) == ATuple([F64, arr(2)])
    assert infer(P.tuple_tail, t) == ATuple([I64])
    assert infer(P.tuple_cons, B, t) == ATuple([B, F64, I64])
    assert infer(P.len_, t) == c(2)
    assert infer(P.make_slice, c(1), c(3), c(None)) == AConstant(slice(1, 3, None))
    assert infer(P.make_slice, c(1), I64, c(None)) == ASlice(c(1), I64, c(None))
    assert infer(P.switch, B, F64, c(1.0)) == F64
    assert infer(P.switch, c(True), F64, I64) == F64
    with pytest.raises(MyiaTypeError, match="two branches of this `if` give different types"):
        infer(P.switch, B, F64, t)
    assert infer(P.assert_, B, c("message")) == B


# ---------------------------------------------------------------- sensitivities, envs


def test_zeros_ones_gadd():
    # the zero sensitivity of a float is AD's symbolic zero: 0.0 to every backend, and
    # to the optimizer a zero that a product or a linear operation inherits
    zero = infer(P.zeros_like, F64)
    assert zero == c(ZERO) and isinstance(zero.value, SymbolicZero) and zero.value == 0.0
    assert zero != c(0.0)
    assert infer(P.zeros_like, ATuple([arr(3), I64])) == ATuple([arr(3), c(0)])
    assert infer(P.zeros_like, AFunction([PrimitiveFunction(P.add)])) == AEnv({})
    assert infer(P.ones_like, arr(3)) == arr(3)
    assert infer(P.gadd, F64, F64) == F64
    assert infer(P.gadd, ATuple([F64, arr(2)]), ATuple([F64, arr(2)])) == ATuple([F64, arr(2)])
    assert infer(P.gadd, c(None), F64) == F64
    with pytest.raises(MyiaTypeError, match="cannot add sensitivities"):
        infer(P.gadd, ATuple([F64]), F64)


def test_grad_seed():
    assert infer(P.grad_seed, F64) == c(1.0)
    with pytest.raises(MyiaGradError, match=r"returned an array of shape \(3,\)"):
        infer(P.grad_seed, arr(3))
    with pytest.raises(MyiaGradError, match="returned an integer"):
        infer(P.grad_seed, I64)
    with pytest.raises(MyiaGradError, match="returned a tuple"):
        infer(P.grad_seed, ATuple([F64, F64]))


def test_environments():
    g = Graph("g")
    kx, ky = EnvKey(g.add_parameter("x")), EnvKey(g.add_parameter("y"))
    e = infer(P.env_new)
    assert e == AEnv({})
    e1 = infer(P.env_setitem, e, AConstant(kx), F64)
    assert e1 == AEnv({kx: F64})
    assert infer(P.env_getitem, e1, AConstant(kx), c(0.0)) == F64
    assert infer(P.env_getitem, e1, AConstant(ky), c(0)) == c(0)  # absent: the default
    e2 = infer(P.env_setitem, e, AConstant(ky), arr(2))
    assert infer(P.env_add, e1, e2) == AEnv({kx: F64, ky: arr(2)})
    assert infer(P.gadd, e1, e1) == AEnv({kx: F64})
    assert infer(P.env_getitem, ENV_ANY, AConstant(kx), c(0.0)) == F64
    with pytest.raises(MyiaTypeError, match="constant key"):
        infer(P.env_getitem, e1, F64, c(0.0))


def test_J_of_data():
    assert infer(P.J, F64) == F64
    assert infer(P.Jinv, ATuple([F64, arr(2)])) == ATuple([F64, arr(2)])
    with pytest.raises(MyiaTypeError, match="Jinv of a function"):
        infer(P.Jinv, AFunction([PrimitiveFunction(P.add)]))


def test_rules_agree_with_the_implementations():
    """On sample values, each elementwise rule gives the type the VM computes (where
    Python's result type depends on the values, as for max(True, 3), the joined type)."""
    values = [True, 3, 2.5, np.float32(1.5), np.ones(3), np.ones((2, 3), dtype=np.float32),
              np.arange(3)]
    for p in (P.add, P.sub, P.mul, P.truediv, P.pow, P.lt, P.maximum):
        for x in values:
            for y in values:
                if p is P.maximum and np.ndim(x) == 0 and np.ndim(y) == 0:
                    continue  # Python's max(3, 2.5) is an int: typed as the join, f64
                try:
                    with np.errstate(all="ignore"):
                        out = p.impl(x, y)
                except ValueError:
                    continue  # shapes that do not broadcast
                expect = abstract_of(out)
                got = infer(p, broaden(abstract_of(x)), broaden(abstract_of(y)))
                if isinstance(expect, AScalar):
                    assert got.dtype == expect.dtype, (p, x, y)
                else:
                    assert got == expect, (p, x, y)
