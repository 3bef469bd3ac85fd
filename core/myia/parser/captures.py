"""What a closure reads from the function around it, and where Python would read a
later value than Myia does.

A closure (a nested def or a lambda) captures the values its free variables have
where it is made: the parser reads them in the block of the def.  Python reads them
when the closure is called (late binding).  The two agree unless a captured variable
is assigned between the def and a call, and Myia refuses those programs, with the
line of the use, rather than compute another number than Python:

* a use of the closure by its name (`g()`, `grad(g)(x)`, `h = g`, `return g`): each
  variable it captured must hold there the value it captured (compared once the phis
  are known, by `SSAState.finish`);
  a variable that held a closure and is read through a phi (in a loop, after an `if`)
  is checked for each closure it held, where the phi turns out to be that closure;
* a closure stored where the parser does not follow it (in a tuple, a list, a dict,
  an operand) *escapes*: no variable it captured may be assigned after that, later in
  the function or anywhere in a loop around it, since any later point may call it.

A function that makes closures reading this function's variables is a *factory*
where it may hand one out (return it, store it, name it elsewhere than as a callee
or an argument, or call a nested def that hands one out): a call of a factory lets
what it read escape.  One that only calls the closures it makes is not: they die
with its call, and the checks of its own uses cover what they read.

A closure passed to a call is used there: a function that would keep it and return
it for a later call (other than `grad` and friends, whose result is a name's value or
called at once) is not followed.
"""

from ..errors import MyiaSyntaxError
from ..ir import Constant, Graph


class Captures:
    """The closures made in one function (by the Parser `parser`), what each captured
    from it, and the closures that escaped."""

    def __init__(self, parser):
        self.parser = parser
        self.of = {}  # {closure graph: {name: the node it captured}}
        self.statics = {}  # {closure graph: {names of the static defs it reads}}
        self.escapes = []  # [(names, closure graph, loc, kept)]
        #: {closure: the variables of this function that the closures it makes read}
        #: (a factory: what it returns may be such a closure, so a call lets them escape)
        self.factories = {}
        self.depth = {}  # {closure: how many loops are around its def}
        #: the closures of this function that may return (or keep) a closure they make
        #: or get: only those are factories (`Parser.hands_out`)
        self.handing = set()
        #: {factory call bound to a name: (factory graph, {name: node it reads})}
        self.results = {}
        self.pending = None  # (the factory call being parsed, bound to a name)

    def record(self, graph, name, node):
        """The closure `graph` (a child of this function) read variable `name`: `node`."""
        self.of.setdefault(graph, {}).setdefault(name, node)

    def record_static(self, graph, name):
        """The closure `graph` reads the function's static def `name`."""
        self.statics.setdefault(graph, set()).add(name)

    def captured(self, graph, seen=None):
        """{name: node} of everything `graph` captured, through the static defs it
        calls (the recursion of mutually recursive defs included)."""
        seen = set() if seen is None else seen
        if graph in seen:
            return {}
        seen.add(graph)
        out = dict(self.of.get(graph, {}))
        for node in list(out.values()):
            # a variable that holds a closure (`h = lambda u: u * v`): what it captured
            if isinstance(node, Constant) and isinstance(node.value, Graph):
                for k, v in self.captured(node.value, seen).items():
                    out.setdefault(k, v)
        for name in self.statics.get(graph, ()):
            g = self.parser.static_defs.get(name)
            if g is not None:
                for k, v in self.captured(g, seen).items():
                    out.setdefault(k, v)
        return out

    def use(self, graph, loc, escapes, when=None, bound=False):
        """The closure `graph` is used by name at `loc`: the variables it captured must
        hold the same values there; `escapes`: it is also stored (see the module);
        `when`: the phi read, which must turn out to be `graph` for the check to hold;
        `bound`: a factory called, its result bound to a name (`m = mk()`), whose
        uses are checked in its turn (`made`)."""
        captured = self.captured(graph)
        if not captured:
            return
        self.check(graph, captured, loc, (when, graph))
        if when is None and escapes:
            self.escape(graph, captured, loc)
        elif when is None and graph in self.factories:
            if bound:
                block = self.parser.block
                self.pending = (graph, {name: block.read(name, loc)
                                        for name in self.factories[graph]})
            else:
                self.escape(graph, self.factories[graph], loc, kept=False)

    def check(self, graph, captured, loc, when):
        """At `loc`, each variable of `captured` ({name: node}) must hold that node
        (once the phis are known; `when`: (the phi read, what it must turn out to be
        for the check to apply) or (None, _))."""
        block = self.parser.block
        for name, node in captured.items():
            self.parser.ssa.stale_reads.append((node, block.read(name, loc), graph, name, loc,
                                                when))

    def made(self, call):
        """The closure the factory call `call` (bound to a name) returned: what its
        reads must hold at each use of that name, or None."""
        return self.results.get(call)

    def escape(self, graph, captured, loc, kept=True):
        """`graph` escapes at `loc`: stored (`kept`), or a factory called (what it
        makes may then live on, but the loops around its def make it anew each pass)."""
        names = set(captured)
        loops = self.parser.loop_assignments
        for assigned in loops if kept else loops[self.depth.get(graph, 0):]:
            again = sorted(names & assigned)
            if again:
                raise _escape_error(graph, again[0], loc, "the loop around it assigns it "
                                    "again", kept)
        self.escapes.append((names, graph, loc, kept))

    def assigned(self, name, loc):
        """Variable `name` is assigned at `loc`: no closure that escaped earlier may
        have captured it."""
        for names, graph, escape_loc, kept in self.escapes:
            if name in names:
                raise _escape_error(graph, name, escape_loc,
                                    f"it is assigned again at line {loc.line}", kept)


def _closure_name(graph):
    return "the lambda" if graph.name == "<lambda>" else f"`{graph.name}`"


def _escape_error(graph, name, loc, why, kept=True):
    what = ("is kept here (in a container or an expression) and reads" if kept else
            "is called here and makes a closure, which it may return, that reads")
    return MyiaSyntaxError(
        f"{_closure_name(graph)} {what} variable `{name}`, but {why}: Python's closure "
        f"reads `{name}` when it is called, Myia's keeps the value `{name}` has here", loc,
        hint=f"pass `{name}` to it as an argument rather than capturing it")


def stale_read_error(graph, name, loc):
    where = f" (line {graph.loc.line})" if graph.loc is not None else ""
    return MyiaSyntaxError(
        f"{_closure_name(graph)} reads variable `{name}`, which is assigned again between "
        f"its definition{where} and this use: Python's closure would read the new value "
        f"here, Myia's the value `{name}` had where the closure was made", loc,
        hint=f"pass `{name}` to it as an argument, or define it after the assignment")
