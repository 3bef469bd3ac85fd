"""Generated programs with closures, loops, containers of functions and arrays, each
checked by Myia's transforms against one another on "vm" and "llvm" (issue 31).

Hypothesis draws a function `f(x, ...)` of a float `x` (and some of: a float array of
shape (3,) or (2, 3), an int loop count, an int index, another float) that returns a
float scalar, from tests/ad/program_strategies.py (a generator independent of
test_random_programs.py's; its docstring lists what it draws): closures (nested defs,
lambdas, factories, defs in loop bodies) called more than once, some capturing a
variable that is assigned again after their last use; loops kept at run time (`while i
< n`, `for k in range(n)`, `for p in a`) next to unrolled ones (`for k in range(3)`);
tuples and lists of functions, indexed by a constant or looped over; `if`/`elif` and
conditional expressions on intermediate floats, a `while` on a value; broadcasting
arrays, `np.where`, `np.maximum`, elementwise functions and reductions; module globals
(a float array `G`, a float `C`).  Each program is written to a file in a temporary
directory and imported (Myia reads source through `inspect`).

For each program and point, on "vm" and on "llvm":

- the value of `myia.compile(f)` (and the primal of `jvp` and `jet`) equals Python's
  (the module's own `f`, run as Python), rtol 1e-9;
- grad, jvp (tangent 1.0 on x, zeros elsewhere) and jet's first coefficient agree
  with each other (rtol 1e-7) and with central differences of Python's `f` (step 1e-5
  relative, rtol 1e-5);
- grad∘grad, hessian, jvp∘grad and jet's second coefficient agree with each other
  (rtol 1e-7) and with central differences of Myia's own `grad` (rtol 1e-5);
- each of these numbers is the same on "vm" and "llvm" (rtol 1e-9).

No oracle beyond Python's value is needed: a transform that disagrees with the others
is wrong.  A point is skipped (`assume`) where a step of the finite differences would
take another branch (a comparison, an `np.where` or an `np.maximum` decides otherwise,
as a traced copy of the program records), where a comparison is closer than 1e-7 to a
tie, where an intermediate value exceeds 1e3, or where finite differences are too
curved to trust.

A second property draws programs that use a closure after a variable it captured was
assigned again (or keep it in a container before that), which Python would read late:
Myia must refuse them with a MyiaSyntaxError (never compute them).

The suite runs MYIA_FUZZ_TRANSFORMS programs (default 100; on CI, CI=true, 140, the
same ones on each run); `make fuzz` runs 5,000 (FUZZ_TRANSFORMS) in two shards.
`--hypothesis-show-statistics` prints which constructs the programs exercised and why
points were skipped.  The plain tests at the end of this module hold the minimal
programs of the bugs the generator found.
"""

import importlib.util
import itertools
import math
import os

import numpy as np
import pytest

import myia
from myia import MyiaSyntaxError
from tests.ad.agree import _zero_tangent, default_backend, transform_views

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, assume, event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.ad.program_strategies import Program, Reject, Tracer, programs  # noqa: E402

BACKENDS = ("vm", "llvm")
H = 1e-5  # the finite-difference step, relative to max(1, |x|)
EXACT = 1e-7  # transforms against each other
FD = 1e-5  # transforms against finite differences
SAME = 1e-9  # Python against compiled values, vm against llvm
MIN_MARGIN = 1e-7  # a comparison closer to a tie: the point is skipped

ON_CI = os.environ.get("CI", "").lower() not in ("", "0", "false", "no")
N_EXAMPLES = int(os.environ.get("MYIA_FUZZ_TRANSFORMS", 140 if ON_CI else 100))
#: `make fuzz` splits the programs into shards, one test each, that xdist runs side by
#: side (each draws its own programs: the shards are not derandomized there)
SHARDS = int(os.environ.get("MYIA_FUZZ_SHARDS", 1))

#: on CI the same programs every run (a red CI is a regression, not a new draw);
#: elsewhere new ones each run
FUZZ_SETTINGS = settings(max_examples=-(-N_EXAMPLES // SHARDS), deadline=None,
                         derandomize=ON_CI and SHARDS == 1,
                         suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                HealthCheck.too_slow,
                                                HealthCheck.filter_too_much,
                                                HealthCheck.data_too_large])
STALE_SETTINGS = settings(FUZZ_SETTINGS, max_examples=max(20, N_EXAMPLES // 2))


# ---- points ---------------------------------------------------------------------------

floats = st.floats(min_value=-2.0, max_value=2.0, allow_nan=False, allow_infinity=False,
                   allow_subnormal=False)


@st.composite
def cases(draw, stale=False):
    """(program, arguments)."""
    program = draw(programs(stale=stale))
    shape = (3,) if program.a_ndim == 1 else (2, 3)
    values = {
        "x": draw(floats),
        "y": draw(floats),
        "n": draw(st.integers(0, 3)),
        "j": draw(st.integers(-2, 1)),
        "a": np.array(draw(st.lists(floats, min_size=math.prod(shape),
                                    max_size=math.prod(shape)))).reshape(shape),
    }
    return program, tuple(values[p] for p in program.params)


# ---- loading a rendered program -------------------------------------------------------

_counter = itertools.count()


@pytest.fixture(scope="module")
def program_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("transform_programs")


def load(source, directory):
    """Write `source` to a new file and import it; returns the module."""
    k = next(_counter)
    name = f"transform_program_{os.getpid()}_{k}"
    path = directory / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def traced_run(traced, args):
    """(decisions, smallest margin, largest magnitude) of the traced program at args."""
    traced._T = tracer = Tracer()
    traced.f(*args)
    return tracer.decisions, tracer.margin, tracer.largest


def _reject(why):
    event(f"skipped: {why}")
    assume(False)


def _close(a, b, rtol, atol):
    return abs(a - b) <= rtol * max(abs(a), abs(b)) + atol


def _check_group(views, rtol, atol, what, source):
    """All numbers of `views` equal to one another."""
    items = list(views.items())
    name0, v0 = items[0]
    bad = {k: v for k, v in items[1:] if not _close(v, v0, rtol, atol)}
    assert not bad, f"{what}: disagree with {name0} = {v0!r}: {bad}\n(all: {views})\n{source}"


def check_program(program, args, directory):
    """The property: see the module's docstring."""
    source = program.source()
    f = load(source, directory).f
    traced = load(program.source(traced=True), directory)
    x, rest = args[0], args[1:]
    with np.errstate(all="raise"):
        try:
            decisions, margin, largest = traced_run(traced, args)
            value = float(f(*args))
            h = H * max(1.0, abs(x))
            for d in (-3 * h, -h, -h / 2, h / 2, h, 3 * h):
                if traced_run(traced, (x + d, *rest))[0] != decisions:
                    _reject("a finite-difference step changes a branch")
            fd = [(float(f(x + s, *rest)) - float(f(x - s, *rest))) / (2 * s)
                  for s in (h, h / 2)]
        except (Reject, FloatingPointError, OverflowError, ZeroDivisionError):
            _reject("a value is too large")
    if margin < MIN_MARGIN:
        _reject("a comparison is within 1e-7 of a tie")
    if not _close(fd[0], fd[1], 1e-6, 1e-7) or abs(fd[1]) > 1e4:
        _reject("too curved for finite differences")
    for c in sorted(program.constructs):
        event(c)
    event(f"arguments: {', '.join(program.params)}")

    results = {}
    for backend in BACKENDS:
        values, first, second = transform_views(f, x, rest, backend, h=h)
        where = f"on {backend}, at {args}"
        _check_group({"python": value, **values}, SAME, 1e-12, f"values {where}", source)
        _check_group(first, EXACT, 1e-9, f"first derivatives {where}", source)
        _check_group({"grad": first["grad"], "central differences of f": fd[1]}, FD, 1e-6,
                     f"first derivatives {where}", source)
        exact = {k: v for k, v in second.items() if not k.startswith("central")}
        _check_group(exact, EXACT, 1e-9, f"second derivatives {where}", source)
        _check_group({"grad(grad)": second["grad(grad)"],
                      "central differences of grad": second["central differences of grad"]},
                     FD, 1e-6, f"second derivatives {where}", source)
        results[backend] = {**{f"value by {k}": v for k, v in values.items()},
                            **{f"d/dx by {k}": v for k, v in first.items()},
                            **{f"d2/dx2 by {k}": v for k, v in second.items()
                               if not k.startswith("central")}}
    vm, llvm = results["vm"], results["llvm"]
    bad = {k: (vm[k], llvm[k]) for k in vm if not _close(vm[k], llvm[k], SAME, 1e-12)}
    assert not bad, f"vm and llvm disagree at {args} on {bad}\n{source}"


# ---- the properties -------------------------------------------------------------------

#: every kind of construct in one program (also the test of the renderer)
ALL_CONSTRUCTS = Program(
    params=("x", "a", "n", "j", "y"), a_ndim=2, g=(0.5, -0.25, 1.0), c=0.75,
    twice_global=True,
    body=[
        ("def", "g1", [("assign", "t2", ("div", ("var", "u"), ("var", "x"))),
                       ("return", ("bin", "*", ("var", "t2"), ("var", "C")))]),
        ("lambda", "h3", ("un", "np", "sin", ("bin", "+", ("var", "u"), ("var", "y")))),
        ("assign", "v4", ("bin", "+", ("call", "g1", ("var", "x")),
                          ("call", "g1", ("var", "y")))),
        ("factory", "mk5", [("m6", ("const", 0.5)), ("m7", ("var", "v4"))],
         ("bin", "*", ("var", "u"), ("bin", "+", ("var", "c"), ("var", "x")))),
        ("nested", "g8", "q9", ("un", "math", "tanh", ("bin", "*", ("var", "w"),
                                                        ("var", "u"))),
         ("bin", "+", ("call", "q9", ("var", "u")), ("call", "q9", ("var", "v4")))),
        ("assign", "v18", ("bin", "-", ("call", "g8", ("var", "x")),
                           ("call", "g8", ("var", "y")))),
        ("tuple", "fs10", ["g1", "h3", "m6"], "("),
        ("while", "i11", [("assign", "v4", ("bin", "+", ("bin", "*", ("const", 0.5),
                                                          ("var", "v4")),
                                            ("calli", "fs10", 1, ("var", "v4"))))]),
        ("range", "k12", 3, [
            ("def", "g13", [("return", ("bin", "*", ("var", "u"), ("var", "v4")))]),
            ("assign", "v4", ("bin", "+", ("bin", "*", ("const", 0.5), ("var", "v4")),
                              ("call", "g13", ("intf", "k12", 0.25))))]),
        ("assign", "w14", ("where", ("var", "a"), ("var", "v4"),
                           ("abin", "*", ("var", "a"), ("var", "x")),
                           ("max", ("var", "G"), ("var", "x")))),
        ("vwhile", "v4", 1.5, "c15", ("var", "x")),
        ("if", [(("cmp", ">", ("var", "v4"), ("item", "G", "j")),
                 [("assign", "v16", ("red", "mean", ("var", "w14")))])],
         [("assign", "v16", ("ifexp", ("cmp", "<", ("var", "x"), ("const", 0.5)),
                             ("twice", "m7", ("var", "x")), ("call", "h3", ("var", "v18"))))]),
        ("rows", "p17", [("assign", "v16", ("un", "np", "tanh", ("bin", "+", ("var", "v16"),
                                                                ("red", "sum", ("var", "p17")))))]),
        ("assign", "v4", ("var", "x")),  # after the last uses of g8 and g13, which read v4
        ("return", ("bin", "+", ("var", "v16"), ("bin", "*", ("var", "v4"),
                                                 ("red", "method", ("item", "a", "j"))))),
    ])
ALL_ARGS = (0.3, np.array([[0.1, 0.5, -0.2], [1.0, -0.7, 0.3]]), 2, -1, 0.7)


@pytest.mark.timeout(max(900, 6 * N_EXAMPLES // SHARDS))  # about 1 s a program
@pytest.mark.parametrize("shard", range(SHARDS))
@FUZZ_SETTINGS
@given(case=cases())
def test_transforms_agree_on_generated_programs(program_dir, shard, case):
    program, args = case
    check_program(program, args, program_dir)


@pytest.mark.timeout(max(900, N_EXAMPLES))
@STALE_SETTINGS
@given(case=cases(stale=True))
def test_stale_closures_are_refused(program_dir, case):
    """A closure used where Python would read a captured variable's later value is a
    MyiaSyntaxError, before anything runs."""
    program, args = case
    for c in sorted(program.constructs):
        event(c)
    module = load(program.source(), program_dir)
    module.f(*args)  # (valid Python)
    with pytest.raises(MyiaSyntaxError, match="assign(ed|s it|s) again"):
        myia.compile(module.f, backend="vm")(*args)


def test_the_renderer(program_dir):
    source = ALL_CONSTRUCTS.source()
    assert "def twice(fn, u):" in source and "for fn in" not in source
    module = load(source, program_dir)
    traced = load(ALL_CONSTRUCTS.source(traced=True), program_dir)
    decisions, margin, _ = traced_run(traced, ALL_ARGS)
    assert traced.f(*ALL_ARGS) == module.f(*ALL_ARGS)
    assert len(decisions) > 3 and margin > 0


# ---- bugs the generator found, fixed: their minimal programs (the others are in
# test_transforms_agree.py and tests/parser/test_late_binding.py) ---------------------


def _double(u):
    return u * 2.0


def _plus_one(u):
    return u + 1.0


def loop_over_two_functions(x, y):
    v = x
    for fn in (_double, _plus_one):
        v = fn(v)
    return v * y


@pytest.mark.parametrize("backend", BACKENDS)
def test_jvp_of_a_loop_over_functions_with_a_second_argument(backend):
    with default_backend(backend):
        primals, tangents = (0.3, 1.5), (1.0, _zero_tangent(1.5))
        assert myia.jvp(loop_over_two_functions, primals, tangents) == pytest.approx(
            (2.4, 3.0))
        assert myia.hessian(loop_over_two_functions)(*primals) == 0.0
