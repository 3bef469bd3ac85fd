"""Python functions and Myia's function objects as IR graphs: the programs the
pipeline starts from.

    to_graph(fn)              the graph of a subset function (parsed once), of a NumPy
                              or `math` function Myia knows (`myia.grad(np.sin)`), or
                              the generic program of a transform object
    to_graph(fn, signature)   a transform's program for argument abstracts (`grad`
                              differentiates the optimized program of its function)
    header(fn)                (name, parameter names, defaults), without building a
                              program
"""

import inspect
import math
import sys

import numpy as np

from .. import lib
from ..errors import MyiaError
from ..ir import Graph
from ..ir.protocol import is_myia_class
from .parse import parse, parse_source


def to_graph(fn, signature=None):
    """The IR graph for a Python function or a transformed function (grad...); with a
    `signature` (argument abstracts), the graph a transform builds for it, if any."""
    # only Myia's own objects build their graphs (a user's object is never called here)
    ours = is_myia_class(type(fn))
    if signature is not None and ours:
        for_signature = getattr(fn, "__myia_graph_for__", None)
        if for_signature is not None:
            g = for_signature(signature)
            if g is not None:
                return g
    as_graph = getattr(fn, "__myia_graph__", None) if ours else None
    if as_graph is not None:
        return as_graph()
    if isinstance(fn, Graph):
        return fn
    library = _library_graph(fn)
    if library is not None:
        return library
    return parse(fn)


#: {library function: its graph} (see `_library_graph`)
_LIBRARY_GRAPHS = {}


def _library_graph(fn):
    """A graph that calls `fn`, a NumPy ufunc (or SciPy's: scipy.special.erf) or a `math`
    function that Myia knows (as JAX takes `jnp.sin`: `myia.grad(np.sin)`,
    `myia.jvp(np.tanh, ...)`), or None."""
    try:
        if fn in _LIBRARY_GRAPHS:
            return _LIBRARY_GRAPHS[fn]
        known = lib.lookup(fn) is not None
    except TypeError:  # unhashable: not a library function
        return None
    if not known:
        return None
    if isinstance(fn, np.ufunc) and fn.nout == 1:
        arity = fn.nin
    elif getattr(fn, "__self__", None) is math:
        try:
            arity = len(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            return None
    else:
        return None
    name = fn.__name__
    params = ", ".join("xyzw"[:arity])
    prefix = "np." if isinstance(fn, np.ufunc) else "math."
    if isinstance(fn, np.ufunc) and getattr(np, name, None) is not fn:
        prefix = "special."  # scipy.special.erf, expit... (imported: the user named it)
    source = f"def {name}({params}):\n    return {prefix}{name}({params})\n"
    graph = parse_source(source, f"<{prefix}{name}>", {
        "np": np, "math": math, "special": sys.modules.get("scipy.special")})[name]
    _LIBRARY_GRAPHS[fn] = graph
    return graph


def header(fn):
    """(name, parameter names, defaults) of `fn`: what a call needs to know before any
    program is made (a transform answers without building its graphs)."""
    h = getattr(fn, "__myia_header__", None) if is_myia_class(type(fn)) else None
    if h is not None:
        return h()
    g = to_graph(fn)
    if g.flags.get("varargs"):
        raise MyiaError(
            f"`{g.name}` takes `*{g.param_names[-1]}`: only subset code can call it (by its "
            f"name, so that the extra arguments are known at compile time)",
            hint=f"compile a function with fixed parameters that calls `{g.name}`")
    return g.name, g.param_names, g.defaults
