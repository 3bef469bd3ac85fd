"""Tuples, closures, environments, sensitivities and checks.

Environments (the sensitivities of closures, see `myia.prim.grad_ops`) are records
with one {present, value} slot per key their type may hold: keys are compile-time
constants, so `env_getitem` and `env_setitem` are field accesses and `env_add`
adds the slots present on both sides.  An environment of unknown contents is a list
whose entries are typed at run time (`dynenv`).
"""

import llvmlite.ir as ir

from ...abstract import GraphFunction, PrimitiveFunction
from ...ad.forward import prim_tangent
from ...ad.reverse import J_graph_if_built, prim_fprop
from ...errors import MyiaAssertionError, MyiaGradError, MyiaValueError
from ...prim import ops as P
from .arrays import full_like
from .cg import i64
from .registry import backend_error, rule
from .values import coerce, load_captured, renumber_tag
from .ltypes import EMPTY, AnyEnv, Array, Callee, Env, Func, Scalar, Static, Tuple, to_ir
from .ops_elementwise import ew_values, materialize
from .ops_scalar import cast, const_like, ew_binary, scalar_operands, to_bool
from .ops_views import runtime_shape_op
from .runtime import I1


@rule(P.make_tuple)
def lower_make_tuple(fl, node, args, types, out):
    b = fl.b
    v = ir.Constant(to_ir(out), ir.Undefined)
    for k, (a, t, ot) in enumerate(zip(args, types, out.elems)):
        v = b.insert_value(v, coerce(fl, a, t, ot, node), k)
    return v


def _index(i, n, node):
    if not isinstance(i, int) or isinstance(i, bool):
        raise backend_error(f"a tuple index that is not a constant int ({i!r})", node)
    if not -n <= i < n:
        raise backend_error(f"tuple index {i} out of range for a tuple of length {n}", node)
    return i % n


def run_time_index(fl, node, arg, t, n):
    """A tuple index known only at run time (`xs[i]` in a loop over a tuple whose
    elements have one type), as an i64 in [0, n); out of range, the VM's error."""
    if not (isinstance(t, Scalar) and t.dtype == "int64"):
        raise backend_error(f"a tuple index of type {t}", node)
    b = fl.b
    i = b.select(b.icmp_signed("<", arg, i64(0)), b.add(arg, i64(n)), arg)
    bad = b.or_(b.icmp_signed("<", i, i64(0)), b.icmp_signed(">=", i, i64(n)))
    fl.error_if(bad, node, MyiaValueError,
                f"tuple index {{a}} out of range for a tuple of length {n}", a=arg)
    return i


@rule(P.tuple_getitem)
def lower_tuple_getitem(fl, node, args, types, out):
    t = types[0]
    if isinstance(t, Static):
        return ir.Constant(EMPTY, [])
    i = _index(fl.static(node.inputs[2]), len(t.elems), node)
    return coerce(fl, fl.b.extract_value(args[0], i), t.elems[i], out, node)


@rule(P.tuple_setitem)
def lower_tuple_setitem(fl, node, args, types, out):
    t = types[0]
    b = fl.b
    i = _index(fl.static(node.inputs[2]), len(t.elems), node)
    # entry by entry: the replaced entry's type may differ from the result's
    v = ir.Constant(to_ir(out), ir.Undefined)
    for k in range(len(out.elems)):
        if k != i:
            e = b.extract_value(args[0], k)
            v = b.insert_value(v, coerce(fl, e, t.elems[k], out.elems[k], node), k)
    return b.insert_value(v, coerce(fl, args[2], types[2], out.elems[i], node), i)


@rule(P.tuple_tail)
def lower_tuple_tail(fl, node, args, types, out):
    b = fl.b
    v = ir.Constant(to_ir(out), ir.Undefined)
    for k in range(len(out.elems)):
        e = b.extract_value(args[0], k + 1)
        v = b.insert_value(v, coerce(fl, e, types[0].elems[k + 1], out.elems[k], node), k)
    return v


@rule(P.tuple_cons)
def lower_tuple_cons(fl, node, args, types, out):
    b = fl.b
    v = ir.Constant(to_ir(out), ir.Undefined)
    v = b.insert_value(v, coerce(fl, args[0], types[0], out.elems[0], node), 0)
    for k in range(len(out.elems) - 1):
        e = b.extract_value(args[1], k)
        v = b.insert_value(v, coerce(fl, e, types[1].elems[k], out.elems[k + 1], node), k + 1)
    return v


@rule(P.getitem)
def lower_getitem(fl, node, args, types, out):
    t = types[0]
    if isinstance(t, Array):
        # import here: ops_index imports this module
        from .ops_index import array_getitem

        return array_getitem(fl, node, args, types, out)
    if isinstance(t, Tuple):
        b = fl.b
        if not fl.is_static(node.inputs[2]) and t.elems and not isinstance(out, Static):
            # a run-time index: inference gave every element the type `out`
            i = run_time_index(fl, node, args[1], types[1], len(t.elems))
            v = coerce(fl, b.extract_value(args[0], 0), t.elems[0], out, node)
            for k in range(1, len(t.elems)):
                e = coerce(fl, b.extract_value(args[0], k), t.elems[k], out, node)
                v = b.select(b.icmp_signed("==", i, i64(k)), e, v)
            return v
        index = fl.static(node.inputs[2])
        if isinstance(index, slice):
            picks = list(range(len(t.elems)))[index]
            v = ir.Constant(to_ir(out), ir.Undefined)
            for k, j in enumerate(picks):
                v = b.insert_value(v, coerce(fl, b.extract_value(args[0], j), t.elems[j],
                                             out.elems[k], node), k)
            return v
        i = _index(index, len(t.elems), node)
        return coerce(fl, b.extract_value(args[0], i), t.elems[i], out, node)
    raise backend_error(f"indexing a value of type {t}", node)


@rule(P.len_)
def lower_len(fl, node, args, types, out):
    t = types[0]
    if isinstance(t, Tuple):
        return i64(len(t.elems))
    if isinstance(t, Array):
        if t.ndim == 0:
            raise backend_error("len() of a 0-d array", node)
        return fl.b.extract_value(args[0], [1, 0])
    raise backend_error(f"len() of a {t}", node)


@rule(P.switch)
def lower_switch(fl, node, args, types, out):
    b = fl.b
    c = to_bool(fl, args[0], types[0], node)
    x = coerce(fl, args[1], types[1], out, node)
    y = coerce(fl, args[2], types[2], out, node)
    if isinstance(out, Static):
        return ir.Constant(EMPTY, [])
    return b.select(c, x, y)


@rule(P.assert_)
def lower_assert(fl, node, args, types, out):
    c = to_bool(fl, args[0], types[0], node)
    msg = ""
    if isinstance(types[1], Static):
        msg = types[1].value
    text = "assertion failed" + (": " + str(msg).replace("{", "{{").replace("}", "}}") if msg else "")
    fl.error_if(fl.b.not_(c), node, MyiaAssertionError, text)
    return ir.Constant(I1, 1) if isinstance(out, Scalar) else ir.Constant(to_ir(out), ir.Undefined)


@rule(P.make_closure)
def lower_make_closure(fl, node, args, types, out):
    if not isinstance(out, Func):
        raise backend_error(f"make_closure typed {out}", node)
    g = node.inputs[1].value
    fvs = fl.L.fvs[g]
    # a closure's record, made by specialization, is the closure's option (one of
    # them, when the optimizer copied the record's graph: the one of this graph)
    callee = next((o for o in out.options if o.graph is g and o.bound == tuple(types[1:])),
                  None) or Callee(graph=g, fvs=fvs, bound=types[1:])
    values = [fl.value(v) for v in fvs] + list(args[1:])
    v = fl.make_func_value(callee, values)
    return coerce(fl, v, Func([callee]), out, node)


@rule(P.closure_bound)
def lower_closure_bound(fl, node, args, types, out):
    """The i-th bound value of a make_closure record: after its free variables (in
    each copy's record, when the optimizer copied the record's graph: a branch on the
    tag)."""
    f, i = types[0], node.inputs[2]
    if not (isinstance(f, Func) and isinstance(getattr(i, "value", None), int)
            and all(o.bound and 0 <= i.value < len(o.bound) for o in f.options)):
        raise backend_error(f"closure_bound of a function value of type {f}", node)

    def bound_of(opt, record):
        k = len(opt.fvs) + i.value
        return coerce(fl, load_captured(fl.b, fl.L, opt, record)[k], opt.bound[i.value],
                      out, node)

    if f.single:
        return bound_of(f.options[0], args[0])
    record, blocks = fl.branch_on_tag(args[0], len(f.options), "record")
    results = []
    for opt, bb in zip(f.options, blocks):
        fl.b.position_at_end(bb)
        results.append((bound_of(opt, record), fl.b.block))
    return fl.join(results, out, "bound")


@rule(P.Jinv)
def lower_Jinv(fl, node, args, types, out):
    raise backend_error("Jinv of a value known only at run time (a function passed to grad "
                        "inside the program that the optimizer could not resolve)", node)


# ---- sensitivities ---------------------------------------------------------------------


def zeros(fl, t, like, like_t, node, one=False):
    """The zero (or one) of type t, shaped like value `like` of type like_t."""
    b = fl.b
    if isinstance(t, Scalar):
        return const_like(t.dtype, 1 if one else 0, 1)
    if isinstance(t, Array):
        return full_like(fl, like, like_t, t, 1 if one else 0, node)
    if isinstance(t, Tuple):
        v = ir.Constant(to_ir(t), ir.Undefined)
        for k, et in enumerate(t.elems):
            if isinstance(like_t, Tuple):
                sub, sub_t = b.extract_value(like, k), like_t.elems[k]
            else:
                sub, sub_t = None, None
            v = b.insert_value(v, zeros(fl, et, sub, sub_t, node, one), k)
        return v
    if isinstance(t, (Env, AnyEnv)):
        return ir.Constant(to_ir(t), None)  # nothing present / the empty list
    if isinstance(t, Static):
        return ir.Constant(EMPTY, [])
    if isinstance(t, Func):
        return ir.Constant(to_ir(t), None)
    raise backend_error(f"zeros_like of a {t}", node)


@rule(P.zeros_like)
def lower_zeros_like(fl, node, args, types, out):
    return zeros(fl, out, args[0], types[0], node)


@rule(P.ones_like)
def lower_ones_like(fl, node, args, types, out):
    return zeros(fl, out, args[0], types[0], node, one=True)


@rule(P.grad_seed)
def lower_grad_seed(fl, node, args, types, out):
    t = types[0]
    if isinstance(t, Scalar) and t.is_float:
        return const_like(out.dtype if isinstance(out, Scalar) else t.dtype, 1.0, 1)
    if isinstance(t, Array) and t.ndim == 0 and t.is_float:
        return full_like(fl, args[0], t, out, 1.0, node)
    fl.fail(node, MyiaGradError, f"grad needs a function that returns a float scalar, "
            f"but it returned a {t}")
    return ir.Constant(to_ir(out), ir.Undefined)


def gadd(fl, x, y, tx, ty, out, node):
    """x + y for sensitivities of any structure."""
    b = fl.b
    if isinstance(out, Scalar):
        (x, y), (tx, ty) = scalar_operands(fl, [x, y], [tx, ty], out, node)
        return ew_binary(b, "add", x, y, tx.dtype, ty.dtype, out.dtype, True)
    if isinstance(out, Array):
        return ew_values(fl, "add", [x, y], [tx, ty], out, node)
    if isinstance(out, Tuple):
        v = ir.Constant(to_ir(out), ir.Undefined)
        for k, et in enumerate(out.elems):
            v = b.insert_value(v, gadd(fl, b.extract_value(x, k), b.extract_value(y, k),
                                       tx.elems[k], ty.elems[k], et, node), k)
        return v
    if isinstance(out, (Env, AnyEnv)):
        return env_add(fl, x, y, tx, ty, out, node)
    if isinstance(out, Static):
        return ir.Constant(EMPTY, [])
    if isinstance(out, Func) and isinstance(tx, Func) and isinstance(ty, Func):
        return coerce(fl, x, tx, out, node)
    raise backend_error(f"adding sensitivities of type {out}", node)


@rule(P.gadd)
def lower_gadd(fl, node, args, types, out):
    if isinstance(out, Array):
        return materialize(fl, node)
    return gadd(fl, args[0], args[1], types[0], types[1], out, node)


@rule(P.J)
def lower_J(fl, node, args, types, out):
    """J of a function value chosen at run time (the specializer gives the J of each
    function it may be, typed, as the node's other inputs): the J of the one it is, a
    choice of tag; a closure made elsewhere is a record, read by its reader graph
    (myia.infer.specialize, record_reader)."""
    def position_of_J(o):
        return _position_of(o, out, node, "J", prim_fprop, J_graph_if_built)

    return _transform_by_option(fl, node, args, types, out, "J", position_of_J)


@rule(P.T)
def lower_T(fl, node, args, types, out):
    """T of a function value chosen at run time (the specializer gives the T graph of
    each function it may be, or for a closure the graph that reads its T from its
    record, see myia.infer.tangent): the T of the one it is, as for J."""
    def position_of_T(o):
        return _position_of(o, out, node, "T", prim_tangent, lambda g: g.derived.get("T"))

    return _transform_by_option(fl, node, args, types, out, "T", position_of_T)


def _transform_by_option(fl, node, args, types, out, kind, position_of):
    """J or T (`kind`) of the function value args[0]: for a closure's record, its
    reader's result; for a function that captures nothing, the tag of its transform."""
    src = types[0]
    readers = {}
    for t in types[1:]:
        if isinstance(t, Func) and t.single and t.options[0].graph is not None:
            k = t.options[0].graph.flags.get(f"{kind}_of_record")
            if k is not None:
                readers[k] = t.options[0].graph
    if not (isinstance(src, Func) and isinstance(out, Func)) \
            or any(o.n_captured and o.key not in readers for o in src.options) \
            or (not readers and any(o.n_captured for o in out.options)):
        raise backend_error(f"{kind} of a function value computed at run time that "
                            f"captures values (the VM can run it)", node)
    if readers:
        return _by_option(fl, args[0], src, out, readers, position_of, node, kind)
    return _choice_of_tag(fl, args[0], src, out, [position_of(o) for o in src.options])


def _position_of(o, out, node, kind, of_prim, of_graph):
    """The option of function type `out` that is `kind` (J or T) of option `o`: the
    graph `of_prim(prim)` or `of_graph(graph)` built for it."""
    k = o.key
    if isinstance(k, PrimitiveFunction):
        key = GraphFunction(of_prim(k.prim), None)
    elif isinstance(k, GraphFunction) and k.context is None:
        key = GraphFunction(of_graph(k.graph), None)
    else:
        key = None
    out_keys = [o.key for o in out.options]
    if key not in out_keys:
        raise backend_error(f"{kind} of {o!r}, chosen at run time: its {kind} is not in "
                            f"the program", node)
    return out_keys.index(key)


def _choice_of_tag(fl, fv, src, out, targets):
    """The function value of type `out` whose option is targets[i] where `fv` (of type
    `src`) is option i: what it captures is nothing, so only the tag changes."""
    if out.single:
        return ir.Constant(to_ir(out), [])
    b = fl.b
    tag = i64(targets[0]) if src.single else renumber_tag(b, b.extract_value(fv, 0), targets)
    v = ir.Constant(to_ir(out), ir.Undefined)
    v = b.insert_value(v, tag, 0)
    return b.insert_value(v, ir.Constant(to_ir(out).elements[1], None), 1)


def _by_option(fl, fv, src, out, readers, position_of, node, kind):
    """J or T (`kind`) of function value `fv` that may be a closure's record: a branch
    on its tag; a record calls its reader, another function gives its transform's
    tag."""
    b = fl.b
    if src.single:
        (o,) = src.options
        return fl.call_graph(readers[o.key], [], [fv], [src], out, node, False)
    env, blocks = fl.branch_on_tag(fv, len(src.options), kind)
    results = []
    for o, bb in zip(src.options, blocks):
        b.position_at_end(bb)
        if o.key in readers:
            r = fl.call_graph(readers[o.key], [], [env], [Func([o])], out, node, False)
        else:
            r = b.insert_value(ir.Constant(to_ir(out), ir.Undefined), i64(position_of(o)), 0)
            r = b.insert_value(r, ir.Constant(to_ir(out).elements[1], None), 1)
        results.append((r, b.block))
    return fl.join(results, out, kind)


# ---- environments -----------------------------------------------------------------------


def _as_env(t):
    if isinstance(t, (Env, AnyEnv)):
        return t
    if isinstance(t, (Func, Static)):  # the zero of a function's sensitivity
        return Env([])
    return None


def _env_coerce(fl, v, t, out, node):
    et = _as_env(t)
    if et is None:
        raise backend_error(f"a {t} used as an environment", node)
    if et is not t:
        return ir.Constant(to_ir(out), None)
    return coerce(fl, v, t, out, node)


@rule(P.env_new)
def lower_env_new(fl, node, args, types, out):
    return ir.Constant(to_ir(out), None)


@rule(P.env_setitem)
def lower_env_setitem(fl, node, args, types, out):
    b = fl.b
    key = fl.static(node.inputs[2])
    env = _env_coerce(fl, args[0], types[0], out, node)
    if isinstance(out, AnyEnv):
        return fl.L.dynenv.store(fl, env, key, args[2], types[2])
    i = out.index(key)
    if i is None:
        raise backend_error(f"an environment key {key!r} missing from its type {out}", node)
    et = out.entries[i][1]
    slot = ir.Constant(to_ir(out).elements[i], ir.Undefined)
    slot = b.insert_value(slot, ir.Constant(I1, 1), 0)
    slot = b.insert_value(slot, coerce(fl, args[2], types[2], et, node), 1)
    return b.insert_value(env, slot, i)


@rule(P.env_getitem)
def lower_env_getitem(fl, node, args, types, out):
    b = fl.b
    key = fl.static(node.inputs[2])
    t = _as_env(types[0])
    default = coerce(fl, args[3 - 1], types[2], out, node)
    if t is None or t is not types[0]:
        return default
    if isinstance(out, Static):
        return ir.Constant(EMPTY, [])
    if isinstance(t, AnyEnv):
        found, value = fl.L.dynenv.lookup(fl, args[0], key, out)
        return b.select(found, value, default)
    i = t.index(key)
    if i is None:
        return default
    slot = b.extract_value(args[0], i)
    value = coerce(fl, b.extract_value(slot, 1), t.entries[i][1], out, node)
    return b.select(b.extract_value(slot, 0), value, default)


def env_add(fl, x, y, tx, ty, out, node):
    b = fl.b
    x = _env_coerce(fl, x, tx, out, node)
    y = _env_coerce(fl, y, ty, out, node)
    if isinstance(out, AnyEnv):
        return fl.L.dynenv.add(fl, x, y)
    v = x
    for k, (key, et) in enumerate(out.entries):
        sx = b.extract_value(x, k)
        sy = b.extract_value(y, k)
        px, py = b.extract_value(sx, 0), b.extract_value(sy, 0)
        vx, vy = b.extract_value(sx, 1), b.extract_value(sy, 1)
        both = b.and_(px, py)
        pre = b.block
        add_bb = b.append_basic_block("env.add")
        merge = b.append_basic_block("env.merge")
        b.cbranch(both, add_bb, merge)
        b.position_at_end(add_bb)
        s = gadd(fl, vx, vy, et, et, et, node)
        add_end = b.block
        b.branch(merge)
        b.position_at_end(merge)
        phi = b.phi(to_ir(et))
        with b.goto_block(pre):
            sel = b.select(px, vx, vy)
        phi.add_incoming(sel, pre)
        phi.add_incoming(s, add_end)
        slot = ir.Constant(to_ir(out).elements[k], ir.Undefined)
        slot = b.insert_value(slot, b.or_(px, py), 0)
        slot = b.insert_value(slot, phi, 1)
        v = b.insert_value(v, slot, k)
    return v


@rule(P.env_add)
def lower_env_add(fl, node, args, types, out):
    return env_add(fl, args[0], args[1], types[0], types[1], out, node)


# ---- compile-time values ----------------------------------------------------------------


@rule(P.make_slice, P.reduced_size, P.reduced_shape, P.inverse_axes, P.dtype)
def lower_static_only(fl, node, args, types, out):
    if isinstance(out, Static):
        return ir.Constant(EMPTY, [])
    return runtime_shape_op(fl, node, args, types, out)


_ = cast


# ---- lists and dicts (tuples whose kind only inference and the boundary see) -----------


@rule(P.tuple_as, P.structure_like)
def lower_retyped(fl, node, args, types, out):
    return coerce(fl, args[0], types[0], out, node)


@rule(P.kind_of)
def lower_kind_of(fl, node, args, types, out):
    if not isinstance(out, Static):
        raise backend_error(f"kind_of typed {out}", node)
    return ir.Constant(EMPTY, [])
