"""`myia.custom_vjp`: a function whose reverse-mode derivative is a rule the user
writes (JAX's `jax.custom_vjp`): a numerically stable gradient, a straight-through
estimator, the implicit derivative of a solver.  J of such a function is built from
its rule (myia.ad.custom), by every reverse-mode transform, at any order.

    @myia.custom_vjp
    def f(x):
        return np.log1p(np.exp(x))

    def f_fwd(x):                 # (output, residuals for bwd)
        return f(x), x

    def f_bwd(x, g):              # one cotangent per argument, as a tuple
        return (g / (1.0 + np.exp(-x)),)

    f.defvjp(f_fwd, f_bwd)        # or: f = myia.custom_vjp(f, fwd=f_fwd, bwd=f_bwd)
"""

from .ad.custom import CustomVJP
from .api import _fn_text, _Transformed
from .errors import MyiaGradError, MyiaTypeError
from .ir.clone import clone
from .parser.programs import header, to_graph


class CustomVJPFunction(_Transformed):
    """`custom_vjp(fn)`: calls `fn`; differentiated in reverse mode, its rule.  Its
    program is a copy of fn's graph that carries the rule (`flags["custom_vjp"]`) and
    that the optimizer never inlines (J must meet the call, see myia.ad.custom)."""

    _kind_name = "custom_vjp"

    def __init__(self, fn, fwd=None, bwd=None):
        if not callable(fn):
            raise MyiaTypeError(f"custom_vjp takes a function, not {fn!r}")
        super().__init__(fn)
        self.fwd = self.bwd = None
        if fwd is not None or bwd is not None:
            self.defvjp(fwd, bwd)

    def defvjp(self, fwd, bwd):
        """Set the rule: `fwd(*args)` returns `(output, residuals)`; `bwd(residuals,
        cotangent)` returns a tuple with one cotangent per argument."""
        for role, rule in (("fwd", fwd), ("bwd", bwd)):
            if not callable(rule):
                raise MyiaTypeError(
                    f"custom_vjp's {role} rule must be a function, not {rule!r}",
                    hint="f.defvjp(f_fwd, f_bwd): fwd(*args) -> (out, residuals); "
                         "bwd(residuals, cotangent) -> a tuple of cotangents")
        self.fwd, self.bwd = fwd, bwd
        self._graph = None  # (made again with the new rule)
        self._compiled = {}
        self._fast = None

    def __myia_header__(self):
        return header(self.fn)

    def _build(self, fn_graph):
        name = fn_graph.name
        if self.fwd is None:
            raise MyiaGradError(
                f"{name} is a custom_vjp function without its rule", fn_graph.loc,
                hint=f"call {name}.defvjp(fwd, bwd) before using it")
        g = clone(fn_graph)
        g.flags = {**fn_graph.flags, "noinline": True,
                   "custom_vjp": CustomVJP(name, to_graph(self.fwd), to_graph(self.bwd))}
        return g

    @property
    def ir_name(self):
        return f"custom_vjp({_fn_text(self.fn)})"


def custom_vjp(fn, *, fwd=None, bwd=None):
    """`fn` with a reverse-mode derivative given by a rule (JAX's `jax.custom_vjp`):
    use it as a decorator and set the rule with `f.defvjp(fwd, bwd)`, or give the
    rule at once, `custom_vjp(fn, fwd=..., bwd=...)` (the form for a kernel cell).
    `fwd(*args)` returns `(fn(*args), residuals)`; `bwd(residuals, ct)` returns a
    tuple of one cotangent per argument.  grad, vjp, the Jacobians and their nestings
    use the rule (a second derivative differentiates it); jvp and jet refuse it, as
    JAX does."""
    return CustomVJPFunction(fn, fwd, bwd)
