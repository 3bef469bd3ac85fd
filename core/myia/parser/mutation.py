"""Index assignment that means what it means in Python, or is refused.

`x[i] = v` changes, in Python, the array (or the list, or the dict) that x holds:
every other holder of that value sees the change (a caller whose array x is, a name
that x was copied to, a view `y = x[0]`, a list that holds x).  Myia computes a new
value for x instead (myia.lib.np_update), so the two agree exactly when no other
holder of x's value is read after the assignment.  This pass, run over a function's
body before it is parsed, finds the assignments where one might be and refuses them,
located, with what to write instead (`x = np.copy(x)` first).

Each name holds values of some *origins*: a parameter, a name from outside the
function, or a value made at a point of the function.  A value is new (an origin of
its own) when an expression makes it: arithmetic, a call of a NumPy function that
returns a new array (`np.zeros`, `np.copy`, `np.sin`..., not `np.reshape` or
`np.asarray`, which may return a view or the argument), `x.copy()`, `x.astype(t)`, a
list, tuple or dict display (which also holds its elements' origins).  Anything else
(a name, `x[i]`, `x.T`, a view) holds the origins of the names it reads.  A call of
the user's function holds what that function may return, read from its source (a
*summary*: its parameters, the names it reads from outside, or values it makes), with
each parameter replaced by the call's argument; so `R = rotation(theta)` is a new
array when `rotation` returns `np.zeros(...)` filled in, and `y = first(x)` shares x
when `first` returns its argument.  A function without source, or a call this pass
cannot follow, holds all of its arguments' origins and the callee's.  Branches join what each one
leaves; a loop's body is walked twice, so what one iteration leaves is seen by the
next.  An assignment `x[...] = v` is accepted when every origin of x is a value made
in the function and no other name that holds one of them is live after it: read
later (after the statement, or in a later iteration of a loop around it) before it
is bound again.  So `x = s2[i]` at the end of a loop body that writes `s2[i] = ...`
is fine: each iteration binds x again before reading it.  Names that a nested
function or lambda reads are live everywhere (it may be called at any point).
"""

import ast
import builtins
import types

import numpy as np

from ..errors import MyiaError
from .source import find_function_ast

#: NumPy functions that may return a view of their argument or the argument itself
VIEWS = {
    np.reshape, np.ravel, np.transpose, np.squeeze, np.expand_dims, np.atleast_1d,
    np.atleast_2d, np.atleast_3d, np.asarray, np.asanyarray, np.broadcast_to,
    np.swapaxes, np.moveaxis, np.flip, np.fliplr, np.flipud, np.diagonal, np.real,
    np.imag, np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit, np.rot90,
    np.ascontiguousarray, np.broadcast_arrays, np.asfortranarray,
}
#: methods that make a new value (the others may return a view or an element)
NEW_FROM_METHODS = {"copy", "astype", "sum", "mean", "prod", "max", "min", "std", "var",
                    "dot", "cumsum", "cumprod", "round", "clip", "flatten", "tolist",
                    "argmax", "argmin", "all", "any", "keys", "values", "items"}


class Origin:
    """One value's identity: a parameter, something from outside, or made at a node
    (a "container" where the node makes a list, a tuple or a dict);
    or (kind "held", name the Origin) a value that a container holds: changing the
    list `[a]` does not change a, changing an element of it does."""

    __slots__ = ("kind", "name", "_held")

    def __init__(self, kind, name):
        self.kind, self.name = kind, name
        self._held = None

    def held(self):
        if self.kind == "held":
            return self
        if self._held is None:
            self._held = Origin("held", self)
        return self._held

    def base(self):
        return self.name if self.kind == "held" else self

    def __repr__(self):
        return f"<{self.kind} {self.name}>"


def _held(origins):
    """What a container of values of these origins holds."""
    return frozenset(o.held() for o in origins)


def _element(origins):
    """The origins of x[i] for x of these origins: a view of x, or an element that x
    holds (never a list itself: its slices are new lists)."""
    return frozenset(o for o in origins if o.kind != "container") | frozenset(
        o.name for o in origins if o.kind == "held")


def _own(origins):
    """The origins of the value itself (not of what it holds)."""
    return frozenset(o for o in origins if o.kind != "held")


def _seen(origins):
    """Every value a holder of these origins can see: its own and what it holds."""
    return frozenset(o.base() for o in origins)


def list_update(stmt):
    """(name, method, argument node) where `stmt` is `x.append(v)` or `x.extend(seq)`
    on a name, else None."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
            and call.func.attr in ("append", "extend") \
            and isinstance(call.func.value, ast.Name) and len(call.args) == 1 \
            and not call.keywords and not isinstance(call.args[0], ast.Starred):
        return call.func.value.id, call.func.attr, call.args[0]
    return None


def check_item_assignments(fn_node, static_object):
    """{id of each refused `x[...]` target node (or `x.append(v)` statement) of the
    function: (message, hint)}, and
    {id of each `x op= v` statement whose x shares its value with a name read later:
    that name} (`x += v` changes an array in place in Python: see np_update.update_shared).
    `static_object(expr)` is the Python object a global expression names, or None."""
    walk = _Walk(fn_node, static_object, {})
    return walk.refused, walk.shared_updates


class _Summary:
    """What a function may return: origins of its walk (kind "parameter" for its
    parameters, "outside" for the names it reads from outside), and its parameters."""

    def __init__(self, fn_node, returns):
        args = fn_node.args
        self.positional = [a.arg for a in [*args.posonlyargs, *args.args]]
        self.named = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
        self.rest = [a.arg for a in filter(None, [args.vararg, args.kwarg])]
        self.returns = returns


def _global_summary(fn, summaries):
    """The _Summary of the user's global function `fn`, or None (no source, or a call
    of it while it is being read: a recursion).  `summaries` (fn -> its summary) lives
    as long as one check: a function redefined since then (in a kernel) is read anew."""
    if fn in summaries:
        return summaries[fn]
    summaries[fn] = None
    try:
        node, _ = find_function_ast(fn)
        summaries[fn] = _Summary(node, _Walk(node, _globals_of(fn), summaries).returns)
    except (MyiaError, SyntaxError, RecursionError):
        pass
    return summaries[fn]


def _globals_of(fn):
    """static_object for the body of a global function: its globals, closure cells and
    builtins (a local name of it is never looked up: see _Walk.call)."""
    names = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))

    def static(expr):
        if isinstance(expr, ast.Name):
            if expr.id in names:
                try:
                    return names[expr.id].cell_contents
                except ValueError:
                    return None
            return fn.__globals__.get(expr.id, getattr(builtins, expr.id, None))
        if isinstance(expr, ast.Attribute):
            base = static(expr.value)
            if isinstance(base, types.ModuleType):
                return getattr(base, expr.attr, None)
        return None
    return static


def _package(fn):
    return (getattr(fn, "__module__", None) or "").split(".")[0]


#: the packages whose functions' results are known here (VIEWS and the others)
LIBRARIES = ("numpy", "scipy", "math")


def _is_users(fn):
    """A Python function of the user's (not NumPy's, SciPy's or Myia's)."""
    return isinstance(fn, types.FunctionType) and _package(fn) not in (
        *LIBRARIES, "myia", "builtins")


class _Walk:
    def __init__(self, fn_node, static_object, summaries):
        self.static_object = static_object
        self.summaries = summaries  # the global functions read so far (_global_summary)
        self.returns = frozenset()  # the origins of what the function may return
        self.nested = {}  # id of a nested def or lambda -> its _Summary
        self.refused = {}
        self.shared_updates = {}  # id of `x op= v`: a name sharing x's value, read later
        self.live_after = _Liveness(fn_node).live_after  # id(statement) -> names
        holders = {}
        args = fn_node.args
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs,
                  *filter(None, [args.vararg, args.kwarg])]:
            holders[a.arg] = frozenset([Origin("parameter", a.arg)])
        body = fn_node.body if isinstance(fn_node.body, list) else []
        self.outer = {}  # name -> its origin (one per name read from outside)
        self.local = _assigned(body) | set(holders)
        if isinstance(fn_node.body, list):
            self.stmts(body, holders)
        else:  # a lambda
            self.returns = self.origins(fn_node.body, holders)

    # ---- statements ------------------------------------------------------------------

    def stmts(self, body, holders):
        for stmt in body:
            holders = self.stmt(stmt, holders)
        return holders

    def stmt(self, s, holders):
        if isinstance(s, ast.Assign):
            for target in s.targets:
                holders = self.assign(target, s.value, holders, s)
            return holders
        if isinstance(s, ast.AugAssign):
            if isinstance(s.target, ast.Subscript):
                return self.item(s.target, holders, s)
            if isinstance(s.target, ast.Name):  # x += y: arithmetic, a new value
                name = s.target.id
                mine = _own(holders.get(name, frozenset()))
                others = sorted(other for other, theirs in holders.items()
                                if other != name and _seen(theirs) & mine
                                and self.read_later(other, s))
                if others:  # (an array would change in place under them in Python)
                    self.shared_updates[id(s)] = others[0]
                return {**holders, name: frozenset([Origin("made", name)])}
            return holders
        update = list_update(s)
        if update is not None:  # x.append(v): x changes, and holds v's origins too
            name, _, arg = update
            held = self.origins(arg, holders)
            self.check_change(name, holders.get(name), s, holders, s, a_list=True)
            return {**holders, name: holders.get(name, frozenset()) | _held(held)}
        if isinstance(s, ast.AnnAssign) and s.value is not None:
            return self.bind(s.target, self.origins(s.value, holders), holders, s)
        if isinstance(s, ast.Return) and s.value is not None:
            self.returns |= self.origins(s.value, holders)
            return holders
        if isinstance(s, ast.FunctionDef):
            return {**holders, s.name: self.function(s)}
        if isinstance(s, ast.If):
            return _join(self.stmts(s.body, dict(holders)), self.stmts(s.orelse, dict(holders)))
        if isinstance(s, (ast.For, ast.While)):
            state = dict(holders)
            for _ in range(2):  # what one iteration leaves, the next one sees
                inner = dict(state)
                if isinstance(s, ast.For):
                    inner = self.bind(s.target, self.origins(s.iter, inner), inner, s)
                state = _join(state, self.stmts(s.body, inner))
            return self.stmts(s.orelse, state)
        return holders

    def assign(self, target, expr, holders, stmt):
        """`target = expr`, element by element where both are displays (`a, b = x, y`)."""
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(expr, (ast.Tuple, ast.List)) \
                and len(target.elts) == len(expr.elts) and not any(
                    isinstance(e, ast.Starred) for e in (*target.elts, *expr.elts)):
            values = [self.origins(e, holders) for e in expr.elts]  # (read before binding)
            for t, v in zip(target.elts, values):
                holders = self.bind(t, v, holders, stmt)
            return holders
        return self.bind(target, self.origins(expr, holders), holders, stmt)

    def bind(self, target, value, holders, stmt):
        if isinstance(target, ast.Name):
            return {**holders, target.id: value}
        if isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:  # (each element may be any of the value's origins)
                holders = self.bind(elt.value if isinstance(elt, ast.Starred) else elt,
                                    value, holders, stmt)
            return holders
        if isinstance(target, ast.Subscript):
            return self.item(target, holders, stmt)
        return holders

    def item(self, target, holders, stmt):
        """`x[...] = v` (or `x[i][j] = v`, which changes x too): accepted or refused."""
        base = target.value
        while isinstance(base, ast.Subscript):
            base = base.value
        if not isinstance(base, ast.Name):
            return holders  # (the parser refuses `obj.a[i] = v` on its own)
        # (x[i][j] = v changes x[i]: x's value or one that x holds)
        changed = self.origins(target.value, holders) if base.id in holders else None
        self.check_change(base.id, changed, target, holders, stmt)
        return holders

    def check_change(self, name, changed, key, holders, stmt, a_list=False):
        """Refuse (under id(key)) a change in place of the value of origins `changed`
        (through the name `name`; None: a name from outside) where Python's result
        would differ from a new value's.  `a_list`: `x.append(v)`, x a list."""
        copy = f"`{name} = list({name})`" if a_list else (
            f"`{name} = np.copy({name})` (a list: `list({name})`, a dict: `dict({name})`)")
        change = "the change" if a_list else "the assignment"
        mine = None if changed is None else _own(changed)
        if mine is None:
            self.refused[id(key)] = (
                f"`{name}` is not a variable of this function: {change} would change the "
                f"value outside (Python changes it in place)",
                f"copy it into a variable of the function first: "
                f"{copy.replace(f'`{name} =', f'`{name}_ =')}, then change `{name}_`")
            return
        for o in mine:
            if o.kind in ("parameter", "outside"):
                what = (f"the argument `{o.name}`: Python would change the caller's value"
                        if o.kind == "parameter" else
                        f"`{o.name}`, a value from outside this function: Python would "
                        f"change it")
                self.refused[id(key)] = (
                    f"`{name}` holds {what} in place, which Myia does not do",
                    f"copy it first: {copy}")
                return
        others = sorted(other for other, theirs in holders.items()
                        if other != name and _seen(theirs) & mine
                        and self.read_later(other, stmt))
        if others:
            self.refused[id(key)] = (
                f"`{name}` shares its value with `{others[0]}`, which is read later: in "
                f"Python {change} would change `{others[0]}` too (the same array, "
                f"a view of it, or a container holding it), which Myia does not do",
                f"copy it before changing it: {copy}")

    def read_later(self, name, stmt):
        """Whether `name` may be read after `stmt` before it is bound again."""
        return name in self.live_after.get(id(stmt), ())

    # ---- expressions -----------------------------------------------------------------

    def origins(self, e, holders):
        """The origins of the values expression `e` may hold (or be a view of)."""
        if isinstance(e, ast.Name):
            if e.id in holders:
                return holders[e.id]
            if e.id in self.local:  # (not yet assigned here: a name error later)
                return frozenset()
            return frozenset([self.outer.setdefault(e.id, Origin("outside", e.id))])
        if isinstance(e, (ast.Constant, ast.JoinedStr)):
            return frozenset()
        if isinstance(e, ast.Lambda):
            return self.function(e)
        if isinstance(e, (ast.BinOp, ast.UnaryOp, ast.Compare)):
            return frozenset([Origin("made", _text(e))])
        if isinstance(e, (ast.Tuple, ast.List, ast.Dict, ast.Set)):
            parts = [p for p in (e.values if isinstance(e, ast.Dict) else e.elts)]
            held = frozenset().union(*[self.origins(
                p.value if isinstance(p, ast.Starred) else p, holders) for p in parts])
            return _held(held) | {Origin("container", _text(e))}
        if isinstance(e, (ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp)):
            return _held(self.read_names(e, holders)) | {Origin("container", _text(e))}
        if isinstance(e, ast.Call):
            return self.call(e, holders)
        if isinstance(e, (ast.Subscript, ast.Attribute, ast.Starred)):
            if isinstance(e, ast.Attribute) and e.attr in ("shape", "ndim", "size", "dtype"):
                return frozenset()
            of = self.origins(e.value, holders)
            if isinstance(e, ast.Subscript):  # a view of x, or an element that x holds
                return _element(of)
            return of
        return self.read_names(e, holders)  # (an if-expression, `a or b`...: any of them)

    def function(self, node):
        """The origin of a nested def's or lambda's value: its summary, whose names
        from outside are this function's names when it is called."""
        if id(node) not in self.nested:
            walk = _Walk(node, self.static_object, self.summaries)
            self.nested[id(node)] = _Summary(node, walk.returns)
        return frozenset([Origin("function", self.nested[id(node)])])

    def call(self, e, holders):
        # (`f(*t)`: each argument is an element of t)
        positional = [_element(self.origins(a.value, holders)) if isinstance(a, ast.Starred)
                      else self.origins(a, holders) for a in e.args]
        keywords = [(k.arg, self.origins(k.value, holders)) for k in e.keywords]
        of_args = frozenset().union(*positional, *[o for _, o in keywords])
        fn = None
        if isinstance(e.func, ast.Name) and (e.func.id in holders or e.func.id in self.local):
            callee = self.origins(e.func, holders)  # a function value of this one
            if callee and all(o.kind == "function" for o in callee):
                return frozenset().union(*[
                    self.apply(o.name, e, positional, keywords, holders, local=True)
                    for o in callee])
            return of_args | _seen(callee)  # (whatever it is, it may return that)
        try:
            fn = self.static_object(e.func)
        except MyiaError:
            pass
        if _is_users(fn):
            summary = _global_summary(fn, self.summaries)
            if summary is not None:
                return self.apply(summary, e, positional, keywords, holders, local=False)
        if fn is not None:
            library = isinstance(fn, np.ufunc) or _package(fn) in LIBRARIES
            if fn in (list, dict, tuple, float, int, bool) or (library and fn not in VIEWS):
                # (`list(x)`: a new list, whose elements are x's: they are held too)
                if fn in (list, dict, tuple):
                    return _held(of_args) | {Origin("container", _text(e))}
                return frozenset([Origin("made", _text(e))])
            if library:
                return of_args
        if isinstance(e.func, ast.Attribute) and e.func.attr in NEW_FROM_METHODS \
                and fn is None:
            return frozenset([Origin("made", _text(e))])
        if isinstance(e.func, ast.Attribute) and fn is None:
            return self.origins(e.func.value, holders) | of_args  # x.reshape(...), d.get(k)
        return of_args  # the user's function (or a transform): it may return an argument

    def apply(self, summary, e, positional, keywords, holders, local):
        """The origins of call `e` (its arguments' origins: `positional`, and
        `keywords` as (name or None for **d, origins)) of a function of this summary: its parameters replaced by the arguments, its names
        from outside by this function's names (a nested function) or kept outside (a
        global one), what it makes made here."""
        if summary.rest or any(name is None for name, _ in keywords) \
                or any(isinstance(a, ast.Starred) for a in e.args):
            every = frozenset().union(*positional, *[o for _, o in keywords])
            bound = dict.fromkeys(summary.named, every)
        else:
            bound = {**dict(zip(summary.positional, positional)), **dict(keywords)}
        made = {}
        out = frozenset()
        for o in summary.returns:
            base = o.base()
            if base.kind == "parameter":
                these = bound.get(base.name, frozenset())
            elif base.kind == "outside":
                these = (self.origins(ast.Name(base.name, ast.Load()), holders) if local
                         else frozenset([Origin("outside", base.name)]))
            elif base.kind in ("made", "container"):
                these = frozenset([made.setdefault(base, Origin(base.kind, _text(e)))])
            else:  # (a function value: it holds what it holds)
                these = frozenset([base])
            out |= _held(these) if o.kind == "held" else these
        return out

    def read_names(self, e, holders):
        return frozenset().union(*[self.origins(n, holders) for n in ast.walk(e)
                                   if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)])


def _join(a, b):
    return {k: a.get(k, frozenset()) | b.get(k, frozenset()) for k in a.keys() | b.keys()}


class _Liveness:
    """The names live after each statement of a function (read on some path from there
    before they are bound again): a backward pass over the statements, each loop taken
    to its fixed point, `break` and `continue` to the loop's exit and its head."""

    def __init__(self, fn_node):
        nested = [n for n in ast.walk(fn_node) if n is not fn_node and isinstance(
            n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]
        self.always = frozenset(n.id for f in nested for n in ast.walk(f)
                                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
        self.live_after = {}
        self.loops = []  # (live at the exit, live at the head) of the loops around
        body = fn_node.body if isinstance(fn_node.body, list) else []
        self.block(body, frozenset())

    def block(self, body, live):
        for s in reversed(body):
            live = self.stmt(s, live)
        return live

    def stmt(self, s, out):
        """The names live before s, given those live after it."""
        out = out | self.always
        self.live_after[id(s)] = out
        if isinstance(s, ast.If):
            return _used(s.test) | self.block(s.body, out) | self.block(s.orelse, out)
        if isinstance(s, (ast.For, ast.While)):
            exit_ = self.block(s.orelse, out)
            head = exit_
            while True:  # (the sets only grow, and are finite)
                self.loops.append((out, head))
                body = self.block(s.body, head)
                self.loops.pop()
                if isinstance(s, ast.For):
                    new = exit_ | (body - _bound(s.target)) | _used(s.target)
                else:
                    new = exit_ | body | _used(s.test)
                if new == head:
                    break
                head = new
            return head | (_used(s.iter) if isinstance(s, ast.For) else frozenset())
        if isinstance(s, ast.Break):
            return self.loops[-1][0] if self.loops else out
        if isinstance(s, ast.Continue):
            return self.loops[-1][1] if self.loops else out
        if isinstance(s, (ast.Return, ast.Raise)):
            return _used(s) | self.always
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return out - {s.name}
        if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            bound = frozenset().union(*[_bound(t) for t in targets])
            used = _used(s.value) if s.value is not None else frozenset()
            used |= frozenset().union(*[_used(t) for t in targets])  # x[i] = v reads x, i
            if isinstance(s, ast.AugAssign):
                used |= bound
            return (out - bound) | used
        return out | _used(s)  # (an expression, assert, pass...)


def _used(node):
    """The names an expression (or a target: `x[i]` reads x and i) reads."""
    return frozenset(n.id for n in ast.walk(node)
                     if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))


def _bound(target):
    """The names a target binds (`x`, `a, b`; not `x[i]`, which changes x)."""
    if isinstance(target, ast.Name):
        return frozenset([target.id])
    if isinstance(target, (ast.Tuple, ast.List)):
        return frozenset().union(*[_bound(e.value if isinstance(e, ast.Starred) else e)
                                   for e in target.elts])
    return frozenset()


def _assigned(body):
    names = set()
    for s in body:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.add(n.id)
            elif isinstance(n, ast.FunctionDef):
                names.add(n.name)
    return names


def _text(e):
    return f"{ast.unparse(e)[:40]} (line {getattr(e, 'lineno', '?')})"
