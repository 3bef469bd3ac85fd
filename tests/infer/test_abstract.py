"""Abstract values: how they print, `abstract_of`, `broaden`, and `join`."""

import numpy as np
import pytest
from myia.errors import MyiaTypeError
from myia.abstract import (
    ANY,
    BOTTOM,
    ENV_ANY,
    MAX_ENV_DEPTH,
    AArray,
    AConstant,
    AEnv,
    AFunction,
    AScalar,
    ATuple,
    GraphFunction,
    PrimitiveFunction,
    TypeMismatch,
    abstract_of,
    broaden,
    join,
    signature_of,
)
from myia.ir import EnvKey, Graph
from myia.prim import ops as P

F64 = AScalar("float64")
I64 = AScalar("int64")
B = AScalar("bool")


def _key(name):
    g = Graph("g")
    return EnvKey(g.add_parameter(name))


# ---------------------------------------------------------------- printing


def test_str():
    assert str(F64) == "f64"
    assert str(AScalar("float64", 2.0)) == "f64"  # the value is kept, not printed
    assert repr(AScalar("float64", 2.0)) == "f64=2.0"
    assert str(AScalar("float32")) == "f32"
    assert str(I64) == "i64"
    assert str(B) == "bool"
    assert str(AArray("float64", (3, 4))) == "f64[3,4]"
    assert str(AArray("float64", (None, 4))) == "f64[?,4]"
    assert str(AArray("int64", ())) == "i64[]"
    assert str(ATuple([F64, AArray("int64", (3,))])) == "(f64, i64[3])"
    assert str(ATuple([F64])) == "(f64,)"
    assert str(ATuple([])) == "()"
    assert str(AConstant(None)) == "None"
    assert str(AConstant("float64")) == "'float64'"


def test_str_functions_and_envs():
    g = Graph("square")
    h = Graph("cube")
    assert str(AFunction([GraphFunction(g, None)])) == "fn(square)"
    assert str(AFunction([GraphFunction(h, None), GraphFunction(g, None)])) == "fn{cube, square}"
    assert str(AFunction([PrimitiveFunction(P.add)])) == "fn(add)"
    assert str(AEnv({_key("x"): F64})) == "env{x: f64}"
    assert str(AEnv({})) == "env{}"
    assert str(ENV_ANY) == "env{...}"


# ---------------------------------------------------------------- from Python values


def test_abstract_of():
    assert abstract_of(2.0) == AScalar("float64", 2.0)
    assert abstract_of(3) == AScalar("int64", 3)
    assert abstract_of(True) == AScalar("bool", True)
    assert abstract_of(np.float32(1.5)).dtype == "float32"
    assert abstract_of(np.int64(3)).dtype == "int64"
    assert abstract_of(np.ones((2, 3))) == AArray("float64", (2, 3))
    assert abstract_of(np.ones(3, dtype=np.float32)) == AArray("float32", (3,))
    assert abstract_of((1.0, (2, np.zeros(2)))) == ATuple(
        [AScalar("float64", 1.0), ATuple([AScalar("int64", 2), AArray("float64", (2,))])])
    assert abstract_of(None) == AConstant(None)
    assert abstract_of(slice(1, 3)) == AConstant(slice(1, 3))
    assert abstract_of(P.add) == AFunction([PrimitiveFunction(P.add)])


def test_abstract_of_refuses_unknown_values():
    with pytest.raises(MyiaTypeError, match="cannot infer the type of a value of type set"):
        abstract_of({1, 2})


def test_values_are_told_apart_exactly():
    assert AScalar("float64", 1.0) != AScalar("float64", 2.0)
    assert AScalar("float64", 0.0) != AScalar("float64", -0.0)
    assert AScalar("float64", float("nan")) == AScalar("float64", float("nan"))
    assert AScalar("int64", 1) != AScalar("float64", 1.0)
    assert hash(AScalar("float64", 1.0)) == hash(AScalar("float64", 1.0))
    assert AConstant(slice(1, 2)) == AConstant(slice(1, 2))
    assert AConstant(slice(1, 2)) != AConstant(slice(1, 3))


def test_immutable():
    with pytest.raises(AttributeError):
        F64.dtype = "int64"


def test_broaden_and_signature():
    t = abstract_of((1.0, (2, np.zeros(2))))
    assert broaden(t) == ATuple([F64, ATuple([I64, AArray("float64", (2,))])])
    assert broaden(AConstant(None)) == AConstant(None)
    # the cache key of a compiled function: types and shapes, no values
    assert signature_of((2.0, np.ones(3))) == signature_of((3.0, np.zeros(3)))
    assert signature_of((2.0,)) != signature_of((2,))


# ---------------------------------------------------------------- join


def test_join_scalars():
    assert join(AScalar("float64", 1.0), AScalar("float64", 1.0)) == AScalar("float64", 1.0)
    assert join(AScalar("float64", 1.0), AScalar("float64", 2.0)) == F64
    assert join(BOTTOM, I64) is I64
    assert join(I64, BOTTOM) is I64
    assert join(AScalar("int64", 0), I64) == I64
    assert I64.value is ANY


def test_join_promotes_numbers():
    """int64 joined with float64 gives float64 (a loop variable that starts as 0 and
    becomes 0.5), float32 with float64 gives float64, bool with a number gives the
    number's type (NumPy's promotion)."""
    assert join(I64, F64) == F64
    assert join(F64, I64) == F64
    assert join(AScalar("float32"), F64) == F64
    assert join(AScalar("int64"), AScalar("float32")) == F64
    assert join(AArray("int64", (3,)), AArray("float64", (3,))) == AArray("float64", (3,))
    assert join(B, I64) == I64
    assert join(AScalar("float64", 1.0), AScalar("bool", True)) == F64
    with pytest.raises(TypeMismatch, match="bool and None"):
        join(B, AConstant(None))


def test_join_arrays_forget_differing_dims():
    assert join(AArray("float64", (3, 4)), AArray("float64", (3, 5))) == AArray(
        "float64", (3, None))
    with pytest.raises(TypeMismatch, match=r"f64\[3\] and f64\[3,4\]"):
        join(AArray("float64", (3,)), AArray("float64", (3, 4)))


def test_join_tuples():
    a = ATuple([AScalar("int64", 1), F64])
    b = ATuple([AScalar("int64", 2), F64])
    assert join(a, b) == ATuple([I64, F64])
    with pytest.raises(TypeMismatch, match=r"\(i64, f64\) and \(f64,\)"):
        join(a, ATuple([F64]))


def test_join_mismatch_names_both_types():
    with pytest.raises(MyiaTypeError) as info:
        join(F64, ATuple([F64, F64]))
    assert "f64 and (f64, f64)" in str(info.value)
    assert info.value.types == (F64, ATuple([F64, F64]))
    with pytest.raises(TypeMismatch):
        join(F64, AArray("float64", (3,)))
    with pytest.raises(TypeMismatch):
        join(AConstant(None), F64)


def test_join_functions_and_envs():
    g, h = Graph("g"), Graph("h")
    fg = AFunction([GraphFunction(g, None)])
    fh = AFunction([GraphFunction(h, None)])
    assert join(fg, fh) == AFunction([GraphFunction(g, None), GraphFunction(h, None)])
    kx, ky = _key("x"), _key("y")
    e1 = AEnv({kx: AScalar("float64", 1.0)})
    e2 = AEnv({kx: F64, ky: I64})
    assert join(e1, e2) == AEnv({kx: F64, ky: I64})
    assert join(e1, ENV_ANY) == ENV_ANY


def test_nested_environments_are_cut():
    """The sensitivity of a loop of closures nests environments without bound; past
    MAX_ENV_DEPTH levels they become env{...} (so that inference terminates)."""
    k = _key("bp")
    e = AEnv({})
    for _ in range(3 * MAX_ENV_DEPTH):
        e = AEnv({k: e})
    assert e.depth == MAX_ENV_DEPTH
    inner = e
    for _ in range(MAX_ENV_DEPTH - 1):
        inner = inner.entries[k]
    assert inner == ENV_ANY
