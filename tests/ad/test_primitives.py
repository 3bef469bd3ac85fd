"""Every differentiable primitive, checked against central finite differences.

Each primitive with a bprop rule is exercised by small subset functions (below, one
table entry per function: the primitive it is about, the function, its arguments),
on scalars and on arrays with broadcasting.  `check_grads` (tests/helpers.py) checks,
like `jax.test_util.check_grads`:

    order 1, fwd   myia.jvp(f)                       vs finite differences of f
    order 1, rev   myia.vjp(f)                       vs finite differences of <u, f>
    order 2, fwd   jvp of f's tangent program        vs finite differences of myia.jvp(f)
    order 2, rev   vjp of grad(sum(f * u))           vs finite differences of myia.grad

Structural primitives (tuples of sensitivities, environments, J) have bprop rules but
no user-level syntax of their own; they are tested through programs that use tuples
and closures (end of this file, and tests/ad/test_must_hold.py).
Non-differentiable primitives (comparisons, floor, shape...) must give zero
sensitivities of the right structure: tested at the end through `grad`.

Every test that runs programs runs on "vm" and on "llvm" (the `backend` fixture,
tests/conftest.py), second derivatives included.
"""

import math

import numpy as np
import pytest

import myia
from myia.prim import all_primitives
from myia.prim import ops as P

from ..helpers import assert_tree_close, check_grads, check_vjp, numerical_grad

# ---- arguments -----------------------------------------------------------------------

_rng = np.random.default_rng(1234)


def rand(*shape):
    return _rng.standard_normal(shape)


def pos(*shape):
    """Positive values in [0.5, 1.5)."""
    return _rng.random(shape) + 0.5


def fl(x):
    return float(x)


# ---- subset functions, one per (primitive, form) ----------------------------------------


def add(x, y):
    return x + y


def sub(x, y):
    return x - y


def mul(x, y):
    return x * y


def div(x, y):
    return x / y


def pow_(x, y):
    return x ** y


def pow_const(x):
    return x ** 3


def pow_float_const(x):
    return x ** 2.5


def mod(x, y):
    return x % y


def neg(x):
    return -x


def np_exp(x):
    return np.exp(x)


def math_exp(x):
    return math.exp(x)


def np_log(x):
    return np.log(x)


def math_log(x):
    return math.log(x)


def np_sin(x):
    return np.sin(x)


def math_sin(x):
    return math.sin(x)


def np_cos(x):
    return np.cos(x)


def math_cos(x):
    return math.cos(x)


def np_tan(x):
    return np.tan(x)


def math_tan(x):
    return math.tan(x)


def np_tanh(x):
    return np.tanh(x)


def math_tanh(x):
    return math.tanh(x)


def np_sqrt(x):
    return np.sqrt(x)


def math_sqrt(x):
    return math.sqrt(x)


def np_arctan(x):
    return np.arctan(x)


def np_exp2(x):
    return np.exp2(x)


def np_expm1(x):
    return np.expm1(x)


def math_expm1(x):
    return math.expm1(x)


def np_log2(x):
    return np.log2(x)


def np_log10(x):
    return np.log10(x)


def math_log10(x):
    return math.log10(x)


def np_log1p(x):
    return np.log1p(x)


def np_arcsin(x):
    return np.arcsin(x)


def math_asin(x):
    return math.asin(x)


def np_arccos(x):
    return np.arccos(x)


def np_sinh(x):
    return np.sinh(x)


def np_cosh(x):
    return np.cosh(x)


def math_cosh(x):
    return math.cosh(x)


def np_arcsinh(x):
    return np.arcsinh(x)


def np_arccosh(x):
    return np.arccosh(x)


def np_arctanh(x):
    return np.arctanh(x)


def np_arctan2(y, x):
    return np.arctan2(y, x)


def math_atan2(y, x):
    return math.atan2(y, x)


def np_hypot(x, y):
    return np.hypot(x, y)


def math_atan(x):
    return math.atan(x)


def p_erf(x):
    return P.erf(x)  # (scipy.special.erf: tests/numpy/test_scipy_special.py)


def p_erfc(x):
    return P.erfc(x)


def p_gammaln(x):
    return P.gammaln(x)


def np_abs(x):
    return np.abs(x)


def py_abs(x):
    return abs(x)


def np_maximum(x, y):
    return np.maximum(x, y)


def np_minimum(x, y):
    return np.minimum(x, y)


def np_fmax(x, y):
    return np.fmax(x, y)


def np_fmin(x, y):
    return np.fmin(x, y)


def np_where(x, y):
    return np.where(x > 0.0, x * y, y)


def np_where_bcast(x, y):
    return np.where(x > y, x, y * 2.0)


def sum_all(x):
    return np.sum(x)


def sum_axis0(x):
    return np.sum(x, axis=0)


def sum_axis1_keep(x):
    return np.sum(x, axis=1, keepdims=True)


def sum_axes02(x):
    return np.sum(x, axis=(0, 2))


def sum_method(x):
    return x.sum(axis=-1)


def mean_axis0(x):
    return np.mean(x, axis=0)


def max_all(x):
    return np.max(x)


def max_axis1(x):
    return np.max(x, axis=1)


def max_axis0_keep(x):
    return np.max(x, axis=0, keepdims=True)


def min_axis1(x):
    return np.min(x, axis=1)


def prod_all(x):
    return np.prod(x)


def prod_axis1_keep(x):
    return np.prod(x, axis=1, keepdims=True)


def prod_axes02(x):
    return np.prod(x, axis=(0, 2))


def cumsum_axis0(x):
    return np.cumsum(x, axis=0)


def cumsum_backwards(x):
    return P.cumsum(x, -1, True)


def cumprod_axis1(x):
    return np.cumprod(x, axis=1)


def cumprod_backwards(x):
    return P.cumprod(x, 0, True)


def recurrence(a, b):
    return P.linear_recurrence(a, b, 1, False)


def recurrence_backwards(a, b):
    return P.linear_recurrence(a, b, 0, True)


#: products with zeros among the factors (their derivatives are products of the others)
WITH_ZEROS = np.array([[1.5, 0.0, -0.7, 1.2], [0.0, 2.0, 0.0, -1.1], [0.3, -0.9, 1.4, 0.8]])


def dot(a, b):
    return np.dot(a, b)


def matmul_op(a, b):
    return a @ b


def reshape_method(x):
    return x.reshape((2, 6))


def reshape_np(x):
    return np.reshape(x, (-1,))


def reshape_to_col(x):
    return x.reshape((4, 1))


def transpose_T(x):
    return x.T


def transpose_axes(x):
    return np.transpose(x, (1, 0, 2))


def broadcast_to(x):
    return P.broadcast_to(x, (3, 4))


def broadcast_scalar(x):
    return P.broadcast_to(x, (2, 3))


def full_of(x):
    return P.full((2, 3), x, "float64") * np.full((2, 3), 2.0)


def full_np(x):
    return np.sum(np.full((3, 2), x) * np.ones((3, 2)) + x)


def sum_to(x):
    return P.sum_to(x, (1, 4))


def sum_to_row(x):
    return P.sum_to(x, (4,))


def unbroadcast(d, x):
    return P.unbroadcast(d, x)


def unbroadcast_scalar(d, x):
    return P.unbroadcast(d, x)


def astype(x):
    return P.astype(x, "float64")


def array_to_scalar(x):
    return P.array_to_scalar(x)


def to_float(x):
    return float(x) * x


def to_float_int(x):
    n = 3
    return float(n) * x


def index_int(x):
    return x[1]


def index_slice(x):
    return x[1:3]


def index_step(x):
    return x[::2]


def index_2d(x):
    return x[1, 2]


def index_col(x):
    return x[:, 1]


def index_rows(x):
    return x[1:, :2]


def index_tuple(x, y):
    t = (x, y, x * y)
    return t[2] + t[0]


def getitem_grad(x, d):
    return P.getitem_grad(x, 1, d)


def getitem_grad_slice(x, d):
    return P.getitem_grad(x, P.make_slice(1, 3, None), d)


def tuple_getitem(x, y):
    return P.tuple_getitem((x, y), 1) * x


def unpack(t):
    a, b = t
    return a * b


def tuple_setitem(t, v):
    return P.tuple_setitem(t, 1, v * 2.0)


def tuple_tail(t):
    return P.tuple_tail(t)


def tuple_cons(h, t):
    return P.tuple_cons(h * h, t)


def list_literal(x, y):
    xs = [x * y, np.sin(x)]  # tuple_as((x * y, sin(x)), "list")
    return xs[0] + xs[1] * y


def dict_literal(x, y):
    d = {"a": x * y, "b": y}
    return d["a"] * d["b"]


def structure_like(x, y):
    return P.structure_like((x * y, y * y), [x, y])[0]


def switch_values(x, y):
    return P.switch(x > y, x * y, y)


def switch_if(x, y):
    if x > y:
        return x * y
    else:
        return np.sin(y)


def switch_ifexp(x, y):
    return x * y if x < y else x - y


def concatenate_axis1(x, y):
    return P.concatenate((x, y), 1)


def concatenate_three(x, y):
    return P.concatenate((x, y * y, x), -2)


def split_pair(x):
    return P.split(x, (1,), 0)


def split_three(x):
    a, b, c = P.split(x, (1, 3), 1)
    return a * c + b[:, :1]


#: indices along axis 1 of a (2, 4) array: repeated, negative, broadcast on axis 0
TAKE_INDEX = np.array([[0, 2, -1, 2, 1]])


def take_along_axis(x):
    return P.take_along_axis(x, TAKE_INDEX, 1)


#: indices (2, 5) against which an array (1, 4) is broadcast
TAKE_ROWS = np.array([[0, 2, -1, 2, 1], [3, 3, 0, -2, 1]])


def take_along_axis_rows(x):
    # x (1, 4) is broadcast against the indices: its sensitivity adds both rows
    return P.take_along_axis(x, TAKE_ROWS, 1)


def sort_axis0(x):
    return np.sort(x, axis=0)


def take_along_axis_grad(x, d):
    return P.take_along_axis_grad(x, TAKE_INDEX, 1, d)


#: rows of a (5, 3) array: repeated and negative (myia.prim.dynamic)
GATHER_INDEX = np.array([[1, -1], [1, 0]])


def dynamic_slice(x):
    return P.dynamic_slice(x, -3, 0, 2)  # x[-3:-1]


def dynamic_update_slice(x, u):
    return P.dynamic_update_slice(x, u, 1, 1)  # x with x[:, 1:3] = u


def gather(x):
    return P.gather(x, GATHER_INDEX, 0)


def scatter_add(x, d):
    return P.scatter_add(x, GATHER_INDEX, 0, d)


#: (primitive, function, arguments)
CASES = [
    ("add", add, (1.5, -0.7)),
    ("add", add, (rand(3, 4), rand(3, 4))),
    ("add", add, (rand(3, 4), 0.3)),
    ("add", add, (0.3, rand(4))),
    ("add", add, (rand(3, 1), rand(1, 4))),
    ("sub", sub, (1.5, -0.7)),
    ("sub", sub, (rand(3, 4), rand(3, 4))),
    ("sub", sub, (rand(3, 4), 0.3)),
    ("sub", sub, (0.3, rand(4))),
    ("sub", sub, (rand(3, 1), rand(1, 4))),
    ("mul", mul, (1.5, -0.7)),
    ("mul", mul, (rand(3, 4), rand(3, 4))),
    ("mul", mul, (rand(3, 4), 0.3)),
    ("mul", mul, (0.3, rand(4))),
    ("mul", mul, (rand(3, 1), rand(1, 4))),
    ("mul", mul, (rand(4), rand(3, 4))),
    ("truediv", div, (1.5, -0.7)),
    ("truediv", div, (rand(3, 4), pos(3, 4))),
    ("truediv", div, (rand(3, 4), 0.3)),
    ("truediv", div, (0.3, pos(4))),
    ("truediv", div, (rand(3, 1), pos(1, 4))),
    ("pow", pow_, (1.3, 2.2)),
    ("pow", pow_, (pos(3, 4), rand(3, 4))),
    ("pow", pow_, (pos(3, 4), 1.7)),
    ("pow", pow_, (1.3, rand(4))),
    ("pow", pow_, (pos(3, 1), rand(1, 4))),
    ("pow", pow_const, (-1.3,)),
    ("pow", pow_const, (rand(4),)),
    ("pow", pow_float_const, (pos(4),)),
    ("mod", mod, (5.3, 1.7)),
    ("mod", mod, (np.array([5.3, -2.2, 0.7]), np.array([1.7, 1.5, 2.1]))),
    ("mod", mod, (np.array([[5.3], [2.6]]), 1.7)),
    ("neg", neg, (1.5,)),
    ("neg", neg, (rand(3, 4),)),
    ("exp", np_exp, (rand(3, 4),)),
    ("exp", math_exp, (0.7,)),
    ("log", np_log, (pos(3, 4),)),
    ("log", math_log, (1.7,)),
    ("sin", np_sin, (rand(3, 4),)),
    ("sin", math_sin, (0.7,)),
    ("cos", np_cos, (rand(3, 4),)),
    ("cos", math_cos, (0.7,)),
    ("tan", np_tan, (rand(5) * 0.5,)),
    ("tan", math_tan, (0.7,)),
    ("tanh", np_tanh, (rand(3, 4),)),
    ("tanh", math_tanh, (0.7,)),
    ("sqrt", np_sqrt, (pos(3, 4),)),
    ("sqrt", math_sqrt, (1.7,)),
    ("arctan", np_arctan, (rand(3, 4),)),
    ("arctan", math_atan, (0.7,)),
    ("exp2", np_exp2, (rand(3, 4),)),
    ("expm1", np_expm1, (rand(3, 4) * 1e-3,)),
    ("expm1", math_expm1, (0.7,)),
    ("log2", np_log2, (pos(3, 4),)),
    ("log10", np_log10, (pos(3, 4),)),
    ("log10", math_log10, (1.7,)),
    ("log1p", np_log1p, (pos(3, 4) - 0.4,)),
    ("arcsin", np_arcsin, (rand(3, 4) * 0.3,)),
    ("arcsin", math_asin, (0.4,)),
    ("arccos", np_arccos, (rand(3, 4) * 0.3,)),
    ("sinh", np_sinh, (rand(3, 4),)),
    ("cosh", np_cosh, (rand(3, 4),)),
    ("cosh", math_cosh, (0.7,)),
    ("arcsinh", np_arcsinh, (rand(3, 4),)),
    ("arccosh", np_arccosh, (pos(3, 4) + 1.0,)),
    ("arctanh", np_arctanh, (rand(3, 4) * 0.3,)),
    ("arctan2", np_arctan2, (rand(3, 4), pos(3, 4))),
    ("arctan2", np_arctan2, (rand(3, 1), rand(1, 4))),
    ("arctan2", math_atan2, (0.3, -0.8)),
    ("hypot", np_hypot, (rand(3, 4), rand(3, 4))),
    ("hypot", np_hypot, (rand(3, 4), 0.5)),
    ("erf", p_erf, (rand(3, 4),)),
    ("erfc", p_erfc, (rand(3, 4),)),
    ("gammaln", p_gammaln, (pos(3, 4) * 3.0,)),
    ("gammaln", p_gammaln, (-0.5 * pos(4),)),
    ("abs", np_abs, (np.array([1.5, -0.5, 0.3, -2.0]),)),
    ("abs", py_abs, (-0.7,)),
    ("abs", py_abs, (0.7,)),
    ("maximum", np_maximum, (1.5, -0.7)),
    ("maximum", np_maximum, (rand(3, 4), rand(3, 4))),
    ("maximum", np_maximum, (rand(3, 1), rand(1, 4))),
    ("maximum", np_maximum, (rand(3, 4), 0.1)),
    ("minimum", np_minimum, (1.5, -0.7)),
    ("minimum", np_minimum, (rand(3, 4), rand(3, 4))),
    ("minimum", np_minimum, (rand(3, 1), rand(1, 4))),
    ("fmax", np_fmax, (1.5, -0.7)),
    ("fmax", np_fmax, (rand(3, 4), rand(3, 4))),
    ("fmax", np_fmax, (rand(3, 1), rand(1, 4))),
    ("fmin", np_fmin, (-0.7, 1.5)),
    ("fmin", np_fmin, (rand(3, 4), rand(3, 4))),
    ("fmin", np_fmin, (rand(3, 4), 0.1)),
    ("where", np_where, (np.array([1.0, -2.0, 0.5, -0.1]), rand(4))),
    ("where", np_where, (-0.5, 2.0)),
    ("where", np_where_bcast, (rand(3, 1), rand(1, 4))),
    ("reduce_sum", sum_all, (rand(3, 4),)),
    ("reduce_sum", sum_axis0, (rand(3, 4),)),
    ("reduce_sum", sum_axis1_keep, (rand(3, 4),)),
    ("reduce_sum", sum_axes02, (rand(2, 3, 2),)),
    ("reduce_sum", sum_method, (rand(3, 4),)),
    ("reduce_sum", mean_axis0, (rand(3, 4),)),
    ("reduce_max", max_all, (rand(3, 4),)),
    ("reduce_max", max_axis1, (rand(3, 4),)),
    ("reduce_max", max_axis0_keep, (rand(3, 4),)),
    ("reduce_max", min_axis1, (rand(3, 4),)),
    ("reduce_prod", prod_all, (rand(3, 4),)),
    ("reduce_prod", prod_all, (WITH_ZEROS,)),
    ("reduce_prod", prod_axis1_keep, (WITH_ZEROS,)),
    ("reduce_prod", prod_axes02, (rand(2, 3, 2),)),
    ("cumsum", cumsum_axis0, (rand(3, 4),)),
    ("cumsum", cumsum_backwards, (rand(3, 4),)),
    ("cumprod", cumprod_axis1, (rand(3, 4),)),
    ("cumprod", cumprod_axis1, (WITH_ZEROS,)),
    ("cumprod", cumprod_backwards, (WITH_ZEROS,)),
    ("linear_recurrence", recurrence, (rand(3, 4), rand(3, 4))),
    ("linear_recurrence", recurrence_backwards, (WITH_ZEROS, rand(3, 4))),
    ("dot", dot, (rand(3, 4), rand(4, 2))),
    ("dot", dot, (rand(3, 4), rand(4))),
    ("dot", dot, (rand(4), rand(4, 2))),
    ("dot", dot, (rand(4), rand(4))),
    ("dot", matmul_op, (rand(2, 3), rand(3, 2))),
    ("batch_matmul", matmul_op, (rand(2, 2, 3), rand(2, 3, 2))),
    ("batch_matmul", matmul_op, (rand(2, 3), rand(2, 3, 2))),
    ("reshape", reshape_method, (rand(3, 4),)),
    ("reshape", reshape_np, (rand(3, 4),)),
    ("reshape", reshape_to_col, (rand(2, 2),)),
    ("transpose", transpose_T, (rand(3, 4),)),
    ("transpose", transpose_axes, (rand(2, 3, 2),)),
    ("broadcast_to", broadcast_to, (rand(1, 4),)),
    ("broadcast_to", broadcast_to, (rand(4),)),
    ("broadcast_to", broadcast_scalar, (0.7,)),
    ("full", full_of, (0.7,)),
    ("full", full_np, (-1.3,)),
    ("sum_to", sum_to, (rand(3, 4),)),
    ("sum_to", sum_to_row, (rand(3, 4),)),
    ("unbroadcast", unbroadcast, (rand(3, 4), rand(1, 4))),
    ("unbroadcast", unbroadcast_scalar, (rand(3, 4), 0.5)),
    ("astype", astype, (rand(3, 4),)),
    ("array_to_scalar", array_to_scalar, (rand(1, 1),)),
    ("to_float", to_float, (0.7,)),
    ("to_float", to_float_int, (rand(3),)),
    ("getitem", index_int, (rand(4),)),
    ("getitem", index_slice, (rand(5),)),
    ("getitem", index_step, (rand(5),)),
    ("getitem", index_2d, (rand(3, 4),)),
    ("getitem", index_col, (rand(3, 4),)),
    ("getitem", index_rows, (rand(3, 4),)),
    ("getitem", index_tuple, (0.7, -1.3)),
    ("getitem_grad", getitem_grad, (rand(4), 0.7)),
    ("getitem_grad", getitem_grad_slice, (rand(4), rand(2))),
    ("tuple_getitem", tuple_getitem, (0.7, -1.3)),
    ("tuple_getitem", unpack, ((0.7, -1.3),)),
    ("tuple_setitem", tuple_setitem, ((0.7, -1.3, 0.2), 1.1)),
    ("tuple_tail", tuple_tail, ((0.7, -1.3, 0.2),)),
    ("tuple_cons", tuple_cons, (0.7, (-1.3, 0.2))),
    ("tuple_as", list_literal, (0.7, -1.3)),
    ("tuple_as", dict_literal, (rand(3), rand(3))),
    ("structure_like", structure_like, (0.7, -1.3)),
    ("switch", switch_values, (1.5, -0.7)),
    ("switch", switch_values, (-1.5, -0.7)),
    ("switch", switch_if, (1.5, -0.7)),
    ("switch", switch_if, (-1.5, -0.7)),
    ("switch", switch_ifexp, (1.5, -0.7)),
    ("switch", switch_ifexp, (-1.5, -0.7)),
    ("concatenate", concatenate_axis1, (rand(3, 2), rand(3, 4))),
    ("concatenate", concatenate_three, (rand(2, 3), rand(1, 3))),
    ("split", split_pair, (rand(3, 4),)),
    ("split", split_three, (rand(2, 5),)),
    ("take_along_axis", take_along_axis, (rand(2, 4),)),
    ("take_along_axis", take_along_axis_rows, (rand(1, 4),)),
    ("take_along_axis", sort_axis0, (rand(3, 4),)),
    ("take_along_axis_grad", take_along_axis_grad, (rand(2, 4), rand(2, 5))),
    ("dynamic_slice", dynamic_slice, (rand(5, 3),)),
    ("dynamic_update_slice", dynamic_update_slice, (rand(2, 4), rand(2, 2))),
    ("gather", gather, (rand(5, 3),)),
    ("scatter_add", scatter_add, (rand(5, 3), rand(2, 2, 3))),
]


def _shape_desc(x):
    if isinstance(x, tuple):
        return "(" + ",".join(_shape_desc(y) for y in x) + ")"
    if isinstance(x, np.ndarray):
        return "x".join(map(str, x.shape)) or "0d"
    return "s"


def _case_id(case):
    prim, fn, args = case
    return f"{prim}-{fn.__name__}-{'-'.join(_shape_desc(a) for a in args)}"


#: Primitives with a bprop rule that have no syntax of their own: they are what the
#: J transform itself emits.  Tested below and in test_must_hold.py through programs
#: with tuples, closures and nested grads.
STRUCTURAL = {
    "make_tuple",  # its bprop is built per arity by myia.ad.reverse.prim_fprop
    "env_new", "env_setitem", "env_getitem", "env_add",  # sensitivities of closures
    "J", "Jinv",  # grad inside subset code
    "gadd", "zeros_like",  # sums and zeros of sensitivities
    "differentiable",  # what grad is taken with respect to (tests/ad/test_integer_arguments.py)
}


def _primitives_used(fn):
    """Every primitive applied in the parsed graph of `fn` or in the graphs it calls."""
    from myia.ir import Apply, Constant, manage
    from myia.parser import parse
    from myia.prim import Primitive

    mng = manage(parse(fn))
    used = set()
    for g in mng.graphs:
        for n in mng.nodes(g):
            if isinstance(n, Apply) and isinstance(n.inputs[0], Constant) \
                    and isinstance(n.inputs[0].value, Primitive):
                used.add(n.inputs[0].value.name)
    return used


def test_every_bprop_primitive_is_covered():
    with_bprop = {name for name, p in all_primitives().items() if "bprop" in p.rules}
    covered = {prim for prim, _, _ in CASES}
    assert covered == with_bprop - STRUCTURAL, (
        f"missing: {sorted(with_bprop - STRUCTURAL - covered)}; "
        f"covered but without a bprop rule: {sorted(covered - with_bprop)}")


def test_every_differentiable_primitive_has_a_jvp_rule():
    """Forward mode needs a jvp rule wherever reverse mode has a bprop rule (J and
    Jinv excepted: forward mode through grad-in-subset is documented as unsupported)."""
    missing = [name for name, p in all_primitives().items()
               if "bprop" in p.rules and "jvp" not in p.rules and name not in ("J", "Jinv")]
    assert missing == []


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_case_uses_its_primitive(case):
    prim, fn, _ = case
    assert prim in _primitives_used(fn), sorted(_primitives_used(fn))


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_first_order(case):
    _, fn, args = case
    check_grads(fn, args, order=1, modes=("fwd", "rev"))


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_second_order_rev(case):
    _, fn, args = case
    check_grads(fn, args, order=2, modes=("rev",))


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_second_order_fwd(case):
    _, fn, args = case
    check_grads(fn, args, order=2, modes=("fwd",))


# ---- structural primitives, through programs ----------------------------------------------


def tuple_program(x, y):
    t = (x, (y, x * y))
    a, (b, c) = t
    return a * b + c * c


def closure_program(x, y):
    def f(z):
        return x * z + y

    def g(z):
        return f(z) * f(z * x)  # gadd: f is used twice

    return g(y)


def closure_returning_closure(x):
    def make(a):
        def inner(z):
            return a * z * z

        return inner

    h = make(x * x)
    return h(x) + h(2.0)


def higher_order_program(x):
    def twice(f, v):
        return f(f(v))

    return twice(lambda z: z * x, x) + twice(np.sin, x)


def nested_grad_program(x):
    # J, Jinv and environments: grad inside subset code, of a closure over x
    return myia.grad(lambda y: x * y * y)(x) * x


def _closure_hand(x, y):
    # f(z) = x z + y; g(y) = f(y) * f(y x) = (x y + y)(x^2 y + y)
    return (x * y + y) * (x * x * y + y)


@pytest.mark.parametrize("fn, args, expected", [
    (tuple_program, (0.7, -1.3), lambda x, y: x * y + (x * y) ** 2),
    (closure_program, (0.7, -1.3), _closure_hand),
    (closure_returning_closure, (0.7,), lambda x: x ** 4 + 4.0 * x * x),
    (higher_order_program, (0.7,), lambda x: x ** 3 + math.sin(math.sin(x))),
    (nested_grad_program, (0.7,), lambda x: 2.0 * x ** 3),
], ids=lambda v: getattr(v, "__name__", ""))
def test_structural_primitives_through_programs(fn, args, expected, backend):
    assert myia.compile(fn)(*args) == pytest.approx(expected(*args))
    grads = myia.grad(fn, tuple(range(len(args))))(*args)
    for i in range(len(args)):
        assert grads[i] == pytest.approx(numerical_grad(expected, args, i), rel=1e-6)
    # second order, reverse over reverse and forward over reverse
    h = myia.grad(myia.grad(fn))(*args)
    assert h == pytest.approx(
        numerical_grad(lambda *a: numerical_grad(expected, a, 0, 1e-4), args, 0, 1e-4),
        rel=1e-4)
    if fn is not nested_grad_program:  # forward mode through grad-in-subset: unsupported
        assert myia.hessian(fn)(*args) == pytest.approx(h)


def test_structural_primitives_are_emitted():
    """The programs above do reach the structural primitives through J (so that the
    exclusion list is not hiding something untested)."""
    from myia.ad.reverse import J_graph
    from myia.ir import Apply, Constant, manage
    from myia.parser import parse
    from myia.prim import Primitive

    used = set()
    for fn in (tuple_program, closure_program, closure_returning_closure,
               higher_order_program, nested_grad_program):
        mng = manage(J_graph(parse(fn)))
        for g in mng.graphs:
            for n in mng.nodes(g):
                if isinstance(n, Apply) and isinstance(n.inputs[0], Constant) \
                        and isinstance(n.inputs[0].value, Primitive):
                    used.add(n.inputs[0].value.name)
    # env_add only appears where two environments are summed at run time (gadd
    # handles it); J appears in the grad-in-subset program.
    assert {"make_tuple", "env_new", "env_setitem", "env_getitem", "gadd",
            "zeros_like"} <= used, sorted(used)


# ---- non-differentiable primitives: zero sensitivities of the right structure ---------------


def nondiff_compare(x, y):
    a = x > y
    b = x <= y
    c = x == y
    d = x != y
    e = not (x < y)
    f = x >= y
    return float(a) + float(b) + float(c) + float(d) + float(e) + float(f)


def nondiff_floor(x):
    return np.floor(x) * 2.0


def nondiff_math_floor(x):
    return float(math.floor(x)) + float(x // 1.0)


def nondiff_sign(x):
    return np.sign(x)


def nondiff_shape(x):
    n = x.shape[0]
    m = len(x)
    k = x.ndim
    return float(n * m * k) + 0.0 * x[0]


def nondiff_full(x):
    return np.zeros((2, 3)) + np.ones((2, 3)) * float(x > 0.0)


def nondiff_int(x):
    return float(int(x * 10.0))


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("fn, args", [
    (nondiff_compare, (0.7, -1.3)),
    (nondiff_compare, (-0.7, -0.7)),
    (nondiff_floor, (2.7,)),
    (nondiff_floor, (rand(3, 2) * 3.0,)),
    (nondiff_math_floor, (2.7,)),
    (nondiff_sign, (rand(4),)),
    (nondiff_shape, (rand(4),)),
    (nondiff_full, (0.7,)),
    (nondiff_int, (0.73,)),
], ids=lambda v: getattr(v, "__name__", _shape_desc(v)))
def test_nondifferentiable_gives_zeros(fn, args):
    out, vjp_fn = myia.vjp(fn, *args)
    assert_tree_close(out, fn(*args))
    ct = np.ones_like(out) if isinstance(out, np.ndarray) else 1.0
    grads = vjp_fn(ct)
    assert len(grads) == len(args)
    for g, a in zip(grads, args):
        assert np.shape(g) == np.shape(a), (g, a)
        assert isinstance(g, np.ndarray) == isinstance(a, np.ndarray), (g, a)
        assert np.all(np.asarray(g) == 0.0), g
    _, tangent = myia.jvp(fn, args, args)
    assert np.all(np.asarray(tangent) == 0.0), tangent


def mixed_nondiff(x, y):
    # d/dx = floor(y) + 2 x [x > 0] ; d/dy = x * 0 + sum of nothing
    s = x * np.floor(y)
    if x > 0.0:
        s = s + x * x
    n = np.shape(np.zeros((3, 2)))[0]
    return s * float(n)


@pytest.mark.usefixtures("backend")
def test_nondifferentiable_mixed_program():
    assert myia.grad(mixed_nondiff, (0, 1))(1.5, 2.7) == pytest.approx((3.0 * (2.0 + 3.0), 0.0))
    assert myia.grad(mixed_nondiff, (0, 1))(-1.5, 2.7) == pytest.approx((6.0, 0.0))


def array_nondiff(x):
    m = x > 0.0
    return np.sum(np.where(m, x, 0.0) * np.floor(x)) + float(np.shape(x)[0])


@pytest.mark.usefixtures("backend")
def test_nondifferentiable_array_program():
    x = np.array([1.5, -0.5, 2.5, 0.25])
    g = myia.grad(array_nondiff)(x)
    assert isinstance(g, np.ndarray) and g.shape == x.shape
    np.testing.assert_allclose(g, np.where(x > 0, np.floor(x), 0.0))
    check_vjp(array_nondiff, (x,))


# ---- ties and kinks: the conventions of autograd and JAX ------------------------------------


def max_reduce(x):
    return np.max(x)


ROW_WEIGHTS = np.array([1.0, 2.0])


def max_rows(x):
    return np.sum(np.max(x, axis=1) * ROW_WEIGHTS)


@pytest.mark.usefixtures("backend")
def test_ties_split_the_sensitivity_like_autograd():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    assert myia.grad(np_maximum, (0, 1))(1.0, 1.0) == pytest.approx((0.5, 0.5))
    assert myia.grad(np_minimum, (0, 1))(1.0, 1.0) == pytest.approx((0.5, 0.5))
    _, tangent = myia.jvp(np_maximum, (1.0, 1.0), (1.0, 3.0))
    assert tangent == pytest.approx(2.0)
    x = np.array([1.0, 3.0, 3.0])
    np.testing.assert_allclose(myia.grad(max_reduce)(x),
                               autograd.grad(lambda v: anp.max(v))(x))
    x = np.array([[2.0, 2.0, 1.0], [0.0, 5.0, 5.0]])
    np.testing.assert_allclose(
        myia.grad(max_rows)(x),
        autograd.grad(lambda v: anp.sum(anp.max(v, axis=1) * np.array([1.0, 2.0])))(x))


@pytest.mark.usefixtures("backend")
def test_kinks():
    assert myia.grad(py_abs)(0.0) == 0.0  # sign(0), as autograd and JAX
    assert myia.grad(pow_const)(0.0) == 0.0
    assert myia.grad(myia.grad(pow_const))(0.0) == 0.0
    assert myia.grad(pow_, 1)(0.0, 2.0) == 0.0  # d/dy x**y where log x is undefined


@pytest.mark.usefixtures("backend")
def test_gradient_keeps_float32():
    x = np.ones(3, dtype=np.float32)
    g = myia.grad(sum_all)(x * x)
    assert g.dtype == np.float32
