"""Taylor mode: the jet transform on graphs.

In the jet of `f` to order K every value is a *series*: its K + 1 Taylor coefficients
`x_k = x^(k)(0) / k!` along the line `x + t` of one argument.  A node `n = p(a, b)` of
`f` becomes the series of `p` at the series of `a` and `b`, built by `p`'s Taylor rule
(`@jet(p)`, next to the primitive; the arithmetic is `myia.prim.series`).  It is one
forward pass of truncated polynomial arithmetic: no derivative of a derivative is
ever built, so order 10 costs about 10^2 / 2 products per nonlinear operation.

Inside a graph a coefficient may be a structural zero (`series.ZERO`: the higher
coefficients of constants, integers, comparisons, the arguments not differentiated),
and products with it are never built.  Across a call, a branch or a loop a series is
a tuple of K + 1 values (zeros made real): every graph other than the entry takes and
returns such tuples.  A function value's series is its jet, then zeros.

`jet_entry_graph(f, K, argnum)` is the program `(x1..xn) -> (f, f', ..., f^(K))` of
derivatives along `x_argnum + t` (for an array, every element moves together).
"""

from math import factorial

from ..errors import MyiaError
from ..ir import Apply, Constant, Graph, manage
from ..ir.protocol import is_transform
from ..prim import Primitive
from ..prim import ops as P
from ..parser import parse
from ..prim.series import (ZERO, Term, apply, building, cauchy, derivative, integrate,
                           materialize)
from .custom import custom_rule, forward_graph, refuse_forward
from .forward import _jvp_graph
from .lifting import laid_out_parameters, lifted_copy, lifted_with_layout, prim_arity

#: primitives whose values a jet cannot follow (closure records; J left for run time)
_NO_SERIES = {"J", "Jinv", "make_closure", "closure_bound"}


def jet_graph(graph, order):
    """The jet of `graph` (no free variables): each parameter and the output are
    tuples of `order + 1` Taylor coefficients."""
    graph = forward_graph(graph)
    jg = graph.derived.get(("jet", order))
    if jg is None:
        jg = _JetTransform(graph, order).run()
    return jg


def jet_entry_graph(graph, order, argnum):
    """The program `(x1..xn) -> (f(x), f'(x), ..., f^(order)(x))`, derivatives along
    `x_argnum + t`."""
    return _JetTransform(forward_graph(graph), order, seed=argnum).run()


class _JetTransform:
    def __init__(self, root, order, seed=None):
        self.root, self.K, self.seed = root, order, seed
        if custom_rule(root) is not None:
            raise refuse_forward(root, "jet")
        self.mng = manage(root)
        if self.mng.free_variables(root):
            raise AssertionError(f"the jet of {root.name}, which has free variables")
        self.scope = self.mng.scope(root)
        self.jgraphs = {}
        self.series = {}

    def _is_entry(self, g):
        return g is self.root and self.seed is not None

    def run(self):
        K = self.K
        for g in self.scope:
            name = f"jet{K}_{g.name}"
            jg = Graph(name, g.loc)
            jg.flags = {**g.flags, "kind": "jet"}
            self.jgraphs[g] = jg
            entry = self._is_entry(g)
            for i, p in enumerate(g.parameters):
                jp = jg.add_parameter(p.name, p.loc)
                with building(jg, p.loc):
                    if entry:
                        x = jp
                        if i == self.seed:  # (an integer is refused: no derivative)
                            x = apply(P.differentiable, jp,
                                      f"argument {i} ({p.name!r}) of {g.name}")
                        seed = [Term(x)] + [ZERO] * K
                        if i == self.seed and K >= 1:
                            seed[1] = Term(_one_like(jp, p))
                        self.series[p] = seed
                    else:
                        self.series[p] = [Term(apply(P.tuple_getitem, jp, k))
                                          for k in range(K + 1)]
            if entry:
                jg.defaults = dict(g.defaults)
            else:
                jg.defaults = {k: (v,) + (P.zeros_like.impl(v),) * K
                               for k, v in g.defaults.items()}
        cache = None if self.seed is not None else ("jet", K)
        if cache is not None:  # a recursive call finds it while it is being built
            self.root.derived[cache] = self.jgraphs[self.root]
        try:
            for g in self.scope:
                jg = self.jgraphs[g]
                for n in self.mng.nodes(g):
                    if isinstance(n, Apply):
                        with building(jg, n.loc):
                            self.series[n] = self._apply(n)
                with building(jg, g.loc):
                    out = self._get(g.output)
                    jg.output = self._derivatives(out) if self._is_entry(g) else _pack(out)
        except BaseException:
            # a refusal must not leave the half-made graph cached
            if cache is not None:
                del self.root.derived[cache]
            raise
        return self.jgraphs[self.root]

    # ---- values -----------------------------------------------------------------------

    def _get(self, node):
        if not isinstance(node, Constant):
            return self.series[node]
        v = node.value
        if isinstance(v, Graph):
            return self._constant(self._jet_of(v), node)
        if isinstance(v, Primitive):
            return self._constant(prim_jet_graph(v, self.K, node), node)
        if is_transform(v):
            # a transform object named in subset code (`dh = myia.grad(h)`), met here
            # only where the jet takes a parsed program: the jet of its generic program
            return self._constant(self._jet_of(v.__myia_graph__()), node)
        if hasattr(v, "__myia_graph__") or hasattr(v, "__myia_J__"):
            raise MyiaError(
                "jet cannot follow a transform (grad...) written inside subset code",
                node.loc, hint="apply myia.jet from Python to the function itself, "
                               "or take myia.jet of myia.grad(f)")
        return self._constant(v, node)

    def _constant(self, v, node):
        return [Term(Constant(v, node.loc))] + [ZERO] * self.K

    def _jet_of(self, g):
        if g in self.jgraphs and not self._is_entry(g):
            return self.jgraphs[g]
        return jet_graph(g, self.K)

    def _apply(self, n):
        fn = n.inputs[0]
        args = [self._get(i) for i in n.inputs[1:]]
        if fn.is_constant(Primitive):
            return prim_series(fn.value, args, n, self.K)
        callee = Constant(self._jet_of(fn.value), fn.loc) if fn.is_constant(Graph) \
            else self._get(fn)[0].node
        out = apply(callee, *(_pack(a) for a in args))
        return [Term(apply(P.tuple_getitem, out, k)) for k in range(self.K + 1)]

    def _derivatives(self, y):
        """The output of the entry: the value and its derivatives, k! y_k."""
        return apply(P.make_tuple, y[0].node, *(
            materialize(c * float(factorial(k)), y[0]) for k, c in enumerate(y) if k))


def _one_like(node, param):
    # a float scalar's seed is the constant 1.0, which the optimizer multiplies away
    ab = getattr(param, "abstract", None)
    if getattr(ab, "dtype", None) == "float64" and not hasattr(ab, "shape"):
        return Constant(1.0)
    return apply(P.ones_like, node)


def _pack(series):
    """A series as one value: the tuple of its coefficients, zeros made real."""
    return apply(P.make_tuple, *(materialize(c, series[0]) for c in series))


def prim_series(prim, args, node=None, order=None):
    """The series of `prim` applied to the series `args`, by its Taylor rule."""
    # the order is given: a primitive of no argument (make_tuple()) still needs K + 1 terms
    K = order if order is not None else len(args[0]) - 1 if args else 0
    loc = node.loc if node is not None else None
    if prim.name in _NO_SERIES:
        raise MyiaError(f"jet cannot follow {prim.name} (a closure record or a transform "
                        "left for run time)", loc,
                        hint="take the jet of a function that returns its value, "
                             "without closures made at run time")
    out = Term(apply(prim, *(a[0].node for a in args)))
    if prim.nondiff or not args:
        return [out] + [ZERO] * K
    rule = prim.rules.get("jet")
    if rule is None:
        raise MyiaError(f"jet has no Taylor rule for the primitive {prim.name!r}", loc,
                        hint="define one with @jet next to the primitive in myia/prim/, "
                             "or use nested myia.grad for this function")
    if callable(rule):
        return rule(out, *args)
    kind, active = rule
    if kind == "derivative":  # y' = fn(x) x', fn a subset function (derivative_is)
        return _by_derivative(out, args[0], active)
    active = range(len(args)) if active is None else active
    series = [out]
    for k in range(1, K + 1):
        if all(args[i][k] is ZERO for i in active):
            series.append(ZERO)
        elif kind == "linear":
            series.append(Term(apply(prim, *(
                materialize(a[k], a[0]) if i in active else a[0].node
                for i, a in enumerate(args)))))
        else:  # piecewise linear: the jvp at the values, the k-th coefficients as tangents
            series.append(Term(apply(_jvp_graph(prim), *(a[0].node for a in args),
                                     *(materialize(a[k], a[0]) for a in args))))
    return series


def _by_derivative(out, x, fn):
    """The series of y with y' = fn(x) x': the series of fn(x) to order K - 1 is the jet
    of fn's graph (Taylor mode through fn's own primitives), applied to x's first K
    coefficients; y is the integral of its product with the series of x'."""
    dx = derivative(x)
    if all(t is ZERO for t in dx):
        return [out] + [ZERO] * len(dx)
    K = len(dx)
    jf = apply(Constant(jet_graph(parse(fn), K - 1)), _pack(x[:K]))
    f = [Term(apply(P.tuple_getitem, jf, k)) for k in range(K)]
    return integrate(out, cauchy(f, dx))


_prim_jets = {}


def prim_jet_graph(prim, order, node=None):
    """The jet of a primitive used as a value: series tuples in, a series tuple out."""
    key = (prim, order)
    g = _prim_jets.get(key)
    if g is None:
        if prim is P.make_tuple:
            raise MyiaError("jet cannot follow make_tuple passed as a value",
                            node.loc if node is not None else None)
        g = Graph(f"jet{order}_{prim.name}")
        g.flags = {"kind": "jet", "core": True}
        params = [g.add_parameter(f"p{i}") for i in range(prim_arity(prim))]
        with building(g):
            args = [[Term(apply(P.tuple_getitem, p, k)) for k in range(order + 1)]
                    for p in params]
            g.output = _pack(prim_series(prim, args, node, order))
        _prim_jets[key] = g
    return g


def lift_closure_jet(graph, layout, order, argnums, jet_of):
    """For a closure of `graph` (what it captured laid out by `layout`, see
    myia.ad.lifting.lifted_with_layout), the graph `outer(c1, ..., ck)` that returns
    `jet(closure, order, argnums)`: a function of the closure's arguments calling the
    jet of the lifted program W(c1..ck, args...) along argument `argnums + k`, so what
    the closure captured is held fixed.  `jet_of(W, order, argnum)` makes the transform
    object (myia.jet: built per call types, from W's optimized program);
    `flags["paths"]` says where specialization reads each ci from (see lift_closure_T)."""
    key = ("lifted jet", layout, order, argnums)
    outer = graph.derived.get(key)
    if outer is not None:
        return outer
    _, fvs = lifted_copy(graph)
    outer = Graph(f"jet:{graph.name}")
    outer.flags = {"core": True}
    captured = laid_out_parameters(outer, layout, fvs)
    jw = jet_of(lifted_with_layout(graph, layout), order, argnums + len(captured))
    inner = Graph(f"jet{order}_{graph.name}")
    inner.defaults = dict(graph.defaults)
    args = [inner.add_parameter(p.name) for p in graph.parameters]
    inner.output = inner.apply(Constant(jw), *captured, *args)
    outer.output = Constant(inner)
    graph.derived[key] = outer
    return outer


__all__ = ["jet_graph", "jet_entry_graph", "lift_closure_jet", "prim_series",
           "prim_jet_graph"]


class JetMacro:
    """`jet(fn, order, argnums=0)` as a value inside subset code: the function that
    returns fn's value and its first `order` derivatives along argument `argnums`,
    as `myia.jet` from Python.  Inference makes it the same transform object (built
    per call types from fn's optimized program) when fn is one known function that
    captures nothing, and for a closure the jet of its lifted program with what it
    captured held fixed (myia.infer.tangent.expand_jet)."""

    param_names = ("fn", "order", "argnums")
    defaults = {"argnums": 0}
    ir_name = "jet"
    writes_jvp = True  # (J of a program that calls it waits for its typed program)

    def __myia_J__(self):
        raise MyiaError("a derivative of a program that calls jet inside, before it is "
                        "typed", hint="take the jet from Python, or grad of a def that "
                                      "does not call jet")

    def __repr__(self):
        return "<jet macro>"


JET = JetMacro()

