"""Backends run the programs the pipeline makes.

Each backend implements one protocol (`Backend`), and is made by name:

    backend = make_backend("llvm", program)   # "vm", "llvm" or "cupy"
    backend.run(fn, args)                     # fn(*args)

`program(fn, signature)` is the pipeline's hook (myia.pipeline): the typed, optimized
graph of `fn` (a function, a transform such as `grad(f)`, or a graph) for the
argument abstracts `signature`.  Every backend runs that same program: what `myia.ir`
shows at the stage "optimized" is what the VM interprets, the LLVM backend lowers and
the CuPy backend fuses.  A backend compiles a program once per signature and keeps it.

    vm     the reference interpreter on NumPy values (myia.backend.vm)
    llvm   native code through llvmlite (myia.backend.llvm)
    cupy   NVIDIA GPUs through CuPy, control flow on the host (myia.backend.cupy)
"""

import importlib
from typing import Any, Callable, Protocol

from .vm.backend import VMBackend

#: the names of the backends, in the order they are listed to users
BACKENDS = ("vm", "llvm", "cupy")


class Backend(Protocol):
    """What the pipeline asks of a backend."""

    name: str

    def compile(self, program) -> Callable[..., Any]:
        """A callable that runs the typed, optimized graph `program` on the values of
        its parameters (inside values: lists and dicts as tuples)."""

    def run(self, fn, args):
        """fn(*args): the program of `fn` for the types of `args`, compiled once per
        signature; arguments and results as Python passes and sees them."""


def make_backend(name, program):
    """The backend `name` running the programs `program(fn, signature)` returns;
    MyiaBackendError where it cannot run here (see `backend_problem`)."""
    if name == "vm":
        return VMBackend(program)
    if name == "llvm":
        # import here: loaded when first named (120-190 ms where MYIA_BACKEND is not llvm)
        from .llvm import LLVMBackend

        return LLVMBackend(program)
    if name == "cupy":
        # import here: loaded when first named (about 13 ms of imports)
        from .cupy import CupyBackend

        return CupyBackend(program)
    raise ValueError(f"unknown backend {name!r}: choose one of {', '.join(BACKENDS)}")


def backend_problem(name):
    """None if the backend `name` can run here, else why not (one sentence)."""
    if name not in BACKENDS:
        return f"there is no backend {name!r} (choose one of {', '.join(BACKENDS)})"
    if name == "vm":
        return None
    try:
        importlib.import_module(f"myia.backend.{name}")
    except ImportError as e:
        return f"the {name} backend cannot load: {e}"
    if name == "cupy":
        # import here: loaded only when asked about (about 13 ms of imports)
        from .cupy import device_problem, load_cupy

        try:
            cupy = load_cupy()
        except Exception as e:  # noqa: BLE001  (any failure to import is the answer)
            return f"CuPy is not usable here: {e}"
        return device_problem(cupy)
    return None


__all__ = ["BACKENDS", "Backend", "backend_problem", "make_backend"]
