"""What a front end (the Jupyter kernel, the REPL) asks of the compiler beyond the
public API (`import myia`): the one place such a front end imports from, so that the
compiler's modules can move without breaking it (tests/test_layering.py checks that
myia_kernel imports nothing else of myia but `myia`, `myia.errors`, `myia.backend`,
`myia.viz` and this module).

Pipeline
    STAGES                 the stages `myia.ir` shows ("parsed" ... "native")
    default_backend()      the backend `myia.compile` uses when none is given
    returns_function(typed)  does a typed program return a function value?
    entry_values(args)     arguments as compiled programs take them (refusing others)
    progress               the stage a compile is in (`progress.watching`: status lines)
    run_recording(graph, args)  run a graph on the VM, recording every node's value
                           (the values view of `%grad`)
    format_graphs(graphs, note=)  the text IR, with a note after each operation (the
                           values view's text: each node's value)

What a locked session lets through (myia_kernel.seal)
    is_myia_class(cls)     one of Myia's own classes?
    library_value(value)   the Myia function standing for a library value, or None
    class_name(value), library_class(value), foreign_part(value),
    check_not_foreign(value, ...)   values from outside the subset, and their names

Limits
    set_memory_limit(nbytes)   the most bytes one call of compiled code, and one value
                               built while compiling, may hold (None: no limit)
    check_compile_time_size(nbytes, what)  refuse a compile-time value past the limit
    request_interrupt()        ask running compiled code to stop (from another thread)
"""

import sys

from . import progress
from .api import default_backend
from .arguments import entry_values
from .backend.vm.recording import run_recording
from .ir import format_graphs
from .ir.protocol import is_myia_class
from .lib import lookup as library_value
from .parser.resolve import check_not_foreign, class_name, foreign_part, library_class
from .pipeline import STAGES, returns_function
from .prim.shape import check_compile_time_size, set_compile_time_limit


def set_memory_limit(nbytes):
    """The most bytes one call of compiled code may hold, and one value that compiling
    builds (None: no limit)."""
    # import here: a session that never compiles natively does not load llvmlite for
    # its limits
    from .backend.llvm import runtime

    runtime.set_memory_limit(nbytes)
    set_compile_time_limit(nbytes)


def request_interrupt():
    """Ask running compiled code to stop: it raises KeyboardInterrupt within about a
    millisecond.  Where the LLVM runtime was never loaded no compiled code runs, and
    nothing is loaded (this is called from timer threads)."""
    runtime = sys.modules.get("myia.backend.llvm.runtime")
    if runtime is not None:
        runtime.request_interrupt()


__all__ = ["STAGES", "check_compile_time_size", "check_not_foreign", "class_name",
           "default_backend", "entry_values", "foreign_part", "format_graphs",
           "is_myia_class", "library_class", "library_value", "progress",
           "request_interrupt", "returns_function", "run_recording", "set_memory_limit"]
