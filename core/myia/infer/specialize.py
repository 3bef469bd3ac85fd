"""Specialization: one monomorphic, typed copy of each graph per inferred context.

`specialize(graph, arg_abstracts)` runs inference, then builds a new graph for each
live context (reached from the root), every node carrying its `.abstract`:

- a call whose callee is one known graph calls that graph's copy for the callee
  context directly (a Constant of the copy); the defaults of missing arguments are
  filled in;
- a graph used as a value (a closure stored, passed, returned, a branch chosen at
  run time) becomes the copy for its context: the single context of that closure
  value (see "monovariant" in myia.infer.infer), or its only context;
- a node whose value is a known constant becomes a Constant (constant propagation),
  except parameters and anything that depends on an effect (`assert`) or on a call
  that may have one; `switch` on a known condition becomes the chosen input;
- a `grad` macro call becomes a call of the expanded graph's copy; J of a known
  function becomes the constant of the J graph's copy (J of a closure whose captured
  values are visible becomes a call of `lift_closure`'s copy); J of data is the data;
- where paths meet with different number types (int64 joined with float64, a Python
  float with an np.float64), the value is converted (`to_float`/`astype`...) so that
  it has the joined type;
- what lists and dicts mean is resolved (see myia.abstract, "Containers"): `+`
  and `*` of tuples or lists become the tuple they make (make_tuple of the elements),
  `d["k"]` reads the position of key "k"; `kind_of` is always a constant; the root
  graph's `flags["result"]` is the abstract of its result (lists and dicts as Python
  sees them, whatever the optimizer later makes of the output node), and
  `flags["container_arith"]` says that the program concatenates or repeats tuples or
  lists (which the rules of `add` and `mul` do not differentiate: see myia.api).

J of a closure made elsewhere (`grad(make_scaled(x))`, inside subset code): J needs the
values the closure captured, and the frame that made it is not visible where J is.  So
every value of that closure is a record that names them, in the order of the lifted J's
parameters (`lift_closure`): `make_closure(wrapper, v1, ..., vm)`, where wrapper (nested
where the closure is made) ignores v1..vm and calls the closure's copy.  J reads them
back: `outer(closure_bound(x, 0), ..., closure_bound(x, m - 1))`.  J of captured data
is the data; a captured closure is a record too, whose J is read the same way, and J of
a captured tuple is the tuple of its elements' J.  J of a
value that may be one of several functions is `J(x, t1, ..., tk)`: for each function,
its J, or for a closure the graph that reads J from its record (`record_reader`); a
backend picks the one of the function the value is.

Fallbacks, explicit: a closure that is used as a value but never called during
inference (e.g. the backpropagator that `myia.vjp` returns to Python) has no typed
copy; it is copied without types (`flags["untyped"] = True`), closing over the
specialized graphs.  J of a function whose values specialization did not make records
(e.g. a closure a Python caller handed in, see `_closures_J_reads_from_records`) stays a
`J` node that the VM computes at run time; the closures such a J may meet keep plain
values.

Environment keys (EnvKey) are kept as they are: the same key must be used where a
sensitivity is stored and where it is read, across contexts.
"""

from collections import defaultdict

from ..ir import Apply, Constant, EnvKey, Graph, Node, Parameter
from ..ir.clone import _copy_graphs, _new_graph
from ..prim import Primitive
from ..prim import ops as P
from ..abstract import (
    BOTTOM,
    NOT_CONSTANT,
    AArray,
    AConstant,
    AFunction,
    AScalar,
    ATuple,
    GraphFunction,
    MacroFunction,
    TransformFunction,
    PrimitiveFunction,
    abstract_of,
    constant_value,
    join,
)
from ..ad.lifting import lifted_copy, record_layout
from ..errors import MyiaGradError
from .infer import Context, JRecord, _targets, direct_call, infer_graph
from .records import TRecord
from . import tangent
from .rules import zeros_abstract
from .rules_containers import key_position
from .rules_dynamic import expand_ellipsis, expand_getitem, expand_getitem_grad, has_ellipsis


def specialize(graph, arg_abstracts):
    """The specialized copy of `graph` for arguments of the given abstracts."""
    _, result = infer_graph(graph, arg_abstracts)
    return Specializer(result).run()


class Specializer:
    def __init__(self, result):
        self.result = result
        self.inf = result.inferrer
        self.live = result.contexts
        self.live_set = set(self.live)
        self.graphs = {}
        self.repl = {}
        self.tainted = {}
        self.fallbacks = {}
        self.pending_fallbacks = []
        self.container_arith = False  # a `+` or `*` of lists or tuples was resolved

    # ---- driver -------------------------------------------------------------------

    def run(self):
        for ctx in self.live:
            g = ctx.graph
            ng = _new_graph(g)
            m = self.repl[ctx] = {}
            for p, a in zip(g.parameters, ctx.args):
                np_ = ng.add_parameter(p.name, p.loc)
                np_.abstract = a
                np_.primal = p.primal
                np_.adjoint = p.adjoint
                m[p] = np_
            self.graphs[ctx] = ng
        self.effectful = self._effectful_contexts()
        self.J_records = self._closures_J_reads_from_records()
        self.records = {}  # option -> its make_closure node
        self.readers = {}  # option -> the graph that reads J from its records
        pending_records = self.pending_records = []
        for ctx in sorted(self.live, key=_depth):
            self.fill(ctx)
        while self.pending_fallbacks:
            self._fill_fallback(*self.pending_fallbacks.pop())
        for pending in pending_records:
            self._fill_record(*pending)
        root = self.graphs[self.result.root]
        root.flags["result"] = self.result.root.result
        if self.container_arith:
            root.flags["container_arith"] = True
        return root

    def _closures_J_reads_from_records(self):
        """{closure option: its lifted J} for the closures whose values become records
        (see the module doc): those J meets made in a frame it cannot see or among
        several functions, and the closures they capture, when J can read what each
        captured from its record (see `J_from_record`).  A closure that a run-time J
        may meet, or that the program returns, keeps plain values."""
        groups = []
        blocked = _function_options(self.inf.value_of(self.result.root,
                                                      self.result.root.graph.output))
        for ctx in self.live:
            for node, records in ctx.calls.items():
                fn, record = records[0]
                if len(records) == 1 and isinstance(record, TRecord):
                    # T, or a jet of a closure
                    groups.append(tangent.closures_T_reads_from_records(self, ctx, node,
                                                                        record))
                    continue
                if not (isinstance(fn, PrimitiveFunction) and fn.prim is P.J):
                    continue
                xa = self.inf.value_of(ctx, node.inputs[1])
                readable = None
                if len(records) == 1 and isinstance(record, JRecord):
                    opt = next(iter(xa.options)) if isinstance(xa, AFunction) else None
                    if isinstance(opt, GraphFunction) and len(xa.options) == 1 \
                            and self.inf.visible(opt.context, ctx):
                        # J reads the frame (see build_J), and the records of the
                        # closures it captured
                        readable = self._readable_from_frame(opt, record)
                    else:
                        readable = self._readable_value(xa, record, ())
                if readable is not None:
                    groups.append(readable)
                else:
                    blocked |= self._options_J_may_meet(xa, record)
        out = {}
        for group in groups:
            if not blocked.intersection(group):
                out.update(group)
        return out

    def _readable_from_frame(self, opt, record):
        """For J of closure `opt` where its frame is visible: the closures whose
        records J reads for what it captured ({} for data or a static J), or None (a
        run-time J)."""
        kind, what = record.parts.get(opt, (None, None))
        if kind != "lift":
            return {}
        return self._readable_captures(opt, what.graph, record, (opt,))

    def _readable_function(self, xa, record, seen=()):
        """For J of a function value of abstract `xa` (one or several functions): the
        closures whose records J reads (each function has a static J or is a closure
        whose record J can read, wherever it was made), or None."""
        found = {}
        for o in xa.options:
            if self.static_J(AFunction([o]), record, None) is not None:
                continue
            inner = None
            if isinstance(o, GraphFunction):
                inner = self._readable_from_records(o, record, seen)
            if inner is None:
                return None
            found.update(inner)
        return found

    def _options_J_may_meet(self, a, record):
        """The graph options of a value of abstract `a` that a run-time J transforms:
        its functions and, through what they captured, theirs."""
        found = set()
        todo = list(_function_options(a))
        while todo:
            o = todo.pop()
            if o in found:
                continue
            found.add(o)
            kind, what = record.parts.get(o, (None, None)) if record is not None else (None, None)
            if kind == "lift":
                for a in self._captured_abstracts(o, what.graph):
                    todo.extend(_function_options(a))
        return found

    def _readable_from_records(self, opt, record, seen):
        """The closures whose records J of closure `opt` reads (itself, and what it
        captured), or None."""
        kind, what = record.parts.get(opt, (None, None))
        if kind != "lift" or opt in seen:
            return None
        found = self._readable_captures(opt, what.graph, record, seen + (opt,))
        if found is not None:
            found[opt] = record_layout(opt.graph) if "paths" in what.graph.flags \
                else what.graph
        return found

    def _readable_captures(self, opt, outer, record, seen):
        """The closures whose records J reads for the values closure `opt` captured
        (the parameters of its lifted J `outer`), or None if one cannot be read."""
        found = {}
        if "paths" in outer.flags:
            # (what the closures it captured captured, read through their records:
            # data, see lift_closure's layout)
            for path in outer.flags["paths"]:
                for o, _, _, _ in list(self.along(opt, path))[1:]:
                    found[o] = record_layout(o.graph)
            return found
        ignored = outer.flags.get("ignored", ())
        for i, p in enumerate(outer.parameters):
            if i in ignored:  # (taken as it is: a function that captures nothing)
                continue
            inner = self._readable_value(self.inf.read_free(opt.context, p.primal),
                                         record, seen)
            if inner is None:
                return None
            found.update(inner)
        return found

    def _readable_value(self, a, record, seen):
        """The closures whose records J of a value of abstract `a` reads (data, a
        function, or a tuple of these, read element by element), or None."""
        if _is_data(a) or self.static_J(a, record, None) is not None:
            return {}
        if isinstance(a, AFunction):
            return self._readable_function(a, record, seen)
        if isinstance(a, ATuple):
            found = {}
            for e in a.elements:
                inner = self._readable_value(e, record, seen)
                if inner is None:
                    return None
                found.update(inner)
            return found
        return None

    def _effectful_contexts(self):
        """The contexts that may run an `assert` (themselves or through calls)."""
        callers = defaultdict(set)
        eff = set()
        for ctx in self.live:
            for node in self.inf.infos[ctx.graph].nodes:
                if ctx not in eff and self._node_effect(ctx, node, ()):
                    eff.add(ctx)
                for _, target in ctx.calls.get(node, ()):
                    for t in _targets(target):
                        callers[t].add(ctx)
        todo = list(eff)
        while todo:
            for c in callers[todo.pop()]:
                if c not in eff:
                    eff.add(c)
                    todo.append(c)
        return eff

    def _node_effect(self, ctx, node, eff):
        fn = node.inputs[0]
        if isinstance(fn, Constant) and isinstance(fn.value, Primitive) \
                and fn.value.effect:
            return True
        for opt, target in ctx.calls.get(node, ()):
            if isinstance(opt, PrimitiveFunction) and opt.prim.effect:
                return True
            if isinstance(target, Context) and target in eff:
                return True
            if isinstance(target, JRecord):
                for kind, t in target.parts.values():
                    if kind == "lift" and t in eff:
                        return True
        return False

    # ---- one context ----------------------------------------------------------------

    def fill(self, ctx):
        g = ctx.graph
        ng = self.graphs[ctx]
        m = self.repl[ctx]
        tainted = self.tainted[ctx] = set()
        for node in self.inf.infos[g].nodes:
            a = ctx.values.get(node, BOTTOM)
            if a is BOTTOM:
                a = None
            taint = self._node_effect(ctx, node, self.effectful) or any(
                self._is_tainted(ctx, i) for i in node.inputs)
            if taint and node.inputs[0].__class__ is Constant \
                    and node.inputs[0].value is P.kind_of:
                taint = False  # a question about types: no effect can change its answer
            if taint:
                tainted.add(node)
            elif a is not None:
                c = _constant_for(a)
                if c is not None:
                    c.loc = node.loc
                    m[node] = c
                    continue
            new = self.build(ctx, node, a)
            if isinstance(new, Node) and new.graph is ng and new.abstract is None:
                new.abstract = a
            m[node] = new
        ng.output = self.input(ctx, g.output)

    def _is_tainted(self, ctx, node):
        if isinstance(node, Constant) or node.graph is None:
            return False
        owner = ctx if node.graph is ctx.graph else ctx.ancestor(node.graph)
        return node in self.tainted.get(owner, ())

    def input(self, ctx, node):
        """The node standing for `node` (an input in `ctx`) in the specialized graphs."""
        if isinstance(node, Constant):
            v = node.value
            if isinstance(v, Graph):
                return self.graph_value(ctx, v, node.loc)
            c = Constant(v, node.loc)
            c.abstract = self.inf.const_cache.get(node)
            return c
        owner = ctx if node.graph is ctx.graph else ctx.ancestor(node.graph)
        new = self.repl[owner][node]
        if new.__class__ is Parameter:
            # a parameter whose value is known: its uses read the constant
            c = _constant_for(new.abstract)
            if c is not None:
                c.loc = node.loc
                return c
        return new

    def new_apply(self, ctx, inputs, node, a):
        new = Apply(self.graphs[ctx], inputs, node.loc, node.name)
        new.abstract = a
        new.primal = node.primal
        new.adjoint = node.adjoint
        return new

    def build(self, ctx, node, a):
        inputs = node.inputs
        records = ctx.calls.get(node)
        fn = inputs[0]
        # switch on a known condition: the chosen input
        if isinstance(fn, Constant) and fn.value is P.switch:
            cond = self.inf.value_of(ctx, inputs[1])
            if isinstance(cond, AScalar) and cond.known:
                return self.input(ctx, inputs[2] if cond.value else inputs[3])
        args = [self.input(ctx, i) for i in inputs[1:]]
        if not records:
            return self.new_apply(ctx, [self.input(ctx, fn)] + args, node, a)
        if len(records) == 1:
            opt, target = records[0]
            if isinstance(opt, PrimitiveFunction):
                if opt.prim is P.J:
                    return self.build_J(ctx, node, a, target, args)
                if opt.prim is P.T:
                    return tangent.build_T(self, ctx, node, a, target, args)
                if "compile_time" in opt.prim.rules:
                    # its arguments are constants (inference checked): an array it
                    # makes is a constant too (numbers and tuples were folded already)
                    c = Constant(opt.prim.impl(*[x.value for x in args]), node.loc)
                    c.abstract = a
                    return c
                if opt.prim is P.getitem or opt.prim is P.getitem_grad:
                    new = self.dynamic_index(ctx, node, opt.prim, args, a)
                    if new is not None:
                        return new
                if opt.prim in _CONTAINER_OPS:
                    new = self.container_op(ctx, node, opt.prim, args, a)
                    if new is not None:
                        return new
                return self.new_apply(ctx, [Constant(opt.prim, fn.loc)] + args, node, a)
            if isinstance(opt, TransformFunction) and isinstance(target, Context):
                g = target.graph
                for p in g.parameters[len(args):]:
                    args.append(Constant(g.defaults[p.name], node.loc))
                return self.new_apply(ctx, [self.graph_constant(target, fn.loc)] + args,
                                      node, a)
            if isinstance(opt, MacroFunction) and isinstance(target, TRecord):
                return tangent.build_jet(self, ctx, node, a, target)
            if isinstance(opt, MacroFunction) and isinstance(target, Context):
                if len(args) == 1:
                    args.append(Constant(0, node.loc))
                return self.new_apply(ctx, [self.graph_constant(target, fn.loc)] + args,
                                      node, a)
            if isinstance(opt, GraphFunction) and isinstance(target, Context) \
                    and direct_call(node, opt):
                g = target.graph
                for p in g.parameters[len(args):]:
                    args.append(Constant(g.defaults[p.name], node.loc))
                return self.new_apply(ctx, [self.graph_constant(target, fn.loc)] + args,
                                      node, a)
            if isinstance(opt, GraphFunction) and isinstance(target, Context):
                args = [_coerce(self.graphs[ctx], x, t, [s])
                        for x, t, s in zip(args, target.args, self._arg_abstracts(ctx, node))]
        new = self.new_apply(ctx, [self.input(ctx, fn)] + args, node, a)
        sources = [t.result for _, t in records if isinstance(t, Context)]
        if a is not None and len(records) > 1 and sources:
            return _coerce(self.graphs[ctx], new, a, sources)
        return new

    def dynamic_index(self, ctx, node, prim, args, a):
        """x[i:i + 4], x[idx] and their getitem_grad in terms of myia.prim.dynamic, and
        `...` as the slices it stands for (None: an index that needs none of these; see
        rules_dynamic)."""
        xa, ia = self._arg_abstracts(ctx, node)[:2]
        g = self.graphs[ctx]
        if isinstance(xa, AArray) and has_ellipsis(ia):  # x[..., 0]
            return expand_ellipsis(g, node.loc, prim, args, xa, ia, a)
        if prim is P.getitem:
            return expand_getitem(g, node.loc, args[0], xa, args[1], ia, a)
        return expand_getitem_grad(g, node.loc, args[0], xa, args[1], ia, args[2], a)

    def container_op(self, ctx, node, prim, args, a):
        """What a primitive on lists, tuples or dicts is, in terms every backend has
        (None: the primitive itself): a concatenation or a repetition is the tuple it
        makes, a dict's key its position."""
        types = self._arg_abstracts(ctx, node)
        if not isinstance(types[0], ATuple) and not (len(types) > 1 and prim is P.mul
                                                     and isinstance(types[1], ATuple)):
            return None
        g = self.graphs[ctx]
        loc = node.loc
        if prim is P.add or prim is P.mul:
            if not isinstance(a, ATuple):
                return None
            self.container_arith = True
            if prim is P.add:
                parts = [(args[0], types[0]), (args[1], types[1])]
            else:
                k = 0 if isinstance(types[0], ATuple) else 1
                parts = [(args[k], types[k])] * (len(a) // max(len(types[k]), 1))
            items = []
            for x, t in parts:
                for i, e in enumerate(t.elements):
                    item = g.apply(P.tuple_getitem, x, i, loc=loc)
                    item.abstract = e
                    items.append(item)
            return _with_kind(g, g.apply(P.make_tuple, *items, loc=loc), a, loc)
        if types[0].is_dict and prim in (P.getitem, P.getitem_grad) \
                and not isinstance(constant_value(types[1]), slice):
            pos = key_position(types[0], types[1])
            key = Constant(pos, node.inputs[2].loc)
            key.abstract = AScalar("int64", pos)
            if prim is P.getitem:
                return self.new_apply(ctx, [Constant(P.tuple_getitem, loc), args[0], key],
                                      node, a)
            # the sensitivity of d["k"]: zeros like d, with the key's value set
            zeros = g.apply(P.zeros_like, args[0], loc=loc)
            zeros.abstract = zeros_abstract(types[0])
            return self.new_apply(ctx, [Constant(P.tuple_setitem, loc), zeros, key, args[2]],
                                  node, a)
        return None

    def graph_constant(self, target, loc):
        """The constant of the specialized graph of the context `target`; its abstract
        names the function (the graph and the context of its parent)."""
        c = Constant(self.graphs[target], loc)
        c.abstract = AFunction([GraphFunction(target.graph, target.parent)])
        return c

    def _arg_abstracts(self, ctx, node):
        return [self.inf.value_of(ctx, i) for i in node.inputs[1:]]

    def build_J(self, ctx, node, a, record, args):
        (x,) = args
        xa = self.inf.value_of(ctx, node.inputs[1])
        if not isinstance(xa, (AFunction, ATuple)):
            return x  # J of data is the data
        if isinstance(xa, ATuple) and self._J_readable(xa, record):
            return self.J_of_value(ctx, node, x, xa, record)
        if isinstance(xa, AFunction) and len(xa.options) == 1:
            # (the record also holds the J of the functions a closure captured)
            (opt,) = xa.options
            kind, what = record.parts[opt]
            if kind == "graph":
                return self.graph_value_opt(GraphFunction(what, None), node.loc)
            if kind == "macro":
                c = Constant(what, node.loc)
                c.abstract = a
                return c
            if kind == "lift":
                visible = self.inf.visible(opt.context, ctx)
                # (data read along paths, see lift_closure's layout; or a record)
                if "paths" in what.graph.flags or not visible and opt in self.J_records:
                    return self.J_from_record(ctx, node, x, opt, record, a)
                outer = what.graph
                captured = []
                ignored = outer.flags.get("ignored", ())
                for i, p in enumerate(outer.parameters):
                    pa = self.inf.read_free(opt.context, p.primal)
                    if i in ignored and visible:  # (a function outer takes as a constant)
                        captured.append(self.input(ctx, p.primal))
                        continue
                    # what the closure captured: read from its frame where that is
                    # visible, else known statically (`grad(grad(f))`: f and argnums);
                    # J of a captured closure made elsewhere reads its record
                    c = self.static_J(pa, record, node.loc)
                    if c is None and visible and not _is_data(pa) \
                            and self._J_readable(pa, record):
                        c = self.J_of_value(ctx, node, self.input(ctx, p.primal), pa,
                                            record)
                    # (a captured tuple of data is its own J, like the data in it)
                    if c is None and (not visible or isinstance(pa, AFunction)
                                      or isinstance(pa, ATuple) and not _is_data(pa)):
                        captured = None
                        break
                    captured.append(c if c is not None else self.input(ctx, p.primal))
                if captured is not None:
                    return self.new_apply(
                        ctx, [self.graph_constant(what, node.loc)] + captured, node, a)
        if isinstance(xa, AFunction):
            targets = []
            for o in xa.sorted_options():
                t = self.static_J(AFunction([o]), record, node.loc)
                if t is None and o in self.J_records:
                    t = self.record_reader(o, record, node)
                targets.append(t)
            if all(t is not None for t in targets):
                # a function chosen at run time among functions that capture nothing or
                # closures made elsewhere: their J, or the readers of their records,
                # are the node's other inputs, so that the program holds them typed; a
                # backend picks the one of the function the value is
                return self.new_apply(ctx, [Constant(P.J, node.loc), x] + targets, node, a)
        # J of a closure whose captured values J cannot read (one that a run-time J
        # may meet, see _closures_J_reads_from_records): the VM computes it at run time
        return self.new_apply(ctx, [Constant(P.J, node.loc), x], node, a)

    def _J_readable(self, a, record):
        """True when J of a value of abstract `a` can be built from what specialization
        made: each function in it has a static J or is a closure whose values are
        records."""
        if isinstance(a, ATuple):
            return all(self._J_readable(e, record) for e in a.elements)
        if isinstance(a, AFunction):
            return all(o in self.J_records
                       or self.static_J(AFunction([o]), record, None) is not None
                       for o in a.options)
        return True

    def _apply(self, ctx, node, graph, inputs, abstract):
        """A new node in the graph of `ctx`, or in `graph` (a record reader)."""
        if graph is None:
            return self.new_apply(ctx, inputs, node, abstract)
        new = Apply(graph, inputs, node.loc, None)
        new.abstract = abstract
        return new

    def J_of_value(self, ctx, node, x, a, record, graph=None):
        """J of the value `x` of abstract `a`, whose closures are records: data is its
        own J, a function's J is read from its record, and a tuple's J is the tuple of
        its elements' J."""
        c = self.static_J(a, record, node.loc)
        if c is not None:
            return c
        if _is_data(a):
            return x
        if isinstance(a, AFunction):
            return self.J_of_records(ctx, node, x, a, record, graph)
        loc = node.loc
        items = []
        for i, e in enumerate(a.elements):
            item = self._apply(ctx, node, graph,
                               [Constant(P.tuple_getitem, loc), x, Constant(i, loc)], e)
            items.append(self.J_of_value(ctx, node, item, e, record, graph))
        return self._apply(ctx, node, graph, [Constant(P.make_tuple, loc)] + items,
                           self._J_abstract(a, record))

    def J_from_record(self, ctx, node, x, opt, record, a, graph=None):
        """J of the closure value `x` (option `opt`, a record: see the module doc): the
        lifted J called with what the closure captured, read from the record (see
        J_of_value: a captured closure is a record too, and gets J the same way).  The
        nodes go in the graph of `ctx`, or in `graph`."""
        loc = node.loc
        what = record.parts[opt][1]
        if "paths" in what.graph.flags:
            return self._apply(
                ctx, node, graph, [self.graph_constant(what, loc)]
                + [self.read_captured(ctx, node, x, opt, path, "grad", graph)
                   for path in what.graph.flags["paths"]], a)
        captured = []
        ignored = what.graph.flags.get("ignored", ())
        for i, p in enumerate(what.graph.parameters):
            pa = self.inf.read_free(opt.context, p.primal)
            c = None if i in ignored else self.static_J(pa, record, loc)
            if c is None:
                bound = self._apply(ctx, node, graph,
                                    [Constant(P.closure_bound, loc), x, Constant(i, loc)], pa)
                c = bound if i in ignored else self.J_of_value(ctx, node, bound, pa,
                                                               record, graph)
            captured.append(c)
        return self._apply(ctx, node, graph, [self.graph_constant(what, loc)] + captured, a)

    def J_of_records(self, ctx, node, x, a, record, graph=None):
        """J of the function value `x` of abstract `a`, whose closures are records:
        read from the record of the one closure, or, among several functions, picked
        at run time (J with the J or the record reader of each)."""
        if len(a.options) == 1:
            (o,) = a.options
            return self.J_from_record(ctx, node, x, o, record, record.parts[o][1].result,
                                      graph)
        loc = node.loc
        targets = [self.static_J(AFunction([o]), record, loc)
                   or self.record_reader(o, record, node) for o in a.sorted_options()]
        return self._apply(ctx, node, graph, [Constant(P.J, loc), x] + targets,
                           self._J_abstract(a, record))

    def _J_abstract(self, a, record):
        """The abstract of J of a value of abstract `a` (`record` holds the J of each
        function in it)."""
        if isinstance(a, ATuple):
            return ATuple([self._J_abstract(e, record) for e in a.elements])
        if not isinstance(a, AFunction):
            return a
        out = BOTTOM
        for o in a.sorted_options():
            kind, what = record.parts[o]
            out = join(out, what.result if kind == "lift"
                       else AFunction([GraphFunction(what, None)]))
        return out

    def along(self, opt, path):
        """(closure option, position, free variable, its abstract) for each step of
        `path` from closure `opt` (positions through the closures it captured, see
        myia.ad.lifting.captured_leaves)."""
        o = opt
        for i in path:
            v = lifted_copy(o.graph)[1][i]
            a = self.inf.read_free(o.context, v)
            yield o, i, v, a
            if a.__class__ is AFunction and len(a.options) == 1:
                (o,) = a.options

    def read_captured(self, ctx, node, x, opt, path, transform, graph=None):
        """What the closure value `x` (option `opt`) captured at `path` (positions
        through the closures it captured, see myia.ad.lifting.captured_leaves): read
        from the frame that made each closure on the way where `ctx` sees it, else from
        the closure's record.  (In `graph`, a record reader, no frame is visible.)"""
        loc = node.loc
        value = x
        for o, i, v, a in self.along(opt, path):
            if graph is None and self.inf.visible(o.context, ctx):
                value = self.input(ctx, v)
            elif o in self.J_records:
                value = self._apply(
                    ctx, node, graph, [Constant(P.closure_bound, loc), value,
                                       Constant(i, loc)], a)
            else:
                raise MyiaGradError(
                    f"{transform} of the closure {o.graph.name}, made where this "
                    f"{transform} cannot read what it captured (the program returns "
                    f"the closure, or a derivative taken at run time meets it)", loc,
                    hint="pass what it captures as arguments, or make the closure where "
                         f"the {transform} is taken")
        return value

    def _captured_abstracts(self, opt, outer):
        """The abstracts of what the lifted J `outer` of closure `opt` takes, and of the
        closures on the way for one that reads along paths."""
        if "paths" not in outer.flags:
            return [self.inf.read_free(opt.context, p.primal) for p in outer.parameters]
        return [a for path in outer.flags["paths"] for _, _, _, a in self.along(opt, path)]

    def record_reader(self, opt, record, node):
        """A graph `reader(f)` = J of the closure value f (option `opt`, a record): J of
        a value that may be one of several functions calls the reader of the one it is
        (flags["J_of_record"] names it; the closure's wrapper has flags["record_of"])."""
        reader = self.readers.get(opt)
        if reader is None:
            reader = self.readers[opt] = Graph(f"J:{opt.graph.name}", node.loc)
            reader.flags["J_of_record"] = opt
            f = reader.add_parameter("f")
            f.abstract = AFunction([opt])
            reader.output = self.J_from_record(None, node, f, opt, record,
                                               record.parts[opt][1].result, reader)
        c = Constant(reader, node.loc)
        c.abstract = AFunction([GraphFunction(reader, None)])
        return c

    def static_J(self, a, record, loc):
        """A constant for J of a value of abstract `a` known at compile time (a number,
        a function without free variables, whose J `record` holds), else None."""
        if isinstance(a, AFunction):
            part = record.parts.get(next(iter(a.options))) if len(a.options) == 1 else None
            if part is not None and part[0] == "graph":
                return self.graph_value_opt(GraphFunction(part[1], None), loc)
            return None
        c = _constant_for(a)
        if c is not None:
            c.loc = loc
        return c

    # ---- graphs used as values --------------------------------------------------------

    def graph_value(self, ctx, g, loc):
        parent = self.inf.infos[g].parent
        pctx = ctx.ancestor(parent) if parent is not None else None
        opt = GraphFunction(g, pctx)
        if opt in self.J_records:
            return self.closure_record(opt, loc)
        return self.graph_value_opt(opt, loc)

    def closure_record(self, opt, loc):
        """The value of closure `opt` as a record of the values J needs (see the module
        doc): make_closure(wrapper, v1..vm), one per closure, in the frame that makes
        it."""
        rec = self.records.get(opt)
        if rec is not None:
            return rec
        const = self.graph_value_opt(opt, loc)
        wrapper = Graph(const.value.name, const.value.loc)
        wrapper.flags["record_of"] = opt
        wc = Constant(wrapper, loc)
        wc.abstract = AFunction([GraphFunction(wrapper, None)])
        rec = Apply(self.graphs[opt.context], [Constant(P.make_closure, loc), wc], loc, None)
        rec.abstract = AFunction([opt])
        self.records[opt] = rec
        self.pending_records.append((rec, const, opt))
        return rec

    def _fill_record(self, rec, const, opt):
        """Bind the values of record `rec` and write its wrapper, once every graph is
        filled (the values may be computed after the closure's constant is used in its
        frame; an untyped copy gets its parameters last)."""
        outer = self.J_records[opt]
        values = [self.input(opt.context, p.primal) for p in outer.parameters]
        rec.inputs.extend(values)
        wrapper = rec.inputs[1].value
        for p, v in zip(outer.parameters, values):
            wrapper.add_parameter(p.name).abstract = v.abstract
        params = []
        for p in const.value.parameters:
            q = wrapper.add_parameter(p.name, p.loc)
            q.abstract = p.abstract
            params.append(q)
        wrapper.output = wrapper.apply(const, *params, loc=rec.loc)
        target = self.value_context(opt)
        if target is not None:
            wrapper.output.abstract = target.result
        else:
            wrapper.flags["untyped"] = True  # it calls an untyped copy (never called)

    def graph_value_opt(self, opt, loc):
        target = self.value_context(opt)
        if target is not None:
            return self.graph_constant(target, loc)
        return Constant(self.fallback(opt), loc)

    def value_context(self, opt):
        """The context whose copy stands for the closure value `opt`, or None (it
        was never called during inference)."""
        target = self.inf.shared.get(opt)
        if target is None or target not in self.live_set:
            sigs = self.inf.per_key.get((opt.graph, opt.context), {})
            live = [c for c in sigs.values() if c in self.live_set]
            target = min(live, key=lambda c: c.id) if live else None
        return target

    def fallback(self, opt):
        """An untyped copy of a closure that inference never saw called."""
        key = (opt.graph, opt.context)
        ng = self.fallbacks.get(key)
        if ng is None:
            ng = self.fallbacks[key] = _new_graph(opt.graph)
            ng.flags["untyped"] = True
            ng.flags["option"] = opt  # the function it stands for (see the LLVM backend)
            self.pending_fallbacks.append((opt, ng))
        return ng

    def _fill_fallback(self, opt, ng):
        g = opt.graph
        infos = self.inf.infos
        fvs = infos[g].free_variables  # (also makes infos know g's nested graphs)
        scope = infos.scope(g)
        repl = {g: ng}
        for h in scope[1:]:
            repl[h] = _new_graph(h)
            repl[h].flags["untyped"] = True
        for v in fvs:
            anc = opt.context.ancestor(v.graph)
            repl[v] = self.repl[anc][v]
        # closures of enclosing graphs used here (a loop header called from a branch):
        # their specialized (or untyped) copies in the enclosing contexts
        for h in scope:
            for inp in [h.output] + [i for n in infos.nodes(h) for i in n.inputs]:
                v = inp.value if inp.__class__ is Constant else None
                if v.__class__ is Graph and v not in repl and infos[v].parent is not None:
                    pctx = opt.context.ancestor(infos[v].parent)
                    repl[v] = self.graph_value_opt(GraphFunction(v, pctx), None).value
        _copy_graphs(scope, repl, infos)
        # keep environment keys pointing at the original nodes (see the module doc)
        created = {}
        for h in scope:
            for n in infos.nodes(h):
                created[repl[n]] = n
            for p in h.parameters:
                created[repl[p]] = p
        for new in created:
            if isinstance(new, Apply):
                for i, inp in enumerate(new.inputs):
                    if isinstance(inp, Constant) and isinstance(inp.value, EnvKey) \
                            and inp.value.node in created:
                        new.inputs[i] = Constant(EnvKey(created[inp.value.node]), inp.loc)


def _function_options(a):
    """The graph options of the functions a value of abstract `a` may hold."""
    if isinstance(a, ATuple):
        return set().union(*map(_function_options, a.elements))
    if isinstance(a, AFunction):
        return {o for o in a.options if isinstance(o, GraphFunction)}
    return set()


def _is_data(a):
    """True for the abstract of a value that holds no function (J of it is itself)."""
    if isinstance(a, ATuple):
        return all(_is_data(e) for e in a.elements)
    return isinstance(a, (AScalar, AArray, AConstant))


def _depth(ctx):
    d = 0
    c = ctx.parent
    while c is not None:
        d += 1
        c = c.parent
    return (d, ctx.id)


def _constant_for(a):
    """A Constant for a node whose abstract is a known value, or None."""
    if isinstance(a, AScalar):
        if not a.known:
            return None
        c = Constant(a.value)
    elif isinstance(a, (AConstant, ATuple)):
        v = constant_value(a)
        if v is NOT_CONSTANT:
            return None
        c = Constant(v)
    else:
        return None
    c.abstract = a
    return c


#: primitives whose meaning on containers `Specializer.container_op` resolves
_CONTAINER_OPS = frozenset({P.add, P.mul, P.getitem, P.getitem_grad})


def _with_kind(graph, node, a, loc):
    """`node` (a make_tuple, typed as a plain tuple of a's elements) as a container of
    a's kind."""
    node.abstract = ATuple(a.elements)
    if a.kind == "tuple":
        return node
    kind = Constant(a.kind, loc)
    kind.abstract = abstract_of(a.kind)
    out = graph.apply(P.tuple_as, node, kind, loc=loc)
    out.abstract = a
    return out


def _needs_coercion(target, src):
    if isinstance(target, AScalar):
        return type(src) is AScalar and (src.dtype != target.dtype or src.numpy != target.numpy)
    if isinstance(target, AArray):
        return type(src) is type(target) and src.dtype != target.dtype
    if isinstance(target, ATuple) and isinstance(src, ATuple) and len(src) == len(target):
        return any(_needs_coercion(t, s) for t, s in zip(target.elements, src.elements))
    return False


def _coerce(graph, node, target, sources):
    """`node` converted to `target`'s number types where a source differs."""
    if not any(_needs_coercion(target, s) for s in sources if s is not BOTTOM):
        return node
    if isinstance(target, AScalar):
        if target.numpy:  # (astype makes a NumPy scalar)
            out = graph.apply(P.astype, node, target.dtype, loc=node.loc)
        elif target.dtype == "float64":
            out = graph.apply(P.to_float, node, loc=node.loc)
        elif target.dtype == "int64":
            out = graph.apply(P.to_int, node, loc=node.loc)
        else:
            out = graph.apply(P.truth, node, loc=node.loc)
    elif isinstance(target, AArray):
        out = graph.apply(P.astype, node, target.dtype, loc=node.loc)
    else:
        items = []
        for i, t in enumerate(target.elements):
            item = graph.apply(P.tuple_getitem, node, i, loc=node.loc)
            item.abstract = t
            subs = [s.elements[i] for s in sources if isinstance(s, ATuple)]
            items.append(_coerce(graph, item, t, subs))
        # (a list or a dict stays one)
        out = _with_kind(graph, graph.apply(P.make_tuple, *items, loc=node.loc), target, node.loc)
    out.abstract = target
    return out


__all__ = ["Specializer", "specialize"]
