"""vmap on generated programs (issue 36): the programs of test_transforms_fuzz.py
(closures, loops kept at run time, `while` on a value, tuples and lists of functions,
branches on intermediate floats, broadcasting arrays), each run on a batch of points.

For each program, on "vm" and "llvm", with x batched (and the array `a`, where the
program takes one, batched too: each example its own array):

- `vmap(f)(xs, ...)` equals Python's `f` at each point (rtol 1e-9): the points take
  different branches and run loops a different number of times, which vmap turns into
  selects and loops that run until every example is done;
- `vmap(grad(f))` equals Myia's `grad(f)` at each point (rtol 1e-9): the gradient
  programs keep chains of backpropagators, chosen per example;
- or vmap refuses f with a MyiaBatchingError located at a line of the program (what
  the README lists as not supported yet), never a wrong number or a crash.

The points are x, x + 0.37 and x - 0.81 (with `a`, a + 0.2 and a - 0.3): far enough
apart that branches and trip counts differ.  Programs where Python fails at one of the
points are skipped.  The suite runs MYIA_FUZZ_VMAP programs (default 30; on CI, 25,
the same ones on each run); `make fuzz` runs more.
"""

import os

import numpy as np
import pytest

import myia
from myia import MyiaBatchingError
from tests.ad.program_strategies import Reject
from tests.ad.test_transforms_fuzz import ON_CI, cases, load, program_dir  # noqa: F401

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, assume, event, given, settings  # noqa: E402

N_EXAMPLES = int(os.environ.get("MYIA_FUZZ_VMAP", 25 if ON_CI else 30))
SAME = 1e-9

VMAP_SETTINGS = settings(max_examples=N_EXAMPLES, deadline=None, derandomize=ON_CI,
                         suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                HealthCheck.too_slow,
                                                HealthCheck.filter_too_much,
                                                HealthCheck.data_too_large])

X_SHIFTS = (0.0, 0.37, -0.81)
A_SHIFTS = (0.0, 0.2, -0.3)


def batch_of(program, args):
    """(the batched arguments, in_axes, the points one at a time)."""
    points = []
    for dx, da in zip(X_SHIFTS, A_SHIFTS):
        point = []
        for name, v in zip(program.params, args):
            point.append(v + dx if name == "x" else v + da if name == "a" else v)
        points.append(tuple(point))
    batched = tuple(name in ("x", "a") for name in program.params)
    stacked = tuple(np.stack([p[i] for p in points]) if b else args[i]
                    for i, b in enumerate(batched))
    return stacked, tuple(0 if b else None for b in batched), points


def _agree(got, want, what, source):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, want {want.shape}\n{source}"
    assert np.allclose(got, want, rtol=SAME, atol=1e-12), (
        f"{what}: {got} != {want}\n{source}")


def check_vmap(program, args, directory):
    source = program.source()
    f = load(source, directory).f
    stacked, in_axes, points = batch_of(program, args)
    with np.errstate(all="raise"):
        try:
            want = [float(f(*p)) for p in points]
            if max(abs(v) for v in want) > 1e3:
                raise Reject("large")
        except (Reject, FloatingPointError, OverflowError, ZeroDivisionError):
            event("skipped: Python fails or overflows at a point")
            assume(False)
    for c in sorted(program.constructs):
        event(c)
    g = myia.grad(f)
    want_grad = [g(*p) for p in points]
    for backend in ("vm", "llvm"):
        where = f"on {backend}, at {points}"
        for what, fn, expected in (("vmap(f)", f, want), ("vmap(grad(f))", g, want_grad)):
            try:
                got = myia.compile(myia.vmap(fn, in_axes), backend=backend)(*stacked)
            except MyiaBatchingError as e:
                # a construct vmap refuses (README: nested loops kept at run time on
                # batched conditions, in some forms): said at the user's line
                assert e.loc is not None and e.loc.filename.endswith(".py"), str(e)
                event(f"refused: {e.message.split(':')[0]}")
                return
            _agree(got, expected, f"{what} {where}", source)


@pytest.mark.timeout(max(900, 8 * N_EXAMPLES))
@VMAP_SETTINGS
@given(case=cases())
def test_vmap_agrees_with_each_example_on_generated_programs(program_dir, case):  # noqa: F811
    program, args = case
    check_vmap(program, args, program_dir)
