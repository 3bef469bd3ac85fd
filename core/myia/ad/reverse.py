"""Reverse mode: the J transform on graphs.

For a graph `f`, `J(f)` is the graph `▶f`: it takes the same arguments and returns a
pair `(value, ◀f)`, where the backpropagator `◀f` is a closure nested in `▶f`:
`◀f(dout)` returns `(env, d_arg1, ..., d_argn)`.  Nothing is recorded at run time:
the derivative is just another graph, so it can be optimized, compiled, drawn, and
transformed again (`J(J(f))`).

    primal node   n = g(a, b)              in f
    forward       pair_n = J(g)(J(a), J(b))   in ▶f;  J(n) = pair_n[0], bp_n = pair_n[1]
    backward      d = bp_n(sens(n));  sens(a) += d[1];  sens(b) += d[2]   in ◀f

A call of a primitive `p` is written in place: `J(n) = p(J(a), J(b))` in ▶f, and the
body of p's bprop rule, applied to `J(a), J(b), J(n), sens(n)`, in ◀f, as ◀p would
compute it, without the pair and the closure that the optimizer would otherwise
inline again (each order of a higher derivative is half the size it was).  A
sensitivity the rule gives as `zeros_like(...)` is a structural zero: nothing is
added; a non-differentiable primitive sends nothing back at all.

Free variables.  The sensitivity of a function value is an *environment*: a map from
the free variables of its graph to their sensitivities, with compile-time keys
(`EnvKey`).  `◀f` returns its free variables' sensitivities in `env`; where a closure
is created (the constant of a nested graph), the environment that flows back to it
is taken apart and each entry added to the sensitivity of its free variable.  A key
names the *user's* node: a node made by J keeps a link to the node it is the image of
(`node.primal`), so the sensitivity of `J(c)` and the one of `c` have the same keys,
and transforms stack (J of J).

Data values are their own J (`J(3.0) == 3.0`); the J of a primitive is a small graph
built from its bprop rule (`prim_fprop`), and the J of a closure made at run time
(a function passed to `grad` inside subset code) is built by `lift_closure`.
"""

from ..errors import MyiaError
from ..ir import Apply, Constant, EnvKey, Graph, manage
from ..ir.anf import id_mark
from ..ir.clone import inline
from ..parser import parse
from ..prim import Primitive
from ..prim import ops as P
from .custom import custom_rule, refuse_J_of_J
from .forward import uses_forward_mode
from .lifting import (captured_parameters, laid_out_parameters, lifted_copy,
                      lifted_with_constants, lifted_with_layout, prim_arity)

_prim_fprops = {}


def env_key(node):
    """The environment key of a free variable: its user-level node."""
    while node.primal is not None:
        node = node.primal
    return EnvKey(node)


def J_graph(graph):
    """`▶graph`, for a graph with no free variables (its nested graphs are
    transformed along with it)."""
    jg = graph.derived.get("J")
    if jg is None:
        rule = custom_rule(graph)
        if rule is not None:  # the user's rule, not the body (myia.ad.custom)
            jg = graph.derived["J"] = rule.J_graph(graph)
        elif "transposes" in graph.flags:
            raise refuse_J_of_J(graph)
        else:
            jg = _JTransform(graph).run()
    return jg


#: primitives whose values J of an optimized program cannot differentiate: closure
#: records (their bound values have no sensitivity rule) and J left for run time
_NOT_J_READABLE = {P.make_closure, P.closure_bound, P.J, P.Jinv, P.T}


def not_J_readable(graph):
    """Why J cannot transform the optimized program `graph` (a construct, with its
    line), or None when it can."""
    mng = manage(graph)
    for g in mng.graphs:
        if g.flags.get("untyped"):
            return f"an untyped copy of {g.name} (a closure inference never saw called)"
        for node in mng.nodes(g):
            if node.is_apply() and node.inputs[0].is_constant(Primitive) \
                    and node.inputs[0].value in _NOT_J_READABLE:
                where = f" (line {node.loc.line})" if node.loc is not None else ""
                return f"{node.inputs[0].value.name}{where}"
    return None


def J_graph_if_built(graph):
    """`▶graph` if it was built already, else None."""
    return graph.derived.get("J")


class _JTransform:
    def __init__(self, root):
        self.root = root
        self.mng = manage(root)
        if self.mng.free_variables(root):
            names = ", ".join(n.name or "?" for n in self.mng.free_variables(root))
            raise AssertionError(f"J_graph of {root.name}, which has free variables ({names})")
        self.scope = self.mng.scope(root)
        self.jgraphs = {}
        self.jnode = {}
        self.bprop_of = {}  # node -> its backpropagator (a node of ▶g), or the primitive

    def run(self):
        for g in self.scope:
            jg = Graph(f"▶{g.name}", g.loc)
            jg.flags = {**g.flags, "kind": "fprop"}
            jg.defaults = dict(g.defaults)
            self.jgraphs[g] = jg
            for p in g.parameters:
                jp = jg.add_parameter(p.name, p.loc)
                jp.primal = p
                self.jnode[p] = jp
        # registered before the bodies, so recursion finds it
        self.root.derived["J"] = self.jgraphs[self.root]
        try:
            for g in self.scope:  # parents come before the graphs nested in them
                self._forward(g)
            for g in self.scope:
                self._backward(g)
        except BaseException:
            # a refusal (J of a program that writes jvp...) must not leave the half-made
            # graph cached: the next J_graph of this graph would return it
            del self.root.derived["J"]
            raise
        return self.jgraphs[self.root]

    # ---- forward ------------------------------------------------------------------

    def _jget(self, node, n_args=None):
        if isinstance(node, Constant):
            return Constant(self._jconst(node.value, n_args), node.loc)
        return self.jnode[node]

    def _jconst(self, value, n_args):
        if isinstance(value, Graph):
            if value in self.jgraphs:
                return self.jgraphs[value]
            return J_graph(value)
        if isinstance(value, Primitive):
            return prim_fprop(value, n_args)
        return J_constant(value)

    def _forward(self, g):
        jg = self.jgraphs[g]
        for n in self.mng.nodes(g):
            if not isinstance(n, Apply):
                continue
            args = [self._jget(i) for i in n.inputs[1:]]
            prim = _inlined_prim(n)
            if prim is not None:
                # ▶p(args) is (p(args), ◀p): p itself here, ◀p's body in ◀g
                value = Apply(jg, [n.inputs[0], *args], n.loc, n.name)
                value.primal = n
                self.jnode[n] = value
                self.bprop_of[n] = prim
                continue
            fn = self._jget(n.inputs[0], len(n.inputs) - 1)
            pair = Apply(jg, [fn, *args], n.loc)
            value = jg.apply(P.tuple_getitem, pair, 0, loc=n.loc, name=n.name)
            value.primal = n
            self.jnode[n] = value
            # named after what it undoes, so that ◀g's free variable reads as such
            self.bprop_of[n] = jg.apply(P.tuple_getitem, pair, 1, loc=n.loc,
                                        name=_bprop_name(n))

    # ---- backward -----------------------------------------------------------------

    def _backward(self, g):
        jg = self.jgraphs[g]
        bg = Graph(f"◀{g.name}", g.loc)
        bg.flags = {"kind": "bprop"}
        dout = bg.add_parameter("dout")
        contribs = {}

        def contribute(node, value):
            if isinstance(node, Constant):
                closure = node.value
                if isinstance(closure, Graph):
                    # the sensitivity of a closure: give each captured variable its part
                    for fv in self.mng.free_variables(closure):
                        zero = bg.apply(P.zeros_like, self.jnode[fv], loc=fv.loc)
                        part = bg.apply(P.env_getitem, value, env_key(fv), zero, loc=fv.loc)
                        zero.adjoint = part.adjoint = fv
                        contribute(fv, part)
                return
            contribs.setdefault(node, []).append(value)

        totals = {}

        def total(node):
            if node in totals:
                return totals[node]
            values = contribs.get(node)
            if not values:
                return None
            acc = values[0]
            for v in values[1:]:
                acc = bg.apply(P.gadd, acc, v, loc=node.loc)  # where `node` is
                acc.adjoint = node
            _name_sensitivity(acc, node)
            totals[node] = acc
            return acc

        contribute(g.output, dout)
        for n in reversed(self.mng.nodes(g)):
            if not isinstance(n, Apply):
                continue
            sens = total(n)
            if sens is None:
                continue  # no path to the output: its contribution is zero
            bp = self.bprop_of[n]
            mark = id_mark()
            if isinstance(bp, Primitive):
                ds = self._prim_backward(bp, n, sens, bg)
                _mark_adjoint([d for d in ds if d is not None], n, mark, bg)
                for inp, d in zip(n.inputs[1:], ds):
                    if d is not None:
                        contribute(inp, d)
                continue
            d = bg.apply(bp, sens, loc=n.loc)
            parts = [bg.apply(P.tuple_getitem, d, i, loc=n.loc) for i in range(len(n.inputs))]
            _mark_adjoint(parts, n, mark, bg)
            for inp, part in zip(n.inputs, parts):
                contribute(inp, part)

        env = bg.apply(P.env_new)
        for node in list(contribs):
            if node.graph is not g:  # a free variable: its sensitivity leaves in env
                env = bg.apply(P.env_setitem, env, env_key(node), total(node))
                env.adjoint = node
        dparams = []
        for p in g.parameters:
            s = total(p)
            if s is None:
                s = bg.apply(P.zeros_like, self.jnode[p])
                s.adjoint = p
            dparams.append(s)
        bg.output = bg.apply(P.make_tuple, env, *dparams)
        jg.output = jg.apply(P.make_tuple, self._jget(g.output), Constant(bg))

    def _prim_backward(self, prim, n, sens, bg):
        """The sensitivities of the inputs of `n = prim(...)`, given `sens`: the body of
        prim's bprop rule, inlined in `bg` (None for a structural zero)."""
        if prim is P.make_tuple:
            return [bg.apply(P.tuple_getitem, sens, i, loc=n.loc)
                    for i in range(len(n.inputs) - 1)]
        if prim.nondiff:
            return [None] * (len(n.inputs) - 1)
        args = [self._jget(i) for i in n.inputs[1:]]
        out = inline(_bprop_graph(prim), bg, [*args, self.jnode[n], sens], loc=n.loc,
                     keep_names=False)
        if out.is_apply(P.make_tuple) and out.graph is bg:
            ds = out.inputs[1:]
        else:
            ds = [bg.apply(P.tuple_getitem, out, i, loc=n.loc) for i in range(len(args))]
        return [None if _structural_zero(d) else d for d in ds]


def _mark_adjoint(outputs, primal, mark, graph):
    """The nodes of `graph` made after `mark` that compute `outputs` belong to the
    backward of `primal` (what a drawing groups under "◀ y = x * w")."""
    todo = list(outputs)
    while todo:
        node = todo.pop()
        if node.__class__ is not Apply or node.id <= mark or node.graph is not graph \
                or node.adjoint is not None:
            continue
        node.adjoint = primal
        todo.extend(node.inputs)


def _name_sensitivity(node, primal):
    """Name the sensitivity of a user's variable after it: `∂w` (a node computed for
    another purpose, or already named, keeps its name)."""
    name = primal.name
    if name and node.__class__ is Apply and node.name is None and not name.startswith("∂"):
        node.name = "∂" + name


def _inlined_prim(node):
    """The primitive `node` calls, when J writes its rule in place (a direct call with
    as many arguments as the rule takes), else None."""
    fn = node.inputs[0]
    if fn.__class__ is not Constant or not isinstance(fn.value, Primitive):
        return None
    prim = fn.value
    if prim is P.make_tuple or prim.nondiff:
        return prim
    if "bprop" not in prim.rules or prim_arity(prim) != len(node.inputs) - 1:
        return None
    return prim


def _structural_zero(node):
    """A sensitivity that is zero by construction: `zeros_like(...)` from a rule."""
    return node.__class__ is Apply and node.is_apply(P.zeros_like)


def J_constant(value):
    """J of a constant that is not a graph or a primitive: data is its own J;
    special function values (grad inside subset code) know their own J."""
    j = getattr(value, "__myia_J__", None)
    if j is not None:
        return j()
    return value


def prim_fprop(prim, n_args=None):
    """`▶prim`: `(prim(*args), ◀prim)`, with ◀prim built from prim's bprop rule."""
    if prim is P.make_tuple:
        if n_args is None:
            raise MyiaError("J of make_tuple as a value needs its number of arguments")
    else:
        n_args = None
    key = (prim, n_args)
    fp = _prim_fprops.get(key)
    if fp is not None:
        return fp
    if prim is P.make_tuple:
        nparams = n_args
    else:
        nparams = prim_arity(prim)
    fp = Graph(f"▶{prim.name}")
    fp.flags = {"kind": "fprop", "core": True}
    xs = [fp.add_parameter(f"x{i}") for i in range(nparams)]
    out = fp.apply(prim, *xs)
    bp = Graph(f"◀{prim.name}")
    bp.flags = {"kind": "bprop", "core": True}
    dout = bp.add_parameter("dout")
    if prim is P.make_tuple:
        ds = [bp.apply(P.tuple_getitem, dout, i) for i in range(nparams)]
    elif prim.nondiff:
        ds = [bp.apply(P.zeros_like, x) for x in xs]
    else:
        d = bp.apply(_bprop_graph(prim), *xs, out, dout)
        ds = [bp.apply(P.tuple_getitem, d, i) for i in range(nparams)]
    bp.output = bp.apply(P.make_tuple, bp.apply(P.env_new), *ds)
    fp.output = fp.apply(P.make_tuple, out, bp)
    _prim_fprops[key] = fp
    return fp


def _bprop_graph(prim):
    return parse(prim.rule("bprop"))  # (parsed once; the library's code: flags["core"])


#: graph -> a transform object whose program for a signature is J of the graph's
#: optimized program for it; set by myia.api (the objects that build programs live
#: above AD).  Used where J meets a parsed program that writes jvp, which only
#: inference resolves.
typed_J = None


def lift_closure(graph, static=(), layout=None):
    """For a graph with free variables v1..vm, the graph `outer(J(v1), ..., J(vm))`
    that returns the J of the closure: a function taking the graph's arguments and
    returning `(value, bprop)`, where bprop gives the environment of v1..vm.

    This is how J applies to a closure made at run time, whose enclosing graph is not
    being differentiated (e.g. `grad(lambda y: x * y)` inside subset code).

    `static`: captured values known at compile time (see lifted_with_constants),
    whose parameters outer ignores (`flags["ignored"]`: specialization passes them
    as they are, not their J); their sensitivities are not computed.

    `layout` (a program that writes jvp and captured a closure of a known graph, see
    lifted_with_layout): outer takes the data the captured closures captured instead
    of them, as for T (`flags["paths"]`, see myia.ad.forward.lift_closure_T); the
    environment bprop gives holds the sensitivities of that data."""
    key = ("lifted J", static, layout)
    outer = graph.derived.get(key)
    if outer is not None:
        return outer
    _, fvs = lifted_copy(graph)
    lifted = lifted_with_constants(graph, static) if layout is None \
        else lifted_with_layout(graph, layout)
    known = {i for i, _ in static}
    # (a program that writes jvp is differentiated once typed: see typed_J)
    jl = Constant(typed_J(lifted)) if uses_forward_mode(lifted) else J_graph(lifted)
    # outer(captured...) -> inner(args...) -> (value, bprop)
    outer = Graph(f"J:{graph.name}")
    outer.flags = {"kind": "fprop", "core": True, "ignored": known}
    if layout is None:
        cvs = [cv for i, cv in enumerate(captured_parameters(outer, fvs)) if i not in known]
    else:
        cvs = laid_out_parameters(outer, layout, fvs)
    inner = Graph(f"▶{graph.name}")
    inner.flags = {"kind": "fprop"}
    inner.defaults = dict(graph.defaults)
    args = [inner.add_parameter(p.name) for p in graph.parameters]
    pair = inner.apply(jl, *cvs, *args)
    value = inner.apply(P.tuple_getitem, pair, 0)
    bpl = inner.apply(P.tuple_getitem, pair, 1)
    bp = Graph(f"◀{graph.name}")
    bp.flags = {"kind": "bprop"}
    dout = bp.add_parameter("dout")
    d = bp.apply(bpl, dout)
    env = bp.apply(P.env_new)
    for i, cv in enumerate(cvs):
        env = bp.apply(P.env_setitem, env, env_key(cv), bp.apply(P.tuple_getitem, d, 1 + i))
    dargs = [bp.apply(P.tuple_getitem, d, 1 + len(cvs) + j) for j in range(len(args))]
    bp.output = bp.apply(P.make_tuple, env, *dargs)
    inner.output = inner.apply(P.make_tuple, value, bp)
    outer.output = Constant(inner)
    graph.derived[key] = outer
    return outer


def _bprop_name(n):
    """`◀callee` for the backpropagator a call returns (the callee's name when it is a
    constant graph or primitive, `◀branch` for a call of a branch, else the called
    value's own name, else none)."""
    fn = n.inputs[0]
    if fn.is_apply(P.switch):  # a branch: the backpropagator of the branch taken
        return "◀branch"
    if fn.is_apply() and fn.inputs[0].is_constant() and fn.name is None:
        # a function another call returned (`scaled(a)(x)`)
        made_by = getattr(fn.inputs[0].value, "name", None)
        return f"◀{made_by}(…)" if isinstance(made_by, str) and made_by else None
    value = getattr(fn, "value", None)
    name = getattr(value, "name", None) or getattr(fn, "name", None)
    return f"◀{name}" if isinstance(name, str) and name else None
