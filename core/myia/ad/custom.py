"""Derivative rules written by the user: J of a function marked `custom_vjp`.

`myia.custom_vjp(f)` with `f.defvjp(fwd, bwd)` marks f's graph with a `CustomVJP`
rule (`flags["custom_vjp"]`).  The optimizer never inlines such a graph nor changes
its parameters (`flags["noinline"]`; see myia.opt.interproc), so a program that calls
it still calls it when J meets the call, and J builds ▶f from the rule instead of
from f's body:

    ▶f(x1..xn) = (r[0], ◀f)            r = fwd(x1..xn), a pair (output, residuals)
    ◀f(dout)   = (env(), d[0] .. d[n-1])  d = bwd(r[1], dout), one cotangent per xi

fwd and bwd are ordinary subset functions: J of the program that calls ▶f meets
them as any other code, so a second derivative differentiates the rule (as in JAX).
Forward mode (jvp, jet, jacfwd) of such a function is refused, as JAX refuses it:
the rule says nothing about tangents.
"""

from ..errors import MyiaGradError, MyiaTypeError
from ..ir import Constant, Graph
from ..parser import parse
from ..prim import compile_time
from ..prim import ops as P


class CustomVJP:
    """The rule of a function marked custom_vjp: the parsed graphs of fwd and bwd."""

    def __init__(self, name, fwd, bwd):
        self.name = name  # the function's name, for messages
        self.fwd = fwd
        self.bwd = bwd


def custom_rule(graph):
    """The CustomVJP rule of `graph`, or None."""
    return graph.flags.get("custom_vjp")


def custom_J_graph(graph):
    """`▶graph` built from its rule (see the module's docstring)."""
    rule = graph.flags["custom_vjp"]
    n = len(graph.parameters)
    fp = Graph(f"▶{graph.name}", graph.loc)
    fp.flags = {"kind": "fprop"}
    xs = []
    for p in graph.parameters:
        x = fp.add_parameter(p.name, p.loc)
        x.primal = p
        xs.append(x)
    floc = rule.fwd.loc
    r = fp.apply(Constant(rule.fwd, floc), *xs, loc=floc, name="fwd")
    # (what fwd and bwd return goes through a check, located at their defs: inference
    # computes it, or says what is wrong)
    r = fp.apply(_checked_graph(_fwd_checked), r, rule.name, loc=floc)
    out = fp.apply(P.tuple_getitem, r, 0, loc=floc, name="out")
    res = fp.apply(P.tuple_getitem, r, 1, loc=floc, name="residuals")
    out.primal = graph.output
    bp = Graph(f"◀{graph.name}", graph.loc)
    bp.flags = {"kind": "bprop"}
    dout = bp.add_parameter("dout")
    bloc = rule.bwd.loc
    d = bp.apply(Constant(rule.bwd, bloc), res, dout, loc=bloc, name="bwd")
    d = bp.apply(_checked_graph(_bwd_checked), d, n, rule.name, loc=bloc)
    ds = []
    for i, p in enumerate(graph.parameters):
        di = bp.apply(P.tuple_getitem, d, i, loc=bloc, name=f"∂{p.name}")
        di.adjoint = p
        ds.append(di)
    bp.output = bp.apply(P.make_tuple, bp.apply(P.env_new), *ds)
    fp.output = fp.apply(P.make_tuple, out, Constant(bp))
    return fp


def _length(x):
    if P.kind_of(x) is None:
        return -1  # (not a tuple)
    return len(x)


def _fwd_checked(r, name):
    return (r[_fwd_part(_length(r), 0, name)], r[_fwd_part(_length(r), 1, name)])


def _bwd_checked(d, n, name):
    return d[:_bwd_count(_length(d), n, name)]


def _checked_graph(fn):
    return parse(fn)  # (parsed once)


@compile_time
def _fwd_part(length, i, name):
    """i, once fwd's result is checked to be a pair (output, residuals)"""
    if length != 2:
        got = "a value that is not a tuple" if length < 0 else f"a tuple of {length}"
        raise MyiaTypeError(
            f"the fwd rule of {name} returned {got}; it must return a pair "
            f"(output, residuals)", hint="return `out, (values bwd needs...)` from fwd")
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
    """The error for forward mode (`what`: "jvp", "jet") of a custom_vjp function."""
    rule = graph.flags["custom_vjp"]
    return MyiaGradError(
        f"{what} of {rule.name}, which has a custom_vjp rule: the rule gives reverse-mode "
        f"derivatives only (as in JAX)", graph.loc,
        hint="use grad or vjp through it, or define its derivative with custom_jvp")
