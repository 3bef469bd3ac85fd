"""Forward mode inside subset code: inference and specialization of `T(f)`.

`jvp(fn, primals, tangents)` written in subset code expands (myia.ad.forward.JVPMacro)
into `T(fn)((x1, t1), ..., (xn, tn))`, and `T(fn)` is resolved here, for each function
`fn` may be:

    a graph that captures nothing   its tangent transform for the call's types
                                    (`static_tangent`, a transform object: T of the
                                    *optimized* program of fn for those types, so a
                                    grad or jvp inside fn is already an ordinary
                                    program when T meets it, whatever the nesting)
    a closure                       `lift_closure_T(g)(v1..vm)`: T of the lifted
                                    program, with what the closure captured held fixed;
                                    v1..vm are read from the frame that made the
                                    closure where it is visible, else from the
                                    closure's record (as J reads them)
    a primitive                     its tangent graph
    a transform object (myia.grad(h) named in subset code)   T of it, per types
    one of several, chosen at       T(f, t1..tk): for each function its tangent graph,
    run time                        or for a closure a graph that reads its T from
                                    the closure's record (T_record_reader); a backend
                                    picks the one of the function the value is

`jet(fn, order)` of a closure is resolved the same way (expand_jet): the jet of the
lifted program with what the closure captured held fixed.

Perturbations stay apart because each T is applied to a program, not to values: a
nested jvp is T of a program that contains the inner one's pairs, which the outer T
pairs again.
"""

from ..ad.forward import JVPMacro, T_graph, lift_closure_T, prim_tangent
from ..ad.grad import VJPMacro
from ..ad.lifting import lifted_copy, record_layout
from ..ad.taylor import JetMacro, lift_closure_jet
from ..ad.transforms import is_data_signature
from ..errors import MyiaGradError, MyiaTypeError
from ..ir import Apply, Constant, Graph
from ..prim import ops as P
from ..abstract import (NOT_CONSTANT, AFunction, ATuple, BOTTOM, GraphFunction,
                       MacroFunction, PrimitiveFunction, TransformFunction, constant_value,
                       join, transform_target)
from .records import TRecord

#: fn -> the transform object of T(fn) built per signature; set by myia.api (the
#: objects that build programs live above inference)
static_tangent = None


def infer_T(inf, ctx, node, args):
    if len(args) != 1:
        raise MyiaTypeError(f"T takes 1 argument, {len(args)} given")
    record = TRecord()
    return T_abstract(inf, ctx, node, args[0], record), record


def T_abstract(inf, ctx, node, a, record):
    if a.__class__ is ATuple:
        out = [T_abstract(inf, ctx, node, e, record) for e in a.elements]
        return BOTTOM if BOTTOM in out else a.with_elements(out)
    if a.__class__ is not AFunction:
        return a  # T of data is the data
    chosen_at_run_time = len(a.options) > 1
    result = BOTTOM
    for opt in a.sorted_options():
        r = (T_of_one_of_several(inf, ctx, node, opt, record, a) if chosen_at_run_time
             else T_option(inf, ctx, node, opt, record))
        if r is BOTTOM:
            return BOTTOM
        result = join(result, r)
    return result


def T_option(inf, ctx, node, opt, record):
    part = record.parts.get(opt)
    if part is not None:
        kind, what = part
        if kind == "lift":
            return what.result
        if kind == "graph":
            return AFunction([GraphFunction(what, None)])
        return AFunction([TransformFunction(what)])
    cls = opt.__class__
    if cls is GraphFunction:
        g = opt.graph
        if not inf.infos[g].free_variables:
            # (the value graph of a transform object: the object itself)
            t = static_tangent(g.flags.get("transform", g))
            record.parts[opt] = ("static", t)
            return AFunction([TransformFunction(t)])
        laid_out = capture_layout(inf, opt, (g,))
        if laid_out is None:
            return BOTTOM
        layout, captured = laid_out
        outer = lift_closure_T(g, layout)
        result, callee = inf.call(ctx, node, GraphFunction(outer, None), captured, True)
        record.parts[opt] = ("lift", callee)
        return result
    if cls is TransformFunction:
        t = opt.transform.__myia_T__()
        record.parts[opt] = ("static", t)
        return AFunction([TransformFunction(t)])
    if cls is PrimitiveFunction:
        if opt.prim is P.make_tuple:
            raise MyiaTypeError("jvp of make_tuple as a value is not supported",
                                hint="jvp of a function that builds the tuple")
        tp = prim_tangent(opt.prim)
        record.parts[opt] = ("graph", tp)
        return AFunction([GraphFunction(tp, None)])
    if cls is MacroFunction:
        raise MyiaGradError(f"jvp of {opt.name} itself (the transform, not a function it "
                            f"made) is not supported",
                            hint=f"take the jvp of a function that calls {opt.name}")
    raise MyiaTypeError(f"jvp of {opt.name} is not supported")


def T_of_one_of_several(inf, ctx, node, opt, record, a):
    """T of `opt`, one of the functions a value chosen at run time may be: of a
    function that captures nothing, the tangent graph of its parsed program (one graph
    per function, whatever the call types, which a backend picks by the value's tag);
    of a closure, lift_closure_T's outer called with what it captured, as for one
    closure, which specialization reads from the closure's record (see
    T_record_reader).  (Errors are located at the user's jvp by inference: see
    Inferrer.evaluate_node.)"""
    part = record.parts.get(opt)
    if part is not None:
        kind, what = part
        return what.result if kind == "lift" else AFunction([GraphFunction(what, None)])
    cls = opt.__class__
    if cls is PrimitiveFunction and opt.prim is not P.make_tuple:
        part = ("graph", prim_tangent(opt.prim))
    elif cls is GraphFunction and not inf.infos[opt.graph].free_variables:
        part = ("graph", T_graph(opt.graph))
    elif cls is GraphFunction:
        laid_out = capture_layout(inf, opt, (opt.graph,))
        if laid_out is None:
            return BOTTOM
        layout, captured = laid_out
        outer = lift_closure_T(opt.graph, layout)
        result, callee = inf.call(ctx, node, GraphFunction(outer, None), captured, True)
        record.parts[opt] = ("lift", callee)
        return result
    else:
        raise MyiaGradError(
            f"jvp of a function value that may be one of several functions ({a}), "
            f"one of which is {opt.name}",
            hint="choose the function before the jvp (an `if` around jvp calls)")
    record.parts[opt] = part
    return AFunction([GraphFunction(part[1], None)])


def capture_layout(inf, opt, seen):
    """(layout, abstracts) of what the closure `opt` captured, for its lifted T (see
    myia.ad.lifting.lifted_with_layout): a function that captures nothing is a
    constant; a closure of one known graph is laid out in turn (T takes what it
    captured, so that a grad of it inside the lifted program is resolved when that
    program is typed: `hessian(g)` of a closure g, whose `grad(g)` is taken in
    `hessian_of`); anything else is a parameter.  abstracts: those of the parameters,
    depth first.  None while a captured value is not known yet.  (`seen`: the graphs
    on the way, which a closure capturing itself keeps as a parameter.)"""
    _, fvs = lifted_copy(opt.graph)
    layout, abstracts = [], []
    for v in fvs:
        a = inf.read_free(opt.context, v)
        if a is BOTTOM:
            return None
        o = next(iter(a.options)) if a.__class__ is AFunction and len(a.options) == 1 \
            else None
        if o.__class__ is GraphFunction and not inf.infos[o.graph].free_variables:
            layout.append(("const", o.graph))
        elif o.__class__ is PrimitiveFunction:
            layout.append(("const", o.prim))
        elif o.__class__ is GraphFunction and o.graph not in seen:
            inner = capture_layout(inf, o, seen + (o.graph,))
            if inner is None:
                return None
            layout.append(("closure", o.graph, inner[0]))
            abstracts.extend(inner[1])
        else:
            layout.append(("param",))
            abstracts.append(a)
    return tuple(layout), abstracts


def static_functions(inf, captured):
    """((i, function), ...) for the captured values of abstracts `captured` that are
    one known function capturing nothing (a graph or a primitive): the lifted
    program takes them as constants (see myia.ad.lifting.lifted_with_constants)."""
    out = []
    for i, a in enumerate(captured):
        if a.__class__ is AFunction and len(a.options) == 1:
            (o,) = a.options
            if o.__class__ is GraphFunction and not inf.infos[o.graph].free_variables:
                out.append((i, o.graph))
            elif o.__class__ is PrimitiveFunction:
                out.append((i, o.prim))
    return tuple(out)


def expand_jvp(inf, ctx, node, opt, args):
    """`jvp(fn, primals, tangents)`: the macro's program for as many primals."""
    if len(args) != 3:
        raise MyiaTypeError(f"jvp takes 3 arguments (fn, primals, tangents), "
                            f"{len(args)} given")
    _, primals, tangents = args
    for what, a in (("primals", primals), ("tangents", tangents)):
        if a.__class__ is not ATuple or a.is_dict:
            raise MyiaTypeError(f"jvp's {what} must be a tuple or a list, not {a}",
                                hint="jvp(f, (x,), (dx,)): one tangent per primal")
    if len(primals.elements) != len(tangents.elements):
        raise MyiaGradError(f"jvp got {len(primals.elements)} primals but "
                            f"{len(tangents.elements)} tangents",
                            hint="give one tangent per primal, of the same structure "
                                 "and shape")
    graph = opt.macro.expand(len(primals.elements))
    return inf.call(ctx, node, GraphFunction(graph, None), list(args), True)


def expand_vjp(inf, ctx, node, opt, args):
    """`vjp(fn, *primals)` (the primals packed by the parser): the macro's program
    for as many primals."""
    if len(args) != 2 or args[1].__class__ is not ATuple:
        raise MyiaTypeError("vjp takes a function and its primals: vjp(fn, x, ...)")
    graph = opt.macro.expand(len(args[1].elements))
    return inf.call(ctx, node, GraphFunction(graph, None), list(args), True)


#: (fn, order, argnums) -> the transform object of `jet(fn, order, argnums)`; set by
#: myia.api
static_jet = None


def expand_jet(inf, ctx, node, opt, args):
    """`jet(fn, order, argnums)` of one known function: for a function that captures
    nothing, whose value is only called, the transform object built per call types;
    for a closure, `lift_closure_jet`'s outer called with what it captured (laid out as
    for T: see capture_layout), recorded as ("lift", its context) for specialization
    (build_jet)."""
    if len(args) not in (2, 3):
        raise MyiaTypeError("jet takes a function, an order and optionally argnums")
    order = constant_value(args[1])
    argnums = constant_value(args[2]) if len(args) == 3 else 0
    if order is NOT_CONSTANT or argnums is NOT_CONSTANT:
        raise MyiaGradError("the order and argnums of jet must be constants",
                            hint="e.g. jet(f, 3)(x)")
    f = args[0]
    fo = next(iter(f.options)) if f.__class__ is AFunction and len(f.options) == 1 \
        else None
    if fo.__class__ is GraphFunction and inf.infos[fo.graph].free_variables:
        laid_out = capture_layout(inf, fo, (fo.graph,))
        if laid_out is None:
            return BOTTOM, None
        layout, captured = laid_out
        outer = lift_closure_jet(fo.graph, layout, order, argnums, static_jet)
        result, callee = inf.call(ctx, node, GraphFunction(outer, None), captured, True)
        record = TRecord()
        record.parts[fo] = ("lift", callee)
        return result, record
    target = transform_target(fo)
    if target is None:
        raise MyiaGradError(
            f"jet inside subset code takes one known function, not {f}",
            hint="choose the function before the jet (an `if` around jet calls), or "
                 "take the jet of a def that receives the choice as an argument")
    if not inf.only_called(ctx.graph, node):
        raise MyiaGradError("the function jet makes inside subset code can only be "
                            "called where it is made (not stored, passed or returned)",
                            hint="call it at once: jet(f, 3)(x)")
    return AFunction([TransformFunction(static_jet(target, order, argnums))]), None


def build_jet(spec, ctx, node, a, record):
    """The node of `jet(f, order, argnums)` of a closure f in the specialized program
    of `ctx`: the outer of lift_closure_jet called with what f captured, read as T
    reads it."""
    ((opt, (_, callee)),) = record.parts.items()
    x = spec.input(ctx, node.inputs[1])
    captured = [spec.read_captured(ctx, node, x, opt, path, "jet")
                for path in callee.graph.flags["paths"]]
    return spec.new_apply(ctx, [spec.graph_constant(callee, node.loc)] + captured, node, a)


def is_jet_macro(opt):
    return isinstance(opt.macro, JetMacro)


def is_jvp_macro(opt):
    return isinstance(opt.macro, JVPMacro)


def is_vjp_macro(opt):
    return isinstance(opt.macro, VJPMacro)


def is_jvp_value(value):
    return isinstance(value, JVPMacro)


# ---- specialization -------------------------------------------------------------------


def build_T(spec, ctx, node, a, record, args):
    """The node of `T(x)` in the specialized program of `ctx` (see the module doc)."""
    (x,) = args
    return _T_of_value(spec, ctx, node, x, spec.inf.value_of(ctx, node.inputs[1]), a,
                       record)


def _T_of_value(spec, ctx, node, x, xa, a, record):
    """T of the value `x` of abstract `xa` (`a`: the abstract of the result): data is
    its own T, a tuple's T is the tuple of its elements' T."""
    loc = node.loc
    if is_data_signature((xa,)):
        return x
    if isinstance(xa, ATuple):
        items = []
        for i, (e, ea) in enumerate(zip(xa.elements, a.elements)):
            item = spec.new_apply(ctx, [Constant(P.tuple_getitem, loc), x, Constant(i, loc)],
                                  node, e)
            items.append(_T_of_value(spec, ctx, node, item, e, ea, record))
        return spec.new_apply(ctx, [Constant(P.make_tuple, loc)] + items, node, a)
    if isinstance(xa, AFunction) and len(xa.options) == 1:
        (opt,) = xa.options
        kind, what = record.parts[opt]
        if kind == "graph":
            return spec.graph_value_opt(GraphFunction(what, None), loc)
        if kind == "static":
            # only ever called, and each call is a direct call of the program built
            # for its types: this node is dead
            return spec.new_apply(ctx, [Constant(P.T, loc), x], node, a)
        outer = what.graph
        captured = [spec.read_captured(ctx, node, x, opt, path, "jvp")
                    for path in outer.flags["paths"]]
        return spec.new_apply(ctx, [spec.graph_constant(what, loc)] + captured, node, a)
    # one of several functions, chosen at run time: the T graph of each (for a closure,
    # the graph that reads its T from its record) is an input of the node, of which a
    # backend picks the one of the function the value is
    targets = []
    for o in xa.sorted_options():
        kind, what = record.parts[o]
        targets.append(T_record_reader(spec, o, what, node) if kind == "lift" else
                       spec.graph_value_opt(GraphFunction(what, None), loc))
    return spec.new_apply(ctx, [Constant(P.T, loc), x] + targets, node, a)


def T_record_reader(spec, opt, callee, node):
    """A graph `reader(f)` = T of the closure value f (option `opt`, a record): the
    outer of its lifted T (context `callee`) called with what f captured, read from
    the records (flags["T_of_record"] names the option, as J's readers do)."""
    key = ("T", opt)
    reader = spec.readers.get(key)
    if reader is None:
        loc = node.loc
        reader = spec.readers[key] = Graph(f"T:{opt.graph.name}", loc)
        reader.flags["T_of_record"] = opt
        f = reader.add_parameter("f")
        f.abstract = AFunction([opt])
        captured = [spec.read_captured(None, node, f, opt, path, "jvp", reader)
                    for path in callee.graph.flags["paths"]]
        reader.output = Apply(reader, [spec.graph_constant(callee, loc)] + captured,
                              loc, None)
        reader.output.abstract = callee.result
    c = Constant(reader, node.loc)
    c.abstract = AFunction([GraphFunction(reader, None)])
    return c


def closures_T_reads_from_records(spec, ctx, node, record):
    """{closure option: the layout of its record} for T at `node` of a closure whose
    captured values, or those of the closures it captured, are read where the frame
    that made them is not visible: their values must be records (see
    Specializer.read_captured)."""
    xa = spec.inf.value_of(ctx, node.inputs[1])
    if not isinstance(xa, AFunction):
        return {}
    several = len(xa.options) > 1
    found = {}
    for opt in xa.options:
        kind, what = record.parts.get(opt, (None, None))
        if kind != "lift":
            continue
        if several:
            # (its reader sees no frame: the value is a record, and so are the
            # closures on the way to what it captured)
            found[opt] = record_layout(opt.graph)
        for path in what.graph.flags["paths"]:
            for o, _, _, _ in spec.along(opt, path):
                if several or not spec.inf.visible(o.context, ctx):
                    found[o] = record_layout(o.graph)
    return found
