"""Python functions to IR graphs: statements and expressions.

`parse(fn)` finds the function's `ast` node (see `source`), and a `Parser` walks it,
one `visit_<AST class>` method per construct; statements build basic blocks (see
`blocks` for the SSA machinery), expressions return nodes.  The shapes produced, which
later stages rely on (`f` is the function's name; nested blocks of the same kind get
the printer's `.2`, `.3` suffixes):

    f(a, b)              Apply(f, a, b): keywords and defaults are resolved here
    if c: A else: B      switch(truth(c), @f:if_true, @f:if_false)(); the branches that
                         fall through jump to @f:after_if(phis...)
    while c: A           a jump to @f:while_header(phis...), whose output is
                         switch(truth(c), @f:while_body, @f:after_while)(); the body
                         jumps back to the header: a loop is a tail-recursive graph.
                         With `break`, the false branch is @f:while_exit, which jumps to
                         the join block @f:after_while like the breaks do.
                         `while True:` has no switch: the header is the body.
    for i in range(..)   the same (@f:for_header...), with a hidden counter `i.range`
                         as a header phi, incremented at the start of the body
    for x in seq         the same, with a hidden state `x.iter` per sequence (seq a
                         tuple, a list, a dict, an array; zip(a, b) and enumerate(s)
                         walk theirs side by side), stepped by the library
                         (myia.lib.builtins: iter_start, iter_more, iter_next): over a
                         container the loop runs once per element at compile time, over
                         an array's first axis at run time
    [a, b]               tuple_as(make_tuple(a, b), "list"): a list is a tuple with a
                         static kind; {"k": v} is tuple_as(make_tuple(v), ("dict", ("k",)))
    [e for x in s if c]  a nested graph @f:<listcomp>, called in place: acc = (), then
                         `for x in s: if c: acc = tuple_cons(e, acc)`, then acc[::-1]
                         as a list; (e for ...) makes a tuple, {k: v for ...} a dict
                         (myia.lib.builtins.dict_set)
    x in s               py_contains(s, x) (a dict's keys; folded when constant)
    lst += [v]           lst = lst + [v]: a new list bound to `lst` (lists are values:
                         another name bound to the old list keeps it)
    a and b, a or b      switch(truth(a), @f:and_rhs, @f:and_lhs)() (or_lhs, or_rhs)
    x if c else y        switch(truth(c), @f:ifexp_true, @f:ifexp_false)()
    a < b < c            like `a < b and b < c`, b evaluated once
    assert c, msg        assert(truth(c), msg), kept alive by sequencing: see
                         `Parser.visit_Assert`
"""

import ast
import linecache
import sys
import types
import weakref
from collections import ChainMap, Counter

import numpy as np

from .. import lib
from ..errors import Location, MyiaNameError, MyiaSyntaxError, MyiaTypeError, MyiaValueError
from ..ir import Apply, Constant, Graph, Parameter
from ..prim import Primitive
from ..prim import ops as P
from ..prim.containers import KEY_TYPES, DictValue
from ..prim.logic import range_message
from .blocks import Block, SSAState
from .captures import Captures
from .resolve import _UNSET, Resolver, _is_constant_data, check_not_foreign, name_error, snapshot
from .slices import slice_node
from .source import SourceFile, find_function_ast

#: The hidden variable holding the asserts that ran so far (a keyword: no user variable
#: can have this name).  See `Parser.visit_Assert`.
EFFECTS = "assert"

_NOT_STATIC = object()

BINARY_OPS = {
    ast.Add: P.add, ast.Sub: P.sub, ast.Mult: P.mul, ast.Div: P.truediv,
    ast.FloorDiv: P.floordiv, ast.Mod: P.mod, ast.Pow: P.pow,
    ast.BitAnd: P.bitwise_and, ast.BitOr: P.bitwise_or, ast.BitXor: P.bitwise_xor,
}
COMPARE_OPS = {
    ast.Eq: P.eq, ast.NotEq: P.ne, ast.Lt: P.lt, ast.LtE: P.le, ast.Gt: P.gt, ast.GtE: P.ge,
}
OPERATOR_SYMBOLS = {
    ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>",
    ast.Invert: "~", ast.In: "in", ast.NotIn: "not in",
}

_NO_MUTATION = (
    "values are immutable in Myia: arrays cannot be modified in place; build a new "
    "array instead (np.where(mask, new, x), or arithmetic on the whole array)"
)
_NO_ITEM_ASSIGNMENT = (
    "values are immutable in Myia: build a new value instead: for a list "
    "`lst = lst[:i] + [v] + lst[i + 1:]`, for a dict `d = {**d, k: v}`, for an array "
    "np.where(mask, new, x) or arithmetic on the whole array"
)
_NO_DELETION = (
    "lists and dicts are values in Myia: build a new one without the element: "
    "`lst = lst[:i] + lst[i + 1:]`, `d = {k2: v for k2, v in d.items() if k2 != k}`"
)

#: comprehensions: the kind of container each makes, and where it starts (a list or a
#: tuple is made reversed, as a tuple: see `Parser.comprehension_body`)
_COMPREHENSIONS = {ast.ListComp: "list", ast.GeneratorExp: "tuple", ast.DictComp: "dict"}
_EMPTY = {"list": (), "tuple": (), "dict": DictValue((), ())}


class ComprehensionElement(ast.stmt):
    """The innermost statement of a comprehension `node` (made by the parser): add
    its element to the result."""

    _fields = ("node",)

#: Constructs outside the subset: {ast class: (what, hint)}.
REFUSED = {
    ast.ClassDef: ("`class` definitions are", "define functions; group values in tuples"),
    ast.Try: ("`try` statements are",
              "Myia programs cannot catch exceptions; test values with `if`"),
    ast.Raise: ("`raise` statements are", "use `assert condition, 'message'` to fail"),
    ast.With: ("`with` statements are", "remove the `with` block"),
    ast.AsyncWith: ("`async with` statements are", "remove the `async with` block"),
    ast.Global: ("`global` declarations are",
                 "a function cannot assign a global variable: return the new value"),
    ast.Nonlocal: ("`nonlocal` declarations are",
                   "a function cannot assign a variable of an enclosing function: "
                   "return the new value"),
    ast.Import: ("`import` inside a function is", "import modules at the top of the file"),
    ast.ImportFrom: ("`import` inside a function is",
                     "import modules at the top of the file"),
    ast.Delete: ("`del` statements are", "leave the variable unused"),
    ast.AsyncFunctionDef: ("`async def` functions are", "use a plain `def`"),
    ast.AsyncFor: ("`async for` loops are", "use a plain `for` loop"),
    ast.Match: ("`match` statements are", "use `if`/`elif`/`else`"),
    ast.Yield: ("generators (`yield`) are", "return a tuple of the values"),
    ast.YieldFrom: ("generators (`yield from`) are", "return a tuple of the values"),
    ast.Await: ("`await` expressions are", "call the function directly"),
    ast.SetComp: ("set comprehensions are", "use a list comprehension"),
    ast.Set: ("set literals are", "use a tuple or a list: `(a, b)`, `[a, b]`"),
    ast.JoinedStr: ("f-strings are", "use a constant string"),
    ast.FormattedValue: ("f-strings are", "use a constant string"),
    ast.NamedExpr: ("the walrus operator `:=` is", "assign the value in a statement first"),
    ast.Starred: ("starred expressions (`*x`) are", "pass the elements one by one"),
    ast.Slice: ("slices outside of an index are", "use a slice inside `x[...]` only"),
}
if hasattr(ast, "TryStar"):
    REFUSED[ast.TryStar] = REFUSED[ast.Try]

# ---- the entry point ----------------------------------------------------------------

_cache = weakref.WeakKeyDictionary()
# The functions cached by the outermost parse() under way and the ones it called: if it
# fails, they all leave the cache (a callee that parsed fine may refer to a graph that
# did not).
_parsing = []


def parse(fn):
    """The Graph of the Python function `fn` (cached: one Graph per function object).

    Global functions that `fn` uses are parsed too; the graph is cached before its body
    is parsed, so that recursion and mutual recursion find it.  The graph reflects the
    globals at the time of the first parse.
    """
    if type(fn) is not types.FunctionType:
        check_not_foreign(fn, None)  # a user's callable: not even hashed
        find_function_ast(fn)  # raises, saying what `fn` is
    try:
        return _cache[fn]
    except (KeyError, TypeError):
        pass
    node, source = find_function_ast(fn)
    if isinstance(node, ast.AsyncFunctionDef):
        raise MyiaSyntaxError("`async def` functions are not supported in Myia",
                              source.loc(node), hint="use a plain `def`")
    resolver = Resolver.for_function(fn)
    name = fn.__name__
    graph = make_signature(node, name, source, lambda e: _global_static(resolver, source, e),
                           evaluated=_evaluated_defaults(fn))
    if (getattr(fn, "__module__", None) or "").startswith("myia."):
        graph.flags["core"] = True  # the library's own subset code (myia.lib)
    outermost = not _parsing
    _cache[fn] = graph
    _parsing.append(fn)
    try:
        ssa = SSAState()
        Parser(node, graph, source, resolver, ssa).run()
        ssa.finish()
    except BaseException:
        if outermost:
            for f in _parsing:
                _cache.pop(f, None)
        raise
    finally:
        if outermost:
            _parsing.clear()
    return graph


def parse_source(source, filename, globals_dict):
    """{name: Graph} for the top-level `def`s of `source` (a kernel cell, a file).

    The functions see each other (recursion across them works) and the names of
    `globals_dict` (whose values may be Graphs, e.g. functions of earlier cells); the
    other statements of `source` are ignored: the caller runs or refuses them.  The
    source is registered in `linecache` under `filename`, so that errors show its lines.
    """
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as e:
        raise MyiaSyntaxError(
            f"invalid syntax: {e.msg}", Location(filename, e.lineno or 1, (e.offset or 1) - 1),
        ) from None
    src = SourceFile(filename, lines)
    defs = {s.name: s for s in tree.body if isinstance(s, ast.FunctionDef)}
    graphs = {}
    resolver = Resolver(ChainMap(graphs, globals_dict))
    for name, node in defs.items():
        if node.decorator_list:
            raise MyiaSyntaxError("decorators are not supported here",
                                  src.loc(node.decorator_list[0]),
                                  hint="call the decorator on the function explicitly")
        graphs[name] = make_signature(node, name, src,
                                      lambda e: _global_static(resolver, src, e))
    for name, node in defs.items():
        ssa = SSAState()
        Parser(node, graphs[name], src, resolver, ssa).run()
        ssa.finish()
    return dict(graphs)


# ---- signatures and constant expressions ---------------------------------------------


def _evaluated_defaults(fn):
    """{parameter: default} as Python evaluated them when `fn`'s def ran."""
    defaults = getattr(fn, "__defaults__", None) or ()
    names = fn.__code__.co_varnames[:fn.__code__.co_argcount]
    return dict(zip(names[len(names) - len(defaults):], defaults))


def make_signature(node, name, source, static_object, evaluated=None):
    """A new Graph with the parameters and defaults of the def or lambda `node`.

    Defaults are constant expressions, evaluated now in the enclosing scope, where
    `static_object(expr)` gives the Python value a global name or attribute stands for.
    A function object that Python defined has its defaults evaluated already
    (`evaluated`, by parameter name): those values are used when they are constant
    data (`def fun(x, num=num)` with `num` from the enclosing scope).
    """
    args = node.args
    refused = [
        (args.posonlyargs, "positional-only parameters (`/`) are"),
        (args.kwonlyargs, "keyword-only parameters are"),
        (args.kwarg, "`**kwargs` parameters are"),
    ]
    for what, message in refused:
        if what:
            culprit = what[0] if isinstance(what, list) else what
            raise MyiaSyntaxError(
                f"{message} not supported", source.loc(culprit),
                hint="use plain positional parameters (with defaults if needed)",
            )
    graph = Graph(name, source.loc(node))
    for a in args.args:
        graph.add_parameter(a.arg, source.loc(a))
    if args.vararg:
        # `*rest`: the last parameter, a tuple of the extra positional arguments,
        # packed at each call (a call by the function's name, known at compile time)
        graph.add_parameter(args.vararg.arg, source.loc(args.vararg))
        graph.flags["varargs"] = True
    if args.defaults:
        for a, default in zip(args.args[-len(args.defaults):], args.defaults):
            value = (evaluated or {}).get(a.arg, _NOT_STATIC)
            if value is not _NOT_STATIC:  # (a default a %%python cell gave: never read)
                check_not_foreign(value, a.arg, source.loc(a))
            if value is not _NOT_STATIC and (_dtype_name(value) is not None
                                             or _is_constant_data(value)):
                graph.defaults[a.arg] = _dtype_name(value) or snapshot(value)
            else:
                graph.defaults[a.arg] = constant_value(default, source, static_object, a.arg)
    return graph


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


#: the modules of Python and NumPy whose attributes subset code may name (the library
#: maps their functions); the user's own modules are read like the user's code
SUBSET_MODULES = frozenset({"numpy", "numpy.linalg", "math", "operator", "myia"})
MODULES_HINT = ("of Python's and NumPy's modules, the subset reaches numpy, numpy.linalg, "
                "math and operator; do other work (files, random data, the system) in "
                "plain Python (a %%python cell in the kernel) and pass the values in")


def _library_module(module):
    """A module of Python's standard library, NumPy or Myia (as sys.modules has it)."""
    name = module.__name__
    return type(name) is str and sys.modules.get(name) is module and (
        name.split(".")[0] in sys.stdlib_module_names or name.split(".")[0] in (
            "numpy", "myia"))


def _outside_subset(module):
    """A module of Python's standard library or of NumPy that the subset does not
    reach (`os`, `sys`, `np.ctypeslib`, `np.random`...)."""
    name = module.__name__
    top = name.split(".")[0]
    return name not in SUBSET_MODULES and (top in sys.stdlib_module_names or top == "numpy")


def _check_dunder(expr, source):
    if expr.attr.startswith("__") and expr.attr.endswith("__"):
        raise MyiaSyntaxError(
            f"dunder attributes are not supported: `{ast.unparse(expr)}`", source.loc(expr),
            hint="Myia values have no Python object model; use the value itself",
        )


# ---- scans of a function body --------------------------------------------------------


def _assignments(body):
    """Counter of the names assigned in a function body (Python's rule: a name assigned
    anywhere in a function is local to it), nested functions excluded."""
    counts = Counter()

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            counts[node.name] += 1
            return
        if isinstance(node, (ast.Lambda, ast.SetComp, *_COMPREHENSIONS)):
            return  # their variables are their own
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            counts[node.id] += 1
        for child in ast.iter_child_nodes(node):
            visit(child)

    for stmt in body:
        visit(stmt)
    return counts


def _has_break(body):
    """Whether a loop body has a `break` of its own (not of a nested loop)."""
    for stmt in body:
        if isinstance(stmt, ast.Break):
            return True
        if isinstance(stmt, ast.If) and (_has_break(stmt.body) or _has_break(stmt.orelse)):
            return True
    return False


# ---- the parser ----------------------------------------------------------------------


class Parser:
    """Parses one function (a def or a lambda) into `graph` and its block graphs.

    A nested function gets its own Parser, whose `parent` is the enclosing function's
    and `parent_block` the block where the def or lambda is: names it does not assign
    are read there, so a closure captures the values its free variables have at the
    point of the definition (a variable assigned only after the def is an error).  Where
    Python's late binding would read another value (a captured variable assigned again
    before a use of the closure), the program is refused: see myia.parser.captures.
    """

    def __init__(self, node, graph, source, resolver, ssa, parent=None, parent_block=None):
        self.node = node
        self.graph = graph
        self.name = graph.name
        self.source = source
        self.resolver = resolver
        self.ssa = ssa
        self.parent = parent
        self.parent_block = parent_block
        self.block = None  # the current block; None after a return, break or continue
        self.loops = []  # [(header Block, after Block)] of the enclosing loops
        self.loop_assignments = []  # the names each enclosing loop assigns
        self.closure_values = {}  # {variable: the closures assigned to it}
        self.captures = Captures(self)
        self._used = None  # the Name or Lambda node whose closure is used where it is
        self._argument = None  # the argument of a call being parsed
        #: a closure may leave this function (returned, stored, or made by a nested
        #: def that hands one out): else the closures it makes die with its call, and
        #: its parent need not treat it as a factory (see myia.parser.captures)
        self.hands_out = False
        self._bound_callee = None  # the callee of `name = callee(...)` (a factory?)
        if isinstance(node, ast.Lambda):
            self.body = None
            counts = Counter()
        elif isinstance(node, tuple(_COMPREHENSIONS)):
            self.body = None
            counts = Counter(n.id for gen in node.generators for n in ast.walk(gen.target)
                             if isinstance(n, ast.Name))
        else:
            self.body = node.body
            counts = _assignments(node.body)
        counts.update(graph.param_names)
        self.local_names = set(counts)
        # Nested defs at the top level of the body, whose name nothing else assigns, are
        # bound to their graph everywhere in the function: nested functions defined
        # before them can call them (mutual recursion).  Their graphs exist from now on.
        self.static_defs = {}
        self.static_used = {}  # {name: loc of the first use}
        self.defined = set()
        for stmt in self.body or ():
            if isinstance(stmt, ast.FunctionDef) and counts[stmt.name] == 1:
                self._check_def(stmt)
                self.static_defs[stmt.name] = make_signature(
                    stmt, stmt.name, source, self._static_object)

    # ---- helpers -------------------------------------------------------------------

    def loc(self, node):
        return self.source.loc(node)

    def apply(self, fn, *args, loc=None, name=None):
        return self.ssa.apply(self.block.graph, fn, *args, loc=loc, name=name)

    def truth(self, node, loc):
        return self.apply(P.truth, node, loc=loc)

    def switch(self, cond, g_true, g_false, loc):
        """`switch(cond, g_true, g_false)()`, in the current block."""
        sw = self.apply(P.switch, cond, Constant(g_true, loc), Constant(g_false, loc), loc=loc)
        return self.ssa.call(self.block.graph, sw, loc)

    def new_branch(self, kind, loc):
        """A block entered from the current one through a switch (reads its variables
        directly)."""
        return Block(self.ssa, Graph(f"{self.name}:{kind}", loc), pred=self.block)

    def new_join(self, kind, loc):
        """A block entered by jumps (its variables from before are phis)."""
        return Block(self.ssa, Graph(f"{self.name}:{kind}", loc), join=True)

    def branch_expr(self, kind, compute, loc):
        """The graph of a new branch block whose output is `compute()` (an expression
        evaluated in that block)."""
        block = self.new_branch(kind, loc)
        saved, self.block = self.block, block
        try:
            block.graph.output = compute()
        finally:
            self.block = saved
        return block.graph

    def refuse(self, node, what=None, hint=None):
        if what is None:
            what, hint = REFUSED.get(type(node), (None, None))
            if what is None:
                what = f"`{type(node).__name__}` constructs are"
                hint = "rewrite this with the constructs listed in the Myia documentation"
        return MyiaSyntaxError(f"{what} not supported in Myia", self.loc(node), hint=hint)

    def _check_def(self, node):
        if node.decorator_list:
            raise MyiaSyntaxError(
                "decorators on nested functions are not supported",
                self.loc(node.decorator_list[0]),
                hint="apply the decorator outside the compiled code, or call the "
                "function explicitly",
            )

    # ---- names ---------------------------------------------------------------------

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

    def lookup(self, name, loc, as_callee=False, block=None, nested=False, origin=None,
               child=None):
        """The node that the name `name` stands for when read in `block` (default: the
        current block).  `nested`: the read comes from a nested function, whose graph
        (a closure of this function's) is `child`."""
        block = block or self.block
        if name in self.static_defs:
            if not nested and name not in self.defined:
                raise MyiaNameError(
                    f"function `{name}` is used before its definition", loc,
                    hint="move the `def` above this line",
                )
            self.static_used.setdefault(name, loc)
            if nested:
                self.captures.record_static(child.graph, name)
            return Constant(self.static_defs[name], loc)
        if name in self.local_names:
            node = block.read(name, loc, closure=nested)
            if nested:
                self.captures.record(child.graph, name, node)
                if origin is not child:  # read by a closure that `child` makes
                    self.captures.factories.setdefault(child.graph, set()).add(name)
            return node
        if self.parent is not None:
            return self.parent.lookup(name, loc, as_callee, self.parent_block, nested=True,
                                      origin=origin or self, child=self)
        value = (origin or self).global_value(name, loc)
        # (A global tuple of functions becomes a make_tuple in the current block: for a
        # read from a nested function, the block of the def; it is a free variable then.)
        return self.resolver.to_node(value, block.graph, loc, name, as_callee)

    # ---- functions -----------------------------------------------------------------

    def run(self):
        entry = Block(self.ssa, self.graph)
        self.block = entry
        for p in self.graph.parameters:
            entry.write(p.name, p)
        no_effects = Constant(True, self.graph.loc)
        self.ssa.no_effects.add(no_effects)
        entry.write(EFFECTS, no_effects)
        if isinstance(self.node, tuple(_COMPREHENSIONS)):
            self.do_return(self.comprehension_body(), self.loc(self.node))
        elif self.body is None:  # a lambda
            self.do_return(self.expr(self.node.body), self.loc(self.node.body))
        else:
            self.stmts(self.body)
            if self.block is not None:
                end = self.loc(self.body[-1])
                self.do_return(Constant(None, end), end)
            for name, loc in self.static_used.items():
                if name not in self.defined:  # its def is after a return
                    raise MyiaSyntaxError(
                        f"function `{name}` is used but its `def` is never reached", loc,
                        hint="move the `def` before the `return`",
                    )

    def nested_function(self, node, graph):
        self.captures.depth[graph] = len(self.loop_assignments)
        child = Parser(node, graph, self.source, self.resolver, self.ssa, self, self.block)
        child.run()
        if child.hands_out:
            self.captures.handing.add(graph)
        else:  # the closures it makes only run during its calls
            self.captures.factories.pop(graph, None)

    def do_return(self, value, loc):
        """End the current block returning `value`.

        The value is sequenced after the asserts that ran before (the hidden variable
        EFFECTS): `tuple_getitem(make_tuple(effects, value), 1)`, so that the asserts
        are part of what the function computes; `SSAState.finish` drops the wrapper
        where no assert can have run.
        """
        effects = self.block.read(EFFECTS, loc)
        self.block.graph.output = self.ssa.seq(self.block.graph, effects, value, loc)
        self.block = None

    # ---- statements ----------------------------------------------------------------

    def stmts(self, body):
        for stmt in body:
            if self.block is None:
                return  # unreachable code after return, break or continue: dropped
            self.stmt(stmt)

    def stmt(self, node):
        method = getattr(self, "visit_" + type(node).__name__, None)
        if method is None or not isinstance(node, ast.stmt):
            raise self.refuse(node)
        method(node)

    def visit_FunctionDef(self, node):
        self._check_def(node)
        loc = self.loc(node)
        if node.name in self.static_defs:
            graph = self.static_defs[node.name]
        else:
            graph = make_signature(node, node.name, self.source, self._static_object)
            # Bound before the body is parsed, so that the function can call itself.
            self.block.write(node.name, Constant(graph, loc))
        self.nested_function(node, graph)
        self.defined.add(node.name)

    def visit_Return(self, node):
        loc = self.loc(node)
        value = self.used(node.value) if node.value is not None else Constant(None, loc)
        self.do_return(value, loc)

    def visit_Assign(self, node):
        # (a closure bound to a name is followed: each use of the name is checked)
        one_name = len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
        call = node.value if one_name and isinstance(node.value, ast.Call) else None
        # (`m = mk()`: what a factory returns is followed as a closure bound to `m`)
        self._bound_callee = call.func if call is not None else None
        self.captures.pending = None
        value = self.used(node.value) if one_name else self.expr(node.value)
        made, self.captures.pending = self.captures.pending, None
        if made is not None:
            self.captures.results[value] = made
        for target in node.targets:
            self.assign(target, value)

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self.assign(node.target, self.expr(node.value))

    def visit_AugAssign(self, node):
        target = node.target
        if not isinstance(target, ast.Name):
            raise self._refuse_target(target)
        loc = self.loc(node)
        op = self._binary_op(node.op, node)
        current = self.lookup(target.id, self.loc(target))
        value = self.apply(op, current, self.expr(node.value), loc=loc)
        self.assign(target, value)

    def assign(self, target, value):
        if isinstance(target, ast.Name):
            if isinstance(value, Apply) and value.name is None:
                value.name = target.id
            self.captures.assigned(target.id, self.loc(target))
            if isinstance(value, Constant) and isinstance(value.value, Graph):
                self.closure_values.setdefault(target.id, set()).add(value.value)
            elif self.captures.made(value) is not None:
                self.closure_values.setdefault(target.id, set()).add(value)
            self.block.write(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Starred):
                    raise self.refuse(elt, "starred assignment targets (`a, *b = t`) are",
                                      "unpack a fixed number of elements")
                item = self.apply(P.tuple_getitem, value, i, loc=self.loc(elt))
                self.assign(elt, item)
        else:
            raise self._refuse_target(target)

    def _refuse_target(self, target):
        if isinstance(target, ast.Subscript):
            return self.refuse(target, "assignment to an element or a slice (`x[i] = v`) is",
                               _NO_ITEM_ASSIGNMENT)
        if isinstance(target, ast.Attribute):
            return self.refuse(target, "assignment to an attribute (`x.a = v`) is",
                               _NO_MUTATION)
        return self.refuse(target)

    def visit_Delete(self, node):
        for target in node.targets:
            if isinstance(target, ast.Subscript):
                raise self.refuse(target, "deleting an element (`del x[k]`) is", _NO_DELETION)
        raise self.refuse(node)

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a docstring, or a string used as a comment
        # Evaluated and dropped: with no side effects, the node is simply unused.
        self.expr(node.value)

    def visit_Pass(self, node):
        pass

    def visit_Assert(self, node):
        """`assert c, msg`: `a = assert(truth(c), msg)`, which returns True or raises.

        Nothing uses the result of an assert, so we make the rest of the function depend
        on it: the hidden variable EFFECTS holds the asserts run so far, sequenced by
        `tuple_getitem(make_tuple(previous, a), 1)`, and every return sequences its
        value after it (see `do_return`).  EFFECTS flows through the blocks like any
        variable: a loop with an assert carries it as a phi.
        """
        loc = self.loc(node)
        cond = self.truth(self.expr(node.test), self.loc(node.test))
        msg = Constant(None, loc)
        if node.msg is not None:
            msg = self.expr(node.msg)
            if not isinstance(msg, Constant):
                raise MyiaSyntaxError(
                    "the message of an `assert` must be a constant", self.loc(node.msg),
                    hint="write the message as a string literal",
                )
        self.add_effect(self.apply(P.assert_, cond, msg, loc=loc), loc)

    def add_effect(self, node, loc):
        effects = self.block.read(EFFECTS, loc)
        self.block.write(EFFECTS, self.ssa.seq(self.block.graph, effects, node, loc))

    def visit_If(self, node):
        loc = self.loc(node)
        cond = self.truth(self.expr(node.test), self.loc(node.test))
        true_block = self.new_branch("if_true", loc)
        false_block = self.new_branch("if_false", loc)
        self.block.graph.output = self.switch(cond, true_block.graph, false_block.graph, loc)
        after = self.new_join("after_if", loc)
        for block, body in ((true_block, node.body), (false_block, node.orelse)):
            self.block = block
            self.stmts(body)
            if self.block is not None:
                self.block.jump(after, loc)
        after.seal()
        # When both branches return, nothing comes after the `if`: the rest is dropped.
        self.block = after if after.jumps else None

    def visit_While(self, node):
        if node.orelse:
            raise self.refuse(node.orelse[0], "`while ... else` is",
                              "use a variable to remember how the loop ended")
        test = node.test
        if isinstance(test, ast.Constant) and test.value:
            # `while True:` has no test: the header is the body, left by `break` only.
            self.loop(node, "while", None, lambda body: None)
        else:
            self.loop(node, "while",
                      lambda: self.truth(self.expr(test), self.loc(test)),
                      lambda body: None)

    def visit_For(self, node):
        if node.orelse:
            raise self.refuse(node.orelse[0], "`for ... else` is",
                              "use a variable to remember how the loop ended")
        it = node.iter
        if getattr(node, "in_comprehension", False):
            self.for_sequence(node, unrolled=True)
        elif (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
                and self._static_object(it.func) is range):
            self.for_range(node)
        else:
            self.for_sequence(node)

    def for_range(self, node):
        """`for i in range(start, stop, step)`: a counting loop on a hidden counter."""
        call = node.iter
        loc = self.loc(call)
        if call.keywords or not 1 <= len(call.args) <= 3:
            raise MyiaTypeError("range() takes 1 to 3 positional arguments", loc)
        args = [self._range_index(call, k) for k in range(len(call.args))]
        if len(args) == 1:
            args = [Constant(0, loc)] + args
        if len(args) == 2:
            args.append(Constant(1, loc))
        start, stop, step = args
        if isinstance(step, Constant):
            if step.value == 0:
                raise MyiaValueError("range() step must not be zero", self.loc(call.args[2]))
        else:
            self.add_effect(self.apply(
                P.assert_, self.apply(P.ne, step, 0, loc=loc),
                "range() step must not be zero", loc=loc), loc)
        counter = self.ssa.hidden_name(_target_name(node.target) + ".range")
        self.block.write(counter, start)

        def cond():
            i = self.block.read(counter, loc)
            if isinstance(step, Constant):
                return self.apply(P.lt if step.value > 0 else P.gt, i, stop, loc=loc)
            return self.apply(P.switch, self.apply(P.gt, step, 0, loc=loc),
                              self.apply(P.lt, i, stop, loc=loc),
                              self.apply(P.gt, i, stop, loc=loc), loc=loc)

        def enter(body):
            i = body.read(counter, loc)
            body.write(counter, self.apply(P.add, i, step, loc=loc))
            self.assign(node.target, i)

        self.loop(node, "for", cond, enter)

    def _range_index(self, call, k):
        """The node of argument k of `range(...)`: an int, as Python requires (a float
        constant is refused here, anything else not an int constant when compiling,
        see myia.prim.logic.range_bound)."""
        arg = call.args[k]
        what = ("stop",) if len(call.args) == 1 else ("start", "stop", "step")
        node = self.expr(arg)
        if isinstance(node, Constant) and isinstance(node.value, (int, np.integer)):
            return node
        fixed = ast.Call(ast.Name("int", ast.Load()), [arg], [])
        if isinstance(arg, ast.Constant) and isinstance(arg.value, float) \
                and arg.value.is_integer():
            fixed = ast.Constant(int(arg.value))
        hint = "use an int: " + ast.unparse(
            ast.Call(call.func, call.args[:k] + [fixed] + call.args[k + 1:], []))
        if isinstance(node, Constant) and isinstance(node.value, (float, np.floating)):
            kind = f"a {np.dtype(type(node.value))}"
            raise MyiaTypeError(range_message(what[k], kind), self.loc(arg),
                                hint=hint)
        loc = self.loc(arg)
        return self.apply(P.range_bound, node, Constant(what[k], loc), Constant(hint, loc),
                          loc=loc)

    def for_sequence(self, node, unrolled=False):
        """`for x in seq`: a hidden state per sequence (several for `zip`), made and
        stepped by the library (myia.lib.builtins: iter_start, iter_more, iter_next);
        `enumerate` counts with the state's index.  `unrolled` (the loops of a
        comprehension, which build a list of static length): an array or a range is
        walked as the tuple of its elements, so that the loop runs once per element
        at compile time even where an `if` leaves the list as it is."""
        loc = self.loc(node.iter)
        sources = []
        shape = self._iteration(node.iter, loc, sources)
        states = []
        for src in sources:
            name = self.ssa.hidden_name(_target_name(node.target) + ".iter")
            seq = self.expr(src)
            if unrolled:
                seq = self._lib_call(lib.builtins.py_tuple, [seq], loc)
            self.block.write(name, self._lib_call(lib.builtins.iter_start, [seq], loc))
            states.append(name)

        def cond():
            test = None
            for name in states:
                more = self._lib_call(lib.builtins.iter_more, [self.block.read(name, loc)],
                                      loc)
                test = more if test is None else self.apply(P.switch, test, more, False,
                                                            loc=loc)
            return test

        def enter(body):
            values, indexes = [], []
            for name in states:
                state = body.read(name, loc)
                indexes.append(self.apply(P.tuple_getitem, state, 1, loc=loc))
                step = self._lib_call(lib.builtins.iter_next, [state], loc)
                body.write(name, self.apply(P.tuple_getitem, step, 1, loc=loc))
                values.append(self.apply(P.tuple_getitem, step, 0, loc=loc))
            self.assign(node.target, self._loop_value(shape, values, indexes, loc))

        self.loop(node, kind="for", cond=cond, enter=enter)

    def _iteration(self, it, loc, sources):
        """The shape of what a `for` over `it` gives, appending the sequences it walks
        to `sources`: `zip(a, b)` walks a and b side by side, `enumerate(s, start)`
        walks s and counts (nested: `enumerate(zip(X, Y))`), anything else is one
        sequence.  Shapes: ("seq", k), ("zip", [shapes]), ("enumerate", start node,
        the first sequence it walks, shape)."""
        if isinstance(it, ast.Call) and isinstance(it.func, (ast.Name, ast.Attribute)) \
                and not any(isinstance(a, ast.Starred) for a in it.args) \
                and all(k.arg is not None for k in it.keywords):
            fn = self._static_object(it.func)
            if fn is zip and it.args and not it.keywords:
                return ("zip", [self._iteration(a, loc, sources) for a in it.args])
            n = len(it.args) + len(it.keywords)
            if fn is enumerate and it.args and n <= 2 \
                    and all(k.arg == "start" for k in it.keywords):
                if len(it.args) == 2:
                    start = self.expr(it.args[1])
                elif it.keywords:
                    start = self.expr(it.keywords[0].value)
                else:
                    start = Constant(0, loc)
                first = len(sources)
                return ("enumerate", start, first, self._iteration(it.args[0], loc, sources))
        sources.append(it)
        return ("seq", len(sources) - 1)

    def _loop_value(self, shape, values, indexes, loc):
        """The value of a loop's target, from its shape (see `_iteration`), the next
        element of each sequence, and the index of each (the elements seen before)."""
        if shape[0] == "seq":
            return values[shape[1]]
        if shape[0] == "zip":
            return self.apply(P.make_tuple, *[self._loop_value(s, values, indexes, loc)
                                              for s in shape[1]], loc=loc)
        _, start, first, inner = shape
        count = self.apply(P.add, start, indexes[first], loc=loc)
        return self.apply(P.make_tuple, count, self._loop_value(inner, values, indexes, loc),
                          loc=loc)

    def _lib_call(self, fn, args, loc):
        """A call of `fn`, a function of myia.lib, on the nodes `args`."""
        return self.call(self._operation(fn, loc, fn.__name__), args, [], loc, fn.__name__)

    # ---- lists, dicts and comprehensions ---------------------------------------------

    def visit_List(self, node):
        """`[a, b]`; `[a, *rest]` is `[a] + list(rest)`."""
        loc = self.loc(node)
        parts, current = [], []
        for e in node.elts:
            if isinstance(e, ast.Starred):
                if current:
                    parts.append(self._list_of(current, loc))
                    current = []
                parts.append(self._lib_call(lib.builtins.py_list, [self.expr(e.value)], loc))
            else:
                current.append(self.expr(e))
        if current or not parts:
            parts.append(self._list_of(current, loc))
        out = parts[0]
        for part in parts[1:]:
            out = self._lib_call(lib.builtins.list_concat, [out, part], loc)
        return out

    def _list_of(self, nodes, loc):
        return self.apply(P.tuple_as, self.apply(P.make_tuple, *nodes, loc=loc), "list",
                          loc=loc)

    def visit_Dict(self, node):
        """`{k: v, ...}` (keys known at compile time); `{**a, k: v}` merges in order."""
        loc = self.loc(node)
        parts, keys, values = [], [], []
        for k, v in zip(node.keys, node.values):
            if k is None:  # **d
                if keys:
                    parts.append(self._dict_of(keys, values, loc))
                    keys, values = [], []
                parts.append(self.expr(v))
            else:
                keys.append(self.expr(k))
                values.append(self.expr(v))
        if keys or not parts:
            parts.append(self._dict_of(keys, values, loc))
        out = parts[0]
        for part in parts[1:]:
            out = self._lib_call(lib.builtins.dict_merge, [out, part], loc)
        return out

    def _dict_of(self, keys, values, loc):
        """A dict of the key and value nodes: its kind is a constant when the keys
        are (a key given twice keeps its first place and its last value, as in
        Python); otherwise inference checks the keys it computes."""
        if all(isinstance(k, Constant) and isinstance(k.value, KEY_TYPES) for k in keys):
            entries = {}
            for k, v in zip(keys, values):
                entries[(type(k.value), k.value)] = (k.value, v)
            kind = Constant(("dict", tuple(k for k, _ in entries.values())), loc)
            values = [v for _, v in entries.values()]
        else:
            kind = self.apply(P.make_tuple, "dict", self.apply(P.make_tuple, *keys, loc=loc),
                              loc=loc)
        return self.apply(P.tuple_as, self.apply(P.make_tuple, *values, loc=loc), kind,
                          loc=loc)

    def visit_ListComp(self, node):
        return self.comprehension(node)

    visit_GeneratorExp = visit_DictComp = visit_ListComp

    def comprehension(self, node):
        """A comprehension is a nested function (its variables are its own), called
        where it is written."""
        loc = self.loc(node)
        name = {"list": "<listcomp>", "tuple": "<genexpr>", "dict": "<dictcomp>"}
        graph = Graph(name[_COMPREHENSIONS[type(node)]], loc)
        self.nested_function(node, graph)
        return self.apply(Constant(graph, loc), loc=loc)

    def comprehension_body(self):
        """The body of a comprehension's function: acc = () (or {}), its loops and
        `if`s around `acc = tuple_cons(element, acc)` (or dict_set(acc, k, v)), then
        acc reversed (as a list for a list comprehension).  (Consing, not `+`: the
        derivative rules of tuple_cons and of slices hold on any program, typed or not.)"""
        node = self.node
        loc = self.loc(node)
        self.comprehension_acc = self.ssa.hidden_name("comprehension.acc")
        self.block.write(self.comprehension_acc,
                         Constant(_EMPTY[_COMPREHENSIONS[type(node)]], loc))
        stmt = ast.copy_location(ComprehensionElement(node), node)
        for gen in reversed(node.generators):
            if gen.is_async:
                raise self.refuse(gen.iter, "`async for` in a comprehension is",
                                  "use a plain `for`")
            if gen.ifs:
                test = gen.ifs[0]
                if len(gen.ifs) > 1:
                    test = ast.BoolOp(op=ast.And(), values=gen.ifs)
                    _locate(test, gen.ifs[0], gen.ifs[-1])
                stmt = _locate(ast.If(test=test, body=[stmt], orelse=[]), test, test)
            stmt = _locate(ast.For(target=gen.target, iter=gen.iter, body=[stmt], orelse=[]),
                           gen.target, gen.iter)
            stmt.in_comprehension = True
        self.stmt(stmt)
        acc = self.block.read(self.comprehension_acc, loc)
        kind = _COMPREHENSIONS[type(node)]
        if kind == "dict":
            return acc
        acc = self.apply(P.getitem, acc, Constant(slice(None, None, -1), loc), loc=loc)
        if kind == "list":
            acc = self.apply(P.tuple_as, acc, "list", loc=loc)
        return acc

    def visit_ComprehensionElement(self, stmt):
        node = stmt.node
        loc = self.loc(node)
        acc = self.block.read(self.comprehension_acc, loc)
        if isinstance(node, ast.DictComp):
            new = self._lib_call(lib.builtins.dict_set,
                                 [acc, self.expr(node.key), self.expr(node.value)], loc)
        else:
            new = self.apply(P.tuple_cons, self.expr(node.elt), acc, loc=loc)
        self.block.write(self.comprehension_acc, new)

    def loop(self, node, kind, cond, enter):
        """The blocks of a loop.  The current block jumps to `kind_header`, a join block
        whose output is `switch(cond(), kind_body, after_kind)()` (cond=None: the header
        is the body).  `enter(body)` starts the body (the loop variable); the body's end
        and `continue` jump back to the header, `break` to the after block."""
        loc = self.loc(node)
        header = self.new_join(f"{kind}_header", loc)
        self.block.jump(header, loc)
        self.block = header
        if cond is None:
            body = header
            exit_block = None
            after = self.new_join(f"after_{kind}", loc)
        else:
            test = cond()
            body = self.new_branch(f"{kind}_body", loc)
            if _has_break(node.body):
                # `break` jumps to the after block, which must then be a join block:
                # the exit branch of the switch jumps to it too.
                exit_block = self.new_branch(f"{kind}_exit", loc)
                after = self.new_join(f"after_{kind}", loc)
            else:
                exit_block = after = self.new_branch(f"after_{kind}", loc)
            header.graph.output = self.switch(test, body.graph, exit_block.graph, loc)
        self.block = body
        assigned = set(_assignments(node.body))
        if isinstance(node, ast.For):
            assigned |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        self.loop_assignments.append(assigned)
        enter(body)
        self.loops.append((header, after))
        self.stmts(node.body)
        self.loops.pop()
        self.loop_assignments.pop()
        if self.block is not None:
            self.block.jump(header, loc)
        header.seal()
        if exit_block is not None and exit_block is not after:
            exit_block.jump(after, loc)
        if after.join:
            after.seal()
            self.block = after if after.jumps else None
        else:
            self.block = after

    def visit_Break(self, node):
        if not self.loops:
            raise MyiaSyntaxError("`break` outside a loop", self.loc(node))
        self.block.jump(self.loops[-1][1], self.loc(node))
        self.block = None

    def visit_Continue(self, node):
        if not self.loops:
            raise MyiaSyntaxError("`continue` outside a loop", self.loc(node))
        self.block.jump(self.loops[-1][0], self.loc(node))
        self.block = None

    # ---- expressions ---------------------------------------------------------------

    def expr(self, node, as_callee=False):
        method = getattr(self, "visit_" + type(node).__name__, None)
        if method is None or not isinstance(node, ast.expr):
            raise self.refuse(node)
        if as_callee and isinstance(node, (ast.Name, ast.Attribute)):
            return method(node, as_callee=True)
        return method(node)

    def visit_Constant(self, node):
        return Constant(node.value, self.loc(node))

    def visit_Name(self, node, as_callee=False):
        loc = self.loc(node)
        value = self.lookup(node.id, loc, as_callee)
        # a closure named elsewhere than as a callee or an argument may leave this
        # function; so may what a nested def that hands closures out returns
        handed = not as_callee and node is not self._argument
        if value.__class__ is Constant and value.value.__class__ is Graph:
            if handed or value.value in self.captures.handing:
                self.hands_out = True
            self.captures.use(value.value, loc, escapes=node is not self._used,
                              bound=node is self._bound_callee)
        elif isinstance(value, Parameter) and node.id in self.closure_values:
            # a phi (a loop, a join), known once all are: each closure it may be
            if handed or any(not isinstance(fn, Graph) or fn in self.captures.handing
                             for fn in self.closure_values[node.id]):
                self.hands_out = True
            for fn in self.closure_values[node.id]:
                if isinstance(fn, Graph):
                    self.captures.use(fn, loc, escapes=False, when=value)
                else:  # what a factory returned
                    graph, reads = self.captures.made(fn)
                    self.captures.check(graph, reads, loc, (value, fn))
        elif self.captures.made(value) is not None:
            self.hands_out = True
            graph, reads = self.captures.made(value)
            self.captures.check(graph, reads, loc, (None, None))
            if node is not self._used:  # kept in a container: escapes
                self.captures.escape(graph, reads, loc)
        return value

    def used(self, node, as_callee=False):
        """The node of expression `node` where a closure it names (or a lambda) is used
        at once, as a callee, an argument, a returned value, or the value of a name:
        not kept where the parser cannot follow it (see myia.parser.captures)."""
        self._used = node
        try:
            return self.expr(node, as_callee)
        finally:
            self._used = None

    def visit_Attribute(self, node, as_callee=False):
        loc = self.loc(node)
        obj = self._static_object(node)
        if obj is not _NOT_STATIC:
            return self.resolver.to_node(obj, self.block.graph, loc, ast.unparse(node),
                                         as_callee)
        base = self.expr(node.value)
        attr = node.attr
        if attr in lib.ARRAY_ATTRIBUTES:
            fn = self._operation(lib.ARRAY_ATTRIBUTES[attr], loc, f".{attr}")
            return self.call(fn, [base], [], loc, f".{attr}")
        if attr in lib.ARRAY_METHODS:
            raise MyiaSyntaxError(
                f"method `.{attr}` must be called: `{ast.unparse(node)}(...)`", loc,
                hint=f"to pass it as a function, use `lambda a: a.{attr}()`",
            )
        raise _unknown_attribute(node, loc)

    def _operation(self, value, loc, text):
        return self.resolver.to_node(value, self.block.graph, loc, text, as_callee=True)

    def visit_Tuple(self, node):
        return self.apply(P.make_tuple, *[self.expr(e) for e in node.elts], loc=self.loc(node))

    def _binary_op(self, op, node):
        if isinstance(op, ast.MatMult):  # np.matmul: library code (batched, 1-d promoted)
            return self._operation(lib.np_linalg.np_matmul, self.loc(node), "@")
        try:
            return BINARY_OPS[type(op)]
        except KeyError:
            raise self.refuse(node, f"the operator `{OPERATOR_SYMBOLS[type(op)]}` is",
                              "use NumPy functions or arithmetic instead") from None

    def visit_BinOp(self, node):
        op = self._binary_op(node.op, node)
        return self.apply(op, self.expr(node.left), self.expr(node.right), loc=self.loc(node))

    def visit_UnaryOp(self, node):
        loc = self.loc(node)
        op = node.op
        if isinstance(op, ast.USub):
            operand = node.operand
            if (isinstance(operand, ast.Constant) and isinstance(operand.value, (int, float))
                    and not isinstance(operand.value, bool)):
                return Constant(-operand.value, loc)  # -1 is a constant, not neg(1)
            return self.apply(P.neg, self.expr(operand), loc=loc)
        if isinstance(op, ast.UAdd):  # (+True is 1; NumPy refuses +np.True_)
            return self._lib_call(lib.builtins.py_pos, [self.expr(node.operand)], loc)
        if isinstance(op, ast.Not):
            return self.apply(P.not_, self.expr(node.operand), loc=loc)
        return self.apply(P.invert, self.expr(node.operand), loc=loc)  # `~`

    def visit_BoolOp(self, node):
        return self._bool_op(node.op, node.values, node)

    def _bool_op(self, op, values, node):
        """`a and b`: `switch(truth(a), <b>, <a>)()`: b is evaluated only if needed
        (`or` swaps the branches).  More operands nest to the right."""
        loc = self.loc(node)
        left = self.expr(values[0])
        if len(values) == 1:
            return left
        kind = "and" if isinstance(op, ast.And) else "or"
        cond = self.truth(left, self.loc(values[0]))
        rest = self.branch_expr(f"{kind}_rhs", lambda: self._bool_op(op, values[1:], node), loc)
        keep = self.branch_expr(f"{kind}_lhs", lambda: left, loc)
        if kind == "and":
            return self.switch(cond, rest, keep, loc)
        return self.switch(cond, keep, rest, loc)

    def visit_IfExp(self, node):
        loc = self.loc(node)
        cond = self.truth(self.expr(node.test), self.loc(node.test))
        g_true = self.branch_expr("ifexp_true", lambda: self.expr(node.body), loc)
        g_false = self.branch_expr("ifexp_false", lambda: self.expr(node.orelse), loc)
        return self.switch(cond, g_true, g_false, loc)

    def visit_Compare(self, node):
        return self._compare(self.expr(node.left), node.left, node.ops, node.comparators, node)

    def _compare(self, left, left_ast, ops, comparators, node):
        """`a < b < c` is `a < b and b < c`, with b evaluated once."""
        right_ast = comparators[0]
        right = self.expr(right_ast)
        loc = self.source.loc(_span(left_ast, right_ast))
        result = self._compare_one(ops[0], left, right, loc, node)
        if len(ops) == 1:
            return result
        cond = self.truth(result, loc)
        rest = self.branch_expr(
            "and_rhs", lambda: self._compare(right, right_ast, ops[1:], comparators[1:], node),
            loc)
        keep = self.branch_expr("and_lhs", lambda: result, loc)
        return self.switch(cond, rest, keep, loc)

    def _compare_one(self, op, left, right, loc, node):
        if isinstance(op, (ast.In, ast.NotIn)):
            test = self._lib_call(lib.builtins.py_contains, [right, left], loc)
            return test if isinstance(op, ast.In) else self.apply(P.not_, test, loc=loc)
        if isinstance(op, (ast.Is, ast.IsNot)):
            # Only `x is None`: a question about the type of x, answered at compile time
            def is_none(n):
                return isinstance(n, Constant) and n.value is None

            if is_none(left) or is_none(right):
                test = self.apply(P.is_none, right if is_none(left) else left, loc=loc)
                return test if isinstance(op, ast.Is) else self.apply(P.not_, test, loc=loc)
            raise MyiaSyntaxError(
                "`is` is only supported to compare a value with None",
                loc, hint="use `==` to compare values",
            )
        try:
            prim = COMPARE_OPS[type(op)]
        except KeyError:
            raise MyiaSyntaxError(
                f"the operator `{OPERATOR_SYMBOLS[type(op)]}` is not supported in Myia", loc,
                hint="compare the elements one by one with `==`",
            ) from None
        return self.apply(prim, left, right, loc=loc)

    def visit_Lambda(self, node):
        loc = self.loc(node)
        graph = make_signature(node, "<lambda>", self.source, self._static_object)
        escapes = node is not self._used
        if node is not self._argument:
            self.hands_out = True
        self.nested_function(node, graph)
        if escapes:
            captured = self.captures.captured(graph)
            if captured:
                self.captures.escape(graph, captured, loc)
        return Constant(graph, loc)

    def visit_Subscript(self, node):
        loc = self.loc(node)
        base = self._static_object(node.value)
        if base is np.r_ or base is np.c_:
            joiner = lib.np_shape.np_r_ if base is np.r_ else lib.np_shape.np_c_
            return self._index_trick(node, joiner, loc)
        value = self.expr(node.value)
        index = self._index(node.slice)
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if any(isinstance(p, ast.List) for p in parts):
            # `x[[0, 2], 1:]`: NumPy's advanced indexing, with constant lists
            fn = self._operation(lib.np_shape.index_with_lists, loc, "indexing with a list")
            return self.call(fn, [value, index], [], loc, "indexing with a list")
        return self.apply(P.getitem, value, index, loc=loc)

    def _index_trick(self, node, joiner, loc):
        """`np.r_[x, 0:3, y]` and `np.c_[...]`: each slice is the range it spans (its
        bounds must be constants), the parts joined by `joiner`."""
        text = ast.unparse(node.value)
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        items = []
        for p in parts:
            if isinstance(p, ast.Slice):
                bounds = [self.expr(b) if b is not None else Constant(None, loc)
                          for b in (p.lower, p.upper, p.step)]
                arange = self._operation(np.arange, loc, "np.arange")
                if isinstance(bounds[0], Constant) and bounds[0].value is None:
                    bounds[0] = Constant(0, loc)
                items.append(self.call(arange, bounds, [], self.loc(p), "np.arange"))
            elif isinstance(p, ast.Constant) and isinstance(p.value, str):
                raise MyiaSyntaxError(f"`{text}[...]` with a directive string is not supported",
                                      self.loc(p), hint="use np.concatenate or np.stack")
            else:
                items.append(self.expr(p))
        fn = self._operation(joiner, loc, text)
        return self.call(fn, [self.apply(P.make_tuple, *items, loc=loc)], [], loc, text)

    def _index(self, node):
        """An index: a node, a slice (constant, or make_slice), or a make_tuple of those
        for several dimensions (`x[1:3, 0]`)."""
        loc = self.loc(node)
        if isinstance(node, ast.Slice):
            parts = [self.expr(p) if p is not None else Constant(None, loc)
                     for p in (node.lower, node.upper, node.step)]
            if all(isinstance(p, Constant) and not isinstance(p.value, Graph) for p in parts):
                return Constant(slice(*(p.value for p in parts)), loc)
            # x[i:i + n]: make_dslice, whose length is known apart (see slices)
            return slice_node(self.apply, *parts, loc)
        if isinstance(node, ast.Tuple):
            return self.apply(P.make_tuple, *[self._index(e) for e in node.elts], loc=loc)
        return self.expr(node)

    # ---- calls ---------------------------------------------------------------------

    def visit_Call(self, node):
        loc = self.loc(node)
        for a in node.args:
            if isinstance(a, ast.Starred):
                raise self.refuse(a, "starred arguments (`f(*args)`) are",
                                  "pass the arguments one by one")
        for k in node.keywords:
            if k.arg is None:
                raise self.refuse(k, "`**kwargs` arguments are",
                                  "pass the keyword arguments one by one")
        func = node.func
        text = ast.unparse(func)
        if node.keywords and isinstance(func, ast.Name) and self._static_object(func) is dict:
            return self._dict_call(node, loc)
        if isinstance(func, ast.Name) and self._static_object(func) is isinstance \
                and len(node.args) == 2 and not node.keywords:
            return self._isinstance(node, loc)
        keywords = [(k.arg, self.argument(k.value), self.loc(k)) for k in node.keywords]
        if isinstance(func, ast.Attribute):
            _check_dunder(func, self.source)
            if not isinstance(self._static_object(func.value), types.ModuleType):
                return self._method_call(node, func, keywords, loc, text)
        fn = self.used(func, as_callee=True)
        args = [self.argument(a) for a in node.args]
        return self.call(fn, args, keywords, loc, text)

    def argument(self, node):
        """The node of `node`, an argument of a call (a closure named there is used by
        the call, not handed out: see `hands_out`)."""
        self._argument = node
        try:
            return self.used(node)
        finally:
            self._argument = None

    def _isinstance(self, node, loc):
        """`isinstance(x, list)`: a question about x's type, answered at compile time;
        the types (names of Python and NumPy classes, or a tuple of them) are static."""
        spec = node.args[1]
        types_ = spec.elts if isinstance(spec, ast.Tuple) else [spec]
        names = []
        for t in types_:
            obj = self._static_object(t)
            name = lib.builtins.ISINSTANCE_TYPES.get(obj) if isinstance(obj, type) else None
            if name is None:
                raise MyiaSyntaxError(
                    f"isinstance with `{ast.unparse(t)}` is not supported", self.loc(t),
                    hint="the types the subset knows are list, tuple, dict, np.ndarray, "
                         "float, int and bool")
            names.append(name)
        return self._lib_call(lib.builtins.py_isinstance,
                              [self.expr(node.args[0]), Constant(tuple(names), loc)], loc)

    def _dict_call(self, node, loc):
        """`dict(a=1, b=x)`, `dict(d, c=y)`: the keywords are the keys."""
        if len(node.args) > 1:
            raise MyiaTypeError(f"dict expected at most 1 argument, got {len(node.args)}", loc)
        keys = [Constant(k.arg, self.loc(k)) for k in node.keywords]
        out = self._dict_of(keys, [self.expr(k.value) for k in node.keywords], loc)
        if node.args:
            base = self._lib_call(lib.builtins.py_dict, [self.expr(node.args[0])], loc)
            out = self._lib_call(lib.builtins.dict_merge, [base, out], loc)
        return out

    def _method_call(self, node, func, keywords, loc, text):
        """`x.sum(axis=0)`: lib.ARRAY_METHODS["sum"](x, axis=0); `d.items()`:
        lib.CONTAINER_METHODS["items"](d)."""
        attr = func.attr
        if attr not in lib.ARRAY_METHODS:
            if attr in lib.CONTAINER_METHODS:
                fn = self._operation(lib.CONTAINER_METHODS[attr], loc, text)
                args = [self.expr(func.value)] + [self.expr(a) for a in node.args]
                return self.call(fn, args, keywords, loc, text)
            if attr in lib.MUTATING_METHODS:
                x = ast.unparse(func.value)
                args = ", ".join(ast.unparse(a) for a in node.args) or "v"
                raise MyiaSyntaxError(
                    f"arrays, lists and dicts are values in Myia: `{ast.unparse(node)}` "
                    f"cannot change `{x}` in place", loc,
                    hint=lib.MUTATING_METHODS[attr].format(x=x, args=args))
            raise _unknown_attribute(func, self.loc(func))
        base = self.expr(func.value)
        fn = self._operation(lib.ARRAY_METHODS[attr], loc, text)
        args = [self.expr(a) for a in node.args]
        if attr in ("reshape", "transpose") and len(args) > 1:
            args = [self.apply(P.make_tuple, *args, loc=loc)]  # x.reshape(2, 3)
        return self.call(fn, [base] + args, keywords, loc, text)

    def call(self, fn, args, keywords, loc, text):
        """Apply `fn` to `args` and `keywords` ([(name, node, loc)]).

        When `fn` is a known graph (or a value with a signature, `param_names` and
        `defaults`, such as the macro behind `grad`), keywords are matched to its
        parameters and missing arguments are filled from its defaults, now: the IR only
        has positional calls.
        """
        graph = fn.value if isinstance(fn, Constant) else None
        if not (isinstance(graph, Graph) or hasattr(graph, "param_names")):
            graph = None
        if graph is None:
            if keywords:
                if isinstance(fn, Constant) and isinstance(fn.value, Primitive):
                    raise MyiaSyntaxError(
                        f"`{text}` takes no keyword arguments", keywords[0][2],
                        hint="pass the arguments by position")
                raise MyiaSyntaxError(
                    f"keyword arguments need a function known at compile time, and "
                    f"`{text}` is a computed value", keywords[0][2],
                    hint="pass the arguments by position, or call the function by the "
                    "name of its `def`")
            return self.apply(fn, *args, loc=loc)
        return self.apply(fn, *self._bind(graph, args, keywords, loc, text), loc=loc)

    def _bind(self, graph, args, keywords, loc, text):
        names = graph.param_names
        flags = getattr(graph, "flags", {})
        if flags.get("varargs"):
            names = names[:-1]
            rest = self.apply(P.make_tuple, *args[len(names):], loc=loc)
            return self._bind_named(graph, names, args[:len(names)], keywords, loc, text) \
                + [rest]
        return self._bind_named(graph, names, args, keywords, loc, text)

    def _bind_named(self, graph, names, args, keywords, loc, text):
        if len(args) > len(names):
            raise MyiaTypeError(
                f"`{text}()` takes {len(names)} argument{'s' if len(names) != 1 else ''} "
                f"but {len(args)} were given", loc)
        bound = dict(zip(names, args))
        for name, value, kw_loc in keywords:
            if name not in names:
                raise MyiaTypeError(
                    f"`{text}()` got an unexpected keyword argument `{name}`", kw_loc,
                    hint=f"its parameters are: {', '.join(names)}")
            if name in bound:
                raise MyiaTypeError(
                    f"`{text}()` got several values for argument `{name}`", kw_loc)
            bound[name] = value
        out = []
        for name in names:
            if name in bound:
                out.append(bound[name])
            elif name in graph.defaults:
                out.append(Constant(graph.defaults[name], loc))
            else:
                raise MyiaTypeError(f"`{text}()` is missing the argument `{name}`", loc)
        return out


def _target_name(target):
    return target.id if isinstance(target, ast.Name) else "for"


def _locate(node, first, last):
    """`node` (made by the parser) with the location from `first` to `last`."""
    node.lineno, node.col_offset = first.lineno, first.col_offset
    node.end_lineno, node.end_col_offset = last.end_lineno, last.end_col_offset
    return node


def _span(first, last):
    """An ast-like object spanning from `first` to `last` (for locations)."""
    return types.SimpleNamespace(
        lineno=first.lineno, col_offset=first.col_offset,
        end_lineno=last.end_lineno, end_col_offset=last.end_col_offset)


def _unknown_attribute(node, loc):
    known = sorted(set(lib.ARRAY_ATTRIBUTES) | set(lib.ARRAY_METHODS))
    return MyiaSyntaxError(
        f"attribute `.{node.attr}` is not supported (in `{ast.unparse(node)}`)", loc,
        hint="the supported attributes of arrays are " + ", ".join(f".{k}" for k in known)
        + "; the methods of dicts are " + ", ".join(f".{k}()" for k in lib.CONTAINER_METHODS),
    )
