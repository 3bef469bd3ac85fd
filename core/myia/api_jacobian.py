"""The Jacobian transforms of the public API: `jacfwd`, `jacrev` (`jacobian`) and
`hessian`, with JAX's names, argnums and shapes (their programs: myia.ad.jacobian)."""

from .ad import check_argnums, reverse
from .ad.jacobian import jacobian_graph
from .api import _fn_text, _held, _intern, _Transformed
from .infer import tangent


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
