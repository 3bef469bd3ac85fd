"""The types the LLVM backend lowers, and their native representation.

The backend works on its own small type language, made from inference's abstract
values by `myia.backend.llvm.abstracts.to_ltype` (this keeps the lowering
independent of how inference spells its types):

    Scalar(dtype)          bool -> i1, int64 -> i64, float64 -> double, float32 -> float
    Array(dtype, shape)    {ptr data, [n x i64] shape, [n x i64] strides}; strides count
                           elements (not bytes); shape entries are ints where known
                           statically, None where not
    Tuple(elems)           a literal struct of the elements
    Static(value)          a value known at compile time (None, a dtype name, an axis,
                           a slice of constants...): no run-time representation ({})
    Func(options)          a function value.  `options` is a tuple of `Callee`s (a
                           graph and the values it captures, or a primitive): one
                           option -> a pointer to an arena record of the captured
                           values ({} if none); several -> {i64 tag, ptr record}.
                           Calls are direct (a branch on the tag)
    Env(entries)           an environment (the sensitivity of a closure) with static
                           keys: a struct {i1 present, T value} per key
    AnyEnv()               an environment of unknown contents (inference's ENV_ANY):
                           a pointer to a list in the arena, keys and value types
                           known at run time (see `dynenv`)
"""

import llvmlite.ir as ir
import numpy as np

from .runtime import F32, F64, I1, I8, I64, PTR

DTYPES = ("bool", "int64", "float64", "float32")


class LType:
    # the LLVM type (see `to_ir`), kept on the object: a global table would keep every
    # program's types, and the graphs their functions name, alive
    __slots__ = ("_ir",)

    def key(self):
        raise NotImplementedError

    def __eq__(self, other):
        return type(self) is type(other) and self.key() == other.key()

    def __hash__(self):
        return hash((type(self).__name__, self.key()))

    def __repr__(self):
        return str(self)

    def contains_array(self):
        return False


class Scalar(LType):
    __slots__ = ("dtype",)

    def __init__(self, dtype):
        assert dtype in DTYPES, dtype
        self.dtype = dtype

    def key(self):
        return self.dtype

    def __str__(self):
        return {"bool": "bool", "int64": "i64", "float64": "f64", "float32": "f32"}[self.dtype]

    @property
    def is_float(self):
        return self.dtype in ("float64", "float32")


class Array(LType):
    __slots__ = ("dtype", "shape")

    def __init__(self, dtype, shape):
        assert dtype in DTYPES, dtype
        self.dtype = dtype
        self.shape = tuple(shape)

    @property
    def ndim(self):
        return len(self.shape)

    def key(self):
        return (self.dtype, self.shape)

    def __str__(self):
        dims = ", ".join("?" if d is None else str(d) for d in self.shape)
        return f"{Scalar(self.dtype)}[{dims}]"

    def contains_array(self):
        return True

    @property
    def is_float(self):
        return self.dtype in ("float64", "float32")


class Tuple(LType):
    __slots__ = ("elems",)

    def __init__(self, elems):
        self.elems = tuple(elems)

    def key(self):
        return self.elems

    def __str__(self):
        return "(" + ", ".join(map(str, self.elems)) + ("," if len(self.elems) == 1 else "") + ")"

    def contains_array(self):
        return any(e.contains_array() for e in self.elems)


class Static(LType):
    """A compile-time value (compared by value where hashable, else by identity)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def key(self):
        v = self.value
        try:
            hash(v)
            return (type(v), v)
        except TypeError:
            return ("id", id(v))

    def __str__(self):
        return f"static({self.value!r})"


class Callee:
    """One function a Func value may be: `graph` with the values it captures (its free
    variables `fvs`, then, for a closure-converted record, the leading arguments bound
    to it, of types `bound`), or a primitive (`prim`).  `key` is inference's function
    option when known.  Two copies of one specialized graph (made by inlining) share
    their option; where several copies make values (`copy`), each is a Callee of its
    own, since the optimizer rewrote each in its own context (see
    `abstracts.OptionTable`).  The types of the captured values are computed by the
    lowering (they may mention this very function: the backpropagator of a loop
    captures the next one)."""

    __slots__ = ("graph", "fvs", "bound", "prim", "key", "copy")

    def __init__(self, graph=None, fvs=(), bound=(), prim=None, key=None, copy=False):
        self.graph = graph
        self.fvs = tuple(fvs)
        self.bound = tuple(bound)
        self.prim = prim
        self.key = key
        self.copy = copy

    @property
    def n_captured(self):
        return len(self.fvs) + len(self.bound)

    def ident(self):
        if self.prim is not None:
            return ("prim", self.prim)
        if self.key is not None:
            return ("opt", self.key, id(self.graph)) if self.copy else ("opt", self.key)
        return (id(self.graph), id(self.prim), self.bound)

    def __eq__(self, other):
        return isinstance(other, Callee) and self.ident() == other.ident()

    def __hash__(self):
        return hash(self.ident())

    def __repr__(self):
        if self.prim is not None:
            return self.prim.name
        return f"@{self.graph.name}"


class Func(LType):
    __slots__ = ("options",)

    def __init__(self, options):
        self.options = tuple(options)

    def key(self):
        return self.options

    def __str__(self):
        return "fn{" + ", ".join(map(repr, self.options)) + "}"

    @property
    def single(self):
        return len(self.options) == 1

    def contains_array(self):
        return False


class Env(LType):
    """entries: tuple of (EnvKey, LType) in a fixed order."""

    __slots__ = ("entries",)

    def __init__(self, entries):
        self.entries = tuple(entries)

    def key(self):
        return self.entries

    def index(self, key):
        for i, (k, _) in enumerate(self.entries):
            if k == key:
                return i
        return None

    def __str__(self):
        return "env{" + ", ".join(f"{k!r}: {t}" for k, t in self.entries) + "}"

    def contains_array(self):
        return any(t.contains_array() for _, t in self.entries)


class AnyEnv(LType):
    """An environment whose keys and value types are known only at run time."""

    __slots__ = ()

    def key(self):
        return ()

    def __str__(self):
        return "env{...}"

    def contains_array(self):
        return True  # it may


ANY_ENV = AnyEnv()


# ---- native representations --------------------------------------------------------

SCALAR_IR = {"bool": I1, "int64": I64, "float64": F64, "float32": F32}
#: the element type of an array in memory (NumPy's bool is one byte)
ELEM_IR = {"bool": I8, "int64": I64, "float64": F64, "float32": F32}
ITEMSIZE = {"bool": 1, "int64": 8, "float64": 8, "float32": 4}
EMPTY = ir.LiteralStructType([])

def array_ir(ndim):
    return ir.LiteralStructType([PTR, ir.ArrayType(I64, ndim), ir.ArrayType(I64, ndim)])


CLOSURE_IR = ir.LiteralStructType([I64, PTR])


def to_ir(t):
    """The LLVM type of a value of LType `t`."""
    r = getattr(t, "_ir", None)
    if r is not None:
        return r
    if isinstance(t, Scalar):
        r = SCALAR_IR[t.dtype]
    elif isinstance(t, Array):
        r = array_ir(t.ndim)
    elif isinstance(t, Tuple):
        r = ir.LiteralStructType([to_ir(e) for e in t.elems])
    elif isinstance(t, Static):
        r = EMPTY
    elif isinstance(t, Func):
        # one function: a pointer to the values it captures (in the arena), or nothing;
        # several: {tag (the position of the function in `options`), captured values}
        if t.single:
            r = PTR if t.options[0].n_captured else EMPTY
        else:
            r = CLOSURE_IR
    elif isinstance(t, AnyEnv):
        r = PTR
    elif isinstance(t, Env):
        r = ir.LiteralStructType([ir.LiteralStructType([I1, to_ir(et)]) for _, et in t.entries])
    else:
        raise TypeError(f"no native representation for {t!r}")
    t._ir = r
    return r


def of_value(x):
    """The LType of a Python value (the signature of a call from Python)."""
    if isinstance(x, (bool, np.bool_)):
        return Scalar("bool")
    if isinstance(x, (int, np.integer)):
        return Scalar("int64")
    if isinstance(x, np.float32):
        return Scalar("float32")
    if isinstance(x, (float, np.floating)):
        return Scalar("float64")
    if isinstance(x, np.ndarray):
        name = x.dtype.name
        if name not in DTYPES:
            return None
        return Array(name, x.shape)
    if isinstance(x, tuple):
        elems = [of_value(e) for e in x]
        if any(e is None for e in elems):
            return None
        return Tuple(elems)
    if x is None or isinstance(x, str):
        return Static(x)
    return None
