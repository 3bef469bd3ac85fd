"""The Python, `math` and NumPy that the subset understands.

`PYTHON_TO_MYIA` maps a Python object that user code may name (a builtin, `np.sum`,
`math.sin`...) to what the compiler uses in its place: a primitive, or a function
written here in the subset itself (parsed like user code, so keyword arguments,
defaults and derivatives come for free: a function written over primitives needs no
rule of its own).  One module per family, each with its table `NAMES`:

    builtins     Python's builtins, the `math` and `operator` modules,
                 functools.reduce; lists, dicts, their methods and the loops over them
    np_math      elementwise functions (ufuncs): square, clip, logaddexp, sinc, real,
                 conj...; where, select
    np_reduce    reductions: sum, mean, prod, std, var, max, cumsum, diff...
    np_shape     shapes and rearrangements: reshape, transpose, concatenate, flip...
    np_linalg    products: dot, matmul, inner, outer, tensordot, einsum, kron, cross
    np_create    creation: zeros, ones, full, eye, arange, linspace, array...; the
                 scalar types as casts (np.float64(x), np.int64(x))
    methods      methods and attributes of arrays: `x.sum()`, `x.T`, `x.shape`...
    np_update    `x[index] = v` as a new array (and a new list or dict)
    unpacking    `f(*args)`: a call whose arguments come from a tuple
    scipy_special  scipy.special: expit, logit, softmax, log_softmax, logsumexp, xlogy,
                 erf, erfc, gammaln, digamma (psi); merged by `lookup` once the user's
                 code has imported scipy.special (importing it here would add 150-200
                 ms to `import myia`, and code cannot name its functions before)

Values the library computes at compile time (a permutation of axes, the shape of a
split) are written as ordinary Python marked `@compile_time`: called from subset code
with arguments known at compile time (shapes, axes, constants), they fold to a
constant; with a value known only at run time, they are a located error.
"""

import sys

from . import (builtins, methods, np_create, np_linalg, np_math, np_reduce, np_shape,
               np_update, unpacking)


def _merge(*tables):
    out = {}
    for table in tables:
        for obj, target in table.items():
            if obj in out and out[obj] is not target:
                raise ValueError(f"{obj!r} is mapped twice in myia.lib")
            out[obj] = target
    return out


PYTHON_TO_MYIA = _merge(builtins.NAMES, np_math.NAMES, np_reduce.NAMES, np_shape.NAMES,
                        np_linalg.NAMES, np_create.NAMES)

DTYPE_NAMES = np_create.DTYPE_NAMES
ARRAY_ATTRIBUTES = methods.ATTRIBUTES
ARRAY_METHODS = methods.METHODS
CONTAINER_METHODS = builtins.METHODS
MUTATING_METHODS = builtins.MUTATING_METHODS


_scipy_special_merged = False


def _merge_scipy_special():
    """Merge scipy.special's table into PYTHON_TO_MYIA if scipy.special is imported;
    whether it was merged now."""
    global _scipy_special_merged
    if _scipy_special_merged or "scipy.special" not in sys.modules:
        return False
    # import here: only once the user's code has imported scipy.special (150-200 ms)
    from . import scipy_special

    PYTHON_TO_MYIA.update(_merge(PYTHON_TO_MYIA, scipy_special.NAMES))
    _scipy_special_merged = True
    return True


def lookup(obj):
    """What the compiler uses for the Python object `obj`, or None."""
    try:
        found = PYTHON_TO_MYIA.get(obj)
    except TypeError:  # unhashable
        return None
    if found is None and not _scipy_special_merged and _merge_scipy_special():
        found = PYTHON_TO_MYIA.get(obj)
    return found
