"""`hessian` inside subset code: forward mode over reverse mode, written in the subset.

`hessian(f, argnums)` there is the `HessianMacro` value: like `grad`, it returns a
function of f's arguments, whose program calls `hessian_of` (below, parsed like user
code) with the arguments packed: one jvp of `grad(f, k)` per direction of argument k
(a basis vector of its shape; the other arguments' tangents are zeros), the columns
stacked into an array of shape s + s, as `myia.hessian` gives from Python.
"""

import numpy as np

from ..errors import MyiaGradError
from ..ir import Constant, Graph
from ..parser import parse
from ..prim import ops as P
from .forward import JVP as jvp
from .grad import GRAD as grad
from .grad import GradMacro, check_argnums, differentiable_args


def hessian_of(f, k, args):
    x = args[k]
    zeros = tuple(P.zeros_like(a) for a in args)  # (a number's is a number)
    if len(np.shape(x)) == 0:
        return jvp(grad(f, k), args, zeros[:k] + (1.0,) + zeros[k + 1:])[1]
    n = x.size
    eye = np.eye(n)
    columns = [jvp(grad(f, k), args,
                   zeros[:k] + (np.reshape(eye[i], np.shape(x)),) + zeros[k + 1:])[1]
               for i in range(n)]
    return np.reshape(np.stack(columns, axis=-1), np.shape(x) + np.shape(x))


def hessian_graph(fn_graph, k):
    """The program `(x1..xn) -> hessian_of(f, k, (x1..xn))` of a graph without free
    variables (what `myia.hessian(f, k)` compiles); argument k must be differentiable
    (an integer is refused at the user's parameter)."""
    g = Graph(f"hessian_{fn_graph.name}", fn_graph.loc)
    g.flags = {"kind": "adjoint"}
    g.defaults = dict(fn_graph.defaults)
    params = [g.add_parameter(p.name, p.loc) for p in fn_graph.parameters]
    args = differentiable_args(g, params, (k,), fn_graph.name)
    g.output = g.apply(Constant(_hessian_of()), Constant(fn_graph), Constant(k),
                       g.apply(P.make_tuple, *args))
    return g


def _hessian_of():
    return parse(hessian_of)  # (parsed once)


class HessianMacro(GradMacro):
    """`hessian(fn, argnums=0)` as a value inside subset code (see the module doc)."""

    writes_jvp = True  # (J of a program that calls it waits for its typed program)

    def __init__(self):
        super().__init__("hessian")

    def expand(self, arity, argnums, names=None, defaults=None):
        names = tuple(names) if names else tuple(f"x{i}" for i in range(arity))
        key = (arity, argnums, names)
        g = self._graphs.get(key)
        if g is None:
            if not isinstance(argnums, int) or isinstance(argnums, bool):
                raise MyiaGradError("hessian takes a single int argnums",
                                    hint="for several arguments, take hessians one at a "
                                         "time")
            (k,), _ = check_argnums(argnums, arity, names)
            make = Graph("make_hessian")
            make.flags = {"kind": "adjoint", "core": True}
            f = make.add_parameter("f")
            make.add_parameter("argnums")
            inner = Graph("hessian")
            inner.flags = {"kind": "adjoint"}
            params = [inner.add_parameter(n) for n in names]
            inner.output = inner.apply(Constant(_hessian_of()), f, Constant(k),
                                       inner.apply(P.make_tuple, *params))
            make.output = Constant(inner)
            g = self._graphs[key] = make
        return g

    def __repr__(self):
        return "<hessian macro>"


HESSIAN = HessianMacro()
