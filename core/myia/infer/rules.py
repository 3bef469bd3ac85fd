"""Inference rules of the primitives: `RULES = {primitive: rule}`.

A rule takes the abstract values of the inputs (never BOTTOM) and returns the abstract
value of the output, or raises a MyiaTypeError / MyiaShapeError (the engine adds the
location of the node).  Rules follow NumPy: broadcasting, dtype promotion, reductions
with a constant axis, and the VM's own conventions (the reference semantics): the
dtype of an elementwise operation is found by running the primitive's implementation
on a sample of each input's type (1, 1.0, np.float64(1.0), a (1, 1) array...), so that
`True + True` is an int, `7 / 2` a float, `np.float32` arrays stay float32 (with a
Python float, not with an np.float64: NEP 50) and np.maximum(1, 0.5) is an np.float64,
exactly as at run time.  A result of a dtype compiled code lacks (NumPy's float16 of a
bool, its int8 of bool // bool) is refused.

Constant folding: a pure, cheap primitive (trait `foldable`) whose inputs are all known
constants is computed with its implementation, and the result keeps its value; this is
how `i < 3` folds when `i` is known and how shapes and axes stay static.  Errors the VM
would raise for a value known here are raised with the same class (an index out of
range is a MyiaValueError, as at run time).

`J` is special: J of data is the data itself (the rule here), but J of a function
value may need to infer a call (`lift_closure`): the engine handles function values
(see `myia.infer.infer`).
"""

import functools
import math

import numpy as np

from ..errors import MyiaGradError, MyiaShapeError, MyiaStaticError, MyiaTypeError, MyiaValueError
from ..ir import EnvKey
from ..prim import all_primitives
from ..prim import ops as P
from ..prim.grad_ops import ZERO, keep_symbolic
from ..prim.logic import range_message
from ..prim.shape import DTYPES
from ..abstract import (
    ANY,
    ENV_ANY,
    NOT_CONSTANT,
    AArray,
    AConstant,
    AEnv,
    AFunction,
    AScalar,
    ASlice,
    ATuple,
    LIST,
    PartialFunction,
    TUPLE,
    TypeMismatch,
    abstract_of,
    broaden,
    constant_value,
    join,
    join_kinds,
)

#: {primitive: its inference rule}; an elementwise primitive without one gets NumPy's
#: promotion and broadcasting (see the end of this module)
RULES = {}


def rule(*prims):
    def deco(fn):
        for p in prims:
            if p in RULES:
                raise ValueError(f"two inference rules for {p.name}")
            RULES[p] = fn
        return fn

    return deco


def infer_primitive(prim, args):
    """The abstract result of `prim` applied to `args` (constant-folded when it can)."""
    if "compile_time" in prim.rules:
        return _compile_time(prim, args)
    if prim.foldable and not rules_containers.has_dict(args):
        values = [constant_value(a) for a in args]
        if all(v is not NOT_CONSTANT for v in values):
            try:
                with np.errstate(all="ignore"):
                    result = keep_symbolic(prim, values, prim.impl(*values))
            except Exception:  # noqa: BLE001  (let the rule say what is wrong)
                pass
            else:
                # (a number of a dtype compiled code lacks: the rule says why not)
                if not isinstance(result, np.ndarray) and not (
                        isinstance(result, np.generic) and result.dtype.name not in DTYPES):
                    out = abstract_of(result)
                    if isinstance(out, ATuple) and rules_containers.has_kinds(args):
                        # the implementation makes plain tuples: the rule knows kinds
                        out = rules_containers.retag(out, RULES[prim](*args))
                    return out
    try:
        r = RULES[prim]
    except KeyError:
        raise NotImplementedError(
            f"primitive {prim.name!r} has no inference rule; add one in myia/infer/rules.py"
        ) from None
    return r(*args)


def _compile_time(prim, args):
    """A `@compile_time` helper: its value, computed now from constant arguments."""
    values = [constant_value(a) for a in args]
    unknown = [i for i, v in enumerate(values) if v is NOT_CONSTANT]
    if unknown:
        what = ", ".join(str(args[i]) for i in unknown)
        raise MyiaStaticError(
            f"{prim.name.split('.')[-1]} needs values known at compile time, got {what}",
            hint="shapes, axes, counts and dtypes must be constants or come from shapes "
                 "(x.shape, len(t)), not from values computed at run time; an argument "
                 "that decides one can be made static: "
                 "myia.compile(f, static_argnums=..., static_argnames=...)")
    return abstract_of(prim.impl(*values))


# ---- helpers ------------------------------------------------------------------------


def fmt_shape(shape):
    """(3, 4) as the user writes it, with ? for unknown dims."""
    dims = ["?" if d is None else str(d) for d in shape]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def _shape_of(a):
    if isinstance(a, AArray):
        return a.shape
    if isinstance(a, AScalar):
        return ()
    raise MyiaTypeError(f"expected an array or a number, got {a}")


def _dtype_of(a):
    if isinstance(a, (AArray, AScalar)):
        return a.dtype
    raise MyiaTypeError(f"expected an array or a number, got {a}")


def _is_numeric(a):
    return isinstance(a, (AScalar, AArray))


def broadcast_shapes(*shapes):
    """NumPy broadcasting of shapes whose dims may be None (unknown)."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(ndim):
        dims = [s[len(s) - ndim + i] for s in shapes if len(s) - ndim + i >= 0]
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            raise MyiaShapeError(
                "cannot broadcast shapes " + " and ".join(fmt_shape(s) for s in shapes),
                hint="the sizes of each dimension must match or be 1 (NumPy broadcasting)")
        if known:
            out.append(known.pop())
        elif any(d is None for d in dims):
            out.append(None)
        else:
            out.append(1)
    return tuple(out)


_SCALAR_SAMPLES = {"bool": True, "int64": 1, "float64": 1.0}


def _sample(a):
    """A value of `a`'s type for running an implementation on (a Python number or a
    NumPy scalar, as NumPy promotes them differently)."""
    if isinstance(a, AScalar):
        s = None if a.numpy else _SCALAR_SAMPLES.get(a.dtype)
        return s if s is not None else np.dtype(a.dtype).type(1)
    if isinstance(a, AArray):
        return np.ones((1,) * a.ndim, dtype=a.dtype)
    v = constant_value(a)
    if v is not NOT_CONSTANT:
        return v
    raise _NoSample(a)


class _NoSample(Exception):
    pass


@functools.lru_cache(maxsize=4096)
def _sample_result(prim, arg_types):
    """(kind, dtype) of prim's result on samples: kind "array" or "scalar"."""
    samples = [_sample(a) for a in arg_types]
    with np.errstate(all="ignore"):
        r = prim.impl(*samples)
    if isinstance(r, np.ndarray):
        return "array", r.dtype.name
    a = abstract_of(r)
    if not isinstance(a, AScalar):
        raise TypeError(f"{prim.name} gives {a}")
    return ("numpy" if a.numpy else "scalar"), a.dtype


_SYMBOLS = {
    "add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
    "pow": "**", "neg": "unary -", "eq": "==", "ne": "!=", "lt": "<", "le": "<=",
    "gt": ">", "ge": ">=",
}


def _op_name(prim):
    sym = _SYMBOLS.get(prim.name)
    return f"`{sym}` ({prim.name})" if sym else f"`{prim.name}`"


def _elementwise(prim, *args):
    """Result of an elementwise primitive: broadcast shape, dtype from the samples."""
    for a in args:
        if not _is_numeric(a):
            raise MyiaTypeError(
                f"{_op_name(prim)} is not defined for "
                + " and ".join(str(x) for x in args),
                hint="these operations work on numbers and arrays")
    shapes = [a.shape for a in args if isinstance(a, AArray)]
    shape = broadcast_shapes(*shapes) if shapes else ()
    key = tuple(broaden(a) if isinstance(a, AScalar) else AArray(a.dtype, (1,) * a.ndim)
                for a in args)
    try:
        kind, dtype = _sample_result(prim, key)
    except (MyiaTypeError, MyiaValueError, MyiaShapeError):
        raise
    except Exception as e:  # noqa: BLE001
        raise MyiaTypeError(
            f"{_op_name(prim)} is not defined for " + " and ".join(str(x) for x in args)
            + f" ({e})") from None
    if dtype not in DTYPES:
        # NumPy's answer has a dtype compiled code does not have: np.sqrt of a bool is a
        # float16, the floor division of two bools an int8
        raise MyiaTypeError(
            f"{_op_name(prim)} of " + " and ".join(str(x) for x in args) + f" is a {dtype} "
            f"in NumPy, and compiled code has no {dtype}",
            hint=f"convert first: x.astype(float) (or int); dtypes: {', '.join(DTYPES)}")
    if kind == "array":
        return AArray(dtype, shape)
    return AScalar(dtype, numpy=kind == "numpy")


# ---- arithmetic and math --------------------------------------------------------------


@rule(P.add)
def infer_add(x, y):
    if isinstance(x, ATuple) and isinstance(y, ATuple):
        return rules_containers.concat(x, y)  # concatenation, as in Python
    return _elementwise(P.add, x, y)


@rule(P.mul)
def infer_mul(x, y):
    if isinstance(x, ATuple) or isinstance(y, ATuple):
        return rules_containers.repeat(x, y)  # [0.0] * n
    return _elementwise(P.mul, x, y)


def _equality(prim):
    @rule(prim)
    def infer_equality(x, y):
        if _is_numeric(x) and _is_numeric(y):
            return _elementwise(prim, x, y)
        # `x is None`, tuples...: Python compares anything; a number never equals
        # None, a tuple or a function
        kinds = {type(x), type(y)}
        if AArray in kinds:  # NumPy compares elementwise
            a = x if isinstance(x, AArray) else y
            return AArray("bool", a.shape)
        if len(kinds) == 2 and (AConstant in kinds or AScalar in kinds):
            return AScalar("bool", prim is P.ne)
        return AScalar("bool")

    infer_equality.__name__ = f"infer_{prim.name}"
    return infer_equality


_equality(P.eq)
_equality(P.ne)


@rule(P.maximum, P.minimum, P.fmax, P.fmin)
def infer_max_min(x, y):
    # the promoted type, whichever wins (np.maximum(1, 0.5) is 1.0)
    return _elementwise(P.maximum, x, y)


@rule(P.where)
def infer_where(c, x, y):
    out = _elementwise(P.where, c, x, y)
    if isinstance(c, AScalar) and c.known:
        chosen = x if c.value else y
        if broaden(chosen) == out:
            return chosen  # (with its value, when it has one)
    return out


# ---- logic ------------------------------------------------------------------------------


@rule(P.is_none)
def infer_is_none(x):
    return AScalar("bool", isinstance(x, AConstant) and x.value is None)


@rule(P.python_number)
def infer_python_number(x):
    return AScalar("bool", isinstance(x, AScalar) and not x.numpy)


@rule(P.not_)
def infer_not(x):
    if isinstance(x, AArray):
        return AArray("bool", x.shape)
    if isinstance(x, ATuple):
        return AScalar("bool", len(x) == 0)
    return AScalar("bool", numpy=isinstance(x, AScalar) and x.numpy)


def _array_size(shape):
    if any(d is None for d in shape):
        return None
    return math.prod(shape)


@rule(P.truth)
def infer_truth(x):
    if isinstance(x, AArray):
        size = _array_size(x.shape)
        if size is not None and size != 1:
            raise MyiaValueError(
                f"the truth value of an array of shape {fmt_shape(x.shape)} is ambiguous",
                hint="use np.any(...) or np.all(...), or compare one element")
        return AScalar("bool")
    if isinstance(x, ATuple):
        return AScalar("bool", len(x) > 0)
    if isinstance(x, AScalar):
        return AScalar("bool")
    if isinstance(x, AConstant) and x.value is None:
        return AScalar("bool", False)
    if isinstance(x, AFunction):
        return AScalar("bool", True)
    raise MyiaTypeError(f"the truth value of {x} is not defined")


def _convert(dtype, what):
    def infer_convert(x):
        if isinstance(x, AArray):
            return AArray(dtype, x.shape)
        if isinstance(x, AScalar):
            return AScalar(dtype)
        raise MyiaTypeError(f"{what}() of {x}", hint=f"{what}() converts a number")

    return infer_convert


rule(P.to_int)(_convert("int64", "int"))
rule(P.to_float)(_convert("float64", "float"))


# ---- shapes ------------------------------------------------------------------------------


def _int_dims(shp, what):
    """The dims of a shape argument (a tuple of ints, or one int); None where unknown."""
    if isinstance(shp, AScalar) and shp.dtype in ("int64", "int32"):
        return (shp.value if shp.known else None,)
    if isinstance(shp, ATuple):
        dims = []
        for e in shp.elements:
            if not (isinstance(e, AScalar) and e.dtype != "bool" and "int" in e.dtype):
                raise MyiaTypeError(f"the shape of {what} must be a tuple of ints, got {shp}")
            dims.append(int(e.value) if e.known else None)
        return tuple(dims)
    raise MyiaTypeError(f"the shape of {what} must be a tuple of ints, got {shp}")


def _shape_abstract(shape):
    return ATuple(AScalar("int64") if d is None else AScalar("int64", d) for d in shape)


@rule(P.shape)
def infer_shape(x):
    if isinstance(x, AArray):
        return _shape_abstract(x.shape)
    if isinstance(x, AScalar):
        return ATuple(())
    raise MyiaTypeError(f"shape of {x}: only arrays and numbers have a shape")


@rule(P.ndim)
def infer_ndim(x):
    if isinstance(x, AArray):
        return AScalar("int64", x.ndim)
    if isinstance(x, AScalar):
        return AScalar("int64", 0)
    raise MyiaTypeError(f"ndim of {x}: only arrays and numbers have a rank")


@rule(P.dtype)
def infer_dtype(x):
    if isinstance(x, AArray):
        return AConstant(x.dtype)
    if isinstance(x, AScalar):
        d = x.dtype
        if d != "bool" and "int" in d:
            d = "int64"
        elif d not in ("bool", "float32"):
            d = "float64"
        return AConstant(d)
    raise MyiaTypeError(f"dtype of {x}: only arrays and numbers have a dtype")


def _axes_of(axis, ndim, what="the axis"):
    """Normalized axes of a reduction (a tuple of non-negative ints)."""
    v = constant_value(axis)
    if v is NOT_CONSTANT:
        raise MyiaTypeError(
            f"{what} of a reduction must be a constant, got {axis}",
            hint="write the axis as a literal: np.sum(x, axis=0)")
    if v is None:
        return tuple(range(ndim))
    axes = v if isinstance(v, tuple) else (v,)
    for a in axes:
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
            raise MyiaTypeError(f"an axis must be an int, got {a!r}")
        if not -ndim <= a < ndim:
            raise MyiaShapeError(f"axis {a} is out of bounds for an array of rank {ndim}")
    return tuple(int(a) % ndim for a in axes)


@rule(P.reduced_size)
def infer_reduced_size(shp, axis):
    _int_dims(shp, "reduced_size")
    return AScalar("int64")


@rule(P.reduced_shape)
def infer_reduced_shape(shp, axis):
    dims = _int_dims(shp, "reduced_shape")
    axes = _axes_of(axis, len(dims))
    return _shape_abstract(tuple(1 if i in axes else d for i, d in enumerate(dims)))


@rule(P.inverse_axes)
def infer_inverse_axes(axes):
    if isinstance(axes, AConstant) and axes.value is None:
        return axes
    if isinstance(axes, ATuple):
        return ATuple(AScalar("int64") for _ in axes.elements)
    raise MyiaTypeError(f"inverse_axes of {axes}: expected a tuple of axes or None")


def _dtype_const(dt, what):
    v = constant_value(dt)
    if not isinstance(v, str):
        raise MyiaTypeError(f"the dtype of {what} must be a constant dtype name, got {dt}")
    if v not in DTYPES:
        raise MyiaTypeError(f"unsupported dtype {v!r}; use one of {', '.join(DTYPES)}")
    return v


@rule(P.full)
def infer_full(shp, value, dt):
    dims = _int_dims(shp, "np.full/np.zeros/np.ones")
    for d in dims:
        if d is not None and d < 0:
            raise MyiaShapeError(f"negative dimensions are not allowed: {fmt_shape(dims)}")
    if not isinstance(value, AScalar):
        raise MyiaTypeError(f"the fill value must be a number, got {value}")
    return AArray(_dtype_const(dt, "np.full"), dims)


def _known_size(shape):
    return None if any(d is None for d in shape) else math.prod(shape)


@rule(P.reshape)
def infer_reshape(x, shp):
    src = _shape_of(x)
    dims = list(_int_dims(shp, "reshape"))
    if sum(1 for d in dims if d == -1) > 1:
        raise MyiaShapeError(f"reshape to {fmt_shape(dims)}: only one dimension can be -1")
    size = _known_size(src)
    if -1 in dims:
        i = dims.index(-1)
        rest = [d for j, d in enumerate(dims) if j != i]
        if size is not None and all(d is not None for d in rest):
            r = math.prod(rest)
            if r == 0 or size % r:
                raise MyiaShapeError(
                    f"cannot reshape an array of shape {fmt_shape(src)} into shape "
                    f"{fmt_shape(dims)}")
            dims[i] = size // r
        else:
            dims[i] = None
    elif size is not None and all(d is not None for d in dims) and math.prod(dims) != size:
        raise MyiaShapeError(
            f"cannot reshape an array of shape {fmt_shape(src)} into shape {fmt_shape(dims)}",
            hint="the number of elements must stay the same")
    if not dims:
        return AScalar(_dtype_of(x), numpy=True)
    return AArray(_dtype_of(x), dims)


@rule(P.transpose)
def infer_transpose(x, axes):
    src = _shape_of(x)
    v = constant_value(axes)
    if v is NOT_CONSTANT:
        raise MyiaTypeError(f"the axes of a transpose must be constant, got {axes}")
    if v is None:
        return AArray(_dtype_of(x), src[::-1])
    if not isinstance(v, tuple) or sorted(v) != list(range(len(src))):
        raise MyiaShapeError(
            f"axes {v} are not a permutation of the {len(src)} axes of an array of shape "
            f"{fmt_shape(src)}")
    return AArray(_dtype_of(x), [src[i] for i in v])


@rule(P.broadcast_to)
def infer_broadcast_to(x, shp):
    dims = _int_dims(shp, "broadcast_to")
    if dims == () and isinstance(x, AScalar):
        return x
    src = _shape_of(x)
    try:
        out = broadcast_shapes(src, dims)
    except MyiaShapeError:
        out = None
    if out is None or len(src) > len(dims) or any(
            a is not None and b is not None and a != b for a, b in zip(out, dims)):
        raise MyiaShapeError(f"cannot broadcast shape {fmt_shape(src)} to {fmt_shape(dims)}")
    return AArray(_dtype_of(x), dims)


def _sum_dtype(d):
    return "int64" if d == "bool" else d


@rule(P.sum_to)
def infer_sum_to(x, shp):
    dims = _int_dims(shp, "sum_to")
    src = _shape_of(x)
    if src == dims and None not in dims:
        return x
    if len(src) < len(dims):
        raise MyiaShapeError(f"cannot sum shape {fmt_shape(src)} down to {fmt_shape(dims)}")
    if not dims:
        return AScalar(_sum_dtype(_dtype_of(x)), numpy=True)
    return AArray(_sum_dtype(_dtype_of(x)), dims)


def _is_integral(a):
    return isinstance(a, (AScalar, AArray)) and (a.dtype == "bool" or "int" in a.dtype)


@rule(P.unbroadcast)
def infer_unbroadcast(d, x):
    if _is_integral(x):
        return zeros_abstract(x)
    if isinstance(x, AArray):
        return AArray(x.dtype, x.shape)
    if isinstance(x, AScalar) and isinstance(d, (AArray, AScalar)):
        if isinstance(d, AScalar) and (d.dtype, d.numpy) == (x.dtype, x.numpy):
            return d
        return AScalar(x.dtype, numpy=x.numpy)  # (x's type: a float32 stays one)
    return d


@rule(P.astype)
def infer_astype(x, dt):
    name = _dtype_const(dt, "astype")
    if isinstance(x, AArray):
        return AArray(name, x.shape)
    if isinstance(x, AScalar):
        return AScalar(name, numpy=True)
    raise MyiaTypeError(f"astype of {x}")


@rule(P.array_to_scalar)
def infer_array_to_scalar(x):
    if isinstance(x, AArray):
        size = _known_size(x.shape)
        if size is not None and size != 1:
            raise MyiaShapeError(
                f"expected an array of one element, got shape {fmt_shape(x.shape)}")
        return AScalar(x.dtype, numpy=True)
    if isinstance(x, AScalar):
        return broaden(x)
    raise MyiaTypeError(f"array_to_scalar of {x}")


# ---- reductions and products -------------------------------------------------------


def _reduction(prim, dtype_of):
    @rule(prim)
    def infer_reduction(x, axis, keepdims):
        src = _shape_of(x)
        axes = _axes_of(axis, len(src))
        kd = constant_value(keepdims)
        if kd is NOT_CONSTANT:
            raise MyiaTypeError(f"keepdims of {prim.name} must be a constant, got {keepdims}")
        dtype = dtype_of(_dtype_of(x))
        if kd:
            return AArray(dtype, [1 if i in axes else d for i, d in enumerate(src)])
        out = [d for i, d in enumerate(src) if i not in axes]
        if not out:
            return AScalar(dtype, numpy=True)  # (NumPy's reductions give NumPy scalars)
        return AArray(dtype, out)

    infer_reduction.__name__ = f"infer_{prim.name}"
    return infer_reduction


_reduction(P.reduce_sum, _sum_dtype)
_reduction(P.reduce_max, lambda d: d)


@rule(P.dot)
def infer_dot(a, b):
    sa, sb = _shape_of(a), _shape_of(b)
    if not 1 <= len(sa) <= 2 or not 1 <= len(sb) <= 2:
        raise MyiaShapeError(
            f"matmul of shapes {fmt_shape(sa)} and {fmt_shape(sb)}: dot supports 1-d and "
            f"2-d arrays")
    k1, k2 = sa[-1], sb[0]
    if k1 is not None and k2 is not None and k1 != k2:
        raise MyiaShapeError(
            f"matmul of shapes {fmt_shape(sa)} and {fmt_shape(sb)}: the inner dimensions "
            f"{k1} and {k2} differ",
            hint="for A @ B, the last dimension of A must equal the first one of B")
    out = list(sa[:-1]) + list(sb[1:])
    dtype = np.result_type(np.dtype(_dtype_of(a)), np.dtype(_dtype_of(b))).name
    if not out:
        return AScalar(dtype, numpy=True)
    return AArray(dtype, out)


# ---- tuples, indexing, control --------------------------------------------------------


@rule(P.switch)
def infer_switch(c, x, y):
    if not (isinstance(c, AScalar) and c.dtype == "bool"):
        raise MyiaTypeError(f"switch expects a bool condition, got {c}")
    if c.known:
        return x if c.value else y
    try:
        return join(x, y)
    except TypeMismatch:
        raise MyiaTypeError(
            f"the two branches of this `if` give different types: {x} and {y}") from None


@rule(P.make_tuple)
def infer_make_tuple(*xs):
    return ATuple(xs)


def _check_tuple(t, what):
    if not isinstance(t, ATuple):
        raise MyiaTypeError(f"{what} expects a tuple, got {t}")


def _const_index(i, what):
    v = constant_value(i)
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        return None
    return int(v)


def _tuple_index(t, i, what):
    n = len(t)
    k = _const_index(i, what)
    if k is None:
        return None
    if not -n <= k < n:
        raise MyiaValueError(f"tuple index {k} out of range for a tuple of length {n}: {t}")
    return k % n


@rule(P.tuple_getitem)
def infer_tuple_getitem(t, i):
    if isinstance(t, AArray):  # `a, b = x`: unpacking is for tuples and lists
        raise MyiaTypeError(
            f"an array ({t}) cannot be unpacked like a tuple",
            hint="index its rows (`a, b = x[0], x[1]`), or iterate: `for row in x:`")
    _check_tuple(t, "tuple_getitem")
    return _getitem_tuple(t, i, by_key=False)  # (a dict's values by position)


def _getitem_tuple(t, i, by_key=True):
    if not t.is_dict and _is_ellipsis(i):  # (Python's words)
        kind = "list" if t.is_list else "tuple"
        raise MyiaTypeError(f"{kind} indices must be integers or slices, not ellipsis",
                            hint="`...` indexes arrays: np.array(t)[...]")
    if (by_key and t.is_dict) or isinstance(i, (AConstant, ASlice)):
        out = rules_containers.getitem_container(t, i, by_key)  # a dict's key; a slice
        if out is not None:
            return out
    k = _tuple_index(t, i, "a tuple")
    if k is not None:
        return t.elements[k]
    if isinstance(i, AScalar) and i.dtype != "bool" and "int" in i.dtype and len(t):
        # an index known only at run time: fine if all the elements have one type
        try:
            out = t.elements[0]
            for e in t.elements[1:]:
                out = join(out, e)
            return broaden(out)
        except TypeMismatch:
            pass
    raise MyiaTypeError(
        f"the index of the tuple {t} must be a constant (its elements have different "
        f"types), got {i}")


@rule(P.tuple_setitem)
def infer_tuple_setitem(t, i, v):
    _check_tuple(t, "tuple_setitem")
    k = _tuple_index(t, i, "tuple_setitem")
    if k is None:
        raise MyiaTypeError(f"the index of tuple_setitem must be a constant, got {i}")
    return t.with_elements(t.elements[:k] + (v,) + t.elements[k + 1:])


@rule(P.tuple_tail)
def infer_tuple_tail(t):
    _check_tuple(t, "tuple_tail")
    return ATuple(t.elements[1:], LIST if t.is_list else TUPLE)


@rule(P.tuple_cons)
def infer_tuple_cons(h, t):
    _check_tuple(t, "tuple_cons")
    return ATuple((h,) + t.elements, LIST if t.is_list else TUPLE)


@rule(P.len_)
def infer_len(x):
    if isinstance(x, ATuple):
        return AScalar("int64", len(x))
    if isinstance(x, AConstant) and isinstance(x.value, str):
        return AScalar("int64", len(x.value))  # a dict's key
    if isinstance(x, AArray):
        if x.ndim == 0:
            raise MyiaTypeError("len() of a 0-d array")
        d = x.shape[0]
        return AScalar("int64") if d is None else AScalar("int64", d)
    raise MyiaTypeError(f"len() of {x}", hint="len() works on tuples and arrays")


@rule(P.make_slice)
def infer_make_slice(a, b, c):
    for part in (a, b, c):
        if not ((isinstance(part, AScalar) and part.dtype != "bool" and "int" in part.dtype)
                or (isinstance(part, AConstant) and part.value is None)):
            raise MyiaTypeError(f"slice bounds must be ints or None, got {part}")
    return ASlice(a, b, c)


_LIST_INDEX_HINT = ("write the list in the brackets (`x[[0, 2]]`, `x[[0, 2], 1:]`), or "
                    "index with an integer array: `x[np.array(idx)]`")


def _index_items(index):
    if isinstance(index, ATuple):
        if index.is_list:
            # NumPy reads a list as an index array (x[[0, 2]]), not as one index per axis
            raise MyiaTypeError(f"indexing an array with a list held in a variable ({index})",
                                hint=_LIST_INDEX_HINT)
        for it in index.elements:
            if isinstance(it, ATuple):
                raise MyiaTypeError(f"indexing an array with a tuple or a list inside a "
                                    f"tuple index ({index})", hint=_LIST_INDEX_HINT)
        return list(index.elements)
    v = constant_value(index)
    if isinstance(v, tuple):
        return [abstract_of(x) for x in v]
    return [index]


def _is_ellipsis(it):
    return isinstance(it, AConstant) and it.value is Ellipsis


def expand_ellipsis_items(items, ndim):
    """The items of an array's index with its `...` replaced by the full slices it
    stands for (as many as the axes the other items leave), and whether it had one."""
    at = [k for k, it in enumerate(items) if _is_ellipsis(it)]
    if not at:
        return items, False
    if len(at) > 1:
        raise MyiaValueError("an index can only have a single ellipsis ('...')")
    used = sum(1 for it in items if not (_is_ellipsis(it) or (isinstance(it, AConstant)
                                                               and it.value is None)))
    if used > ndim:
        raise MyiaValueError(f"too many indices for an array: the array is {ndim}-dimensional, "
                             f"but {used} were indexed")
    k = at[0]
    return items[:k] + [AConstant(slice(None))] * (ndim - used) + items[k + 1:], True


def _getitem_array(x, index):
    src = x.shape
    out = []
    i = 0
    items, ellipsis = expand_ellipsis_items(_index_items(index), len(src))
    if any(isinstance(it, AArray) for it in items):  # x[idx]: a gather
        return rules_dynamic.getitem_with_array(x, items)
    for it in items:
        if isinstance(it, AConstant) and it.value is None:
            out.append(1)
            continue
        if i >= len(src):
            raise MyiaValueError(
                f"too many indices for an array of shape {fmt_shape(src)}: {index}")
        d = src[i]
        if isinstance(it, AScalar) and it.dtype != "bool" and "int" in it.dtype:
            if it.known and d is not None and not -d <= it.value < d:
                raise MyiaValueError(
                    f"index {it.value} is out of range for axis {i} of an array of shape "
                    f"{fmt_shape(src)}")
        elif isinstance(it, ASlice) or (isinstance(it, AConstant)
                                        and isinstance(it.value, slice)):
            out.append(rules_dynamic.slice_dim(it, d, i))  # (x[i:i + 4]: static length)
        else:
            raise MyiaTypeError(
                f"unsupported index {it} for an array",
                hint="index arrays with ints, slices, None, `...` and an integer array "
                     "(x[0], x[1:3], x[:, 0], x[i:i + 4], x[None, ..., 0], x[idx])")
        i += 1
    out.extend(src[i:])
    if not out and not ellipsis:
        return AScalar(x.dtype, numpy=True)  # (an element of an array: a NumPy scalar)
    return AArray(x.dtype, out)  # (with `...`, NumPy's x[0, ...] is a 0-d array)


@rule(P.index_kind)
def infer_index_kind(index):
    items = index.elements if isinstance(index, ATuple) else (index,)
    arrays = [it for it in items if isinstance(it, AArray) and it.ndim > 0]
    if len(items) == 1 and arrays and arrays[0].dtype == "bool":
        return AConstant("mask")
    return AConstant("arrays" if arrays else "basic")


@rule(P.getitem)
def infer_getitem(x, index):
    if isinstance(x, ATuple):
        return _getitem_tuple(x, index)
    if isinstance(x, AArray):
        return _getitem_array(x, index)
    raise MyiaTypeError(f"cannot index a value of type {x}")


@rule(P.getitem_grad)
def infer_getitem_grad(x, index, d):
    if isinstance(x, ATuple):
        z = list(zeros_abstract(x).elements)
        v = constant_value(index)
        if x.is_dict and not isinstance(v, slice):
            index = AScalar("int64", rules_containers.key_position(x, index))
        if isinstance(v, slice):
            rng = range(*v.indices(len(z)))
            if not isinstance(d, ATuple) or len(d) != len(rng):
                raise MyiaTypeError(f"getitem_grad of {x} at {index} with {d}")
            for j, e in zip(rng, d.elements):
                z[j] = e
        else:
            k = _tuple_index(x, index, "getitem_grad")
            if k is not None:
                z[k] = d
            else:  # an index known at run time: any element may receive d
                try:
                    z = [join(e, d) for e in z]
                except TypeMismatch:
                    raise MyiaTypeError(
                        f"the index of the tuple {x} must be a constant (its elements have "
                        f"different types), got {index}") from None
        return x.with_elements(z)
    if isinstance(x, AArray):
        return AArray(x.dtype, x.shape)
    raise MyiaTypeError(f"getitem_grad of {x}")


@rule(P.assert_)
def infer_assert(cond, message):
    return AScalar("bool")


@rule(P.make_closure)
def infer_make_closure(fn, *captured):
    if not isinstance(fn, AFunction):
        raise MyiaTypeError(f"make_closure of {fn}, which is not a function")
    return AFunction(PartialFunction(o, captured) for o in fn.options)


@rule(P.closure_bound)
def infer_closure_bound(f, i):
    k = constant_value(i)
    options = f.sorted_options() if isinstance(f, AFunction) else ()
    if len(options) != 1 or not isinstance(options[0], PartialFunction) \
            or not isinstance(k, int) or not 0 <= k < len(options[0].args):
        raise MyiaTypeError(f"closure_bound({f}, {i}): not a value bound by make_closure")
    return options[0].args[k]


# ---- sensitivities and environments -----------------------------------------------------


def zeros_abstract(x):
    """The abstract of zeros_like(x) (a constant for scalars, as the impl gives: a
    float's is the symbolic zero `ZERO`, see myia.opt.zeros)."""
    if isinstance(x, ATuple):
        return x.with_elements(zeros_abstract(e) for e in x.elements)
    if isinstance(x, AArray):
        return x
    if isinstance(x, AScalar):
        if x.dtype == "bool":
            return AScalar("bool", False)
        if "int" in x.dtype:
            return AScalar("int64", 0)
        return AScalar("float64", ZERO)
    if isinstance(x, (AConstant, ASlice)):
        return x
    return AEnv({})  # functions and environments


rule(P.zeros_like)(zeros_abstract)


@rule(P.differentiable)
def infer_differentiable(x, what):
    """x itself, unless it is (or holds) an integer or a bool: no derivative is taken
    with respect to those (JAX and autograd refuse them too)."""
    found = _integer_leaf(x, "")
    if found is not None:
        path, a = found
        it = f"its element {path}" if path else "it"
        raise MyiaGradError(
            f"cannot differentiate with respect to {constant_value(what)}: {it} is "
            f"{'a bool' if a.dtype == 'bool' else 'an integer'} ({a})",
            hint="pass a float (e.g. float(n), or x.astype(float) for an array), or "
                 "differentiate with respect to other arguments (argnums)")
    return x


@rule(P.stop_gradient)
def infer_stop_gradient(x):
    return x


@rule(P.range_bound)
def infer_range_bound(n, what, hint):
    """n, an int (or a bool): a float or an array is refused, as Python refuses it."""
    if isinstance(n, AArray) or (isinstance(n, AScalar) and "float" in n.dtype):
        kind = f"an array of {n.dtype}" if isinstance(n, AArray) else f"a {n.dtype}"
        raise MyiaTypeError(range_message(constant_value(what), kind),
                            hint=constant_value(hint))
    return n


def _integer_leaf(a, path):
    """(path, abstract) of the first integer or bool scalar or array in `a`, or None."""
    if isinstance(a, ATuple):
        for i, e in enumerate(a.elements):
            found = _integer_leaf(e, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    if isinstance(a, (AScalar, AArray)) and (a.dtype == "bool" or "int" in a.dtype):
        return path, a
    return None


@rule(P.ones_like)
def infer_ones_like(x):
    if isinstance(x, AArray):
        return x
    if isinstance(x, AScalar):
        return AScalar(x.dtype, numpy=x.numpy)
    raise MyiaTypeError(f"ones_like of {x}")


@rule(P.grad_seed)
def infer_grad_seed(out):
    if isinstance(out, AScalar) and out.dtype in ("float64", "float32", "float16"):
        return AScalar(out.dtype, 1.0 if out.dtype == "float64" else np.dtype(out.dtype).type(1))
    if isinstance(out, AArray) and out.ndim == 0 and "float" in out.dtype:
        return AScalar(out.dtype, np.dtype(out.dtype).type(1))
    if isinstance(out, AArray):
        what = f"an array of shape {fmt_shape(out.shape)}"
    elif isinstance(out, AScalar):
        what = "a bool" if out.dtype == "bool" else "an integer"
    elif isinstance(out, ATuple):
        what = f"a tuple {out}"
    else:
        what = str(out)
    raise MyiaGradError(
        f"grad needs a function that returns a float scalar, but it returned {what}",
        hint="use myia.vjp for a function with a non-scalar output, or reduce it "
             "(np.sum) to a scalar first")


def gadd_abstract(x, y):
    """The abstract of gadd(x, y): sensitivities of one structure."""
    if isinstance(x, AConstant):
        return y if x.value is None else x
    if isinstance(y, AConstant) and y.value is None:
        return x
    if isinstance(x, ASlice):
        return x
    if isinstance(x, ATuple) and isinstance(y, ATuple) and len(x) == len(y):
        # (a sensitivity built by a rule that knows no kinds is a plain tuple)
        kind = join_kinds(x.kind, y.kind) or x.kind
        return ATuple((gadd_abstract(a, b) for a, b in zip(x.elements, y.elements)), kind)
    if isinstance(x, AEnv) and isinstance(y, AEnv):
        return _env_add(x, y)
    if _is_numeric(x) and _is_numeric(y):
        return _elementwise(P.add, x, y)
    raise MyiaTypeError(f"cannot add sensitivities of types {x} and {y}")


def _env_add(a, b):
    if a.entries is None or b.entries is None:
        return ENV_ANY
    entries = dict(a.entries)
    try:
        for k, v in b.entries.items():
            entries[k] = gadd_abstract(entries[k], v) if k in entries else v
    except MyiaTypeError:
        return ENV_ANY  # (see join)
    return AEnv(entries)


@rule(P.gadd)
def infer_gadd(x, y):
    return gadd_abstract(x, y)


@rule(P.env_new)
def infer_env_new():
    return AEnv({})


def _check_env(env, key, what):
    if not isinstance(env, AEnv):
        raise MyiaTypeError(f"{what} expects an environment, got {env}")
    if not (isinstance(key, AConstant) and isinstance(key.value, EnvKey)):
        raise MyiaTypeError(f"{what} expects a constant key, got {key}")


@rule(P.env_setitem)
def infer_env_setitem(env, key, value):
    _check_env(env, key, "env_setitem")
    if env.entries is None:
        return env
    return AEnv({**env.entries, key.value: value})


@rule(P.env_getitem)
def infer_env_getitem(env, key, default):
    _check_env(env, key, "env_getitem")
    if env.entries is None:
        return _any_like(default)
    entry = env.entries.get(key.value)
    if entry is None:
        return default
    try:
        return join(entry, default)
    except TypeMismatch:
        return entry


def _any_like(a):
    """Any value of `a`'s type (what an environment of unknown contents may hold)."""
    if isinstance(a, AEnv):
        return ENV_ANY
    if isinstance(a, ATuple):
        return a.with_elements(_any_like(e) for e in a.elements)
    return broaden(a)


@rule(P.env_add)
def infer_env_add(a, b):
    if not (isinstance(a, AEnv) and isinstance(b, AEnv)):
        raise MyiaTypeError(f"env_add expects two environments, got {a} and {b}")
    return _env_add(a, b)


@rule(P.J, P.T)
def infer_transform_of_data(x):
    """J or T of data is the data (function values are handled by the engine: see
    Inferrer.infer_J and myia.infer.tangent)."""
    if isinstance(x, ATuple):
        return x.with_elements(infer_transform_of_data(e) for e in x.elements)
    if isinstance(x, AFunction):
        raise AssertionError("J or T of a function value is inferred by the engine")
    return x


@rule(P.Jinv)
def infer_Jinv(x):
    if isinstance(x, AFunction):
        raise MyiaTypeError("Jinv of a function value is not supported")
    if isinstance(x, ATuple):
        return x.with_elements(infer_Jinv(e) for e in x.elements)
    return x


__all__ = ["RULES", "broadcast_shapes", "fmt_shape",
           "infer_primitive", "zeros_abstract", "ANY"]

# the rules of the primitives of other modules (they register themselves)
from . import (rules_containers, rules_dynamic, rules_linalg, rules_reduce,  # noqa: E402,F401
               rules_shape)


def _elementwise_rule(prim):
    def infer_elementwise(*args):
        return _elementwise(prim, *args)

    infer_elementwise.__name__ = f"infer_{prim.name}"
    return infer_elementwise


# the elementwise primitives without a rule of their own (arithmetic, the C math
# library's functions...): NumPy's promotion and broadcasting
for _p in all_primitives().values():
    if _p.elementwise and _p not in RULES:
        rule(_p)(_elementwise_rule(_p))
