"""The Jacobian transforms of the public API: `jacfwd`, `jacrev` (`jacobian`) and
`hessian`, with JAX's names, argnums and shapes.

For arguments and an output that are floats or arrays of floats, a Jacobian is one
batched program, as in JAX (`jacrev` is vmap of vjp, `jacfwd` vmap of jvp): the
derivative program of f's optimized program for those types, batched (myia.ad.batching)
over the basis of the output's cotangents (rows) or of the argument's tangents
(columns), so that the forward pass, shared by every direction, runs once, and the
directions go through each operation together (a matrix product, not a hundred
matrix-vector products).  Otherwise (tuples, lists and dicts in or out, int
arguments) it is the program written in the subset, a jvp or vjp per direction
(myia.ad.jacobian), which is also what `jacfwd` etc. named inside subset code build.
"""

import numpy as np

from . import progress
from .abstract import AArray, AScalar
from .ad import check_argnums, reverse
from .ad.batching import batch_graph
from .ad.batching_rules import abstract_of_node
from .ad.forward import jvp_graph
from .ad.grad import differentiable_args, grad_graph
from .ad.jacobian import jacobian_graph
from .ad.reverse import J_graph, not_J_readable
from .api import _fn_text, _held, _intern, _Transformed
from .infer import tangent
from .ir import Constant, Graph
from .pipeline import optimized_for
from .prim import ops as P


class JacobianFunction(_Transformed):
    """`jacfwd(fn, argnums)`, `jacrev(fn, argnums)` or `hessian(fn, argnums)` (kind):
    one program that calls `<kind>_of` (written in the subset, myia.ad.jacobian: a jvp
    per direction of the argument, or a vjp applied to each direction of the output)
    on fn.  For an output of shape o and an argument of shape s the result has shape
    o + s (a tuple of blocks for a tuple of argnums).  Compiled once per argument
    types, like grad; named in subset code it is that program."""

    def __init__(self, kind, fn, argnums=0):
        check_argnums(argnums, 1 << 30)  # (an int or a tuple of ints; ranges: below)
        super().__init__(fn)
        self.kind = kind
        self._kind_name = kind
        self.argnums = argnums
        self._by_signature = {}

    def __myia_graph_for__(self, signature):
        """The batched program for float arguments and output, where there is more than
        one direction; else None (the program written in the subset)."""
        if signature not in self._by_signature:
            graph = None
            name, names, _ = self.__myia_header__()
            nums, many = self._checked
            if len(signature) == len(names) and all(map(_floats, signature)) \
                    and not (self.kind == "hessian" and many) \
                    and (self.kind == "jacrev" or all(_size(signature[k]) > 1 for k in nums)):
                inner, _ = optimized_for(self.fn, signature, finish=False)
                out = abstract_of_node(inner.output)
                # (one direction: the jvp or the vjp itself, which the subset program is)
                if _floats(out) and not_J_readable(inner) is None \
                        and (self.kind != "jacrev" or _size(out) > 1):
                    with progress.stage("batching", name):
                        graph = _batched_jacobian(self.kind, name, inner, signature, nums,
                                                  many)
            self._by_signature[signature] = graph
        return self._by_signature[signature]

    def __myia_header__(self):
        return self._header_checking_argnums(f"{self.kind}_")

    def _build(self, fn_graph):
        self.__myia_header__()
        return jacobian_graph(self.kind, fn_graph, self.argnums)

    # (its program writes jvp or vjp: J and T of it transform its typed program)
    def __myia_J__(self):
        return reverse.typed_J(self.__myia_graph__())

    def __myia_T__(self):
        return tangent.static_tangent(self.__myia_graph__())

    def __repr__(self):
        return f"<myia.{self.kind}({_fn_text(self.fn)}, argnums={self.argnums!r})>"


def _floats(a):
    return a.__class__ in (AArray, AScalar) and a.dtype == "float64"


def _shape(a):
    return a.shape if a.__class__ is AArray else ()


def _size(a):
    return int(np.prod(_shape(a)))


def _batched_jacobian(kind, name, inner, signature, nums, many):
    """`(args) -> the Jacobian blocks` for the typed, optimized program `inner`."""
    g = Graph(name, inner.loc)
    g.flags = {"kind": "batched"}
    params = [g.add_parameter(p.name, p.loc) for p in inner.parameters]
    out = _shape(abstract_of_node(inner.output))
    if kind == "jacrev":
        blocks = _rows(g, inner, signature, params, nums, out)
    elif kind == "jacfwd":
        blocks = [_columns(g, inner, signature, params, k, out) for k in nums]
    else:  # hessian: jacfwd of grad (forward over reverse)
        (k,) = nums
        gk, _ = optimized_for(grad_graph(inner, (k,), False, "grad"), signature,
                              finish=False)
        blocks = [_columns(g, gk, signature, params, k, _shape(signature[k]))]
    g.output = g.apply(P.make_tuple, *blocks) if many else blocks[0]
    return g


def _rows(g, inner, signature, params, nums, out):
    """jacrev: the backward pass of `inner` applied to every basis vector of its
    output at once (the forward pass, shared, runs once): vmap of vjp."""
    vjp = Graph(f"vjp_{inner.name}", inner.loc)
    xs = [vjp.add_parameter(p.name, p.loc) for p in inner.parameters]
    ct = vjp.add_parameter("ct")
    pair = vjp.apply(Constant(J_graph(inner)),
                     *differentiable_args(vjp, xs, nums, inner.name))
    d = vjp.apply(vjp.apply(P.tuple_getitem, pair, 1), ct)
    vjp.output = vjp.apply(P.make_tuple, *[vjp.apply(P.tuple_getitem, d, 1 + k)
                                           for k in nums])
    m = int(np.prod(out))
    basis = np.eye(m).reshape((m,) + out)
    ct_abstract = AArray("float64", out) if out else AScalar("float64", numpy=True)
    typed, _ = optimized_for(vjp, tuple(signature) + (ct_abstract,), finish=False)
    batched = batch_graph(typed, [False] * len(xs) + [True], m)
    rows = g.apply(Constant(batched), *params, Constant(basis))
    return [g.apply(P.reshape, g.apply(P.tuple_getitem, rows, i),
                    out + _shape(signature[k])) for i, k in enumerate(nums)]


def _columns(g, inner, signature, params, k, out):
    """jacfwd: the tangent program of `inner` along every basis vector of argument k
    at once: vmap of jvp.  Columns (n,) + out, turned into out + s_k."""
    tangents = jvp_graph(inner)
    tj = Graph(f"jvp_{inner.name}", inner.loc)
    ps = [tj.add_parameter(p.name) for p in tangents.parameters]
    tj.output = tj.apply(P.tuple_getitem, tj.apply(Constant(tangents), *ps), 1)
    s_k = _shape(signature[k])
    n = int(np.prod(s_k))
    typed, _ = optimized_for(tj, tuple(signature) * 2, finish=False)
    flags = [False] * len(signature) * 2
    flags[len(signature) + k] = True
    batched = batch_graph(typed, flags, n)
    ts = [Constant(np.zeros(_shape(a)) if _shape(a) else 0.0) for a in signature]
    ts[k] = Constant(np.eye(n).reshape((n,) + s_k))
    cols = g.apply(Constant(batched), *params, *ts)
    rank = len(out)
    if rank:  # (the batch axis last: out + (n,))
        cols = g.apply(P.transpose, cols, tuple(range(1, rank + 1)) + (0,))
    return g.apply(P.reshape, cols, out + s_k)


def _jacobian_function(kind, fn, argnums):
    """The one JacobianFunction of (kind, fn, argnums): its programs are made once, and
    `myia.hessian(f)(x)` in a loop (the last one asked for) is not even a look-up."""
    global _last_jacobian
    last = _last_jacobian
    if last[0] is fn and last[1] == kind and last[2] == argnums:
        return last[3]
    j = _held(_intern((kind, fn, argnums), lambda: JacobianFunction(kind, fn, argnums)))
    _last_jacobian = (fn, kind, argnums, j)
    return j


_last_jacobian = (None, None, None, None)


def jacfwd(fn, argnums=0):
    """The Jacobian of `fn` with respect to argument(s) `argnums` by forward mode: one
    jvp per element of the argument (JAX's `jax.jacfwd`: for an output of shape o and
    an argument of shape s, an array of shape o + s; a tuple of them for a tuple of
    argnums).  Best where the argument is smaller than the output."""
    return _jacobian_function("jacfwd", fn, argnums)


def jacrev(fn, argnums=0):
    """The Jacobian of `fn` by reverse mode: one forward pass, then one backward pass
    per element of the output (`jax.jacrev`'s shapes, as `jacfwd`'s).  Best where the
    output is smaller than the argument."""
    return _jacobian_function("jacrev", fn, argnums)


jacobian = jacrev


def hessian(fn, argnums=0):
    """The Hessian of a scalar function, forward over reverse (`jax.hessian`): for an
    argument of shape s, an array of shape s + s; for a tuple of argnums, a tuple of
    tuples of blocks, block [i][j] the derivative along argument j of the gradient
    along argument i."""
    return _jacobian_function("hessian", fn, argnums)
