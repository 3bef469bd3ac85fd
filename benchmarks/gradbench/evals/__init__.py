"""The evals this tool serves: one module each, named as GradBench names the eval.

Each module's upper part is Myia subset code (plain NumPy, as the eval's README
states the computation); its lower part is `FUNCTIONS`, a table from the names
GradBench evaluates to `Function` records, the only thing the protocol reads.
"""

import importlib
from dataclasses import dataclass
from typing import Any, Callable

#: the modules GradBench may define, each a module of this package
MODULES = ("hello", "lse", "gmm", "kmeans", "ode", "llsq", "det", "lstm", "ht", "particle",
           "saddle")


class UnknownName(LookupError):
    """A module or function this tool does not implement."""


@dataclass(frozen=True)
class Function:
    """One function of an eval.

    program: what `myia.compile` gets: a subset function, or `myia.grad(...)` of one
    prepare: the eval's JSON input -> the tuple of the program's arguments
    post:    the program's result -> the JSON output the eval expects
    static:  the positions of the arguments that are constants of the program
             (`myia.compile(..., static_argnums=static)`: a size that decides shapes)
    """

    program: Any
    prepare: Callable[[Any], tuple]
    post: Callable[[Any], Any]
    static: tuple = ()


def load(name):
    """The FUNCTIONS table of eval `name`."""
    if name not in MODULES:
        raise UnknownName(f"this tool has no module {name!r} (it has: "
                          f"{', '.join(MODULES)})")
    return importlib.import_module(f"{__name__}.{name}").FUNCTIONS


def to_list(value):
    """An array result as JSON (nested lists of floats)."""
    return value.tolist()
