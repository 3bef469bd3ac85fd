"""NumPy's own compiled functions that compiled code calls: the inner loops of C math
functions (for a lone function of a contiguous array) and the sorts.

Sorts.  np.sort copies each lane along the axis to sort and sorts it in place with
the `sort[NPY_QUICKSORT]` function of the dtype's PyArray_ArrFuncs (from
`_PyDataType_GetArrFuncs`, slot 365 of NumPy 2's C-API table): on x86-64 a
vectorized sort (x86-simd-sort).  Our sort calls the same function on the same lanes
(`sort_symbol`), so its results are NumPy's, bit for bit (the order of -0.0 and 0.0,
which compare equal, included); on 10^5 float64 it took NumPy's time (0.4 ms) where
the stable radix argsort and gather it replaces took 1.9 ms.  The function is
checked, when it is bound, on a small array against np.sort.

Inner loops.

`np.arcsinh(x)` alone (not fused with other operations) on a C-contiguous float64 or
float32 array, or `x ** y` of such arrays of one shape (or of one and a number), can
run NumPy's own loop for it: where NumPy's loop is dispatched to
its AVX-512 target (Intel's SVML and NumPy's own vector code), it is faster than
glibc's libmvec at the width our loops use (4 doubles, 8 floats), and its results
are NumPy's, bit for bit.  Where NumPy has no such loop (an AVX2 machine: its loops
for these functions are then scalar, or slower than libmvec), our own loops run.

A ufunc's loops are in the public C struct PyUFuncObject (numpy/ufuncobject.h):
`functions[k]`, `data[k]` and the type numbers `types[k * nargs:(k + 1) * nargs]` of
loop k.  A loop is `void loop(char **args, npy_intp *dimensions, npy_intp *steps,
void *data)`; it needs no GIL.  We call the loop of `(NPY_DOUBLE, NPY_DOUBLE)` or
`(NPY_FLOAT, NPY_FLOAT)` (three of them for `power`), when its `data` is NULL (a SIMD
loop: a generic loop over a scalar C function has its function there), once over the
whole array; a number operand is read with a step of 0.  Its address
is bound to a name that does not change from one process to the next
(`myia_npyloop_<name>_<dtype>`), so compiled programs are cached on disk as usual.

Which loops are faster (`FASTER`): measured side by side on 10^5 elements (an Intel
Xeon with AVX-512, NumPy 2.4.6, glibc 2.36's libmvec; microseconds, ours -> NumPy's
loop).  float64: exp 72 -> 55, exp2 71 -> 49, expm1 105 -> 91, log 106 -> 72, log2
125 -> 83, log10 123 -> 75, log1p 162 -> 94, arcsin 131 -> 111, arccos 135 -> 108,
arctan 125 -> 102, sinh 122 -> 105, cosh 141 -> 65, tanh 196 -> 114, arcsinh 449 ->
199, arccosh 425 -> 201, arctanh 361 -> 129; NumPy's is slower for sin (78 -> 749),
cos (82 -> 755), tan (89 -> 116).  float32: exp2 24 -> 15, expm1 62 -> 27, log2 33 ->
18, log10 37 -> 23, log1p 45 -> 38, tan 39 -> 33, arcsin 42 -> 33, arccos 49 -> 38,
sinh 34 -> 29, cosh 33 -> 27, tanh 60 -> 25, arcsinh 132 -> 59, arccosh 88 -> 57,
arctanh 81 -> 46; about equal or slower: exp (32 -> 35), log (34 -> 32), sin, cos,
arctan (32 -> 34).  x ** y of two arrays (NumPy's `power`, measured later on a Xeon
with AVX-512): float64 374 -> 215, float32 213 -> 69 (ours calls libmvec's pow);
arctan2's is not faster than libmvec's (float64 160 -> 177).  With NumPy's AVX-512
loops disabled (NPY_DISABLE_CPU_FEATURES: its AVX2 target, "X86_V3", or its scalar
baseline) every one of them was 2.5x to 15x slower than libmvec: NumPy's loop is then
never taken.  (glibc's AVX-512 variants,
`_ZGVeN8v_<name>`, were faster still for all but tanh, but their last bits differ
from both NumPy's and those of the 4-lane variants our loops call.)
"""

import ctypes
import threading

import numpy as np

from .runtime import engine

#: {NumPy's dispatch target of the loop: {dtype: the functions whose NumPy loop is
#: faster than ours}} (see above; earlier NumPy 2 releases name the target AVX512_SKX)
_AVX512_FASTER = {
    "float64": frozenset({"exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
                          "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
                          "arcsinh", "arccosh", "arctanh", "power"}),
    "float32": frozenset({"exp2", "expm1", "log2", "log10", "log1p", "tan", "arcsin",
                          "arccos", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
                          "arctanh", "power"}),
}
FASTER = {"X86_V4": _AVX512_FASTER, "AVX512_SKX": _AVX512_FASTER}

#: NumPy's type numbers, and the letter of the signature keys of its dispatch table
_TYPES = {"float64": (12, "d"), "float32": (11, "f")}


class _UFunc(ctypes.Structure):
    """The head of PyUFuncObject (numpy/ufuncobject.h), as far as `types`."""

    _fields_ = [("ob_refcnt", ctypes.c_ssize_t), ("ob_type", ctypes.c_void_p),
                ("nin", ctypes.c_int), ("nout", ctypes.c_int), ("nargs", ctypes.c_int),
                ("identity", ctypes.c_int),
                ("functions", ctypes.POINTER(ctypes.c_void_p)),
                ("data", ctypes.POINTER(ctypes.c_void_p)),
                ("ntypes", ctypes.c_int), ("reserved1", ctypes.c_int),
                ("name", ctypes.c_char_p), ("types", ctypes.POINTER(ctypes.c_char))]


_LOCK = threading.Lock()
_SYMBOLS = {}  # (name, dtype) -> bound symbol name, or None
_TARGETS = None


def _dispatch_targets():
    """{ufunc name: {signature ("dd"): {"current": target, ...}}}: where NumPy's
    dispatcher sent each loop on this machine ({} if this NumPy does not say)."""
    global _TARGETS
    if _TARGETS is None:
        try:
            # import here: a private NumPy module, whose name and contents vary by version
            from numpy._core._multiarray_umath import __cpu_targets_info__ as info
        except ImportError:
            try:
                # import here: older NumPy (1.26 is accepted) has no numpy.lib.introspect
                from numpy.lib.introspect import opt_func_info

                info = opt_func_info()
            except ImportError:
                info = {}
        _TARGETS = info
    return _TARGETS


def _loop_address(ufunc, code, nin):
    """The address of `ufunc`'s loop for (code,) * nin -> (code), if it has one and
    its data is NULL; else None."""
    s = _UFunc.from_address(id(ufunc))
    nargs = nin + 1
    if s.nin != nin or s.nout != 1 or s.nargs != nargs or s.name != ufunc.__name__.encode():
        return None  # not the layout we expect
    for k in range(s.ntypes):
        if all(ord(s.types[nargs * k + j]) == code for j in range(nargs)):
            if s.data[k]:
                return None
            return s.functions[k]
    return None


def loop_symbol(name, dtype, nin=1):
    """The name of an external function bound to NumPy's loop of np.<name> (of `nin`
    inputs) on arrays of `dtype`, where that loop is faster than ours on this
    machine; else None."""
    key = (name, dtype)
    with _LOCK:
        if key in _SYMBOLS:
            return _SYMBOLS[key]
        _SYMBOLS[key] = symbol = _bind(name, dtype, nin)
        return symbol


def _bind(name, dtype, nin):
    if dtype not in _TYPES:
        return None
    code, letter = _TYPES[dtype]
    target = _dispatch_targets().get(name, {}).get(letter * (nin + 1), {}).get("current")
    if name not in FASTER.get(target, {}).get(dtype, ()):
        return None
    ufunc = getattr(np, name, None)
    if not isinstance(ufunc, np.ufunc) or ufunc.nin != nin:
        return None
    address = _loop_address(ufunc, code, nin)
    if not address:
        return None
    symbol = f"myia_npyloop_{name}_{dtype}"
    engine().add_symbol(symbol, address)
    return symbol


# ---- sorts ------------------------------------------------------------------------------------

#: the sort functions of these dtypes (NumPy's type numbers)
_SORT_TYPES = {"float64": 12, "float32": 11, "int64": 7, "bool": 0}
#: where `sort` is in PyArray_ArrFuncs: after cast[NPY_NTYPES_ABI_COMPATIBLE = 21] and
#: getitem, setitem, copyswapn, copyswap, compare, argmax, dotfunc, scanfunc, fromstr,
#: nonzero, fill, fillwithscalar (numpy/ndarraytypes.h); sort[0] is NPY_QUICKSORT
_SORT_SLOT = 21 + 12
_GET_ARRFUNCS_SLOT = 365


def sort_symbol(dtype):
    """The name of an external function bound to NumPy's default sort of `dtype`
    (`int sort(void *start, npy_intp n, void *unused)`, in place), or None where
    this NumPy does not give it as expected."""
    key = ("sort", dtype)
    with _LOCK:
        if key in _SYMBOLS:
            return _SYMBOLS[key]
        try:
            symbol = _bind_sort(dtype)
        except (AttributeError, ImportError, OSError, ValueError):
            symbol = None
        _SYMBOLS[key] = symbol
        return symbol


_SORT_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_void_p)


def _bind_sort(dtype):
    if dtype not in _SORT_TYPES or int(np.__version__.split(".")[0]) < 2:
        return None
    # import here: numpy._core is NumPy 2's private name (sort_symbol catches ImportError)
    from numpy._core import _multiarray_umath as mu

    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    table = (ctypes.c_void_p * (_GET_ARRFUNCS_SLOT + 1)).from_address(get(mu._ARRAY_API, None))
    get_arrfuncs = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.py_object)(table[_GET_ARRFUNCS_SLOT])
    descr = np.dtype(dtype)
    if descr.num != _SORT_TYPES[dtype]:
        return None
    funcs = (ctypes.c_void_p * (_SORT_SLOT + 1)).from_address(get_arrfuncs(descr))
    address = funcs[_SORT_SLOT]
    if not address or not _sorts_as_numpy(_SORT_FN(address), descr):
        return None
    symbol = f"myia_npysort_{dtype}"
    engine().add_symbol(symbol, address)
    return symbol


def _sorts_as_numpy(sort, descr):
    """Does `sort` sort a small array (nan, -0.0, repeats) as np.sort does?"""
    x = np.array([3, -1.5, np.nan, 0.0, -0.0, 7, 2, 2, -np.inf, 1e6, 5, 0.5] * 7)
    x = x[np.isfinite(x)] if descr.kind != "f" else x
    x = (x != 0) if descr.kind == "b" else x.astype(descr)
    got = x.copy()
    if sort(got.ctypes.data, len(got), None) != 0:
        return False
    return got.tobytes() == np.sort(x).tobytes()
