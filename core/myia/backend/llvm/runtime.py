"""The LLVM runtime: one long-lived JIT engine, the external symbols compiled code
calls, and the conventions every compiled function keeps.

Engine.  One per process, for the host CPU (name and features: AVX2/AVX-512 where
present), optimizing at O3 with the new pass builder (llvmlite 0.50 has no legacy pass
manager), after a process's first modules in a helper process that is replaced now
and then, because llvmlite leaks what each pipeline run leaves (see `objects`); a
program with much straight-line array code is compiled in parts, its straight-line
code without optimization (see `tiers`).  Each compiled program gets an MCJIT engine
of its own (`Code`), freed with its machine code when nothing refers to the program
any more (the callables made from it hold it).  Helpers that every program calls
are compiled once, into the process's own engine, for good (`_compile_runtime`).
Object files are cached on disk, verified (see `objcache`).

Symbols.  Compiled code declares external functions by name; this module binds
each name to an address with `llvm.add_symbol` before any module is compiled:
the C library (malloc, free...), libm (exp, log...), the CPython C API (read from
`ctypes.pythonapi`), BLAS (`dgemm`, `sgemm`, `dgemv`, `sgemv`, `ddot`, `sdot` from
the PyCapsules of `scipy.linalg.cython_blas`, which are LP64: `int *` sizes) and
glibc's libmvec (`_ZGVdN4v_exp`... on `<4 x double>`), when present: see `MVEC`.

Calling convention (see also `lower` and `wrapper`).  Every compiled function
returns an i32 status and writes its result through an out pointer:

    STATUS_OK         0  the result is written
    STATUS_ERROR      1  a run-time error: ctx.err_site names an entry of the
                         module's error table, ctx.err_a/b/c give the numbers
                         its message needs (an index, a length...)
    STATUS_INTERRUPT  2  the interrupt flag was seen, or a Python signal
                         handler raised (the Python error is then already set)
    STATUS_STACK      3  the native stack budget of this call is spent: the
                         dispatcher runs the call again on a thread with a
                         large stack (programs are pure, so this is safe)
    STATUS_NOMEM      4  an allocation failed

and takes, as its first argument, a pointer to the call's context `ctx`
(`CTX_FIELDS`): the stack limit, the depth, the interrupt countdown, the error
record and the head of the call's arena (every allocation of a call is freed when
it returns, except the buffers of the arrays it returns, which NumPy then owns).
"""

import ctypes
import ctypes.util
import hashlib
import importlib.machinery
import importlib.util
import os
import sys
import threading
import time
import weakref

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np

from ...prim.mathfn import LIBM
from . import capi
from .objcache import ObjectCache, default_dir
from .objects import IN_PROCESS_FIRST, ObjectMaker, ObjectProcess

# ---- status codes and the context -----------------------------------------------------

STATUS_OK = 0
STATUS_ERROR = 1
STATUS_INTERRUPT = 2
STATUS_STACK = 3
STATUS_NOMEM = 4

#: fields of the per-call context, all 64-bit; the last three are pointers: the list
#: of the call's arena blocks, and the free part of the current small-object chunk
CTX_FIELDS = ("stack_limit", "depth", "countdown", "check_signals",
              "err_site", "err_a", "err_b", "err_c", "arena", "bump_cur", "bump_end",
              "last_yield", "allocated")
CTX_POINTERS = ("arena", "bump_cur", "bump_end")
CTX_INDEX = {name: i for i, name in enumerate(CTX_FIELDS)}

#: how many polls (loop back edges, recursive calls) between two looks at the
#: interrupt flag and the Python signal handlers
SIGNAL_POLL_PERIOD = 1 << 8
#: cycles (of the CPU's time-stamp counter: 10-40 ms) between two moments where
#: compiled code holding the GIL lets other Python threads run.  It must exceed the
#: interpreter's switch interval (5 ms): a waiting thread asks for the GIL only when
#: its wait of one interval times out, and every release wakes it early, so releases
#: more frequent than that never let it in (it wakes, finds the GIL taken back, waits
#: again); a release after the request waits until the other thread has run.
GIL_YIELD_CYCLES = 40_000_000

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
F32 = ir.FloatType()
F64 = ir.DoubleType()
PTR = ir.PointerType()  # opaque pointer
VOID = ir.VoidType()
CTX_TYPE = ir.LiteralStructType([PTR if f in CTX_POINTERS else I64 for f in CTX_FIELDS])

#: The arena.  Every allocation of a call is freed when the call returns.  A block
#: starts with a 64-byte header (the data stays aligned for any vector width):
#: {next block, data size, capsule or null, kind}.  Allocations of at most
#: SMALL_ALLOC bytes (closure records, small arrays) are carved from CHUNK-byte
#: chunks by bumping a pointer (kind 1); larger ones get a block of their own
#: (kind 0), which may escape: it becomes the base of a returned array, owned by a
#: capsule.  A returned array that lives in a chunk is copied.
ARENA_HEADER = 64
SMALL_ALLOC = 4096
CHUNK = 64 * 1024
BLOCK_OWN = 0
BLOCK_CHUNK = 1


# ---- the interrupt flag -----------------------------------------------------------------

#: The process-wide interrupt request, polled by compiled loops and recursions (the
#: global `myia_interrupt_flag` of every module).  Set it with `request_interrupt()`
#: (e.g. from a SIGINT handler); the wrapper of the interrupted call resets it and
#: raises KeyboardInterrupt.
_INTERRUPT = ctypes.c_int32(0)


def request_interrupt():
    """Ask running compiled code to stop (safe from a signal handler or a thread)."""
    _INTERRUPT.value = 1


def clear_interrupt():
    _INTERRUPT.value = 0


def interrupt_requested():
    return bool(_INTERRUPT.value)


# ---- the memory limit -------------------------------------------------------------------

#: The most bytes one call of compiled code may hold in its arena (0: no limit), the
#: global `myia_memory_limit` of every module: a locked kernel sets it (see
#: myia_kernel).  An allocation past it fails as if memory were exhausted, and the
#: error says so with the figures.
_MEMORY_LIMIT = ctypes.c_int64(0)


def set_memory_limit(nbytes):
    """Limit what one call of compiled code may allocate (None or 0: no limit)."""
    _MEMORY_LIMIT.value = int(nbytes or 0)


def memory_limit():
    return _MEMORY_LIMIT.value or None


# ---- external symbols -------------------------------------------------------------------

#: name -> (return type, argument types, varargs) of every external function that
#: compiled code may call.  `declare(module, name)` declares one in a module.
EXTERNALS = {}


def _ext(name, ret, *args, var_arg=False):
    EXTERNALS[name] = (ret, args, var_arg)


# C library
_ext("malloc", PTR, I64)
_ext("calloc", PTR, I64, I64)
_ext("aligned_alloc", PTR, I64, I64)
_ext("free", VOID, PTR)
_ext("memcpy", PTR, PTR, PTR, I64)
_ext("memset", PTR, PTR, I32, I64)
# libm (double and float): the functions of myia.prim.mathfn, and those the backend uses
#: {C function: number of arguments}
LIBM_FUNCS = {**{c: n for c, n in LIBM.values()},
              "sqrt": 1, "floor": 1, "ceil": 1, "trunc": 1, "rint": 1, "fmod": 2, "pow": 2}
for _f, _nargs in LIBM_FUNCS.items():
    _ext(_f, F64, *([F64] * _nargs))
    _ext(_f + "f", F32, *([F32] * _nargs))
_ext("sincos", VOID, F64, PTR, PTR)
_ext("sincosf", VOID, F32, PTR, PTR)
# CPython
_ext("PyFloat_FromDouble", PTR, F64)
_ext("PyFloat_AsDouble", F64, PTR)
_ext("PyLong_FromLongLong", PTR, I64)
_ext("PyLong_AsLongLong", I64, PTR)
_ext("PyTuple_New", PTR, I64)
_ext("PyErr_Occurred", PTR)
_ext("PyErr_Clear", VOID)
_ext("PyErr_CheckSignals", I32)
_ext("Py_IncRef", VOID, PTR)
_ext("Py_DecRef", VOID, PTR)
_ext("PyObject_Call", PTR, PTR, PTR, PTR)
_ext("PyObject_CallOneArg", PTR, PTR, PTR)
_ext("PyObject_Vectorcall", PTR, PTR, PTR, I64, PTR)
_ext("PyErr_SetObject", VOID, PTR, PTR)
_ext("PyCapsule_New", PTR, PTR, PTR, PTR)
_ext("PyCapsule_GetPointer", PTR, PTR, PTR)
_ext("PyEval_SaveThread", PTR)
_ext("PyEval_RestoreThread", VOID, PTR)
# lists and dicts at the boundary (see wrapper)
_ext("PyList_New", PTR, I64)
_ext("PyDict_New", PTR)
_ext("PyDict_SetItem", I32, PTR, PTR, PTR)
_ext("PyDict_Next", I32, PTR, PTR, PTR, PTR)
_ext("PyObject_RichCompareBool", I32, PTR, PTR, I32)
# NumPy C API (bound from the _ARRAY_API table)
_ext("PyArray_NewFromDescr", PTR, PTR, PTR, I32, PTR, PTR, PTR, I32, PTR)
_ext("PyArray_DescrFromType", PTR, I32)
_ext("PyArray_SetBaseObject", I32, PTR, PTR)
# BLAS (LP64, Fortran calling convention: everything by pointer)
_ext("dgemm", VOID, PTR, PTR, PTR, PTR, PTR, PTR, PTR, PTR, PTR, PTR, PTR, PTR, PTR)
_ext("sgemm", VOID, PTR, PTR, PTR, PTR, PTR, PTR, PTR, PTR, PTR, PTR, PTR, PTR, PTR)
_ext("dgemv", VOID, PTR, PTR, PTR, PTR, PTR, PTR, PTR, PTR, PTR, PTR, PTR)
_ext("sgemv", VOID, PTR, PTR, PTR, PTR, PTR, PTR, PTR, PTR, PTR, PTR, PTR)
_ext("ddot", F64, PTR, PTR, PTR, PTR, PTR)
_ext("sdot", F32, PTR, PTR, PTR, PTR, PTR)
# the capsule destructor that frees an escaped arena block (defined in RUNTIME_IR)
_ext("myia_capsule_free", VOID, PTR)


BLAS_FUNCS = ("dgemm", "sgemm", "dgemv", "sgemv", "ddot", "sdot")


def declare(module, name):
    """The declaration of external function `name` in `module` (made once)."""
    try:
        return module.get_global(name)
    except KeyError:
        pass
    ret, args, var_arg = EXTERNALS[name]
    if name in BLAS_FUNCS:
        engine().bind_blas()
    f = ir.Function(module, ir.FunctionType(ret, args, var_arg=var_arg), name)
    if name in _PURE_LIBM:
        # pure for our purposes (glibc sets errno only for an infinite input, and
        # nothing here reads errno): LLVM may then move, merge and drop the calls
        f.attributes.add("nounwind")
        f.attributes.add("readnone")
    return f


_PURE_LIBM = ("sin", "cos", "sinf", "cosf")


def declare_global(module, name, typ=I8):
    """An external global (its address is bound with add_symbol)."""
    try:
        return module.get_global(name)
    except KeyError:
        pass
    g = ir.GlobalVariable(module, typ, name)
    g.linkage = "external"
    return g


# ---- libmvec ----------------------------------------------------------------------------

#: {(libm function, dtype): (vector function name, lanes)} for what libmvec provides on
#: this machine (empty without libmvec or without AVX2).
MVEC = {}


def _find_libmvec():
    lib = _load_library("libmvec.so.1", "mvec")
    return (lib, lib._name) if lib is not None else (None, None)


def _load_library(soname, short):
    """The shared library `soname` (glibc's usual name), else the one that
    `ctypes.util.find_library(short)` finds (it runs ldconfig: milliseconds, so only
    when the usual name fails), else None."""
    try:
        return ctypes.CDLL(soname)
    except OSError:
        pass
    path = ctypes.util.find_library(short)
    if path:
        try:
            return ctypes.CDLL(path)
        except OSError:
            pass
    return None


#: glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def _keep_freed_blocks(libc):
    """Let glibc reuse freed large blocks instead of mapping fresh pages for each.

    By default glibc maps a block of more than 128 KB on its own and unmaps it when
    freed, or trims the heap's free top above twice that: a training step that makes
    and drops a few MB of arrays then pays a page fault and a zeroed page for every
    4 KB it touches (40% of an MLP step measured here).  Blocks up to 32 MB now come
    from the heap and up to 256 MB of freed heap is kept for the next call, as the
    caching allocators of JAX and PyTorch keep theirs.  The setting is the process's
    (NumPy's arrays are served the same way); MYIA_RELEASE_MEMORY=1 keeps glibc's
    defaults."""
    if os.environ.get("MYIA_RELEASE_MEMORY", "0").lower() not in ("0", "", "no", "off"):
        return
    mallopt = getattr(libc, "mallopt", None)  # glibc's; other C libraries: nothing
    if mallopt is not None:
        mallopt(_M_MMAP_THRESHOLD, 32 << 20)
        mallopt(_M_TRIM_THRESHOLD, 256 << 20)


# ---- the engine -----------------------------------------------------------------------


def _cython_blas():
    """scipy.linalg.cython_blas, the module of the capsules of scipy's BLAS, loaded from
    its file: importing it the usual way runs scipy.linalg's __init__ first, 100-200 ms
    of imports (array-API helpers...) that the capsules do not need (loading the file
    takes 2 ms).  Where scipy's files are not laid out as expected, the usual import."""
    # import here: scipy (about 5 ms) is loaded only when a program first calls BLAS
    import scipy

    name = "scipy.linalg.cython_blas"
    stem = os.path.join(os.path.dirname(scipy.__file__), "linalg", "cython_blas")
    found = [stem + x for x in importlib.machinery.EXTENSION_SUFFIXES if os.path.exists(stem + x)]
    if not found:
        # import here: scipy.linalg's __init__ is the 100-200 ms avoided above
        from scipy.linalg import cython_blas

        return cython_blas
    loader = importlib.machinery.ExtensionFileLoader(name, found[0])
    module = importlib.util.module_from_spec(
        importlib.util.spec_from_file_location(name, found[0], loader=loader))
    loader.exec_module(module)
    return module


class Engine:
    """The process's JIT: a target machine for the host, an MCJIT engine that owns
    another one, and the O3 pipeline.  Use `engine()`."""

    def __init__(self):
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        self.triple = llvm.get_process_triple()
        self.cpu = llvm.get_host_cpu_name()
        self.features = llvm.get_host_cpu_features().flatten()
        target = llvm.Target.from_triple(self.triple)
        # one target machine per engine (the engine owns and frees it)
        self._engine_tm = target.create_target_machine(
            cpu=self.cpu, features=self.features, opt=3, jit=True)
        # the pipelines, here (`tm` gives the lowering its data layout) and in a helper
        # process where they run (see `objects`)
        self.maker = ObjectMaker(self.triple, self.cpu, self.features)
        self.tm = self.maker.tm
        if os.environ.get("MYIA_LLVM_OBJECTS", "process").lower() == "inprocess":
            self.objects = self.maker
        else:
            self.objects = ObjectProcess(self.triple, self.cpu, self.features,
                                         in_process_first=IN_PROCESS_FIRST,
                                         maker=self.maker)
            weakref.finalize(self, self.objects.close)
        self.tiers = os.environ.get("MYIA_LLVM_TIERS", "1").lower() not in ("0", "off", "no")
        self.data_layout = self.maker.data_layout
        backing = llvm.parse_assembly("")
        backing.triple = self.triple
        self.ee = llvm.create_mcjit_compiler(backing, self._engine_tm)
        self.lock = threading.RLock()
        self.keepalive = []  # Python objects whose addresses compiled code holds
        self.symbols = {}
        self.has_avx2 = "+avx2" in self.features.split(",")
        self.has_fma = "+fma" in self.features.split(",")
        self._bind_symbols()
        self.modules_compiled = 0
        self.compile_seconds = 0.0
        self.cache_hits = 0
        self.stable_names = {}
        self.name_objects()
        self._target = target
        self._memory_cache = {}  # key -> (weak reference to its engine, addresses)
        self.disk = ObjectCache(default_dir())

    # ---- symbols ------------------------------------------------------------------

    def add_symbol(self, name, address):
        if not address:
            raise RuntimeError(f"no address for the symbol {name}")
        llvm.add_symbol(name, address)
        self.symbols[name] = address

    def _bind_symbols(self):
        libc = _load_library("libc.so.6", "c")
        libm = _load_library("libm.so.6", "m")
        if libc is None or libm is None:
            raise RuntimeError("the LLVM backend needs the C library and libm, and found "
                               f"{'neither' if libc is None and libm is None else 'only one'}")
        for name in ("malloc", "calloc", "aligned_alloc", "free", "memcpy", "memset"):
            self.add_symbol(name, ctypes.cast(getattr(libc, name), ctypes.c_void_p).value)
        _keep_freed_blocks(libc)
        for name in (*LIBM_FUNCS, "sincos"):
            for n in (name, name + "f"):
                self.add_symbol(n, ctypes.cast(getattr(libm, n), ctypes.c_void_p).value)
        api = ctypes.pythonapi
        for name, (ret, args, var_arg) in EXTERNALS.items():
            if name.startswith(("Py", "_Py")) and not name.startswith("PyArray_"):
                self.add_symbol(name, ctypes.cast(getattr(api, name), ctypes.c_void_p).value)
        self._bind_numpy()
        self.blas_bound = False  # bound by `declare`, when a program first calls BLAS
        self._bind_mvec()
        self.add_symbol("myia_interrupt_flag", ctypes.addressof(_INTERRUPT))
        self.add_symbol("myia_memory_limit", ctypes.addressof(_MEMORY_LIMIT))

    def _bind_numpy(self):
        try:
            # import here: NumPy's private module, numpy._core in 2.x, numpy.core in 1.x
            from numpy._core import _multiarray_umath as mu
        except ImportError:  # NumPy 1.x
            # import here: NumPy's private module, numpy._core in 2.x, numpy.core in 1.x
            from numpy.core import _multiarray_umath as mu
        cap = mu._ARRAY_API
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype = ctypes.c_void_p
        get.argtypes = [ctypes.py_object, ctypes.c_char_p]
        table = get(cap, None)
        entries = (ctypes.c_void_p * 300).from_address(table)
        self.add_symbol("PyArray_DescrFromType", entries[45])
        self.add_symbol("PyArray_NewFromDescr", entries[94])
        self.add_symbol("PyArray_SetBaseObject", entries[282])
        if entries[2] != id(np.ndarray):
            raise RuntimeError("unexpected NumPy C-API table: PyArray_Type is not at slot 2")
        capi.check_layout()

    def bind_blas(self):
        """Bind scipy's BLAS (only a process that compiles a product pays it: see
        `_cython_blas`)."""
        with self.lock:
            if not self.blas_bound:
                self._bind_blas()
                self.blas_bound = True

    def _bind_blas(self):
        cython_blas = _cython_blas()
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype = ctypes.c_void_p
        get.argtypes = [ctypes.py_object, ctypes.c_char_p]
        getname = ctypes.pythonapi.PyCapsule_GetName
        getname.restype = ctypes.c_char_p
        getname.argtypes = [ctypes.py_object]
        for name in BLAS_FUNCS:
            cap = cython_blas.__pyx_capi__[name]
            signature = getname(cap)
            if b"int *" not in signature:
                raise RuntimeError(f"scipy's {name} is not LP64 (int *): {signature!r}")
            self.add_symbol(name, get(cap, signature))

    def _bind_mvec(self):
        MVEC.clear()
        if os.environ.get("MYIA_NO_MVEC") or not self.has_avx2:
            return
        lib, path = _find_libmvec()
        if lib is None:
            return
        llvm.load_library_permanently(path)
        for f, nargs in LIBM_FUNCS.items():
            v = "v" * nargs  # the vector ABI's name: one v per vector argument
            for dtype, sym in (("float64", f"_ZGVdN4{v}_{f}"), ("float32", f"_ZGVdN8{v}_{f}f")):
                try:
                    addr = ctypes.cast(getattr(lib, sym), ctypes.c_void_p).value
                except AttributeError:
                    continue
                self.add_symbol(sym, addr)
                MVEC[(f, dtype)] = (sym, 4 if dtype == "float64" else 8)

    def keep(self, obj):
        """Keep `obj` alive as long as compiled code may use its address; returns
        the name of an external global bound to it.  Well-known objects (types,
        True, the dispatcher's sentinels...) and arrays (by content) have names that
        do not change from one process to the next, so that compiled code can be
        cached on disk (see `compile`)."""
        name = self.stable_names.get(id(obj))
        if name is None:
            if isinstance(obj, np.ndarray):
                name = "myia_pyarr_" + array_digest(obj)
            else:
                name = f"myia_obj_{id(obj):x}"
        if name not in self.symbols:
            self.keepalive.append(obj)
            self.add_symbol(name, id(obj))
        return name

    def name_objects(self):
        # import here: wrapper imports this module
        from .wrapper import DEEP, MISMATCH

        known = {"float": float, "int": int, "tuple": tuple, "list": list, "dict": dict,
                 "true": True, "false": False,
                 "none": None, "np_true": np.True_, "np_false": np.False_,
                 "np_float64": np.float64, "np_float32": np.float32, "np_int64": np.int64,
                 "ndarray": np.ndarray, "np_array": np.array,
                 "np_ascontiguousarray": np.ascontiguousarray, "mismatch": MISMATCH,
                 "deep": DEEP}
        self.stable_names = {id(o): f"myia_pyobj_{n}" for n, o in known.items()}
        self.keepalive.extend(known.values())
        for o in known.values():
            self.keep(o)

    def data_symbol(self, arr):
        """The name of an external global at the data of (contiguous) array `arr`,
        kept alive; named by content."""
        name = "myia_data_" + array_digest(arr)
        if name not in self.symbols:
            self.keepalive.append(arr)
            self.add_symbol(name, max(arr.ctypes.data, 1))
        return name

    # ---- compiling ----------------------------------------------------------------

    def load_permanent(self, key, names):
        """The addresses of `names` from the object cached under `key` (one object),
        loaded into the process's engine; None if there is no such object."""
        objs = _unpack_objects(self.disk.load(key))
        if objs is None or len(objs) != 1:
            return None
        with self.lock:
            self.ee.add_object_file(llvm.ObjectFileRef.from_data(objs[0]))
            self.ee.finalize_object()
            addresses = {n: self.ee.get_function_address(n) for n in names}
        if not all(addresses.values()):
            raise RuntimeError(f"the cached runtime {key} lacks functions: recompile it "
                               f"(delete {self.disk.path})")
        self.cache_hits += 1
        return addresses

    def compile(self, module, names, level=3, dump=None, permanent=False, also_key=None):
        """Compile `module` (an llvmlite.ir.Module or IR text) and return the addresses
        of the functions `names`.

        Names may contain the placeholder PREFIX: it is replaced by a digest of the
        module's text, so that two modules never clash and the same program gets the
        same names in every process.  Compiled code is cached by that digest (and the
        host CPU, LLVM, llvmlite and this file's CACHE_VERSION): in memory while some
        program holds it, and as verified object files in the cache directory (see
        `objcache`), so a program compiled once is loaded, not compiled, the next time.

        Returns a `Code`: the addresses, holding the engine that owns the machine code
        (freed with it).  `permanent`: into the process's engine, never freed (the
        runtime helpers).  `also_key`: the object is cached under that key too (see
        `load_permanent`).

        A module with much straight-line code is compiled in parts (see `tiers`): its
        loops and recursions with the `level` pipeline, its array kernels with full
        instruction selection only, its straight-line code with neither
        (MYIA_LLVM_TIERS=0 compiles every module whole, with the `level` pipeline)."""
        t0 = time.perf_counter()
        parts = None  # [(text, how)], the parts others call first
        exports = []
        if self.tiers and isinstance(module, ir.Module):
            # import here: tiers imports this module
            from . import tiers

            split = tiers.partition(module)
            if split is not None:
                groups, exported = split
                if [h for _, h in groups] == [tiers.STRAIGHT]:
                    parts = [(str(module), tiers.STRAIGHT)]
                else:
                    parts = list(zip(tiers.texts(module, groups, exported),
                                     [h for _, h in groups]))
                    exports = [f.name for f in exported]
        if parts is None:
            parts = [(str(module), "optimized")]
        digest = hashlib.sha256("\0".join(
            [t for t, _ in parts] + [str([o for _, o in parts]), self.triple, self.cpu,
                                     self.features, str(llvm.llvm_version_info),
                                     _LLVMLITE_VERSION, CACHE_VERSION]).encode()).hexdigest()
        if not self.blas_bound and any(f"@{n}(" in t for t, _ in parts for n in BLAS_FUNCS):
            self.bind_blas()  # IR text that calls BLAS (an ir.Module declared it already)
        prefix = "m" + digest[:20]
        parts = [(t.replace(PREFIX, prefix), o) for t, o in parts]
        exports = [n.replace(PREFIX, prefix) for n in exports]
        real = {n: n.replace(PREFIX, prefix) for n in names}
        if dump is not None:
            dump["ir"] = "\n".join(t for t, _ in parts)
        t_parse = t_opt = 0.0
        with self.lock:
            hit = self._memory_cache.get(digest)
            held = hit[0]() if hit is not None else None
            if held is not None:
                self.cache_hits += 1
                if dump is not None:  # the same module was loaded before: optimize a copy
                    dump["optimized"] = "\n".join(
                        self.objects.make(parts, level, want_text=True)[1])
                return Code({n: hit[1][r] for n, r in real.items()}, held)
            objs = _unpack_objects(self.disk.load(digest))
            t1 = time.perf_counter()
            if objs is None or len(objs) != len(parts) or dump is not None:
                objs, optimized, t_parse, t_opt = self.objects.make(
                    parts, level, want_text=dump is not None)
                if dump is not None:
                    dump["optimized"] = "\n".join(optimized)
                self.disk.store(digest, _pack_objects(objs))
                if also_key is not None:
                    self.disk.store(also_key, _pack_objects(objs))
            else:
                self.cache_hits += 1
            held = self.ee if permanent else ProgramEngine(self)
            for k, obj in enumerate(objs):
                held.add_object_file(llvm.ObjectFileRef.from_data(obj))
                held.finalize_object()
                if k < len(objs) - 1:
                    # the functions that the next parts call
                    for n in exports:
                        a = held.get_function_address(n)
                        if a:
                            self.add_symbol(n, a)
            addresses = {r: held.get_function_address(r) for r in real.values()}
            t3 = time.perf_counter()
            if not permanent:
                ref = weakref.ref(held)
                self._memory_cache[digest] = (ref, addresses)
                weakref.finalize(held, self._forget, digest, ref)
        self.last_times = {"parse": (t1 - t0) + t_parse, "optimize": t_opt,
                           "codegen+load": t3 - t1 - t_parse - t_opt}
        self.last_parts = len(parts)
        self.modules_compiled += 1
        self.compile_seconds += time.perf_counter() - t0
        for n, a in addresses.items():
            if not a:
                raise RuntimeError(f"compiled module has no function {n}")
        return Code({n: addresses[r] for n, r in real.items()}, held)

    def _forget(self, digest, ref):
        """The engine of `digest` is gone: so is its entry (unless a new one took it)."""
        with self.lock:
            if self._memory_cache.get(digest, (None,))[0] is ref:
                del self._memory_cache[digest]

    def new_module(self, name):
        m = ir.Module(name=name)
        m.triple = self.triple
        m.data_layout = self.data_layout
        return m


class ProgramEngine:
    """The MCJIT engine of one compiled program, with a target machine of its own (an
    engine owns and frees its target machine); closed, and its machine code freed,
    when the last `Code` holding it goes."""

    def __init__(self, owner):
        tm = owner._target.create_target_machine(
            cpu=owner.cpu, features=owner.features, opt=3, jit=True)
        backing = llvm.parse_assembly("")
        backing.triple = owner.triple
        self._ee = llvm.create_mcjit_compiler(backing, tm)
        self.add_object_file = self._ee.add_object_file
        self.finalize_object = self._ee.finalize_object
        self.get_function_address = self._ee.get_function_address
        weakref.finalize(self, self._ee.close)
        ProgramEngine.live += 1
        weakref.finalize(self, ProgramEngine._gone)

    live = 0  # engines not yet freed (for tests)

    @staticmethod
    def _gone():
        ProgramEngine.live -= 1


class Code(dict):
    """{function name: address} of a compiled module, holding the engine that owns its
    machine code: keep it as long as the addresses may be called."""

    __slots__ = ("engine", "__weakref__")

    def __init__(self, addresses, engine):
        super().__init__(addresses)
        self.engine = engine


#: the placeholder for a module's own name prefix in its symbols (see Engine.compile)
PREFIX = "MYIAPFX"
#: changes whenever the code this backend emits changes incompatibly (cached objects
#: of other versions are then not used)
CACHE_VERSION = "3"
try:
    from llvmlite import __version__ as _LLVMLITE_VERSION
except ImportError:  # pragma: no cover
    _LLVMLITE_VERSION = "?"
#: the cache file of a module compiled in parts (see `tiers`) holds all its object files
_OBJECTS_MAGIC = b"MYIAOBJS"


def _pack_objects(objs):
    if len(objs) == 1:
        return objs[0]
    head = _OBJECTS_MAGIC + len(objs).to_bytes(8, "little")
    head += b"".join(len(o).to_bytes(8, "little") for o in objs)
    return head + b"".join(objs)


def _unpack_objects(blob):
    if blob is None:
        return None
    if not blob.startswith(_OBJECTS_MAGIC):
        return [blob]
    n = int.from_bytes(blob[8:16], "little")
    sizes = [int.from_bytes(blob[16 + 8 * k:24 + 8 * k], "little") for k in range(n)]
    pos = 16 + 8 * n
    out = []
    for size in sizes:
        out.append(blob[pos:pos + size])
        pos += size
    return out if pos == len(blob) else None


def array_digest(arr):
    h = hashlib.sha1()
    h.update(f"{arr.dtype.str}{arr.shape}".encode())
    h.update(arr.tobytes())
    return h.hexdigest()[:24]


_ENGINE = None
_ENGINE_LOCK = threading.Lock()


def engine():
    """The process's Engine (made at first use, with the runtime module compiled)."""
    global _ENGINE
    if _ENGINE is None:
        with _ENGINE_LOCK:
            if _ENGINE is None:
                e = Engine()
                _compile_runtime(e)
                _ENGINE = e
    return _ENGINE


def _compile_runtime(e):
    """The functions that compiled code calls by address (not inlined): the capsule
    destructor, and the helpers of `cg.RUNTIME_FUNCTIONS` (arena slow paths, array
    unboxing and boxing, strided copies), compiled once here instead of once per
    program (the module is the same in every process: its machine code comes from
    the disk cache after the first time)."""
    # import here: they import this module (and register their helpers when imported)
    from . import arrays, cg, wrapper  # noqa: F401

    names = ["myia_capsule_free", *sorted(cg.RUNTIME_FUNCTIONS)]
    key = _runtime_key(e)
    addrs = e.load_permanent(key, names)
    if addrs is None:
        addrs = e.compile(_runtime_module(e), names, permanent=True, also_key=key)
    for name in names:
        e.add_symbol(name, addrs[name])


def _runtime_key(e):
    """A digest of everything the runtime module's machine code depends on: the
    backend's sources (which generate it), the Python and NumPy whose object layouts
    it reads, the target and the versions of LLVM and llvmlite, libmvec, and the
    MYIA_ settings.  A cached runtime is found by it before its IR is built (building
    and printing that IR took half the engine's start)."""
    h = hashlib.sha256(b"myia runtime\0")
    here = os.path.dirname(os.path.abspath(__file__))
    for name in sorted(os.listdir(here)):
        if name.endswith(".py"):
            with open(os.path.join(here, name), "rb") as fh:
                h.update(name.encode() + b"\0" + fh.read() + b"\0")
    settings = sorted((k, v) for k, v in os.environ.items()
                      if k.startswith("MYIA_") and k != "MYIA_CACHE_DIR")
    h.update(repr((sys.version, np.__version__, e.triple, e.cpu, e.features,
                   llvm.llvm_version_info, _LLVMLITE_VERSION, CACHE_VERSION,
                   sorted(MVEC.items()), settings)).encode())
    return h.hexdigest()


def _runtime_module(e):
    # import here: cg imports this module
    from . import cg

    m = e.new_module("myia_runtime")
    m.myia_runtime = True  # cg.runtime_fn defines the helpers here
    # void myia_capsule_free(PyObject *capsule): free the arena block it holds
    f = ir.Function(m, ir.FunctionType(VOID, [PTR]), "myia_capsule_free")
    b = ir.IRBuilder(f.append_basic_block())
    block = b.call(declare(m, "PyCapsule_GetPointer"), [f.args[0], ir.Constant(PTR, None)])
    b.call(declare(m, "free"), [block])
    b.ret_void()
    for name, get in sorted(cg.RUNTIME_FUNCTIONS.items()):
        get(m)
    return m
