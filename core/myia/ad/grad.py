"""Gradient programs: the graphs behind `grad`, `value_and_grad` and `vjp`.

    grad(f)(x1, ..., xn)   =   out, bprop = J(f)(x1, ..., xn)
                               d = bprop(seed(out))          # 1.0; out must be a scalar
                               return d[1 + argnum]          # d[0] is f's environment

Called from Python, `J(f)` is a constant graph `▶f` built ahead of time, so the whole
program is one static graph (printable, optimizable).  Written inside subset code,
`grad(f)` may receive any function value at run time (a closure, a lambda, a function
passed as an argument): there it is the `GradMacro` value, which builds the same graph
for the function's arity when it is called, with a `J` primitive applied to `f`.
"""

from ..errors import MyiaGradError
from ..ir import Constant, Graph
from ..prim import ops as P
from .reverse import J_graph


def check_argnums(argnums, n_params, names=None):
    """argnums as a tuple of valid positions; a clear error otherwise."""
    many = isinstance(argnums, tuple)
    nums = argnums if many else (argnums,)
    for a in nums:
        if not isinstance(a, int) or isinstance(a, bool):
            raise MyiaGradError(f"argnums must be an int or a tuple of ints, got {a!r}")
        if not -n_params <= a < n_params:
            what = f"({', '.join(names)})" if names else ""
            raise MyiaGradError(
                f"argnums {a} is out of range for a function of {n_params} "
                f"argument{'s' if n_params != 1 else ''} {what}".rstrip(),
                hint=f"use a position between 0 and {n_params - 1}" if n_params else
                "a function of no arguments has no derivative: differentiate a function "
                "of the variable (lambda x: ...)")
    return tuple(a % n_params for a in nums), many


def build_grad_body(graph, jf, params, argnums, many, mode, fn_name=None):
    """Fill `graph` (whose parameters are `params`) with the gradient of the function
    whose J is the node `jf` (named `fn_name` in errors).  mode: "grad",
    "value_and_grad", or "vjp" (with respect to every argument)."""
    wrt = range(len(params)) if mode == "vjp" else argnums
    pair = graph.apply(jf, *differentiable_args(graph, params, wrt, fn_name))
    out = graph.apply(P.tuple_getitem, pair, 0, name="out")
    bprop = graph.apply(P.tuple_getitem, pair, 1, name="bprop")
    if mode == "vjp":
        graph.output = graph.apply(P.make_tuple, out, bprop)
        return graph
    d = graph.apply(bprop, graph.apply(P.grad_seed, out), name="d")
    grads = [graph.apply(P.tuple_getitem, d, 1 + a) for a in argnums]
    result = graph.apply(P.make_tuple, *grads) if many else grads[0]
    if mode == "value_and_grad":
        result = graph.apply(P.make_tuple, out, result)
    graph.output = result
    return graph


def differentiable_args(graph, params, wrt, fn_name=None):
    """`params`, those at the positions `wrt` through `differentiable`: inference
    refuses an integer or a bool there, located at the parameter."""
    args = list(params)
    for a in wrt:
        p = params[a]
        what = f"argument {a} ({p.name!r})" + (f" of {fn_name}" if fn_name else "")
        args[a] = graph.apply(P.differentiable, p, what, loc=p.loc)
    return args


def grad_graph(fn_graph, argnums, many, mode):
    """The gradient program of a graph with no free variables, built ahead of time."""
    g = Graph(f"{mode}_{fn_graph.name}", fn_graph.loc)
    g.flags = {"kind": "adjoint"}
    g.defaults = dict(fn_graph.defaults)
    params = [g.add_parameter(p.name, p.loc) for p in fn_graph.parameters]
    return build_grad_body(g, Constant(J_graph(fn_graph)), params, argnums, many, mode,
                           fn_graph.name)


def vjp_apply_graph(fn_graph, n):
    """`(x1, ..., xn, ct) -> the cotangents of x1..xn`: `out, bprop = J(f)(x1..xn)`,
    then `bprop(ct)[1:1 + n]`, in one program.  What `myia.vjp` runs on a backend that
    cannot hand the backpropagator (a closure) to Python."""
    g = Graph(f"vjp_{fn_graph.name}", fn_graph.loc)
    g.flags = {"kind": "adjoint"}
    params = [g.add_parameter(p.name, p.loc) for p in fn_graph.parameters[:n]]
    ct = g.add_parameter("cotangent")
    args = differentiable_args(g, params, range(n), fn_graph.name)
    pair = g.apply(Constant(J_graph(fn_graph)), *args)
    bprop = g.apply(P.tuple_getitem, pair, 1, name="bprop")
    d = g.apply(bprop, ct, name="d")
    g.output = g.apply(P.make_tuple, *[g.apply(P.tuple_getitem, d, 1 + i) for i in range(n)])
    return g


class GradMacro:
    """`grad` / `value_and_grad` as values inside subset code.

    `GRAD(f, argnums)` returns the gradient function of the function value `f`; the
    program is built when the arity of `f` is known (at run time on the VM)."""

    def __init__(self, mode):
        self.mode = mode
        self._graphs = {}

    # the signature user code calls it with: grad(fn, argnums=0)
    param_names = ("fn", "argnums")
    defaults = {"argnums": 0}

    @property
    def ir_name(self):
        return self.mode

    def expand(self, arity, argnums, names=None, defaults=None):
        """The graph `make(f, argnums)` that returns the gradient function of `f`,
        a function of `arity` parameters (named `names`, with `defaults`: the
        gradient function takes the same optional arguments as `f`)."""
        names = tuple(names) if names else tuple(f"x{i}" for i in range(arity))
        defaults = dict(defaults or {})
        key = (arity, argnums, names, tuple(sorted(defaults.items(), key=lambda kv: kv[0])))
        try:
            g = self._graphs.get(key)
        except TypeError:  # an unhashable default: build without caching
            key, g = None, None
        if g is None:
            nums, many = check_argnums(argnums, arity, names)
            make = Graph(f"make_{self.mode}")
            make.flags = {"kind": "adjoint", "core": True}
            f = make.add_parameter("f")
            make.add_parameter("argnums")  # used above, to build the program
            inner = Graph(f"{self.mode}")
            inner.flags = {"kind": "adjoint"}
            params = [inner.add_parameter(n) for n in names]
            inner.defaults = defaults
            jf = inner.apply(P.J, f, name="Jf")
            build_grad_body(inner, jf, params, nums, many, self.mode)
            make.output = Constant(inner)
            g = make
            if key is not None:
                self._graphs[key] = make
        return g

    def __repr__(self):
        return f"<{self.mode} macro>"

    def __myia_J__(self):
        return JOf(self, 1)


class VJPMacro:
    """`vjp(fn, *primals)` as a value inside subset code: `(fn(*primals), vjp_fn)`,
    where `vjp_fn(ct)` returns the cotangent of each primal (a tuple), JAX's
    conventions.  Its program, built for the number of primals, applies `J` to fn
    and closes `vjp_fn` over the backpropagator."""

    param_names = ("fn", "primals")
    defaults = {}
    flags = {"varargs": True}  # (the parser packs the primals into a tuple)
    ir_name = "vjp"

    def __init__(self):
        self._graphs = {}

    def expand(self, n):
        g = self._graphs.get(n)
        if g is None:
            g = Graph("vjp")
            g.flags = {"kind": "adjoint", "core": True}
            f = g.add_parameter("fn")
            primals = g.add_parameter("primals")
            xs = [g.apply(P.tuple_getitem, primals, i) for i in range(n)]
            args = [g.apply(P.differentiable, x, f"primal {i} of vjp") for i, x in enumerate(xs)]
            pair = g.apply(g.apply(P.J, f, name="Jf"), *args)
            bprop = g.apply(P.tuple_getitem, pair, 1, name="bprop")
            vjp_fn = Graph("vjp_fn")
            vjp_fn.flags = {"kind": "adjoint"}
            ct = vjp_fn.add_parameter("cotangent")
            d = vjp_fn.apply(bprop, ct, name="d")
            vjp_fn.output = vjp_fn.apply(
                P.make_tuple, *[vjp_fn.apply(P.tuple_getitem, d, 1 + i) for i in range(n)])
            g.output = g.apply(P.make_tuple, g.apply(P.tuple_getitem, pair, 0),
                               Constant(vjp_fn))
            self._graphs[n] = g
        return g

    def __myia_J__(self):
        raise MyiaGradError("a derivative of a program that calls vjp, before it is typed",
                            hint="call it with arguments of known types")

    def __repr__(self):
        return "<vjp macro>"


VJP = VJPMacro()


class JOf:
    """J applied `level` times to a macro value (grad of code that uses grad)."""

    def __init__(self, macro, level):
        self.macro = macro
        self.level = level

    @property
    def ir_name(self):
        return "J" * self.level + f"({self.macro.ir_name})"

    def graph(self, arity, argnums, names=None, defaults=None):
        g = self.macro.expand(arity, argnums, names, defaults)
        for _ in range(self.level):
            g = J_graph(g)
        return g

    def __myia_J__(self):
        return JOf(self.macro, self.level + 1)


GRAD = GradMacro("grad")
VALUE_AND_GRAD = GradMacro("value_and_grad")
