"""What crosses from Python into a compiled program: arguments, converted at the entry.

Every backend takes the same values, and runs none of the caller's Python code: a
subclass of float or int is read as the number it holds (its methods would otherwise
run inside the program on the VM), an int must fit in int64, an array must have a
dtype the compiler knows.  Anything else is refused here, with what to pass instead.

    bool, numpy.bool_                 -> bool
    int, numpy.integer (subclasses)   -> int, within int64 (else MyiaOverflowError)
    float, numpy.float64 (subclasses) -> float
    numpy.float32                     -> numpy.float32
    numpy.ndarray (subclasses)        -> numpy.ndarray of bool, int64, float32, float64
    tuple (namedtuples)               -> tuple of converted values
    None, functions, CuPy arrays      -> themselves
"""

import numpy as np

from .errors import MyiaOverflowError, MyiaTypeError

DTYPES = ("bool", "int64", "float32", "float64")
_INT64 = (-(1 << 63), (1 << 63) - 1)


def entry_values(args):
    """The arguments `args` as the compiled program takes them (a tuple)."""
    return tuple(entry_value(a) for a in args)


def entry_value(x):
    t = type(x)
    if t is float or t is bool or t is np.float32 or t is np.ndarray and x.dtype.name in DTYPES:
        return x  # the common cases, unchanged
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        v = int(x)
        if not _INT64[0] <= v <= _INT64[1]:
            raise MyiaOverflowError(f"the argument {v} is out of int64's range",
                                    hint="integers are int64: pass a float for larger values")
        return v
    if isinstance(x, np.float32):
        return np.float32(x)
    if isinstance(x, (float, np.floating)) and not isinstance(x, (np.float16, np.longdouble)):
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
    if x is None or callable(x) or type(x).__module__.split(".")[0] == "cupy":
        return x
    if isinstance(x, list):
        raise MyiaTypeError("a list argument: compiled programs take tuples and arrays",
                            hint="pass tuple(x), or np.array(x)")
    raise MyiaTypeError(
        f"an argument of type {t.__name__}: compiled programs take numbers, NumPy arrays, "
        f"tuples of them and functions",
        hint="convert it to one of those before the call")


def _nearest(dtype):
    if dtype.kind in "iu":
        return "int64"
    if dtype.kind == "b":
        return "bool_"
    return "float64"
