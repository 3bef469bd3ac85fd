"""Hypothesis strategies that write small Python-subset functions `f(x, ...)` for
tests/ad/test_transforms_fuzz.py (issue 31: transforms checked against each other).

This is a second generator, independent of the one in test_random_programs.py: its
programs are built statement by statement over a typed scope (float scalars, float
arrays, ints, closures, tuples of closures), and each is rendered twice from the same
tree: as the module that Myia compiles (and that Python runs for the reference
values), and as a *traced* module whose comparisons, `np.where` conditions and
`np.maximum`s record the branch they took and their margin, and whose assignments check
that values stay bounded (see `Tracer`).  The traced module decides which points are
too close to a branch switch for finite differences; the plain module is the oracle.

What a program may hold:

- arguments: `x` (float, always first; the one the transforms differentiate) and some
  of `a` (a float array of shape (3,) or (2, 3)), `n` (an int loop count, 0..3), `j`
  (an int index, -2..1), `y` (a float), in a drawn order; module-level globals `G` (a
  float array of shape (3,)) and `C` (a float), and sometimes a module-level function
  `twice(fn, u)`;
- closures: nested `def`s (with a local, or with a nested `def` of their own called
  twice), lambdas bound to a name, lambdas made by a factory (`def mk(c): return
  lambda u: ...`, called twice), closures defined inside a loop body; they capture
  arguments and intermediate values, call one another, are called more than once and
  passed to `twice`; a variable a closure captured may be assigned again after the
  closure's last use (legal: the generator stops using that closure);
- tuples and lists of closures, indexed by a constant or looped over (`for fn in fs: v =
  fn(v)`), also with the tuple written in the `for` itself;
- loops kept at run time (`while i < n`, `for k in range(n)`, `for p in a` over an
  array argument's rows) and loops the compiler unrolls (`for k in range(3)`); a
  `while` on a value (`while v < 1.5 and c < 4`);
- `if`/`elif`/`else` statements and conditional expressions on comparisons of
  intermediate floats;
- arrays with broadcasting (scalar and array operands, the (3,) global against a (2, 3)
  argument), `np.where`, `np.maximum`, elementwise `sin cos tanh exp log sqrt`, indexing
  by an int argument or a constant, `np.sum`/`np.mean`/`.sum()` back to a scalar; scalar
  `math.*` and `np.*` functions.

Expressions stay tame: a division is `e1 / (2.0 + e2 * e2)`, `exp` is of a `tanh` or of
`-e * e`, `log` and `sqrt` are of `1.0 + e * e`, loop updates are damped
(`0.5 * v + e`, `tanh(e)`) and trip counts are at most 4.

`programs(stale=True)` draws the programs that the compiler must refuse with a
MyiaSyntaxError: a closure used (called by name, passed to a call, looped in a tuple)
after a variable it captured was assigned again, or kept in a tuple, a list or an
expression before a variable it captured is assigned again.
"""

import math
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

LIMIT = 1e3  # a value larger than this anywhere: the point is rejected
CONSTS = (0.5, 1.5, 2.0, -1.0, 0.25, 3.0, -0.75)
SCALAR_UNARY = ("sin", "cos", "tanh", "exp_tanh", "gauss", "log1sq", "sqrt1sq")
ARRAY_UNARY = ("sin", "cos", "tanh", "exp_tanh", "log1sq")
BINARY = ("+", "-", "*")


class Reject(Exception):
    """The program is ill-conditioned at this point (a value too large or not finite)."""


# ---- the program tree -------------------------------------------------------------------
#
# scalar expressions:
#   ("var", name) | ("const", c) | ("intf", int name, c): name * c
#   ("bin", op, e1, e2) | ("div", e1, e2): e1 / (2.0 + e2 * e2) | ("un", mod, fn, e)
#   ("call", fname, e) | ("calli", tuple name, k, e): fs[k](e) | ("twice", fname, e)
#   ("red", "sum" | "mean" | "method", array e) | ("item", array name, index)
#   ("ifexp", cond, e1, e2)
# conditions: ("cmp", op, e1, e2)
# array expressions:
#   ("var", name) | ("abin", op, e1, e2) (either may be scalar) | ("aun", fn, e)
#   ("where", e, s, e1, e2): np.where(e > s, e1, e2) | ("max", e1, e2) | ("item", a, index)
# statements:
#   ("assign", name, e) | ("def", name, body) | ("nested", name, inner, e_inner, e)
#   ("lambda", name, e) | ("factory", mk, [(name, arg)], e) | ("tuple", name, fnames, "(" | "[")
#   ("fnloop", var, fnames or tuple name, "(" | "[" | None, damped)
#   ("range", k, count, body) | ("rangen", k, body) | ("while", i, body) | ("rows", p, body)
#   ("vwhile", var, c, counter, e) | ("if", [(cond, body)...], else body or None)
#   ("return", e)
# a def's body: [statements..., ("return", e)] over the parameter `u`


@dataclass
class Program:
    """A drawn function: its parameters, the module's globals and `f`'s statements."""

    params: tuple  # parameter names, x first
    a_ndim: int  # 1 or 2 (the shape of `a` where it is a parameter)
    g: tuple  # the global array's three values
    c: float  # the global float
    body: list
    twice_global: bool = False
    constructs: set = field(default_factory=set)

    def source(self, traced=False, name="f"):
        return render(self, traced, name)

    def __repr__(self):  # hypothesis prints the falsifying example: show the source
        return f"Program(<<<\n{self.source()}>>>)"


def _fmt(c):
    return repr(float(c))


def render_expr(e, traced):
    kind = e[0]
    if kind == "var":
        return e[1]
    if kind == "const":
        return _fmt(e[1]) if e[1] >= 0 else f"({_fmt(e[1])})"
    if kind == "intf":
        return f"({e[1]} * {_fmt(e[2])})"
    if kind == "bin":
        return f"({render_expr(e[2], traced)} {e[1]} {render_expr(e[3], traced)})"
    if kind == "div":
        d = render_expr(e[2], traced)
        return f"({render_expr(e[1], traced)} / (2.0 + {d} * {d}))"
    if kind == "un":
        return _unary(e[1], e[2], render_expr(e[3], traced))
    if kind == "aun":
        return _unary("np", e[1], render_expr(e[2], traced))
    if kind == "call":
        return f"{e[1]}({render_expr(e[2], traced)})"
    if kind == "calli":
        return f"{e[1]}[{e[2]}]({render_expr(e[3], traced)})"
    if kind == "twice":
        return f"twice({e[1]}, {render_expr(e[2], traced)})"
    if kind == "red":
        inner = render_expr(e[2], traced)
        if e[1] == "method":
            return f"({inner}).sum()"
        return f"np.{e[1]}({inner})"
    if kind == "item":
        return f"{e[1]}[{e[2]}]"
    if kind == "ifexp":
        return (f"({render_expr(e[2], traced)} if {render_cond(e[1], traced)} "
                f"else {render_expr(e[3], traced)})")
    if kind == "abin":
        return f"({render_expr(e[2], traced)} {e[1]} {render_expr(e[3], traced)})"
    if kind == "where":
        arr, s = render_expr(e[1], traced), render_expr(e[2], traced)
        cond = f"_T.acmp({arr}, {s})" if traced else f"{arr} > {s}"
        return f"np.where({cond}, {render_expr(e[3], traced)}, {render_expr(e[4], traced)})"
    if kind == "max":
        fn = "_T.maximum" if traced else "np.maximum"
        return f"{fn}({render_expr(e[1], traced)}, {render_expr(e[2], traced)})"
    raise ValueError(e)


def _unary(mod, fn, s):
    if fn in ("sin", "cos", "tanh"):
        return f"{mod}.{fn}({s})"
    if fn == "exp_tanh":
        return f"{mod}.exp({mod}.tanh({s}))"
    if fn == "gauss":
        return f"{mod}.exp(-{s} * {s})"
    if fn == "log1sq":
        return f"{mod}.log(1.0 + {s} * {s})"
    if fn == "sqrt1sq":
        return f"{mod}.sqrt(1.0 + {s} * {s})"
    raise ValueError(fn)


def render_cond(c, traced):
    _, op, e1, e2 = c
    a, b = render_expr(e1, traced), render_expr(e2, traced)
    return f"_T.cmp({a}, {op!r}, {b})" if traced else f"{a} {op} {b}"


def _value(e, traced):
    s = render_expr(e, traced)
    return f"_T.chk({s})" if traced else s


def render_stmts(stmts, indent, traced):
    pad = "    " * indent
    out = []
    for s in stmts:
        kind = s[0]
        if kind == "assign":
            out.append(f"{pad}{s[1]} = {_value(s[2], traced)}")
        elif kind == "return":
            out.append(f"{pad}return {_value(s[1], traced)}")
        elif kind == "def":
            out.append(f"{pad}def {s[1]}(u):")
            out += render_stmts(s[2], indent + 1, traced)
        elif kind == "nested":
            _, name, inner, e_inner, e = s
            out += [f"{pad}def {name}(u):",
                    f"{pad}    def {inner}(w):",
                    f"{pad}        return {_value(e_inner, traced)}",
                    f"{pad}    return {_value(e, traced)}"]
        elif kind == "lambda":
            out.append(f"{pad}{s[1]} = lambda u: {_value(s[2], traced)}")
        elif kind == "twice":
            out += [f"{pad}def twice(fn, u):", f"{pad}    return fn(fn(u))"]
        elif kind == "factory0":
            _, mk, name, e = s
            out += [f"{pad}def {mk}():",
                    f"{pad}    return lambda u: {_value(e, traced)}",
                    f"{pad}{name} = {mk}()"]
        elif kind == "factory":
            _, mk, made, e = s
            out += [f"{pad}def {mk}(c):",
                    f"{pad}    return lambda u: {_value(e, traced)}"]
            out += [f"{pad}{name} = {mk}({render_expr(arg, traced)})" for name, arg in made]
        elif kind == "tuple":
            _, name, fnames, br = s
            out.append(f"{pad}{name} = {_container(fnames, br)}")
        elif kind == "fnloop":
            _, var, fns, br, damped = s
            seq = fns if br is None else _container(fns, br)
            call = f"0.5 * {var} + fn({var})" if damped else f"fn({var})"
            out += [f"{pad}for fn in {seq}:",
                    f"{pad}    {var} = {_value(('var', call), traced)}"]
        elif kind == "range":
            out.append(f"{pad}for {s[1]} in range({s[2]}):")
            out += render_stmts(s[3], indent + 1, traced)
        elif kind == "rangen":
            out.append(f"{pad}for {s[1]} in range(n):")
            out += render_stmts(s[2], indent + 1, traced)
        elif kind == "while":
            i = s[1]
            out += [f"{pad}{i} = 0", f"{pad}while {i} < n:"]
            out += render_stmts(s[2], indent + 1, traced)
            out.append(f"{pad}    {i} = {i} + 1")
        elif kind == "rows":
            out.append(f"{pad}for {s[1]} in a:")
            out += render_stmts(s[2], indent + 1, traced)
        elif kind == "vwhile":
            _, var, c, counter, e = s
            cond = render_cond(("cmp", "<", ("var", var), ("const", c)), traced)
            step = _value(("bin", "+", ("var", var),
                           ("bin", "+", ("const", 0.5),
                            ("bin", "*", ("const", 0.25), ("un", "np", "sin", e)))), traced)
            out += [f"{pad}{counter} = 0",
                    f"{pad}while {cond} and {counter} < 4:",
                    f"{pad}    {var} = {step}",
                    f"{pad}    {counter} = {counter} + 1"]
        elif kind == "if":
            _, arms, orelse = s
            for k, (cond, body) in enumerate(arms):
                word = "if" if k == 0 else "elif"
                out.append(f"{pad}{word} {render_cond(cond, traced)}:")
                out += render_stmts(body, indent + 1, traced)
            if orelse is not None:
                out.append(f"{pad}else:")
                out += render_stmts(orelse, indent + 1, traced)
        else:
            raise ValueError(s)
    return out


def _container(fnames, br):
    if br == "[":
        return "[" + ", ".join(fnames) + "]"
    return "(" + ", ".join(fnames) + ("," if len(fnames) == 1 else "") + ")"


def render(program, traced=False, name="f"):
    lines = ["import math", "", "import numpy as np", "",
             f"G = np.array([{', '.join(_fmt(v) for v in program.g)}])",
             f"C = {_fmt(program.c)}", ""]
    if traced:
        lines += ["_T = None  # the Tracer, set by the test", ""]
    if program.twice_global:
        lines += ["", "def twice(fn, u):", "    return fn(fn(u))", ""]
    lines += ["", f"def {name}({', '.join(program.params)}):"]
    lines += render_stmts(program.body, 1, traced)
    return "\n".join(lines) + "\n"


# ---- the tracer (for the traced rendering) ------------------------------------------------


class Tracer:
    """Records each decision a traced program takes (comparisons, np.where conditions,
    np.maximum's choices) with its margin, and rejects values that are too large."""

    def __init__(self):
        self.decisions = []
        self.margin = math.inf
        self.largest = 0.0

    def cmp(self, a, op, b):
        taken = bool(a < b) if op == "<" else bool(a > b)
        self.decisions.append(taken)
        self.margin = min(self.margin, abs(float(a) - float(b)))
        return taken

    def acmp(self, arr, s):
        d = np.asarray(arr - s, dtype=float)
        self.decisions.append(tuple((d > 0).ravel()))
        self.margin = min(self.margin, float(np.min(np.abs(d))))
        return d > 0

    def maximum(self, e1, e2):
        d = np.asarray(np.subtract(e1, e2), dtype=float)
        self.decisions.append(tuple((d > 0).ravel()))
        self.margin = min(self.margin, float(np.min(np.abs(d))))
        return np.maximum(e1, e2)

    def chk(self, v):
        m = float(np.max(np.abs(v)))
        if not math.isfinite(m) or m > LIMIT:
            raise Reject
        self.largest = max(self.largest, m)
        return v


# ---- drawing programs ------------------------------------------------------------------


@dataclass
class Fn:
    """A closure the program made: what it captured (through the closures it calls
    too), and whether a variable it captured was assigned again since (dead)."""

    name: str
    kind: str
    captures: frozenset
    uses: int = 0
    dead: bool = False
    escaped: bool = False
    in_body: bool = False  # made in the body of the loop being drawn: called before the
    # body assigns what it captured, at each iteration


class Scope:
    """What an expression may read at a point of the program."""

    def __init__(self):
        self.scalars = []  # float scalars
        self.arrays = []  # float arrays (broadcastable with `a`)
        self.vectors = []  # 1-D arrays of 3 floats (indexable by j or a constant)
        self.matrices = []  # 2-D (2, 3) arrays (rows by j or a constant)
        self.ints = []  # ints to scale into floats (n, loop indices)
        self.index = None  # the int index argument, if any
        self.fns = {}  # {name: Fn}, shared with inner scopes
        self.tuples = {}  # {name: [fn names]}
        self.loop_assigned = set()  # what the loops around this point assign
        self.in_closure = False
        self.favored = []  # read more often: a closure's parameters, a loop's variable

    def child(self):
        s = Scope()
        s.scalars = list(self.scalars)
        s.arrays = list(self.arrays)
        s.vectors = list(self.vectors)
        s.matrices = list(self.matrices)
        s.ints = list(self.ints)
        s.index = self.index
        s.fns = self.fns
        s.tuples = self.tuples
        s.loop_assigned = set(self.loop_assigned)
        s.in_closure = self.in_closure
        s.favored = list(self.favored)
        return s

    def callable(self, fn):
        return not fn.dead and (fn.in_body or not (fn.captures & self.loop_assigned))

    def callable_fns(self):
        return [f for f in self.fns.values() if self.callable(f)]

    def callable_tuples(self):
        return [t for t, names in self.tuples.items()
                if all(self.callable(self.fns[n]) for n in names)]


class Gen:
    """One program being drawn (`draw` is hypothesis's)."""

    def __init__(self, draw, params, a_ndim):
        self.draw = draw
        self.params = params
        self.a_ndim = a_ndim
        self.counter = 0
        self.constructs = set()
        self.frozen = set()  # captured by a closure kept in a container: never assigned
        self.reassignable = []  # scalar variables that may be assigned again
        self.kept_loops = 0
        self.loops = 0
        self.twice = None  # "global" / "local" once `twice` exists
        self.assigned_in_def = set()

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def pick(self, seq):
        return self.draw(st.sampled_from(list(seq)))

    def chance(self, p):
        return self.draw(st.integers(0, 999)) < p * 1000

    # -- expressions --

    def scalar(self, scope, depth):
        leaves = ["var"] * 4 + ["const", "global"]
        if scope.ints:
            leaves.append("intf")
        if scope.vectors:
            leaves.append("item")
        if depth <= 0:
            return self._scalar_leaf(scope, self.pick(leaves))
        options = leaves + ["bin", "bin", "div", "un", "un"]
        if scope.callable_fns():
            options += ["call", "call", "call"]
            if self.twice:
                options.append("twice")
        if scope.callable_tuples():
            options += ["calli", "calli"]
        if scope.arrays:
            options += ["red", "red"]
        options.append("ifexp")
        kind = self.pick(options)
        if kind in leaves:
            return self._scalar_leaf(scope, kind)
        if kind == "bin":
            return ("bin", self.pick(BINARY), self.scalar(scope, depth - 1),
                    self.scalar(scope, depth - 1))
        if kind == "div":
            self.constructs.add("division")
            return ("div", self.scalar(scope, depth - 1), self.scalar(scope, depth - 1))
        if kind == "un":
            mod = self.pick(("np", "math"))
            self.constructs.add(f"{mod}.* on scalars")
            return ("un", mod, self.pick(SCALAR_UNARY), self.scalar(scope, depth - 1))
        if kind == "call":
            fn = self.pick(scope.callable_fns())
            self._use(fn)
            return ("call", fn.name, self.scalar(scope, depth - 1))
        if kind == "twice":
            fn = self.pick(scope.callable_fns())
            self._use(fn, 2)
            self.constructs.add(f"closure passed to a {self.twice} function")
            return ("twice", fn.name, self.scalar(scope, depth - 1))
        if kind == "calli":
            t = self.pick(scope.callable_tuples())
            names = scope.tuples[t]
            k = self.draw(st.integers(-len(names), len(names) - 1))
            self._use(scope.fns[names[k]])
            self.constructs.add("function from a container by a constant index")
            return ("calli", t, k, self.scalar(scope, depth - 1))
        if kind == "red":
            how = self.pick(("sum", "mean", "mean", "method"))
            self.constructs.add("reduction to a scalar")
            return ("red", how, self.array(scope, depth - 1))
        # ifexp
        self.constructs.add("conditional expression")
        return ("ifexp", self.cond(scope), self.scalar(scope, depth - 1),
                self.scalar(scope, depth - 1))

    def _scalar_leaf(self, scope, kind):
        if kind == "var":
            if scope.favored and self.chance(0.5):
                return ("var", self.pick(scope.favored))
            return ("var", self.pick(scope.scalars))
        if kind == "const":
            return ("const", self.pick(CONSTS))
        if kind == "global":
            self.constructs.add("global float")
            return ("var", "C")
        if kind == "intf":
            name = self.pick(scope.ints)
            self.constructs.add("int scaled into a float")
            return ("intf", name, self.pick((0.5, 0.25, -0.5)))
        arr = self.pick(scope.vectors)
        if scope.index is not None and self.chance(0.6):
            self.constructs.add("indexing by an int argument")
            return ("item", arr, scope.index)
        self.constructs.add("indexing by a constant")
        return ("item", arr, self.draw(st.integers(-3, 2)))

    def cond(self, scope):
        return ("cmp", self.pick(("<", ">")), self.scalar(scope, 1), self.scalar(scope, 1))

    def array(self, scope, depth):
        leaves = ["var"] * 3
        if scope.matrices:
            leaves.append("row")
        if depth <= 0:
            return self._array_leaf(scope, self.pick(leaves))
        kind = self.pick(leaves + ["abin", "abin", "abin", "aun", "where", "max"])
        if kind in leaves:
            return self._array_leaf(scope, kind)
        self.constructs.add("broadcasting")
        if kind == "abin":
            e1 = self.array(scope, depth - 1)
            e2 = self.array(scope, depth - 1) if self.chance(0.4) else self.scalar(scope, depth - 1)
            if self.chance(0.5):
                e1, e2 = e2, e1
            return ("abin", self.pick(BINARY), e1, e2)
        if kind == "aun":
            return ("aun", self.pick(ARRAY_UNARY), self.array(scope, depth - 1))
        if kind == "where":
            self.constructs.add("np.where")
            other = (self.array(scope, depth - 1) if self.chance(0.5)
                     else self.scalar(scope, 0))
            return ("where", self.array(scope, depth - 1), self.scalar(scope, 0),
                    self.array(scope, depth - 1), other)
        self.constructs.add("np.maximum")
        other = self.array(scope, depth - 1) if self.chance(0.4) else self.scalar(scope, 0)
        return ("max", self.array(scope, depth - 1), other)

    def _array_leaf(self, scope, kind):
        if kind == "row":
            m = self.pick(scope.matrices)
            if scope.index is not None and self.chance(0.6):
                self.constructs.add("indexing by an int argument")
                return ("item", m, scope.index)
            self.constructs.add("indexing by a constant")
            return ("item", m, self.draw(st.integers(-2, 1)))
        name = self.pick(scope.arrays)
        if name == "G":
            self.constructs.add("global array")
        return ("var", name)

    def _use(self, fn, k=1):
        fn.uses += k
        if fn.uses >= 2:
            self.constructs.add("closure called more than once")

    # -- closures --

    def captures_of(self, e, local, scope):
        """The variables `e` reads from around the closure (all but `local`), through
        the closures and containers of closures it calls."""
        out = set()

        def walk(n):
            if not isinstance(n, tuple) or not n:
                return
            kind = n[0]
            if kind in ("var", "intf", "item") and n[1] not in local and n[1] not in ("G", "C"):
                out.add(n[1])
            if kind == "item" and isinstance(n[2], str):
                out.add(n[2])
            if kind in ("call", "twice"):
                out.update(scope.fns[n[1]].captures)
            if kind == "calli":
                for name in scope.tuples[n[1]]:
                    out.update(scope.fns[name].captures)
            for child in n[1:]:
                walk(child)

        walk(e)
        return frozenset(out - set(local))

    def closure_scope(self, scope, params):
        inner = scope.child()
        inner.scalars = inner.scalars + list(params)
        inner.favored = list(params)
        inner.in_closure = True
        return inner

    def define_closure(self, scope, stmts, where="top"):
        kind = self.pick(("def", "def", "lambda", "lambda", "nested", "factory"))
        if kind == "def":
            name = self.fresh("g")
            inner = self.closure_scope(scope, ["u"])
            body, local = [], {"u"}
            if self.chance(0.4):
                t = self.fresh("t")
                body.append(("assign", t, self.scalar(inner, 2)))
                inner.scalars.append(t)
                local.add(t)
                self.constructs.add("closure: def with a local")
            body.append(("return", self.scalar(inner, 2)))
            caps = frozenset().union(*(self.captures_of(s[-1], local, scope) for s in body))
            stmts.append(("def", name, body))
            self.constructs.add("closure: nested def")
            made = [name]
        elif kind == "lambda":
            name = self.fresh("h")
            e = self.scalar(self.closure_scope(scope, ["u"]), 2)
            caps = self.captures_of(e, {"u"}, scope)
            stmts.append(("lambda", name, e))
            self.constructs.add("closure: lambda")
            made = [name]
        elif kind == "nested":
            name, inner_name = self.fresh("g"), self.fresh("q")
            s1 = self.closure_scope(scope, ["u"])
            s1.fns = dict(scope.fns)  # the inner def is seen only inside
            e_inner = self.scalar(self.closure_scope(s1, ["w"]), 2)
            caps_inner = self.captures_of(e_inner, {"u", "w"}, scope)
            s1.fns[inner_name] = Fn(inner_name, "inner", caps_inner)
            e = ("bin", self.pick(BINARY), ("call", inner_name, ("var", "u")),
                 ("call", inner_name, self.scalar(s1, 1)))
            caps = self.captures_of(e, {"u"}, s1)
            stmts.append(("nested", name, inner_name, e_inner, e))
            self.constructs.add("closure: def inside a def, called twice")
            made = [name]
        else:  # factory: its closures read the factory's argument `c`
            mk = self.fresh("mk")
            e = self.scalar(self.closure_scope(scope, ["u", "c"]), 2)
            caps = self.captures_of(e, {"u", "c"}, scope)
            made = [(self.fresh("m"), self.scalar(scope, 0))
                    for _ in range(self.draw(st.integers(1, 2)))]
            stmts.append(("factory", mk, made, e))
            self.constructs.add("closure: lambda made by a factory")
            made = [m for m, _ in made]
        for m in made:
            scope.fns[m] = Fn(m, kind, caps, in_body=where == "loop")
        if where == "loop":
            self.constructs.add("closure defined in a loop body")
        return made

    # -- statements --

    def assign_new_scalar(self, scope, stmts, depth=2):
        name = self.fresh("v")
        stmts.append(("assign", name, self.scalar(scope, depth)))
        scope.scalars.append(name)
        self.reassignable.append(name)
        return name

    def reassign(self, scope, name, e, stmts):
        stmts.append(("assign", name, e))
        self.killed_by(scope, name)

    def killed_by(self, scope, name):
        for fn in scope.fns.values():
            if name in fn.captures and not fn.dead:
                fn.dead = True
                if fn.uses:
                    self.constructs.add("captured variable assigned after the closure's "
                                        "last use")

    def reassignable_vars(self, scope):
        out = [v for v in self.reassignable
               if v in scope.scalars and v not in self.frozen
               and v not in scope.loop_assigned]
        if len(out) > 2 and self.chance(0.8):  # the arguments less often
            out = [v for v in out if v not in ("x", "y")]
        return out

    def carried(self, scope, stmts):
        """A scalar that a loop updates: an existing one, or a new one."""
        options = self.reassignable_vars(scope)
        if options and self.chance(0.6):
            return self.pick(options)
        return self.assign_new_scalar(scope, stmts, 1)

    def update(self, scope, var):
        e = self.scalar(scope, 2)
        form = self.pick(("damped", "damped", "squash", "step"))
        if form == "damped":
            return ("bin", "+", ("bin", "*", ("const", 0.5), ("var", var)), e)
        if form == "squash":
            return ("un", self.pick(("np", "math")), self.pick(("tanh", "sin")),
                    ("bin", "+", ("var", var), e))
        return ("bin", "+", ("var", var), ("bin", "*", ("const", 0.25), e))

    def loop_body(self, scope, var, stmts):
        """The body of a loop that updates `var` (and only it)."""
        scope.favored = [var] + [n for n in scope.favored if n != var]
        if self.chance(0.25):
            made = self.define_closure(scope, stmts, where="loop")
            scope.favored = [var]
            fn = scope.fns[self.pick(made)]
            self._use(fn)
            stmts.append(("assign", var, ("bin", "+", ("bin", "*", ("const", 0.5), ("var", var)),
                                          ("call", fn.name, self.scalar(scope, 1)))))
            return
        if self.chance(0.3):
            self.constructs.add("if on values")
            then = [("assign", var, self.update(scope, var))]
            orelse = [("assign", var, self.update(scope, var))] if self.chance(0.7) else None
            stmts.append(("if", [(self.cond(scope), then)], orelse))
        else:
            stmts.append(("assign", var, self.update(scope, var)))

    def loop(self, scope, stmts, kind):
        var = self.carried(scope, stmts)
        inner = scope.child()
        inner.loop_assigned |= {var}
        inner.fns = dict(scope.fns)  # closures defined in the body stay in it
        body = []
        if kind == "range":
            k = self.fresh("k")
            inner.ints.append(k)
            self.loop_body(inner, var, body)
            stmts.append(("range", k, self.draw(st.integers(1, 3)), body))
            self.constructs.add("unrolled loop: for k in range(constant)")
        elif kind == "rangen":
            k = self.fresh("k")
            inner.ints.append(k)
            self.loop_body(inner, var, body)
            stmts.append(("rangen", k, body))
            self.constructs.add("kept loop: for k in range(n)")
        elif kind == "while":
            i = self.fresh("i")
            inner.ints.append(i)
            self.loop_body(inner, var, body)
            stmts.append(("while", i, body))
            self.constructs.add("kept loop: while i < n")
        else:  # rows
            p = self.fresh("p")
            if self.a_ndim == 1:
                inner.scalars.append(p)
                inner.favored.append(p)
            else:
                inner.arrays.append(p)
                inner.vectors.append(p)
            self.loop_body(inner, var, body)
            stmts.append(("rows", p, body))
            self.constructs.add(f"kept loop: for p in a ({self.a_ndim}-D)")
        self.killed_by(scope, var)

    def statement(self, scope, stmts):
        options = ["assign", "assign", "assign", "closure", "closure", "closure", "if"]
        if scope.arrays:
            options.append("array")
        if self.reassignable_vars(scope):
            options.append("reassign")
        live = [f for f in scope.fns.values() if not f.dead]
        unused = [f for f in live if f.uses == 0]
        options += ["call"] * (3 * len(unused))
        if live:
            options += ["tuple", "call"]
            if self.twice is None:
                options.append("twice")
            options.append("fnloop")
        if self.loops < 2:
            options += ["range", "vwhile"]
            if self.kept_loops < 1:
                if "n" in self.params:
                    options += ["while", "rangen"]
                if "a" in self.params:
                    options.append("rows")
        kind = self.pick(options)
        if kind == "assign":
            self.assign_new_scalar(scope, stmts)
        elif kind == "array":
            name = self.fresh("w")
            stmts.append(("assign", name, self.array(scope, 2)))
            scope.arrays.append(name)
        elif kind == "reassign":
            var = self.pick(self.reassignable_vars(scope))
            self.reassign(scope, var, self.scalar(scope, 2), stmts)
        elif kind == "closure":
            self.define_closure(scope, stmts)
        elif kind == "call":  # a closure called twice (an unused one, more often)
            fn = self.pick(unused) if unused and self.chance(0.7) else self.pick(live)
            self._use(fn, 2)
            name = self.fresh("v")
            stmts.append(("assign", name, ("bin", self.pick(BINARY),
                                           ("call", fn.name, self.scalar(scope, 1)),
                                           ("call", fn.name, self.scalar(scope, 1)))))
            scope.scalars.append(name)
            self.reassignable.append(name)
        elif kind == "if":
            self.constructs.add("if on values")
            self.if_statement(scope, stmts)
        elif kind == "tuple":
            self.tuple_of_fns(scope, stmts)
        elif kind == "twice":
            self.twice = self.pick(("global", "local"))
            if self.twice == "local":
                stmts.append(("twice",))
        elif kind == "fnloop":
            self.fn_loop(scope, stmts)
        elif kind in ("range", "vwhile"):
            self.loops += 1
            if kind == "range":
                self.loop(scope, stmts, "range")
            else:
                var = self.carried(scope, stmts)
                inner = scope.child()
                inner.loop_assigned |= {var}
                stmts.append(("vwhile", var, self.pick((0.5, 1.0, 1.5, 2.0)),
                              self.fresh("c"), self.scalar(inner, 1)))
                self.constructs.add("while on a value")
                self.killed_by(scope, var)
        else:
            self.loops += 1
            self.kept_loops += 1
            self.loop(scope, stmts, kind)


    def if_statement(self, scope, stmts):
        existing = self.reassignable_vars(scope)
        if existing and self.chance(0.4):
            var, new = self.pick(existing), False
        else:
            var, new = self.fresh("v"), True
        arms = [(self.cond(scope), [("assign", var, self.scalar(scope, 2))])]
        if self.chance(0.25):
            arms.append((self.cond(scope), [("assign", var, self.scalar(scope, 2))]))
            self.constructs.add("elif")
        orelse = None
        if new or self.chance(0.6):
            orelse = [("assign", var, self.scalar(scope, 2))]
        stmts.append(("if", arms, orelse))
        if new:
            scope.scalars.append(var)
            self.reassignable.append(var)
        else:
            self.killed_by(scope, var)

    def tuple_of_fns(self, scope, stmts):
        live = [f for f in scope.fns.values() if not f.dead]
        names = [self.pick(live).name for _ in range(self.draw(st.integers(1, 3)))]
        br = self.pick(("(", "["))
        name = self.fresh("fs")
        stmts.append(("tuple", name, names, br))
        self.escape(scope, names)
        scope.tuples[name] = names
        self.constructs.add("list of functions" if br == "[" else "tuple of functions")

    def escape(self, scope, names):
        for n in names:
            scope.fns[n].escaped = True
            self.frozen |= scope.fns[n].captures

    def fn_loop(self, scope, stmts):
        tuples = [t for t, names in scope.tuples.items()
                  if all(not scope.fns[n].dead for n in names)]
        if tuples and self.chance(0.5):
            fns, br = self.pick(tuples), None
            names = scope.tuples[fns]
        else:
            live = [f for f in scope.fns.values() if not f.dead]
            names = [self.pick(live).name for _ in range(self.draw(st.integers(1, 3)))]
            fns, br = names, self.pick(("(", "["))
            self.escape(scope, names)
        options = self.reassignable_vars(scope)
        if options and self.chance(0.6):
            var = self.pick(options)
        else:
            var = self.assign_new_scalar(scope, stmts, 1)
        for n in names:
            self._use(scope.fns[n])
        stmts.append(("fnloop", var, fns, br, self.chance(0.5)))
        self.killed_by(scope, var)
        self.constructs.add("loop over functions")

    def ret(self, scope, stmts, last):
        e = self.scalar(scope, 2)
        if last is not None and self.chance(0.7):
            e = ("bin", "+", ("var", last), e)
        stmts.append(("return", e))


def _signature(draw):
    extras = draw(st.lists(st.sampled_from(("a", "n", "j", "y")), unique=True, max_size=4))
    if draw(st.booleans()):
        extras = draw(st.permutations(extras))
    return ("x", *extras)


def _base_scope(gen):
    scope = Scope()
    scope.scalars = ["x"] + (["y"] if "y" in gen.params else [])
    scope.arrays = ["G"]
    scope.vectors = ["G"]
    if "a" in gen.params:
        scope.arrays.append("a")
        (scope.vectors if gen.a_ndim == 1 else scope.matrices).append("a")
    if "n" in gen.params:
        scope.ints.append("n")
    if "j" in gen.params:
        scope.index = "j"
    gen.reassignable = ["x"] + (["y"] if "y" in gen.params else [])
    return scope


_GLOBAL_VALUES = st.sampled_from((0.5, -0.25, 1.0, 0.75, -1.5, 2.0))


@st.composite
def programs(draw, stale=False, max_statements=5):
    """A Program (see the module's docstring); with `stale`, one the compiler refuses."""
    params = _signature(draw)
    a_ndim = draw(st.sampled_from((1, 2)))
    gen = Gen(draw, params, a_ndim)
    scope = _base_scope(gen)
    stmts = []
    last = None
    for _ in range(draw(st.integers(0 if stale else 1, 2 if stale else max_statements))):
        gen.statement(scope, stmts)
    for s in reversed(stmts):
        if s[0] == "assign" and s[1] in scope.scalars:
            last = s[1]
            break
    if stale:
        _stale_tail(gen, scope, stmts)
    else:
        gen.ret(scope, stmts, last)
    program = Program(params=params, a_ndim=a_ndim,
                      g=tuple(draw(_GLOBAL_VALUES) for _ in range(3)),
                      c=draw(_GLOBAL_VALUES), body=stmts,
                      twice_global=gen.twice == "global")
    program.constructs = set(gen.constructs)
    return program


# ---- stale closures: programs the compiler must refuse ------------------------------------


def _stale_tail(gen, scope, stmts):
    """Appends to `stmts` a closure over a new variable, an assignment of that variable
    and a use of the closure that Python would see the new value through (or a
    container that keeps the closure before the assignment), then a return."""
    draw = gen.draw
    var = gen.fresh("v")
    stmts.append(("assign", var, ("bin", "*", ("var", "x"), ("const", gen.pick(CONSTS)))))
    scope.scalars.append(var)
    kinds = ["def", "lambda", "nested", "static chain", "def calling a named lambda",
             "factory"]
    kind = gen.pick(kinds)
    captured = ("bin", gen.pick(BINARY), ("var", "u"), ("var", var))
    if kind == "def":
        name = gen.fresh("g")
        stmts.append(("def", name, [("return", captured)]))
    elif kind == "lambda":
        name = gen.fresh("h")
        stmts.append(("lambda", name, captured))
    elif kind == "nested":
        name, inner = gen.fresh("g"), gen.fresh("q")
        stmts.append(("nested", name, inner, ("bin", "+", ("var", "w"), ("var", var)),
                      ("call", inner, ("var", "u"))))
    elif kind == "static chain":
        first, name = gen.fresh("g"), gen.fresh("g")
        stmts.append(("def", first, [("return", captured)]))
        stmts.append(("def", name, [("return", ("bin", "+", ("call", first, ("var", "u")),
                                                 ("const", 1.0)))]))
    elif kind == "def calling a named lambda":
        lam, name = gen.fresh("h"), gen.fresh("g")
        stmts.append(("lambda", lam, captured))
        stmts.append(("def", name, [("return", ("call", lam, ("var", "u")))]))
    else:  # factory
        mk, name = gen.fresh("mk"), gen.fresh("m")
        stmts.append(("factory0", mk, name, captured))
    gen.constructs.add(f"stale: closure is a {kind}")
    if gen.chance(0.3):  # a legal use first
        stmts.append(("assign", gen.fresh("v"), ("call", name, ("var", "x"))))
    change = ("assign", var, ("bin", "+", ("var", var), ("const", gen.pick(CONSTS))))
    use = gen.pick(("call", "call in a loop", "passed to twice", "for over a tuple",
                    "kept in a tuple", "kept in a list", "kept in an expression",
                    "kept in a tuple in a loop"))
    gen.constructs.add(f"stale: {use}")
    out = gen.fresh("r")
    if use == "call":
        where = gen.pick(("straight", "if", "range"))
        if where == "straight":
            stmts.append(change)
        elif where == "if":
            stmts.append(("if", [(("cmp", ">", ("var", "x"), ("const", 0.0)), [change])],
                          [change] if gen.chance(0.5) else None))
        else:
            stmts.append(("range", gen.fresh("k"), draw(st.integers(1, 2)), [change]))
        gen.constructs.add(f"stale: assigned again in {where}")
        stmts.append(("return", ("call", name, ("var", "x"))))
        return
    if use == "call in a loop":
        body = [("assign", var, ("bin", "+", ("call", name, ("var", var)),
                                 ("const", 0.5)))]
        loop = gen.pick(("range", "while", "rangen") if "n" in gen.params else ("range",))
        if loop == "range":
            stmts.append(("range", gen.fresh("k"), 2, body))
        elif loop == "while":
            stmts.append(("while", gen.fresh("i"), body))
        else:
            stmts.append(("rangen", gen.fresh("k"), body))
        stmts.append(("return", ("var", var)))
        gen.constructs.add(f"stale: called in a {loop} loop that assigns it")
        return
    if use == "passed to twice":
        stmts.append(change)
        gen.twice = gen.twice or "global"
        stmts.append(("return", ("twice", name, ("var", "x"))))
        return
    if use == "for over a tuple":
        stmts.append(change)
        stmts.append(("assign", out, ("var", "x")))
        stmts.append(("fnloop", out, [name], "(", False))
        stmts.append(("return", ("var", out)))
        return
    if use == "kept in a tuple in a loop":
        body = [("tuple", gen.fresh("fs"), [name], "("), change]
        stmts.append(("range", gen.fresh("k"), 2, body))
        stmts.append(("return", ("var", var)))
        return
    fs = gen.fresh("fs")
    if use == "kept in an expression":
        other = gen.fresh("h")
        stmts.append(("lambda", other, ("bin", "*", ("var", "u"), ("const", 2.0))))
        stmts.append(("assign", fs, ("ifexp", ("cmp", ">", ("var", "x"), ("const", 0.0)),
                                     ("var", name), ("var", other))))
        stmts.append(change)
        stmts.append(("return", ("call", fs, ("var", "x"))))
        return
    stmts.append(("tuple", fs, [name], "[" if use == "kept in a list" else "("))
    stmts.append(change)
    # a use of the container after the assignment is not needed for the refusal
    stmts.append(("return", ("calli", fs, 0, ("var", "x")) if gen.chance(0.5)
                  else ("var", var)))
