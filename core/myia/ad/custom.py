"""Derivative rules written by the user: J and T of a function marked `custom_vjp` or
`custom_jvp` (JAX's `jax.custom_vjp`, `jax.custom_jvp`), and of a function marked
`checkpoint`, whose backward pass computes its forward pass again.

The API (myia.api_custom) gives such a function a copy of its graph that carries the
rule (`flags["custom"]`, a CustomVJP, a CustomJVP or a Checkpoint).  The optimizer never inlines
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

  checkpoint (no rule: JAX's `jax.checkpoint`, rematerialization):
    ▶f(x1..xn) = (f(x1..xn), ◀f)     keeps only the arguments
    ◀f(dout)   = J(f)(x1..xn)[1](dout): the forward pass again, then the backward
    (each in a graph of its own, whose memory is freed when it returns: Checkpoint)
    T(f), jet: the body's
"""

from ..errors import MyiaGradError, MyiaTypeError
from ..ir import Constant, Graph, manage
from ..parser import parse
from ..prim import compile_time
from ..prim import ops as P


class CustomVJP:
    """The rule of a function marked custom_vjp: the parsed graphs of fwd and bwd."""

    kind = "custom_vjp"
    forward_body = None  # (forward mode has no body to fall back on: see T_graph)

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
        bp, dout = _backpropagator(graph)
        bloc = self.bwd.loc
        d = bp.apply(Constant(self.bwd, bloc), res, dout, loc=bloc, name="bwd")
        d = bp.apply(_checked_graph(_bwd_checked), d, len(xs), self.name, loc=bloc)
        return _finish(fp, out, bp, d, graph, bloc)

    def T_graph(self, graph):
        raise refuse_forward(graph, "jvp")


class CustomJVP:
    """The rule of a function marked custom_jvp: the parsed graph of jvp."""

    kind = "custom_jvp"
    forward_body = None
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
        transpose = fp.apply(P.tuple_getitem, pair, 1, loc=loc, name="transpose")
        bp, dout = _backpropagator(graph)
        d = bp.apply(transpose, dout, loc=loc, name="d")
        # (J of this graph as it is, untyped, would meet the rule's call of the function
        # inside the transposed map, whose J is this graph again: see refuse_J_of_J)
        fp.flags["transposes"] = self
        return _finish(fp, out, bp, d, graph, loc)


class Checkpoint:
    """The rule of a function marked checkpoint (JAX's `jax.checkpoint`): its backward
    pass computes its forward pass again from the arguments, instead of keeping what
    the forward pass computed.

      ▶f(x1..xn) = (once(x1..xn), ◀f)     (the primal call: nothing kept but the xi)
      ◀f(dout)   = (env(), d1 .. dn)       (d1..dn) = again(dout, x1..xn)
      again(dout, x1..xn) = J(body)(x1..xn)[1](dout)[1:]
      once(x1..xn) = body(x1..xn)     (or as the derivative computes it: see once)
                 graphs of their own that the optimizer does not inline, whose memory
                 the native backend frees when they return (`flags["release_on_return"]`):
                 the values of the forward pass, made again, live only while it runs

    Forward mode (T, jet) keeps nothing from one pass to the next: it is the body's."""

    kind = "checkpoint"

    def __init__(self, name, body):
        self.name = name
        self.body = body  # the function's own graph, without the rule
        self._again = None
        self._once = None

    @property
    def forward_body(self):
        return self.body

    def J_graph(self, graph):
        fp, xs = _transform_graph(f"▶{graph.name}", graph, "fprop")
        loc = graph.loc
        out = fp.apply(Constant(self.once()), *xs, loc=loc, name="out")
        bp, dout = _backpropagator(graph)
        d = bp.apply(Constant(self.again()), dout, *xs, loc=loc, name="d")
        return _finish(fp, out, bp, d, graph, loc)

    def once(self):
        """The graph (x1..xn) -> body(x1..xn), or J(body)(x1..xn)[0] for a body that
        calls a function with a rule: the output as the derivative of the body
        computes it (with the rule's fwd: a second derivative then differentiates
        what it would without checkpoint).  (Not for the others: a loop's forward
        pass would keep the residuals it throws away.)"""
        if self._once is None:
            body = self.body
            g = self._once = Graph(f"{body.name}:once", body.loc)
            g.flags = {"kind": "fprop", "noinline": True, "release_on_return": True}
            xs = [g.add_parameter(p.name, p.loc) for p in body.parameters]
            if _reaches_a_rule(body):
                r = g.apply(g.apply(P.J, Constant(body), loc=body.loc), *xs, loc=body.loc)
                g.output = g.apply(P.tuple_getitem, r, 0, name="out")
            else:
                g.output = g.apply(Constant(body), *xs, loc=body.loc)
        return self._once

    def again(self):
        """The graph (dout, x1..xn) -> (d1..dn): the body's forward pass run again, and
        its backward pass."""
        if self._again is None:
            body = self.body
            g = Graph(f"◀{body.name}:again", body.loc)
            g.flags = {"kind": "bprop", "noinline": True, "release_on_return": True}
            dout = g.add_parameter("dout")
            xs = [g.add_parameter(p.name, p.loc) for p in body.parameters]
            r = g.apply(g.apply(P.J, Constant(body), loc=body.loc), *xs, loc=body.loc,
                        name="again")
            d = g.apply(g.apply(P.tuple_getitem, r, 1), dout, loc=body.loc)
            g.output = g.apply(P.make_tuple, *[
                g.apply(P.tuple_getitem, d, i + 1, name=f"∂{p.name}")
                for i, p in enumerate(body.parameters)])
            self._again = g
        return self._again


class CheckpointMacro:
    """`checkpoint(fn)` as a value inside subset code: for fn a def that captures
    nothing, the same function as `myia.checkpoint(fn)` from Python (inference makes
    it: myia.infer.infer.expand_checkpoint)."""

    param_names = ("fn",)
    defaults = {}
    ir_name = "checkpoint"
    writes_jvp = True  # (J of a program that calls it waits for its typed program)
    static_transform = None  # fn -> its CheckpointFunction (set by myia.in_subset)

    def __myia_J__(self):
        # (J of a program before inference resolved the macro: a higher derivative)
        raise MyiaGradError(
            "vjp, and jacrev or hessian other than of float arrays, of a program that calls "
            "checkpoint inside are not supported yet (grad, jvp, jacfwd, jet, grad of "
            "grad, and jacrev and hessian of float arrays are)",
            hint="checkpoint the function outside the program, `ck = "
                 "myia.checkpoint(segment)` at module level (or in a cell), and call ck "
                 "in the program: then every derivative works")

    def __repr__(self):
        return "<checkpoint macro>"


CHECKPOINT = CheckpointMacro()


def _reaches_a_rule(graph):
    """Whether `graph` calls a function with a custom_vjp or custom_jvp rule (the
    constant of the function, or of its value graph), directly or through the graphs
    it reaches."""
    mng = manage(graph)

    def has_rule(v):  # (a function object of the API says so: myia.api_custom)
        v = v.flags.get("transform", v) if isinstance(v, Graph) else v
        return getattr(v, "has_rule", False) \
            or isinstance(v, Graph) and isinstance(v.flags.get("custom"), (CustomVJP, CustomJVP))

    return any(has_rule(g) for g in mng.graphs) or any(
        i.__class__ is Constant and has_rule(i.value)
        for g in mng.graphs for node in mng.nodes(g) if node.is_apply() for i in node.inputs)


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
    """The CustomVJP, CustomJVP or Checkpoint rule of `graph`, or None."""
    return graph.flags.get("custom")


def forward_graph(graph):
    """What forward mode transforms for `graph`: the body of a checkpoint function
    (see Checkpoint), else `graph` itself."""
    rule = graph.flags.get("custom")
    return graph if rule is None or rule.forward_body is None else rule.forward_body


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


def _backpropagator(graph):
    """A new ◀graph and its parameter dout."""
    bp = Graph(f"◀{graph.name}", graph.loc)
    bp.flags = {"kind": "bprop"}
    return bp, bp.add_parameter("dout")


def _finish(fp, out, bp, d, graph, loc):
    """Make ▶graph `fp` return (out, bp) and ◀graph `bp` return (env(), d[0], ...,
    d[n-1]), from the tuple `d` of the cotangents of `graph`'s parameters."""
    out.primal = graph.output
    ds = []
    for i, p in enumerate(graph.parameters):
        di = bp.apply(P.tuple_getitem, d, i, loc=loc, name=f"∂{p.name}")
        di.adjoint = p
        ds.append(di)
    bp.output = bp.apply(P.make_tuple, bp.apply(P.env_new), *ds)
    fp.output = fp.apply(P.make_tuple, out, Constant(bp))
    return fp


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
