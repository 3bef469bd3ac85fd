"""`myia.custom_vjp` and `myia.custom_jvp`: a function whose derivative is a rule the
user writes (JAX's `jax.custom_vjp`, `jax.custom_jvp`): a numerically stable gradient,
a straight-through estimator, the implicit derivative of a solver.  J and T of such a
function are built from its rule (myia.ad.custom), by every transform, at any order.

    @myia.custom_vjp
    def f(x):
        return np.log1p(np.exp(x))

    def f_fwd(x):                 # (output, residuals for bwd)
        return f(x), x

    def f_bwd(x, g):              # one cotangent per argument, as a tuple
        return (g / (1.0 + np.exp(-x)),)

    f.defvjp(f_fwd, f_bwd)        # or: f = myia.custom_vjp(f, fwd=f_fwd, bwd=f_bwd)

    @myia.custom_jvp
    def g(x):
        return np.log1p(np.exp(x))

    def g_jvp(primals, tangents):  # (output, tangent of the output)
        (x,), (t,) = primals, tangents
        return g(x), t / (1.0 + np.exp(-x))

    g.defjvp(g_jvp)               # or: g = myia.custom_jvp(g, jvp=g_jvp)

`myia.checkpoint(f)` has no rule to write: its derivative is f's, but the backward
pass computes f's forward pass again instead of keeping its values (JAX's
`jax.checkpoint`): memory traded for time.
"""

from .ad.custom import Checkpoint, CustomJVP, CustomVJP
from .api import _fn_text, _Transformed
from .errors import MyiaGradError, MyiaTypeError
from .ir import Graph
from .ir.clone import clone
from .parser.programs import header, to_graph

_RULES_HINT = {
    "custom_vjp": "f.defvjp(f_fwd, f_bwd): fwd(*args) -> (out, residuals); "
                  "bwd(residuals, cotangent) -> a tuple of cotangents",
    "custom_jvp": "f.defjvp(f_jvp): jvp(primals, tangents) -> (out, tangent_out)"}


class _CustomFunction(_Transformed):
    """A function with a derivative rule: calls `fn`; its program is a copy of fn's
    graph that carries the rule (`flags["custom"]`) and that the optimizer never
    inlines (J and T must meet the call, see myia.ad.custom)."""

    def __init__(self, fn):
        if not callable(fn) and not isinstance(fn, Graph):  # (a def's, in subset code)
            raise MyiaTypeError(f"{self._kind_name} takes a function, not {fn!r}")
        super().__init__(fn)
        self.rules = None  # the rule's Python functions, once given

    def _set_rules(self, **rules):
        for role, rule in rules.items():
            if not callable(rule):
                raise MyiaTypeError(
                    f"{self._kind_name}'s {role} rule must be a function, not {rule!r}",
                    hint=_RULES_HINT[self._kind_name])
        self.rules = rules
        self._graph = None  # (made again with the new rule)
        self._compiled = {}
        self._fast = None

    def __myia_header__(self):
        return header(self.fn)

    def _build(self, fn_graph):
        name = fn_graph.name
        if self.rules is None:
            setter = {"custom_vjp": "defvjp(fwd, bwd)", "custom_jvp": "defjvp(jvp)"}
            raise MyiaGradError(
                f"{name} is a {self._kind_name} function without its rule", fn_graph.loc,
                hint=f"call {name}.{setter[self._kind_name]} before using it")
        g = clone(fn_graph)
        graphs = {role: to_graph(rule) for role, rule in self.rules.items()}
        g.flags = {**fn_graph.flags, "noinline": True, "custom": self._rule(name, **graphs)}
        return g

    @property
    def ir_name(self):
        return f"{self._kind_name}({_fn_text(self.fn)})"


class CustomVJPFunction(_CustomFunction):
    """`custom_vjp(fn)`: differentiated in reverse mode, its rule (fwd, bwd)."""

    _kind_name = "custom_vjp"
    _rule = CustomVJP
    has_rule = True  # (a derivative rule of the user's: see myia.ad.custom.Checkpoint.once)

    def defvjp(self, fwd, bwd):
        """Set the rule: `fwd(*args)` returns `(output, residuals)`; `bwd(residuals,
        cotangent)` returns a tuple with one cotangent per argument."""
        self._set_rules(fwd=fwd, bwd=bwd)


class CustomJVPFunction(_CustomFunction):
    """`custom_jvp(fn)`: differentiated in forward mode, its rule; in reverse mode,
    the transpose of the rule's tangent map."""

    _kind_name = "custom_jvp"
    _rule = CustomJVP
    has_rule = True
    # J of a program that calls it waits for the program's typed, optimized form
    # (myia.ad.forward.uses_forward_mode): there, the primal calls that its rule makes
    # (the rule of f usually calls f) are gone from the tangent map J transposes,
    # which would otherwise call ◀f again, without end
    writes_jvp = True

    def defjvp(self, jvp):
        """Set the rule: `jvp(primals, tangents)` (two tuples, one entry per argument)
        returns `(output, tangent of the output)`, linear in the tangents."""
        self._set_rules(jvp=jvp)


def custom_vjp(fn, *, fwd=None, bwd=None):
    """`fn` with a reverse-mode derivative given by a rule (JAX's `jax.custom_vjp`):
    use it as a decorator and set the rule with `f.defvjp(fwd, bwd)`, or give the
    rule at once, `custom_vjp(fn, fwd=..., bwd=...)` (the form for a kernel cell).
    `fwd(*args)` returns `(fn(*args), residuals)`; `bwd(residuals, ct)` returns a
    tuple of one cotangent per argument.  grad, vjp, jacrev and their nestings use
    the rule (a second derivative differentiates it); jvp, jacfwd and jet refuse it,
    as JAX does."""
    f = CustomVJPFunction(fn)
    if fwd is not None or bwd is not None:
        f.defvjp(fwd, bwd)
    return f


def custom_jvp(fn, *, jvp=None):
    """`fn` with a forward-mode derivative given by a rule (JAX's `jax.custom_jvp`):
    use it as a decorator and set the rule with `f.defjvp(jvp)`, or give it at once,
    `custom_jvp(fn, jvp=...)` (the form for a kernel cell).  `jvp(primals, tangents)`
    returns `(fn(*primals), the output's tangent)`, linear in the tangents.  jvp,
    jacfwd and their nestings use the rule; grad, vjp and jacrev use its transpose
    (the rule, differentiated in reverse mode along the tangents), as JAX does; a
    second derivative differentiates the rule.  jet refuses it."""
    f = CustomJVPFunction(fn)
    if jvp is not None:
        f.defjvp(jvp)
    return f


class CheckpointFunction(_CustomFunction):
    """`checkpoint(fn)`: fn, whose backward pass computes its forward pass again."""

    _kind_name = "checkpoint"

    def __init__(self, fn):
        super().__init__(fn)
        self.rules = {}  # (none to give)

    def _build(self, fn_graph):
        g = clone(fn_graph)
        g.flags = {**fn_graph.flags, "noinline": True,
                   "custom": Checkpoint(fn_graph.name, fn_graph)}
        return g


def checkpoint(fn):
    """`fn`, whose derivatives recompute its forward pass instead of keeping its
    values (JAX's `jax.checkpoint`, also called remat): the backward pass of a program
    that calls it keeps only its arguments, and runs `fn` again, differentiated, when
    it reaches the call.  Checkpointing the body of a long loop in segments
    (`for _ in range(m): x = checkpoint(segment)(x)`, where segment runs k steps)
    makes the gradient keep m + k steps' values instead of m * k.  Forward mode (jvp,
    jet) keeps nothing between passes: there it is fn itself.  Inside compiled code,
    `checkpoint(fn)` takes a def that captures nothing, and vjp, jacrev and hessian of
    a program that calls it there are refused: `ck = checkpoint(segment)` made
    outside the program works with every transform."""
    return CheckpointFunction(fn)
