"""Rewrites that need every call site of a graph: narrowing outputs, eta-reducing closures.

The local rules (`rules.py`) see one node at a time, so they cannot remove what a
derivative program passes between graphs: a backpropagator returns a tuple, or an
environment, of which every caller reads one entry; a loop's backpropagator is a
closure whose whole body calls another closure.  Inference knows, at every call, the
set of functions the callee may be (`AFunction` options), so the call sites of each
graph are known (`callgraph`).

    drop_dead_outputs  a float a result holds that callers only hand back up is a
                     zero (`dead_outputs`).
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
    unbox_closures   a closure whose only captured value is a function f, called only
                     where it is the one option: f instead, and g's body at its calls.
"""

import numpy as np

from ..abstract import AConstant, AEnv, AFunction, AScalar, ATuple
from ..ir import Apply, Constant, Graph, Parameter, manage
from ..ir.clone import inline
from ..prim import ops as P
from ..prim.grad_ops import SymbolicZero
from .callgraph import CallGraph, projection
from .dead_outputs import drop_dead_outputs
from .match import calls
from .zeros import is_float_value, is_zero, zero_by_inputs, zero_of

_NONE = AConstant(None)


# ---- narrowing outputs --------------------------------------------------------------


def narrow_outputs(root, cg=None):
    """Push a projection that every caller applies into the callees.  Returns the
    number of graph groups narrowed."""
    cg = cg or CallGraph(root)
    if not cg.ok:
        return 0
    mng = cg.mng
    groups = cg.call_groups()
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
                p = projection(user, site)
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
            rest = list(users[0][1].inputs[2:])
            if proj[0] == "env_getitem" and proj[2] == "zero":  # (made in g: not a caller's)
                rest[1] = zero_of(rest[1], g)
            new = Apply(g, [users[0][1].inputs[0], g.output] + rest, g.output.loc)
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
    groups = cg.call_groups()
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
                p = projection(user, site)
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
    all_sites = {g: cg.calls_of(g) for g in sites_of}
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
    sites_of = {g: cg.calls_of(g) for g in mng.graphs if cg.calls_of(g)}
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


def _eta_target(g, mng, passed=()):
    """f when g(p1..pn) = f(p1..pn) and f is visible outside g; else None.  `passed`:
    the positions of the parameters every call of g passes as one constant (a
    backpropagator called with the seed 1.0 at every step of a loop, which reads it
    as that constant), each with that constant's value."""
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
    for k, (a, p) in enumerate(zip(args, g.parameters)):
        if a is p:
            continue
        # a parameter inference proved constant may be passed as that constant
        if isinstance(a, Constant) and p.abstract is not None and a.abstract is not None \
                and getattr(p.abstract, "known", False) and p.abstract == a.abstract:
            continue
        if isinstance(a, Constant) and k in passed and _same_constant(passed[k], a.value):
            continue
        return None
    return f


def _passed_constants(g, sites):
    """{k: c} for each parameter k of g that every call in `sites` passes as the
    constant c."""
    out = {}
    for k in range(len(g.parameters)):
        values = [s.inputs[k + 1] for s in sites if len(s.inputs) == len(g.parameters) + 1]
        if sites and len(values) == len(sites) and all(isinstance(v, Constant) for v in values) \
                and all(_same_constant(values[0].value, v.value) for v in values):
            out[k] = values[0].value
    return out


def _same_constant(a, b):
    """Are a and b one number, of one type (1.0 and 1, or 0.0 and -0.0, are not)?"""
    return type(a) is type(b) and isinstance(a, (int, float, np.number)) and repr(a) == repr(b)


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
        f = _eta_target(g, mng, _passed_constants(g, cg.calls_of(g)))
        if f is None:
            continue
        f_abstract = f.abstract
        option = cg.option_of[g]
        if not isinstance(f_abstract, AFunction):
            continue
        # f may be another closure of g (a loop's backpropagator that only calls the
        # rest of the loop's): each is the function it forwards to, so none is needed
        forwards_to = f_abstract.options - {option}
        if not forwards_to or option in targets or not substitution.keys().isdisjoint(forwards_to):
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
        substitution[option] = forwards_to
        targets |= forwards_to
        done += 1
    if substitution:
        _substitute_options(mng, substitution)
    return done


# ---- closures that are their one captured function -----------------------------------

#: a closure is unboxed when its body has at most this many nodes (it is copied into
#: each of its call sites)
UNBOX_SIZE = 40


def unbox_closures(root, cg=None):
    """A closure of g whose only captured value is a function f, called only where g
    is the one function it may be, is replaced by f, and each call of it by g's body
    (with f for the captured value).  A loop's backpropagator with a step that only
    repackages what the rest of the loop's returns (an environment into a tuple:
    `◀header(d) = (None, rest(d).y, rest(d).x)`) then stops being a closure per step:
    the caller holds `rest` itself, and the chain of backpropagators has one link per
    step (`backend.llvm.chain`).  Returns the number of graphs unboxed."""
    cg = cg or CallGraph(root)
    if not cg.ok:
        return 0
    mng = cg.mng
    done = 0
    substitution = {}
    edited = set()
    for g in list(mng.graphs):
        if not cg.known(g) or g.flags.get("noinline") or mng.children(g) \
                or len(mng.nodes(g)) > UNBOX_SIZE:
            continue
        fvs = mng.free_variables(g)
        if len(fvs) != 1:
            continue
        (f,) = fvs
        option = cg.option_of[g]
        if not isinstance(f.abstract, AFunction) or option in f.abstract.options \
                or not substitution.keys().isdisjoint(f.abstract.options) \
                or any(option in opts for opts in substitution.values()):
            continue
        sites = cg.calls_of(g)
        uses = cg.uses.get(g, [])
        # (the analysis describes the program before this round's edits: a graph
        # that received a copy, or whose calls or closures are in one, waits)
        if g in edited or any(site.graph in edited for site in sites) \
                or any(h in edited for _, _, h in uses):
            continue
        if not sites or any(len(cg.sites[site]) != 1
                            or len(site.inputs) != len(g.parameters) + 1 for site in sites) \
                or any(f.graph is not h and f.graph not in mng.ancestors(h)
                       for _, _, h in uses):
            continue
        edited.add(g)
        for site in sites:
            edited.add(site.graph)
            fn = site.inputs[0]
            closure = f if isinstance(fn, Constant) else fn
            new = inline(g, site.graph, site.inputs[1:], manager=mng, free={f: closure})
            for user, i in list(mng.users(site)):
                user.inputs[i] = new
            for h in mng.graphs:
                if h.output is site:
                    h.output = new
        for user, i, h in uses:
            if user is None:
                h.output = f
            elif user.inputs[i].__class__ is Constant and user.inputs[i].value is g:
                user.inputs[i] = f
        substitution[option] = f.abstract.options
        done += 1
    if substitution:
        mng.invalidate()
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
        for rewrite in (drop_dead_outputs, drop_dead_entries, drop_dead_arguments,
                        zero_arguments, narrow_outputs, eta_reduce, unbox_closures):
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
