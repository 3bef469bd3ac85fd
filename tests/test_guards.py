"""The suite's own guards (tests/guards.py), run on small inner suites through pytester:
a leaked signal handler fails its test by name, a hang fails within its timeout with a
traceback, and a hang that SIGALRM cannot break ends the process with every stack."""

import os
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def inner(pytester, monkeypatch):
    """Runs a test file in a fresh pytest process with only the guards as plugins."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))

    def run(source, *args):
        pytester.makepyfile(test_inner=source)
        start = time.perf_counter()
        result = pytester.runpytest_subprocess("-p", "tests.guards", "-p", "no:cacheprovider",
                                               "-o", "timeout_method=signal", *args,
                                               timeout=120)
        return result, time.perf_counter() - start

    return run


def test_a_leaked_handler_fails_its_test_and_names_the_signal(inner):
    result, _ = inner("""
import signal

def test_leaks():
    signal.signal(signal.SIGUSR1, lambda *a: None)

def test_blocks():
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR2])

def test_restores():
    old = signal.signal(signal.SIGUSR1, lambda *a: None)
    signal.signal(signal.SIGUSR1, old)
""")
    result.assert_outcomes(passed=3, errors=2)
    out = result.stdout.str()
    assert "ERROR test_inner.py::test_leaks" in out
    assert "SIGUSR1: default -> test_leaks.<locals>.<lambda>" in out
    assert "SIGUSR2 blocked" in out
    assert "ERROR test_inner.py::test_restores" not in out


def test_a_hang_fails_within_its_timeout_with_a_traceback(inner):
    result, seconds = inner("""
import time
import pytest

@pytest.mark.timeout(2)
def test_hangs():
    while True:
        time.sleep(0.1)

def test_after():
    pass
""")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "Timeout (>2.0s) from pytest-timeout" in out
    assert "time.sleep(0.1)" in out  # the traceback shows where it hung
    assert seconds < 60


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_hang_that_signals_cannot_break_ends_the_process_with_its_stacks(inner):
    result, seconds = inner("""
import itertools
import pytest

@pytest.mark.timeout(1)
def test_spins_in_c():
    sum(itertools.repeat(1))  # a C loop that holds the GIL and never runs handlers
""", "-o", "timeout_backstop=2")
    assert result.ret != 0
    err = result.stderr.str()
    assert "Timeout (0:00:03)!" in err  # faulthandler's dump, taken at timeout + backstop
    assert "in test_spins_in_c" in err
    assert seconds < 60
