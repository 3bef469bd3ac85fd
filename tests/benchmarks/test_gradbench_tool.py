"""The GradBench tool (benchmarks/gradbench) as GradBench runs it: a subprocess that
reads the protocol's JSON messages on stdin and answers each on stdout.  A session
of hello and lse on small inputs; an unknown module and function answered with
success false and the reason; the runs and timings GradBench asks for."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

pytestmark = pytest.mark.timeout(60)


class Session:
    """The eval's side of the protocol: numbered messages, one response each."""

    def __init__(self, env=None):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.gradbench"], cwd=ROOT, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        self.next_id = 0

    def send(self, message):
        message = {"id": self.next_id} | message
        self.next_id += 1
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"the tool stopped: {self.proc.stderr.read()}"
        response = json.loads(line)
        assert response["id"] == message["id"]
        return response

    def close(self):
        """End the session as an eval does (stdin closes); what the tool printed after."""
        self.proc.stdin.close()
        rest = self.proc.stdout.read()
        stderr = self.proc.stderr.read()
        assert self.proc.wait(timeout=30) == 0, stderr
        return rest


@pytest.fixture
def session(backend):
    s = Session(env=dict(os.environ, MYIA_BACKEND=backend))
    try:
        yield s
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()


def names(timings):
    return [t["name"] for t in timings]


def check_timings(timings):
    for t in timings:
        assert set(t) == {"name", "nanoseconds"}
        assert isinstance(t["nanoseconds"], int) and t["nanoseconds"] >= 0


def lse_reference(x):
    a = np.max(x)
    value = a + np.log(np.sum(np.exp(x - a)))
    return value, np.exp(x - value)  # the gradient of LSE is the softmax


def test_hello_and_lse_session(session, backend):
    start = session.send({"kind": "start", "eval": "hello"})
    assert start == {"id": 0, "tool": "myia", "config": {"backend": backend}}

    assert session.send({"kind": "define", "module": "hello"}) == {"id": 1, "success": True}
    x = 1.5
    for _ in range(2):  # as hello's run.py: square, then double of the square
        r = session.send({"kind": "evaluate", "module": "hello", "function": "square",
                          "input": x})
        assert r["success"] and r["output"] == x * x
        check_timings(r["timings"])
        assert names(r["timings"]).count("evaluate") == 1
        y = r["output"]
        assert session.send({"kind": "analysis", "of": r["id"], "valid": True}) == \
            {"id": r["id"] + 1}
        r = session.send({"kind": "evaluate", "module": "hello", "function": "double",
                          "input": y})
        assert r["success"] and r["output"] == 2 * y
        x = r["output"]
        session.send({"kind": "analysis", "of": r["id"], "valid": True})

    assert session.send({"kind": "define", "module": "lse"})["success"] is True
    rng = np.random.default_rng(31337)
    for n in (5, 40):
        x = rng.random(n)
        value, gradient = lse_reference(x)
        runs = {"min_runs": 3, "min_seconds": 0}
        r = session.send({"kind": "evaluate", "module": "lse", "function": "primal",
                          "input": {"x": x.tolist()} | runs, "description": f"n={n}"})
        assert r["success"], r.get("error")
        assert r["output"] == pytest.approx(value, rel=1e-12)
        check_timings(r["timings"])
        # input conversion, compiling for this new shape, three runs
        assert names(r["timings"]) == ["prepare", "compile"] + ["evaluate"] * 3
        r = session.send({"kind": "evaluate", "module": "lse", "function": "gradient",
                          "input": {"x": x.tolist()} | runs})
        assert r["success"], r.get("error")
        np.testing.assert_allclose(r["output"], gradient, rtol=1e-12)
        assert names(r["timings"]).count("evaluate") == 3
        r = session.send({"kind": "analysis", "of": r["id"], "valid": False,
                          "error": "a test says so"})
        assert set(r) == {"id"}
    # the same shape again: compiled already, so no "compile" timing
    r = session.send({"kind": "evaluate", "module": "lse", "function": "primal",
                      "input": {"x": x.tolist(), "min_runs": 1, "min_seconds": 0}})
    assert names(r["timings"]) == ["prepare", "evaluate"]
    assert session.close() == ""


def test_unknown_module_and_function(session):
    r = session.send({"kind": "define", "module": "no_such_eval"})
    assert r["success"] is False and "no_such_eval" in r["error"]
    assert "output" not in r
    session.send({"kind": "define", "module": "lse"})
    r = session.send({"kind": "evaluate", "module": "lse", "function": "hessian",
                      "input": {"x": [1.0], "min_runs": 1, "min_seconds": 0}})
    assert r["success"] is False and "output" not in r
    assert "'hessian'" in r["error"] and "primal" in r["error"]
    # a message of a kind the tool does not know is still answered
    assert session.send({"kind": "end"}) == {"id": 3}
    assert session.close() == ""


def test_runs_honour_min_runs_and_min_seconds():
    from benchmarks.gradbench.runs import Runner

    ticks = iter(range(0, 10**12, 4 * 10**8))  # every reading of the clock: +0.4 s
    runner = Runner(clock=lambda: next(ticks))
    calls = []

    def program(x):
        calls.append(x)
        return x + 1.0

    out, timings = runner.run("k", program, lambda i: (i["x"],),
                              {"x": 1.0}, min_runs=1, min_seconds=1.0)
    # one compiling call, then runs of 0.4 s until they add up to 1 s: three
    assert out == 2.0 and len(calls) == 4
    assert names(timings) == ["prepare", "compile"] + ["evaluate"] * 3
    assert {t["nanoseconds"] for t in timings} == {4 * 10**8}
    out, timings = runner.run("k", program, lambda i: (i["x"],),
                              {"x": 1.0}, min_runs=5, min_seconds=0.0)
    assert names(timings) == ["prepare"] + ["evaluate"] * 5
