"""The rewrite rules.  Each docstring's first line is the rewrite it performs.

Rules that need types read `node.abstract` (set by specialization) and do nothing on
untyped graphs; every rule keeps the types of the nodes it makes.
"""

import numpy as np

from ..abstract import AEnv, ATuple
from ..ad.reverse import J_graph, prim_fprop
from ..ir import Apply, Constant, Graph, Parameter, clone_many, inline, manage
from ..parser.parse import EFFECTS
from ..prim import Primitive
from ..prim import ops as P
from ..prim.grad_ops import keep_symbolic
from .match import (calls, is_const, is_number, number_tuple, same_type, scalar_dtype,
                    typed_apply, typed_constant)
from .pass_manager import CALLS, rule
from . import zeros
from .select import branches_to_select
from .unroll import unroll_counted_loop


# ---- tuples ----------------------------------------------------------------------


@rule(on=[P.tuple_getitem])
def getitem_of_make_tuple(node, ctx):
    """tuple_getitem(make_tuple(x0, ..., xn), i) -> xi"""
    if calls(node, P.tuple_getitem):
        _, t, i = node.inputs
        if calls(t, P.make_tuple) and is_const(i):
            # an assert sequenced into the tuple must still run: keep it, and keep the
            # parameter that carries the asserts run before a call (the parser's hidden
            # variable EFFECTS), until the caller inlines it and the assert shows
            if any(calls(e, P.assert_) or _carries_effects(e) for e in t.inputs[1:]):
                return None
            k = _position(i.value, len(t.inputs) - 1)
            return None if k is None else t.inputs[1 + k]
        if calls(t, P.tuple_setitem) and is_const(i) and is_const(t.inputs[2]):
            n = len(getattr(t.abstract, "elements", ()))
            k, j = _position(i.value, n), _position(t.inputs[2].value, n)
            if k is None or j is None:  # (a negative index of a tuple of unknown length)
                return None
            if k == j:
                return t.inputs[3]
            new = node.graph.apply(P.tuple_getitem, t.inputs[1], i, loc=node.loc)
            new.abstract = node.abstract
            return new
    return None


def _position(i, n):
    """The position that index `i` (negative: from the end) names in a tuple of `n`
    elements (n = 0: unknown, only i >= 0 is known), or None."""
    if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
        return None
    if 0 <= i and (n == 0 or i < n):
        return int(i)
    if n and -n <= i < 0:
        return int(i) + n
    return None


def _carries_effects(node):
    return node.__class__ is Parameter and node.name == EFFECTS


# ---- lists and dicts: tuples with a kind (myia.prim.containers) ----------------------


def _items(node):
    """The element nodes of the tuple `node` when they are known (a make_tuple or a
    constant tuple, seen through tuple_as), else None."""
    while calls(node, P.tuple_as):
        node = node.inputs[1]
    if calls(node, P.make_tuple):
        return list(node.inputs[1:])
    a = node.abstract
    if is_const(node) and isinstance(node.value, tuple) and hasattr(a, "elements") \
            and len(a.elements) == len(node.value):
        items = []
        for v, ea in zip(node.value, a.elements):
            c = Constant(v, node.loc)
            c.abstract = ea
            items.append(c)
        return items
    return None


def _droppable(nodes):
    """Whether these elements may be left out (no assert sequenced into them)."""
    return not any(calls(e, P.assert_) or _carries_effects(e) for e in nodes)


@rule(on=[P.tuple_cons])
def cons_of_make_tuple(node, ctx):
    """tuple_cons(x, make_tuple(a0, ..., an)) -> make_tuple(x, a0, ..., an)"""
    if calls(node, P.tuple_cons) and node.abstract is not None:
        items = _items(node.inputs[2])
        if items is not None:
            return typed_apply(node.graph, node.abstract, P.make_tuple, node.inputs[1],
                                *items, loc=node.loc)
    return None


@rule(on=[P.tuple_tail])
def tail_of_make_tuple(node, ctx):
    """tuple_tail(make_tuple(a0, a1, ..., an)) -> make_tuple(a1, ..., an)"""
    if calls(node, P.tuple_tail) and node.abstract is not None:
        items = _items(node.inputs[1])
        if items and _droppable(items[:1]):
            return typed_apply(node.graph, node.abstract, P.make_tuple, *items[1:],
                                loc=node.loc)
    return None


@rule(on=[P.getitem])
def slice_of_make_tuple(node, ctx):
    """getitem(make_tuple(a0, ..., an), s) -> make_tuple(a[s]...), for a constant slice s"""
    if calls(node, P.getitem) and node.abstract is not None and is_const(node.inputs[2]) \
            and isinstance(node.inputs[2].value, slice):
        items = _items(node.inputs[1])
        if items is not None:
            kept = items[node.inputs[2].value]
            if _droppable(e for e in items if not any(e is k for k in kept)):
                return typed_apply(node.graph, node.abstract, P.make_tuple, *kept,
                                    loc=node.loc)
    return None


@rule(on=[P.tuple_getitem])
def getitem_of_tuple_as(node, ctx):
    """tuple_getitem(tuple_as(t, kind), i) -> tuple_getitem(t, i)"""
    if calls(node, P.tuple_getitem) and calls(node.inputs[1], P.tuple_as):
        return typed_apply(node.graph, node.abstract, P.tuple_getitem,
                            node.inputs[1].inputs[1], node.inputs[2], loc=node.loc)
    return None


CONTAINERS = [cons_of_make_tuple, tail_of_make_tuple, slice_of_make_tuple,
              getitem_of_tuple_as]


@rule(on=[P.getitem])
def getitem_of_tuple(node, ctx):
    """getitem(t, i) -> tuple_getitem(t, i), for a tuple t and a constant int i"""
    if calls(node, P.getitem):
        _, t, i = node.inputs
        a = t.abstract
        if is_const(i) and type(i.value) is int and a is not None and hasattr(a, "elements") \
                and 0 <= i.value < len(a.elements):
            new = node.graph.apply(P.tuple_getitem, t, i, loc=node.loc)
            new.abstract = node.abstract
            return new
    return None


@rule(on=[P.make_tuple])
def make_tuple_of_getitems(node, ctx):
    """make_tuple(tuple_getitem(t, 0), ..., tuple_getitem(t, n-1)) -> t, for t of length n"""
    if calls(node, P.make_tuple) and len(node.inputs) > 1:
        first = node.inputs[1]
        if not calls(first, P.tuple_getitem):
            return None
        t = first.inputs[1]
        for k, e in enumerate(node.inputs[1:]):
            if not (calls(e, P.tuple_getitem) and e.inputs[1] is t and is_const(e.inputs[2])
                    and e.inputs[2].value == k):
                return None
        if t.abstract is not None and t.abstract == node.abstract:
            return t
    return None


@rule(on=[P.make_tuple])
def make_tuple_as_update(node, ctx):
    """make_tuple(t[0], .., v, .., t[n-1]) -> tuple_setitem(t, k, v), for t of length n
    (a record update: one operation instead of n - 1 reads and a build)"""
    if not (calls(node, P.make_tuple) and len(node.inputs) > 2 and node.abstract is not None):
        return None
    elems = node.inputs[1:]
    source, other = None, None
    for k, e in enumerate(elems):
        if calls(e, P.tuple_getitem) and is_const(e.inputs[2]) and e.inputs[2].value == k \
                and (source is None or e.inputs[1] is source):
            source = e.inputs[1]
        elif other is None:
            other = k
        else:
            return None
    if source is None or other is None:
        return None
    a = source.abstract
    if a is None or not hasattr(a, "elements") or len(a.elements) != len(elems) \
            or any(a.elements[j] != node.abstract.elements[j]
                   for j in range(len(elems)) if j != other):
        return None
    new = node.graph.apply(P.tuple_setitem, source, other, elems[other], loc=node.loc)
    new.abstract = node.abstract
    return new


@rule(on=[P.tuple_getitem])
def getitem_of_constant_tuple(node, ctx):
    """tuple_getitem((c0, ..., cn), i) -> ci"""
    if calls(node, P.tuple_getitem):
        _, t, i = node.inputs
        if is_const(t) and isinstance(t.value, tuple) and is_const(i) \
                and -len(t.value) <= i.value < len(t.value):
            return typed_constant(t.value[i.value], node)
    return None


@rule(on=[P.tuple_setitem])
def setitem_of_make_tuple(node, ctx):
    """tuple_setitem(make_tuple(x0, ..., xn), i, v) -> make_tuple(x0, .., v, .., xn);
    the same for a constant tuple of numbers (a zero sensitivity)"""
    if calls(node, P.tuple_setitem):
        _, t, i, v = node.inputs
        if calls(t, P.make_tuple) and is_const(i):
            elems = list(t.inputs[1:])
        elif is_const(i) and number_tuple(t) and hasattr(node.abstract, "elements"):
            types = t.abstract if hasattr(t.abstract, "elements") else node.abstract
            elems = []
            for x, a in zip(t.value, types.elements):
                c = Constant(x, node.loc)
                c.abstract = a
                elems.append(c)
        else:
            return None
        elems[i.value] = v
        new = node.graph.apply(P.make_tuple, *elems, loc=node.loc)
        new.abstract = node.abstract
        return new
    return None


# ---- environments ----------------------------------------------------------------


@rule(on=[P.env_getitem])
def env_getitem_of_setitem(node, ctx):
    """env_getitem(env_setitem(e, k, v), k, d) -> v;  ... k2 ... -> env_getitem(e, k2, d)"""
    if calls(node, P.env_getitem):
        _, env, key, default = node.inputs
        if calls(env, P.env_setitem) and is_const(key) and is_const(env.inputs[2]):
            if env.inputs[2].value == key.value:
                return env.inputs[3]
            new = node.graph.apply(P.env_getitem, env.inputs[1], key, default, loc=node.loc)
            new.abstract = node.abstract
            return new
        if calls(env, P.env_new):
            return default
    return None


@rule(on=[P.env_setitem])
def env_setitem_of_zero(node, ctx):
    """env_setitem(e, k, 0) -> e;  env_setitem(e, k, zeros_like(x)) -> e  (a missing
    entry reads as zero anyway)"""
    if calls(node, P.env_setitem):
        _, env, key, value = node.inputs
        if is_const(value) and isinstance(value.value, (int, float, bool, np.number)) \
                and value.value == 0 or zeros.is_zero(value):
            return env
    return None


@rule(on=[P.env_getitem])
def env_getitem_of_integer(node, ctx):
    """env_getitem(e, k, d) -> d, for an integer or bool entry (their sensitivities
    are always zero)"""
    if calls(node, P.env_getitem) and scalar_dtype(node) in ("int64", "bool"):
        return node.inputs[3]
    return None


@rule(on=[P.env_add, P.gadd])
def env_add_of_new(node, ctx):
    """env_add(env_new(), e) -> e;  env_add(e, env_new()) -> e"""
    if calls(node, P.env_add) or calls(node, P.gadd):
        _, a, b = node.inputs
        if calls(a, P.env_new):
            return b
        if calls(b, P.env_new):
            return a
    return None


@rule(on=[P.env_add, P.gadd])
def add_of_env_setitem(node, ctx):
    """env_add(e1, env_setitem(e2, k, v)) -> env_setitem(env_add(e1, e2), k, v), when
    neither e1 nor e2 holds k (by their types); the same with the setitem first"""
    a = node.abstract
    if getattr(a, "entries", None) is None:
        return None
    _, x, y = node.inputs
    for this, other in ((y, x), (x, y)):
        if calls(this, P.env_setitem):
            _, e, k, v = this.inputs
            key = getattr(k, "value", None)
            ea, oa = getattr(e.abstract, "entries", None), getattr(other.abstract, "entries", None)
            if ea is None or oa is None or key in ea or key in oa or key not in a.entries:
                continue
            rest = AEnv({kk: vv for kk, vv in a.entries.items() if kk != key})
            inner = typed_apply(node.graph, rest, node.inputs[0], other, e, loc=node.loc)
            return typed_apply(node.graph, a, P.env_setitem, inner, k, v, loc=node.loc)
    return None


# ---- control flow ----------------------------------------------------------------


@rule(on=[P.switch])
def switch_on_constant(node, ctx):
    """switch(True, a, b) -> a;  switch(False, a, b) -> b"""
    if calls(node, P.switch):
        _, c, a, b = node.inputs
        if is_const(c) and isinstance(c.value, (bool, np.bool_)):
            return a if c.value else b
    return None


@rule(on=[P.switch])
def switch_same(node, ctx):
    """switch(c, a, a) -> a"""
    if calls(node, P.switch):
        _, c, a, b = node.inputs
        if a is b or (isinstance(a, Constant) and isinstance(b, Constant) and a.value is b.value):
            return a
    return None


@rule(on=[P.add, P.gadd])
def add_of_complementary_switches(node, ctx):
    """switch(c, a, 0) + switch(c, 0, b) -> switch(c, a, b)  (0 a number or a symbolic
    zero)"""
    if calls(node, P.add) or calls(node, P.gadd):
        _, s1, s2 = node.inputs
        if calls(s1, P.switch) and calls(s2, P.switch) and s1.inputs[1] is s2.inputs[1]:
            a, z1 = s1.inputs[2], s1.inputs[3]
            z2, b = s2.inputs[2], s2.inputs[3]
            if (is_number(z1, 0) or zeros.is_zero(z1)) and (is_number(z2, 0) or zeros.is_zero(z2)):
                new = node.graph.apply(P.switch, s1.inputs[1], a, b, loc=node.loc)
                new.abstract = node.abstract
                return new
    return None


@rule(on=[P.truth])
def truth_of_bool(node, ctx):
    """truth(x) -> x, for x a bool"""
    if calls(node, P.truth):
        x = node.inputs[1]
        if calls(x, P.not_) or any(calls(x, p) for p in (P.eq, P.ne, P.lt, P.le, P.gt, P.ge)):
            ab = x.abstract
            if ab is None or str(ab) == "bool":
                return x
    return None


# ---- inlining --------------------------------------------------------------------

#: graphs larger than this are inlined only where they are called once (one call
#: site: a graph called at two places of one graph would be copied twice, and copies
#: of copies grow as a factorial in a recursion unrolled by specialization)
INLINE_SIZE = 400


@rule(on=CALLS)
def inline_call(node, ctx):
    """g(args) -> the body of g with its parameters bound to args (g not recursive)"""
    fn = node.inputs[0]
    if not (isinstance(fn, Constant) and isinstance(fn.value, Graph)):
        return None
    g = fn.value
    args = node.inputs[1:]
    if len(args) != len(g.parameters) or not ctx.knows(g) or ctx.is_recursive(g):
        return None
    if g.flags.get("noinline"):
        return None
    if _uses(g, ctx.mng) > 1 and _eventual_size(g, ctx) > INLINE_SIZE:
        return None
    # the library's own code (bprop rules, np.sum...) takes the location of the call,
    # and its local names go (its `db` would name the user's W's gradient)
    library = _is_library_graph(g)
    loc = node.loc if node.loc is not None and library else None
    if not ctx.unedited(g):
        # g changed during this sweep: inline it at the next one, when the manager
        # describes it again (a fresh analysis for each such call costs more)
        return None
    return inline(g, node.graph, args, manager=ctx.mng, loc=loc, keep_names=not library)


def _eventual_size(g, ctx):
    """The nodes inlining `g` copies, counting those of the graphs it calls that would
    be inlined into it in turn (within one sweep, every small graph is inlined at
    once: a graph whose callees are small now can be large once they are in it)."""
    sizes = ctx.__dict__.setdefault("eventual_sizes", {})  # within one sweep
    if g in sizes:
        return sizes[g]
    sizes[g] = INLINE_SIZE + 1  # (a cycle through g: not inlined at several places)
    mng = ctx.mng
    size = _inlined_size(g, mng)
    for h in mng.graphs_used(g):
        if h is g or not ctx.knows(h) or ctx.is_recursive(h) or h.flags.get("noinline"):
            continue
        calls = sum(1 for n in mng.nodes(g) if n.is_apply() and n.inputs[0].__class__
                    is Constant and n.inputs[0].value is h)
        if calls and size <= INLINE_SIZE:
            inner = _eventual_size(h, ctx)
            if inner <= INLINE_SIZE or _uses(h, mng) == 1:
                size += calls * inner
    sizes[g] = size
    return size


def _uses(g, mng):
    """How many nodes hold the graph `g` (its call sites, and its uses as a value)."""
    return mng.uses(g)


def _inlined_size(g, mng):
    """The nodes inlining `g` copies: its own and those of the graphs nested in it (a
    loop's graphs close over the function that runs it: inlining that function at
    each of its calls would copy the loop each time)."""
    size = len(mng.nodes(g))
    if size <= INLINE_SIZE and mng.children(g):
        size = sum(len(mng.nodes(h)) for h in mng.scope(g))
    return size


_PACKAGE_DIR = __import__("os").path.dirname(__import__("os").path.dirname(__file__))


def _is_library_graph(g):
    if g.flags.get("core"):
        return True
    return g.loc is not None and str(g.loc.filename).startswith(_PACKAGE_DIR)


# ---- closure records (see myia.infer.specialize, "J of a closure made elsewhere") ----


@rule(on=[P.closure_bound])
def closure_bound_of_make_closure(node, ctx):
    """closure_bound(make_closure(g, b0, ..., bn), i) -> bi"""
    if calls(node, P.closure_bound):
        _, f, i = node.inputs
        if calls(f, P.make_closure) and is_const(i):
            return f.inputs[2 + i.value]
    return None


@rule(on=[P.slice_start])
def slice_start_of_make_slice(node, ctx):
    """slice_start(make_dslice(a, n, c)) -> a  (and of make_slice(a, b, c))"""
    if calls(node, P.slice_start):
        s = node.inputs[1]
        if calls(s, P.make_dslice) or calls(s, P.make_slice):
            return s.inputs[1]
    return None


@rule(on=CALLS)
def call_of_make_closure(node, ctx):
    """make_closure(g, b0, ..., bn)(args) -> g(b0, ..., bn, args)"""
    fn = node.inputs[0]
    if calls(fn, P.make_closure):
        return typed_apply(node.graph, node.abstract, *fn.inputs[1:], *node.inputs[1:],
                            loc=node.loc)
    return None


# ---- J ---------------------------------------------------------------------------


@rule(on=[P.J])
def J_of_graph_constant(node, ctx):
    """J(g) -> ▶g, for a graph constant g without free variables"""
    if calls(node, P.J):
        x = node.inputs[1]
        if isinstance(x, Constant) and isinstance(x.value, Graph) and ctx.knows(x.value) \
                and not ctx.mng.free_variables(x.value):
            return Constant(_private(J_graph(x.value), ctx), node.loc)
        if isinstance(x, Constant) and isinstance(x.value, Primitive) and x.value is not P.make_tuple:
            return Constant(_private(prim_fprop(x.value), ctx), node.loc)
    return None


def _private(graph, ctx):
    """A copy of `graph` and of the graphs it reaches that are not the program's own
    yet: J's results are cached and shared by every program, and the optimizer
    rewrites the graphs of its program in place."""
    copies = ctx.__dict__.setdefault("private_copies", {})  # within one sweep
    if graph not in copies:
        foreign = [g for g in manage(graph).graphs if not ctx.knows(g)]
        copies[graph] = clone_many(foreign).get(graph, graph) if foreign else graph
    return copies[graph]


@rule(on=[P.Jinv])
def Jinv_of_J(node, ctx):
    """Jinv(J(x)) -> x"""
    if calls(node, P.Jinv) and calls(node.inputs[1], P.J):
        return node.inputs[1].inputs[1]
    return None


# ---- arithmetic ------------------------------------------------------------------

@rule(on=lambda p: p.foldable)
def constant_fold(node, ctx):
    """p(c1, ..., cn) -> c, for a pure primitive p on constants"""
    fn = node.inputs[0]
    if isinstance(fn, Constant) and isinstance(fn.value, Primitive) and fn.value.foldable:
        args = node.inputs[1:]
        if all(is_const(a) for a in args):
            values = [a.value for a in args]
            if any(isinstance(v, np.ndarray) and v.size > 16 for v in values):
                return None
            shape = getattr(node.abstract, "shape", None)
            if shape and (None in shape or int(np.prod(shape)) > 16):
                return None  # keep large arrays out of the program text
            try:
                with np.errstate(all="ignore"):
                    value = fn.value.impl(*values)
            except Exception:
                return None  # leave the error to run time, where it has its location
            if isinstance(value, np.ndarray):  # the program's, as a global's snapshot is
                value.setflags(write=False)
            return typed_constant(keep_symbolic(fn.value, values, value), node)
    return None


def _is_ones(node):
    """1, or a constant array of ones (what a reduction's bprop broadcasts)."""
    if is_number(node, 1):
        return True
    return is_const(node) and isinstance(node.value, np.ndarray) \
        and node.value.dtype.kind == "f" and node.value.size > 0 and bool(np.all(node.value == 1))


@rule(on=[P.mul])
def multiply_by_one(node, ctx):
    """x * 1 -> x;  1 * x -> x  (when x already has the product's type: exact in IEEE)"""
    if calls(node, P.mul):
        _, a, b = node.inputs
        if _is_ones(b) and (same_type(a, node) or node.abstract is None and is_number(b, 1)):
            return a
        if _is_ones(a) and (same_type(b, node) or node.abstract is None and is_number(a, 1)):
            return b
    return None


@rule(on=[P.add, P.sub, P.gadd])
def add_zero(node, ctx):
    """x + 0 -> x;  0 + x -> x;  x - 0 -> x, for integers; for floats only where IEEE
    gives x itself, the sign of zero included: x + (-0.0) and x - 0.0 (-0.0 + 0.0 is
    0.0, not -0.0)"""
    if calls(node, P.add) or calls(node, P.sub) or calls(node, P.gadd):
        _, a, b = node.inputs
        negative = not calls(node, P.sub)  # the zero that leaves x as it is
        if _neutral_zero(b, node, negative) and same_type(a, node):
            return a
        if negative and _neutral_zero(a, node, True) and same_type(b, node):
            return b
    return None


def _neutral_zero(z, node, negative):
    """Is `z` a zero that adding (negative=True) or subtracting leaves a value of
    `node`'s type unchanged?"""
    if not is_number(z, 0):
        return False
    dtype = getattr(node.abstract, "dtype", None)
    if dtype in ("int64", "bool"):
        return True
    return dtype in ("float64", "float32") and isinstance(z.value, (float, np.floating)) \
        and bool(np.signbit(z.value)) == negative


@rule(on=[P.differentiable, P.range_bound])
def guard_checked(node, ctx):
    """differentiable(x, what) -> x, range_bound(n, what, hint) -> n: inference has
    checked that x is no integer, that n is one."""
    if (calls(node, P.differentiable) or calls(node, P.range_bound)) and node.abstract is not None:
        return node.inputs[1]
    return None


@rule(on=[P.neg])
def double_negation(node, ctx):
    """-(-x) -> x, when x has the result's type (-(-b) of a bool b is an int)"""
    if calls(node, P.neg) and calls(node.inputs[1], P.neg):
        x = node.inputs[1].inputs[1]
        if same_type(x, node):
            return x
    return None


@rule(on=[P.mul])
def multiply_by_zero(node, ctx):
    """x * 0 -> 0, when x is a finite constant or an integer (floats may be inf or nan)"""
    if calls(node, P.mul):
        _, a, b = node.inputs
        for z, x in ((a, b), (b, a)):
            if is_number(z, 0) and node.abstract is not None and scalar_dtype(node) == "int64":
                return typed_constant(0, node)
    return None


@rule(on=[P.pow])
def power_one_or_two(node, ctx):
    """x ** 1 -> x;  x ** 2 -> x * x"""
    if calls(node, P.pow):
        _, x, y = node.inputs
        if is_number(y, 1) and (same_type(x, node) or node.abstract is None):
            return x
        if is_number(y, 2) and (same_type(x, node) or node.abstract is None):
            new = node.graph.apply(P.mul, x, x, loc=node.loc)
            new.abstract = node.abstract
            return new
    return None


@rule(on=[P.reshape, P.broadcast_to, P.sum_to])
def reshape_to_same_shape(node, ctx):
    """reshape(x, s) -> x;  broadcast_to(x, s) -> x, when x already has shape s"""
    if calls(node, P.reshape) or calls(node, P.broadcast_to) or calls(node, P.sum_to):
        x = node.inputs[1]
        if same_type(x, node):
            return x
    return None


def _broadcast(node, dtype):
    """Whether `node` only repeats a value of dtype `dtype`: broadcast_to(x, s), or a
    number reshaped to a shape of ones (`reshape(s, (1,))`, which the backward pass of a
    sum makes)."""
    if calls(node, P.broadcast_to):
        return True
    if not calls(node, P.reshape) or not number_tuple(node.inputs[2]):
        return False
    x = node.inputs[1].abstract
    return x is not None and getattr(x, "shape", ()) == () \
        and getattr(x, "dtype", None) == dtype and all(d == 1 for d in node.inputs[2].value)


@rule(on=lambda p: p.elementwise == 2)
def implicit_broadcast(node, ctx):
    """broadcast_to(x, s) op y -> x op y, for an elementwise op, when the result has
    shape s anyway (and reshape(x, (1,)) op y -> x op y for a number x)"""
    fn = node.inputs[0]
    if isinstance(fn, Constant) and isinstance(fn.value, Primitive) \
            and fn.value.elementwise == 2 and node.abstract is not None:
        _, a, b = node.inputs
        dtype = getattr(node.abstract, "dtype", None)
        for i, (this, other) in enumerate(((a, b), (b, a))):
            if _broadcast(this, dtype) and same_type(other, node):
                inputs = list(node.inputs)
                inputs[1 + i] = this.inputs[1]
                new = Apply(node.graph, inputs, node.loc, node.name)
                new.abstract = node.abstract
                return new
    return None


@rule(on=lambda p: p.elementwise == 2)
def broadcast_outward(node, ctx):
    """broadcast_to(x, s) op c -> broadcast_to(x op c, s), for an elementwise op and a
    scalar constant c, when x op c has x's dtype (an int array times 2.5 does not); the
    same for reshape(x, (1,)) of a number x"""
    fn = node.inputs[0]
    if isinstance(fn, Constant) and isinstance(fn.value, Primitive) \
            and fn.value.elementwise == 2 and node.abstract is not None:
        _, a, b = node.inputs
        dtype = getattr(node.abstract, "dtype", 0)
        for i, (this, other) in enumerate(((a, b), (b, a))):
            if _broadcast(this, dtype) and is_const(other) and np.ndim(other.value) == 0 \
                    and this.inputs[1].abstract is not None \
                    and getattr(this.inputs[1].abstract, "dtype", None) == dtype:
                inputs = list(node.inputs)
                inputs[1 + i] = this.inputs[1]
                inner = Apply(node.graph, inputs, node.loc)
                inner.abstract = this.inputs[1].abstract
                new = node.graph.apply(this.inputs[0].value, inner, this.inputs[2],
                                       loc=node.loc)
                new.abstract = node.abstract
                return new
    return None


# ---- typed rules for derivative programs --------------------------------------------


@rule(on=[P.gadd])
def gadd_to_add(node, ctx):
    """gadd(x, y) -> x + y, for numbers and arrays of one type"""
    if calls(node, P.gadd):
        _, a, b = node.inputs
        ab = node.abstract
        if ab is not None and hasattr(ab, "dtype") and same_type(a, node) and same_type(b, node):
            new = node.graph.apply(P.add, a, b, loc=node.loc)
            new.abstract = ab
            return new
    return None


@rule(on=[P.unbroadcast])
def unbroadcast_same_shape(node, ctx):
    """unbroadcast(d, x) -> d, when d already has x's type and shape and x is a float
    (the sensitivity of an integer is 0)"""
    if calls(node, P.unbroadcast):
        _, d, x = node.inputs
        if same_type(d, node) and getattr(x.abstract, "dtype", None) in ("float64", "float32"):
            return d
    return None


@rule(on=[P.grad_seed])
def grad_seed_of_float(node, ctx):
    """grad_seed(out) -> 1.0, when out is a float scalar"""
    if calls(node, P.grad_seed):
        dtype = scalar_dtype(node.inputs[1])
        if dtype in ("float64", "float32"):
            return typed_constant(np.float32(1.0) if dtype == "float32" else 1.0, node)
    return None


@rule(on=[P.gadd])
def gadd_of_make_tuples(node, ctx):
    """gadd(make_tuple(a0, ..., an), make_tuple(b0, ..., bn)) -> make_tuple(gadd(a0, b0), ...)"""
    if calls(node, P.gadd):
        _, x, y = node.inputs
        a = node.abstract
        if calls(x, P.make_tuple) and calls(y, P.make_tuple) and hasattr(a, "elements") \
                and len(x.inputs) == len(y.inputs) == len(a.elements) + 1:
            g, loc = node.graph, node.loc
            sums = [typed_apply(g, ai, P.gadd, xi, yi, loc=loc)
                    for xi, yi, ai in zip(x.inputs[1:], y.inputs[1:], a.elements)]
            return typed_apply(g, a, P.make_tuple, *sums, loc=loc)
    return None


@rule(on=[P.env_getitem])
def env_getitem_of_switch(node, ctx):
    """env_getitem(switch(c, e1, e2), k, d) -> switch(c, env_getitem(e1, k, d), env_getitem(e2, k, d))"""
    if calls(node, P.env_getitem):
        _, env, key, default = node.inputs
        if calls(env, P.switch):
            _, c, e1, e2 = env.inputs
            if any(calls(e, P.env_new) or calls(e, P.env_setitem) for e in (e1, e2)):
                g = node.graph
                a = g.apply(P.env_getitem, e1, key, default, loc=node.loc)
                b = g.apply(P.env_getitem, e2, key, default, loc=node.loc)
                a.abstract = b.abstract = node.abstract
                new = g.apply(P.switch, c, a, b, loc=node.loc)
                new.abstract = node.abstract
                return new
    return None


def _owner_of_inputs(node, constant_ok, input_ok):
    """The one other graph whose nodes are all the inputs of `node` but its constants
    (each accepted by `constant_ok`), each accepted by `input_ok`; else None."""
    owner = None
    for a in node.inputs[1:]:
        if a.__class__ is Constant:
            if not constant_ok(a):
                return None
            continue
        if a.graph is node.graph or (owner is not None and a.graph is not owner) \
                or not input_ok(a):
            return None
        owner = a.graph
    return owner


#: cheap scalar operations that cannot fail, worth computing in the forward pass
_RESIDUAL_OPS = {P.sin, P.cos, P.exp, P.tanh, P.neg, P.add, P.sub, P.mul}


@rule(on=_RESIDUAL_OPS)
def hoist_residual(node, ctx):
    """in a backpropagator, p(y) -> a free variable p(y) computed where the
    backpropagator is made (or else where y is): the forward pass computes what the
    backward needs of its values (cos(x) next to sin(x), which become one sincos)"""
    g = node.graph
    if g.flags.get("kind") != "bprop" or scalar_dtype(node) not in ("float64", "float32"):
        return None
    fn = node.inputs[0]
    if not (isinstance(fn, Constant) and isinstance(fn.value, Primitive)
            and fn.value in _RESIDUAL_OPS):
        return None
    owner = _owner_of_inputs(node, is_const, lambda a: True)
    if owner is None:
        return None
    if ctx.knows(g):
        # the graph that makes the closure (its innermost enclosing scope when the
        # sweep began) sees y too: there p(y) runs only when the closure is made, next
        # to what uses y there (sin(y) and cos(y) become one sincos)
        maker = ctx.mng.parent(g)
        scope = maker
        while scope is not None and scope is not owner:
            scope = ctx.mng.parent(scope)
        if scope is owner and maker is not None:
            owner = maker
    new = Apply(owner, list(node.inputs), node.loc, node.name)
    new.abstract = node.abstract
    return new


#: operations that cannot fail on floats (and the making of arrays whose shapes
#: inference checked): computing one where the loop's inputs are, once, instead of at
#: each iteration changes only how often it runs
_INVARIANT_OPS = {P.add, P.sub, P.mul, P.truediv, P.neg, P.sin, P.cos, P.tanh, P.exp,
                  P.full, P.reshape, P.concatenate, P.make_tuple}


@rule(on=_INVARIANT_OPS)
def hoist_loop_invariant(node, ctx):
    """in a loop, p(a, ...) -> p(a, ...) computed once, in the graph around the loop
    whose values a, ... are (loop-invariant code motion: `np.array([10.0, 10.0 - w])`
    in a `while` made once, not at every step)"""
    g = node.graph
    if node.inputs[0].__class__ is not Constant or node.inputs[0].value not in _INVARIANT_OPS \
            or not _floats(node.abstract) or not ctx.knows(g) or not ctx.is_recursive(g):
        return None
    owner = _owner_of_inputs(node, lambda c: not isinstance(c.value, Graph),
                             lambda a: _floats(a.abstract, ints=True))
    # (an owner in the same loop runs as often: nothing to gain, and a branch's value
    # would run where the branch does not)
    if owner is None or not ctx.knows(owner) or ctx.same_loop(g, owner):
        return None
    new = Apply(owner, list(node.inputs), node.loc, node.name)
    new.abstract = node.abstract
    return new


def _floats(a, ints=False):
    """A float number, an array of floats, or a tuple of them (`ints`: ints too)."""
    if a is None:
        return False
    if a.__class__ is ATuple:
        return all(_floats(e, ints) for e in a.elements)
    dtype = getattr(a, "dtype", None)
    return dtype in ("float64", "float32") or ints and dtype in ("int64", "bool")


# ---- rule lists -------------------------------------------------------------------

STRUCTURAL = [getitem_of_tuple, getitem_of_make_tuple, make_tuple_of_getitems, getitem_of_constant_tuple, setitem_of_make_tuple,
              env_getitem_of_setitem, env_setitem_of_zero, env_getitem_of_integer, env_add_of_new,
              add_of_env_setitem,
              add_of_complementary_switches, switch_on_constant, switch_same,
              closure_bound_of_make_closure, call_of_make_closure, slice_start_of_make_slice,
              J_of_graph_constant, Jinv_of_J] + CONTAINERS
ALGEBRAIC = [guard_checked, constant_fold, multiply_by_one, add_zero, double_negation, multiply_by_zero,
             truth_of_bool, power_one_or_two, reshape_to_same_shape, implicit_broadcast,
             broadcast_outward]
DERIVATIVE = [grad_seed_of_float, gadd_of_make_tuples,
              env_getitem_of_switch, gadd_to_add, unbroadcast_same_shape,
              hoist_residual, hoist_loop_invariant] + zeros.RULES
INLINE = [branches_to_select, inline_call, unroll_counted_loop]

@rule(on=[P.stop_gradient])
def stop_gradient_done(node, ctx):
    """stop_gradient(x) -> x, once every transform has seen it (a finishing rule: the
    programs that J, T and jet take are optimized without these); not in an untyped
    copy of a closure, which the VM may still differentiate when it runs."""
    if calls(node, P.stop_gradient) and node.abstract is not None:
        return node.inputs[1]
    return None


#: run once the program is otherwise optimized (they hide structure the others use;
#: stop_gradient must stay where a transform may still meet it)
FINISH = [make_tuple_as_update, stop_gradient_done]

ALL = STRUCTURAL + DERIVATIVE + ALGEBRAIC + INLINE
BEFORE_UNROLL = [r for r in ALL if r is not unroll_counted_loop]
