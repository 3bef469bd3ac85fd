"""Forward mode: the tangent transform T on graphs.

In `T(f)` every value is a pair `(x, dx)`: the value and its tangent.  A node
`n = g(a, b)` of `f` becomes `T(n) = T(g)[0](T(a), T(b))`; the T of a primitive is a
small graph `(p(x, y), jvp_p(x, y, dx, dy))` built from its jvp rule; the T of a graph
constant is `(T(h), env_new())`: a function has no tangent of its own (what it
captured carries one), and an empty environment is the zero that `zeros_like` gives a
function, so a branch that makes a function and one that computes a sensitivity join.  Tuples pair up elementwise as they are built (`make_tuple`), so
`tuple_getitem` of a pair is again a pair.

Because the reverse-mode program of `f` is an ordinary graph, `T(grad f)` is
forward-over-reverse: that is `myia.hessian`.
"""


import numpy as np

from ..errors import MyiaError
from ..ir import Apply, Constant, Graph, manage
from ..ir.protocol import is_transform
from ..parser import parse
from ..prim import Primitive
from ..prim import ops as P
from .custom import custom_rule, forward_graph
from .lifting import laid_out_parameters, lifted_copy, lifted_with_layout, prim_arity

_prim_tangents = {}


def T_graph(graph):
    """`T(graph)`, for a graph with no free variables."""
    tg = graph.derived.get("T")
    if tg is None:
        rule, body = custom_rule(graph), forward_graph(graph)
        if body is not graph:  # (checkpoint: forward mode is the body's)
            tg = graph.derived["T"] = T_graph(body)
        elif rule is not None:  # the user's rule, not the body (myia.ad.custom)
            tg = graph.derived["T"] = rule.T_graph(graph)
        else:
            tg = _TTransform(graph).run()
    return tg


class _TTransform:
    def __init__(self, root):
        self.root = root
        self.mng = manage(root)
        if self.mng.free_variables(root):
            raise AssertionError(f"T_graph of {root.name}, which has free variables")
        self.scope = self.mng.scope(root)
        self.tgraphs = {}
        self.tnode = {}

    def run(self):
        for g in self.scope:
            tg = Graph(f"T{g.name}", g.loc)
            tg.flags = {**g.flags, "kind": "tangent"}
            self.tgraphs[g] = tg
            for p in g.parameters:
                tp = tg.add_parameter(p.name, p.loc)
                self.tnode[p] = tp
            # a default is a constant: its tangent is zero
            tg.defaults = {k: (v, P.zeros_like.impl(v)) for k, v in g.defaults.items()}
        self.root.derived["T"] = self.tgraphs[self.root]
        try:
            for g in self.scope:
                tg = self.tgraphs[g]
                for n in self.mng.nodes(g):
                    if isinstance(n, Apply):
                        f = n.inputs[0]
                        if f.__class__ is Constant and is_transform(f.value):
                            # a transform object called (myia.grad(h) named in subset
                            # code): T of it, built for the types of this call
                            callee = Constant(f.value.__myia_T__(), f.loc)
                        elif f.__class__ is Constant and isinstance(f.value, Graph):
                            # a direct call stays direct: inference specializes it per
                            # call, as the primal's (a loop over a tuple of functions
                            # calls its header with a shorter tuple each time)
                            v = f.value
                            callee = Constant(self.tgraphs[v] if v in self.tgraphs
                                              else T_graph(v), f.loc)
                        else:
                            fn = self._tget(f, tg, len(n.inputs) - 1)
                            callee = tg.apply(P.tuple_getitem, fn, 0, loc=n.loc)
                        args = [self._tget(i, tg) for i in n.inputs[1:]]
                        self.tnode[n] = Apply(tg, [callee, *args], n.loc, n.name)
                tg.output = self._tget(g.output, tg)
        except BaseException:
            # a refusal (grad inside subset code) must not leave the half-made graph
            # cached: the next T_graph of this graph would return it
            del self.root.derived["T"]
            raise
        return self.tgraphs[self.root]

    def _tget(self, node, tg, n_args=None):
        if not isinstance(node, Constant):
            return self.tnode[node]
        v = node.value
        if isinstance(v, Graph):
            fn = self.tgraphs[v] if v in self.tgraphs else T_graph(v)
            return tg.apply(P.make_tuple, fn, tg.apply(P.env_new))
        if isinstance(v, Primitive):
            if v.name in ("J", "Jinv"):
                raise _through_runtime_grad(node.loc)
            return tg.apply(P.make_tuple, prim_tangent(v, n_args), tg.apply(P.env_new))
        if hasattr(v, "__myia_J__"):
            raise _through_runtime_grad(node.loc)
        if v.__class__ is np.ndarray and v.dtype.kind == "f":
            # the tangent of an array constant is zeros_like of it, which the optimizer
            # knows to be zero (a plain array of zeros would be multiplied, summed and
            # matrix-multiplied at run time: the seed 1.0 of a gradient, folded into an
            # array by its sum's bprop, made kmeans' jvp over grad do a dead matmul)
            c = Constant(v, node.loc)
            return tg.apply(P.make_tuple, c, tg.apply(P.zeros_like, c))
        return Constant((v, P.zeros_like.impl(v)), node.loc)


def _through_runtime_grad(loc):
    return MyiaError(
        "forward mode (jvp, hessian) of a gradient taken at run time is not supported "
        "yet: grad of a closure, or of a function value inference could not resolve "
        "to one function that captures nothing", loc,
        hint="take grad (or hessian) of a def that receives what the closure captured "
             "as arguments, e.g. hessian(f, argnums=0)(x, a) for f(x, a)")


def prim_tangent(prim, n_args=None):
    """`T(prim)`: pairs in, `(prim(*xs), jvp_prim(*xs, *dxs))` out."""
    if prim is not P.make_tuple:
        n_args = None
    key = (prim, n_args)
    tp = _prim_tangents.get(key)
    if tp is not None:
        return tp
    if prim.name in ("J", "Jinv"):
        raise _through_runtime_grad(None)
    if prim is P.make_tuple:
        n = n_args
    else:
        n = prim_arity(prim)
    tp = Graph(f"T{prim.name}")
    tp.flags = {"kind": "tangent", "core": True}
    pairs = [tp.add_parameter(f"p{i}") for i in range(n)]
    xs = [tp.apply(P.tuple_getitem, p, 0) for p in pairs]
    dxs = [tp.apply(P.tuple_getitem, p, 1) for p in pairs]
    out = tp.apply(prim, *xs)
    if prim is P.make_tuple:
        dout = tp.apply(P.make_tuple, *dxs)
    elif prim.nondiff:
        dout = tp.apply(P.zeros_like, out)
    else:
        dout = tp.apply(_jvp_graph(prim), *xs, *dxs)
    tp.output = tp.apply(P.make_tuple, out, dout)
    _prim_tangents[key] = tp
    return tp


def _jvp_graph(prim):
    return parse(prim.rule("jvp"))  # (parsed once; the library's code: flags["core"])


def jvp_graph(fn_graph):
    """The program `(x1..xn, t1..tn) -> (f(x), df(x)·t)` of a graph without free
    variables."""
    g = Graph(f"jvp_{fn_graph.name}", fn_graph.loc)
    g.flags = {"kind": "tangent"}
    xs = [g.add_parameter(p.name) for p in fn_graph.parameters]
    ts = [g.add_parameter(f"d{p.name}") for p in fn_graph.parameters]
    pairs = [g.apply(P.make_tuple, x, t) for x, t in zip(xs, ts)]
    g.output = g.apply(T_graph(fn_graph), *pairs)
    return g


def lift_closure_T(graph, layout=None):
    """For a graph with free variables, the graph `outer(c1, ..., ck)` that returns T
    of the closure: a function of (value, tangent) pairs returning one.

    What the closure captured has no tangent of its own here (it is held fixed: a jvp
    differentiates with respect to its arguments), so outer pairs each captured value
    with zeros, and T of the lifted program does the rest; a captured function becomes
    its own T.  `layout` (see myia.ad.lifting.lifted_with_layout; None: every captured
    value is a parameter) says which captured values are constants and which are
    closures of known graphs, whose own captured values outer takes instead:
    c1..ck are the parameters, depth first, and `flags["paths"]` gives for each the
    chain of positions that reads it from the closure (position i of what it
    captured, then position j of what that closure captured...), in the order of
    their records, so that specialization reads each from the frame that made the
    closure where it is visible, else from the closure's record (as for J)."""
    _, fvs = lifted_copy(graph)
    if layout is None:
        layout = (("param",),) * len(fvs)
    key = ("lifted T", layout)
    outer = graph.derived.get(key)
    if outer is not None:
        return outer
    lifted = lifted_with_layout(graph, layout)
    outer = Graph(f"T:{graph.name}")
    outer.flags = {"kind": "tangent", "core": True}
    pairs = [outer.apply(P.make_tuple, outer.apply(P.T, cv), outer.apply(P.zeros_like, cv))
             for cv in laid_out_parameters(outer, layout, fvs)]
    inner = Graph(f"T{graph.name}")
    inner.flags = {"kind": "tangent"}
    inner.defaults = {k: (v, P.zeros_like.impl(v)) for k, v in graph.defaults.items()}
    args = [inner.add_parameter(p.name) for p in graph.parameters]
    tl = inner.apply(P.T, Constant(lifted))
    inner.output = inner.apply(tl, *pairs, *args)
    outer.output = Constant(inner)
    graph.derived[key] = outer
    return outer


def uses_forward_mode(graph):
    """Whether the parsed program `graph` (or a graph it reaches) writes `jvp` (or a
    transform made of it: hessian, jet): J of it must wait for its typed program,
    where inference resolved the jvp."""
    found = graph.derived.get("writes jvp")
    if found is None:
        mng = manage(graph)
        found = graph.derived["writes jvp"] = any(
            i.__class__ is Constant and getattr(i.value, "writes_jvp", False)
            for g in mng.graphs for node in mng.nodes(g) if node.is_apply()
            for i in node.inputs) or any(  # (a function with a custom_jvp rule itself)
            getattr(custom_rule(g), "writes_jvp", False) for g in mng.graphs)
    return found


class JVPMacro:
    """`jvp(fn, primals, tangents)` as a value inside subset code: `(fn(*primals),
    the derivative of fn at primals along tangents)`, JAX's conventions.  Its program,
    built for the number of primals, pairs each primal with its tangent and calls
    `T(fn)` (the T primitive: inference resolves it for the function fn is, its
    program for these types when fn captures nothing, see myia.infer.tangent)."""

    param_names = ("fn", "primals", "tangents")
    defaults = {}
    ir_name = "jvp"
    writes_jvp = True  # (see uses_forward_mode)

    def __init__(self):
        self._graphs = {}

    def expand(self, n):
        g = self._graphs.get(n)
        if g is None:
            g = Graph("jvp")
            g.flags = {"kind": "tangent", "core": True}
            f, primals, tangents = (g.add_parameter(name) for name in self.param_names)
            pairs = [g.apply(P.make_tuple, g.apply(P.tuple_getitem, primals, i),
                             g.apply(P.tuple_getitem, tangents, i)) for i in range(n)]
            out = g.apply(g.apply(P.T, f, name="Tf"), *pairs)
            g.output = g.apply(P.make_tuple, g.apply(P.tuple_getitem, out, 0),
                               g.apply(P.tuple_getitem, out, 1))
            self._graphs[n] = g
        return g

    def __myia_J__(self):
        # (J meets the parsed program only where its typed program could not be
        # differentiated: a jvp resolved at run time)
        raise MyiaError("reverse mode over a jvp that is resolved only at run time (the "
                        "jvp of a function value chosen at run time among several), or "
                        "of a program that calls jvp before its types are known",
                        hint="choose the function with an `if` around jvp calls of "
                             "known functions")

    def __repr__(self):
        return "<jvp macro>"


JVP = JVPMacro()


__all__ = ["JVP", "JVPMacro", "T_graph", "uses_forward_mode", "jvp_graph", "lift_closure_T", "prim_tangent",
           "manage"]
