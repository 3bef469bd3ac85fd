"""The magics: one function per magic, whose docstring is what `%help magic` shows.

A line magic is `fn(session, line)`, a cell magic `fn(session, line, body, number)`;
both may return a value (the cell's result when the magic is the cell's last item).
They write through `session.print` / `session.display`, and raise `UsageError` for a
wrong call.
"""

import ast
import base64
import inspect
import io
import keyword
import linecache
import math
import re
import resource
import time
import types

import numpy as np

import myia
from myia.backend import BACKENDS, backend_problem
from myia.errors import MyiaBackendError, MyiaError, format_bytes
from myia.introspect import STAGES, entry_values, format_graphs, run_recording
from myia.viz import trace
from myia.viz.trace import format_short

from .definitions import Definition
from .display import describe_type, format_value
from .error_output import UsageError, syntax_error

LINE_MAGICS = {}
CELL_MAGICS = {}
ARG_COMPLETIONS = {}  # magic -> fn(session, first argument or None) -> options


def line_magic(name):
    def register(fn):
        LINE_MAGICS[name] = fn
        return fn
    return register


def cell_magic(name):
    def register(fn):
        CELL_MAGICS[name] = fn
        return fn
    return register


def _usage(msg):
    return UsageError(msg)


def split_args(line):
    """Split a magic's arguments on spaces outside brackets and strings."""
    parts, depth, cur, quote = [], 0, "", None
    for ch in line:
        if quote:
            cur += ch
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch.isspace() and depth == 0:
            if cur:
                parts.append(cur)
            cur = ""
            continue
        cur += ch
    if cur:
        parts.append(cur)
    return parts


def magic_help(name):
    fn = LINE_MAGICS.get(name) or CELL_MAGICS.get(name)
    if fn is None:
        return None
    return inspect.cleandoc(fn.__doc__ or "(no documentation)")


def _stages():
    return tuple(STAGES)


def _lambda_first(tokens):
    """`lambda x: x ** 3 2.0` split on spaces: the lambda as one token (the longest run
    of tokens from the first that reads as a lambda), then the rest."""
    if not tokens or not re.match(r"lambda\b", tokens[0]):
        return tokens
    for k in range(len(tokens), 0, -1):
        text = " ".join(tokens[:k])
        if isinstance(_expression(text), ast.Lambda) and \
                all(t.startswith("--") or _expression(t) is not None for t in tokens[k:]):
            return [text] + tokens[k:]
    # no lambda followed by arguments: its syntax error, located, says why
    # (`lambda x: x +` is not `lambda x: x` and an argument `+`)
    return [" ".join(tokens)]


def _expression(text):
    """The expression node of `text`, or None where it is not one."""
    try:
        return ast.parse(text, mode="eval").body
    except SyntaxError:
        return None


def _function(session, text, magic):
    if re.match(r"lambda\b", text):
        # a lambda of the subset, made by a cell of its own (it has a source line)
        fn = session.evaluate_expression(text)
    else:
        fn = session.eval_python(text)
    if not callable(fn):
        raise _usage(f"%{magic}: `{text}` is not a function (its type is {type(fn).__name__})")
    return fn


def _ir(fn, args, stage):
    return myia.ir(fn, *args, stage=stage)


def _needs_args(fn):
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.default is inspect.Parameter.empty for p in params)


def _best_view(fn, args):
    """(IRView, stage, note): the program at the most advanced stage the pipeline has
    and can make: "optimized", then "typed" (both need example arguments), "parsed"."""
    wanted = ("optimized", "typed", "parsed") if args else ("optimized", "parsed")
    notes = []
    for stage in wanted:
        if stage != "parsed" and not args and _needs_args(fn):
            notes.append(f"give example arguments to see the {stage} program")
        else:
            return _ir(fn, args, stage), stage, "; ".join(notes)
    raise _usage("no stage of the pipeline can show this program")  # pragma: no cover


# ---- the magics ----------------------------------------------------------------------


@line_magic("lsmagic")
def magic_lsmagic(session, line):
    """%lsmagic: list the magics."""
    session.print("Line magics:\n  " + "  ".join("%" + n for n in sorted(LINE_MAGICS))
                  + "\nCell magics:\n  " + "  ".join("%%" + n for n in sorted(CELL_MAGICS))
                  + "\n\n%help MAGIC tells more about one of them.")


@line_magic("help")
def magic_help_cmd(session, line):
    """%help [magic]: how the session works, or what a magic does.

    %help           an overview and the list of magics
    %help grad      the documentation of %grad (also: `%grad?`)
    """
    name = line.strip().lstrip("%")
    if name:
        text = magic_help(name)
        if text is None:
            raise _usage(f"there is no magic `%{name}`; %lsmagic lists them")
        session.print(text)
        return
    rows = []
    for table in (LINE_MAGICS, CELL_MAGICS):
        for n in sorted(table):
            first = inspect.cleandoc(table[n].__doc__ or "").split("\n")[0]
            rows.append("  " + first)
    session.print(
        "A Myia session: cells hold functions written in a subset of Python.\n"
        "  def f(x): ...       joins the session (checked now: errors show at once)\n"
        "  f(2.0)              compiled and run; the last expression is the result\n"
        "  y = f(2.0)          the same, and y joins the session\n"
        "  grad(f)(2.0)        derivatives: grad, value_and_grad, jvp, vjp, hessian,\n"
        "                      jacfwd, jacrev (= jacobian)\n"
        "  jet(f, order=5)(x)  f and its first 5 derivatives (Taylor mode)\n"
        "                      (all of them work inside a def too, nested in any order)\n"
        "  stop_gradient(y)    y, held constant by every derivative\n"
        "  f = custom_vjp(f0, fwd=f_fwd, bwd=f_bwd)\n"
        "                      f0 with its reverse-mode derivative given by a rule\n"
        "  f = custom_jvp(f0, jvp=f_jvp)\n"
        "                      f0 with its forward-mode derivative given by a rule\n"
        "  f = checkpoint(f0)  f0, whose backward pass computes its forward pass again\n"
        "  vmap(f)(xs)         f, written for one example, run on a batch of them\n"
        "                      (in_axes=(0, None): xs batched, the next argument shared)\n"
        "  f?                  help on a name\n"
        "Already there: np, math, grad, value_and_grad, jvp, vjp, jacfwd, jacrev,\n"
        "jacobian, hessian, jet, stop_gradient, custom_vjp, custom_jvp, checkpoint, vmap.\n"
        "A compile that takes more than a second shows the stage it is in.\n"
        + _limits_text(session) + "\n"
        "Magics:\n" + "\n".join(rows))


def _limits_text(session):
    """What %help says of a locked session and of the limits, if any."""
    lines = []
    if session.locked:
        lines.append("This session is locked: cells hold subset code only; %%python and "
                     "every other route to ordinary Python are turned off.")
    if session.time_limit:
        lines.append(f"A cell may run {session.time_limit:g} s at most.")
    if session.memory_limit:
        lines.append(f"One call of compiled code may hold {format_bytes(session.memory_limit)}"
                     f" at most.")
    return "".join(line + "\n" for line in lines)


@line_magic("grad")
def magic_grad(session, line):
    """%grad f [argnums] [example args] [--view V] [--order k]: draw f's derivative.

    Views (--view):
      transform   how reverse mode works: J writes ▶f, which computes f and keeps what
                  the backward pass needs, and ◀f, the backpropagator, which turns the
                  sensitivity of the output into those of the inputs (∂x, ∂w): each
                  box of ◀f undoes one step of ▶f (its label: the line it undoes);
                  dashed edges bring ▶f's values into ◀f.  The default when the
                  program is small enough to read.
      values      the transform run on the example arguments: each forward node with
                  its value, each backward node with its sensitivity.
      optimized   f and its derivative as the optimizer leaves them (what runs), and
                  the ratio of their sizes.  The default for larger programs.
      all         the three, one after the other.

    %grad f                 derivative with respect to the first argument
    %grad f 1               ... with respect to the second one
    %grad f (0, 1)          ... to both (a tuple of gradients)
    %grad f 0 2.0 3.0       with example arguments (the values view needs them; the
                            optimized view specializes for their types, else floats)
    %grad f --order 3       the third derivative's program, grad(grad(grad(f)))
    %grad lambda x: x ** 3 2.0   f written in place (then its example arguments)
    """
    tokens, view = _take_word_option(split_args(line), "--view", GRAD_VIEWS,
                                     "%grad f --view values 2.0")
    tokens, order = _take_option(tokens, "--order", "%grad f --order 3")
    order = 1 if order is None else order
    if order < 1:
        raise _usage(f"%grad --order must be 1 or more, not {order}")
    if not tokens:
        raise _usage("%grad needs a function: %grad f [argnums] [example args] "
                     "[--view transform|values|optimized|all] [--order k]")
    tokens = _lambda_first(tokens)
    fn = _function(session, tokens[0], "grad")
    rest = [session.eval_python(t) for t in tokens[1:]]
    argnums = 0
    if rest and _is_argnums(rest[0]):
        argnums = rest.pop(0)
    if order > 1 and not isinstance(argnums, int):
        raise _usage("%grad --order k above 1 takes one argnum (a derivative of a tuple "
                     "of gradients is not a float)")
    args = tuple(rest)
    name = tokens[0]
    derivative, what = fn, name
    for _ in range(order):
        derivative = myia.grad(derivative, argnums)
        what = f"grad({what}" + (f", argnums={argnums!r}" if argnums != 0 else "") + ")"
    if view == "values" and not args:
        raise _usage(f"--view values runs {name}: give example arguments, e.g. "
                     f"`%grad {name} {argnums!r} 2.0`")
    if view is None:
        view = "transform" if _readable(derivative) else "optimized"
    views = ("transform", "values", "optimized") if view == "all" else (view,)
    for v in views:
        if v == "transform":
            _show_transform(session, derivative, what)
        elif v == "values" and args:
            _show_values(session, derivative, what, args)
        elif v == "values":  # (--view all without example arguments)
            session.print(f"(the values view runs {name}: give example arguments to see "
                          f"it, e.g. `%grad {name} 2.0 --view all`)")
        elif v == "optimized":
            _show_optimized(session, fn, derivative, name, what, args)


GRAD_VIEWS = ("transform", "values", "optimized", "all")
#: magic -> {option: the values it takes (() for a number)}, for completion
OPTION_COMPLETIONS = {"grad": {"--view": GRAD_VIEWS, "--order": ()}}
#: the largest transform drawn by default (drawn items, the library's graphs left out)
READABLE_ITEMS = 160


def _readable(derivative):
    try:
        scene = trace(myia.ir(derivative).graph, library=False)
    except Exception:  # noqa: BLE001  (the optimized view reports what is wrong)
        return False
    return len(scene.items) <= READABLE_ITEMS


def _draw(session, view, **options):
    """Display a program's pictures, each as its own output (a front end that saves
    drawings as files, the REPL or jupyter console, then saves every one)."""
    for b in session.picture_bundles(view, **options):
        session.display(b)


def _show_transform(session, derivative, what):
    view = myia.ir(derivative)
    scene = trace(view.graph, library=False)
    drawn = sum(it.role == "apply" for it in scene.items.values())
    session.print(f"{what}: the transform, as J writes it (▶ forward graphs, ◀ backward "
                  f"graphs; {drawn} operations)")
    for b in session.picture_bundles(view, library=False, title=f"{what}: the transform"):
        session.display(b)


def _show_values(session, derivative, what, args):
    view = myia.ir(derivative)
    result, values, _ = run_recording(view.graph, entry_values(args))
    # arrays as their shape and first numbers, as on the nodes
    shown = ", ".join(format_short(a, 40) for a in args)
    session.print(f"{what}({shown}) = {format_value(result)}\n"
                  f"each node shows its value; in ◀ graphs, a sensitivity (∂out/∂node)")
    # the text (what a terminal shows beside the picture's file) has the values too
    text = format_graphs([view.graph], note=lambda n: _value_note(values, n))
    for b in session.picture_bundles(view, text=text, library=False, values=values,
                                     title=f"{what} at ({shown})"):
        session.display(b)


def _value_note(values, node):
    """The value a node took, as the values view draws it (None: not run)."""
    if node not in values:
        return None
    return format_short(values[node], 40)


def _show_optimized(session, fn, derivative, name, what, args):
    if not args:
        # no example arguments: the program for float arguments (the common case of
        # a derivative), else the parsed program
        args = _float_examples(fn)
        if args:
            session.print(f"(optimized for float arguments {args}; give example arguments "
                          f"after the argnums to choose others)")
    primal, p_stage, _ = _best_view(fn, args)
    adjoint, a_stage, note = _best_view(derivative, args)
    p_ops, a_ops = primal.op_count(), adjoint.op_count()
    session.print(f"primal {name}: {p_ops} primitive operations ({p_stage})")
    _draw(session, primal)
    session.print(f"adjoint {what}: {a_ops} primitive operations ({a_stage}"
                  + (f"; {note}" if note else "") + ")")
    _draw(session, adjoint)
    ratio = f"{a_ops / p_ops:.1f}x" if p_ops else "n/a (the primal has no operations)"
    session.print(f"adjoint/primal operations: {a_ops}/{p_ops} = {ratio}")


def _take_word_option(tokens, flag, choices, example):
    """(tokens without `flag WORD` or `flag=WORD`, WORD or None), WORD among `choices`."""
    out, value, i = [], None, 0
    while i < len(tokens):
        t = tokens[i]
        if t == flag or t.startswith(flag + "="):
            value = t[len(flag) + 1:] if "=" in t else (tokens[i + 1] if i + 1 < len(tokens) else "")
            i += 1 if "=" in t else 2
            if value not in choices:
                raise _usage(f"{flag} takes one of {', '.join(choices)}, not {value!r}; "
                             f"e.g. {example}")
            continue
        out.append(t)
        i += 1
    return out, value


def _take_option(tokens, flag, example):
    """(tokens without `flag N` or `flag=N`, N as an int or None)."""
    out, value, i = [], None, 0
    while i < len(tokens):
        t = tokens[i]
        if t == flag or t.startswith(flag + "="):
            text = t[len(flag) + 1:] if "=" in t else (tokens[i + 1] if i + 1 < len(tokens) else "")
            i += 1 if "=" in t else 2
            try:
                value = int(text)
            except ValueError:
                raise _usage(f"{flag} needs a whole number, e.g. {example}") from None
            continue
        if t.startswith("--"):
            raise _usage(f"unknown option {t}; e.g. {example}")
        out.append(t)
        i += 1
    return out, value


def _float_examples(fn):
    """1.0 for each parameter without a default, if `fn` compiles for floats; else ()."""
    try:
        graph = myia.ir(fn).graph
        n = sum(1 for p in graph.parameters if p.name not in graph.defaults)
        args = (1.0,) * n
        myia.ir(fn, *args, stage="typed")
        return args
    except Exception:  # not a float function: the parsed program will be shown
        return ()


def _is_argnums(v):
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    return isinstance(v, tuple) and v != () and all(
        isinstance(a, int) and not isinstance(a, bool) for a in v)


@line_magic("ir")
def magic_ir(session, line):
    """%ir f [stage] [example args] | %ir f --passes | %ir f --stages: the program f,
    drawn and as text.

    stage: parsed (default), typed, optimized or native: the stages the pipeline has
    (all but parsed need example arguments to specialize f).  native prints the LLVM
    IR that the llvm backend makes of the optimized program, after LLVM's optimizer.

    %ir f                     the parsed program
    %ir f optimized 2.0       f optimized for a float argument
    %ir grad(f) native 2.0    the machine-level code of the derivative (LLVM IR)
    %ir grad(f)               the derivative program (any function value works)
    %ir f --passes 2.0        the optimizer's pass log, and the program before/after
    %ir f --stages 2.0        each stage in turn: the seconds it took, its program's size
    """
    tokens = split_args(line)
    if not tokens:
        raise _usage("%ir needs a function: %ir f [stage] [example args]")
    passes, stages = "--passes" in tokens, "--stages" in tokens
    tokens = _lambda_first([t for t in tokens if t not in ("--passes", "--stages")])
    fn = _function(session, tokens[0], "ir")
    stage = None
    if len(tokens) > 1 and tokens[1] in _stages():
        stage = tokens[1]
        tokens.pop(1)
    elif len(tokens) > 1 and tokens[1].isidentifier() and not keyword.iskeyword(tokens[1]) \
            and tokens[1] not in session.namespace:
        raise _usage(f"`{tokens[1]}` is not a stage ({', '.join(_stages())}) nor a name "
                     f"defined in this session")
    args = tuple(session.eval_python(t) for t in tokens[1:])
    name = tokens[0]
    if passes:
        return _show_passes(session, fn, name, args)
    if stages:
        return _show_stages(session, fn, name, args)
    stage = stage or "parsed"
    if stage != "parsed" and not args and _needs_args(fn):
        raise _usage(f"the {stage!r} stage specializes {name} for the types of its "
                     f"arguments: give example arguments, e.g. `%ir {name} {stage} 2.0`")
    view = _ir(fn, args, stage)
    if stage == "native":
        session.print(f"{name} (native): the LLVM IR of the optimized program, after "
                      f"LLVM's optimizer (without the entry that converts Python's "
                      f"values)\n\n"
                      f"{view.program()}")
        return
    session.print(f"{name}: {view.op_count()} primitive operations ({stage})")
    _draw(session, view)


def _show_stages(session, fn, name, args):
    """Each stage of the pipeline for f: what it is, the seconds it took (when it was
    made: a stage asked again is not made again), and the size of its program."""
    if not args and _needs_args(fn):
        raise _usage(f"the stages after parsing specialize {name} for the types of its "
                     f"arguments: give example arguments, e.g. `%ir {name} --stages 2.0`")
    rows = []
    for stage in _stages():
        view = _ir(fn, args, stage)
        size = (f"{len(view.program().splitlines())} lines of LLVM IR" if stage == "native"
                else f"{view.op_count()} primitive operations")
        seconds = "" if view.seconds is None else f"{view.seconds * 1e3:9.1f} ms"
        rows.append(f"{stage:<10} {seconds:>12}   {size}")
    session.print(f"the stages of {name} (`%ir {name} <stage> ...` shows one):\n"
                  + "\n".join(rows))


def _show_passes(session, fn, name, args):
    if not args and _needs_args(fn):
        raise _usage(f"the optimizer works on {name} specialized for argument types: give "
                     f"example arguments, e.g. `%ir {name} --passes 2.0`")
    after = _ir(fn, args, "optimized")
    steps = after.passes()
    session.print(f"pass log of {name} (each pass starts where the previous one ended):\n"
                  f"{after.log}")
    changed = [st for st in steps if st.removed or st.added]
    if not changed:
        session.print("no pass changed the program: it is drawn once")
        _draw(session, after)
        return
    for st in changed:
        fired = ", ".join(f"{r} ×{n}" for r, n in st.counts.most_common()) or "no rule"
        b, a = st.before.op_count(), st.after.op_count()
        session.print(f"{st.name}: {b} -> {a} operations ({fired}); before it, in red what "
                      f"it removed; after it, in green what it added")
        _draw(session, st.before, marks=dict.fromkeys(st.removed, "removed"),
              title=f"before {st.name}")
        _draw(session, st.after, marks=dict.fromkeys(st.added, "added"),
              title=f"after {st.name}")


@line_magic("backend")
def magic_backend(session, line):
    """%backend [vm|llvm|cupy]: show or choose the backend that runs compiled code.

    vm: the reference interpreter (NumPy); llvm: native code through LLVM; cupy: the
    GPU.  A session starts on $MYIA_BACKEND, else llvm.  A backend that cannot run
    here is refused with the reason.
    """
    name = line.strip()
    if not name:
        rows = []
        for b in BACKENDS:
            why = backend_problem(b)
            mark = "*" if b == session.backend else " "
            state = "available" if why is None else f"unavailable: {why}"
            rows.append(f" {mark} {b:<5} {state}")
        session.print("backends (* = current):\n" + "\n".join(rows))
        return
    why = backend_problem(name)
    if why is not None:
        raise MyiaBackendError(f"cannot use the backend {name!r}: {why}",
                               hint=f"stay on {session.backend!r}, or `%backend vm`")
    session.backend = name
    session._compiled.clear()
    session.print(f"backend: {name}")


def format_time(timespan, precision=3):
    """IPython's format of a duration: 1.23 ms, 456 µs, 1min 2s."""
    if timespan >= 60.0:
        parts = [("d", 60 * 60 * 24), ("h", 60 * 60), ("min", 60), ("s", 1)]
        out = []
        leftover = timespan
        for suffix, length in parts:
            value = int(leftover / length)
            if value > 0:
                leftover = leftover % length
                out.append(f"{value}{suffix}")
            if leftover < 1:
                break
        return " ".join(out)
    units = ["s", "ms", "\xb5s", "ns"]
    scaling = [1, 1e3, 1e6, 1e9]
    order = min(-int(math.floor(math.log10(timespan)) // 3), 3) if timespan > 0.0 else 3
    return "%.*g %s" % (precision, timespan * scaling[order], units[order])


@line_magic("time")
def magic_time(session, line):
    """%time expr: run a subset expression once and say how long it took.

    The time includes compiling the expression for its argument types (the first run of
    a new signature); %timeit measures the compiled code alone.
    """
    if not line.strip():
        raise _usage("%time needs an expression: %time f(2.0)")
    wrapper, node = session.wrap_expression(line)
    t_os = _os_times()
    t0 = time.perf_counter()
    value = session._evaluate(wrapper, node)
    wall = time.perf_counter() - t0
    t_os2 = _os_times()
    user, sys_ = t_os2[0] - t_os[0], t_os2[1] - t_os[1]
    session.print(f"CPU times: user {format_time(user)}, sys: {format_time(sys_)}, "
                  f"total: {format_time(user + sys_)}\nWall time: {format_time(wall)}")
    return value


def _os_times():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime


@line_magic("timeit")
def magic_timeit(session, line):
    """%timeit [-n N] [-r R] expr: time a subset expression, IPython's way.

    Compiles the expression first (not timed), then runs R rounds (default 7) of N
    calls (default: enough for 0.2 s a round) and prints the mean and standard
    deviation per call, e.g.
        1.23 µs ± 45.6 ns per loop (mean ± std. dev. of 7 runs, 100,000 loops each)
    """
    m = re.match(r"^((?:\s*-[nr]\s*\d+)*)\s*(.*)$", line)
    opts, expr = m.group(1), m.group(2)
    number = repeat = None
    for flag, val in re.findall(r"-([nr])\s*(\d+)", opts):
        if flag == "n":
            number = int(val)
        else:
            repeat = int(val)
    if not expr.strip():
        raise _usage("%timeit needs an expression: %timeit [-n N] [-r R] f(2.0)")
    repeat = repeat or 7
    wrapper, node = session.wrap_expression(expr)
    if session._uses_host_transforms(node):
        def call():  # (read without running Python: see seal.SafeEval)
            return session._evaluate(wrapper, node)
    else:
        call = myia.compile(wrapper, backend=session.backend)
    call()  # compile (and warm up): not timed

    def timed(n):
        t0 = time.perf_counter()
        for _ in range(n):
            call()
        return time.perf_counter() - t0

    if number is None:
        number = 1
        for k in range(10):
            for mult in (1, 2, 5):
                number = mult * 10 ** k
                if timed(number) >= 0.2:
                    break
            else:
                continue
            break
    runs = [timed(number) / number for _ in range(repeat)]
    mean = float(np.mean(runs))
    std = float(np.std(runs))
    session.print(
        f"{format_time(mean)} \xb1 {format_time(std)} per loop (mean \xb1 std. dev. of "
        f"{repeat} run{'s' if repeat != 1 else ''}, {number:,} loop"
        f"{'s' if number != 1 else ''} each)")


@line_magic("type")
def magic_type(session, line):
    """%type expr: the type of a subset expression.

    The type inferred by the compiler when the pipeline has a typed stage; otherwise
    the type of the value the expression computes (said so).
    """
    if not line.strip():
        raise _usage("%type needs an expression: %type f(2.0)")
    wrapper, node = session.wrap_expression(line)
    # (jvp, vjp, hessian and jet run in Python, read by seal.SafeEval: no typed program)
    inferred = None if session._uses_host_transforms(node) else _inferred_type(wrapper)
    if inferred is not None:
        session.print(f"{inferred}")
        return
    value = session._evaluate(wrapper, node)
    session.print(f"{describe_type(value)}    (the type of the value)")


def _inferred_type(wrapper):
    try:
        view = myia.ir(wrapper, stage="typed")
    except MyiaError:
        raise
    out = view.graph.output
    for attr in ("abstract", "type"):
        t = getattr(out, attr, None)
        if t is not None:
            return t
    return None


@line_magic("who")
def magic_who(session, line):
    """%who: the names your cells defined (functions and values)."""
    names = session.user_names()
    if not names:
        session.print("Interactive namespace is empty.")
        return
    fns, values = [], []
    for n in names:
        v = session.namespace[n]
        if callable(v) and not isinstance(v, (type, np.ndarray)):
            fns.append(n)
        else:
            values.append(f"{n}: {describe_type(v)}")
    rows = []
    if fns:
        rows.append("functions: " + ", ".join(fns))
    if values:
        rows.append("values:    " + "\n           ".join(values))
    session.print("\n".join(rows))


@line_magic("plot")
def magic_plot(session, line):
    """%plot f [g ...] lo hi: plot functions of one float over [lo, hi].

    %plot f grad(f) grad(grad(f)) -3 3     a function and its first two derivatives
    %plot f --derivatives 10 -3 3          f and its first ten derivatives, by Taylor
                                           mode (myia.jet: one pass per point)

    Each function is compiled on the session's backend and called at 200 points.
    """
    tokens, derivatives = _take_option(split_args(line), "--derivatives",
                                       "%plot f --derivatives 5 -3 3")
    if derivatives is not None:
        return _plot_derivatives(session, tokens, derivatives)
    usage = "%plot needs functions and an interval: %plot f grad(f) -3 3"
    if len(tokens) < 3:
        raise _usage(usage)
    lo, hi = _plot_interval(session, tokens, usage)
    xs = np.linspace(lo, hi, 200)
    curves = []
    for text in tokens[:-2]:
        fn = _function(session, text, "plot")
        compiled = session.compiled(fn) if _compilable(fn) else fn
        ys = np.array([float(compiled(float(x))) for x in xs])
        curves.append((text, ys))
    _show_plot(session, xs, curves, lo, hi)


def _plot_interval(session, tokens, usage):
    """The interval [lo, hi] of the last two tokens."""
    if len(tokens) < 2:
        raise _usage(usage)
    try:
        lo, hi = float(session.eval_python(tokens[-2])), float(session.eval_python(tokens[-1]))
    except (TypeError, ValueError):
        raise _usage(f"%plot: the interval must be two numbers, got {tokens[-2]} "
                     f"{tokens[-1]}") from None
    if not lo < hi:
        raise _usage(f"%plot: the interval [{lo}, {hi}] is empty")
    return lo, hi


def _plot_derivatives(session, tokens, order):
    usage = "%plot f --derivatives K lo hi: f and its first K derivatives over [lo, hi]"
    if len(tokens) != 3:
        raise _usage(usage)
    if not 0 <= order <= 30:
        raise _usage(f"%plot --derivatives takes 0 to 30 derivatives, not {order}")
    lo, hi = _plot_interval(session, tokens[1:], usage)
    name = tokens[0]
    fn = _function(session, name, "plot")
    compiled = session.compiled(myia.jet(fn, order=order))
    xs = np.linspace(lo, hi, 200)
    columns = np.array([[float(v) for v in compiled(float(x))] for x in xs])
    curves = [(_derivative_label(name, k), columns[:, k]) for k in range(order + 1)]
    _show_plot(session, xs, curves, lo, hi)


def _derivative_label(name, k):
    primes = {0: "", 1: "′", 2: "″", 3: "‴"}
    return f"{name}{primes[k]}(x)" if k in primes else f"{name}⁽{_superscript(k)}⁾(x)"


def _superscript(n):
    return str(n).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))


def _show_plot(session, xs, curves, lo, hi):
    # import here: matplotlib is slow to import (a third of a second), only for %plot
    import matplotlib

    matplotlib.use("Agg")
    # import here: as matplotlib above (slow to import, only for %plot)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 3.6), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    for text, ys in curves:
        ax.plot(xs, ys, label=text)
    ax.axhline(0.0, color="#999999", linewidth=0.6)
    ax.set_xlabel("x")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    png = base64.b64encode(buf.getvalue()).decode("ascii")
    names = ", ".join(t for t, _ in curves)
    session.display({"image/png": png,
                     "text/plain": f"<plot of {names} over [{lo:g}, {hi:g}]>"})


def _compilable(fn):
    return isinstance(fn, types.FunctionType) or hasattr(fn, "__myia_graph__")


LOCKED_MESSAGE = (
    "this kernel is locked: %%python and every other route to ordinary Python are "
    "turned off (cells hold subset code only; see %help)")


@cell_magic("python")
def magic_python(session, line, body, number):
    """%%python: run the cell as ordinary Python (to load or prepare data).

    The names it binds join the session as values (constants for compiled code); the
    value of a last expression is shown.  Functions defined here are Python functions:
    subset code may call them only if they are written in the subset.
    """
    # import here: session imports magics (an import cycle at the top)
    from .session import CellSource

    filename = session._new_file()
    cell = CellSource(filename, body, number)
    session.cells[filename] = cell
    linecache.cache[filename] = (len(body), None, body.splitlines(keepends=True), filename)
    try:
        tree = ast.parse(body, filename)
    except SyntaxError as e:
        raise syntax_error(e, filename) from None
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    if session.locked:
        raise _usage(LOCKED_MESSAGE)
    ns = session.namespace
    before = dict(ns)
    try:
        exec(compile(tree, filename, "exec"), ns)
        value = eval(compile(last, filename, "eval"), ns) if last is not None else None
    finally:
        session.restore_own_names(before)
        changed = [k for k in ns if not k.startswith("__")
                   and (k not in before or ns[k] is not before[k])]
        if changed:
            session._record(Definition("python", changed, ()))
            session._rebuild(changed)
    return value


def _complete_backend(session, first):
    return list(BACKENDS) if first is None else None


def _complete_ir(session, first):
    if first is None:
        return None
    return list(_stages()) + ["--passes", "--stages"]


def _complete_help(session, first):
    return sorted(LINE_MAGICS) + sorted(CELL_MAGICS) if first is None else None


ARG_COMPLETIONS.update(backend=_complete_backend, ir=_complete_ir, help=_complete_help)
