"""`myia.vmap`: a function written for one example, applied to a batch of them (JAX's
`jax.vmap` names and axes).  Its program, per argument types, is the batching
transform (myia.ad.batching) of the optimized program of the function for one
example's types."""

from . import progress
from .abstract import AArray, AScalar, ATuple
from .ad.batching import batch_graph
from .ad.batching_rules import abstract_of_node
from .errors import MyiaBatchingError
from .api import _fn_text, _held, _intern, _Transformed
from .ir import Graph
from .ir.protocol import value_graph
from .parser.programs import header
from .pipeline import optimized_for
from .prim import ops as P


class VmapFunction(_Transformed):
    """`vmap(fn, in_axes, out_axes)`: compiled once per argument types, like grad;
    named in subset code it is that program."""

    _kind_name = "vmap"
    #: its "parsed" program is the batched one, made for the arguments' types
    program_needs_types = True

    def __init__(self, fn, in_axes=0, out_axes=0):
        super().__init__(fn)
        self.in_axes = in_axes
        self.out_axes = out_axes
        self._by_signature = {}

    def __myia_header__(self):
        name, names, defaults = header(self.fn)
        return f"vmap_{name}", names, {}

    def __myia_graph__(self):
        # before the types are known, the program that calls this object (inference
        # builds its batched program per call: jacrev(vmap(f)) reads it)
        return value_graph(self)

    def __myia_graph_for__(self, signature):
        if signature not in self._by_signature:
            self._by_signature[signature] = self._graph_for(signature)
        return self._by_signature[signature]

    def _graph_for(self, signature):
        name, names, _ = self.__myia_header__()
        if len(signature) != len(names):
            raise MyiaBatchingError(
                f"{name} takes {len(names)} argument{'s' if len(names) != 1 else ''} "
                f"({', '.join(names)}), got {len(signature)}")
        axes = self._in_axes(len(names), names)
        sizes, example = {}, []
        for i, (a, ax) in enumerate(zip(signature, axes)):
            if ax is None:
                example.append(a)
                continue
            example.append(_one_example(a, ax, f"argument {i} ({names[i]!r})", sizes))
        if not sizes:
            raise MyiaBatchingError(
                f"{name}: no argument is batched (in_axes={self.in_axes!r})",
                hint="give an axis for at least one argument, e.g. in_axes=0")
        if len(set(sizes)) > 1:
            raise MyiaBatchingError(
                f"{name}: the batched axes have different sizes: "
                + ", ".join(f"{w} has {n}" for n, w in sizes.items()),
                hint="batch arguments of the same number of examples")
        (B,) = sizes
        inner, _ = optimized_for(self.fn, tuple(example), finish=False)
        with progress.stage("batching", name):
            batched = batch_graph(inner, [ax is not None for ax in axes], B)
        return self._wrapper(name, names, axes, signature, batched,
                             abstract_of_node(inner.output))

    def _in_axes(self, n, names):
        axes = self.in_axes
        if axes is None or isinstance(axes, int) and not isinstance(axes, bool):
            return (axes,) * n
        if isinstance(axes, (tuple, list)) and len(axes) == n and all(
                a is None or isinstance(a, int) and not isinstance(a, bool) for a in axes):
            return tuple(axes)
        raise MyiaBatchingError(
            f"vmap's in_axes must be an int, None, or a tuple of one int or None per "
            f"argument ({n}: {', '.join(names)}), not {axes!r}")

    def _wrapper(self, name, names, axes, signature, batched, out):
        """(args with their batch axes where in_axes says) -> batched(args with it in
        front), with the output's batch axis moved where out_axes says."""
        g = Graph(name, batched.loc)
        g.flags = {"kind": "batched"}
        args = []
        for n, ax, a in zip(names, axes, signature):
            param = g.add_parameter(n)
            if ax not in (None, 0):
                param = _moved(g, param, a, ax)
            args.append(param)
        g.output = _out_axis(g, g.apply(batched, *args), out, self.out_axes)
        return g

    def __repr__(self):
        return (f"<myia.vmap({_fn_text(self.fn)}, in_axes={self.in_axes!r}, "
                f"out_axes={self.out_axes!r})>")


def _one_example(a, ax, what, sizes):
    """The abstract of one example of `a` batched on axis `ax`."""
    if a.__class__ is ATuple:
        return a.with_elements([_one_example(e, ax, what, sizes) for e in a.elements])
    if a.__class__ is not AArray or not -a.ndim <= ax < a.ndim:
        raise MyiaBatchingError(
            f"vmap: {what} has no axis {ax} to map over: it is {a}",
            hint="give in_axes=None for an argument every example shares")
    ax %= a.ndim
    n = a.shape[ax]
    if n is None:
        raise MyiaBatchingError(f"vmap: the batch axis of {what} ({a}) has no size known "
                                "when compiling")
    sizes.setdefault(n, what)
    rest = a.shape[:ax] + a.shape[ax + 1:]
    return AArray(a.dtype, rest) if rest else AScalar(a.dtype, numpy=True)


def _moved(g, node, a, ax):
    """`node` (of abstract `a`: an array, or a tuple of them) with its axis `ax` in
    front."""
    if a.__class__ is ATuple:
        return g.apply(P.make_tuple, *[_moved(g, g.apply(P.tuple_getitem, node, i), e, ax)
                                       for i, e in enumerate(a.elements)])
    ax %= a.ndim
    return g.apply(P.transpose, node, (ax,) + tuple(i for i in range(a.ndim) if i != ax))


def _out_axis(g, node, out, out_axes):
    if out_axes == 0:
        return node
    if not isinstance(out_axes, int) or isinstance(out_axes, bool):
        raise MyiaBatchingError(f"vmap's out_axes must be an int, not {out_axes!r}")
    if out.__class__ is ATuple:
        return g.apply(P.make_tuple, *[
            _out_axis(g, g.apply(P.tuple_getitem, node, i), e, out_axes)
            for i, e in enumerate(out.elements)])
    rank = (out.ndim if out.__class__ is AArray else 0) + 1
    if not -rank <= out_axes < rank:
        raise MyiaBatchingError(f"vmap: out_axes={out_axes} for an output of rank {rank}")
    ax = out_axes % rank
    perm = list(range(1, rank))
    perm.insert(ax, 0)
    return g.apply(P.transpose, node, tuple(perm))


def vmap(fn, in_axes=0, out_axes=0):
    """`fn` mapped over a batch axis of its arguments (JAX's `jax.vmap`): `in_axes` an
    int, or one int or None per argument (None: every example shares it); the
    outputs are stacked on `out_axes`.  Written for one example, run for all of them
    at once: a matrix-vector product per example becomes one matrix product."""
    key = (fn, in_axes if not isinstance(in_axes, list) else tuple(in_axes), out_axes)
    return _held(_intern(("vmap",) + key, lambda: VmapFunction(fn, *key[1:])))
