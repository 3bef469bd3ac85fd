"""Batching: the transform behind `myia.vmap`.

`batch_graph(g, batched, B)` takes the *typed, optimized* program `g` of a function for
one example (every node knows its abstract: dtype and shape) and returns the program
that computes it for B examples at once.  Each value of the new program is either
unbatched (the same for every example: a weight matrix, a loop counter, a constant)
or batched (stacked on a leading axis of size B); its *spec* says which
(myia.ad.batching_rules, with what a primitive's batching rule works with).

What each node becomes (JAX's `vmap` does the same on its jaxprs):

    a primitive whose inputs are all unbatched   itself: computed once, not B times
    a primitive with a batched input             its batching rule (`@batch(p)`)
    a call of a known graph                      a call of that graph batched for the
                                                 specs of the arguments (one program
                                                 per graph and specs)
    switch on an unbatched condition             a switch of the batched branches
    switch on a batched condition                both branches, then `where` per value
                                                 (functions chosen per example are
                                                 called both, where they are called)
    both branches go on to the same function     its arguments selected per example,
      (the code after an `if`)                   and one call of it
    a recursion whose base case is batched       it goes on while any example needs
      (a `while`, or a recursive def)            it: an example that is done passes on
                                                 the arguments it had (a mask) and
                                                 takes the other branch's result; a
                                                 loop stays a loop
    a function value that is not just called     its program with every input and
                                                 output batched

A mutual recursion whose base case is batched is refused, at the line of the inner
condition: the masks of two recursions would have to hold for each other's calls.
"""

import numpy as np

from ..abstract import AArray, AConstant, AEnv, AFunction, AScalar, ATuple, join
from ..ir import Apply, Constant, Graph, Parameter, manage
from ..prim import Primitive
from ..prim import ops as P
from ..errors import MyiaBatchingError
from .batching_rules import (ENV, FN, BValue, Builder, abstract_of_node, full_spec, is_batched,
                             join_specs, rule_of)

#: primitives the transform batches itself (containers, choices, sensitivities):
#: they need no rule of their own
STRUCTURAL = {P.switch, P.make_tuple, P.tuple_getitem, P.tuple_cons, P.tuple_tail,
              P.tuple_setitem, P.tuple_as, P.structure_like, P.zeros_like, P.ones_like,
              P.env_new, P.env_setitem, P.env_getitem, P.env_add, P.gadd,
              P.differentiable, P.stop_gradient}


# ---- the transform -----------------------------------------------------------------


class _Instance:
    """One graph batched for the specs of its parameters, inside the instance of the
    graph it is nested in (whose values it reads as free variables).  `loop_tail`:
    (header instance, keep) where it is the recursive branch of a recursion whose
    condition is batched (see call_both); `args_of`: a call in it whose arguments it
    returns instead of its output (see call_joined)."""

    def __init__(self, graph, specs, parent, forced):
        self.graph = graph
        self.specs = specs
        self.parent = parent
        self.forced = forced  # the output's spec, where a caller needs one
        self.values = {}  # node of graph -> BValue
        self.new = Graph(f"{graph.name}", graph.loc)
        self.new.flags = {"kind": "batched"}
        self.out_spec = None
        self.recursive = False
        self.loop_tail = None
        self.args_of = None  # (output: the arguments of this call in it, see call_both)


class _Batcher:
    def __init__(self, root, B):
        self.mng = manage(root)
        self.B = B
        self.instances = {}
        #: the masks of the recursions under a batched condition whose recursive
        #: branch is being built, innermost last: (header instance, keep); every call
        #: of a header made meanwhile (in the branch, or a function it calls) is masked
        self.masks = []
        self.program_graphs = _program_graphs(self.mng)
        self.made = {}  # graph -> how many instances of it were made

    # -- instances ---------------------------------------------------------------------

    def instance(self, graph, specs, parent, forced=None, loop_tail=None, args_of=None,
                 preset=None):
        if not self.mng.free_variables(graph):
            parent = None
        else:
            parent = self._lexical(graph, parent)
        # (a header masked by its caller: its own recursion masks itself; the masks of
        # the recursions it runs inside still hold for what it calls)
        masks = [m for m in self.masks if m[0].graph is not graph]
        key = (graph, specs, parent, forced, args_of, tuple(id(k.node) for _, k in masks))
        inst = self.instances.get(key)
        if inst is not None and loop_tail is None and preset is None:
            if inst.out_spec is None:  # called from inside itself: a recursion
                inst.recursive = True
            return inst
        made = self.made[graph] = self.made.get(graph, 0) + 1
        if made > MAX_INSTANCES:
            raise _runaway(graph)
        inst = _Instance(graph, specs, parent, forced)
        inst.loop_tail = loop_tail
        inst.args_of = args_of
        if preset:
            inst.values.update(preset)
        elif loop_tail is None:
            self.instances[key] = inst
        saved, self.masks = self.masks, masks + ([loop_tail] if loop_tail else [])
        try:
            self._build(inst)
        finally:
            self.masks = saved
        return inst

    def _lexical(self, graph, inst):
        """The instance, among `inst` and its parents, of the graph `graph` is nested
        in."""
        parent = self.mng.parent(graph)
        while inst is not None and inst.graph is not parent:
            inst = inst.parent
        if inst is None:
            raise AssertionError(f"vmap: no instance of the graph {graph.name} is nested in")
        return inst

    def _build(self, inst):
        g = inst.graph
        for p, spec in zip(g.parameters, inst.specs):
            np_ = inst.new.add_parameter(p.name, p.loc)
            inst.values[p] = BValue(np_, spec, abstract_of_node(p))
        if inst.args_of is not None:
            inputs = inst.args_of.inputs[1:]
            args = [self.get(inst, a) for a in inputs]
            node = inst.new.apply(P.make_tuple, *[self.value_node(inst, v) for v in args])
            out = BValue(node, tuple(v.batched for v in args),
                         ATuple([abstract_of_node(a) for a in inputs]))
        else:
            out = self.convert(inst, g.output)
        # (a recursion's calls of itself took output_spec's answer before it was built)
        spec = self.output_spec(inst) if inst.recursive else out.batched
        if inst.forced is not None:
            spec = inst.forced
        node = self.as_spec(inst, out, spec)
        inst.new.output = node
        inst.out_spec = spec

    def masked(self, inst, graph, vals, node):
        """The arguments of a call of `graph` where it is a recursion under a batched
        condition (made by call_both): an example whose condition says stop passes the
        arguments its own call had, so that it stays stopped."""
        for header, keep in reversed(self.masks):
            if header.graph is graph:
                out = []
                for p, v in zip(graph.parameters, vals):
                    old = header.values[p]
                    if v.node is not old.node:
                        v = self.select(inst, keep, v, old, abstract_of_node(p), node.loc)
                    out.append(v)
                return out
        return vals

    def output_spec(self, inst):
        """The spec of what `inst` returns; of one still being built (a call of a
        recursion from inside itself), every output batched, or the spec its caller
        forced on it."""
        if inst.out_spec is None:
            return inst.forced or full_spec(abstract_of_node(inst.graph.output))
        return inst.out_spec

    # -- values --------------------------------------------------------------------

    def lookup(self, inst, node):
        i = inst
        while i is not None:
            if node.graph is i.graph:
                v = i.values.get(node)
                if v is None:
                    v = self.convert(i, node)
                return v
            i = i.parent
        raise AssertionError(f"vmap: {node} is not in the scope of {inst.graph.name}")

    def convert(self, inst, root):
        """The BValue of `root` (a node of inst.graph) in the batched program; the
        nodes it depends on first, without recursion in Python."""
        stack = [root]
        while stack:
            node = stack[-1]
            if node in inst.values:
                stack.pop()
                continue
            if node.__class__ is Constant:
                inst.values[node] = self.constant(inst, node)
                stack.pop()
                continue
            if node.__class__ is Parameter or node.graph is not inst.graph:
                inst.values[node] = self.lookup(inst.parent, node)
                stack.pop()
                continue
            # (this graph's own nodes; constants and free variables are looked up)
            missing = [i for i in node.inputs if i.__class__ is not Constant
                       and i.graph is inst.graph and i not in inst.values]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            inst.values[node] = self.apply_node(inst, node)
        return inst.values[root]

    def constant(self, inst, node):
        v = node.value
        if isinstance(v, Graph):
            # a function value: its program with every input and output batched
            return BValue(_Deferred(v, inst), FN, abstract_of_node(node))
        return BValue(node, False, abstract_of_node(node))

    def get(self, inst, node):
        if node.__class__ is Constant:
            return self.constant(inst, node)
        return self.lookup(inst, node)

    def value_node(self, inst, v):
        """The node of `v` as a value (a function value: its fully batched program)."""
        node = v.node
        if node.__class__ is _Deferred:
            return self.materialize(inst, node)
        return node

    def materialize(self, inst, d):
        if d.choice is not None:
            cond, a, b = d.choice
            if cond.batched:
                return self.lane_select(inst, d)
            return inst.new.apply(P.switch, cond.node, self.value_node(inst, a),
                                  self.value_node(inst, b))
        g = d.graph
        if abstract_of_node(g.output) is None:
            # inference typed none of its body: nobody calls it (the backpropagator of
            # a bool); a function of as many parameters stands for it
            stub = Graph(g.name, g.loc)
            for p in g.parameters:
                stub.add_parameter(p.name, p.loc)
            stub.output = Constant(None)
            return Constant(stub)
        specs = tuple(full_spec(abstract_of_node(p)) for p in g.parameters)
        forced = full_spec(abstract_of_node(g.output))
        return Constant(self.instance(g, specs, d.inst, forced).new)

    def lane_select(self, inst, d):
        """The function value "x where cond, else y" for a batched cond: a function
        that calls both (with batched arguments) and selects per example."""
        cond, x, y = d.choice
        params, out = _signature_of_function(d.abstract, self.program_graphs)
        if out is None:
            # inference typed none of their bodies: nobody calls it (the
            # backpropagator of a bool), whichever it is
            return self.value_node(inst, x)
        g = Graph("select")
        g.flags = {"kind": "batched"}
        args = [g.add_parameter(f"x{i}") for i in range(len(params))]
        rx = BValue(g.apply(self.value_node(inst, x), *args), full_spec(out), out)
        ry = BValue(g.apply(self.value_node(inst, y), *args), full_spec(out), out)
        g.output = self.value_node(inst, self.select(inst, cond, rx, ry, out, d.loc, g))
        return Constant(g)

    def as_spec(self, inst, v, spec):
        """The node of `v` converted to `spec` (unbatched leaves broadcast)."""
        a = v.abstract
        if v.node.__class__ is _Deferred:
            return self.materialize(inst, v.node)
        if spec == v.batched or spec in (FN, ENV):
            return v.node
        if a.__class__ is ATuple:
            b = Builder(inst.new, self.B, a, None)
            parts = []
            for i, (e, s) in enumerate(zip(a.elements, spec)):
                vs = v.batched[i] if v.batched.__class__ is tuple else v.batched
                part = b.apply(P.tuple_getitem, v.node, i)
                parts.append(self.as_spec(inst, BValue(part, vs, e), s))
            return b.apply(P.make_tuple, *parts)
        if spec and not v.batched and a.__class__ is not AConstant:
            return Builder(inst.new, self.B, a, None).batched(v)
        return v.node

    # -- applications ----------------------------------------------------------------

    def apply_node(self, inst, node):
        fn, *args = node.inputs
        out = abstract_of_node(node)
        if fn.__class__ is Constant and isinstance(fn.value, Primitive):
            return self.apply_primitive(inst, node, fn.value, args, out)
        f = self.get(inst, fn)
        vals = [self.get(inst, a) for a in args]
        return self.call(inst, node, f, vals, out)

    def call(self, inst, node, f, vals, out):
        """The call `f(*vals)` at `node`: a known graph batched for the specs of the
        arguments; a choice between two functions by a condition (both called and
        their results selected where it is batched); else a function value made
        elsewhere, whose program takes and returns batched values."""
        d = f.node
        if d.__class__ is not _Deferred:
            nodes = [self.as_spec(inst, v, full_spec(v.abstract)) for v in vals]
            return BValue(inst.new.apply(d, *nodes, loc=node.loc), full_spec(out), out)
        specs = tuple(v.batched for v in vals)
        nodes = [self.value_node(inst, v) for v in vals]
        if d.choice is None:
            vals = self.masked(inst, d.graph, vals, node)
            specs = tuple(v.batched for v in vals)
            nodes = [self.value_node(inst, v) for v in vals]
            callee = self.instance(d.graph, specs, d.inst)
            return BValue(inst.new.apply(Constant(callee.new), *nodes, loc=node.loc),
                          self.output_spec(callee), out)
        cond, x, y = d.choice
        if _plain(x.node) and _plain(y.node):
            a, b = x.node, y.node
            if cond.batched:
                return self.call_both(inst, node, cond, a, b, specs, nodes, out)
            ia = self.instance(a.graph, specs, a.inst)
            ib = self.instance(b.graph, specs, b.inst)
            spec = join_specs(self.output_spec(ia), self.output_spec(ib))
            if self.output_spec(ia) != spec:
                ia = self.instance(a.graph, specs, a.inst, spec)
            if self.output_spec(ib) != spec:
                ib = self.instance(b.graph, specs, b.inst, spec)
            sw = inst.new.apply(P.switch, cond.node, Constant(ia.new), Constant(ib.new),
                                loc=node.loc)
            return BValue(inst.new.apply(sw, *nodes, loc=node.loc), spec, out)
        if cond.batched:
            rx = self.call(inst, node, x, vals, out)
            ry = self.call(inst, node, y, vals, out)
            return self.select(inst, cond, rx, ry, out, node.loc)
        f = BValue(self.value_node(inst, f), FN, f.abstract)
        return self.call(inst, node, f, vals, out)

    def call_both(self, inst, node, cond, a, b, specs, nodes, out):
        """`switch(c, A, B)(...)` with c batched: both branches, then `where`; where one
        branch loops back (a `while` whose condition is batched), the loop goes on while
        any example is in it."""
        joined = self._join_point(a.graph, b.graph, inst.graph)
        if joined is not None and not nodes:
            return self.call_joined(inst, node, cond, a, b, joined, out)
        looping = [self._loops_back(d.graph, inst.graph) for d in (a, b)]
        direct = [self._tail_target(d.graph) is inst.graph for d in (a, b)]
        if all(looping) and direct[0] != direct[1]:
            # an inner loop: one branch goes round it, the other leaves it for the loop
            # around it, which comes back to it at its next iteration
            looping = direct
        if not any(looping):
            ia = self.instance(a.graph, specs, a.inst)
            ib = self.instance(b.graph, specs, b.inst)
            ra = BValue(inst.new.apply(Constant(ia.new), *nodes, loc=node.loc),
                        self.output_spec(ia), out)
            rb = BValue(inst.new.apply(Constant(ib.new), *nodes, loc=node.loc),
                        self.output_spec(ib), out)
            return self.select(inst, cond, ra, rb, out, node.loc)
        if all(looping):
            raise self._depth_error(
                cond, "both branches lead back to it (the first test of an inner loop "
                      "inside a loop kept at run time, or a recursion with two recursive "
                      "branches)")
        body, exit_ = (a, b) if looping[0] else (b, a)
        through = self._other_recursion(body.graph, inst.graph)
        if nodes or through is not None:
            raise self._depth_error(cond, "it recurses through another function" + (
                f" ({through.name})" if through is not None else ""))
        # a recursion whose base case is batched: it goes on while any example is
        # still in it; an example that is done passes on the arguments it had, and
        # takes the other branch's result
        keep = cond if looping[0] else self._negated(inst, cond)
        loc = node.loc
        b_ = Builder(inst.new, self.B, out, loc)
        as_int = b_.apply(P.astype, keep.node, "int64")
        any_ = b_.apply(P.gt, b_.apply(P.reduce_max, as_int, None, False), 0)
        ib = self.instance(body.graph, (), body.inst, None, loop_tail=(inst, keep))
        ie = self.instance(exit_.graph, (), exit_.inst)
        if self._tail_target(body.graph) is inst.graph:
            # a loop: an example that is done keeps its state until all are
            spec = join_specs(self.output_spec(ib), self.output_spec(ie))
            if self.output_spec(ie) != spec:
                ie = self.instance(exit_.graph, (), exit_.inst, spec)
            if self.output_spec(ib) != spec:
                raise AssertionError("vmap: a loop's body and exit disagree on what is batched")
            sw = inst.new.apply(P.switch, any_, Constant(ib.new), Constant(ie.new), loc=loc)
            return BValue(inst.new.apply(sw, loc=loc), spec, out)
        each = Graph(f"{inst.graph.name}:each")
        each.flags = {"kind": "batched"}
        rb = BValue(each.apply(Constant(ib.new), loc=loc), self.output_spec(ib), out)
        re = BValue(each.apply(Constant(ie.new), loc=loc), self.output_spec(ie), out)
        r = self.select(inst, keep, rb, re, out, loc, each)
        each.output = self.value_node(inst, r)
        spec = r.batched
        if self.output_spec(ie) != spec:
            ie = self.instance(exit_.graph, (), exit_.inst, spec)
        sw = inst.new.apply(P.switch, any_, Constant(each), Constant(ie.new), loc=loc)
        return BValue(inst.new.apply(sw, loc=loc), spec, out)

    def _negated(self, inst, cond):
        return BValue(inst.new.apply(P.not_, cond.node), True, cond.abstract)

    def _depth_error(self, cond, why):
        loc = getattr(cond.node, "loc", None)
        return MyiaBatchingError(
            "vmap of a recursion whose base case depends on the batched argument, where "
            f"{why}: vmap runs a recursion until every example is done only where one "
            "branch calls the function itself", loc,
            hint="write it as one function that calls itself, or as a loop (while/for)")

    def _reachable(self, graph, target):
        """The graphs `graph` reaches (calls, makes, or nests), not through `target`."""
        seen, todo = set(), [graph]
        while todo:
            g = todo.pop()
            if g in seen:
                continue
            seen.add(g)
            if g is not target:
                todo.extend(self.mng.graphs_used(g))
                todo.extend(self.mng.children(g))
        return seen

    def _loops_back(self, graph, target):
        """Whether the branch `graph` recurses into `target`, the graph whose condition
        is batched."""
        return target in self._reachable(graph, target)

    def _join_point(self, a, b, target):
        """(call in a, call in b) where both branches go on to the same function K, the
        code after an `if`: by calling it last, or, where they recurse into `target`
        (the `if` of a loop's body, in a derivative that builds the backpropagators
        of the iterations), by their one call of a graph that does.  Else None."""
        ta, tb = self._tail_target(a), self._tail_target(b)
        if ta is not None and ta is tb and len(a.output.inputs) == len(b.output.inputs):
            return a.output, b.output
        ca, cb = self._continuation(a, target), self._continuation(b, target)
        if ca is None or cb is None or ca.inputs[0].value is not cb.inputs[0].value \
                or len(ca.inputs) != len(cb.inputs):
            return None
        return ca, cb

    def _continuation(self, graph, target):
        """The one call, in the branch `graph`, of a graph that recurses into `target`,
        where nothing else the branch makes does; else None."""
        calls = [n for n in self.mng.nodes(graph) if n.__class__ is Apply
                 and n.inputs[0].__class__ is Constant and isinstance(n.inputs[0].value, Graph)
                 and self._loops_back(n.inputs[0].value, target)]
        if len(calls) != 1 or any(self._loops_back(c, target)
                                  for c in self.mng.scope(graph) if c is not graph):
            return None
        return calls[0]

    def call_joined(self, inst, node, cond, a, b, calls, out):
        """switch(cond, A, B)() with cond batched, where A and B both call K (their
        join point): K's arguments are selected per example and K is called once; what
        each branch makes with its result is computed on both sides and selected."""
        ca, cb = calls
        loc = node.loc
        sig = ATuple([abstract_of_node(i) for i in ca.inputs[1:]])
        ia = self.instance(a.graph, (), a.inst, args_of=ca)
        ib = self.instance(b.graph, (), b.inst, args_of=cb)
        ra = BValue(inst.new.apply(Constant(ia.new), loc=loc), ia.out_spec, sig)
        rb = BValue(inst.new.apply(Constant(ib.new), loc=loc), ib.out_spec, sig)
        both = self.select(inst, cond, ra, rb, sig, loc)
        args = [BValue(inst.new.apply(P.tuple_getitem, both.node, i, loc=loc),
                       both.batched[i] if both.batched.__class__ is tuple else both.batched, e)
                for i, e in enumerate(sig.elements)]
        k = BValue(_Deferred(ca.inputs[0].value, a.inst), FN, None)
        r = self.call(inst, ca, k, args, abstract_of_node(ca))
        if ca is a.graph.output:
            return r
        sa = self.instance(a.graph, (), a.inst, preset={ca: r})
        sb = self.instance(b.graph, (), b.inst, preset={cb: r})
        xa = BValue(inst.new.apply(Constant(sa.new), loc=loc), sa.out_spec, out)
        xb = BValue(inst.new.apply(Constant(sb.new), loc=loc), sb.out_spec, out)
        return self.select(inst, cond, xa, xb, out, loc)

    def _other_recursion(self, body, target):
        """A graph the branch `body` reaches, before it comes back to `target`, whose
        own recursion is being batched (a mutual recursion), or None."""
        busy = {h.graph for h, _ in self.masks}
        for u in self._reachable(body, target):
            if u in busy and u is not target:
                return u
        return None

    def _tail_target(self, graph):
        """The graph `graph` ends by calling (its output is a direct call of a
        graph), or None."""
        out = graph.output
        if out.__class__ is Apply and out.inputs[0].__class__ is Constant \
                and isinstance(out.inputs[0].value, Graph):
            return out.inputs[0].value
        return None

    def select(self, inst, cond, x, y, out, loc, graph=None):
        """x where the batched `cond`, else y, per example (made in `graph`, by default
        the instance's); functions are chosen where they are called."""
        graph = graph or inst.new
        b = Builder(graph, self.B, out, loc)
        if out.__class__ is ATuple:
            parts = []
            for i, e in enumerate(out.elements):
                xs = x.batched[i] if x.batched.__class__ is tuple else x.batched
                ys = y.batched[i] if y.batched.__class__ is tuple else y.batched
                xi = BValue(b.apply(P.tuple_getitem, x.node, i), xs, e)
                yi = BValue(b.apply(P.tuple_getitem, y.node, i), ys, e)
                parts.append(self.select(inst, cond, xi, yi, e, loc, graph))
            return BValue(b.apply(P.make_tuple, *[self.value_node(inst, p) for p in parts]),
                          tuple(p.batched for p in parts), out)
        if out.__class__ is AFunction:  # (chosen where it is called)
            return BValue(_Deferred(None, inst, (cond, x, y), loc, out), FN, out)
        if out.__class__ is AEnv:
            return self.select_env(inst, cond, x, y, out, loc, graph)
        if out.__class__ is AConstant:  # (None: the same on both sides)
            return x
        rank = out.ndim if out.__class__ is AArray else 0
        node = b.apply(P.where, b.aligned(cond, rank), x.node if not x.batched else b.aligned(x, rank),
                       y.node if not y.batched else b.aligned(y, rank))
        return BValue(node, True, out)

    def select_env(self, inst, cond, x, y, out, loc, graph):
        """Environments (sensitivities of what closures captured) selected entry by
        entry: their keys are known when compiling."""
        if not out.known:
            raise MyiaBatchingError(
                "vmap: a derivative environment of unknown contents chosen per example "
                "(the gradient of a loop of closures nested too deep)", loc)
        b = Builder(graph, self.B, out, loc)
        env = b.apply(P.env_new)
        for key, a in out.entries.items():
            zero = self.zeros(b, a, loc)
            vx = BValue(b.apply(P.env_getitem, x.node, key, zero), full_spec(a), a)
            vy = BValue(b.apply(P.env_getitem, y.node, key, zero), full_spec(a), a)
            env = b.apply(P.env_setitem, env, key, self.select(inst, cond, vx, vy, a, loc,
                                                               graph).node)
        return BValue(env, ENV, out)

    def zeros(self, b, a, loc):
        """A node of batched zeros of abstract `a` (numbers, arrays, environments,
        tuples of them), made with the Builder b."""
        if a.__class__ is ATuple:
            return b.apply(P.make_tuple, *[self.zeros(b, e, loc) for e in a.elements])
        if a.__class__ is AConstant:
            return Constant(a.value)
        if a.__class__ is AEnv:  # (an environment's zero is the empty one)
            return b.apply(P.env_new)
        if a.__class__ in (AScalar, AArray):
            return Constant(np.zeros((self.B,) + tuple(getattr(a, "shape", ())), a.dtype))
        raise MyiaBatchingError(f"vmap: a derivative environment holding {a}, chosen per "
                                "example", loc)

    def apply_primitive(self, inst, node, prim, args, out):
        loc = node.loc
        b = Builder(inst.new, self.B, out, loc)
        if prim is P.switch:
            c, x, y = (self.get(inst, a) for a in args)
            if x.batched is FN:  # (a function: which one is known where it is called)
                return BValue(_Deferred(None, inst, (c, x, y), loc, out), FN, out)
            if c.batched:
                return self.select(inst, c, x, y, out, loc)
            spec = join_specs(x.batched, y.batched)
            return BValue(b.apply(P.switch, c, self.as_spec(inst, x, spec),
                                  self.as_spec(inst, y, spec)), spec, out)
        vals = [self.get(inst, a) for a in args]
        if prim is P.make_tuple:
            nodes = [self.value_node(inst, v) for v in vals]
            return BValue(b.apply(P.make_tuple, *nodes), tuple(v.batched for v in vals), out)
        if prim is P.tuple_getitem:
            t, i = vals
            spec = t.batched[i.value] if t.batched.__class__ is tuple else t.batched
            if spec is FN and t.node.__class__ is _Deferred:
                raise AssertionError("vmap: tuple_getitem of a function")
            return BValue(b.apply(P.tuple_getitem, self.value_node(inst, t), i), spec, out)
        if prim is P.tuple_cons:
            h, t = vals
            return BValue(b.apply(prim, self.value_node(inst, h), t),
                          (h.batched,) + _entries(t), out)
        if prim is P.tuple_tail:
            return BValue(b.apply(prim, vals[0]), _entries(vals[0])[1:], out)
        if prim is P.tuple_setitem:
            t, i, v = vals
            spec = list(_entries(t))
            spec[i.value] = v.batched
            return BValue(b.apply(prim, t, i, self.value_node(inst, v)), tuple(spec), out)
        if prim in (P.tuple_as, P.structure_like):
            return BValue(b.apply(prim, *[self.value_node(inst, v) for v in vals]),
                          vals[0].batched, out)
        if prim in (P.zeros_like, P.ones_like):
            return BValue(b.apply(prim, self.value_node(inst, vals[0])), vals[0].batched, out)
        if prim in (P.env_new,):
            return BValue(b.apply(prim), ENV, out)
        if prim is P.env_setitem:
            env, key, v = vals
            return BValue(b.apply(prim, env, key, self.as_spec(inst, v, full_spec(v.abstract))),
                          ENV, out)
        if prim is P.env_getitem:
            env, key, default = vals
            if env.batched is not ENV and not is_batched(default.batched):
                return BValue(b.apply(prim, env, key, default), default.batched, out)
            spec = full_spec(out)
            return BValue(b.apply(prim, env, key, self.as_spec(inst, default, spec)), spec, out)
        if prim is P.env_add:
            return BValue(b.apply(prim, *vals), ENV, out)
        if prim is P.gadd:
            spec = join_specs(vals[0].batched, vals[1].batched)
            if not is_batched(spec):
                return BValue(b.apply(prim, *vals), spec, out)
            x, y = (self.as_spec(inst, v, spec) for v in vals)
            return BValue(b.apply(prim, x, y), spec, out)
        nodes = [self.value_node(inst, v) for v in vals]
        if not any(is_batched(v.batched) for v in vals):
            return BValue(b.apply(prim, *nodes), full_spec(out, False), out)
        if prim in (P.differentiable, P.stop_gradient):
            return BValue(b.apply(prim, *nodes), vals[0].batched, out)
        rule = rule_of(prim)
        if rule is None:
            raise MyiaBatchingError(
                f"vmap has no batching rule for the primitive {prim.name!r} (here applied "
                f"to a batched value)", loc,
                hint="compute this part outside vmap, or define @batch("
                     f"{prim.name}) next to the primitive in myia/prim/")
        result = rule(b, *vals)
        if result.__class__ is tuple:  # (node, spec): an output shared by every example
            return BValue(result[0], result[1], out)
        return BValue(result, full_spec(out), out)


class _Deferred:
    """A function value whose program depends on how it is called: `graph` (made in
    the instance `inst`), or `choice` = (cond, x, y): x where cond, else y (BValues of
    functions), which a call with a batched cond makes a call of both."""

    def __init__(self, graph, inst, choice=None, loc=None, abstract=None):
        self.graph = graph
        self.inst = inst
        self.choice = choice
        self.loc = loc
        self.abstract = abstract


def _program_graphs(mng):
    """{graph an abstract names: the graph of the program it is}: the abstracts of an
    optimized program name the graphs inference typed, of which the program holds
    copies (found through the constants that make them)."""
    found = {}
    for g in mng.graphs:
        consts = [i for n in mng.nodes(g) if n.__class__ is Apply for i in n.inputs
                  if i.__class__ is Constant and isinstance(i.value, Graph)]
        if g.output.__class__ is Constant and isinstance(g.output.value, Graph):
            consts.append(g.output)
        for c in consts:
            for opt in getattr(getattr(c, "abstract", None), "options", ()):
                if getattr(opt, "graph", None) is not None:
                    found.setdefault(opt.graph, c.value)
    return found


def _signature_of_function(a, program_graphs):
    """(parameter abstracts, output abstract) of a function value of abstract `a`: its
    options' in the program (outputs joined: environments of different keys); the
    output is None when inference typed none of their bodies (nobody calls them)."""
    params, out = None, None
    for opt in getattr(a, "options", ()):
        g = program_graphs.get(getattr(opt, "graph", None))
        o = None if g is None else abstract_of_node(g.output)  # (None: never typed)
        if o is not None:
            params = [abstract_of_node(p) for p in g.parameters]
            out = o if out is None else join(out, o)
    return params, out


def _entries(t):
    """The specs of the entries of the tuple BValue `t`."""
    if t.batched.__class__ is tuple:
        return t.batched
    return tuple(full_spec(e, t.batched) for e in t.abstract.elements)


def _plain(d):
    return d.__class__ is _Deferred and d.graph is not None


#: instances of one graph past which the batching of a program has run away (a graph
#: is batched once per specs of its arguments and masks of the recursions around it:
#: a few)
MAX_INSTANCES = 64


def _runaway(graph):
    return MyiaBatchingError(
        "vmap cannot batch this program yet: its loops or recursions, kept at run time, "
        "call one another under conditions that depend on the batched argument in a way "
        "vmap does not follow (the batching of the function made here does not end)",
        graph.loc, hint="make the loops' counts shared by every example (in_axes None), "
                        "or unroll the outer loop (for over a constant range)")


def batch_graph(graph, batched, B):
    """The program of the typed, optimized `graph` for B examples at once: argument i
    batched on axis 0 where `batched[i]` (else shared by every example), every output
    batched on axis 0."""
    t = _Batcher(graph, B)
    specs = tuple(full_spec(abstract_of_node(p), flag) for p, flag in zip(graph.parameters, batched))
    try:
        root = t.instance(graph, specs, None, full_spec(abstract_of_node(graph.output)))
    except RecursionError:  # (instances nested past Python's stack: the same runaway)
        raise _runaway(max(t.made, key=t.made.get)) from None
    new = root.new
    new.name = f"vmap_{graph.name}"
    return new


class VmapMacro:
    """`vmap(fn, in_axes=0, out_axes=0)` as a value inside subset code: for fn a def
    that captures nothing (or a transform of one), the same function as `myia.vmap`
    from Python; for a def or lambda written at the call that captures v1..vm, vmap
    of its lifted program with v1..vm shared (inference makes both:
    myia.infer.infer.expand_vmap)."""

    param_names = ("fn", "in_axes", "out_axes")
    defaults = {"in_axes": 0, "out_axes": 0}
    ir_name = "vmap"
    writes_jvp = True  # (J of a program that calls it waits for its typed program)
    static_transform = None  # (fn, in_axes, out_axes) -> its VmapFunction (myia.in_subset)

    def __myia_J__(self):
        # (J of a program before inference resolved the macro)
        raise MyiaBatchingError(
            "vjp, and jacrev or hessian other than of float arrays, of a program that calls "
            "vmap inside are not supported yet (grad, jvp, jacfwd, grad of grad, and "
            "jacrev and hessian of float arrays are)",
            hint="make the vmap outside the program, `vf = myia.vmap(f)` at module "
                 "level (or in a cell), and call vf in the program: then every "
                 "derivative works")

    def __repr__(self):
        return "<vmap macro>"


VMAP = VmapMacro()
