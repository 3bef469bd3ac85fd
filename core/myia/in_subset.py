"""The transforms as values inside subset code, wired to the objects that build their
programs: `grad`, `value_and_grad`, `jvp`, `vjp`, `jacfwd`, `jacrev` (`jacobian`),
`hessian`, `jet`, `checkpoint` and `vmap` named in a def
compile to their macros (myia.ad), and the compiler's own inner transforms (T of a
function a jvp receives, J of a closure whose program writes jvp) are transform
objects built per signature from optimized programs, as `myia.grad`'s are.

`register()` runs once, when `myia` is imported (the objects live here, above inference
and AD, which reach them through the hooks it sets).
"""

from . import progress
from .ad import reverse
from .ad.forward import JVP, T_graph
from .ad.grad import GRAD, VALUE_AND_GRAD, VJP
from .ad.jacobian import HESSIAN, JACFWD, JACREV
from .ad.reverse import J_graph, not_J_readable
from .ad.batching import VMAP
from .ad.custom import CHECKPOINT
from .ad.taylor import JET
from .ad.transforms import is_data_signature, pair_values
from .api import (_Transformed, _fn_text, _intern, _interned, _zeros_like_value, grad, jet,
                  jvp, stop_gradient, value_and_grad, vjp)
from .api_custom import CheckpointFunction, checkpoint
from .api_jacobian import hessian, jacfwd, jacrev
from .api_vmap import vmap
from .infer import tangent
from .parser.programs import header
from .parser.resolve import register_special
from .pipeline import optimized_for
from .prim import ops as P


def register():
    """Make the transforms named in subset code their macros, and set the hooks through
    which inference and AD build the per-signature transform objects."""
    for obj, value in [(GRAD, GRAD), (grad, GRAD), (VALUE_AND_GRAD, VALUE_AND_GRAD),
                       (value_and_grad, VALUE_AND_GRAD), (JVP, JVP), (jvp, JVP),
                       (VJP, VJP), (vjp, VJP), (HESSIAN, HESSIAN), (hessian, HESSIAN),
                       (JACFWD, JACFWD), (jacfwd, JACFWD), (JACREV, JACREV),
                       (jacrev, JACREV),
                       (JET, JET), (jet, JET)]:
        register_special(obj, value)
    register_special(stop_gradient, P.stop_gradient)  # (its derivative is zero)
    register_special(checkpoint, CHECKPOINT)
    register_special(vmap, VMAP)
    VMAP.static_transform = vmap
    CHECKPOINT.static_transform = lambda fn: _intern(("checkpoint", fn),
                                                     lambda: CheckpointFunction(fn))
    # `grad(f)` or `jet(f, k)` of a known function, in subset code, is the same
    # transform as from Python (inference builds its program per call signature)
    GRAD.static_transform = lambda fn, argnums: _interned(fn, argnums, "grad")
    VALUE_AND_GRAD.static_transform = lambda fn, argnums: _interned(fn, argnums, "value_and_grad")
    tangent.static_jet = jet
    # T(f) of a jvp in subset code, for f that captures nothing (myia.infer.tangent),
    # and J of a lifted closure whose program writes jvp (myia.ad.reverse)
    tangent.static_tangent = lambda fn: _intern(("T", fn), lambda: TangentFunction(fn))
    reverse.typed_J = lambda graph: _intern(("J", graph), lambda: TypedJ(graph))


class TangentFunction(_Transformed):
    """`T(fn)` where subset code takes a jvp of `fn` (myia.infer.tangent): a function
    of (value, tangent) pairs.  For pairs of data it is T of the optimized program of
    `fn` for the values' types, so what `fn` computes with grad or jvp inside is an
    ordinary program when T meets it (jvp of jvp, jvp of grad, any depth)."""

    _kind_name = "T"

    def __init__(self, fn):
        super().__init__(fn)
        self._by_signature = {}

    def __myia_header__(self):
        name, names, defaults = header(self.fn)
        return (f"T{name}", names,
                {k: (v, _zeros_like_value(v)) for k, v in defaults.items()})

    def _build(self, fn_graph):
        return T_graph(fn_graph)

    def __myia_graph_for__(self, signature):
        if signature not in self._by_signature:
            graph = None
            values = pair_values(signature)
            if values is not None:
                inner, _ = optimized_for(self.fn, values, finish=False)
                with progress.stage("forward mode", self.__myia_header__()[0]):
                    graph = T_graph(inner)
            self._by_signature[signature] = graph
        return self._by_signature[signature]

    @property
    def ir_name(self):
        return f"T({_fn_text(self.fn)})"


class TypedJ(_Transformed):
    """J of a graph, built per signature from its optimized program: how J applies
    to a closure whose program writes jvp (myia.ad.reverse.lift_closure), which only
    inference resolves."""

    _kind_name = "J"

    def __init__(self, fn):
        super().__init__(fn)
        self._by_signature = {}

    def __myia_header__(self):
        name, names, defaults = header(self.fn)
        return f"J{name}", names, defaults

    def _build(self, fn_graph):
        return J_graph(fn_graph)

    def __myia_graph_for__(self, signature):
        if signature not in self._by_signature:
            graph = None
            if is_data_signature(signature):
                inner, _ = optimized_for(self.fn, signature, finish=False)
                if not_J_readable(inner) is None:
                    with progress.stage("differentiating", self.__myia_header__()[0]):
                        graph = J_graph(inner)
            self._by_signature[signature] = graph
        return self._by_signature[signature]

    @property
    def ir_name(self):
        return f"J({_fn_text(self.fn)})"
