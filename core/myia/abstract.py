"""Abstract values: what inference knows about the value of a node.

    AScalar(dtype, value=ANY, numpy=False)
                                a bool, int64, float64 or float32 scalar; `value` is the
                                known constant or ANY; `numpy`: a NumPy scalar
                                (np.float64), not a Python number     prints as  f64
    AArray(dtype, shape)        an ndarray; a dim is None when unknown     f64[3,?]
    ATuple(elements, kind)      a tuple, a list or a dict (see "Containers")  (f64, i64[3])
    AFunction(options)          the functions a node may hold              fn(square)
    AEnv(entries)               a sensitivity environment {EnvKey: value}  env{x: f64}
                                (ENV_ANY: contents unknown)                env{...}
    AConstant(value)            a static non-numeric value: None, a str (dtype names),
                                a slice, an EnvKey, ...                    None
    ASlice(start, stop, step)   a slice with some bounds computed at run time
                                (and its length, when known: i:i + 4)

Function descriptors (the options of an AFunction):

    GraphFunction(graph, context)   a closure: the graph and the context of its parent
                                    graph (None for a graph with no free variables)
    PrimitiveFunction(prim)
    MacroFunction(macro)            `grad` / `value_and_grad` written in subset code
                                    (myia.ad.grad.GradMacro), or J of it (JOf)
    PartialFunction(fn, args)       fn with its first arguments bound (make_closure,
                                    after closure conversion)

`BOTTOM` means "no value yet" (a call whose result is still being inferred); it is
never stored on a node of a specialized graph.

Containers.  Lists and dicts have a structure known at compile time (JAX's pytrees
are the model): a list is a tuple whose `kind` is LIST, a dict a tuple of its values
whose kind names its keys (`dict_kind(keys)`, the keys in order); at run time all
three are tuples, so every backend lays them out alike, and the kind only says what
Python sees at the boundary and what `d["k"]`, `len`, `+` and iteration mean:

    ATuple([f64, f64], LIST)                        prints as  [f64, f64]
    ATuple([f64[3], f64], dict_kind(("w", "b")))               {'w': f64[3], 'b': f64}

A constant list or dict is a `ListValue` or a `DictValue` (tuples that remember their
kind), so that folding a constant keeps what it is.

Joining (`join`) merges what two paths may produce.  Scalars with different values
lose the value; arrays with different shapes get None dims; tuples join elementwise;
function sets and environments take the union; a list meets a tuple as a list (the
same values at run time; a sensitivity built by a rule that does not know kinds is a
plain tuple), and a dict meets only a dict with the same keys.  Numbers are promoted as NumPy does:
int64 with float64 (or float32) gives float64, float32 with float64 gives float64, so
that `x = 0` then `x = x + 0.5` in a loop types as a float; bool with a number gives
the number's type (the derivative of a program passes the zero sensitivity of a
bool as False on one path and as 0 on another); a Python float meets an np.float64
as an np.float64.  The specializer converts the value where such paths meet, so that
it has the joined type at run time.  Every other
mismatch (a float and a tuple, a scalar and an array, tuples of different lengths)
is a `MyiaTypeError` naming both types.  Two environments with one key holding
values of different types join as ENV_ANY (each reader still knows what it reads:
the default of env_getitem has the type of the value).
"""

import numpy as np

from .errors import MyiaTypeError
from .ir import EnvKey, Graph
from .ir.protocol import is_transform
from .prim import Primitive
from .prim.grad_ops import EnvInstance
from .prim.containers import KEY_TYPES, DictValue, ListValue, container_value, kind_of_value


class _Any:
    """The value of a scalar that is not known at compile time."""

    __slots__ = ()

    def __repr__(self):
        return "ANY"

    def __reduce__(self):
        return (_get_any, ())


ANY = _Any()


def _get_any():
    return ANY


class _Bottom:
    """No value (yet): the result of a call still being inferred."""

    __slots__ = ()

    def __repr__(self):
        return "⊥"

    __str__ = __repr__


BOTTOM = _Bottom()

SHORT_DTYPES = {"bool": "bool", "int64": "i64", "float64": "f64", "float32": "f32",
                "int32": "i32", "float16": "f16", "uint8": "u8"}


def short_dtype(dtype):
    return SHORT_DTYPES.get(dtype, dtype)


def _value_key(v):
    """A hashable key telling constants apart exactly (1, 1.0 and True differ;
    0.0 and -0.0 differ; nan equals nan)."""
    if v is ANY:
        return ANY
    if isinstance(v, (float, np.floating)):
        return (type(v).__name__, float(v).hex())
    if isinstance(v, slice):
        return ("slice", _value_key(v.start), _value_key(v.stop), _value_key(v.step))
    if isinstance(v, tuple):
        key = ("tuple",) + tuple(_value_key(x) for x in v)
        return key if type(v) is tuple else (kind_of_value(v), key)
    if isinstance(v, np.ndarray):
        return ("array", id(v))
    return (type(v).__name__, v)


class AbstractValue:
    """Base of abstract values: immutable, hashable, compared structurally."""

    __slots__ = ("_key", "_hash", "_broad")

    def _init_key(self, key):
        object.__setattr__(self, "_key", key)
        object.__setattr__(self, "_hash", hash(key))

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other):
        return type(other) is type(self) and other._key == self._key

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return str(self)


#: the dtypes of Python's numbers (bool, int, float); a scalar of another dtype (float32)
#: is always a NumPy scalar
PYTHON_DTYPES = ("bool", "int64", "float64")


class AScalar(AbstractValue):
    """A number.  `numpy`: a NumPy scalar (np.float64, np.int64, np.bool_, any float32),
    not a Python number: NumPy 2 promotes the two differently (NEP 50: a Python number
    is "weak", `f32_array * 2.0` stays float32, `f32_array * np.float64(2.0)` does not),
    and NumPy's functions and reductions give NumPy scalars (np.maximum(1, 0.5) is
    np.float64(1.0)), Python's operators on Python numbers Python numbers."""

    __slots__ = ("dtype", "value", "numpy")

    def __init__(self, dtype, value=ANY, numpy=False):
        numpy = bool(numpy) or dtype not in PYTHON_DTYPES
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "numpy", numpy)
        self._init_key((dtype, numpy, _value_key(value)))

    @property
    def known(self):
        return self.value is not ANY

    def __str__(self):
        return short_dtype(self.dtype)

    def __repr__(self):
        if self.value is ANY:
            return short_dtype(self.dtype)
        return f"{short_dtype(self.dtype)}={self.value!r}"


class AArray(AbstractValue):
    __slots__ = ("dtype", "shape")

    def __init__(self, dtype, shape):
        shape = tuple(None if d is None else int(d) for d in shape)
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "shape", shape)
        self._init_key((dtype, shape))

    @property
    def ndim(self):
        return len(self.shape)

    def __str__(self):
        dims = ",".join("?" if d is None else str(d) for d in self.shape)
        return f"{short_dtype(self.dtype)}[{dims}]"


#: the kinds of ATuple (a dict's kind is `dict_kind(keys)`)
TUPLE = "tuple"
LIST = "list"


def dict_kind(keys):
    """The kind of a dict whose keys are `keys` (constants, in order)."""
    return ("dict", tuple(keys))


def is_dict_kind(kind):
    return type(kind) is tuple


def kind_keys(kind):
    """The keys of a dict kind."""
    return kind[1]


def kind_name(kind):
    """'tuple', 'list' or 'dict' (for messages)."""
    return "dict" if is_dict_kind(kind) else kind


class ATuple(AbstractValue):
    __slots__ = ("elements", "kind")

    def __init__(self, elements, kind=TUPLE):
        elements = tuple(elements)
        if kind is not TUPLE and kind == TUPLE:
            kind = TUPLE
        object.__setattr__(self, "elements", elements)
        object.__setattr__(self, "kind", kind)
        self._init_key(elements if kind is TUPLE else (elements, kind))

    def with_elements(self, elements):
        """An ATuple of the same kind (a list stays a list) with other elements."""
        return ATuple(elements, self.kind)

    @property
    def is_list(self):
        return self.kind == LIST

    @property
    def is_dict(self):
        return is_dict_kind(self.kind)

    @property
    def keys(self):
        """The keys of a dict (None for a tuple or a list)."""
        return self.kind[1] if is_dict_kind(self.kind) else None

    def __len__(self):
        return len(self.elements)

    def __iter__(self):
        return iter(self.elements)

    def __getitem__(self, i):
        return self.elements[i]

    def _show(self, show):
        items = [show(e) for e in self.elements]
        if self.kind == LIST:
            return "[" + ", ".join(items) + "]"
        if is_dict_kind(self.kind):
            return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(self.kind[1], items)) + "}"
        if len(items) == 1:
            return f"({items[0]},)"
        return "(" + ", ".join(items) + ")"

    def __str__(self):
        return self._show(str)

    def __repr__(self):
        return self._show(repr)


class AConstant(AbstractValue):
    """A static value that is not a number: None, a str, a slice, an EnvKey..."""

    __slots__ = ("value",)

    def __init__(self, value):
        object.__setattr__(self, "value", value)
        self._init_key(_value_key(value))

    def __str__(self):
        v = self.value
        if isinstance(v, EnvKey):
            return v.ir_name
        if isinstance(v, slice):
            parts = ["" if p is None else str(p) for p in (v.start, v.stop)]
            s = ":".join(parts)
            return s + (f":{v.step}" if v.step is not None else "")
        return repr(v)


class ASlice(AbstractValue):
    """`start:stop:step` where some bound is computed at run time (abstracts).
    `length`: the number of elements it selects when that is known at compile time
    although the bounds are not (`i:i + 4`: see myia.infer.rules_dynamic), else None."""

    __slots__ = ("start", "stop", "step", "length")

    def __init__(self, start, stop, step, length=None):
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "stop", stop)
        object.__setattr__(self, "step", step)
        object.__setattr__(self, "length", length)
        self._init_key((start, stop, step, length))

    def __str__(self):
        n = f", length {self.length}" if self.length is not None else ""
        return f"slice({self.start}, {self.stop}, {self.step}{n})"


class AEnv(AbstractValue):
    """An environment: {EnvKey: abstract of the sensitivity stored under it}.

    `entries` None is "an environment of unknown contents" (ENV_ANY).  Environments
    may hold environments (the sensitivity of a captured closure); in the derivative
    of a loop of closures that nesting has no bound, so it is cut at MAX_ENV_DEPTH
    levels, below which environments are ENV_ANY (a widening: inference terminates)."""

    __slots__ = ("entries", "depth")

    def __init__(self, entries=()):
        if entries is not None:
            entries = dict(entries)
            depth = 1 + max((_env_depth(v) for v in entries.values()), default=0)
            if depth > MAX_ENV_DEPTH:
                entries = {k: _cap_envs(v, MAX_ENV_DEPTH - 1) for k, v in entries.items()}
                depth = MAX_ENV_DEPTH
            key = frozenset(entries.items())
        else:
            depth = 1
            key = None
        object.__setattr__(self, "entries", entries)
        object.__setattr__(self, "depth", depth)
        self._init_key(key)

    @property
    def known(self):
        return self.entries is not None

    def __str__(self):
        if self.entries is None:
            return "env{...}"
        items = sorted(((k.node.name or str(k.node.id)), str(v)) for k, v in self.entries.items())
        return "env{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"


MAX_ENV_DEPTH = 8
ENV_ANY = AEnv(None)


def _env_depth(a):
    t = type(a)
    if t is AEnv:
        return a.depth
    if t is ATuple:
        return max((_env_depth(e) for e in a.elements), default=0)
    return 0


def _cap_envs(a, budget):
    """`a` with environments nested at most `budget` deep (deeper ones: ENV_ANY)."""
    t = type(a)
    if t is AEnv:
        if a.depth <= budget:
            return a
        if budget <= 1:
            return ENV_ANY
        return AEnv({k: _cap_envs(v, budget - 1) for k, v in a.entries.items()})
    if t is ATuple:
        return a.with_elements(_cap_envs(e, budget) for e in a.elements)
    return a


# ---- functions --------------------------------------------------------------------


class GraphFunction:
    """A closure: `graph` made in `context` (the context of the graph's parent; None
    when the graph has no free variables)."""

    __slots__ = ("graph", "context", "_hash")

    def __init__(self, graph, context):
        self.graph = graph
        self.context = context
        self._hash = hash((graph, context))

    def __eq__(self, other):
        return (type(other) is GraphFunction and other.graph is self.graph
                and other.context is self.context)

    def __hash__(self):
        return self._hash

    @property
    def name(self):
        return self.graph.name

    def sort_key(self):
        return (0, self.graph.name, self.graph.id, self.context.id if self.context else -1)

    def __repr__(self):
        return self.graph.name


class PrimitiveFunction:
    __slots__ = ("prim",)

    def __init__(self, prim):
        self.prim = prim

    def __eq__(self, other):
        return type(other) is PrimitiveFunction and other.prim is self.prim

    def __hash__(self):
        return hash(self.prim)

    @property
    def name(self):
        return self.prim.name

    def sort_key(self):
        return (1, self.prim.name, 0, 0)

    def __repr__(self):
        return self.prim.name


class TransformFunction:
    """A transform of a known function (`grad(f)` in subset code, with f a function
    that captures nothing, or a transform object made in Python and called in subset
    code): its program is built for the types of each call
    (`transform.__myia_graph_for__(signature)`: the gradient of a gradient
    differentiates the optimized inner program, see myia.api.GradFunction).  Two of
    the same transform object are the same function."""

    __slots__ = ("transform",)

    def __init__(self, transform):
        self.transform = transform

    def __eq__(self, other):
        return type(other) is TransformFunction and other.transform is self.transform

    def __hash__(self):
        return hash(id(self.transform))

    @property
    def name(self):
        t = self.transform
        return getattr(t, "ir_name", None) or getattr(t, "__name__", None) or repr(t)

    def sort_key(self):
        return (3, self.name, id(self.transform), 0)


def transform_target(option):
    """What a transform built per call types takes for the function `option` (a
    GraphFunction or a TransformFunction): the graph, or the object whose value graph
    it is (`flags["transform"]`), or the transform; else None."""
    if option.__class__ is GraphFunction:
        return option.graph.flags.get("transform", option.graph)
    if option.__class__ is TransformFunction:
        return option.transform
    return None

    def __repr__(self):
        return self.name


class MacroFunction:
    """`grad`/`value_and_grad` in subset code (a GradMacro) or J of one (a JOf).  Two
    JOf of the same macro and level are the same function."""

    __slots__ = ("macro", "_key")

    def __init__(self, macro):
        self.macro = macro
        base = getattr(macro, "macro", None)
        self._key = (base, macro.level) if base is not None else (macro, 0)

    def __eq__(self, other):
        return type(other) is MacroFunction and other._key == self._key

    def __hash__(self):
        return hash(self._key)

    @property
    def name(self):
        return self.macro.ir_name

    def sort_key(self):
        return (2, self.name, self._key[1], 0)

    def __repr__(self):
        return self.name


class PartialFunction:
    """`fn` with its first arguments fixed (the abstracts `args`): what make_closure
    builds after closure conversion."""

    __slots__ = ("fn", "args", "_hash")

    def __init__(self, fn, args):
        self.fn = fn
        self.args = tuple(args)
        self._hash = hash((fn, self.args))

    def __eq__(self, other):
        return type(other) is PartialFunction and other.fn == self.fn and other.args == self.args

    def __hash__(self):
        return self._hash

    @property
    def name(self):
        return f"partial({self.fn.name})"

    def sort_key(self):
        return (3,) + self.fn.sort_key()[1:]

    def __repr__(self):
        return self.name


class AFunction(AbstractValue):
    __slots__ = ("options",)

    def __init__(self, options):
        options = frozenset(options)
        object.__setattr__(self, "options", options)
        self._init_key(options)

    def sorted_options(self):
        return sorted(self.options, key=lambda o: o.sort_key())

    def __str__(self):
        names = [o.name for o in self.sorted_options()]
        if len(names) == 1:
            return f"fn({names[0]})"
        return "fn{" + ", ".join(names) + "}"


# ---- from Python values -----------------------------------------------------------


def dtype_name(dtype):
    """Our dtype name for a NumPy dtype."""
    return np.dtype(dtype).name


def abstract_of(value):
    """The abstract value of a Python value, with its value when it is a scalar.

    float -> AScalar("float64"), int -> int64, bool -> bool, NumPy scalars by dtype
    (`numpy=True`),
    ndarray -> AArray(dtype, shape), tuple, list and dict -> ATuple of their kind
    (a dict's keys must be constants: str, int, bool, None); None, str, slices and EnvKeys
    are AConstants; graphs, primitives and `grad` macros are AFunctions."""
    if isinstance(value, np.generic) and isinstance(value, (np.bool_, np.integer, np.floating)):
        return AScalar(dtype_name(value.dtype), value, numpy=True)
    if isinstance(value, bool):
        return AScalar("bool", value)
    if isinstance(value, int):
        return AScalar("int64", value)
    if isinstance(value, float):
        return AScalar("float64", value)
    if isinstance(value, np.ndarray):
        return AArray(dtype_name(value.dtype), value.shape)
    if isinstance(value, (tuple, list)):
        return ATuple((abstract_of(v) for v in value), kind_of_value(value))
    if isinstance(value, dict):
        return ATuple((abstract_of(v) for v in value.values()), dict_kind(_dict_keys(value)))
    if value is None or isinstance(value, (str, slice, EnvKey)) or value is Ellipsis:
        return AConstant(value)
    if isinstance(value, Primitive):
        return AFunction([PrimitiveFunction(value)])
    if isinstance(value, Graph):
        return AFunction([GraphFunction(value, None)])
    if hasattr(value, "__myia_J__") and not is_transform(value):  # GradMacro, JOf
        return AFunction([MacroFunction(value)])
    if isinstance(value, EnvInstance):
        return AEnv({k: abstract_of(v) for k, v in value.contents.items()})
    raise MyiaTypeError(f"cannot infer the type of a value of type {type(value).__name__}",
                        hint="use numbers, NumPy arrays, or tuples, lists and dicts of them")


def _dict_keys(d):
    keys = tuple(d.keys())
    for k in keys:
        if not isinstance(k, KEY_TYPES) or isinstance(k, np.generic):
            raise MyiaTypeError(
                f"a dict key of type {type(k).__name__} ({k!r}): the keys of a dict "
                f"must be strings, ints, bools or None",
                hint="use string keys, e.g. {'w': w, 'b': b}")
    return keys


def broaden(a):
    """`a` without scalar values (types and shapes only)."""
    t = type(a)
    if t is AScalar:
        return a if a.value is ANY else AScalar(a.dtype, numpy=a.numpy)
    if t is ATuple or t is AEnv or t is ASlice:
        # computed once per value (inference broadens the same deep abstracts at every
        # call), and `a` itself when nothing changes, so that comparisons stay cheap
        b = getattr(a, "_broad", None)
        if b is None:
            b = _broaden_parts(a, t)
            object.__setattr__(a, "_broad", b)
        return b
    return a


def _broaden_parts(a, t):
    if t is ATuple:
        elements = [broaden(e) for e in a.elements]
        same = all(x is e for x, e in zip(elements, a.elements))
        return a if same else a.with_elements(elements)
    if t is AEnv:
        if a.entries is None:
            return a
        entries = {k: broaden(v) for k, v in a.entries.items()}
        same = all(entries[k] is v for k, v in a.entries.items())
        return a if same else AEnv(entries)
    parts = (broaden(a.start), broaden(a.stop), broaden(a.step))
    same = all(x is y for x, y in zip(parts, (a.start, a.stop, a.step)))
    return a if same else ASlice(*parts, a.length)


def signature_of(args):
    """The cache key of a call from Python: the argument abstracts without values."""
    return tuple(broaden(abstract_of(a)) for a in args)


NOT_CONSTANT = object()


def constant_value(a):
    """The Python value `a` stands for, or NOT_CONSTANT."""
    t = type(a)
    if t is AScalar:
        return NOT_CONSTANT if a.value is ANY else a.value
    if t is AConstant:
        return a.value
    if t is ATuple:
        out = []
        for e in a.elements:
            v = constant_value(e)
            if v is NOT_CONSTANT:
                return NOT_CONSTANT
            out.append(v)
        return tuple(out) if a.kind is TUPLE else container_value(out, a.kind)
    return NOT_CONSTANT


def is_constant(a):
    return constant_value(a) is not NOT_CONSTANT


# ---- join ---------------------------------------------------------------------------

_FLOATS = ("float16", "float32", "float64")
_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def promote(d1, d2):
    """The dtype two paths of dtypes d1 and d2 meet at (NumPy's promotion), or None:
    int64 with float64 gives float64, float32 with float64 gives float64, bool with a
    number gives the number's type."""
    if d1 == d2:
        return d1
    numeric = _FLOATS + _INTS + ("bool",)
    if d1 not in numeric or d2 not in numeric:
        return None
    if d1 == "bool" or d2 == "bool":
        return d2 if d1 == "bool" else d1
    if d1 in _INTS and d2 in _INTS:
        return np.promote_types(d1, d2).name
    return "float64"


def join(a, b):
    """The least abstract value covering both `a` and `b` (see the module doc)."""
    if a is BOTTOM:
        return b
    if b is BOTTOM or a is b:
        return a
    if a == b:
        return a
    ta = type(a)
    if ta is not type(b):
        raise TypeMismatch(a, b)
    if ta is AScalar:
        dt = promote(a.dtype, b.dtype)
        if dt is None:
            raise TypeMismatch(a, b)
        # a NumPy scalar where one of the dtype that wins is (an np.float64 meeting a
        # Python float), a Python number where a float32 meets one
        same = [x.numpy for x in (a, b) if x.dtype == dt]
        return AScalar(dt, numpy=any(same) if same else a.numpy and b.numpy)
    if ta is AArray:
        dt = promote(a.dtype, b.dtype)
        if dt is None or a.ndim != b.ndim:
            raise TypeMismatch(a, b)
        return AArray(dt, [x if x == y else None for x, y in zip(a.shape, b.shape)])
    if ta is ATuple:
        kind = join_kinds(a.kind, b.kind)
        if len(a) != len(b) or kind is None:
            raise TypeMismatch(a, b)
        try:
            return ATuple((join(x, y) for x, y in zip(a.elements, b.elements)), kind)
        except TypeMismatch:
            raise TypeMismatch(a, b) from None
    if ta is AFunction:
        return AFunction(a.options | b.options)
    if ta is AEnv:
        if a.entries is None or b.entries is None:
            return ENV_ANY
        entries = dict(a.entries)
        try:
            for k, v in b.entries.items():
                entries[k] = join(entries[k], v) if k in entries else v
        except TypeMismatch:
            # one key, values of different types: environments made at different
            # places (two frames of one loop) met; each reader still knows the type
            # of what it reads (the default of env_getitem)
            return ENV_ANY
        return AEnv(entries)
    if ta is ASlice:
        return ASlice(join(a.start, b.start), join(a.stop, b.stop), join(a.step, b.step),
                      a.length if a.length == b.length else None)
    raise TypeMismatch(a, b)


def join_kinds(k1, k2):
    """The kind where containers of kinds k1 and k2 meet, or None: a tuple meets a
    list as a list (see the module doc); dicts meet only with the same keys."""
    if k1 == k2:
        return k1
    if k1 == TUPLE:
        return k2 if k2 == LIST else None
    if k2 == TUPLE:
        return k1 if k1 == LIST else None
    return None


class TypeMismatch(MyiaTypeError):
    """Two abstract values that do not join; `.types` holds them.  Callers say where
    (the two branches of an `if`, the arguments of a function...)."""

    def __init__(self, a, b):
        super().__init__(f"incompatible types {a} and {b}")
        self.types = (a, b)


def join_all(values):
    out = BOTTOM
    for v in values:
        out = join(out, v)
    return out


__all__ = [
    "ANY", "BOTTOM", "ENV_ANY", "LIST", "TUPLE", "AArray", "DictValue", "ListValue",
    "container_value", "dict_kind", "is_dict_kind", "join_kinds", "kind_keys", "kind_name",
    "kind_of_value", "AConstant", "AEnv", "AFunction", "ASlice", "AScalar",
    "ATuple", "AbstractValue", "GraphFunction", "MacroFunction", "PrimitiveFunction",
    "PartialFunction", "TypeMismatch", "abstract_of", "broaden", "constant_value", "is_constant", "join",
    "join_all", "promote", "signature_of",
]
