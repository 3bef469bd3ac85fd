"""Type and shape inference: abstract interpretation of graphs, driven by a work-list.

Contexts.  A graph is inferred once per *context*: (graph, parent context, argument
abstracts).  The parent context is the context of the graph's parent (the graph whose
nodes it reads as free variables); it is None for a graph with no free variables.
So a closure is inferred apart for each frame it may close over, and a function for
each signature it is called with.  Constants travel as values (`AScalar` with a
value), so `np.sum(x, axis=1)` sees a static axis and `i < 3` folds when `i` is known.

The work-list.  Every context starts with the result BOTTOM ("does not return yet")
and its result only grows (joins), as do the abstracts of its nodes.  Evaluating a
context computes all of its nodes, in order, with what is known now; a call to a
context whose result is still BOTTOM gives BOTTOM, and every primitive is strict (the
VM evaluates every input of a call first), but a call that may reach several
functions joins the results that are known (one branch of a recursion gives the base
case).  When a context's result grows, the contexts that called it are queued again;
when a node of a context grows, the closures that read it are queued again.  Nothing
recurses in Python over the program: a loop of 10,000 iterations or a deep nesting of
graphs is a handful of contexts on a list.

Termination.  A call to a graph that is already being inferred on the current chain of
calls (a loop header called from its body, `fact(n - 1)`) broadens to ANY the scalar
values of the arguments that changed since that enclosing call (types and shapes
stay, and so do values passed on unchanged, such as a loop bound): the recursive call
then reaches the same context, whose result is found in a few rounds.  Unless an
argument that is a container (a tuple, a list, a dict) changed its structure (its
length, or its elements'): a loop that builds a list or walks a tuple keeps its
values and runs once per element at compile time (up to MAX_UNROLL elements), so that
its index stays a constant and the elements may have different types.  A graph called
with more than MAX_SIGNATURES signatures that differ only by constant values (in one
parent context) loses the values of the arguments that vary most.  Environments
nested in environments are cut at a fixed depth (see `AEnv`).  A graph that keeps
calling itself with new types (a tuple growing in a loop) is an error after
MAX_NESTING levels.

Function values.  A call whose callee may be several functions joins their results.
A closure called through a value (not by the constant of its own graph, and not a
function without free variables called alone) is inferred in a single context per
closure value: the joined arguments of all such calls ("monovariant"), because a
closure value is one specialized graph at run time.  (A closure is one value per
frame of its parent, and two frames of a recursive function share one context.)

A context whose result is still BOTTOM at the end never returns: an error that names
the function (or the loop) at its `def`.
"""

import os
from collections import defaultdict

from ..ad.batching import VMAP
from ..ad.custom import CHECKPOINT
from ..ad.grad import GradMacro, JOf
from ..ad.forward import uses_forward_mode
from ..ad.lifting import lifted_copy, prim_arity
from ..ad.reverse import J_graph, J_graph_if_built, lift_closure, prim_fprop
from ..ad.transforms import is_data_signature
from ..ir.protocol import is_transform
from ..errors import (MyiaError, MyiaGradError, MyiaShapeError, MyiaStaticError, MyiaTypeError,
                      MyiaValueError)
from ..ir import Apply, Constant, Graph, Parameter, manage
from ..ir.clone import clone, inline
from ..prim import ops as P
from ..abstract import (
    TransformFunction,
    transform_target,
    ANY,
    BOTTOM,
    ENV_ANY,
    NOT_CONSTANT,
    AEnv,
    AFunction,
    AScalar,
    ATuple,
    GraphFunction,
    MacroFunction,
    PartialFunction,
    PrimitiveFunction,
    TypeMismatch,
    abstract_of,
    broaden,
    constant_value,
    join,
)
from . import tangent
from .records import JRecord
from .rules import infer_primitive

#: constant signatures of one graph in one parent context (for one list of argument
#: types) before broadening the arguments whose value varies most: a float argument
#: keeps at most MAX_VALUES values, another one MAX_INT_VALUES
MAX_SIGNATURES = 8
MAX_VALUES = 4
MAX_INT_VALUES = 32
#: changes of the arguments of a closure called through values before environments
#: that keep growing in them are widened to ENV_ANY
MAX_SHARED_CHANGES = 6
#: contexts of one graph in one parent context before giving up
MAX_CONTEXTS = 100_000
#: new contexts of a graph nested in its own calls before giving up (types keep
#: changing: a tuple that grows in a loop)
MAX_NESTING = 200
#: the same for a loop that runs once per element at compile time (one that walks a
#: container or builds a list: see `Inferrer.maybe_broaden`)
MAX_UNROLL = 1000
#: containers nested deeper than this do not unroll that far (see MAX_NESTING)
MAX_CONTAINER_DEPTH = 32
#: contexts in all before giving up
MAX_TOTAL_CONTEXTS = 500_000


class Context:
    """One inference of `graph`: in the frame of `parent` (a Context of the graph's
    parent graph, or None), with argument abstracts `args`."""

    __slots__ = ("id", "graph", "parent", "args", "creator", "values", "result",
                 "callers", "fv_readers", "calls", "__weakref__")

    def __init__(self, id, graph, parent, args, creator):
        self.id = id
        self.graph = graph
        self.parent = parent
        self.args = args
        self.creator = creator  # the context whose call created this one
        self.values = {}  # node owned by graph -> abstract
        self.result = BOTTOM
        self.callers = set()  # (context, node) to evaluate again when the result grows
        self.fv_readers = {}  # node -> {(context, node)} that read it as a free variable
        # Apply node -> [(option, target)] from the last evaluation, where target is
        # a Context (graph calls, macros), a JRecord (J) or None (primitives)
        self.calls = {}

    def ancestor(self, graph):
        """This context or the enclosing one that infers `graph`."""
        c = self
        while c is not None and c.graph is not graph:
            c = c.parent
        return c

    def __repr__(self):
        args = ", ".join(str(a) for a in self.args)
        return f"<Context #{self.id} {self.graph.name}({args})>"


#: the "node" of a context's result in work items
OUTPUT = object()


def _shown(args, limit=300):
    """Argument types for an error message, cut at `limit` characters."""
    text = ", ".join(map(str, args))
    return text if len(text) <= limit else text[:limit] + " ..."


class _GraphInfo:
    __slots__ = ("nodes", "users", "parent", "param_index", "free_variables")


class GraphInfos:
    """Nodes, parent and free variables of graphs, computed once per inference."""

    def __init__(self):
        self._info = {}

    def scope(self, g):
        """`g` and the graphs nested in it (that inference has seen)."""
        children = {}
        for h, i in self._info.items():
            if i.parent is not None:
                children.setdefault(i.parent, []).append(h)
        out = [g]
        for h in out:
            out.extend(children.get(h, ()))
        return out

    def nodes(self, g):
        """(For myia.ir.clone) the Apply nodes of `g`, inputs first."""
        return self[g].nodes

    def top(self, g):
        """The outermost graph enclosing `g` (`g` itself at top level)."""
        while self[g].parent is not None:
            g = self[g].parent
        return g

    def add_nested(self, g, top):
        """Learn `g`, a new graph nested somewhere in `top` (the manager must see the
        graphs it is nested in to find its parent)."""
        self._learn(manage(top, g))

    def __getitem__(self, g):
        info = self._info.get(g)
        if info is None:
            self._learn(manage(g))
            info = self._info[g]
        return info

    def _learn(self, mng):
        for h in mng.graphs:
            if h in self._info:
                continue
            i = _GraphInfo()
            i.nodes = [n for n in mng.nodes(h) if isinstance(n, Apply)]
            i.users = {}
            for n in i.nodes:
                for inp in n.inputs:
                    if inp.__class__ is Apply and inp.graph is h:
                        i.users.setdefault(inp, []).append(n)
            i.parent = mng.parent(h)
            i.param_index = {p: k for k, p in enumerate(h.parameters)}
            i.free_variables = mng.free_variables(h)
            self._info[h] = i


class Inferrer:
    def __init__(self, unroll=frozenset()):
        self.unroll = unroll  # loop graphs whose int arguments keep their values
        self.broadened_counters = set()  # loop graphs whose known ints were broadened
        self.infos = GraphInfos()
        self.contexts = {}
        self.order = []
        self.per_key = defaultdict(dict)  # (graph, parent ctx) -> {args: ctx}
        self.todo = []
        self.queued = set()
        self.variants = defaultdict(set)  # (graph, parent, types) -> constant signatures
        self.shared = {}  # closure value -> its single context
        self.shared_changes = defaultdict(int)
        self.shared_users = defaultdict(set)
        self.const_cache = {}
        self.current = None  # the (context, node) being evaluated
        self.inferred = set()  # graphs with a context
        self.closure_expansions = {}  # (node, macro graph) -> its copy for a closure
        self.structures = {}  # (kind, element structure ids) -> structure id
        self.structure_ids = {}  # ATuple -> its structure id
        self.depths = []  # structure id -> how deep its containers are nested

    # ---- contexts and the work-list -----------------------------------------------

    def context(self, graph, parent, args, creator, loc=None):
        key = (graph, parent, args)
        ctx = self.contexts.get(key)
        if ctx is None:
            sigs = self.per_key[(graph, parent)]
            if len(sigs) >= MAX_CONTEXTS or len(self.contexts) >= MAX_TOTAL_CONTEXTS:
                raise MyiaTypeError(
                    f"type inference does not converge: `{graph.name}` is called with "
                    f"ever-changing argument types (the last ones: {_shown(args)})", loc,
                    hint="a loop or a recursion that builds ever larger tuples or ever "
                         "deeper closures cannot be compiled")
            ctx = Context(len(self.order), graph, parent, args, creator)
            self.inferred.add(graph)
            self.contexts[key] = ctx
            self.order.append(ctx)
            sigs[args] = ctx
            self.push(ctx)
        return ctx

    def push(self, item):
        """Queue a context (its first evaluation) or a (context, node) to evaluate
        again (node OUTPUT: the context's result)."""
        if item not in self.queued:
            self.queued.add(item)
            self.todo.append(item)

    def run(self, graph, args):
        args = self.bind(graph, list(args), None)
        root = self.context(graph, None, tuple(args), None)
        todo = self.todo
        queued = self.queued
        while todo:
            item = todo.pop()
            queued.discard(item)
            if item.__class__ is Context:
                self.evaluate(item)
            else:
                ctx, node = item
                if node is OUTPUT:
                    self.update_result(ctx)
                else:
                    self.evaluate_node(ctx, node)
        self.check_returns(root)
        return root

    # ---- evaluation ----------------------------------------------------------------

    def evaluate(self, ctx):
        """The first evaluation of a context: all of its nodes, in order.  After that,
        only the nodes whose inputs grow are evaluated again."""
        for node in self.infos[ctx.graph].nodes:
            self.evaluate_node(ctx, node, first=True)
        self.update_result(ctx)

    def evaluate_node(self, ctx, node, first=False):
        self.current = (ctx, node)
        try:
            new = self.eval_apply(ctx, node)
        except MyiaError as e:
            if e.loc is None:
                e.loc = node.loc
            if e.loc is None or _in_library(e.loc):  # (a program Myia wrote: its caller)
                self.locate_in_user_code(e, ctx)
            raise
        if new is BOTTOM:
            return
        values = ctx.values
        old = values.get(node, BOTTOM)
        if old is new or old == new:
            return
        try:
            j = join(old, new)
        except TypeMismatch:
            raise MyiaTypeError(
                f"this expression has the type {old} on one path and {new} on "
                f"another", node.loc) from None
        if j == old:
            return
        values[node] = j
        # what reads this node: its users in the graph, the result, closures
        if not first:
            for u in self.infos[ctx.graph].users.get(node, ()):
                self.push((ctx, u))
            if node is ctx.graph.output:
                self.push((ctx, OUTPUT))
        readers = ctx.fv_readers.get(node)
        if readers:
            for r in readers:
                self.push(r)

    def structure_id(self, a):
        """A number for the shape of the containers in `a` (the lengths and kinds of
        its tuples, nested): equal shapes, equal numbers (-1: not a container)."""
        if a.__class__ is not ATuple:
            return -1
        sid = self.structure_ids.get(a)
        if sid is None:
            children = tuple(self.structure_id(e) for e in a.elements)
            key = (a.kind, children)
            sid = self.structures.get(key)
            if sid is None:
                sid = self.structures[key] = len(self.structures)
                self.depths.append(1 + max((self.depths[c] for c in children if c >= 0),
                                           default=0))
            self.structure_ids[a] = sid
        return sid

    def structure_depth(self, a):
        """How deep containers are nested in `a` (0: not a container)."""
        sid = self.structure_id(a)
        return 0 if sid < 0 else self.depths[sid]

    def locate_in_user_code(self, e, ctx):
        """Point error `e`, raised in the library's own subset code (myia.lib: a
        `len` in a loop's step, a check of a NumPy function), at the user's line that
        called it: the nearest caller outside the library.  (`e.library_loc` keeps
        where the library raised it.)"""
        seen = {ctx}
        todo = [ctx]
        while todo:
            c = todo.pop(0)
            for caller, node in sorted(c.callers, key=lambda cn: cn[0].id):
                loc = getattr(node, "loc", None)
                if loc is not None and not _in_library(loc):
                    e.library_loc = e.loc
                    e.loc = loc
                    return
                if caller not in seen:
                    seen.add(caller)
                    todo.append(caller)

    def update_result(self, ctx):
        self.current = (ctx, OUTPUT)
        out = self.value_of(ctx, ctx.graph.output)
        if out is BOTTOM or out == ctx.result:
            return
        try:
            result = join(ctx.result, out)
        except TypeMismatch:
            raise MyiaTypeError(
                f"`{ctx.graph.name}` returns {ctx.result} on one path and {out} on "
                f"another", ctx.graph.loc) from None
        if result != ctx.result:
            ctx.result = result
            for c in ctx.callers:
                self.push(c)

    def value_of(self, ctx, node):
        if node.__class__ is Constant:
            return self.constant(ctx, node)
        g = node.graph
        if g is ctx.graph:
            if node.__class__ is Parameter:
                return ctx.args[self.infos[g].param_index[node]]
            return ctx.values.get(node, BOTTOM)
        return self.read_free(ctx.parent, node)

    def read_free(self, start, node):
        """The abstract of `node` (owned by an enclosing graph) as seen from the
        context `start` (or its ancestors); the node being evaluated is evaluated
        again when it grows."""
        anc = start.ancestor(node.graph) if start is not None else None
        if anc is None:
            raise AssertionError(f"{node!r} is not in the scope of {self.current[0]}")
        if node.__class__ is Parameter:
            return anc.args[self.infos[node.graph].param_index[node]]
        readers = anc.fv_readers.get(node)
        if readers is None:
            readers = anc.fv_readers[node] = set()
        readers.add(self.current)
        return anc.values.get(node, BOTTOM)

    def constant(self, ctx, node):
        v = node.value
        if v.__class__ is Graph:
            parent = self.infos[v].parent
            c = None
            if parent is not None:
                c = ctx.ancestor(parent)
                if c is None:
                    raise AssertionError(f"{v} used outside the scope of its parent {parent}")
            return AFunction([GraphFunction(v, c)])
        a = self.const_cache.get(node)
        if a is None:
            # a transform object (`dh = myia.grad(h)` named in subset code) is only ever
            # called (see myia.ir.protocol.value_graph): its program is built per call
            a = self.const_cache[node] = (AFunction([TransformFunction(v)])
                                          if is_transform(v) else abstract_of(v))
        return a

    def eval_apply(self, ctx, node):
        inputs = node.inputs
        fn = self.value_of(ctx, inputs[0])
        if fn is BOTTOM:
            return BOTTOM
        args = []
        for i in inputs[1:]:
            a = self.value_of(ctx, i)
            if a is BOTTOM:
                return BOTTOM
            args.append(a)
        if fn.__class__ is not AFunction:
            raise MyiaTypeError(f"a value of type {fn} is not callable", node.loc)
        options = fn.options
        if len(options) == 1:
            for opt in options:
                result, target = self.call(ctx, node, opt, args, True)
                ctx.calls[node] = [(opt, target)]
                return result
        records = []
        result = BOTTOM
        seen = []
        for opt in self._ordered(node, fn):
            r, target = self.call(ctx, node, opt, args, False)
            records.append((opt, target))
            if r is BOTTOM:
                continue
            try:
                result = join(result, r)
            except TypeMismatch as e:
                a, b = (seen[0][1], r) if seen else e.types
                raise MyiaTypeError(self._branches_message(node, a, b), node.loc,
                                    hint=_lengths_hint(a, b)) from None
            seen.append((opt, r))
        ctx.calls[node] = records
        return result

    def _ordered(self, node, fn):
        """The options of `fn`, the true branch first when the callee is a switch."""
        options = fn.sorted_options()
        callee = node.inputs[0]
        if isinstance(callee, Apply) and callee.is_apply(P.switch):
            branches = [i.value for i in callee.inputs[2:4] if i.__class__ is Constant]
            rank = {g: k for k, g in enumerate(branches)}
            options.sort(key=lambda o: rank.get(getattr(o, "graph", None), len(rank)))
        return options

    def _branches_message(self, node, a, b):
        callee = node.inputs[0]
        if isinstance(callee, Apply) and callee.is_apply(P.switch):
            return f"the two branches of this `if` return different types: {a} and {b}"
        return f"the functions this call may reach return different types: {a} and {b}"

    # ---- calls -----------------------------------------------------------------------

    def call(self, ctx, node, opt, args, single):
        """(result, target) of calling the function `opt` on `args` at `node`."""
        cls = opt.__class__
        if cls is PrimitiveFunction:
            if opt.prim is P.J:
                return self.infer_J(ctx, node, args)
            if opt.prim is P.T:
                return tangent.infer_T(self, ctx, node, args)
            return infer_primitive(opt.prim, args), None
        if cls is GraphFunction:
            args = self.bind(opt.graph, args, node)
            args = self.maybe_broaden(opt.graph, opt.context, args, ctx, node)
            if single and direct_call(node, opt):
                callee = self.context(opt.graph, opt.context, args, ctx, node.loc)
            else:
                callee = self.shared_context(ctx, node, opt, args)
            callee.callers.add(self.current)
            return callee.result, callee
        if cls is PartialFunction:
            return self.call(ctx, node, opt.fn, list(opt.args) + list(args), False)
        if cls is MacroFunction:
            return self.expand_macro(ctx, node, opt, args)
        if cls is TransformFunction:
            return self.call_transform(ctx, node, opt, args, single)
        raise AssertionError(opt)

    def call_transform(self, ctx, node, opt, args, single):
        """A call of a transform of a known function: the program it builds for these
        argument types (a graph without free variables), called like any graph."""
        signature = tuple(broaden(a) for a in args)
        t = opt.transform
        try:
            graph = t.__myia_graph_for__(signature) or t.__myia_graph__()
        except (MyiaTypeError, MyiaShapeError, MyiaValueError):
            # an int or a bool known here decides a shape or a branch in the
            # transform's program (`grad(f, 1)(n, x)` with n a constant of this
            # program; a static flag that picks an `if`, whose other branch fails for
            # these shapes): its program for those values, as if they were static
            # arguments (myia.compile's static_argnums); in a jvp, they are the
            # values of (value, tangent) pairs
            kept = tuple(_keep_known(a, b) for a, b in zip(args, signature))
            if kept == signature:
                raise
            graph = t.__myia_graph_for__(kept) or t.__myia_graph__()
        return self.call(ctx, node, GraphFunction(graph, None), args, single)

    def visible(self, fctx, ctx):
        """Whether the frame `fctx` encloses the context `ctx` (so the specialized graph
        can be named by a constant there)."""
        if fctx is None:
            return True
        c = ctx
        while c is not None:
            if c is fctx:
                return True
            c = c.parent
        return False

    def shared_context(self, ctx, node, opt, args):
        """The one context of all the calls of the closure `opt` through values (their
        arguments joined; environments that keep growing are widened to ENV_ANY)."""
        key = opt
        args = tuple(args)
        cur = self.shared.get(key)
        if cur is not None:
            if cur.args == args:
                callee = cur
            else:
                try:
                    joined = tuple(join(a, b) for a, b in zip(cur.args, args))
                    if self.shared_changes[key] >= MAX_SHARED_CHANGES:
                        joined = tuple(_widen(a, j) for a, j in zip(cur.args, joined))
                except TypeMismatch:
                    raise MyiaTypeError(
                        f"the function `{opt.graph.name}` is called with arguments of "
                        f"different types: ({', '.join(map(str, cur.args))}) and "
                        f"({', '.join(map(str, args))})", node.loc,
                        hint="a function passed around as a value has one signature") \
                        from None
                callee = self.context(opt.graph, opt.context, joined, ctx, node.loc)
        else:
            callee = self.context(opt.graph, opt.context, args, ctx, node.loc)
        users = self.shared_users[key]
        if callee is not cur:
            self.shared[key] = callee
            self.shared_changes[key] += 1
            for c in users:
                self.push(c)
        users.add(self.current)
        return callee

    def bind(self, graph, args, node):
        """The arguments of a call of `graph`, with the defaults of missing ones."""
        n = len(graph.parameters)
        if len(args) == n:
            return tuple(args)
        if len(args) < n:
            missing = [p.name for p in graph.parameters[len(args):]]
            if all(name in graph.defaults for name in missing):
                return tuple(args) + tuple(abstract_of(graph.defaults[name]) for name in missing)
        names = ", ".join(p.name or "_" for p in graph.parameters)
        raise MyiaTypeError(
            f"{graph.name}() takes {n} argument{'s' if n != 1 else ''} ({names}) but "
            f"{len(args)} {'was' if len(args) == 1 else 'were'} given",
            node.loc if node is not None else None)

    def maybe_broaden(self, graph, parent, args, caller, node):
        """The arguments of a call of `graph`, some broadened (see the module doc)."""
        c = caller if graph in self.inferred else None  # a new graph: not recursive
        nearest = None
        depth = 0
        while c is not None:
            if c.graph is graph:
                depth += 1
                if nearest is None:
                    nearest = c
            c = c.creator
        broad = tuple(broaden(a) for a in args)
        if nearest is not None:
            # a recursion: the arguments that changed since the enclosing call of the
            # same graph lose their values (those passed on unchanged keep them),
            # unless a container changed its structure: a loop that builds a list or
            # walks a tuple runs once per element at compile time (its index stays a
            # constant, so the elements may have different types, as in JAX)
            unrolled = graph in self.unroll or any(
                a.__class__ is ATuple and self.structure_id(a) != self.structure_id(b)
                for a, b in zip(args, nearest.args))
            if not unrolled:
                if any(_known_int(a) and a != old for a, old in zip(args, nearest.args)):
                    self.broadened_counters.add(graph)
                args = tuple(a if a == old else b
                             for a, old, b in zip(args, nearest.args, broad))
            # (a block without parameters is nested as deep as the loop it is part of,
            # whose header is checked; containers nested ever deeper are not a list)
            wide = unrolled and all(self.structure_depth(a) <= MAX_CONTAINER_DEPTH
                                    for a in args)
            limit = MAX_UNROLL if wide or not args else MAX_NESTING
            if depth > limit and (graph, parent, args) not in self.contexts:
                hint = ("a loop or a recursion that builds ever larger tuples or ever "
                        "deeper closures cannot be compiled")
                if unrolled:
                    hint = (f"a loop over a tuple, a list or a dict, or one that builds a "
                            f"list, runs once per element at compile time, for at most "
                            f"{MAX_UNROLL} elements (and only as many as known at compile "
                            f"time): for more, use arrays (a loop over an array's rows, "
                            f"np.stack, array arithmetic)")
                raise MyiaTypeError(
                    f"type inference does not converge: `{graph.name}` calls itself with "
                    f"ever-changing argument types (now: {_shown(args)})",
                    node.loc, hint=hint)
            return args
        if broad == args:
            return args
        variants = self.variants[(graph, parent, broad)]
        if args in variants:
            return args
        if len(variants) < MAX_SIGNATURES:
            variants.add(args)
            return args
        # too many constant signatures: the arguments whose value varies most lose it
        # (floats first: ints are more often indices and axes, which must stay known)
        out = []
        for i, (a, b) in enumerate(zip(args, broad)):
            seen = {v[i] for v in variants}
            seen.add(a)
            limit = MAX_VALUES if _has_float_value(a) else MAX_INT_VALUES
            out.append(b if len(seen) > limit else a)
        out = tuple(out)
        variants.add(out)
        return out

    # ---- macros and J ----------------------------------------------------------------

    def signature(self, macro, f):
        """(parameter names, defaults) of the function value `f` given to `macro`,
        as the VM finds them (see myia.backend.vm)."""
        if f.__class__ is not AFunction:
            raise MyiaGradError(f"{macro.name} of a value of type {f}, which is not a function")
        sigs = set()
        for opt in f.options:
            if opt.__class__ is GraphFunction:
                g = opt.graph
                sigs.add((tuple(p.name for p in g.parameters),
                          tuple(sorted(g.defaults.items(), key=lambda kv: kv[0]))))
            elif opt.__class__ is PrimitiveFunction:
                sigs.add((tuple(f"x{i}" for i in range(prim_arity(opt.prim))), ()))
            else:
                raise MyiaGradError(f"{macro.name} of {opt.name}, which has no fixed signature")
        if len(sigs) > 1:
            # several functions: fine if they take as many arguments, without defaults
            # (the names of the parameters do not matter)
            arities = {len(names) for names, _ in sigs}
            if len(arities) > 1 or any(defaults for _, defaults in sigs):
                raise MyiaGradError(
                    f"{macro.name} of a function value that may be one of several "
                    f"functions with different parameters: {f}")
            return tuple(f"x{i}" for i in range(arities.pop())), {}
        names, defaults = sigs.pop()
        return names, dict(defaults)

    def expand_macro(self, ctx, node, opt, args):
        if tangent.is_jvp_macro(opt):
            return tangent.expand_jvp(self, ctx, node, opt, args)
        if tangent.is_vjp_macro(opt):
            return tangent.expand_vjp(self, ctx, node, opt, args)
        if tangent.is_jet_macro(opt):
            return tangent.expand_jet(self, ctx, node, opt, args)
        if opt.macro is CHECKPOINT:
            return self.expand_checkpoint(ctx, node, args)
        if opt.macro is VMAP:
            return self.expand_vmap(ctx, node, args)
        if not args:
            raise MyiaTypeError(f"{opt.name}() needs a function")
        f = args[0]
        argnums_a = args[1] if len(args) > 1 else AScalar("int64", 0)
        argnums = constant_value(argnums_a)
        if argnums is NOT_CONSTANT:
            raise MyiaGradError(f"argnums of {opt.name} must be a constant, got {argnums_a}")
        static = self.static_transform(ctx, node, opt, f, argnums)
        if static is not None:
            return AFunction([TransformFunction(static)]), None
        names, defaults = self.signature(opt, f)
        macro = opt.macro
        if isinstance(macro, GradMacro):
            graph = macro.expand(len(names), argnums, names, defaults)
        elif isinstance(macro, JOf):
            graph = macro.graph(len(names), argnums, names, defaults)
        else:
            raise AssertionError(macro)
        closure = self.closure_literal(node, opt)
        if closure is not None:
            graph = self.expansion_for_closure(node, graph, closure)
            pctx = ctx.ancestor(self.infos[graph].parent)
            return self.call(ctx, node, GraphFunction(graph, pctx), [f, argnums_a], True)
        return self.call(ctx, node, GraphFunction(graph, None), [f, argnums_a], True)

    def known_target(self, f):
        """What a transform built per signature (checkpoint, vmap) applies to, for a
        function value `f` of one known def that captures nothing, or a transform of
        one; else None."""
        fo = next(iter(f.options)) if f.__class__ is AFunction and len(f.options) == 1 \
            else None
        if fo.__class__ is GraphFunction and self.infos[fo.graph].free_variables:
            return None
        return transform_target(fo)

    def expand_checkpoint(self, ctx, node, args):
        """`checkpoint(f)` in subset code, f one known def that captures nothing: the
        CheckpointFunction of f, as from Python (a closure would need its captured
        values recomputed with it: not yet)."""
        target = self.known_target(args[0] if len(args) == 1 else None)
        if target is None:
            raise MyiaGradError(
                "checkpoint inside compiled code takes one def that captures nothing "
                "(not a closure, not a function chosen at run time)",
                hint="define the checkpointed function at module level (or in a cell) "
                     "and pass what it uses as arguments: checkpoint(segment)(x, w)")
        return AFunction([TransformFunction(CHECKPOINT.static_transform(target))]), None

    def expand_vmap(self, ctx, node, args):
        """`vmap(f, in_axes, out_axes)` in subset code, f one known def that captures
        nothing (or a transform of one): the VmapFunction of f, as from Python."""
        if not 1 <= len(args) <= 3:
            raise MyiaTypeError(f"vmap takes 1 to 3 arguments (fn, in_axes, out_axes), "
                                f"{len(args)} given")
        axes = []
        for a, default in zip(list(args[1:]) + [None] * (3 - len(args)), (0, 0)):
            v = default if a is None else constant_value(a)
            if v is NOT_CONSTANT:
                raise MyiaTypeError(f"vmap's in_axes and out_axes must be constants, got {a}")
            axes.append(tuple(v) if isinstance(v, list) else v)
        closure = self.closure_literal(node, MacroFunction(VMAP))
        if closure is not None:
            # vmap of a closure written right there: of its lifted program, with what
            # it captured as arguments every example shares
            graph = self.vmap_of_closure(node, closure, *axes)
            pctx = ctx.ancestor(self.infos[graph].parent)
            return self.call(ctx, node, GraphFunction(graph, pctx), list(args), True)
        target = self.known_target(args[0])
        if target is None:
            raise MyiaGradError(
                "vmap inside compiled code takes a def or a lambda written at the call, "
                "or one that captures nothing (not a closure passed as a value, not a "
                "function chosen at run time)",
                hint="pass what the function uses as arguments, with in_axes None for "
                     "them: vmap(f, in_axes=(0, None))(xs, w)")
        return AFunction([TransformFunction(VMAP.static_transform(target, *axes))]), None

    def vmap_of_closure(self, node, closure, in_axes, out_axes):
        """`make(f, in_axes, out_axes)` for `vmap(g)` at `node`, g a closure made there
        that captured v1..vm: a function `(*args) -> V(v1..vm, *args)`, V the vmap of
        g's lifted program with in_axes None for v1..vm; nested where g is made, so
        that it reads v1..vm from the very frame that made g."""
        key = (node, "vmap")
        graph = self.closure_expansions.get(key)
        if graph is None:
            lifted, fvs = lifted_copy(closure)
            n = len(closure.parameters)
            if in_axes is None or isinstance(in_axes, int):
                in_axes = (in_axes,) * n
            v = VMAP.static_transform(lifted, (None,) * len(fvs) + tuple(in_axes), out_axes)
            graph = Graph("vmap", node.loc)
            for name in VMAP.param_names:
                graph.add_parameter(name)
            mapped = Graph(f"vmap_{closure.name}", closure.loc)
            params = [mapped.add_parameter(p.name, p.loc) for p in closure.parameters]
            mapped.output = mapped.apply(Constant(v), *fvs, *params, loc=node.loc)
            graph.output = Constant(mapped)
            self.infos.add_nested(graph, self.infos.top(closure))
            self.closure_expansions[key] = graph
        return graph

    def static_transform(self, ctx, node, opt, f, argnums):
        """`grad(f)` as a transform built per call signature (see TransformFunction),
        when f is a known function that captures nothing (or such a transform) and the
        value is only called, or only differentiated again: else None, and the macro
        expands into a program that applies J to f's value."""
        macro = opt.macro
        make = getattr(macro, "static_transform", None)
        if make is None or not isinstance(macro, GradMacro) or f.__class__ is not AFunction \
                or len(f.options) != 1:
            return None
        (fo,) = f.options
        if fo.__class__ is GraphFunction and (
                fo.context is not None or self.infos[fo.graph].free_variables):
            return None
        # (the value graph of a transform object: the object itself)
        target = transform_target(fo)
        if target is None:
            return None
        if not self.only_called(ctx.graph, node):
            return None
        try:
            return make(target, argnums)
        except TypeError:  # unhashable argnums
            return None

    def only_called(self, g, node):
        """Whether the value of `node` (in graph `g`) is only called, or given to a
        `jvp`, or to a `grad` whose value is (and so on): never passed, returned, stored
        or captured by a nested function."""
        info = self.infos[g]
        if node is g.output or any(node in self.infos[h].free_variables
                                   for h in self.infos.scope(g)[1:]):
            return False
        for u in info.users.get(node, ()):
            called = u.inputs[0] is node and node not in u.inputs[1:]
            transformed = len(u.inputs) > 1 and u.inputs[1] is node \
                and node not in u.inputs[2:] \
                and (_is_jvp_call(u) or _is_vmap_call(u)
                     or _is_grad_call(u) and self.only_called(g, u))
            if not called and not transformed:
                return False
        return True

    def closure_literal(self, node, opt):
        """The graph of `grad(g)` at `node` when g is a closure written right there (its
        graph's constant, with free variables), else None."""
        inputs = node.inputs
        if len(inputs) < 2 or inputs[0].__class__ is not Constant \
                or inputs[0].value is not opt.macro:
            return None
        f = inputs[1]
        if f.__class__ is Constant and isinstance(f.value, Graph) \
                and self.infos[f.value].free_variables:
            return f.value
        return None

    def expansion_for_closure(self, node, graph, closure):
        """A copy of the macro's expansion `graph` (make(f, argnums)) for this call
        site, that reads the closure from its own constant instead of from `f`.  The
        copy is nested where the closure is made, so J of the closure can read what the
        closure captured from the very frame that made it (see J_option, "lift")."""
        key = (node, graph)
        copy = self.closure_expansions.get(key)
        if copy is None:
            copy = clone(graph)
            mng = manage(copy)
            scope = mng.scope(copy)
            # (the parameter f stays, unused: the call keeps its arguments)
            mng.replace(copy.parameters[0], Constant(closure, node.loc))
            top = self.infos.top(closure)
            _inline_fprop_J(scope, top)
            self.infos.add_nested(copy, top)
            self.closure_expansions[key] = copy
        return copy

    def infer_J(self, ctx, node, args):
        if len(args) != 1:
            raise MyiaTypeError(f"J takes 1 argument, {len(args)} given")
        record = JRecord()
        return self.J_abstract(ctx, node, args[0], record), record

    def J_abstract(self, ctx, node, a, record):
        if a.__class__ is ATuple:
            out = [self.J_abstract(ctx, node, e, record) for e in a.elements]
            return BOTTOM if BOTTOM in out else a.with_elements(out)
        if a.__class__ is not AFunction:
            return a
        result = BOTTOM
        for opt in a.sorted_options():
            r = self.J_option(ctx, node, opt, record)
            if r is BOTTOM:
                return BOTTOM
            result = join(result, r)
        return result

    def J_option(self, ctx, node, opt, record):
        part = record.parts.get(opt)
        if part is not None:
            # met again through what closures captured (a closure carried by a loop
            # captures the closures of the earlier iterations): once per option, or
            # the walk grows exponentially
            kind, what = part
            if kind == "lift":
                return what.result
            if kind == "graph":
                return AFunction([GraphFunction(what, None)])
            return AFunction([MacroFunction(what)])
        cls = opt.__class__
        if cls is GraphFunction:
            g = opt.graph
            if not self.infos[g].free_variables:
                jg = J_graph(g)
                record.parts[opt] = ("graph", jg)
                return AFunction([GraphFunction(jg, None)])
            lifted, fvs = lifted_copy(g)
            primal = []
            for v in fvs:
                a = self.read_free(opt.context, v)
                if a is BOTTOM:
                    return BOTTOM
                primal.append(a)
            # a program that writes jvp takes the functions it captured as constants
            # (its J is J of its typed program, which needs data: see TypedJ)
            static = tangent.static_functions(self, primal)
            if not (uses_forward_mode(lifted) or any(
                    isinstance(f, Graph) and uses_forward_mode(f) for _, f in static)):
                static = ()
            else:
                # a closure it captured is made again inside from the data it captured,
                # so the typed program J waits for takes data (see lift_closure)
                laid_out = tangent.capture_layout(self, opt, (g,))
                if laid_out is None:
                    return BOTTOM
                layout, leaves = laid_out
                if any(e[0] == "closure" for e in layout) and is_data_signature(leaves):
                    outer = lift_closure(g, layout=layout)
                    result, callee = self.call(ctx, node, GraphFunction(outer, None),
                                               list(leaves), True)
                    record.parts[opt] = ("lift", callee)
                    return result
            outer = lift_closure(g, static)
            known = outer.flags["ignored"]
            captured = []
            for i, a in enumerate(primal):
                v = a if i in known else self.J_abstract(ctx, node, a, record)
                if v is BOTTOM:
                    return BOTTOM
                captured.append(v)
            result, callee = self.call(ctx, node, GraphFunction(outer, None), captured, True)
            record.parts[opt] = ("lift", callee)
            return result
        if cls is PrimitiveFunction:
            if opt.prim is P.make_tuple:
                raise MyiaTypeError("J of make_tuple as a value is not supported",
                                    hint="call make_tuple directly")
            fp = prim_fprop(opt.prim)
            record.parts[opt] = ("graph", fp)
            return AFunction([GraphFunction(fp, None)])
        if cls is MacroFunction:
            j = opt.macro.__myia_J__()
            record.parts[opt] = ("macro", j)
            return AFunction([MacroFunction(j)])
        raise MyiaTypeError(f"J of {opt.name} is not supported")

    # ---- functions that never return -------------------------------------------------

    def live_contexts(self, root):
        """The contexts reached from `root` through the calls of their last evaluation."""
        seen = {root: None}
        todo = [root]
        while todo:
            ctx = todo.pop()
            for records in ctx.calls.values():
                for _, target in records:
                    for t in _targets(target):
                        if t not in seen:
                            seen[t] = None
                            todo.append(t)
            for c in (ctx.parent,):
                if c is not None and c not in seen:
                    seen[c] = None
                    todo.append(c)
        return sorted(seen, key=lambda c: c.id)

    def check_returns(self, root):
        live = self.live_contexts(root)
        bottom = [c for c in live if c.result is BOTTOM]
        if not bottom:
            return
        bottom_set = set(bottom)

        def reach(c):
            out = set()
            todo = [c]
            while todo:
                x = todo.pop()
                for records in x.calls.values():
                    for _, target in records:
                        for t in _targets(target):
                            if t in bottom_set and t not in out:
                                out.add(t)
                                todo.append(t)
            return out

        culprit = bottom[0]
        for c in bottom:
            r = reach(c)
            if c in r or any(x.graph is c.graph for x in r):
                culprit = c
                break
        g = culprit.graph
        name = g.name.split(":")[0]
        if ":while" in g.name or ":for" in g.name:
            msg = (f"this loop in `{name}` never ends: every path goes around again "
                   f"(a `while True` without `break`, or a condition that never changes)")
            hint = "add a `break`, or make the condition become false"
        else:
            msg = (f"`{name}` never returns: every path recurses "
                   f"(a recursion without a base case)")
            hint = "add a case that returns without recursing"
        raise MyiaTypeError(msg, g.loc, hint=hint)


def _widen(old, new):
    """`new` (which covers `old`), with ENV_ANY for each environment that grew: the
    arguments of a closure called from many places (a backpropagator) would otherwise
    gain one key at a time, each time inferring the closure again."""
    if new.__class__ is AEnv:
        return new if new == old else ENV_ANY
    if new.__class__ is ATuple and old.__class__ is ATuple:
        return new.with_elements(_widen(a, b) for a, b in zip(old.elements, new.elements))
    return new


_LIBRARY_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _in_library(loc):
    """Whether a location is in myia's own code (its library of subset functions)."""
    return loc is not None and os.path.abspath(loc.filename).startswith(_LIBRARY_DIR)


def _lengths_hint(a, b):
    """What to do when containers of different structures meet (a list that grows on
    one path only), or None."""
    if a.__class__ is ATuple and b.__class__ is ATuple \
            and (len(a) != len(b) or a.kind != b.kind):
        return ("the length of a tuple or a list is part of its type: it must be known "
                "at compile time, the same on every path (a loop that builds a list "
                "must run a number of times known at compile time)")
    return None


def _known_int(a):
    """An int whose value is known at compile time (a size, a loop counter)."""
    return a.__class__ is AScalar and a.known and a.dtype == "int64"


def _keep_known(a, broad):
    """`broad` (a broadened) with the known ints and bools of `a` kept, in tuples
    too."""
    if a.__class__ is AScalar and a.known and a.dtype in ("int64", "bool"):
        return a
    if a.__class__ is ATuple and broad.__class__ is ATuple:
        elements = [_keep_known(x, y) for x, y in zip(a.elements, broad.elements)]
        if all(x is y for x, y in zip(elements, broad.elements)):
            return broad
        return broad.with_elements(elements)
    return broad


def _has_float_value(a):
    if a.__class__ is AScalar:
        return a.value is not ANY and "float" in a.dtype
    if a.__class__ is ATuple:
        return any(_has_float_value(e) for e in a.elements)
    return False


def _inline_fprop_J(graphs, top):
    """Inline the calls of `▶J` (J of the primitive J, and its own J at each level of
    `grad` of `grad`) in `graphs`, nested in `top`, and in what inlining nests in them.
    In the derivative of a `grad` (JOf), the J of the closure sits in ▶J, where it reads
    the closure from a parameter; inlined, it reads the closure's own constant."""
    fprops = set()
    fp = prim_fprop(P.J)
    while fp is not None:
        fprops.add(fp)
        fp = J_graph_if_built(fp)
    while True:
        mng = manage(top, *graphs)
        calls = [n for g in graphs for h in mng.scope(g) for n in mng.nodes(h)
                 if n.__class__ is Apply and n.inputs[0].__class__ is Constant
                 and n.inputs[0].value in fprops]
        if not calls:
            return
        for n in calls:
            fp = n.inputs[0].value
            mng.replace(n, inline(fp, n.graph, n.inputs[1:], manager=manage(fp)))


def _is_grad_call(node):
    """Whether `node` is `grad(f, ...)` (or value_and_grad) written in subset code."""
    fn = node.inputs[0]
    return fn.__class__ is Constant and isinstance(fn.value, GradMacro) \
        and len(node.inputs) > 1


def _is_vmap_call(node):
    """Whether `node` is `vmap(f, ...)` written in subset code."""
    fn = node.inputs[0]
    return fn.__class__ is Constant and fn.value is VMAP


def _is_jvp_call(node):
    """Whether `node` is `jvp(f, ...)` written in subset code (its value is data)."""
    fn = node.inputs[0]
    return fn.__class__ is Constant and tangent.is_jvp_value(fn.value)


def direct_call(node, opt):
    """Whether a call of the graph function `opt` at `node` can name its callee's
    specialized graph by a constant: a graph without free variables, or a closure
    called by the constant of its own graph (so made in the caller's own frame).  A
    closure reaching the call through a value may come from another frame of the same
    context (a recursive call), so it cannot."""
    return opt.context is None or node.inputs[0].__class__ is Constant


def _targets(target):
    if isinstance(target, Context):
        yield target
    elif isinstance(target, JRecord):
        for kind, t in target.parts.values():
            if kind == "lift":
                yield t


class InferenceResult:
    """What inference found: the abstract of every node in every context.

    root: the context of the inferred graph; contexts: the live ones (reached from
    the root), each with `.graph`, `.args`, `.result`, `.values` ({node: abstract}).
    """

    def __init__(self, inferrer, root):
        self.inferrer = inferrer
        self.root = root
        self.contexts = inferrer.live_contexts(root)

    @property
    def result(self):
        return self.root.result

    def contexts_of(self, graph):
        return [c for c in self.contexts if c.graph is graph]

    def abstract(self, node, context):
        """The abstract of `node` in `context` (or in the enclosing context that owns
        it)."""
        return self.inferrer.value_of(context, node)


def infer_graph(graph, arg_abstracts):
    """Infer `graph` called with `arg_abstracts`: (result abstract, InferenceResult).

    A loop whose int counter lost its value (see `maybe_broaden`) where a shape then
    needed it (`A[1:, :j]` concatenated, for j in range(n) with n known) is inferred
    again with that loop unrolled: its counter keeps its value, one context per
    iteration (up to MAX_UNROLL), as a loop over a tuple does."""
    inf = Inferrer()
    try:
        root = inf.run(graph, arg_abstracts)
    except (MyiaStaticError, MyiaShapeError) as e:
        if not inf.broadened_counters:
            raise
        unrolled = Inferrer(unroll=frozenset(inf.broadened_counters))
        try:
            root = unrolled.run(graph, arg_abstracts)
        except MyiaError:
            raise e from None
        inf = unrolled
    return root.result, InferenceResult(inf, root)


__all__ = ["Context", "InferenceResult", "Inferrer", "infer_graph"]
