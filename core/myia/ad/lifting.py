"""Lifting a closure out of its scope, shared by every transform that meets one.

J (reverse.lift_closure), T (forward.lift_closure_T) and jet (taylor) apply to a
closure made at run time by transforming a copy of its graph that takes what the
closure captured as parameters (`lifted_copy`), laid out as specialization fills the
closure's record (`lifted_with_layout`, `record_layout`).  `prim_arity` is here for
the same reason: every transform asks it.
"""

import inspect

from ..errors import MyiaError
from ..ir import Constant, Graph, manage
from ..ir.clone import _copy_graphs, _new_graph
from ..prim import ops as P

_ARITIES = {}


def prim_arity(prim):
    """The number of inputs of a primitive (make_tuple has none fixed)."""
    n = _ARITIES.get(prim)
    if n is None:
        if prim is P.make_tuple:
            raise MyiaError("make_tuple takes any number of inputs")
        if prim.nondiff or "bprop" not in prim.rules:
            params = inspect.signature(prim.impl).parameters.values()
            n = len(params)
            if prim.elementwise and any(p.kind is p.VAR_POSITIONAL for p in params):
                n = prim.elementwise  # (`&`, `|`, `^`: impl(*args))
        else:
            n = len(inspect.signature(prim.rules["bprop"]).parameters) - 2
        _ARITIES[prim] = n
    return n


def lifted_copy(graph):
    """(lifted, [v1..vm]) for a graph with free variables v1..vm (in its manager's
    order): lifted(v1..vm, args) = graph'(args), where graph' is a copy of graph nested
    in `lifted` and reading v1..vm from its parameters.  Every graph that reaches
    v1..vm from graph (a sibling closure it calls, itself when recursive) is copied
    there too, so that all of them read the parameters.  (How J and T apply to a
    closure: see lift_closure and myia.ad.forward.lift_closure_T.)"""
    cached = graph.derived.get("lifted")
    if cached is not None:
        return cached
    mng = manage(graph)
    fvs = mng.free_variables(graph)
    lifted = Graph(f"{graph.name}")
    lifted.flags = {"core": True}
    repl = {}
    for v in fvs:
        repl[v] = lifted.add_parameter(v.name or "fv")
    args = [lifted.add_parameter(p.name) for p in graph.parameters]
    wanted = set(fvs)
    copied = []
    todo = [graph]
    while todo:
        g = todo.pop()
        if g in repl:
            continue
        for s_ in mng.scope(g):
            repl[s_] = _new_graph(s_)
            copied.append(s_)
        for s_ in mng.scope(g):
            todo.extend(u for u in mng.graphs_used(s_)
                        if u not in repl and wanted & set(mng.free_variables(u)))
    _copy_graphs(copied, repl, mng)
    lifted.output = lifted.apply(repl[graph], *args)
    graph.derived["lifted"] = (lifted, fvs)
    return lifted, fvs


def captured_parameters(outer, fvs):
    """One parameter of `outer` per captured value v1..vm, each knowing the free
    variable it stands for (`.primal`): how specialization fills a closure's record
    and reads it back, for J and T alike (see myia.infer.specialize)."""
    params = []
    for v in fvs:
        cv = outer.add_parameter(v.name)
        cv.primal = v
        params.append(cv)
    return params


def lifted_with_constants(graph, static):
    """`lifted_copy(graph)` with some captured values known at compile time: for
    `static` ((i, value), ...), the graph `W(the other v's..., args)` that calls the
    lifted program with `Constant(value)` as its i-th captured value.  (A function
    that captures nothing, known where J or T of a closure is inferred, becomes part
    of the program, which the optimizer can then see through: a captured `grad_f` that
    writes jvp is inlined, not transformed as a value.)  See lifted_with_layout."""
    known = dict(static)
    return lifted_with_layout(graph, tuple(
        ("const", known[i]) if i in known else ("param",)
        for i in range(len(lifted_copy(graph)[1]))))


def laid_out_parameters(outer, layout, fvs):
    """The parameters of `outer` for a layout (lifted_with_layout) of what a closure
    with free variables `fvs` captured, depth first, each knowing the free variable
    it stands for (`.primal`); `outer.flags["paths"]` gets the path of each (see
    captured_leaves), along which specialization reads it (Specializer.read_captured)."""
    params, paths = [], []
    for path, v in captured_leaves(layout, fvs):
        cv = outer.add_parameter(v.name)
        cv.primal = v
        params.append(cv)
        paths.append(path)
    outer.flags["paths"] = tuple(paths)
    return params


def lifted_with_layout(graph, layout):
    """`lifted_copy(graph)` with what it captured laid out by `layout`, one entry per
    captured value v1..vm: ("param",) stays a parameter; ("const", value) is known at
    compile time (a function that captures nothing: part of the program, which the
    optimizer sees through); ("closure", g, sublayout) is a closure of the known graph
    g, made again inside from what it captured (laid out the same way).  The result,
    `W(parameters depth first..., args)`, takes data wherever the closures it captured
    are known: T or J of it is the transform of a program of data (a grad of a closure
    passed along, inside a jvp: see myia.infer.tangent.capture_layout)."""
    if all(e[0] == "param" for e in layout):
        return lifted_copy(graph)[0]
    key = ("lifted with", layout)
    w = graph.derived.get(key)
    if w is None:
        lifted, fvs = lifted_copy(graph)
        w = Graph(f"{graph.name}")
        w.flags = {"core": True}
        inputs = [_captured_input(w, e, v) for e, v in zip(layout, fvs)]
        inputs += [w.add_parameter(p.name) for p in graph.parameters]
        w.output = w.apply(lifted, *inputs)
        graph.derived[key] = w
    return w


def captured_leaves(layout, fvs, prefix=()):
    """(path, free variable) of each parameter of a layout (lifted_with_layout),
    depth first: the path is the chain of positions that reads it from the closure
    (position i of what it captured, then position j of what that closure
    captured...)."""
    for i, (entry, v) in enumerate(zip(layout, fvs)):
        if entry[0] == "param":
            yield prefix + (i,), v
        elif entry[0] == "closure":
            yield from captured_leaves(entry[2], lifted_copy(entry[1])[1], prefix + (i,))


def _captured_input(w, entry, v):
    """The input of `W` (lifted_with_layout) for the captured value `v` laid out as
    `entry`: a new parameter, a constant, or a closure made again in W."""
    if entry[0] == "param":
        return w.add_parameter(v.name or "fv")
    if entry[0] == "const":
        return Constant(entry[1])
    _, g, sub = entry
    lifted, fvs = lifted_copy(g)
    inputs = [_captured_input(w, e, u) for e, u in zip(sub, fvs)]
    remade = _new_graph(g)
    params = [remade.add_parameter(p.name, p.loc) for p in g.parameters]
    remade.output = remade.apply(lifted, *inputs, *params)
    return Constant(remade)


def record_layout(graph):
    """A graph whose parameters stand for what closures of `graph` capture, in the
    order of their records (see captured_parameters): how specialization fills the
    record of a closure that T reads (myia.infer.tangent)."""
    g = graph.derived.get("record layout")
    if g is None:
        g = graph.derived["record layout"] = Graph(f"record:{graph.name}")
        captured_parameters(g, lifted_copy(graph)[1])
    return g
