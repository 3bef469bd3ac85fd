"""The pipeline: parse -> (infer -> specialize -> optimize) -> run on a backend.

The stages are a table (`STAGES`: name -> Stage); `Pipeline.stage(fn, args, name)`
returns the program as it is after that stage, with the seconds that stage took for
it (what `myia.ir` and the kernel's `%ir` show; `%ir f --stages` shows them all).

The typed and optimized programs of a graph for a signature are computed once and kept
on the graph itself (`Graph.derived`): every pipeline, and every transform of the same
function, shares them, and they go when the graph goes.  A transform may build its
graph for a signature (`__myia_graph_for__`): `grad` differentiates the optimized
program of its function for the same signature (see `myia.api.GradFunction`).
"""

import inspect
import time
import warnings

from . import progress
from .abstract import AFunction, ATuple
from .backend import make_backend
from .backend.vm import VM
from .errors import MyiaError, MyiaTypeError
from .gc_pause import gc_paused
from .infer import signature_of, specialize
from .ir import Graph, clone_many, manage
from .ir.print import format_graphs
from .opt import PassLog, optimize
from .parser.programs import header, to_graph
from .prim import Primitive
from .viz import VizUnavailable, render, to_svg

class Stage:
    """One stage of the pipeline: `show(fn, signature)` is the program after it (a
    view that prints, with `.seconds`: what this stage took for this program, measured
    when it was made; later stages reuse it)."""

    def __init__(self, name, what, show):
        self.name, self.what, self.show = name, what, show

    def __repr__(self):
        return f"<stage {self.name}: {self.what}>"


def _parsed(fn, signature):
    t0 = time.perf_counter()
    # (a transform whose program exists only for argument types, vmap: for those)
    graph = to_graph(fn) if signature is None else to_graph(fn, signature)
    # the parser keeps each function's graph: the first parse is the one timed
    graph.derived.setdefault("seconds parsed", time.perf_counter() - t0)
    return IRView(graph, "parsed", graph.derived["seconds parsed"])


def _typed(fn, signature):
    graph = specialized_for(fn, signature)
    return IRView(graph, "typed", graph.derived.get("seconds typed"))


def _optimized(fn, signature):
    graph, log = optimized_for(fn, signature)
    view = IRView(graph, "optimized", graph.derived.get("seconds optimized"))
    view.log = log
    view.passes = lambda: optimization_steps(fn, signature)
    return view


def _native(fn, signature):
    return NativeView(optimized_for(fn, signature)[0])


#: the stages a program goes through, in order, each shown by
#: `myia.ir(fn, *args, stage=name)`
STAGES = {s.name: s for s in (
    Stage("parsed", "the graph of the source (myia.parser.programs.to_graph)", _parsed),
    Stage("typed", "specialized for the arguments' types and shapes (myia.infer)", _typed),
    Stage("optimized", "rewritten by the optimizer (myia.opt): what every backend runs",
          _optimized),
    Stage("native", "the LLVM IR the llvm backend makes of it, after LLVM's optimizer: "
          "what becomes machine code (myia.backend.llvm)", _native),
)}


class IRView:
    """A program at one stage: prints as text, counts operations, draws itself;
    `seconds`: what the stage took for it (None where not measured)."""

    def __init__(self, graph, stage, seconds=None):
        self.graph = graph
        self.stage = stage
        self.seconds = seconds

    def __str__(self):
        return format_graphs([self.graph])

    def __repr__(self):
        return str(self)

    def graphs(self):
        return manage(self.graph).graphs

    def op_count(self):
        """Primitive applications in all graphs reachable from this one."""
        mng = manage(self.graph)
        return sum(
            1
            for g in mng.graphs
            for n in mng.nodes(g)
            if n.is_apply() and n.inputs[0].is_constant(Primitive)
        )

    # ---- drawing (myia.viz) ----------------------------------------------------------

    def render(self, **kw):
        """A `graphviz.Digraph` of the program (see `myia.viz.render` for options)."""
        return render(self, **kw)

    def _repr_svg_(self):
        try:
            return to_svg(self.render())
        except VizUnavailable:
            return None

    def _repr_mimebundle_(self, include=None, exclude=None):
        """Jupyter: the drawing (image/svg+xml) where Graphviz's `dot` is installed,
        and always the text IR (text/plain); without `dot`, a warning says why."""
        bundle = {"text/plain": str(self)}
        try:
            bundle["image/svg+xml"] = to_svg(self.render())
        except VizUnavailable as e:
            warnings.warn(str(e), RuntimeWarning, stacklevel=2)
        return bundle


class NativeView:
    """The LLVM IR of a program after LLVM's optimizer (`str`), which LLVM turns into
    machine code; `before` is the IR as the llvm backend wrote it."""

    stage = "native"

    def __init__(self, graph):
        # the llvm backend's own compiler: this stage shows what it makes, whichever
        # backend runs the program
        # import here: the llvm backend is loaded when a program first needs it
        from .backend.llvm.dispatch import compile_program

        self.graph = graph
        dump = {}
        t0 = time.perf_counter()
        compile_program(graph, dump=dump)
        self.seconds = time.perf_counter() - t0
        self.text, self.before = dump["optimized"], dump["ir"]

    def __str__(self):
        return self.text

    def __repr__(self):
        return self.text

    def _definitions(self):
        """(name, text) of each function the module defines."""
        name, lines = None, []
        for line in self.text.splitlines():
            if line.startswith("define "):
                name, lines = line.split("@", 1)[1].split("(", 1)[0], []
            if name is not None:
                lines.append(line)
                if line == "}":
                    yield name, "\n".join(lines)
                    name = None

    def functions(self):
        """The names of the functions the module defines."""
        return [name for name, _ in self._definitions()]

    def program(self):
        """The functions of the program itself, without the entry that takes Python's
        arguments and boxes the result (what `%ir f native` prints)."""
        return "\n\n".join(text for name, text in self._definitions()
                            if not name.endswith("_entry"))


class Pipeline:
    """The stages of one backend's programs: `stage` shows a program at a stage,
    `run` runs it.  Every backend runs the program the "optimized" stage shows
    (`optimized_program`); the VM, for a program that returns a function (vjp's
    backpropagator), the typed one (`vm_program`).  The cupy backend raises
    MyiaBackendError where there is no GPU."""

    def __init__(self, backend="vm"):
        self.backend = backend
        self.impl = make_backend(backend, vm_program if backend == "vm" else optimized_program)
        # the VM that runs function values handed to Python (vjp's backpropagator)
        self.vm = getattr(self.impl, "vm", None) or VM()
        self.llvm = self.impl if backend == "llvm" else None  # (its native entries: api)

    def stage(self, fn, args, name):
        if name not in STAGES:
            raise MyiaError(
                f"unknown stage {name!r}", hint=f"choose one of {', '.join(STAGES)}")
        if name == "parsed":
            per_types = args and getattr(fn, "program_needs_types", False)
            return STAGES[name].show(fn, signature_of(args) if per_types else None)
        _, names, defaults = header(fn)
        if not args and any(n not in defaults for n in names):
            raise MyiaError(
                f"the {name} stage needs example arguments (their types and shapes)",
                hint=f"e.g. myia.ir(f, 3.0, np.ones((2, 3)), stage=\"{name}\")")
        return STAGES[name].show(fn, signature_of(args))

    def optimized(self, fn, args):
        """(the optimized graph of `fn` for arguments like `args`, the pass log)."""
        return optimized_for(fn, signature_of(args))

    def specialize(self, fn, args):
        """The graph of `fn` specialized (typed) for arguments like `args` (types and
        shapes, not values: f(2.0) and f(3.0) share one)."""
        return specialized_for(fn, signature_of(args))

    def run(self, fn, args, kwargs):
        """fn(*args, **kwargs) on this backend (keywords bound to positions first)."""
        if kwargs:
            args = bind_keywords(fn, args, kwargs)
        return self.impl.run(fn, args)


def optimized_program(fn, signature):
    """The program every backend runs: the optimized graph of `fn` for `signature`.
    AD's symbolic zeros vanish at compile time, and type errors appear before anything
    runs."""
    return optimized_for(fn, signature)[0]


def vm_program(fn, signature):
    """The program the VM runs: the optimized one, but for a program that returns a
    function (vjp's backpropagator, handed to Python) the typed one: the optimizer
    leaves a closure nothing calls inside the program untyped."""
    typed = specialized_for(fn, signature)
    return typed if returns_function(typed) else optimized_for(fn, signature)[0]


def returns_function(typed):
    """Does the typed program return a function value (or a tuple holding one)?"""
    def holds(a):
        if isinstance(a, AFunction):
            return True
        return isinstance(a, ATuple) and any(holds(e) for e in a.elements)

    out = typed.output
    if out.abstract is None and out.is_constant(Graph):  # `f = lambda x: ...`
        return True
    return holds(out.abstract)


def specialized_for(fn, signature):
    """The typed graph of `fn` for argument abstracts `signature`, made once per graph
    and signature (kept in the graph's `derived`)."""
    t0 = time.perf_counter()  # (a transform builds its program for the signature here)
    graph = to_graph(fn, signature)
    key = ("typed", signature)
    typed = graph.derived.get(key)
    if typed is None:
        with gc_paused(), progress.stage("inferring types", graph.name):
            typed = graph.derived[key] = specialize(graph, list(signature))
        typed.derived["seconds typed"] = time.perf_counter() - t0
    return typed


class PassStep:
    """One pass of the optimizer: its name, the rules that fired (a Counter), its time,
    the program before and after it (IRViews), and what it removed from the first
    and added in the second (sets of their nodes and graphs)."""

    def __init__(self, name, counts, seconds, before, after, removed, added):
        self.name, self.counts, self.seconds = name, counts, seconds
        self.before, self.after = before, after
        self.removed, self.added = removed, added

    def __repr__(self):
        return (f"<PassStep {self.name}: {self.before.op_count()} -> "
                f"{self.after.op_count()} operations>")


def optimization_steps(fn, signature, finish=True):
    """[PassStep]: the optimizer run again on `fn` for `signature`, keeping a copy of
    the program before and after each pass (what `%ir f --passes` draws)."""
    typed = specialized_for(fn, signature)
    log = PassLog(keep_programs=True)
    with gc_paused():
        copy = clone_many(manage(typed).graphs)[typed]
        optimize(copy, log, private=True, finish=finish)
    steps = []
    for (name, counts, seconds, _, _), (g0, o0), (g1, o1) in zip(
            log.passes, log.programs, log.programs[1:]):
        kept0, kept1 = set(o0.values()), set(o1.values())
        removed = {n for n, orig in o0.items() if orig not in kept1}
        added = {n for n, orig in o1.items() if orig not in kept0}
        steps.append(PassStep(name, counts, seconds, IRView(g0, "optimized"),
                              IRView(g1, "optimized"), removed, added))
    return steps


def optimized_for(fn, signature, finish=True):
    """(the optimized graph of `fn` for `signature`, the pass log), made once per graph
    and signature.  `finish=False`: before the finishing rules, as J takes it."""
    graph = to_graph(fn, signature)
    key = ("optimized" if finish else "optimized for J", signature)
    entry = graph.derived.get(key)
    if entry is None:
        log = PassLog()
        # a copy of the whole program: the rewrites change graphs in place, and the
        # typed graphs (and the graphs they call) are shared with other stages
        with gc_paused():
            typed = specialized_for(graph, signature)
            t0 = time.perf_counter()
            with progress.stage("optimizing", graph.name):
                copy = clone_many(manage(typed).graphs)[typed]
                optimize(copy, log, private=True, finish=finish)
            copy.derived["seconds optimized"] = time.perf_counter() - t0
        entry = graph.derived[key] = (copy, log)
    return entry


def bind_keywords(fn, args, kwargs):
    """The positional arguments of `fn(*args, **kwargs)`: keywords in their places, and
    the defaults of the parameters before the last one given (JAX's jit binds them
    the same way); a keyword `fn` does not have is a MyiaTypeError."""
    names = getattr(fn, "param_names", None)
    if names is not None:
        defaults = fn.defaults
    else:
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            params = ()
        names = tuple(p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                          p.POSITIONAL_OR_KEYWORD))
        defaults = {p.name: p.default for p in params if p.default is not p.empty}
    kwargs = dict(kwargs)
    out = list(args)
    name = getattr(fn, "__name__", "the function")
    for k in names[len(args):]:
        if not kwargs:
            break
        if k in kwargs:
            out.append(kwargs.pop(k))
        elif k in defaults:
            out.append(defaults[k])
        else:
            raise MyiaTypeError(f"{name}() is missing the argument `{k}`",
                                hint="pass it by position or by name")
    if kwargs:
        bad = next(iter(kwargs))
        what = "got the argument" if bad in names[:len(args)] else "has no parameter"
        raise MyiaTypeError(f"{name}() {what} `{bad}`" + (" twice" if what.startswith("got")
                                                          else ""),
                            hint=f"its parameters: {', '.join(names) or 'none'}")
    return tuple(out)
