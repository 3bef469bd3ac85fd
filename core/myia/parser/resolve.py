"""Global names: from a Python value to an IR node.

A name that is not a local variable of the function (or of an enclosing one) is looked
up by a `Resolver`: in the function's closure cells, then its module globals, then the
builtins.  `Resolver.to_node` then turns the Python value into a node, in this order:

    an object of a user's class  refused before anything reads it (`foreign_part`): a
                               subclass of float, an object with `__float__`...
    SPECIAL_VALUES             the myia API functions (`myia.grad`...), registered by them
    Primitive                  Constant(prim)
    transform object           Constant(value_graph(x)): `df = myia.grad(f)`, then `df(x)`
                               (built per call signature; see myia.ir.protocol)
    lib.lookup(value)   a primitive, or a function written in the subset (parsed)
    numpy dtype / float / int  Constant("float32")... when used as a value (`dtype=`)
    module                     a namespace: only attribute access resolves it
    Python function            Constant(parse(fn))
    int, float, str, None, ndarray, NumPy scalar, tuple of these: Constant(value), an
                               array as it is now (`snapshot`: read when compiled, as JAX
                               reads a global)
    list, dict                 tuple_as(make_tuple(items...), kind): a list or a dict
    anything else              an error that says why and what to do

Some names stand for an object before any node is made (`range` in a `for`,
`np.linalg.inv`, a default `dtype=np.float32`): `NameResolution`, the Parser's mixin
that tells local names from global ones, and `_global_static` (for the defaults of a
top-level def) give the Python object; a module's attribute is read from the module then
(`_module_attribute`), and the modules outside the subset give no data.
"""

import ast
import builtins
import difflib
import hashlib
import operator
import sys
import sysconfig
import types
import weakref

import numpy as np

from .. import lib
from ..ir.protocol import is_transform, value_graph
from ..errors import MyiaNameError, MyiaSourceError, MyiaSyntaxError, MyiaTypeError
from ..ir import Constant, Graph
from ..prim import Primitive
from ..prim import ops as P
from ..prim.containers import KEY_TYPES

#: Python objects that stand for something else in compiled code: {object: value}, the
#: value being put in a Constant (a Primitive, a Graph, or any object a later stage knows,
#: e.g. the macro behind `myia.grad`).  Filled by the modules that define such objects,
#: through `register_special`; the parser itself knows none of them.
SPECIAL_VALUES = {}


def register_special(obj, value):
    """Make `obj`, when user code names it, compile to `Constant(value)`."""
    SPECIAL_VALUES[obj] = value


_UNSET = object()

SUPPORTED_HINT = (
    "the Python, NumPy and scipy.special functions Myia supports are listed in "
    "myia.lib.PYTHON_TO_MYIA; functions you write in the subset work too"
)


class Resolver:
    """Looks up the global names of one Python function.

    `globals` is the module namespace (any mapping, e.g. the kernel session's), and
    `closure` the values of the function's Python closure cells (treated like globals).
    """

    def __init__(self, globals, closure=None):
        self.globals = globals
        self.closure = closure or {}

    @classmethod
    def for_function(cls, fn):
        closure = {}
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                closure[name] = cell.cell_contents
            except ValueError:  # an empty cell: the name is unbound at this time
                pass
        return cls(fn.__globals__, closure)

    def lookup(self, name):
        """The Python value of a global `name`, or `_UNSET`."""
        if name in self.closure:
            return self.closure[name]
        if name in self.globals:
            return self.globals[name]
        return getattr(builtins, name, _UNSET)

    def known_names(self):
        """The names a "did you mean" may suggest: the function's globals and the
        builtins the subset knows (never `open` or `eval`)."""
        known = [n for n in dir(builtins) if n in ("range", "True", "False", "None")
                 or _known_builtin(getattr(builtins, n))]
        return list(self.closure) + [n for n in self.globals if not n.startswith("__")] + known

    # ---- Python value -> node ----------------------------------------------------

    def to_node(self, value, graph, loc, text, as_callee=False):
        """The node standing for the Python `value` (named `text` in the source).

        `graph` is where a tuple of functions gets its `make_tuple`; `as_callee` is
        true when the value is called (`float(x)` is a conversion, `dtype=float` a dtype).
        """
        check_not_foreign(value, text, loc)  # before any hash or attribute of it
        special = _get(SPECIAL_VALUES, value)
        if special is not None:
            return Constant(special, loc)
        if isinstance(value, Primitive):
            return Constant(value, loc)
        if is_transform(value):
            # myia.grad(f)... bound to a global name: a graph that calls the object, whose
            # program inference builds for the types of each call
            return Constant(value_graph(value), loc)
        if not as_callee and _get(lib.DTYPE_NAMES, value) is not None:
            return Constant(lib.DTYPE_NAMES[value], loc)
        mapped = lib.lookup(value)
        if mapped is not None:
            if isinstance(mapped, Primitive):
                return Constant(mapped, loc)
            return Constant(parse_function(mapped), loc)
        if isinstance(value, operator.itemgetter):  # a key for sorted()
            items = value.__reduce__()[1]
            if len(items) == 1 and _is_constant_data(items[0]):
                return Constant(("operator.itemgetter", items[0]), loc)
        if isinstance(value, types.ModuleType):
            raise MyiaSyntaxError(
                f"module `{text}` cannot be used as a value", loc,
                hint=f"use one of its functions or constants, e.g. `{text}.something`",
            )
        if isinstance(value, types.FunctionType) and not _is_library_function(value):
            return Constant(parse_function(value), loc)
        if isinstance(value, Graph):
            return Constant(value, loc)
        if _is_constant_data(value):
            return Constant(snapshot(value), loc)
        if isinstance(value, tuple):
            nodes = [self.to_node(v, graph, loc, f"{text}[{i}]") for i, v in enumerate(value)]
            return graph.apply(P.make_tuple, *nodes, loc=loc)
        if isinstance(value, (list, dict)):
            return self._container(value, graph, loc, text)
        raise self._unsupported(value, loc, text)

    def _container(self, value, graph, loc, text):
        """A global list or dict: its value when the first parse reads it (a constant
        of the program, as any global), a list or a dict of the nodes of its items."""
        if isinstance(value, dict):
            for k in value:
                if not isinstance(k, KEY_TYPES) or isinstance(k, np.generic):
                    raise MyiaTypeError(
                        f"cannot compile `{text}`: a dict key of type {type(k).__name__} "
                        f"({k!r})", loc, hint="the keys of a dict must be strings, ints, "
                        "bools or None")
            items, kind = list(value.items()), ("dict", tuple(value))
        else:
            items, kind = list(enumerate(value)), "list"
        nodes = [self.to_node(v, graph, loc, f"{text}[{k!r}]") for k, v in items]
        return graph.apply(P.tuple_as, graph.apply(P.make_tuple, *nodes, loc=loc), kind,
                           loc=loc)

    def _unsupported(self, value, loc, text):
        if value is print:  # (compiled code writes nothing: say how to see values)
            return MyiaSourceError(
                f"cannot compile `{text}`: compiled code has no output but its result",
                loc, hint="return what you want to see, or draw it: in the Myia kernel, "
                          "`%grad f 2.0 --view values` shows the value of every node of f "
                          "and of its derivative")
        if value is range:
            return MyiaSyntaxError(
                "`range` is only supported as the iterable of a `for` loop", loc,
                hint="write `for i in range(...):`",
            )
        if isinstance(value, type) and issubclass(value, np.generic) \
                and value.__module__ == "numpy":  # np.int32(x), dtype=np.float16
            return MyiaTypeError(
                f"cannot compile `{text}`: {value.__name__} is a dtype that compiled code "
                f"does not have", loc,
                hint="compiled code has bool, int64, float32 and float64: use np.bool_, "
                     "np.int64, np.float32 or np.float64 (as a dtype or a cast)")
        if isinstance(value, (types.BuiltinFunctionType, types.BuiltinMethodType,
                              np.ufunc)) or type(value).__name__ == "_ArrayFunctionDispatcher":
            what = "a builtin function"
        elif isinstance(value, types.FunctionType):
            what = f"a function of the library `{value.__module__}`"
        elif isinstance(value, type):
            what = "a class"
        elif callable(value):
            what = f"a callable object of type {type(value).__name__}"
        else:
            hint = "use numbers, strings, None, NumPy arrays or tuples, lists and dicts of them"
            return MyiaTypeError(
                f"cannot compile `{text}`: a value of type {type(value).__name__} is "
                f"not supported", loc, hint=hint,
            )
        return MyiaSourceError(
            f"cannot compile `{text}`: it is {what} and Myia has no equivalent", loc,
            hint=_nearest_hint(value, text),
        )


#: what the subset leaves to plain Python: reading and drawing data
_DATA_PREPARATION = ("random", "load", "save", "genfromtxt", "fromfile", "frombuffer",
                     "fromstring", "memmap", "tofile", "printoptions", "set_printoptions")


def _nearest_hint(value, text):
    """What to write instead of an unsupported library function: for data (files,
    random numbers), plain Python before the call; else the nearest supported names."""
    module = (getattr(value, "__module__", None) or "").split(".")
    short = text.rsplit(".", 1)[-1]
    if "random" in module or "random" in text.split(".") or any(
            short.startswith(w) for w in _DATA_PREPARATION):
        return (f"compiled code computes with the data it is given: prepare it in plain "
                f"Python ({text}(...) outside the function, or in a %%python cell of the "
                f"Myia kernel) and pass it as an argument")
    known = {}
    for obj in lib.PYTHON_TO_MYIA:
        name = getattr(obj, "__name__", None)
        mod = (getattr(obj, "__module__", None) or "")
        if isinstance(name, str):
            # (a ufunc of no module is SciPy's: scipy.special.expit)
            prefix = ("np." if mod.startswith("numpy") else "scipy.special."
                      if mod.startswith("scipy") or isinstance(obj, np.ufunc) else "")
            known.setdefault(name, f"{prefix}{name}")
    close = difflib.get_close_matches(short, list(known), n=3, cutoff=0.6)
    nearest = (f"the nearest supported: {', '.join(f'`{known[c]}`' for c in close)}; "
               if close else "")
    return (f"{nearest}write it over supported functions in a def of your own, or compute "
            f"it in plain Python outside the compiled function (a %%python cell in the "
            f"Myia kernel); {SUPPORTED_HINT}")


def name_error(name, loc, candidates):
    close = difflib.get_close_matches(name, [c for c in candidates if isinstance(c, str)],
                                      n=1)
    hint = f"did you mean `{close[0]}`?" if close else "define it before using it"
    return MyiaNameError(f"name `{name}` is not defined", loc, hint=hint)


def _known_builtin(value):
    try:
        return lib.lookup(value) is not None
    except TypeError:
        return False


def _get(mapping, value):
    try:
        return mapping.get(value)
    except TypeError:  # unhashable values (ndarray...) are in no table
        return None


#: {id(array): (a weak reference to it, a digest of its contents, its snapshot)}
_SNAPSHOTS = {}


def snapshot(value):
    """`value` (constant data) with each array in it replaced by a read-only copy of it
    as it is now: a program reads a global array when it is compiled, as JAX does, so
    that changing the array in place later changes no compiled program (on any
    backend: constant folding read it at compile time anyway), and no two programs
    share an array that one could change.  One copy per array and contents."""
    if isinstance(value, tuple):
        return tuple(snapshot(v) for v in value)
    if not isinstance(value, np.ndarray):
        return value
    key = id(value)
    digest = _digest(value)
    entry = _SNAPSHOTS.get(key)
    if entry is not None and entry[0]() is value and entry[1] == digest:
        return entry[2]
    copy = np.array(value, copy=True)
    copy.setflags(write=False)
    _SNAPSHOTS[key] = (weakref.ref(value, lambda _, k=key: _SNAPSHOTS.pop(k, None)), digest,
                       copy)
    return copy


def _digest(arr):
    h = hashlib.blake2b(f"{arr.dtype.str}{arr.shape}".encode(), digest_size=16)
    h.update(memoryview(np.ascontiguousarray(arr)).cast("B"))
    return h.digest()


def _is_constant_data(value):
    if value is None or isinstance(value, (bool, int, float, complex, str, np.ndarray,
                                           np.generic, slice, type(Ellipsis))):
        return True
    return isinstance(value, tuple) and all(_is_constant_data(v) for v in value)


_LIBRARY_DIRS = tuple(
    p for p in {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib",
                                                       "platlib")} if p
)


def _is_library_function(fn):
    """A Python function of NumPy, the standard library or an installed package: we do
    not try to compile their source (it is outside the subset); only the functions
    mapped in `myia.lib` stand for them."""
    module = (getattr(fn, "__module__", None) or "").split(".")[0]
    if module == "myia":
        return False
    if module in sys.stdlib_module_names or module in ("numpy", "scipy"):
        return True
    filename = fn.__code__.co_filename
    return any(filename.startswith(d) for d in _LIBRARY_DIRS) or "site-packages" in filename


def parse_function(fn):
    # import here: parse imports this module (Resolver), and parsing a global function
    # is what parse does
    from .parse import parse

    return parse(fn)


# ---- values of the user's classes: never touched ----------------------------------------

#: classes of Python's own that `builtins` does not name
_PYTHON_TYPES = frozenset({
    types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType,
    types.MethodWrapperType, types.WrapperDescriptorType, types.MethodDescriptorType,
    types.ClassMethodDescriptorType, types.GetSetDescriptorType,
    types.MemberDescriptorType, type(None), type(Ellipsis), type(NotImplemented),
    type(np.sum)})  # (NumPy's functions: numpy does not name their class)
_TYPE_NAME = vars(type)["__name__"]  # a class's name, read without its metaclass


def class_name(cls):
    """The name of the class `cls`, read without running any code of the user's."""
    return _TYPE_NAME.__get__(cls, type)


def library_class(cls):
    """Is `cls` a class of Python's, NumPy's or Myia's (found under its name in the
    module that its `__module__` names, so that a user's class that claims to be
    `builtins.float` is not)?  Hashing, comparing or converting their objects runs no
    code of the user's; a subclass of float or of ndarray is the user's class."""
    if type(cls) is type(np.dtype):  # NumPy's dtypes (which Python cannot subclass)
        return True
    if type(cls) is not type:  # a metaclass: even hashing the class could run its code
        return False
    if cls in _PYTHON_TYPES:
        return True
    module = cls.__module__
    if type(module) is not str or module.split(".")[0] not in ("builtins", "numpy", "myia",
                                                               "operator"):
        return False
    return getattr(sys.modules.get(module), cls.__name__, None) is cls


def foreign_part(value):
    """The first object in `value` (itself, or an item of its tuples, lists, dicts,
    sets and slices, the object a method is bound to) that is not a library_class's,
    or an array of Python objects; None if there is none.  Such an object comes from
    Python code of the user's (a %%python cell): compiling never touches it, since
    hashing it, comparing it, reading an attribute or converting it could run its
    methods at compile time."""
    todo, seen = [value], set()
    while todo:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        cls = type(v)
        if not library_class(cls):
            if any(k is v for k in SPECIAL_VALUES):  # registered: known (never hashed)
                continue
            return v
        if cls in (tuple, list, set, frozenset):
            todo.extend(v)
        elif cls is dict:
            todo.extend(v.keys())
            todo.extend(v.values())
        elif cls is slice:
            todo.extend((v.start, v.stop, v.step))
        elif cls in (types.BuiltinFunctionType, types.MethodType, types.MethodWrapperType):
            todo.append(v.__self__)
        elif cls is operator.itemgetter:
            todo.extend(v.__reduce__()[1])
        elif cls.__module__.split(".")[0] == "myia":  # grad(f)...: the function it wraps
            state = getattr(v, "__dict__", {})
            todo.extend(state[k] for k in ("fn", "base") if k in state)
        elif isinstance(v, (np.ndarray, np.generic)) and v.dtype.hasobject:
            return v
    return None


def check_not_foreign(value, text, loc=None):
    """Refuse `value` (named `text` in the source, if any) if it holds an object of the
    user's classes (see foreign_part), before anything reads it."""
    part = foreign_part(value)
    if part is None:
        return value
    what = ("an array of Python objects" if library_class(type(part))
            else f"an object of class `{class_name(type(part))}`")
    if text is None:  # (a callable given to the compiler itself)
        subject = what
    else:
        subject = f"`{text}`: " + ("" if part is value else "it holds ") + what
    raise MyiaTypeError(
        f"cannot compile {subject}; compiled code takes numbers, NumPy arrays, strings, "
        f"None, functions, and tuples, lists and dicts of them, and runs no method of a "
        f"Python object", loc,
        hint="convert it in plain Python first (e.g. `x = float(x)`, "
             "`a = np.asarray(a, dtype=float)`, `t = tuple(t)`), then use that value")


# ---- the parser's static names -----------------------------------------------------
# What a name or an attribute path stands for before any node is made: `range`,
# `np.linalg.inv`, the default value `dtype=np.float32`.  A module's attribute is read now.

#: what `static_object` gives for an expression that is not a global name or a module
#: attribute path
_NOT_STATIC = object()


def constant_value(expr, source, static_object, param):
    """The Python value of a constant expression: a literal, a tuple of constants, a
    negative number, or a global constant (`np.float32`, a module-level number)."""
    if isinstance(expr, ast.Constant):
        return expr.value
    if isinstance(expr, ast.Tuple):
        return tuple(constant_value(e, source, static_object, param) for e in expr.elts)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        value = constant_value(expr.operand, source, static_object, param)
        if isinstance(value, (int, float, complex)) and not isinstance(value, bool):
            return -value if isinstance(expr.op, ast.USub) else value
    if isinstance(expr, (ast.Name, ast.Attribute)):
        value = static_object(expr)
        if value is not _NOT_STATIC:
            dtype = _dtype_name(value)
            if dtype is not None:
                return dtype
            if _is_constant_data(value):
                return snapshot(value)
    raise MyiaSyntaxError(
        f"the default value of parameter `{param}` must be a constant expression",
        source.loc(expr),
        hint="use a number, a string, None, a tuple of those or a global constant; "
        "compute other values inside the function",
    )


def _dtype_name(value):
    try:
        return lib.DTYPE_NAMES.get(value)
    except TypeError:
        return None


def _global_static(resolver, source, expr):
    """The Python object a global name or a module attribute path (`np.linalg.inv`)
    stands for, or _NOT_STATIC when `expr` is anything else."""
    if isinstance(expr, ast.Name):
        value = resolver.lookup(expr.id)
        if value is _UNSET:
            raise name_error(expr.id, source.loc(expr), resolver.known_names())
        return check_not_foreign(value, expr.id, source.loc(expr))
    if isinstance(expr, ast.Attribute):
        return _module_attribute(_global_static(resolver, source, expr.value), expr, source)
    return _NOT_STATIC


def _module_attribute(base, expr, source):
    """`base.attr` resolved now if `base` is a module, else _NOT_STATIC."""
    _check_dunder(expr, source)
    if type(base) is not types.ModuleType:
        return _NOT_STATIC
    # the module's own dict first: a module of the user's may define `__getattr__`
    # (user code); NumPy's lazy submodules (`np.linalg`) come from its own
    value = vars(base).get(expr.attr, _UNSET)
    if value is _UNSET and _library_module(base):
        value = getattr(base, expr.attr, _UNSET)
    if value is _UNSET:
        raise MyiaNameError(
            f"module `{ast.unparse(expr.value)}` has no attribute `{expr.attr}`",
            source.loc(expr),
        )
    if _outside_subset(base) and not callable(value) \
            and type(value) is not types.ModuleType:
        # data only (`sys.version`): a function of such a module is refused by the
        # resolver, with a hint, and a module cannot be a value
        raise MyiaSyntaxError(
            f"module `{ast.unparse(expr.value)}` ({base.__name__}) is not part of the "
            f"subset: `{ast.unparse(expr)}` cannot be compiled", source.loc(expr),
            hint=MODULES_HINT)
    return check_not_foreign(value, ast.unparse(expr), source.loc(expr))


#: the modules of Python, NumPy and SciPy whose attributes subset code may name (the library
#: maps their functions); the user's own modules are read like the user's code
SUBSET_MODULES = frozenset({"numpy", "numpy.linalg", "math", "operator", "myia", "scipy",
                            "scipy.special"})
MODULES_HINT = ("of Python's, NumPy's and SciPy's modules, the subset reaches numpy, "
                "numpy.linalg, math, operator and scipy.special; do other work (files, "
                "random data, the system) in plain Python (a %%python cell in the kernel) "
                "and pass the values in")


def _library_module(module):
    """A module of Python's standard library, NumPy, SciPy or Myia (as sys.modules has
    it)."""
    name = module.__name__
    return type(name) is str and sys.modules.get(name) is module and (
        name.split(".")[0] in sys.stdlib_module_names or name.split(".")[0] in (
            "numpy", "scipy", "myia"))


def _outside_subset(module):
    """A module of Python's standard library, of NumPy or of SciPy that the subset does
    not reach (`os`, `sys`, `np.ctypeslib`, `np.random`, `scipy.linalg`...)."""
    name = module.__name__
    top = name.split(".")[0]
    return name not in SUBSET_MODULES and (top in sys.stdlib_module_names
                                           or top in ("numpy", "scipy"))


def _check_dunder(expr, source):
    if expr.attr.startswith("__") and expr.attr.endswith("__"):
        raise MyiaSyntaxError(
            f"dunder attributes are not supported: `{ast.unparse(expr)}`", source.loc(expr),
            hint="Myia values have no Python object model; use the value itself",
        )


class NameResolution:
    """The Parser's methods that tell a local name from a global one and find the
    Python object a global name or module attribute path stands for (a mixin of
    `parse.Parser`, whose `local_names`, `static_defs`, `parent` and `resolver` it
    reads)."""

    def _is_local(self, name):
        p = self
        while p is not None:
            if name in p.local_names or name in p.static_defs:
                return True
            p = p.parent
        return False

    def visible_locals(self):
        """The local names of this function and the enclosing ones (for hints)."""
        p = self
        while p is not None:
            yield from p.local_names
            p = p.parent

    def _static_object(self, expr):
        """The Python object that `expr` names if it is a global name or a module
        attribute path (`np.linalg.inv`), else _NOT_STATIC."""
        if isinstance(expr, ast.Name):
            if self._is_local(expr.id):
                return _NOT_STATIC
            return self.global_value(expr.id, self.loc(expr))
        if isinstance(expr, ast.Attribute):
            return _module_attribute(self._static_object(expr.value), expr, self.source)
        return _NOT_STATIC

    def global_value(self, name, loc):
        """The Python value of a global name (of the module, closure cells, builtins)."""
        value = self.resolver.lookup(name)
        if value is _UNSET:
            raise name_error(name, loc, [*self.visible_locals(), *self.resolver.known_names()])
        return check_not_foreign(value, name, loc)  # (a user's object is never read)
