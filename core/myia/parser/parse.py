"""Python functions to IR graphs: the entry point, and the Parser's functions,
statements and local names.

`parse(fn)` finds the function's `ast` node (see `source`), and a `Parser` walks it,
one `visit_<AST class>` method per construct; statements build basic blocks (see
`blocks` for the SSA machinery), expressions return nodes.  The Parser's methods for
the other ideas are mixins, one module each: global names and module attributes
(`resolve.NameResolution`), operators, literals and subscripts (`expressions`), calls
(`calls`), loops and comprehensions (`loops`).  The shapes produced, which
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
import types
import weakref
from collections import ChainMap, Counter

from .. import lib
from ..errors import Location, MyiaNameError, MyiaSyntaxError
from ..ir import Apply, Constant, Graph, Node, Parameter
from ..prim import ops as P
from .blocks import Block, SSAState
from .calls import CallParsing, _unknown_attribute
from .captures import Captures
from .expressions import ExpressionParsing
from .loops import _COMPREHENSIONS, LoopParsing, _assignments
from .mutation import check_item_assignments, list_update
from .resolve import (
    _NOT_STATIC, NameResolution, Resolver, _dtype_name, _global_static, _is_constant_data,
    check_not_foreign, constant_value, snapshot,
)
from .source import SourceFile, find_function_ast

#: The hidden variable holding the asserts that ran so far (a keyword: no user variable
#: can have this name).  See `Parser.visit_Assert`.
EFFECTS = "assert"

_NO_MUTATION = (
    "values are immutable in Myia: arrays cannot be modified in place; build a new "
    "array instead (np.where(mask, new, x), or arithmetic on the whole array)"
)
_NO_DELETION = (
    "lists and dicts are values in Myia: build a new one without the element: "
    "`lst = lst[:i] + lst[i + 1:]`, `d = {k2: v for k2, v in d.items() if k2 != k}`"
)

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


# ---- signatures (the values of defaults: resolve.constant_value) -------------------


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


# ---- the parser ----------------------------------------------------------------------


class Parser(NameResolution, ExpressionParsing, CallParsing, LoopParsing):
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
        self._item_refusals = None  # see assign_item (myia.parser.mutation)
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

    # ---- names (global names: resolve.NameResolution) -----------------------------

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
        if not isinstance(target, (ast.Name, ast.Subscript)):
            raise self._refuse_target(target)
        loc = self.loc(node)
        op = self._binary_op(node.op, node)
        if isinstance(target, ast.Subscript):  # x[index] op= v
            return self.assign_item(target, self.expr(node.value), op)
        current = self.lookup(target.id, self.loc(target))
        shared = self._mutations()[1].get(id(node))
        if shared is not None:
            # x shares its value with `shared`: checked not to be an array, which Python
            # would change in place (an effect, so that it is checked even if x is dead)
            text = ast.unparse(node)
            fn = self._operation(lib.np_update.check_unshared, loc, text)
            self.add_effect(self.call(fn, [current, Constant(text, loc), Constant(shared, loc)],
                                      [], loc, text), loc)
        value = self.apply(op, current, self.expr(node.value), loc=loc)
        self.assign(target, value)

    def _mutations(self):
        """(refused `x[...] = v` targets, `x op= v` on shared values): see
        myia.parser.mutation, walked once per function when first needed."""
        if self._item_refusals is None:
            self._item_refusals = check_item_assignments(self.node, self._static_or_none)
        return self._item_refusals

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
        elif isinstance(target, ast.Subscript):
            self.assign_item(target, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Starred):
                    raise self.refuse(elt, "starred assignment targets (`a, *b = t`) are",
                                      "unpack a fixed number of elements")
                item = self.apply(P.tuple_getitem, value, i, loc=self.loc(elt))
                self.assign(elt, item)
        else:
            raise self._refuse_target(target)

    def assign_item(self, target, value, op=None):
        """`x[index] = v`: `x = setitem(x, index, v)`, a new value (myia.lib.np_update),
        where no other holder of x's value is read later (myia.parser.mutation);
        `x[i][j] = v` is `x[i] = setitem(x[i], j, v)`, as x[i] is a view of x.  With
        `op` (`x[index] += v`): `x = setitem_with(x, index, op, v)`."""
        refused = self._mutations()[0].get(id(target))
        if refused is not None:
            raise MyiaSyntaxError(f"cannot assign to `{ast.unparse(target)}`: {refused[0]}",
                                  self.loc(target), hint=refused[1])
        base = target.value
        if not isinstance(base, (ast.Name, ast.Subscript)):
            raise self.refuse(target, "assignment to an element of an attribute or of an "
                                      "expression is", _NO_MUTATION)
        parts = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
        if isinstance(base, ast.Subscript) and any(
                isinstance(p, ast.List) for p in (base.slice.elts if isinstance(
                    base.slice, ast.Tuple) else [base.slice])):
            raise self.refuse(target, "assignment into `x[[...]][...]` (a copy in NumPy, "
                                      "which the assignment would not reach) is",
                              "index once: `x[[0, 2], 1] = v`")
        loc = self.loc(target)
        holder = self.expr(_as_read(base))
        index = self._index(target.slice)
        if any(isinstance(p, ast.List) for p in parts):
            setter = lib.np_update.setitem_with_lists
        else:
            setter = lib.np_update.setitem
        args = [holder, index, value]
        if op is not None:
            op = op if isinstance(op, Node) else Constant(op, loc)
            args = [holder, index, op, value,
                    self._operation(setter, loc, "an assignment to an element")]
            setter = lib.np_update.setitem_with
        fn = self._operation(setter, loc, "an assignment to an element")
        new = self.call(fn, args, [], loc, "an assignment to an element")
        self.assign(base, new)

    def _static_or_none(self, expr):
        value = self._static_object(expr)
        return None if value is _NOT_STATIC else value

    def _refuse_target(self, target):
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
        update = list_update(node)
        if update is not None:  # x.append(v): x = list_append(x, v), where Python agrees
            self.update_list(node, *update)
            return
        # Evaluated and dropped: with no side effects, the node is simply unused.
        self.expr(node.value)

    def update_list(self, node, name, method, arg):
        refused = self._mutations()[0].get(id(node))
        loc = self.loc(node.value)
        text = ast.unparse(node.value)
        if refused is not None:
            raise MyiaSyntaxError(f"cannot change `{name}` with `{text}`: {refused[0]}", loc,
                                  hint=refused[1])
        fn = self._operation(lib.builtins.LIST_UPDATES[method], loc, text)
        target = ast.Name(id=name, ctx=ast.Store())
        ast.copy_location(target, node.value.func.value)
        self.assign(target, self.call(fn, [self.expr(node.value.func.value), self.expr(arg)],
                                      [], loc, text))

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


def _as_read(target):
    """The assignment target `target` (x, x[i]) as an expression that reads it."""
    return type(target)(**{**vars(target), "ctx": ast.Load()})
