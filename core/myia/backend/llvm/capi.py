"""Struct layouts of the CPython and NumPy objects that native code reads directly.

Native wrappers unbox arguments without calling Python: a float is `ob_fval` at
offset 16, a tuple's items start at offset 24, and a NumPy array is read from its
`PyArrayObject_fields` (data, nd, dimensions, strides, descr, flags).  These are the
layouts of CPython 3.11+ (64-bit) and NumPy 2.x; `check_layout()` verifies them
against live objects when the engine starts, so a different layout is an error at
start-up rather than a crash later.
"""

import ctypes

import numpy as np

# PyObject
OB_REFCNT = 0
OB_TYPE = 8
# PyFloatObject / NumPy double scalar
FLOAT_VALUE = 16
# PyTupleObject
TUPLE_SIZE = 16
TUPLE_ITEMS = 24
# PyArrayObject_fields
ARRAY_DATA = 16
ARRAY_ND = 24
ARRAY_DIMS = 32
ARRAY_STRIDES = 40
ARRAY_BASE = 48
ARRAY_DESCR = 56
ARRAY_FLAGS = 64
# PyArray_Descr
DESCR_BYTEORDER = 26
DESCR_TYPE_NUM = 28

NPY_ARRAY_ALIGNED = 0x0100

#: NumPy type numbers accepted for each dtype (int64 is `long` on Linux, and
#: `long long` elsewhere; both are 8 bytes on the platforms we support)
TYPE_NUMS = {"bool": (0,), "int64": (7, 9), "float32": (11,), "float64": (12,)}
#: the type number used to make arrays of each dtype
NEW_TYPE_NUM = {"bool": 0, "int64": 7, "float32": 11, "float64": 12}
ITEMSIZE = {"bool": 1, "int64": 8, "float32": 4, "float64": 8}


def _read(addr, ctype):
    return ctype.from_address(addr).value


def check_layout():
    """Raise RuntimeError if the objects do not have the layouts above."""
    problems = []
    x = 1.25
    if _read(id(x) + FLOAT_VALUE, ctypes.c_double) != 1.25:
        problems.append("float value offset")
    if _read(id(np.float64(2.5)) + FLOAT_VALUE, ctypes.c_double) != 2.5:
        problems.append("numpy float64 scalar value offset")
    t = (x, None)
    if _read(id(t) + TUPLE_SIZE, ctypes.c_ssize_t) != 2 or \
            _read(id(t) + TUPLE_ITEMS, ctypes.c_void_p) != id(x):
        problems.append("tuple layout")
    if _read(id(t) + OB_TYPE, ctypes.c_void_p) != id(tuple):
        problems.append("ob_type offset")
    base = np.arange(24.0).reshape(4, 6)
    a = base[1:, ::2]
    addr = id(a)
    if _read(addr + ARRAY_DATA, ctypes.c_void_p) != a.ctypes.data:
        problems.append("array data offset")
    if _read(addr + ARRAY_ND, ctypes.c_int) != 2:
        problems.append("array nd offset")
    dims = _read(addr + ARRAY_DIMS, ctypes.c_void_p)
    strides = _read(addr + ARRAY_STRIDES, ctypes.c_void_p)
    if (ctypes.c_ssize_t * 2).from_address(dims)[:] != list(a.shape) or \
            (ctypes.c_ssize_t * 2).from_address(strides)[:] != list(a.strides):
        problems.append("array dimensions/strides offsets")
    if _read(addr + ARRAY_DESCR, ctypes.c_void_p) != id(a.dtype):
        problems.append("array descr offset")
    if _read(addr + ARRAY_FLAGS, ctypes.c_int) != a.flags.num:
        problems.append("array flags offset")
    for dt, nums in TYPE_NUMS.items():
        d = np.dtype(dt)
        if _read(id(d) + DESCR_TYPE_NUM, ctypes.c_int) not in nums or d.num not in nums:
            problems.append(f"type number of {dt}")
    if problems:
        raise RuntimeError(
            "the LLVM backend does not know this CPython/NumPy object layout "
            f"({', '.join(problems)}); NumPy {np.__version__}")
