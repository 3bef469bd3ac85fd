"""Timing an evaluation as GradBench asks for it.

An input with `min_runs` and `min_seconds` (the protocol's `Runs`) is evaluated at
least `min_runs` times and until the runs add up to `min_seconds`, with one
`"evaluate"` timing per run (GradBench's scorer averages those).  Myia compiles a
function for each new signature (types and shapes) on its first call; that call is
timed apart, as `"compile"`, so that `"evaluate"` means what it means for the other
tools: running the compiled function.  Converting the JSON input is `"prepare"`.
"""

import time

import numpy as np


def runs_requested(input):
    """(min_runs, min_seconds) of an input; an input without them (hello's) runs once."""
    if isinstance(input, dict):
        return int(input.get("min_runs", 1)), float(input.get("min_seconds", 0.0))
    return 1, 0.0


def signature(value):
    """What Myia specializes on, for telling a first call from a later one."""
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape)
    if isinstance(value, (tuple, list)):
        return (type(value).__name__,) + tuple(signature(v) for v in value)
    if isinstance(value, dict):
        return ("dict",) + tuple((k, signature(v)) for k, v in value.items())
    return type(value).__name__


def timing(name, nanoseconds):
    return {"name": name, "nanoseconds": int(nanoseconds)}


class Runner:
    """Runs compiled functions, remembering which signatures were compiled already."""

    def __init__(self, clock=time.perf_counter_ns):
        self.clock = clock
        self.seen = set()

    def run(self, key, compiled, prepare, input, min_runs, min_seconds):
        """(output of the last run, timings) of `compiled(*prepare(input))`."""
        clock = self.clock
        start = clock()
        args = prepare(input)
        timings = [timing("prepare", clock() - start)]
        sig = (key, signature(args))
        if sig not in self.seen:
            start = clock()
            compiled(*args)
            timings.append(timing("compile", clock() - start))
            self.seen.add(sig)
        runs, elapsed = 0, 0
        while runs < min_runs or elapsed < min_seconds * 1e9:
            start = clock()
            output = compiled(*args)
            spent = clock() - start
            timings.append(timing("evaluate", spent))
            runs, elapsed = runs + 1, elapsed + spent
        return output, timings
