"""Jacobians and Hessians, written in the subset: columns by jvp, rows by vjp.

    jacfwd(f, k)(*args)   one jvp of f per basis vector of args[k]: columns
    jacrev(f, k)(*args)   J(f) once, its backpropagator applied to each basis vector of
                          the output: rows
    hessian(f, k)(*args)  jacfwd of grad(f, k): forward over reverse

As in JAX, the result for an output of shape o and an argument of shape s has shape
o + s; with a tuple of argnums it is a tuple of such blocks (for hessian, a tuple of
tuples: block [i][j] is d/d(arg j) of d f/d(arg i)); for tuples, lists and dicts in
or out (pytrees), the output's tree of the argument's trees of blocks.  Each of the `*_of` functions
below is parsed like user code, so the derivative programs it builds are ordinary
programs: a Jacobian inside subset code, or a derivative of one, needs nothing more.

`JacobianMacro` is the value `jacfwd`, `jacrev`, `jacobian` and `hessian` name in
subset code; `jacobian_graph` is the program `myia.jacfwd(f)` etc. compile from Python.
"""

import numpy as np

from ..ir import Constant, Graph
from ..parser import parse
from ..prim import ops as P
from .forward import JVP as jvp
from .grad import GRAD as grad
from .grad import GradMacro, check_argnums, differentiable_args
from .reverse import J_graph


def _basis(x, i):
    """The i-th basis vector of the space of x (1.0 for a number): one pass over its
    elements (not a row of an identity matrix, n^2 for each of n vectors)."""
    if len(np.shape(x)) == 0:
        return 1.0
    return np.reshape(np.where(np.arange(x.size) == i, 1.0, 0.0), np.shape(x))


def _stacked(parts, shape):
    """The derivatives of each basis direction, one after the other, as an array of
    `shape` (parts of shape p stacked on the last axis: p + (n,))."""
    return np.reshape(np.stack([np.asarray(p) for p in parts], axis=-1), shape)


def _jacfwd_one(f, k, args):
    x = args[k]
    zeros = tuple(P.zeros_like(a) for a in args)  # (a number's is a number)
    pairs = [jvp(f, args, zeros[:k] + (_direction(x, i),) + zeros[k + 1:])
             for i in range(_size(x))]
    if P.kind_of(x) is not None or P.kind_of(pairs[0][1]) is not None:  # (trees)
        matrix = np.stack([_ravel(pair[1]) for pair in pairs], axis=-1)  # (m, n)
        return _out_blocks(matrix, pairs[0][0], x, 0)
    columns = [pair[1] for pair in pairs]
    return _stacked(columns, np.shape(columns[0]) + np.shape(x))


def _rows(y, bprop, k, args):
    """d y / d args[k], a row per element of y, from J(f)(*args) = (y, bprop)."""
    x = args[k]
    rows = [bprop(_direction(y, i))[1 + k] for i in range(_size(y))]
    if P.kind_of(x) is not None or P.kind_of(y) is not None:  # (trees)
        return _out_blocks(np.stack([_ravel(r) for r in rows], axis=0), y, x, 0)  # (m, n)
    # (rows of x's shape stacked last: s + (m,); then the output's axes brought first)
    stacked = _stacked(rows, (np.size(x), np.size(y)))
    return np.reshape(np.transpose(stacked), np.shape(y) + np.shape(x))


# ---- pytrees: tuples, lists and dicts of numbers and arrays, in and out -------------------
#
# As in JAX, the Jacobian of an output tree with respect to an argument tree is the
# output's tree whose leaves are argument trees of blocks: the block of output leaf
# of shape o and argument leaf of shape s has shape o + s.  The trees are flattened
# to vectors (their leaves raveled one after the other), the Jacobian of the vectors
# computed as a matrix, and the matrix cut into those blocks.


def _direction(x, i):
    """The i-th basis direction of the space of x: of a tree, the i-th of its raveled
    leaves, as a tree like x."""
    if P.kind_of(x) is None:
        return _basis(x, i)
    return _unravel(_unit(_size(x), i), x, 0)


def _unit(n, i):
    return np.where(np.arange(n) == i, 1.0, 0.0)


def _values(t):
    return P.tuple_as(t, "tuple")  # (a list's or a dict's values, as a tuple)


def _size(t):
    """The number of floats in the tree t."""
    if P.kind_of(t) is None:
        return np.size(t)
    return sum([_size(e) for e in _values(t)])


def _offsets(values):
    """Where each tree of `values` starts in their raveled concatenation."""
    return tuple(sum([_size(e) for e in values[:i]]) for i in range(len(values)))


def _ravel(t):
    """The leaves of t raveled, one after the other: a vector of _size(t) floats."""
    if P.kind_of(t) is None:
        return np.reshape(t * 1.0, (np.size(t),))
    return np.concatenate([_ravel(e) for e in _values(t)])


def _unravel(v, like, o):
    """The tree of the structure and shapes of `like` whose leaves are read from the
    vector v, from index o."""
    if P.kind_of(like) is None:
        if len(np.shape(like)) == 0:
            return v[o]
        return np.reshape(v[o:o + np.size(like)], np.shape(like))
    values = _values(like)
    return P.tuple_as(tuple(_unravel(v, e, o + off)
                            for e, off in zip(values, _offsets(values))), P.kind_of(like))


def _out_blocks(matrix, y, x, o):
    """The output tree y, each leaf the argument tree x of its blocks (its rows of
    `matrix` from o)."""
    if P.kind_of(y) is None:
        return _in_blocks(matrix[o:o + np.size(y)], y, x, 0)
    values = _values(y)
    return P.tuple_as(tuple(_out_blocks(matrix, e, x, o + off)
                            for e, off in zip(values, _offsets(values))), P.kind_of(y))


def _in_blocks(rows, y, x, o):
    if P.kind_of(x) is None:
        return np.reshape(rows[:, o:o + np.size(x)], np.shape(y) + np.shape(x))
    values = _values(x)
    return P.tuple_as(tuple(_in_blocks(rows, y, e, o + off)
                            for e, off in zip(values, _offsets(values))), P.kind_of(x))


def jacfwd_of(f, argnums, args):
    if isinstance(argnums, int):
        return _jacfwd_one(f, argnums, args)
    return tuple(_jacfwd_one(f, k, args) for k in argnums)


def jacrev_rows(y, bprop, argnums, args):
    """The rows of jacrev, from `y, bprop = J(f)(*args)` (made by the program around:
    one forward pass for every argnum)."""
    if isinstance(argnums, int):
        return _rows(y, bprop, argnums, args)
    return tuple(_rows(y, bprop, k, args) for k in argnums)


def hessian_of(f, argnums, args):
    if isinstance(argnums, int):
        return _jacfwd_one(grad(f, argnums), argnums, args)
    return tuple(tuple(_jacfwd_one(grad(f, i), j, args) for j in argnums)
                 for i in argnums)


#: kind -> the subset function that computes it from (f, argnums, args); jacrev's
#: from (y, bprop, argnums, args)
_OF = {"jacfwd": jacfwd_of, "jacrev": jacrev_rows, "hessian": hessian_of}


def _fill(graph, kind, f, jf, params, argnums, fn_name=None):
    """Make `graph` (parameters `params`) compute `<kind>_of(f, argnums, params)`, or
    for jacrev `jacrev_rows(*jf(*params), argnums, params)` (jf: the node of J(f));
    the parameters at argnums must be differentiable (an integer is refused at the
    user's parameter)."""
    nums, many = check_argnums(argnums, len(params), [p.name for p in params])
    args = differentiable_args(graph, params, nums, fn_name)
    if kind == "jacrev":
        pair = graph.apply(jf, *args)
        first = (graph.apply(P.tuple_getitem, pair, 0, name="out"),
                 graph.apply(P.tuple_getitem, pair, 1, name="bprop"))
    else:
        first = (f,)
    graph.output = graph.apply(Constant(parse(_OF[kind])), *first,
                               Constant(nums if many else nums[0]),
                               graph.apply(P.make_tuple, *args))
    return graph


def jacobian_graph(kind, fn_graph, argnums):
    """The program `(x1..xn) -> <kind>_of(f, argnums, (x1..xn))` of a graph without
    free variables (what `myia.jacfwd(f, argnums)` etc. compile)."""
    g = Graph(f"{kind}_{fn_graph.name}", fn_graph.loc)
    g.flags = {"kind": "adjoint"}
    g.defaults = dict(fn_graph.defaults)
    params = [g.add_parameter(p.name, p.loc) for p in fn_graph.parameters]
    jf = Constant(J_graph(fn_graph)) if kind == "jacrev" else None
    return _fill(g, kind, Constant(fn_graph), jf, params, argnums, fn_graph.name)


class JacobianMacro(GradMacro):
    """`jacfwd(fn, argnums=0)` (and jacrev, hessian) as a value inside subset code:
    like `grad`, a function of fn's arguments, whose program calls `<kind>_of`."""

    writes_jvp = True  # (J of a program that calls it waits for its typed program)

    def __init__(self, kind):
        super().__init__(kind)
        self.kind = kind

    def expand(self, arity, argnums, names=None, defaults=None):
        names = tuple(names) if names else tuple(f"x{i}" for i in range(arity))
        key = (arity, argnums, names)
        g = self._graphs.get(key)
        if g is None:
            make = Graph(f"make_{self.kind}")
            make.flags = {"kind": "adjoint", "core": True}
            f = make.add_parameter("f")
            make.add_parameter("argnums")
            inner = Graph(self.kind)
            inner.flags = {"kind": "adjoint"}
            params = [inner.add_parameter(n) for n in names]
            jf = inner.apply(P.J, f, name="Jf") if self.kind == "jacrev" else None
            make.output = Constant(_fill(inner, self.kind, f, jf, params, argnums))
            g = self._graphs[key] = make
        return g

    def __repr__(self):
        return f"<{self.kind} macro>"


JACFWD = JacobianMacro("jacfwd")
JACREV = JacobianMacro("jacrev")
HESSIAN = JacobianMacro("hessian")
