"""Which graphs each call may reach: the analysis the interprocedural rewrites share.

Inference knows, at every call, the set of functions the callee may be (`AFunction`
options), so the call sites of each graph are known, provided no function value
escapes to a place that calls it unseen (a primitive other than those that only
carry values, or the program's result).  Graphs that share a call site form a group:
a rewrite of what a group returns changes every member and every site together.
"""

from ..abstract import AEnv, AFunction, ATuple, GraphFunction, PartialFunction
from ..ir import Apply, Constant, Graph, manage
from ..prim import Primitive
from ..prim import ops as P
from .zeros import is_float_value, is_zero

#: primitives that only carry function values (never call them)
_CARRIERS = {P.make_tuple, P.tuple_getitem, P.switch, P.env_setitem, P.env_getitem}


def _options_in(a, out):
    """Add to `out` every function option named anywhere inside abstract `a`."""
    t = type(a)
    if t is AFunction:
        for o in a.options:
            out.add(o)
            if isinstance(o, PartialFunction):
                out.add(o.fn)
                for x in o.args:
                    _options_in(x, out)
    elif t is ATuple:
        for e in a.elements:
            _options_in(e, out)
    elif t is AEnv and a.entries:
        for v in a.entries.values():
            _options_in(v, out)
    return out


class CallGraph:
    """Which graphs each call may reach, and which graphs are called unseen."""

    def __init__(self, root, mng=None):
        self.root = root
        self.mng = mng = mng or manage(root)
        self.graph_of = {}  # GraphFunction option -> graph
        self.option_of = {}  # graph -> its option
        self.uses = {}  # graph -> [(user Apply or None for an output, index, owner graph)]
        self.ok = True  # False: some node is untyped, nothing is known
        self._groups = None
        self._calls_of = None
        self._graphs_by_option = {}
        applies = []
        for g in mng.graphs:
            out = g.output
            if isinstance(out, Constant) and isinstance(out.value, Graph):
                self._note(out, g)
                self.uses.setdefault(out.value, []).append((None, g, g))
            for node in mng.nodes(g):
                if isinstance(node, Apply):
                    applies.append(node)
                    for i, inp in enumerate(node.inputs):
                        if isinstance(inp, Constant) and isinstance(inp.value, Graph):
                            self._note(inp, g)
                            self.uses.setdefault(inp.value, []).append((node, i, g))
        # inlining copies the graphs nested in the inlined one, abstracts included: two
        # graphs may then share an option, and a call of it cannot be attributed
        for o, gs in self._graphs_by_option.items():
            if len(gs) > 1:
                del self.graph_of[o]
                for g in gs:
                    self.option_of.pop(g, None)
        self.sites = {}  # call node -> [graphs]
        self.escaped = set()  # options that may be called where we cannot see
        self.escaped |= _options_in(root.output.abstract, set())
        for node in applies:
            fn = node.inputs[0]
            if isinstance(fn, Constant) and isinstance(fn.value, Primitive):
                if fn.value not in _CARRIERS:
                    for a in node.inputs[1:]:
                        if a.abstract is None:
                            continue
                        _options_in(a.abstract, self.escaped)
                if fn.value.name == "make_closure" and node.abstract is not None:
                    # a closure's record (myia.infer.specialize): its calls call the
                    # record's graph, not the closure's copy that shares its option
                    _options_in(node.abstract, self.escaped)
                continue
            a = fn.abstract
            if not isinstance(a, AFunction):
                self.ok = False
                return
            graphs = []
            for o in a.options:
                g = self.graph_of.get(o) if isinstance(o, GraphFunction) else None
                if g is None:
                    graphs = None  # a primitive, a partial, a macro: not a graph call
                    break
                graphs.append(g)
            if graphs is None:
                # a call we cannot attribute calls its graph options unseen
                self.escaped |= {o for o in a.options if isinstance(o, GraphFunction)}
            self.sites[node] = graphs

    def _note(self, const, owner):
        a = const.abstract
        if isinstance(a, AFunction) and len(a.options) == 1:
            (o,) = a.options
            if isinstance(o, GraphFunction):
                self._graphs_by_option.setdefault(o, set()).add(const.value)
                self.graph_of.setdefault(o, const.value)
                self.option_of.setdefault(const.value, o)
                return
        self.ok = False

    def calls_of(self, g):
        """The call sites that may call graph `g` (one list per analysis)."""
        if self._calls_of is None:
            self._calls_of = {}
            for site, graphs in self.sites.items():
                for h in graphs or ():
                    self._calls_of.setdefault(h, []).append(site)
        return self._calls_of.get(g, [])

    def call_groups(self):
        """The `CallGroups` of this analysis, made once (a rewrite that uses them and
        changes the program asks for a new analysis)."""
        if self._groups is None:
            self._groups = CallGroups(self)
        return self._groups

    def known(self, g):
        """True if every call of `g` is one of `sites`."""
        o = self.option_of.get(g)
        # (a graph with a rule of the user's keeps its parameters and output: the
        # rule, applied to the call by J, gives one cotangent per parameter)
        return o is not None and o not in self.escaped and g is not self.root \
            and "custom" not in g.flags


def projection(user, site):
    """The projection `user` applies to `site` as a hashable signature, or None."""
    if not isinstance(user, Apply) or len(user.inputs) < 2 or user.inputs[1] is not site:
        return None  # (a call without arguments, `site()`, is no projection)
    if user.is_apply(P.tuple_getitem):
        i = user.inputs[2]
        if isinstance(i, Constant) and isinstance(i.value, int):
            return ("tuple_getitem", i.value)
    if user.is_apply(P.env_getitem):
        k, d = user.inputs[2], user.inputs[3]
        if isinstance(k, Constant) and isinstance(d, Constant) \
                and not isinstance(d.value, (Graph, Primitive)):
            try:
                hash(d.value)
            except TypeError:
                return None
            return ("env_getitem", k.value, type(d.value), d.value)
        if isinstance(k, Constant) and is_zero(d) and is_float_value(d.abstract):
            # an array's symbolic zero: any of its type is the same (`zero_of`)
            return ("env_getitem", k.value, "zero", d.abstract)
    return None


class CallGroups:
    """Graphs that share a call site, grouped (a graph returning a call of others
    joins their group: its callers see their results).  For each group: its members,
    its call sites, and whether it is blocked (some member may be called unseen)."""

    def __init__(self, cg):
        self.cg = cg
        mng = cg.mng
        self.parent = {}
        self.tail_of = {}  # call site -> the graph whose output it is
        outputs = {g.output: g for g in mng.graphs}
        for site, graphs in cg.sites.items():
            if not graphs:
                continue
            for g in graphs[1:]:
                self._union(graphs[0], g)
            h = outputs.get(site)
            if h is not None:
                self.tail_of[site] = h
                self._union(graphs[0], h)
        blocked = set()
        for site, graphs in cg.sites.items():
            if graphs is not None and any(not cg.known(g) for g in graphs):
                blocked.update(self.find(g) for g in graphs)
        for g in mng.graphs:
            if not cg.known(g):
                blocked.add(self.find(g))
        self.groups = []  # (members, sites)
        by_key = {}
        for site, graphs in cg.sites.items():
            if graphs:
                by_key.setdefault(self.find(graphs[0]), []).append(site)
        members = {}
        for g in mng.graphs:
            members.setdefault(self.find(g), []).append(g)
        for key, sites in by_key.items():
            if key not in blocked:
                self.groups.append((members.get(key, []), sites))

    def find(self, g):
        parent = self.parent
        while parent.setdefault(g, g) is not g:
            parent[g] = parent[parent[g]]
            g = parent[g]
        return g

    def _union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra is not rb:
            self.parent[ra] = rb

    def passes_through(self, g):
        """True if `g` returns the result of a call of its own group."""
        return g.output in self.tail_of and self.tail_of[g.output] is g \
            and bool(self.cg.sites.get(g.output))
