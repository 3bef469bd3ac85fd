"""The function protocol: how Myia's own function objects give their programs.

A transform object (`myia.grad(f)`, `myia.jet(f)`..., J or T of one: see
myia.ad.transforms) builds its program per argument types, `__myia_graph_for__(
signature)` (None where it has only its generic program, `__myia_graph__()`), and says
its name and parameters (`__myia_header__`).  Named in subset code, it stands for its
*value graph* (`value_graph`), whose body calls the object itself.  Only Myia's own
classes are asked (`is_myia_class`): a user's object with such methods is data, never
called while compiling.

This sits with the IR, below the parser (which resolves names to transform objects),
inference (which builds their programs) and AD (which makes them).
"""

import sys

from .anf import Constant, Graph


def is_transform(value):
    """Whether `value` is a transform object (`myia.grad(f)`, `myia.jet(f)`..., J or T
    of one): it builds a program per argument types (`__myia_graph_for__(signature)`,
    None for its generic program `__myia_graph__()`).  Only Myia's own classes: an
    object of the user's with such a method is data, never called while compiling."""
    cls = type(value)
    return is_myia_class(cls) and hasattr(cls, "__myia_graph_for__")


def is_myia_class(cls):
    """Whether `cls` is one of Myia's own classes: a class that a module of the `myia`
    package defines under its name.  A user's class that claims such a module in its
    `__module__` is not; nor is a class with a metaclass (reading its attributes could
    run the user's code), which Myia's classes do not have."""
    if type(cls) is not type:
        return False
    module = cls.__module__
    if type(module) is not str or module.split(".")[0] != "myia":
        return False
    return getattr(sys.modules.get(module), cls.__name__, None) is cls


def value_graph(t):
    """The graph that the transform object `t` is where subset code names it: its
    parameters (`t.param_names`, `t.defaults`) passed on to a call of `t`, one graph per
    object (`flags["transform"]` is `t`)."""
    g = t.__dict__.get("_myia_value_graph")
    if g is None:
        g = Graph(t.ir_name)
        g.flags = {"transform": t}
        params = [g.add_parameter(name) for name in t.param_names]
        g.defaults = dict(t.defaults)
        g.output = g.apply(Constant(t), *params)
        t.__dict__["_myia_value_graph"] = g
    return g
