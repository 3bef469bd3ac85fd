"""The Myia Jupyter kernel and terminal REPL.

    python -m myia_kernel install [--user|--sys-prefix|--prefix P]   install the kernelspec
    python -m myia_kernel repl                                         the terminal REPL
    myia-repl                                                          the same
    python -m myia_kernel run NB.ipynb --html OUT.html                 run a notebook

`Session` (in `session`) is the state both share: the namespace, the cells, their
definitions (`definitions`), completion and help (`introspection`), errors as outputs
(`error_output`), the magics (`magics`), the pictures (`display`); `kernel` puts it
behind the Jupyter protocol, `repl` behind prompt_toolkit.
"""

__version__ = "0.1.0.dev0"

KERNEL_NAME = "myia"


def __getattr__(name):
    if name == "Session":
        # import here: the session loads the compiler (seconds); `install` stays fast
        from .session import Session

        return Session
    raise AttributeError(name)
