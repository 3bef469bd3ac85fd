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
(a name, `x[i]`, `x.T`, a view, a call of the user's function, which may return its
argument) holds the origins of the names it reads.  Branches join what each one
leaves; a loop's body is walked twice, so what one iteration leaves is seen by the
next.  An assignment `x[...] = v` is accepted when every origin of x is a value made
in the function and no other name that holds one of them is read later (after the
statement, or anywhere in a loop around it).
"""

import ast

import numpy as np

from ..errors import MyiaError

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
    """One value's identity: a parameter, something from outside, or made at a node."""

    __slots__ = ("kind", "name")

    def __init__(self, kind, name):
        self.kind, self.name = kind, name

    def __repr__(self):
        return f"<{self.kind} {self.name}>"


def check_item_assignments(fn_node, static_object):
    """{id of each refused `x[...]` target node of the function: (message, hint)}, and
    {id of each `x op= v` statement whose x shares its value with a name read later:
    that name} (`x += v` changes an array in place in Python: see np_update.update_shared).
    `static_object(expr)` is the Python object a global expression names, or None."""
    walk = _Walk(fn_node, static_object)
    return walk.refused, walk.shared_updates


class _Walk:
    def __init__(self, fn_node, static_object):
        self.static_object = static_object
        self.refused = {}
        self.shared_updates = {}  # id of `x op= v`: a name sharing x's value, read later
        self.loops = []  # the loop statements around the current statement
        self.reads = _reads(fn_node)
        holders = {}
        args = fn_node.args
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs,
                  *filter(None, [args.vararg, args.kwarg])]:
            holders[a.arg] = frozenset([Origin("parameter", a.arg)])
        body = fn_node.body if isinstance(fn_node.body, list) else []
        self.outer = {}  # name -> its origin (one per name read from outside)
        self.local = _assigned(body) | set(holders)
        self.stmts(body, holders)

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
                mine = holders.get(name, frozenset())
                others = sorted(other for other, theirs in holders.items()
                                if other != name and theirs & mine
                                and self.read_later(other, s))
                if others:  # (an array would change in place under them in Python)
                    self.shared_updates[id(s)] = others[0]
                return {**holders, name: frozenset([Origin("made", name)])}
            return holders
        if isinstance(s, ast.AnnAssign) and s.value is not None:
            return self.bind(s.target, self.origins(s.value, holders), holders, s)
        if isinstance(s, ast.If):
            return _join(self.stmts(s.body, dict(holders)), self.stmts(s.orelse, dict(holders)))
        if isinstance(s, (ast.For, ast.While)):
            self.loops.append(s)
            state = dict(holders)
            for _ in range(2):  # what one iteration leaves, the next one sees
                inner = dict(state)
                if isinstance(s, ast.For):
                    inner = self.bind(s.target, self.origins(s.iter, inner), inner, s)
                state = _join(state, self.stmts(s.body, inner))
            self.loops.pop()
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
        name = base.id
        mine = holders.get(name)
        if mine is None:
            self.refused[id(target)] = (
                f"`{name}` is not a variable of this function: assigning to its elements "
                f"would change the value outside (Python changes it in place)",
                f"copy it into a variable of the function first: `{name}_ = np.copy({name})`"
                f" (or `list({name})`, `dict({name})`), then assign to `{name}_[...]`")
            return holders
        for o in mine:
            if o.kind == "parameter":
                self.refused[id(target)] = (
                    f"`{name}` holds the argument `{o.name}`: Python would change the "
                    f"caller's array (or list, or dict) in place, which Myia does not do",
                    f"copy it first: `{name} = np.copy({name})` (a list: `list({name})`, "
                    f"a dict: `dict({name})`)")
                return holders
            if o.kind == "outside":
                self.refused[id(target)] = (
                    f"`{name}` holds `{o.name}`, a value from outside this function: "
                    f"Python would change it in place, which Myia does not do",
                    f"copy it first: `{name} = np.copy({name})`")
                return holders
        others = sorted(other for other, theirs in holders.items()
                        if other != name and theirs & mine and self.read_later(other, stmt))
        if others:
            self.refused[id(target)] = (
                f"`{name}` shares its value with `{others[0]}`, which is read later: in "
                f"Python the assignment would change `{others[0]}` too (the same array, "
                f"a view of it, or a container holding it), which Myia does not do",
                f"copy it before changing it: `{name} = np.copy({name})` (or "
                f"`{name}.copy()`, `list({name})`)")
        return holders

    def read_later(self, name, stmt):
        """Whether `name` is read after `stmt` or anywhere in a loop around it."""
        end = (stmt.end_lineno, stmt.end_col_offset)
        for (line, col) in self.reads.get(name, ()):
            if (line, col) > end:
                return True
            for loop in self.loops:
                if (loop.lineno, loop.col_offset) <= (line, col) \
                        <= (loop.end_lineno, loop.end_col_offset):
                    return True
        return False

    # ---- expressions -----------------------------------------------------------------

    def origins(self, e, holders):
        """The origins of the values expression `e` may hold (or be a view of)."""
        if isinstance(e, ast.Name):
            if e.id in holders:
                return holders[e.id]
            if e.id in self.local:  # (not yet assigned here: a name error later)
                return frozenset()
            return frozenset([self.outer.setdefault(e.id, Origin("outside", e.id))])
        if isinstance(e, (ast.Constant, ast.Lambda, ast.JoinedStr)):
            return frozenset()
        if isinstance(e, (ast.BinOp, ast.UnaryOp, ast.Compare)):
            return frozenset([Origin("made", _text(e))])
        if isinstance(e, (ast.Tuple, ast.List, ast.Dict, ast.Set)):
            parts = [p for p in (e.values if isinstance(e, ast.Dict) else e.elts)]
            held = frozenset().union(*[self.origins(
                p.value if isinstance(p, ast.Starred) else p, holders) for p in parts])
            return held | {Origin("made", _text(e))}
        if isinstance(e, (ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp)):
            return self.read_names(e, holders) | {Origin("made", _text(e))}
        if isinstance(e, ast.Call):
            return self.call(e, holders)
        if isinstance(e, (ast.Subscript, ast.Attribute, ast.Starred)):
            if isinstance(e, ast.Attribute) and e.attr in ("shape", "ndim", "size", "dtype"):
                return frozenset()
            return self.origins(e.value, holders)
        return self.read_names(e, holders)  # (an if-expression, `a or b`...: any of them)

    def call(self, e, holders):
        args = [a.value if isinstance(a, ast.Starred) else a for a in e.args] + \
            [k.value for k in e.keywords]
        of_args = frozenset().union(*[self.origins(a, holders) for a in args])
        fn = None
        try:
            fn = self.static_object(e.func)
        except MyiaError:
            pass
        if fn is not None:
            module = getattr(fn, "__module__", None) or ""
            library = isinstance(fn, np.ufunc) or module.split(".")[0] in (
                "numpy", "scipy", "math")
            if fn in (list, dict, tuple, float, int, bool) or (library and fn not in VIEWS):
                # (`list(x)`: a new list, whose elements are x's: they are held too)
                held = of_args if fn in (list, dict, tuple) else frozenset()
                return held | {Origin("made", _text(e))}
            if library:
                return of_args
        if isinstance(e.func, ast.Attribute) and e.func.attr in NEW_FROM_METHODS \
                and fn is None:
            return frozenset([Origin("made", _text(e))])
        if isinstance(e.func, ast.Attribute) and fn is None:
            return self.origins(e.func.value, holders) | of_args  # x.reshape(...), d.get(k)
        return of_args  # the user's function (or a transform): it may return an argument

    def read_names(self, e, holders):
        return frozenset().union(*[self.origins(n, holders) for n in ast.walk(e)
                                   if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)])


def _join(a, b):
    return {k: a.get(k, frozenset()) | b.get(k, frozenset()) for k in a.keys() | b.keys()}


def _reads(fn_node):
    """{name: [(line, col) of each read]} in the function (its nested functions too)."""
    reads = {}
    for n in ast.walk(fn_node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            reads.setdefault(n.id, []).append((n.lineno, n.col_offset))
    return reads


def _assigned(body):
    names = set()
    for s in body:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.add(n.id)
    return names


def _text(e):
    return f"{ast.unparse(e)[:40]} (line {getattr(e, 'lineno', '?')})"
