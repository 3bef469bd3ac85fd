"""A CPU stand-in for the part of CuPy the backend uses: for tests and debugging on
machines without a GPU.

    from myia.backend.cupy import CupyBackend
    from myia.backend.cupy.emulator import Emulator
    from myia.pipeline import optimized_program
    backend = CupyBackend(optimized_program, xp=Emulator())

Arrays are `EmulatedArray`s: NumPy arrays behind the same narrow interface as CuPy's
(`get()`, arithmetic, `reshape`, `astype`, indexing), refusing implicit conversion to
NumPy as CuPy does, so that a device array reaching a host-only code path fails here
too.  `ElementwiseKernel` and `ReductionKernel` run the *generated CUDA C itself*:
the operation (or the map, reduce and post-map expressions) is wrapped in a C++ loop
over the broadcast elements, compiled by the host's C++ compiler and called through
ctypes.  So the corpus can run through the whole backend (fusion decisions, kernel
bodies, launches, device scalars) on the CPU; only CuPy's own launch code, NVRTC and
the GPU's arithmetic are not exercised.  Compiled kernels are cached on disk by source.
"""

import ctypes
import hashlib
import operator
import os
import shutil
import subprocess
import tempfile
import threading

import numpy as np

_PRELUDE = """\
#include <cmath>
#include <cstring>
using namespace std;
static inline double __longlong_as_double(unsigned long long v) {
  double d; memcpy(&d, &v, sizeof d); return d; }
static inline float __int_as_float(unsigned int v) {
  float f; memcpy(&f, &v, sizeof f); return f; }
#define __device__
template <class T> static inline T atomicAdd(T *at, T v) { T old = *at; *at = old + v; return old; }
"""

_CTYPES = {"float64": "double", "float32": "float", "int64": "long long", "int32": "int",
           "bool": "bool"}


def compiler():
    """The C++ compiler the emulator uses, or None."""
    return shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++") \
        or shutil.which("clang++")


class EmulatorUnavailable(RuntimeError):
    pass


_lock = threading.Lock()
_libs = {}


def _cache_dir():
    d = os.path.join(tempfile.gettempdir(), f"myia-cupy-emulator-{os.getuid()}")
    os.makedirs(d, exist_ok=True)
    return d


def compile_cpp(source):
    """Compile `source` (C++) to a shared library; returns the ctypes CDLL (cached)."""
    digest = hashlib.sha1(source.encode()).hexdigest()[:20]
    with _lock:
        lib = _libs.get(digest)
        if lib is not None:
            return lib
        cxx = compiler()
        if cxx is None:
            raise EmulatorUnavailable("no C++ compiler (g++, c++ or clang++) is installed")
        d = _cache_dir()
        so = os.path.join(d, digest + ".so")
        if not os.path.exists(so):
            src = os.path.join(d, f"{digest}.{os.getpid()}.cpp")
            tmp = os.path.join(d, f"{digest}.{os.getpid()}.so")
            with open(src, "w") as f:
                f.write(source)
            r = subprocess.run([cxx, "-O1", "-shared", "-fPIC", "-w", "-o", tmp, src],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise CompileError(f"the C++ compiler rejected the kernel:\n{r.stderr}\n"
                                   f"--- source ---\n{source}")
            os.replace(tmp, so)
            os.remove(src)
        lib = _libs[digest] = ctypes.CDLL(so)
        return lib


class CompileError(Exception):
    """Like cupy.cuda.compiler.CompileException: a kernel's source does not compile."""


def _params(text, raw=None):
    """[(dtype, name)]; the names of `raw` parameters (CuPy's whole arrays, indexed by
    the kernel itself) are added to the set `raw`."""
    out = []
    for part in text.split(","):
        words = part.split()
        if not words:
            continue
        if words[0] == "raw":
            words = words[1:]
            if raw is None:
                raise TypeError(f"raw parameters are for ElementwiseKernel: {part!r}")
            raw.add(words[1])
        t, name = words
        out.append((np.dtype(t), name))
    return out


# ---- arrays ------------------------------------------------------------------------------


class EmulatedArray:
    """A 'device' array: a NumPy array that only the emulator's functions touch."""

    __slots__ = ("_a",)
    __array_priority__ = 100

    def __init__(self, a):
        self._a = a

    # cupy refuses implicit conversion to NumPy; so do we
    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. "
                        "Please use `.get()` to construct a NumPy array explicitly.")

    def get(self):
        return np.array(self._a, copy=True)

    @property
    def shape(self):
        return self._a.shape

    @property
    def ndim(self):
        return self._a.ndim

    @property
    def dtype(self):
        return self._a.dtype

    @property
    def size(self):
        return self._a.size

    @property
    def T(self):
        return _wrap(self._a.T)

    def reshape(self, *shape):
        return _wrap(self._a.reshape(*shape))

    def astype(self, dtype, copy=True):
        return _wrap(self._a.astype(dtype, copy=copy))

    def copy(self):
        return _wrap(self._a.copy())

    def sum(self, axis=None, keepdims=False):
        return _wrap(self._a.sum(axis=axis, keepdims=keepdims))

    def fill(self, value):
        self._a.fill(_unwrap(value))

    def __getitem__(self, index):
        return _wrap(self._a[index])

    def __setitem__(self, index, value):
        self._a[index] = _unwrap(value)

    def __len__(self):
        return len(self._a)

    def __bool__(self):
        return bool(self._a)

    def __int__(self):
        return int(self._a)

    def __float__(self):
        return float(self._a)

    def __repr__(self):
        return f"emulated_array({self._a!r})"


def _unwrap(x):
    if x.__class__ is EmulatedArray:
        return x._a
    if isinstance(x, np.ndarray):
        raise TypeError("Unsupported type <class 'numpy.ndarray'>")  # as CuPy does
    return x


def _wrap(r):
    return EmulatedArray(np.asarray(r))


def _op(fn, reverse=False):
    if reverse:
        return lambda self, other: _wrap(fn(_unwrap(other), self._a))
    return lambda self, other: _wrap(fn(self._a, _unwrap(other)))


for _name, _fn in [("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
                   ("truediv", operator.truediv), ("floordiv", operator.floordiv),
                   ("mod", operator.mod), ("pow", operator.pow), ("matmul", operator.matmul)]:
    setattr(EmulatedArray, f"__{_name}__", _op(_fn))
    setattr(EmulatedArray, f"__r{_name}__", _op(_fn, reverse=True))
for _name, _fn in [("eq", operator.eq), ("ne", operator.ne), ("lt", operator.lt),
                   ("le", operator.le), ("gt", operator.gt), ("ge", operator.ge)]:
    setattr(EmulatedArray, f"__{_name}__", _op(_fn))
EmulatedArray.__neg__ = lambda self: _wrap(-self._a)
EmulatedArray.__hash__ = None


# ---- kernels -------------------------------------------------------------------------------


def _inputs(args, params, shape, raw=()):
    """The arguments broadcast to `shape`, contiguous, in their parameter's dtype (raw
    ones as they are: the kernel indexes them)."""
    bufs = []
    for a, (dt, n) in zip(args, params):
        v = a._a if a.__class__ is EmulatedArray else np.asarray(a)
        v = v.astype(dt, copy=False)
        bufs.append(np.ascontiguousarray(v if n in raw else np.broadcast_to(v, shape)))
    return bufs


def _ptrs(bufs):
    return [b.ctypes.data_as(ctypes.c_void_p) for b in bufs]


class ElementwiseKernel:
    def __init__(self, in_params, out_params, operation, name="kernel", preamble="",
                 **kwargs):
        self.raw = set()
        self.in_params = _params(in_params, self.raw)
        self.out_params = _params(out_params, self.raw)
        self.operation = operation
        self.name = name
        self.preamble = preamble
        self._fn = None

    def source(self):
        sig = ", ".join(
            [f"const {_CTYPES[d.name]}* _p_{n}" for d, n in self.in_params]
            + [f"{_CTYPES[d.name]}* _p_{n}" for d, n in self.out_params])
        raw = self.raw
        # CuPy's names: `i` the element's index; a raw array indexed by the kernel
        loads = "\n".join(["    const long long i = _i; (void)i;"] + [
            f"    {_CTYPES[d.name]} *{n} = _p_{n};" if n in raw and (d, n) in self.out_params
            else f"    const {_CTYPES[d.name]} *{n} = _p_{n};" if n in raw
            else f"    const {_CTYPES[d.name]} {n} = _p_{n}[_i];"
            for d, n in self.in_params + self.out_params
            if n in raw or (d, n) in self.in_params])
        decls = "\n".join(f"    {_CTYPES[d.name]} {n};" for d, n in self.out_params
                           if n not in raw)
        stores = "\n".join(f"    _p_{n}[_i] = {n};" for d, n in self.out_params
                            if n not in raw)
        return (f"{_PRELUDE}{self.preamble}\nextern \"C\" void {self.name}(long long _n, {sig}) {{\n"
                f"  for (long long _i = 0; _i < _n; ++_i) {{\n{loads}\n{decls}\n"
                f"    {{\n{self.operation}\n    }}\n{stores}\n  }}\n}}\n")

    def __call__(self, *args):
        nin = len(self.in_params)
        ins, outs = args[:nin], args[nin:]
        if len(outs) != len(self.out_params):
            raise TypeError(f"{self.name}: pass the {len(self.out_params)} output arrays")
        names = [n for _, n in self.in_params + self.out_params]
        # the loop runs over the broadcast of the arguments that are not raw
        shape = np.broadcast_shapes(*[np.shape(_unwrap(a)) for a, n in zip(args, names)
                                      if n not in self.raw])
        if self._fn is None:
            self._fn = getattr(compile_cpp(self.source()), self.name)
        in_bufs = _inputs(ins, self.in_params, shape, self.raw)
        out_bufs = []
        for o, (dt, n) in zip(outs, self.out_params):
            if n in self.raw:  # written in place, as on the device
                if o.dtype != dt or not o._a.flags.c_contiguous:
                    raise TypeError(f"{self.name}: the raw output {n} must be a contiguous "
                                    f"{dt} array")
                out_bufs.append(o._a)
            else:
                out_bufs.append(np.empty(shape, dt))
        self._fn(ctypes.c_longlong(int(np.prod(shape))), *_ptrs(in_bufs + out_bufs))
        for o, b, (_, n) in zip(outs, out_bufs, self.out_params):
            if n not in self.raw:
                o._a[...] = b
        return outs[0] if len(outs) == 1 else tuple(outs)


class ReductionKernel:
    def __init__(self, in_params, out_params, map_expr, reduce_expr, post_map_expr,
                 identity, name="reduce_kernel", reduce_type=None, preamble="", **kwargs):
        self.in_params = _params(in_params)
        self.out_params = _params(out_params)
        self.map_expr = map_expr
        self.reduce_expr = reduce_expr
        self.post_map_expr = post_map_expr
        self.identity = identity
        self.name = name
        self.reduce_type = reduce_type or _CTYPES[self.out_params[0][0].name]
        self.preamble = preamble
        self._fn = None

    def source(self):
        (odt, oname), = self.out_params
        rt = self.reduce_type
        sig = ", ".join([f"const {_CTYPES[d.name]}* _p_{n}" for d, n in self.in_params]
                        + [f"{_CTYPES[odt.name]}* _p_{oname}"])
        loads = "\n".join(f"      const {_CTYPES[d.name]} {n} = _p_{n}[_i * _r + _j];"
                          for d, n in self.in_params)
        return (f"{_PRELUDE}{self.preamble}\n"
                f"#define REDUCE(a, b) ({self.reduce_expr})\n"
                f"extern \"C\" void {self.name}(long long _m, long long _r, {sig}) {{\n"
                f"  for (long long _i = 0; _i < _m; ++_i) {{\n"
                f"    {rt} _s = {rt}({self.identity});\n"
                f"    for (long long _j = 0; _j < _r; ++_j) {{\n{loads}\n"
                f"      {rt} _a = static_cast<{rt}>({self.map_expr});\n"
                f"      _s = REDUCE(_s, _a);\n    }}\n"
                f"    {_CTYPES[odt.name]} {oname};\n"
                f"    {{ {rt} a = _s; {self.post_map_expr}; }}\n"
                f"    _p_{oname}[_i] = {oname};\n  }}\n}}\n")

    def __call__(self, *args, axis=None, keepdims=False):
        shape = np.broadcast_shapes(*[np.shape(_unwrap(a)) for a in args])
        nd = len(shape)
        axes = tuple(range(nd)) if axis is None else tuple(
            a % nd for a in (axis if isinstance(axis, tuple) else (axis,)))
        keep = [i for i in range(nd) if i not in axes]
        perm = keep + list(axes)
        out_shape = tuple(shape[i] for i in keep)
        m = int(np.prod(out_shape))
        r = int(np.prod([shape[i] for i in axes]))
        if self._fn is None:
            self._fn = getattr(compile_cpp(self.source()), self.name)
        bufs = [np.ascontiguousarray(np.transpose(b, perm)).reshape(m, r)
                for b in _inputs(args, self.in_params, shape)]
        out = np.empty(m, self.out_params[0][0])
        self._fn(ctypes.c_longlong(m), ctypes.c_longlong(r), *_ptrs(bufs + [out]))
        out = out.reshape(out_shape)
        if keepdims:
            out = out.reshape(tuple(1 if i in axes else n for i, n in enumerate(shape)))
        return EmulatedArray(out)


# ---- the module ------------------------------------------------------------------------------


class _Cuda:
    @staticmethod
    def is_available():
        return True


def _fn1(np_fn):
    return lambda x, *a, **k: _wrap(np_fn(_unwrap(x), *a, **k))


def _fn2(np_fn):
    return lambda x, y, *a, **k: _wrap(np_fn(_unwrap(x), _unwrap(y), *a, **k))


class Emulator:
    """The array module: `xp.asarray`, `xp.sum`, `xp.ElementwiseKernel`...  Kernels
    launched are counted in `launches`."""

    ndarray = EmulatedArray
    cuda = _Cuda()
    ElementwiseKernel = ElementwiseKernel
    ReductionKernel = ReductionKernel

    def __init__(self):
        for name in ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
                     "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
                     "arccosh", "arctanh", "sqrt", "abs", "sign", "floor", "ceil", "trunc",
                     "rint", "invert", "logical_not",
                     "zeros_like", "ones_like", "transpose", "sum", "max",
                     "prod", "cumsum", "cumprod", "flip", "argmax", "argmin",
                     "ascontiguousarray"):
            setattr(self, name, _fn1(getattr(np, name)))
        for name in ("true_divide", "floor_divide", "mod", "power", "maximum", "minimum",
                     "fmax", "fmin", "arctan2", "hypot", "dot", "matmul"):
            setattr(self, name, _fn2(getattr(np, name)))

    @staticmethod
    def asarray(x, dtype=None):
        if x.__class__ is EmulatedArray:
            return x if dtype is None or x.dtype == dtype else x.astype(dtype)
        return EmulatedArray(np.array(x, dtype=dtype, copy=True))

    @staticmethod
    def asnumpy(x):
        return x.get() if x.__class__ is EmulatedArray else np.asarray(x)

    @staticmethod
    def empty(shape, dtype=float):
        return EmulatedArray(np.empty(shape, dtype))

    @staticmethod
    def zeros(shape, dtype=float):
        return EmulatedArray(np.zeros(shape, dtype))

    @staticmethod
    def broadcast_to(x, shape):
        return EmulatedArray(np.broadcast_to(_unwrap(x), shape))

    @staticmethod
    def where(c, x, y):
        return _wrap(np.where(_unwrap(c), _unwrap(x), _unwrap(y)))

    @staticmethod
    def reshape(x, shape):
        return _wrap(np.reshape(_unwrap(x), shape))


__all__ = ["CompileError", "ElementwiseKernel", "EmulatedArray", "Emulator",
           "EmulatorUnavailable", "ReductionKernel", "compile_cpp", "compiler"]
