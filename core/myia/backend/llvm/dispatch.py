"""Compiling typed programs, and calling them from Python.

`compile_program(graph)` lowers a specialized, optimized graph (every node typed) and
returns a `Compiled`: its native entry (see `wrapper`) and the deep-stack variant.

`Dispatcher` is what a compiled function calls: it tries the entry it used last
(the native code checks the argument types itself and answers MISMATCH when they
are not its signature), and otherwise finds or makes the specialization for the
arguments' types:

    r = last_entry(*args)          # ~tens of ns
    if r is MISMATCH: r = slow()   # look up the signature, compile if new
    if r is DEEP:     r = deep()   # the stack budget was spent: run on a big stack

Deep recursion.  A recursion with one recursive call, such as a loop's gradient, is a
loop over an explicit stack in the arena (`explicit_stack`) and uses no native stack.
Other recursions (several recursive calls, mutual recursion through other functions)
are native.  A call first runs on the caller's thread with a stack budget of
SHALLOW_STACK_BUDGET; compiled recursive functions check the stack pointer on entry.
When the budget is spent the call returns DEEP, and runs again (programs are pure)
through the `deep` entry, on a new thread whose stack is DEEP_STACK_SIZE (1 GiB of
address space; only the pages used are committed), with the GIL released.  Past that,
MyiaRecursionError.  An interrupt in the waiting thread sets the interrupt flag, which
the compiled code polls.
"""

import threading
import time

from ...arguments import entry_values
from ...errors import MyiaTypeError
from ...gc_pause import gc_paused
from ...ir import manage
from ...progress import stage
from . import runtime
from .ltypes import Array, Scalar, Static, Tuple
from .lower import Lowering
from .registry import backend_error
from .wrapper import DEEP, MISMATCH, EntryBuilder, make_callable, value_type, with_kinds

#: the stack of the thread that runs deep calls
DEEP_STACK_SIZE = 1 << 30
#: what the deep call leaves unused at the bottom of its stack (Python's frames)
DEEP_STACK_MARGIN = 4 << 20


class Compiled:
    """One compiled signature."""

    def __init__(self, graph, entry, deep, lowering, arg_types, out_type, seconds,
                 made_with=None):
        self.graph = graph
        self.made_with = made_with  # (address, name, error_of, machine code): the entry's
        self.entry = entry
        self.deep = deep
        self.lowering = lowering
        self.arg_types = arg_types
        self.out_type = out_type
        self.seconds = seconds

    def entry_with_fallback(self, fallback):
        """A callable like `entry` that gives `fallback` the calls it cannot take
        (other types, keywords, a deep stack) instead of answering MISMATCH or DEEP."""
        address, name, error_of, code = self.made_with
        return make_callable(address, name, False, error_of, fallback, keep=code)

    def __call__(self, *args):
        r = self.entry(*args)
        if r is DEEP:
            return run_deep(self.deep, args)
        return r


_counter = [0]


def compile_program(graph, dump=None):
    """Lower and compile the typed program `graph`."""
    with stage("generating machine code", graph.name):
        return _compile_program(graph, dump)


def _compile_program(graph, dump):
    t0 = time.perf_counter()
    eng = runtime.engine()
    _counter[0] += 1
    L = Lowering(eng, graph, "myia")
    # what crosses between Python and compiled code is checked first: a program that
    # returns a function is refused for that, whatever its body holds
    arg_types = [L.ltype(p) for p in graph.parameters]
    out_type = L.out_type(graph)
    if L.fvs[graph]:
        raise backend_error(f"the program {graph.name}, which has free variables")
    for t in arg_types:
        _check_boxable(t, "argument", graph)
    _check_boxable(out_type, "result", graph)
    body = L.run()
    # called once per call from each of the two entries: one copy of the code
    body.attributes.add("noinline")
    entry_name = f"{runtime.PREFIX}_entry"
    # (lists and dicts are tuples inside: the entry converts them)
    boundary_args = [with_kinds(t, p.abstract) for t, p in zip(arg_types, graph.parameters)]
    boundary_out = with_kinds(out_type, graph.flags.get("result", graph.output.abstract))
    EntryBuilder(L.module, eng, entry_name, boundary_args, boundary_out, body,
                 deep_budget=DEEP_STACK_SIZE - DEEP_STACK_MARGIN).build()
    code = eng.compile(L.module, [entry_name], dump=dump)
    L.module = body = None  # the machine code is made: the IR (~10 objects an instruction) goes
    error_of = L.errors.error_of
    # the callables keep the machine code (its engine) alive, and nothing else does
    address = code[entry_name]
    entry = make_callable(address, graph.name, False, error_of, keep=code)
    deep = make_callable(address, graph.name + "_deep", True, error_of, keep=code)
    return Compiled(graph, entry, deep, L, arg_types, out_type, time.perf_counter() - t0,
                    made_with=(address, graph.name, error_of, code))


def _check_boxable(t, what, graph):
    if isinstance(t, (Scalar, Array)):
        return
    if isinstance(t, Static) and (t.value is None or isinstance(t.value, (bool, str, int, float))):
        return
    if isinstance(t, Tuple):
        for e in t.elems:
            _check_boxable(e, what, graph)
        return
    raise backend_error(f"a function whose {what} is a {t} (only numbers, arrays and "
                        f"tuples of them cross between Python and compiled code)", graph)


def run_deep(entry, args):
    """Call `entry` on a new thread with a DEEP_STACK_SIZE stack.

    An interrupt while it runs sets the interrupt flag and waits until the native code
    has seen it and returned: no compiled code runs on after the KeyboardInterrupt.
    The wait is on an Event, not `Thread.join`: a join that a KeyboardInterrupt cuts
    short marks the thread stopped while it still runs (CPython 3.11, bpo-45274's
    handling), and every later join returns at once."""
    result = []
    done = threading.Event()

    def target():
        try:
            result.append((True, entry(*args)))
        except BaseException as e:  # noqa: BLE001  (re-raised in the caller)
            result.append((False, e))
        finally:
            done.set()

    with _STACK_LOCK:
        old = threading.stack_size(DEEP_STACK_SIZE)
        try:
            t = threading.Thread(target=target, name="myia-deep-call", daemon=True)
            t.start()
        finally:
            threading.stack_size(old)
    try:
        done.wait()
    except KeyboardInterrupt:
        runtime.request_interrupt()
        _wait_through_interrupts(done)
        runtime.clear_interrupt()
        raise
    ok, value = result[0]
    if ok:
        return value
    value.__traceback__ = None
    raise value


def _wait_through_interrupts(done):
    """Wait for `done`; further interrupts only ask again (the code polls ~every ms)."""
    while True:
        try:
            done.wait()
            return
        except KeyboardInterrupt:
            runtime.request_interrupt()


_STACK_LOCK = threading.Lock()


class Dispatcher:
    """Calls the compiled specialization of `fn` for its arguments' types.

    `specialize(args)` returns the typed, optimized program for the arguments (it
    is called once per new signature)."""

    def __init__(self, specialize, name="fn"):
        self.specialize = specialize
        self.name = name
        self.cache = {}
        self.last = None

    def __call__(self, *args):
        last = self.last
        if last is not None:
            r = last.entry(*args)
            if r is not MISMATCH and r is not DEEP:
                return r
            if r is DEEP:
                return run_deep(last.deep, args)
        return self.slow(args)

    def slow(self, args):
        args = entry_values(args)  # what the native entry did not take as it is
        key = tuple(value_type(a) for a in args)
        c = self.cache.get(key) if None not in key else None
        if c is None:
            with gc_paused():
                graph = self.specialize(args)
                c = compile_program(graph)
            if None not in key:
                self.cache[key] = c
        self.last = c
        r = c.entry(*args)
        if r is DEEP:
            return run_deep(c.deep, args)
        if r is MISMATCH:
            raise MyiaTypeError(
                f"the compiled code of {self.name} does not accept its arguments "
                f"({', '.join(type(a).__name__ for a in args)})",
                hint="pass numbers, NumPy arrays (bool, int64, float32 or float64) or "
                     "tuples of them")
        return r


_ = manage
