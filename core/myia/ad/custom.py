"""Derivative rules written by the user: J and T of a function marked `custom_vjp` or
`custom_jvp` (JAX's `jax.custom_vjp`, `jax.custom_jvp`).

The API (myia.api_custom) gives such a function a copy of its graph that carries the
rule (`flags["custom"]`, a CustomVJP or a CustomJVP).  The optimizer never inlines
that graph nor changes its parameters (`flags["noinline"]`; myia.opt.interproc), so a
program that calls it still calls it when J or T meets the call, and they build the
transform from the rule instead of from the body:

  custom_vjp (fwd, bwd):
    ▶f(x1..xn) = (r[0], ◀f)            r = fwd(x1..xn), a pair (output, residuals)
    ◀f(dout)   = (env(), d[0] .. d[n-1])  d = bwd(r[1], dout), one cotangent per xi
    T(f): refused (as JAX refuses it: the rule says nothing about tangents)

  custom_jvp (jvp):
    Tf((x1, t1) .. (xn, tn)) = jvp((x1..xn), (t1..tn)), a pair (output, tangent)
    ▶f(x1..xn) = (jvp(xs, 0)[0], ◀f)   ◀f(dout) = (env(), the transpose of the
                 linear map ts -> jvp(xs, ts)[1] applied to dout): J of that map,
                 a closure, written in the subset below (`_jvp_rule_fprop`)

The rules are ordinary subset functions: a second derivative differentiates them.
A jet (Taylor mode) of either is refused: it would need a rule per order.
"""

from ..errors import MyiaGradError, MyiaTypeError
from ..ir import Constant, Graph
from ..parser import parse
from ..prim import compile_time
from ..prim import ops as P


class CustomVJP:
    """The rule of a function marked custom_vjp: the parsed graphs of fwd and bwd."""

    kind = "custom_vjp"

    def __init__(self, name, fwd, bwd):
        self.name = name  # the function's name, for messages
        self.fwd = fwd
        self.bwd = bwd

    def J_graph(self, graph):
        """`▶graph` from fwd and bwd (see the module's docstring)."""
        fp, xs = _transform_graph(f"▶{graph.name}", graph, "fprop")
        floc = self.fwd.loc
        r = fp.apply(Constant(self.fwd, floc), *xs, loc=floc, name="fwd")
        # (what fwd and bwd return goes through a check, located at their defs:
        # inference computes it, or says what is wrong)
        r = fp.apply(_checked_graph(_pair_checked), r, "fwd", self.name, loc=floc)
        out = fp.apply(P.tuple_getitem, r, 0, loc=floc, name="out")
        res = fp.apply(P.tuple_getitem, r, 1, loc=floc, name="residuals")
        out.primal = graph.output
        bp = Graph(f"◀{graph.name}", graph.loc)
        bp.flags = {"kind": "bprop"}
        dout = bp.add_parameter("dout")
        bloc = self.bwd.loc
        d = bp.apply(Constant(self.bwd, bloc), res, dout, loc=bloc, name="bwd")
        d = bp.apply(_checked_graph(_bwd_checked), d, len(xs), self.name, loc=bloc)
        bp.output = _with_env(bp, d, graph, bloc)
        fp.output = fp.apply(P.make_tuple, out, Constant(bp))
        return fp

    def T_graph(self, graph):
        raise refuse_forward(graph, "jvp")


class CustomJVP:
    """The rule of a function marked custom_jvp: the parsed graph of jvp."""

    kind = "custom_jvp"
    writes_jvp = True  # (J of it waits for its typed program: see CustomJVPFunction)

    def __init__(self, name, jvp):
        self.name = name
        self.jvp = jvp

    def T_graph(self, graph):
        """`T(graph)`: the rule applied to the primals and tangents of the pairs."""
        tg, pairs = _transform_graph(f"T{graph.name}", graph, "tangent")
        loc = self.jvp.loc
        xs = tg.apply(P.make_tuple, *[tg.apply(P.tuple_getitem, p, 0) for p in pairs])
        ts = tg.apply(P.make_tuple, *[tg.apply(P.tuple_getitem, p, 1) for p in pairs])
        r = tg.apply(Constant(self.jvp, loc), xs, ts, loc=loc, name="jvp")
        tg.output = tg.apply(_checked_graph(_pair_checked), r, "jvp", self.name, loc=loc)
        return tg

    def J_graph(self, graph):
        """`▶graph`: the rule's output, and the transpose of its tangent map."""
        fp, xs = _transform_graph(f"▶{graph.name}", graph, "fprop")
        loc = self.jvp.loc
        pair = fp.apply(_checked_graph(_jvp_rule_fprop), Constant(self.jvp, loc),
                        fp.apply(P.make_tuple, *xs), self.name, loc=loc)
        out = fp.apply(P.tuple_getitem, pair, 0, loc=loc, name="out")
        out.primal = graph.output
        transpose = fp.apply(P.tuple_getitem, pair, 1, loc=loc, name="transpose")
        bp = Graph(f"◀{graph.name}", graph.loc)
        bp.flags = {"kind": "bprop"}
        dout = bp.add_parameter("dout")
        d = bp.apply(transpose, dout, loc=loc, name="d")
        bp.output = _with_env(bp, d, graph, loc)
        fp.output = fp.apply(P.make_tuple, out, Constant(bp))
        # (J of this graph as it is, untyped, would meet the rule's call of the function
        # inside the transposed map, whose J is this graph again: see refuse_J_of_J)
        fp.flags["transposes"] = self
        return fp


def refuse_J_of_J(graph):
    """The error for J of the untyped ▶f of a custom_jvp function: the paths that
    differentiate a reverse-mode derivative without its optimized program (vjp or
    jacrev of grad of it) would transpose the rule's primal calls too, without end."""
    rule = graph.flags["transposes"]
    return MyiaGradError(
        f"reverse mode over the reverse mode of {rule.name} (which has a custom_jvp rule) "
        f"through vjp or jacrev is not supported yet", rule.jvp.loc,
        hint="use grad of grad, hessian, or jvp of grad: they differentiate the "
             "optimized derivative")


def custom_rule(graph):
    """The CustomVJP or CustomJVP rule of `graph`, or None."""
    return graph.flags.get("custom")


def _transform_graph(name, graph, kind):
    """A new graph named `name` with the parameters of `graph`, and its parameters."""
    g = Graph(name, graph.loc)
    g.flags = {"kind": kind}
    params = []
    for p in graph.parameters:
        x = g.add_parameter(p.name, p.loc)
        x.primal = p
        params.append(x)
    return g, params


def _with_env(bp, d, graph, loc):
    """(env(), d[0], ..., d[n-1]): a backpropagator's output, from the tuple `d` of
    the cotangents of `graph`'s parameters."""
    ds = []
    for i, p in enumerate(graph.parameters):
        di = bp.apply(P.tuple_getitem, d, i, loc=loc, name=f"∂{p.name}")
        di.adjoint = p
        ds.append(di)
    return bp.apply(P.make_tuple, bp.apply(P.env_new), *ds)


# ---- written in the subset --------------------------------------------------------------


def _jvp_rule_fprop(rule, xs, name):
    """(the output of `rule` at xs, the function dout -> the cotangents of xs): the
    tangent map ts -> rule(xs, ts)[1] is linear, and its transpose is the
    backpropagator of J of it, at any point of the tangents' types: xs itself.  (The
    output is the rule's at that point too: one signature of the rule for both
    calls, with no constant among its arguments for a specialization to fold.)"""
    out = _pair_checked(rule(xs, xs), "jvp", name)[0]

    def tangent_out(ts):
        return _pair_checked(rule(xs, ts), "jvp", name)[1]

    def transpose(dout):
        back = P.J(tangent_out)(xs)[1]
        return back(dout)[1]

    return out, transpose


def _length(x):
    if P.kind_of(x) is None:
        return -1  # (not a tuple)
    return len(x)


def _pair_checked(r, role, name):
    return (r[_pair_part(_length(r), 0, role, name)], r[_pair_part(_length(r), 1, role, name)])


def _bwd_checked(d, n, name):
    return d[:_bwd_count(_length(d), n, name)]


def _checked_graph(fn):
    return parse(fn)  # (parsed once)


@compile_time
def _pair_part(length, i, role, name):
    """i, once the result of the rule `role` is checked to be a pair"""
    if length != 2:
        got = "a value that is not a tuple" if length < 0 else f"a tuple of {length}"
        what, hint = {
            "fwd": ("(output, residuals)", "return `out, (values bwd needs...)` from fwd"),
            "jvp": ("(output, tangent of the output)",
                    "return `f(*primals), the tangent` from the jvp rule")}[role]
        raise MyiaTypeError(f"the {role} rule of {name} returned {got}; it must return "
                            f"a pair {what}", hint=hint)
    return i


@compile_time
def _bwd_count(length, n, name):
    """n, once bwd's result is checked to hold one cotangent per argument"""
    if length != n:
        got = "a value that is not a tuple" if length < 0 else f"a tuple of {length}"
        raise MyiaTypeError(
            f"the bwd rule of {name} returned {got}; it must return a tuple of {n} "
            f"cotangent{'s' if n != 1 else ''}, one per argument of {name}",
            hint="return a tuple even for one argument: `return (d,)`" if length < 0 else
            "in the order of the arguments; 0.0 (or zeros) for one without a derivative")
    return n


def refuse_forward(graph, what):
    """The error for forward mode (`what`: "jvp", "jet") of a function with a rule."""
    rule = custom_rule(graph)
    if what == "jet":
        return MyiaGradError(
            f"jet of {rule.name}, which has a {rule.kind} rule: a rule gives first "
            f"derivatives, and Taylor mode needs every order", graph.loc,
            hint="take nested jvps (or grads) through it, or a jet of the function "
                 "without its rule")
    return MyiaGradError(
        f"{what} of {rule.name}, which has a custom_vjp rule: the rule gives reverse-mode "
        f"derivatives only (as in JAX)", graph.loc,
        hint="use grad or vjp through it, or define its derivative with custom_jvp")
