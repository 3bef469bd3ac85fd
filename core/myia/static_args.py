"""Static arguments: `myia.compile(f, static_argnums=..., static_argnames=...)`.

As in JAX's jit, an argument marked static is not an input of the compiled program
but a constant of it: the program is made for its value (a size that `np.arange(n)`
needs, a flag that picks a branch at compile time), once per distinct value.  Its
value must therefore be hashable (a number, a string, None, a tuple of those), and
each new value compiles a new program.

`bind_static(fn, fixed)` is `fn` with the arguments at the positions of `fixed`
((position, value), ...) replaced by those values: a function object of the other
parameters, whose graph calls `fn`'s with the values as constants.
"""

from .errors import MyiaTypeError, MyiaValueError
from .ir import Graph
from .parser.programs import header, to_graph


def static_positions(fn, static_argnums, static_argnames):
    """The sorted positions of `fn`'s parameters that are static, from JAX's two
    arguments (ints, negative from the end; names), checked against its parameters."""
    _, names, _ = header(fn)
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums or ())
    argnames = (static_argnames,) if isinstance(static_argnames, str) \
        else tuple(static_argnames or ())
    positions = set()
    for i in nums:
        if not isinstance(i, int) or isinstance(i, bool) or not -len(names) <= i < len(names):
            raise MyiaValueError(
                f"static_argnums: {i!r} is not a parameter position of "
                f"{_name(fn)}({', '.join(names)})",
                hint=f"positions 0 to {len(names) - 1}, or negative from the end")
        positions.add(i % len(names))
    for k in argnames:
        if k not in names:
            raise MyiaValueError(f"static_argnames: {_name(fn)} has no parameter `{k}`",
                                 hint=f"its parameters: {', '.join(names) or 'none'}")
        positions.add(names.index(k))
    return tuple(sorted(positions))


def split_static(fn_header, args, positions):
    """(the ((position, value), ...) of the static arguments, the other arguments):
    each static value checked hashable, as it keys a program.  `fn_header`: the
    function's header(fn), read once when it was compiled (not at every call)."""
    fn_name, names, defaults = fn_header
    fixed = []
    for i in positions:
        if i < len(args):
            value = args[i]
        elif names[i] in defaults:
            value = defaults[names[i]]
        else:
            raise MyiaTypeError(f"{fn_name}() is missing the static argument "
                                f"`{names[i]}`", hint="pass it by position or by name")
        try:
            hash(value)
        except TypeError:
            raise MyiaValueError(
                f"the static argument `{names[i]}` of {fn_name} is of type "
                f"{type(value).__name__}, which is not hashable: a static argument's "
                f"value keys the compiled program",
                hint="pass a number, a string, None or a tuple of those; an array is an "
                     "ordinary (not static) argument") from None
        fixed.append((i, value))
    rest = tuple(a for i, a in enumerate(args) if i not in positions)
    return tuple(fixed), rest


class StaticBound:
    """`fn` with the arguments at some positions fixed to values: a function of the
    other parameters (what the pipeline compiles for one set of static values)."""

    def __init__(self, fn, fixed):
        self.fn, self.fixed = fn, fixed
        self._graph = None

    def __myia_header__(self):
        name, names, defaults = header(self.fn)
        kept = [n for i, n in enumerate(names) if i not in dict(self.fixed)]
        return name, kept, {k: v for k, v in defaults.items() if k in kept}

    def __myia_graph__(self):
        if self._graph is None:
            inner = to_graph(self.fn)
            name, names, defaults = header(self.fn)
            fixed = dict(self.fixed)
            shown = ", ".join(f"{names[i]}={v!r}" for i, v in self.fixed)
            g = Graph(f"{name}[{shown}]")
            g.flags = {"static": self.fixed}
            inputs = [fixed[i] if i in fixed else g.add_parameter(n)
                      for i, n in enumerate(names)]
            g.defaults = {k: v for k, v in defaults.items() if k in g.param_names}
            g.output = g.apply(inner, *inputs)
            self._graph = g
        return self._graph

    def __repr__(self):
        return f"<{_name(self.fn)} with static arguments {dict(self.fixed)}>"


def _name(fn):
    return getattr(fn, "__name__", repr(fn))
