"""Rewrites that need every call site of a graph: narrowing outputs, eta-reducing closures.

The local rules (`rules.py`) see one node at a time, so they cannot remove what a
derivative program passes between graphs: a backpropagator returns a tuple, or an
environment, of which every caller reads one entry; a loop's backpropagator is a
closure whose whole body calls another closure.  Inference knows, at every call, the
set of functions the callee may be (`AFunction` options), so the call sites of each
graph are known, provided no function value escapes to a place that calls it unseen
(a primitive other than those that only carry values, or the program's result).

    drop_dead_entries  a tuple entry callers only hand back up is never computed.
    drop_dead_arguments  an argument that only feeds the same arguments of further
                     calls, through float arithmetic, becomes a constant.
    zero_arguments   an argument (or a tuple argument's entry) that every caller
                     passes as a symbolic zero is read as one inside the callee.
    narrow_outputs   every caller of graphs f1..fn reads the same projection P of the
                     result (tuple_getitem(., i) or env_getitem(., k, d)): each fi returns
                     P(its output), and the callers use the call itself.
    eta_reduce       g(p1..pn) = f(p1..pn) with f a free variable of g (or a constant
                     function): uses of g become uses of f, and abstracts that name g
                     name f's options instead.
"""

from ..abstract import (AConstant, AEnv, AFunction, AScalar, ATuple, GraphFunction,
                              PartialFunction)
from ..ir import Apply, Constant, Graph, Parameter, manage
from ..prim import Primitive
from ..prim import ops as P
from ..prim.grad_ops import SymbolicZero
from .match import calls
from .zeros import is_float_value, is_zero, zero_by_inputs, zero_of

#: primitives that only carry function values (never call them)
_NONE = AConstant(None)

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

    def known(self, g):
        """True if every call of `g` is one of `sites`."""
        o = self.option_of.get(g)
        # (a graph with a rule of the user's keeps its parameters and output: the
        # rule, applied to the call by J, gives one cotangent per parameter)
        return o is not None and o not in self.escaped and g is not self.root \
            and "custom" not in g.flags


# ---- narrowing outputs --------------------------------------------------------------


def _projection(user, site):
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
        for key, sites in by_key.items():
            if key not in blocked:
                members = [g for g in mng.graphs if self.find(g) is key]
                self.groups.append((members, sites))

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


def narrow_outputs(root, cg=None):
    """Push a projection that every caller applies into the callees.  Returns the
    number of graph groups narrowed."""
    cg = cg or CallGraph(root)
    if not cg.ok:
        return 0
    mng = cg.mng
    groups = CallGroups(cg)
    narrowed = 0
    # The manager's answers are computed once and kept across groups: an edit adds
    # uses only to the sites it narrows and to the outputs it projects (`touched`), so
    # a group whose sites, or their users, were not touched reads true answers; one
    # that was waits for a fresh analysis (walking the whole program again for every
    # group was most of the optimizer's time on nested derivatives)
    touched = set()
    returned_by = _returned_by(mng)
    for members, sites in groups.groups:
        if touched and (not touched.isdisjoint(sites)
                        or any(u in touched for s in sites for u, _ in mng.users(s))):
            mng.invalidate()
            touched = set()
            returned_by = _returned_by(mng)
        proj, abstract, users = None, None, []
        fine = True
        for site in sites:
            for user, _ in mng.users(site):
                p = _projection(user, site)
                if p is None or (proj is not None and p != proj) \
                        or (abstract is not None and user.abstract != abstract):
                    fine = False
                    break
                proj, abstract = p, user.abstract
                users.append((site, user))
            if not fine:
                break
        if not fine or proj is None:
            continue
        # (the users first: a member that returns one of them then returns its site)
        for site, user in users:
            for u, i in mng.users(user):
                u.inputs[i] = site
            for g in returned_by.pop(user, ()):
                g.output = site
                returned_by.setdefault(site, []).append(g)
            touched.add(site)
        for g in members:
            if groups.passes_through(g):
                continue  # its callee returns the projection already
            new = Apply(g, [users[0][1].inputs[0], g.output] + list(users[0][1].inputs[2:]),
                        g.output.loc)
            new.abstract = abstract
            touched.add(g.output)
            returned_by[g.output].remove(g)
            g.output = new
            returned_by[new] = [g]
        for site in sites:
            site.abstract = abstract
        narrowed += 1
    mng.invalidate()
    return narrowed


def _returned_by(mng):
    """{node: the graphs that return it}."""
    out = {}
    for g in mng.graphs:
        out.setdefault(g.output, []).append(g)
    return out


# ---- dead tuple entries -------------------------------------------------------------


def drop_dead_entries(root, cg=None):
    """A tuple entry that callers only pass back up as the same entry of their own
    result (a loop's value, threaded through every iteration's (value, backpropagator)
    pair when only the backpropagator is wanted) is never read: the callees return
    None in its place.  Returns the number of entries dropped."""
    cg = cg or CallGraph(root)
    if not cg.ok:
        return 0
    mng = cg.mng
    groups = CallGroups(cg)
    dropped = 0
    returned_by = {}
    for g in mng.graphs:
        returned_by.setdefault(g.output, set()).add(g)
    returned = set(returned_by)
    # (the manager's answers are kept across groups: an edit only removes uses, so a
    # later group may see a use that is gone and keep an entry, which the next round
    # of `interprocedural` drops)
    for members, sites in groups.groups:
        outs = {g.output for g in members if not groups.passes_through(g)}
        # each output is a make_tuple used by nothing else, and returned by no graph
        # outside the group (two ifs whose branches return one free variable: what
        # one's callers leave unread, the other's may read)
        if not all(o.is_apply(P.make_tuple) and not mng.users(o)
                   and returned_by[o] <= set(members) for o in outs):
            continue
        width = {len(o.inputs) - 1 for o in outs}
        if len(width) != 1:
            continue
        (n,) = width
        live = set()
        fine = True
        for site in sites:
            if not isinstance(site.abstract, ATuple):
                fine = False
                break
            for user, _ in mng.users(site):
                p = _projection(user, site)
                if p is None or p[0] != "tuple_getitem":
                    fine = False
                    break
                i = p[1]
                uses = mng.users(user)
                if not uses or user in returned \
                        or any(u not in outs or k != i + 1 for u, k in uses):
                    live.add(i)
            if not fine:
                break
        dead = [i for i in range(n) if i not in live]
        if not fine or not dead or all(_is_none(o.inputs[1 + i]) for o in outs for i in dead):
            continue
        for o in outs:
            for i in dead:
                c = Constant(None, o.loc)
                c.abstract = _NONE
                o.inputs[1 + i] = c
        for node in list(outs) + list(sites):
            elems = list(node.abstract.elements)
            for i in dead:
                elems[i] = _NONE
            node.abstract = ATuple(elems)
        for site in sites:
            for user, _ in mng.users(site):
                if user.inputs[2].value in dead:
                    user.abstract = _NONE
        dropped += len(dead)
    mng.invalidate()
    return dropped


#: float operations that cannot fail: computing them or not changes nothing else
_PURE_FLOAT_OPS = {P.add, P.sub, P.mul, P.truediv, P.neg, P.sin, P.cos, P.tanh, P.exp}


def drop_dead_arguments(root, cg=None):
    """An argument that only feeds, through float arithmetic, the same kind of argument
    of calls (a loop's value in the forward pass of a gradient that does not depend on
    it: x = (x + x) / 2) is dead: every caller passes a constant instead and the
    callee reads the constant, so the arithmetic folds away.  Returns the number of
    parameters made constant."""
    cg = cg or CallGraph(root)
    if not cg.ok:
        return 0
    mng = cg.mng
    single = {}  # call site -> its one callee, for known callees of float parameters
    for site, graphs in cg.sites.items():
        if graphs and len(graphs) == 1 and cg.known(graphs[0]):
            single[site] = graphs[0]
    sites_of = {}
    for site, g in single.items():
        sites_of.setdefault(g, []).append(site)
    all_sites = {g: [n for n, u in cg.sites.items() if u and g in u] for g in sites_of}
    candidates = set()
    for g, sites in sites_of.items():
        if len(sites) != len(all_sites[g]):
            continue  # also called where it may be another graph
        for k, p in enumerate(g.parameters):
            if _is_float_scalar(p.abstract) and all(len(s.inputs) == len(g.parameters) + 1
                                                    for s in sites):
                candidates.add((g, k))
    returned = {h.output for h in mng.graphs}

    def dead(g, k):
        """Whether every use of parameter k of g ends in a candidate argument."""
        todo = [g.parameters[k]]
        seen = set()
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            if n in returned:
                return False
            for user, i in mng.users(n):
                callee = single.get(user)
                if callee is not None and i >= 1:
                    if (callee, i - 1) not in candidates:
                        return False
                elif i >= 1 and user.inputs[0].__class__ is Constant \
                        and user.inputs[0].value in _PURE_FLOAT_OPS \
                        and _is_float_scalar(user.abstract):
                    todo.append(user)
                else:
                    return False
        return True

    changed = True
    while changed:
        changed = False
        for gk in list(candidates):
            if not dead(*gk):
                candidates.discard(gk)
                changed = True
    count = 0
    for g, k in candidates:
        p = g.parameters[k]
        if not mng.users(p):
            continue  # done already
        zero = _zero_like(p.abstract, p.loc)
        for site in sites_of[g]:
            site.inputs[1 + k] = _zero_like(p.abstract, site.loc)
        for user, i in list(mng.users(p)):
            user.inputs[i] = zero
        count += 1
    if count:
        mng.invalidate()
    return count


def _is_float_scalar(a):
    return isinstance(a, AScalar) and a.dtype in ("float64", "float32")


def _zero_like(a, loc):
    c = Constant(0.0, loc)
    c.abstract = AScalar(a.dtype, 0.0)
    return c


def _is_none(node):
    return isinstance(node, Constant) and node.value is None


# ---- zero arguments -----------------------------------------------------------------


#: how deep `zero_arguments` follows an argument's expression through linear operations
#: (a chain of a loop body unrolled is thousands deep: past this, not zero)
ZERO_SEARCH_DEPTH = 64


def zero_arguments(root, cg=None):
    """A parameter, or an entry of a tuple parameter, that every caller passes as a
    symbolic zero (`myia.opt.zeros`) is read as one.  This is JAX's symbolic zero
    through a loop's carry: forward mode threads a tangent through every value a loop
    carries, and where the loop's state does not depend on the perturbed input (a
    step size, an inner optimization's iterate) the tangent is zero at entry and the
    body only keeps it zero; the local rules cannot see that, since the body reads it
    from a parameter.

    Optimistic, as constant propagation over a loop: every float parameter (or entry)
    of a graph whose callers are all known starts as zero; one whose caller passes
    something else than a symbolic zero, another such parameter, or a linear function
    of those (`zeros.linear_zero_inputs`) stops being one, until none does.  Returns
    the number of parameters (entries) whose reads became zeros."""
    cg = cg or CallGraph(root)
    if not cg.ok:
        return 0
    mng = cg.mng
    sites_of = {}
    for site, graphs in cg.sites.items():
        for g in graphs or ():
            sites_of.setdefault(g, []).append(site)
    where = {}  # parameter -> (its graph, its position)
    zero = set()  # (graph, position, tuple entry or None for the whole parameter)
    for g, sites in sites_of.items():
        if not cg.known(g) or any(len(s.inputs) != len(g.parameters) + 1 for s in sites):
            continue
        for k, p in enumerate(g.parameters):
            where[p] = (g, k)
            a = p.abstract
            if is_float_value(a):
                zero.add((g, k, None))
            elif isinstance(a, ATuple):
                zero.update((g, k, i) for i, e in enumerate(a.elements) if is_float_value(e))
    if not zero:
        return 0

    def entry_zero(tup, i, memo, depth=0):
        """Is entry i of the tuple `tup` zero, as far as `zero` says?"""
        if tup.__class__ is Parameter:
            gk = where.get(tup)
            return gk is not None and (*gk, i) in zero
        if tup.__class__ is Constant:
            v = tup.value
            return isinstance(v, tuple) and i < len(v) and v[i].__class__ is SymbolicZero
        if calls(tup, P.make_tuple):
            return i + 1 < len(tup.inputs) and is_zero_under(tup.inputs[i + 1], memo, depth)
        return False

    def is_zero_under(node, memo, depth=0):
        r = memo.get(node)
        if r is None:
            if depth > ZERO_SEARCH_DEPTH:
                return False  # (not searched further: not zero, which is always sound)
            memo[node] = False  # (a cycle reads as not zero)
            r = memo[node] = _zero_under(node, memo, depth + 1)
        return r

    def _zero_under(node, memo, depth):
        if is_zero(node):
            return True
        if node.__class__ is Parameter:
            gk = where.get(node)
            return gk is not None and (*gk, None) in zero
        if node.__class__ is not Apply or node.inputs[0].__class__ is not Constant:
            return False
        prim, args = node.inputs[0].value, node.inputs[1:]
        if prim is P.make_tuple:  # (a tuple of zeros: what concatenate reads)
            return all(is_zero_under(a, memo, depth) for a in args)
        if prim is P.tuple_getitem:
            i = args[1]
            return i.__class__ is Constant and i.value.__class__ is int \
                and entry_zero(args[0], i.value, memo, depth)
        return zero_by_inputs(node, lambda a: is_zero_under(a, memo, depth))

    changed = True
    while changed:
        changed = False
        memo = {}
        for g, k, i in list(zero):
            for site in sites_of[g]:
                arg = site.inputs[k + 1]
                if not (is_zero_under(arg, memo) if i is None else entry_zero(arg, i, memo)):
                    zero.discard((g, k, i))
                    changed = True
                    break
    outputs = {}
    for h in mng.graphs:
        outputs.setdefault(h.output, []).append(h)
    count = 0
    for g, k, i in zero:
        p = g.parameters[k]
        if i is None:
            reads = [p] if mng.users(p) or p in outputs else []
        else:
            reads = [u for u, j in mng.users(p) if j == 1 and calls(u, P.tuple_getitem)
                     and u.inputs[2].__class__ is Constant and u.inputs[2].value == i]
        for read in reads:
            z = zero_of(read, p.graph if read is p else read.graph)
            for user, j in list(mng.users(read)):
                user.inputs[j] = z
            for h in outputs.get(read, ()):
                h.output = z
            count += 1
    if count:
        mng.invalidate()
    return count


# ---- eta reduction ----------------------------------------------------------------


def _eta_target(g, mng):
    """f when g(p1..pn) = f(p1..pn) and f is visible outside g; else None."""
    out = g.output
    if not isinstance(out, Apply):
        return None
    f = out.inputs[0]
    args = out.inputs[1:]
    if isinstance(f, Constant):
        if not isinstance(f.value, Graph) or f.value is g:
            return None
    elif f.graph is g or not isinstance(f.abstract, AFunction):
        return None
    if len(args) != len(g.parameters):
        return None
    for a, p in zip(args, g.parameters):
        if a is p:
            continue
        # a parameter inference proved constant may be passed as that constant
        if isinstance(a, Constant) and p.abstract is not None and a.abstract is not None \
                and getattr(p.abstract, "known", False) and p.abstract == a.abstract:
            continue
        return None
    return f


def eta_reduce(root, cg=None):
    """Replace closures that only forward their arguments by the function they call.
    Returns the number of graphs removed."""
    cg = cg or CallGraph(root)
    if not cg.ok:
        return 0
    mng = cg.mng
    done = 0
    substitution = {}
    # Several graphs are removed in one go, except along a chain (g1 forwarding to g2,
    # itself forwarding): the uses of g2 that removing g1 creates are not in the call
    # graph, so g2 waits for the next analysis.  Nothing else goes stale: f is used
    # only where it is in scope, so no graph's parent changes.
    targets = set()  # the options of the functions removed graphs forward to
    for g in mng.graphs:
        if not cg.known(g):
            continue
        f = _eta_target(g, mng)
        if f is None:
            continue
        f_abstract = f.abstract
        option = cg.option_of[g]
        if not isinstance(f_abstract, AFunction) or option in f_abstract.options \
                or option in targets or not substitution.keys().isdisjoint(f_abstract.options):
            continue
        uses = cg.uses.get(g, [])
        # f must be in scope at every use of g: a node where its graph is; a graph
        # constant where its parent is (a closure capturing a value g computes, as a
        # branch that ends a loop iteration by calling the loop's continuation, is
        # not: using it outside g would make scopes a cycle)
        owner = mng.parent(f.value) if isinstance(f, Constant) else f.graph
        if owner is not None and \
                any(h is not owner and owner not in mng.ancestors(h) for _, _, h in uses):
            continue
        for user, i, h in uses:
            if user is None:
                h.output = f
            else:
                user.inputs[i] = f
        substitution[option] = f_abstract.options
        targets |= f_abstract.options
        done += 1
    if substitution:
        _substitute_options(mng, substitution)
    return done


def _substitute_options(mng, substitution):
    """Rewrite every abstract in the program: each option in `substitution` becomes
    the options it maps to."""
    memo = {}

    def sub(a):
        if a is None:
            return a
        r = memo.get(a)
        if r is not None:
            return r
        t = type(a)
        if t is AFunction:
            opts = set()
            for o in a.options:
                opts |= set(substitution.get(o, (o,)))
            r = AFunction(opts)
        elif t is ATuple:
            r = ATuple(sub(e) for e in a.elements)
        elif t is AEnv and a.entries:
            r = AEnv({k: sub(v) for k, v in a.entries.items()})
        else:
            r = a
        memo[a] = r
        return r

    # (the manager's answers from before the edits name every node still in the
    # program: the edits only moved uses to nodes and constants already there)
    for g in mng.graphs:
        for p in g.parameters:
            p.abstract = sub(p.abstract)
        nodes = list(mng.nodes(g))
        for node in nodes:
            node.abstract = sub(node.abstract)
            for inp in node.inputs:
                if isinstance(inp, Constant):
                    inp.abstract = sub(inp.abstract)
        if isinstance(g.output, Constant):
            g.output.abstract = sub(g.output.abstract)
    mng.invalidate()


def interprocedural(root, log=None, mng=None):
    """Narrow outputs and eta-reduce until neither applies.  Returns (how many fired, a
    manager of the program as it is now).  `mng`: one of the program as it is; `log`:
    a Counter of the rewrites that fired.

    The call graph is analysed again only after a rewrite changed the program, seeded
    with the last analysis's free variables."""
    total = 0
    cg = None
    for _ in range(50):
        fired = 0
        for rewrite in (drop_dead_entries, drop_dead_arguments, zero_arguments,
                        narrow_outputs, eta_reduce):
            if cg is None:
                cg = CallGraph(root, mng)
            n = rewrite(root, cg)
            if n:
                cg, mng = None, manage(root, like=cg.mng)
                if log is not None:
                    log[rewrite.__name__] += n
            fired += n
        total += fired
        if not fired:
            break
    return total, (cg.mng if cg is not None else mng)
