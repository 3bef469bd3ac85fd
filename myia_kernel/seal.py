"""The seal: what a subset cell (any cell but `%%python`) may reach.

Subset code is compiled, and the compiler's resolver refuses what the subset does not
know (`open`, `eval`, `__import__`, `np.load`, dunder attributes...).  What a session
would otherwise hand to Python is checked here:

- `import` only of numpy (and numpy.linalg), math, scipy.special and myia
  (`check_import`);
- the names a cell cannot bind (the session's own: `np`, `grad`, `__builtins__`...) nor
  read (`os`, `sys`, `builtins`, dunder names) (`check_binding`, `check_reads`);
- annotations are dropped before a `def` runs (`strip_annotations`), so Python never
  evaluates them; default values are read by `SafeEval` (below);
- what Python evaluates (a magic's arguments, an expression that calls `jvp`, `vjp`,
  `hessian` or `jet`, which run in Python) goes through `SafeEval`, a small interpreter
  of literals, the session's values, arithmetic, indexing and calls of what the subset
  knows: the session's functions (compiled), Myia's transforms and the functions the
  library maps (`np.sin`, `np.ones`...).  It refuses what Python would compute beyond
  any interrupt (`10 ** 10 ** 10`, `"a" * 10 ** 12`, `sum(range(10 ** 12))`), and says
  what Python's operations raise as located errors;
- an object of the user's classes (made in a %%python cell: `Evil()`, a subclass of
  float or ndarray, an array of Python objects) is refused by its class wherever a cell
  names it (`myia.parser.resolve.foreign_part`), before anything hashes, compares,
  converts or reads it: its methods are Python code;
- help and completion read only what a cell could (`help_value`).

Elsewhere: the kernelspec starts Python with `-P`, so that no module planted in the
notebook's folder shadows one the kernel imports (install.py); a locked session refuses
every cell that names `%%python` (session.py).
"""

import ast
import builtins
import importlib.util
import operator
import types

import numpy as np

import myia
from myia.errors import MyiaError, MyiaNameError, MyiaOverflowError, MyiaSyntaxError, \
    MyiaTypeError, MyiaValueError
from myia.introspect import (check_compile_time_size, check_not_foreign, foreign_part,
                             is_myia_class, library_value)

#: the session's own names (bound by new_namespace; a cell cannot rebind them)
SESSION_NAMES = ("np", "math", "grad", "value_and_grad", "jvp", "vjp", "jacfwd", "jacrev",
                 "jacobian", "hessian", "jet", "stop_gradient", "custom_vjp",
                 "custom_jvp", "checkpoint", "vmap")
#: the session's modules, which a cell may import again under the same name
SESSION_MODULES = {"np": "numpy", "math": "math"}
#: names no cell may bind or read: the machine's modules and Python's internals
HIDDEN = frozenset({"os", "sys", "builtins", "subprocess", "shutil", "ctypes", "pickle",
                    "importlib", "io", "socket", "pathlib", "signal", "gc", "inspect"})
#: what `import` may bring in a subset cell
#: (`scipy` itself for `from scipy import special`: its other submodules stay refused)
IMPORTABLE = frozenset({"numpy", "numpy.linalg", "math", "myia", "scipy", "scipy.special"})
#: Python builtins an expression evaluated in Python may call (data conversions)
SAFE_BUILTINS = frozenset({"abs", "float", "int", "bool", "len", "min", "max", "sum",
                           "round", "tuple", "list", "range", "complex", "divmod", "pow"})
#: attributes of an array a magic's argument may read
ARRAY_ATTRIBUTES = frozenset({"shape", "ndim", "size", "dtype", "T", "real", "imag"})

PYTHON_HINT = "do it in a %%python cell (ordinary Python), then use the values it binds"
#: the most items a sequence that SafeEval builds may hold (`"a" * 10 ** 12`, `range`):
#: Python's C loops cannot be interrupted, nor stopped by the time limit
MAX_ITEMS = 10 ** 7


def is_reserved(name):
    return name in SESSION_NAMES or name in HIDDEN or (
        name.startswith("__") and name.endswith("__"))


def check_binding(name, loc, what="assign"):
    """Refuse a cell's binding of a session name or of a hidden one."""
    if name in SESSION_NAMES:
        raise MyiaSyntaxError(
            f"`{name}` is the session's own name and cannot be redefined", loc,
            hint=f"choose another name; `{name}` stays what the session gave it")
    if name in HIDDEN or (name.startswith("__") and name.endswith("__")):
        raise MyiaSyntaxError(f"a cell cannot {what} `{name}`", loc,
                              hint="choose another name")


def check_reads(node, loc_of):
    """Refuse, in an expression or a def, the names no subset code may read."""
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and (n.id in HIDDEN or (
                n.id.startswith("__") and n.id.endswith("__"))):
            raise MyiaSyntaxError(f"`{n.id}` is not available in a Myia cell", loc_of(n),
                                  hint=PYTHON_HINT)


def help_value(namespace, dotted, default=None):
    """The value of a dotted name that help and completion show (`np.sin?`,
    `np.ta<tab>`), or `default` where there is none or a cell could not read it: a
    hidden name, a private or dunder attribute, a module outside the subset or anything
    in one (`np.f2py.sys.executable?` shows nothing)."""
    first, *attrs = dotted.split(".")
    if first in HIDDEN or (first.startswith("__") and first.endswith("__")):
        return default
    value = namespace.get(first, default)
    for attr in attrs:
        # (an object of the user's classes: reading its attributes runs its code)
        if value is default or attr.startswith("_") or foreign_part(value) is not None or (
                type(value) is types.ModuleType and value.__name__ not in IMPORTABLE):
            return default
        value = getattr(value, attr, default)
    if type(value) is types.ModuleType and value.__name__ not in IMPORTABLE:
        return default
    return value


def check_import(stmt, loc):
    """`import numpy as np`, `import math`, `from math import sin`: only the modules
    the subset knows; anything else is refused, located."""
    if isinstance(stmt, ast.ImportFrom):
        modules = [stmt.module or ""] if not stmt.level else ["." * stmt.level]
    else:
        modules = [a.name for a in stmt.names]
    for m in modules:
        if m not in IMPORTABLE:
            raise MyiaSyntaxError(
                f"`import {m}` is not available in a Myia cell: a cell imports only "
                f"numpy, math, scipy.special and myia", loc, hint=PYTHON_HINT)
    for a in stmt.names:
        bound = a.asname or a.name.split(".")[0]
        if a.name == "*":
            raise MyiaSyntaxError("`import *` is not available in a Myia cell", loc,
                                  hint="import the names you use")
        full = a.name if isinstance(stmt, ast.Import) else f"{stmt.module}.{a.name}"
        if full not in IMPORTABLE and _is_module(full):  # `from numpy import ctypeslib`
            raise MyiaSyntaxError(
                f"`import {full}` is not available in a Myia cell: a cell imports only "
                f"numpy, math, scipy.special and myia", loc, hint=PYTHON_HINT)
        if SESSION_MODULES.get(bound) == full:
            continue  # `import numpy as np`, `import math`: what the session has
        check_binding(bound, loc, "import")
        if isinstance(stmt, ast.ImportFrom) and full not in IMPORTABLE:
            check_importable_value(stmt.module, a.name, loc)


def check_importable_value(module, name, loc):
    """`from numpy import X`: X must be what compiled code can use (a function the
    library maps, a number, a dtype, an exception, one of Myia's transforms); NumPy's
    files and pickles (`savetxt`, `load`, `memmap`...), and anything else, are not."""
    value = getattr(importlib.import_module(module), name, _MISSING)
    if value is _MISSING:
        raise MyiaSyntaxError(f"module `{module}` has no name `{name}`", loc)
    if isinstance(value, _DATA) or _is_api(value) or _known(value) or (
            isinstance(value, type) and issubclass(value, (np.generic, Exception))):
        return
    raise MyiaSyntaxError(
        f"`{module}.{name}` is not part of the subset: a cell imports only what compiled "
        f"code can use (NumPy's math, arrays and dtypes, Myia's transforms)", loc,
        hint=PYTHON_HINT)


_MISSING = object()


def _is_api(value):
    try:
        return value in _API
    except TypeError:  # (unhashable)
        return False


def _is_module(name):
    """Is `name` (`numpy.ctypeslib`) a module?  Found without running it."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # (`math.sin`: math is not a package)
        return False


def strip_annotations(tree):
    """Drop every annotation (arguments, returns, `x: T = v`) of a def, nested ones
    too: Python would evaluate them when the def runs.  The compiler ignores them."""
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = n.args
            for arg in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
                if arg is not None:
                    arg.annotation = None
            if not isinstance(n, ast.Lambda):
                n.returns = None
        elif isinstance(n, ast.AnnAssign):
            n.annotation = ast.Constant(None)
            ast.copy_location(n.annotation, n)
    return tree


# ---- evaluating without Python -----------------------------------------------------------


_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
           ast.Pow: operator.pow, ast.MatMult: operator.matmul}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
          ast.Invert: operator.invert}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
            ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}
_DATA = (int, float, complex, bool, str, type(None), np.ndarray, np.generic)


class SafeEval:
    """Evaluate an expression of a cell (or a magic's argument) without running Python
    code: literals, the session's values, arithmetic and comparisons of data,
    indexing, and calls of the session's functions (compiled), of Myia's transforms
    and of what the library maps (`np.ones`, `math.exp`)."""

    def __init__(self, session, loc_of):
        self.session = session
        self.loc_of = loc_of

    def refuse(self, node, what, hint=None):
        raise MyiaSyntaxError(what, self.loc_of(node), hint=hint or (
            "here (an argument of a magic, or an expression that calls jvp, vjp, hessian "
            "or jet) only names, numbers, arithmetic, indexing and calls of functions "
            "are read; " + PYTHON_HINT))

    def eval(self, node):
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            self.refuse(node, f"{_describe(node)} cannot be evaluated here")
        try:
            return method(node)
        except MyiaError:
            raise
        except (ArithmeticError, LookupError, TypeError, ValueError, MemoryError) as e:
            # what Python's operators and the functions called said (`int("x")`,
            # `jvp(f, **{'a': 1})`): the user's error, at the part that raised it
            kind = MyiaTypeError if isinstance(e, TypeError) else MyiaValueError
            raise kind(f"{type(e).__name__}: {e}", self.loc_of(node)) from None

    def _Constant(self, node):
        return node.value

    def _Tuple(self, node):
        return tuple(self._items(node.elts))

    def _List(self, node):
        return list(self._items(node.elts))

    def _Dict(self, node):
        if any(k is None for k in node.keys):
            self.refuse(node, "`**` in a dict cannot be evaluated here")
        return {self.eval(k): self.eval(v) for k, v in zip(node.keys, node.values)}

    def _items(self, elts):
        out = []
        for e in elts:
            if isinstance(e, ast.Starred):
                out.extend(self._data(self.eval(e.value), e))
            else:
                out.append(self.eval(e))
        return out

    def _Name(self, node):
        name = node.id
        if name in HIDDEN or (name.startswith("__") and name.endswith("__")):
            self.refuse(node, f"`{name}` is not available in a Myia cell")
        ns = self.session.namespace
        if name in ns:
            # a %%python cell's object of its own class: never read, nor passed on
            return check_not_foreign(ns[name], name, self.loc_of(node))
        if name in SAFE_BUILTINS:
            return getattr(builtins, name)
        if name in ("True", "False", "None"):  # (parsed as constants; for safety)
            return {"True": True, "False": False, "None": None}[name]
        raise MyiaNameError(f"name `{name}` is not defined", self.loc_of(node))

    def _Attribute(self, node):
        attr = node.attr
        if attr.startswith("_"):
            self.refuse(node, f"the attribute `{attr}` cannot be read here")
        base = self.eval(node.value)
        if isinstance(base, types.ModuleType):
            if base.__name__ not in IMPORTABLE:
                self.refuse(node, f"module `{base.__name__}` is not part of the subset")
            value = getattr(base, attr, None)
            if value is None:
                self.refuse(node, f"module `{ast.unparse(node.value)}` has no attribute "
                                  f"`{attr}`")
            if isinstance(value, types.ModuleType):
                if value.__name__ not in IMPORTABLE:
                    self.refuse(node, f"module `{value.__name__}` is not part of the subset")
                return value
            if isinstance(value, _DATA) or _known(value) or is_myia_class(type(value)):
                return value
            self.refuse(node, f"`{ast.unparse(node)}` is not part of the subset",
                        hint=PYTHON_HINT)
        if isinstance(base, (np.ndarray, np.generic)) and attr in ARRAY_ATTRIBUTES:
            return getattr(base, attr)
        self.refuse(node, f"the attribute `{attr}` cannot be read here")

    def _Subscript(self, node):
        base = self.eval(node.value)
        if type(base) not in (tuple, list):  # (a tuple may hold functions: vjp(f, x)[1])
            base = self._data(base, node)
        return base[self.eval(node.slice)]

    def _Slice(self, node):
        part = [None if p is None else self.eval(p) for p in (node.lower, node.upper,
                                                              node.step)]
        return slice(*part)

    def _BinOp(self, node):
        op = _BINOPS.get(type(node.op))
        if op is None:
            self.refuse(node, f"the operator {type(node.op).__name__} cannot be "
                              f"evaluated here")
        left, right = self._data(self.eval(node.left), node), self._data(
            self.eval(node.right), node)
        self._check_size(op, left, right, node)
        return op(left, right)

    def _check_size(self, op, left, right, node):
        """Refuse what Python would compute for minutes, beyond any interrupt:
        `10 ** 10 ** 10`, `"a" * 10 ** 12`."""
        if op is operator.pow and _is_int(left) and _is_int(right) and abs(left) >= 2 \
                and right >= 64:
            raise MyiaOverflowError(f"integer overflow: {left} ** {right} is out of "
                                    f"int64's range", self.loc_of(node))
        if op is operator.mul:
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, bytes, tuple, list)) and _is_int(n) and \
                        len(seq) * n > MAX_ITEMS:
                    raise MyiaValueError(
                        f"a sequence of {len(seq) * n} items is too large to build here "
                        f"(at most {MAX_ITEMS})", self.loc_of(node))

    def _UnaryOp(self, node):
        return _UNARY[type(node.op)](self._data(self.eval(node.operand), node))

    def _BoolOp(self, node):
        values = (self._data(self.eval(v), node) for v in node.values)
        return all(values) if isinstance(node.op, ast.And) else any(values)

    def _Compare(self, node):
        left = self._data(self.eval(node.left), node)
        for op, comp in zip(node.ops, node.comparators):
            fn = _COMPARE.get(type(op))
            if fn is None:
                self.refuse(node, f"the comparison {type(op).__name__} cannot be "
                                  f"evaluated here")
            right = self._data(self.eval(comp), node)
            if not fn(left, right):
                return False
            left = right
        return True

    def _IfExp(self, node):
        test = self._data(self.eval(node.test), node)
        return self.eval(node.body) if test else self.eval(node.orelse)

    def _Call(self, node):
        fn = self.eval(node.func)
        if fn in _API and node.args and isinstance(node.args[0], ast.Lambda):
            args = [self._transformed_lambda(node.args[0])] + self._items(node.args[1:])
        else:
            args = self._items(node.args)
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                kwargs.update(self._data(self.eval(kw.value), kw.value))
            else:
                kwargs[kw.arg] = self.eval(kw.value)
        session_fn = self.session.defined_function(fn)
        if fn in _API and args and not (self.session.defined_function(args[0]) or
                                        _known(args[0]) or is_myia_class(type(args[0]))):
            self.refuse(node.args[0], f"`{ast.unparse(node.func)}` transforms the "
                                      f"functions of the session's cells, of the library "
                                      f"and of Myia's transforms, not "
                                      f"`{ast.unparse(node.args[0])}`")
        if not (session_fn or fn in _API or is_myia_class(type(fn))):
            # (Python's `max(..., key=f)` would run the cell's def f as Python, outside
            # the compiler, and `max([(g, ...)], key=call)` would call g)
            for part, value in [*zip(node.args, args), *((k.value, kwargs.get(k.arg))
                                                           for k in node.keywords)]:
                if _holds_callable(value):
                    self.refuse(part, f"a function cannot be passed to "
                                      f"`{ast.unparse(node.func)}` here: it would call it "
                                      f"as Python, outside the compiler",
                                hint="call it in a cell's def instead (compiled code "
                                     "passes functions around freely)")
        if session_fn:
            return self.session.compiled(fn)(*args, **kwargs)
        if _callable_here(fn):
            if fn is builtins.sum and any(isinstance(v, (tuple, list, str)) for v in
                                          [*args[1:], *kwargs.values(),
                                           *(args[0] if args and isinstance(
                                               args[0], (tuple, list)) else ())]):
                # (a sum of sequences is quadratic, in C: neither an interrupt nor the
                # time limit could stop it)
                self.refuse(node, "`sum` of sequences cannot be evaluated here",
                            hint="sum numbers or arrays; join sequences in a cell's def")
            if fn is builtins.pow and len(args) == 2:
                self._check_size(operator.pow, *args, node)
            if fn is range:
                r = range(*args, **kwargs)
                if _length(r) > MAX_ITEMS:
                    raise MyiaValueError(f"{r} is too long to use here (at most "
                                         f"{MAX_ITEMS} numbers)", self.loc_of(node))
                return r
            if _known(fn):
                try:
                    check_compile_time_size(_result_elements(fn, args, kwargs),
                                            f"the result of `{ast.unparse(node.func)}`")
                except MyiaError as e:
                    e.loc = self.loc_of(node)
                    raise
            return fn(*args, **kwargs)
        self.refuse(node.func, f"`{ast.unparse(node.func)}` cannot be called here")

    def _transformed_lambda(self, node):
        """`jvp(lambda x: x * x, ...)`: the function object Python makes of a lambda
        given to a transform (in the session's namespace, at its place in the cell),
        which the transform compiles like a def.  Making it runs nothing of the cell:
        its default values must be constants; and its body runs only as Myia compiles
        it, because a transform is the only thing it is given to (anywhere else, as a
        `key=` of max, Python would call it: there a lambda is refused)."""
        a = node.args
        if any(not isinstance(d, ast.Constant)
               for d in a.defaults + [d for d in a.kw_defaults if d is not None]):
            self.refuse(node, "a lambda's default values must be constants here")
        filename = self.loc_of(node).filename
        return eval(compile(ast.Expression(node), filename, "eval"), self.session.namespace)

    def _data(self, value, node):
        """A value Python's operators may work on: data, or containers of data."""
        if isinstance(value, _DATA):
            return value
        if isinstance(value, (tuple, list)):
            for v in value:
                self._data(v, node)
            return value
        if isinstance(value, dict):
            for v in value.values():
                self._data(v, node)
            return value
        self.refuse(node, f"a value of type {type(value).__name__} cannot be used here")


#: NumPy functions whose result is n x n for an argument of n elements
_SQUARE = frozenset({"diag", "diagflat", "vander", "outer", "kron"})


def _result_elements(fn, args, kwargs):
    """An upper bound on the elements of a library function's result, from its
    arguments, computed before NumPy builds it (the memory limit holds here too): a
    ufunc's broadcast; n x n for eye, diag, outer...; else the largest of the array
    arguments' sizes and the product of the integers among the arguments (a shape, a
    count: np.ones((n, m)), np.linspace(a, b, n), np.repeat(x, k))."""
    values = list(args) + list(kwargs.values())
    arrays = [np.shape(v) for v in values if isinstance(v, (np.ndarray, np.generic))]
    sizes = [int(np.prod(s, dtype=object)) for s in arrays] or [1]
    if isinstance(fn, np.ufunc):
        try:
            return int(np.prod(np.broadcast_shapes(*arrays), dtype=object)) if arrays else 1
        except ValueError:
            return max(sizes)
    ints = []
    for v in values:
        for x in (v if isinstance(v, (tuple, list)) else (v,)):
            if _is_int(x):
                ints.append(max(1, abs(int(x))))
    product = int(np.prod(ints, dtype=object)) if ints else 1
    name = getattr(fn, "__name__", "")
    if name in ("eye", "identity", "tri"):
        return product if len(ints) > 1 else product ** 2
    if name in _SQUARE:  # (outer: the product of the sizes; diag: a vector's square)
        return max(int(np.prod(sizes, dtype=object)), max(sizes) ** 2) * product
    return max(max(sizes), product)


def _holds_callable(value, depth=0):
    """Whether `value` is, or holds (in tuples, lists, dicts), something callable."""
    if isinstance(value, _DATA):
        return False
    if isinstance(value, (tuple, list)) and depth < 32:
        return any(_holds_callable(v, depth + 1) for v in value)
    if isinstance(value, dict) and depth < 32:
        return any(_holds_callable(v, depth + 1) for v in value.values())
    return callable(value) or depth >= 32


def _is_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _length(r):
    try:
        return len(r)
    except OverflowError:  # (more than sys.maxsize numbers)
        return float("inf")


def _describe(node):
    return {"Lambda": "a lambda", "ListComp": "a comprehension", "GeneratorExp":
            "a generator", "DictComp": "a comprehension", "SetComp": "a comprehension",
            "JoinedStr": "an f-string", "NamedExpr": "`:=`", "Await": "`await`",
            "Yield": "`yield`"}.get(type(node).__name__,
                                    f"a `{type(node).__name__}` expression")


def _known(value):
    """A function or constant the library maps (what subset code may call)."""
    try:
        return library_value(value) is not None
    except TypeError:
        return False


_API = frozenset({myia.grad, myia.value_and_grad, myia.jvp, myia.vjp, myia.jacfwd,
                  myia.jacrev, myia.hessian, myia.jet, myia.stop_gradient, myia.custom_vjp,
                  myia.custom_jvp, myia.checkpoint, myia.vmap, myia.compile})


def _callable_here(fn):
    if fn in _API or _known(fn):
        return True
    if isinstance(fn, types.BuiltinFunctionType) and fn.__name__ in SAFE_BUILTINS \
            and getattr(builtins, fn.__name__, None) is fn:
        return True
    if isinstance(fn, type) and fn.__name__ in SAFE_BUILTINS and \
            getattr(builtins, fn.__name__, None) is fn:
        return True
    # a transform object (grad(f), hessian(f), the function vjp returns...)
    return callable(fn) and is_myia_class(type(fn))
