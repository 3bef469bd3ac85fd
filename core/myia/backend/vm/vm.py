"""The reference VM: interprets graphs with NumPy.

It is the semantics every other backend is tested against, so it favours being
obviously right over being fast.  Two things it must get right:

- Closures.  Evaluating the constant of a graph `g` makes `Closure(g, frame)`, where
  `frame` is the live frame of `g`'s parent graph; a free variable is read by walking
  up a fixed number of closure links (known before running).
- Depth.  Graph calls never recurse in Python: frames live on an explicit stack on the
  heap, and a call in tail position replaces the caller's frame.  A loop (a graph that
  calls itself in tail position) runs in constant space, and deep non-tail recursion
  (the backward pass of a long loop) is limited by memory, not by Python's stack.
"""

import os

import numpy as np

from ...errors import (MyiaError, MyiaOverflowError, MyiaRecursionError, MyiaTypeError,
                       MyiaValueError, memory_error)
from ...ir import Apply, Constant, Graph, is_loop_graph, manage
from ...ir.protocol import is_transform
from ...ad.forward import JVPMacro, T_graph, lift_closure_T, prim_tangent
from ...ad.grad import GradMacro, JOf, VJPMacro
from ...ad.lifting import prim_arity
from ...ad.reverse import J_constant, J_graph, lift_closure, prim_fprop
from ...prim import Primitive
from ...prim import ops as P
from ...prim.containers import same_container
from ...prim.shape import too_big

#: Frames deeper than this raise MyiaRecursionError (each frame is a small Python
#: object; ten million of them fit in a few GB).
MAX_DEPTH = 10_000_000


class Closure:
    """A graph together with the frame its free variables are read from."""

    __slots__ = ("graph", "frame")

    def __init__(self, graph, frame):
        self.graph = graph
        self.frame = frame

    def __repr__(self):
        return f"<Closure {self.graph.name}>"


class Partial:
    """A function with its first arguments fixed."""

    __slots__ = ("fn", "args")

    def __init__(self, fn, args):
        self.fn = fn
        self.args = tuple(args)

    def __repr__(self):
        return f"<Partial {self.fn!r} {self.args!r}>"


# Kinds of operand references in a plan.
_FREE, _GRAPH = range(2)

#: primitives the VM runs itself rather than through their impl (see _enter)
_VM_HANDLED = frozenset({P.J, P.Jinv, P.T, P.make_closure})


class _Plan:
    """What the VM needs to run one graph: its nodes in order, with each input
    resolved to a constant, a local slot, a free variable (hops up, slot), or a graph
    constant to close over."""

    __slots__ = ("graph", "nparams", "nslots", "instrs", "output", "slots", "names",
                 "defaults", "template", "entry")

    def __init__(self, graph):
        self.graph = graph


class Frame:
    __slots__ = ("plan", "values", "closure", "pc")

    def __init__(self, plan, values, closure):
        self.plan = plan
        self.values = values
        self.closure = closure
        self.pc = 0


class VM:
    """Runs graphs.  One VM holds the plans of the graphs it has run; plans assume the
    graphs do not change afterwards (transform first, then run)."""

    def __init__(self, extra_callables=None):
        self.plans = {}
        self.managers = []
        # hook for values that are neither closures nor primitives (e.g. the AD
        # layer's transformed functions): {type: fn(vm, value, args) -> value}
        self.extra_callables = dict(extra_callables or {})

    # ---- primitives --------------------------------------------------------------------

    def impl_for(self, node, prim):
        """The implementation to run for primitive `prim` at `node` (None for a
        primitive called as a value).  The reference is `prim.impl`; a backend built on
        the VM overrides this to give its own table (e.g. myia.backend.cupy)."""
        return prim.impl

    # ---- plans ---------------------------------------------------------------------

    def _manager_for(self, graph):
        for mng in self.managers:
            if graph in mng:
                return mng
        mng = manage(graph)
        self.managers.append(mng)
        return mng

    def plan(self, graph):
        p = self.plans.get(graph)
        if p is None:
            p = self._make_plan(graph)
        return p

    def _make_plan(self, graph):
        mng = self._manager_for(graph)
        plan = _Plan(graph)
        self.plans[graph] = plan
        nodes = [n for n in mng.nodes(graph) if isinstance(n, Apply)]
        slots = {p: i for i, p in enumerate(graph.parameters)}
        plan.slots = slots
        plan.nparams = len(graph.parameters)
        plan.names = [p.name for p in graph.parameters]
        plan.defaults = graph.defaults

        # Every operand is read from the frame's `values` list: parameters first,
        # then constants (filled from `template`), then free variables and closures
        # of nested graphs (filled when the frame is entered), then the nodes.
        template = [None] * len(graph.parameters)
        entry = []  # (slot, kind, hops, index-or-graph) filled at frame entry

        def ref(node):
            if node in slots:
                return slots[node]
            slot = slots[node] = len(template)
            template.append(None)
            if isinstance(node, Constant):
                v = node.value
                if isinstance(v, Graph):
                    parent = mng.parent(v)
                    if parent is None:
                        template[slot] = Closure(v, None)
                    else:
                        entry.append((slot, _GRAPH, _hops(mng, graph, parent), v))
                else:
                    template[slot] = v
            elif node.graph is not graph:
                owner_plan = self.plan(node.graph)
                entry.append((slot, _FREE, _hops(mng, graph, node.graph), owner_plan.slots[node]))
            else:
                raise AssertionError(f"node {node} of {graph} used before it is computed")
            return slot

        instrs = []
        for n in nodes:
            fn = n.inputs[0]
            prim_impl = self.impl_for(n, fn.value) if isinstance(fn, Constant) and isinstance(
                fn.value, Primitive) and fn.value not in _VM_HANDLED else None
            refs = [ref(i) for i in n.inputs[1:]]
            fref = ref(fn)
            slots[n] = len(template)
            template.append(None)
            instrs.append((n, slots[n], prim_impl, fref, refs))
        plan.instrs = instrs
        plan.output = ref(graph.output)
        plan.template = template
        plan.entry = entry
        plan.nslots = len(template)
        return plan

    # ---- derivatives of run-time values --------------------------------------------

    def free_values(self, closure, nodes):
        """The values that `closure` captured for the free variables `nodes`."""
        mng = self._manager_for(closure.graph)
        out = []
        for v in nodes:
            f = closure.frame
            for _ in range(_hops(mng, closure.graph, v.graph) - 1):
                f = f.closure
            out.append(f.values[self.plan(v.graph).slots[v]])
        return out

    def J(self, value):
        """J of a run-time value (see myia.ad.reverse)."""
        cls = value.__class__
        if cls is Closure:
            graph = value.graph
            fvs = manage(graph).free_variables(graph)
            if not fvs:
                return Closure(J_graph(graph), None)
            captured = [self.J(v) for v in self.free_values(value, fvs)]
            return self.call(Closure(lift_closure(graph), None), captured)
        if cls is Primitive:
            return Closure(prim_fprop(value), None)
        if isinstance(value, tuple):  # (a DictValue keeps its keys)
            return same_container(value, [self.J(v) for v in value])
        return J_constant(value)

    def T(self, value):
        """T of a run-time value (see myia.ad.forward): what specialization left."""
        cls = value.__class__
        if cls is Closure:
            graph = value.graph
            fvs = manage(graph).free_variables(graph)
            if not fvs:
                return Closure(T_graph(graph), None)
            return self.call(Closure(lift_closure_T(graph), None),
                             self.free_values(value, fvs))
        if cls is Primitive:
            return Closure(prim_tangent(value), None)
        if isinstance(value, tuple):
            return same_container(value, [self.T(v) for v in value])
        return value

    # ---- running ---------------------------------------------------------------------

    def call(self, fn, args):
        """Call a function value (Closure, Primitive, Partial, ...) on `args`."""
        with np.errstate(all="ignore"):
            return self._run(fn, list(args), None)

    def _enter(self, fn, args, node):
        """A new frame for calling closure `fn`, or None with the result in `out` for
        anything that is not a closure.  Returns (frame, result)."""
        while fn.__class__ is Partial:
            args = [*fn.args, *args]
            fn = fn.fn
        if fn.__class__ is Closure:
            plan = self.plans.get(fn.graph)
            if plan is None:
                plan = self.plan(fn.graph)
            n = plan.nparams
            if len(args) != n:
                args = _bind_defaults(plan, args, node)
            values = args + plan.template[n:]
            frame = Frame(plan, values, fn.frame)
            for slot, kind, hops, what in plan.entry:
                f = fn.frame
                while hops > 1:
                    f = f.closure
                    hops -= 1
                if kind == _FREE:
                    values[slot] = f.values[what]
                else:  # a nested graph: close over the frame of its parent
                    values[slot] = Closure(what, frame if hops == 0 else f)
            return frame, None
        if fn.__class__ is Primitive:
            special = _SPECIAL_PRIMS.get(fn.name)
            if special is not None:
                return None, special(self, *args)
            return None, self.impl_for(None, fn)(*args)
        if isinstance(fn, GradMacro) or fn.__class__ is JOf:
            argnums = args[1] if len(args) > 1 else 0
            names, defaults = _signature(fn, args[0])
            expand = fn.graph if fn.__class__ is JOf else fn.expand
            graph = expand(len(names), argnums, names, defaults)
            return self._enter(Closure(graph, None), [args[0], argnums], node)
        if fn.__class__ is JVPMacro or fn.__class__ is VJPMacro:
            return self._enter(Closure(fn.expand(len(args[1])), None), args, node)
        handler = self.extra_callables.get(type(fn))
        if handler is not None:
            return None, handler(self, fn, args)
        if is_transform(fn):
            # (a transform object in a program run as parsed, not specialized: J of a
            # function with a rule in the values view of %grad): its generic program
            return self._enter(Closure(fn.__myia_graph__(), None), args, node)
        raise MyiaTypeError(f"a value of type {type(fn).__name__} is not callable")

    def _run(self, fn, args, node):
        frame, result = self._enter(fn, args, node)
        if frame is None:
            return result
        stack = []
        while True:
            plan = frame.plan
            values = frame.values
            instrs = plan.instrs
            pc = frame.pc
            ninstrs = len(instrs)
            called = None
            while pc < ninstrs:
                node, slot, prim_impl, fref, refs = instrs[pc]
                try:
                    a = [values[r] for r in refs]
                    if prim_impl is not None:
                        values[slot] = prim_impl(*a)
                        pc += 1
                        continue
                    f = values[fref]
                    new, result = self._enter(f, a, node)
                except MyiaError as e:
                    if e.loc is None:
                        e.loc = node.loc
                    raise
                except (TypeError, ValueError, IndexError, ZeroDivisionError, OverflowError) as e:
                    raise _as_myia_error(e, a, node.loc) from None
                except MemoryError as e:  # the user's error, at the line that asked
                    raise _memory_error(e, _user_node(node, stack)) from None
                if new is None:
                    values[slot] = result
                    pc += 1
                    continue
                called = new
                break
            if called is not None:
                if pc == ninstrs - 1 and plan.output == slot:
                    # tail call: the caller's frame is done, replace it
                    frame = called
                else:
                    frame.pc = pc
                    stack.append(frame)
                    if len(stack) > MAX_DEPTH:
                        raise _too_deep(called.plan.graph, node)
                    frame = called
                continue
            result = values[plan.output]
            if not stack:
                return result
            frame = stack.pop()
            frame.values[frame.plan.instrs[frame.pc][1]] = result
            frame.pc += 1


def _user_node(node, stack):
    """`node`, or where the library code it is in was called from the user's code."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    frames = [f.plan.instrs[f.pc][0] for f in reversed(stack)]
    for n in [node, *frames]:
        filename = getattr(getattr(n, "loc", None), "filename", None) or ""
        if filename and not os.path.abspath(filename).startswith(here + os.sep):
            return n
    return node


def _memory_error(e, node):
    shape = getattr(e, "shape", None)
    dtype = getattr(e, "dtype", None)
    if shape is not None and dtype is not None:  # NumPy's _ArrayMemoryError
        nbytes = int(np.prod(shape, dtype=np.float64)) * np.dtype(dtype).itemsize
        what = f"an array of shape {tuple(shape)}, {np.dtype(dtype).name}"
    else:
        nbytes, what = 0, "an array"
    return memory_error(nbytes, what, node.loc)


def _too_deep(graph, node):
    """The error for MAX_DEPTH pending calls, the last of `graph` at `node`: the loop of
    a derivative (whose forward pass keeps a frame per iteration), or a recursion."""
    if is_loop_graph(graph):
        return MyiaRecursionError(
            f"the derivative of this loop keeps a frame per iteration, past the VM's "
            f"{MAX_DEPTH} pending calls", graph.loc,
            hint="run fewer iterations, or checkpoint the loop in segments "
                 "(myia.checkpoint: m segments of k steps keep m + k frames)")
    return MyiaRecursionError(f"recursion deeper than {MAX_DEPTH} calls", node.loc,
                              hint="check the base case of the recursion")


def _as_myia_error(e, args, loc):
    """The Myia error, of the kind the LLVM backend raises, for what NumPy or Python
    raised in a primitive's implementation."""
    text = str(e)
    if isinstance(e, ValueError) and ("array is too big" in text or "too large" in text
                                      or "Maximum allowed size" in text):
        try:
            shape = np.broadcast_shapes(*[np.shape(x) for x in args
                                          if isinstance(x, np.ndarray)])
        except ValueError:
            shape = ()
        return MyiaOverflowError(too_big(shape), loc)
    if isinstance(e, OverflowError):
        return MyiaOverflowError(text, loc)
    if isinstance(e, (ValueError, IndexError, ZeroDivisionError)):
        return MyiaValueError(text, loc)
    return MyiaTypeError(text, loc)


def _signature(fn, f):
    """(parameter names, defaults) of the function value `f` that `fn` (grad...) got."""
    if f.__class__ is Closure:
        return [p.name for p in f.graph.parameters], f.graph.defaults
    if f.__class__ is Primitive:
        return [f"x{i}" for i in range(prim_arity(f))], {}
    raise MyiaTypeError(f"{fn.ir_name} of a value of type {type(f).__name__}, which is not a function")


def _record_reader(x, typed, flag):
    """Of the specialized transforms `typed` of each function x may be, the graph
    that reads the transform of the closure record x (see myia.infer.specialize), or
    None when x is not a record."""
    if x.__class__ is Partial and x.fn.__class__ is Closure:
        opt = x.fn.graph.flags.get("record_of")
        for t in typed:
            if t.__class__ is Closure and opt is not None and t.graph.flags.get(flag) == opt:
                return t
    return None


def _J_prim(vm, x, *typed):
    # (`typed`: the specialized J of each function x may be, which compiled backends
    # choose from; the VM transforms x itself, except a closure's record, which only
    # its reader can: see myia.infer.specialize)
    reader = _record_reader(x, typed, "J_of_record")
    return vm.J(x) if reader is None else vm.call(reader, [x])


def _Jinv_prim(vm, x):
    if isinstance(x, Closure):
        raise MyiaTypeError("Jinv of a function value is not supported")
    return x


def _make_closure(vm, fn, *captured):
    # `fn` is the top-level graph's value (a Closure over no frame)
    return Partial(fn, captured)


def _T_prim(vm, x, *typed):
    # (`typed`: the T graph of each function x may be, which compiled backends choose
    # from; the VM transforms x itself, except a closure's record, as for J)
    reader = _record_reader(x, typed, "T_of_record")
    return vm.T(x) if reader is None else vm.call(reader, [x])


_SPECIAL_PRIMS = {"J": _J_prim, "Jinv": _Jinv_prim, "T": _T_prim,
                  "make_closure": _make_closure}


def _hops(mng, graph, ancestor):
    """How many closure links lead from a frame of `graph` to one of `ancestor`."""
    n = 0
    g = graph
    while g is not ancestor:
        g = mng.parent(g)
        if g is None:
            raise AssertionError(f"{ancestor} is not an ancestor of {graph}")
        n += 1
    return n


def _bind_defaults(plan, args, node):
    n = plan.nparams
    if len(args) < n:
        missing = plan.names[len(args):]
        if all(name in plan.defaults for name in missing):
            return list(args) + [plan.defaults[name] for name in missing]
    loc = node.loc if node is not None else None
    raise MyiaTypeError(
        f"{plan.graph.name}() takes {n} argument{'s' if n != 1 else ''} "
        f"({', '.join(plan.names)}) but {len(args)} were given", loc)
