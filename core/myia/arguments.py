"""What crosses between Python and a compiled program: arguments, converted at the
entry, and the lists and dicts of results.

Every backend takes the same values, and runs none of the caller's Python code: a
subclass of float or int is read as the number it holds (its methods would otherwise
run inside the program on the VM), an int must fit in int64, an array must have a
dtype the compiler knows.  Anything else is refused here, with what to pass instead.

    bool                              -> bool
    int (subclasses)                  -> int, within int64 (else MyiaOverflowError)
    float (subclasses)                -> float
    numpy.bool_                       -> numpy.bool_
    numpy.integer                     -> numpy.int64, within int64
    numpy.float64, numpy.float32      -> themselves
    numpy.ndarray (subclasses)        -> numpy.ndarray of bool, int64, float32, float64
    tuple (namedtuples)               -> tuple of converted values
    list                              -> list of converted values
    dict (str, int, bool, None keys)  -> dict of converted values, keys in their order
    None, functions, CuPy arrays      -> themselves

A NumPy scalar stays one: NumPy 2 promotes it as a dtype, where it does not promote a
Python number (NEP 50: `x32 * np.float64(2.0)` is float64, `x32 * 2.0` float32), and
a program's scalar result is the one its type says (a Python float, or an np.float64:
`exit_value`; the LLVM backend boxes the same).

Inside a program a list and a dict are tuples (a dict's values, in the order of its
keys; see myia.abstract, "Containers"): a backend that runs Python values (the
VM) takes `internal_values(args)` and gives back `exit_value(result, abstract)`, which
makes the lists and dicts the program's result type says.  The LLVM backend does the
same in native code (myia.backend.llvm.wrapper).
"""

import numpy as np

from .errors import MyiaOverflowError, MyiaTypeError
from .abstract import AScalar, ATuple
from .prim.containers import DictValue, same_container

DTYPES = ("bool", "int64", "float32", "float64")
_INT64 = (-(1 << 63), (1 << 63) - 1)


def entry_values(args, device=None):
    """The arguments `args` as the compiled program takes them (a tuple); arrays of the
    class `device` (a backend's own arrays: CuPy's, or its emulator's) as they are."""
    try:
        return tuple(a if a.__class__ is device else entry_value(a) for a in args)
    except RecursionError:
        raise MyiaTypeError(
            "an argument holds itself (a list or a dict that contains itself) or is "
            "nested too deep: compiled programs take containers of a fixed structure",
            hint="pass a structure without cycles, or an array") from None


def entry_value(x):
    t = type(x)
    if t is float or t is bool or t is np.float32 or t is np.float64 or t is np.bool_ \
            or t is np.ndarray and x.dtype.name in DTYPES:
        return x  # the common cases, unchanged
    if isinstance(x, (bool, np.bool_)):
        return np.bool_(x) if isinstance(x, np.bool_) else bool(x)
    if isinstance(x, (int, np.integer)):
        v = int(x)
        if not _INT64[0] <= v <= _INT64[1]:
            raise MyiaOverflowError(f"the argument {v} is out of int64's range",
                                    hint="integers are int64: pass a float for larger values")
        return np.int64(v) if isinstance(x, np.integer) else v
    if isinstance(x, np.float32):
        return np.float32(x)
    if isinstance(x, np.float64):
        return np.float64(x)
    if isinstance(x, float):
        return float(x)
    if isinstance(x, np.ndarray):
        if x.dtype.name not in DTYPES:
            raise MyiaTypeError(
                f"an array argument of dtype {x.dtype.name}: compiled programs take arrays "
                f"of {', '.join(DTYPES)}",
                hint=f"convert it first, e.g. x.astype(np.{_nearest(x.dtype)})")
        return np.asarray(x)  # a subclass (np.matrix...) as a plain array
    if isinstance(x, tuple):
        return tuple(entry_value(e) for e in x)
    if isinstance(x, list):
        return [entry_value(e) for e in x]
    if isinstance(x, dict):
        return {_key(k): entry_value(v) for k, v in x.items()}
    if x is None or t is str or callable(x) or type(x).__module__.split(".")[0] == "cupy":
        return x  # (None and strings are static: the program is specialized for them)
    raise MyiaTypeError(
        f"an argument of type {t.__name__}: compiled programs take numbers, NumPy arrays, "
        f"tuples, lists and dicts of them, strings, None and functions",
        hint="convert it to one of those before the call")


def _key(k):
    """A dict key as the program sees it (a constant: str, int, bool or None)."""
    t = type(k)
    if t is str or t is int or t is bool or k is None:
        return k
    if isinstance(k, str):
        return str(k)
    if isinstance(k, (bool, np.bool_)):
        return bool(k)
    if isinstance(k, (int, np.integer)):
        return int(k)
    raise MyiaTypeError(
        f"a dict key of type {t.__name__} ({k!r}): the keys of a dict argument must be "
        f"strings, ints, bools or None",
        hint="use string keys, e.g. {'w': w, 'b': b}")


def internal_values(args):
    """The arguments as a program holds them: lists and dicts as tuples (a dict as a
    DictValue, which names its keys for the VM's untyped programs)."""
    return [internal_value(a) for a in args]


def internal_value(x):
    t = type(x)
    if t is list or t is tuple:
        return tuple(internal_value(e) for e in x)
    if t is dict:
        return DictValue([internal_value(e) for e in x.values()], x.keys())
    return x


def structured_like(x, model):
    """The value `x` (tuples, from a program) with the lists and dicts of the Python
    value `model` (a sensitivity has the structure of its primal)."""
    if not isinstance(x, tuple) or len(x) != len(model if isinstance(model, (tuple, list,
                                                                             dict)) else ()):
        return x
    if isinstance(model, dict):
        return {k: structured_like(e, m) for (k, m), e in zip(model.items(), x)}
    items = [structured_like(e, m) for e, m in zip(x, model)]
    return items if isinstance(model, list) else tuple(items)


def exit_value(x, a):
    """The result `x` of a program whose result type is `a` (an abstract), with the
    lists and dicts that `a` says (tuples inside the program), and its numbers of the
    Python types it says (a Python float, an np.float64...)."""
    if a.__class__ is AScalar:
        return _number(x, a)
    if a.__class__ is not ATuple or not isinstance(x, tuple) or len(x) != len(a.elements):
        return x
    items = [exit_value(e, ea) for e, ea in zip(x, a.elements)]
    if a.is_list:
        return items
    if a.is_dict:
        return dict(zip(a.keys, items))
    return tuple(items)


_PYTHON_TYPES = {"bool": bool, "int64": int, "float64": float}


def _number(x, a):
    """The number x as the type of its abstract `a`."""
    if a.numpy:
        want = DTYPE_TYPES.get(a.dtype)
        return x if want is None or type(x) is want else want(x)
    want = _PYTHON_TYPES.get(a.dtype)
    return x if want is None or type(x) is want else want(x)


DTYPE_TYPES = {"bool": np.bool_, "int64": np.int64, "float32": np.float32, "float64": np.float64}


def _nearest(dtype):
    if dtype.kind in "iu":
        return "int64"
    if dtype.kind == "b":
        return "bool_"
    return "float64"


def fresh(result, arrays):
    """`result` with each of its arrays that shares memory with one of `arrays` (the
    arguments) or with a constant of the program (read-only: see
    myia.parser.resolve.snapshot) copied: a result is a new array on every backend, as
    in JAX (`np.copy(x)`, `x * 1.0` and a global `W` returned are not x or W)."""
    if isinstance(result, tuple):
        return same_container(result, [fresh(r, arrays) for r in result])
    if isinstance(result, np.ndarray) and (
            not result.flags.writeable or any(np.may_share_memory(result, a) for a in arrays)):
        return result.copy()
    return result
