"""Guards that keep the suite honest about process state and time (a pytest plugin,
loaded by tests/conftest.py; `pytest -p tests.guards` loads it alone).

- Signals: a test that leaves a signal's disposition (its handler, or whether it is
  blocked) different from what it found fails, naming the signal.  A test that needs a
  disposition installs it for its own duration: the suite must pass the same whether it
  starts with SIGINT ignored (a background job of a script, `nohup`) or not.
- Hangs: pytest-timeout (configured in pyproject.toml: a default limit, longer ones
  marked with `@pytest.mark.timeout(N)`) fails a test that runs too long, with its
  traceback, by SIGALRM.  Code that never returns to the interpreter (a C loop holding
  the GIL) cannot see that signal: `BACKSTOP` seconds later, faulthandler writes every
  thread's stack to the terminal and ends the process (under xdist the worker: the test
  is reported as "crashed", and a new worker takes the rest).
"""

import faulthandler
import os
import signal

import pytest

#: seconds past a test's timeout after which the process is ended with its stacks
#: (ini option `timeout_backstop`)
BACKSTOP = 60

#: signals whose disposition cannot be changed, so need no watching
_FIXED = {signal.SIGKILL, signal.SIGSTOP}

_stderr_fd = None  # a copy of fd 2 taken before any capture of a test starts


def _name(signum):
    try:
        return signal.Signals(signum).name
    except ValueError:  # a real-time signal
        return f"SIGRTMIN+{signum - signal.SIGRTMIN}"


def dispositions():
    """{signal name: handler} for every signal that can be caught, and the blocked set."""
    state = {_name(s): signal.getsignal(s)
             for s in signal.valid_signals() if s not in _FIXED}
    state["blocked"] = {_name(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])}
    return state


def changes(before, after):
    """What differs between two `dispositions()`, one phrase per signal."""
    found = [f"{name} {'no longer ' if name in before['blocked'] else ''}blocked"
             for name in sorted(before["blocked"] ^ after["blocked"])]
    found += [f"{name}: {_describe(before[name])} -> {_describe(after[name])}"
              for name in before if name != "blocked" and before[name] != after[name]
              and not _owned_by_timeout(before[name])]
    return found


def _owned_by_timeout(handler):
    # pytest-timeout's SIGALRM handler spans the test and is removed by pytest-timeout
    # itself, before the teardown when it fired
    return getattr(handler, "__module__", None) == "pytest_timeout"


def _describe(handler):
    if handler is signal.SIG_IGN:
        return "ignored"
    if handler is signal.SIG_DFL:
        return "default"
    if handler is None:
        return "set outside Python"
    return getattr(handler, "__qualname__", repr(handler))


@pytest.fixture(autouse=True)
def signals_are_restored():
    """Fail the test if it leaves a signal's disposition changed."""
    before = dispositions()
    yield
    found = changes(before, dispositions())
    if found:
        pytest.fail(f"the test left signal dispositions changed ({'; '.join(found)}): "
                    f"restore what you install (try/finally, or a fixture)", pytrace=False)


def pytest_addoption(parser):
    parser.addini("timeout_backstop", f"seconds past a test's timeout after which the "
                  f"process ends with every thread's stack (default {BACKSTOP})",
                  default=str(BACKSTOP))


def pytest_configure(config):
    global _stderr_fd
    if _stderr_fd is None:
        _stderr_fd = os.dup(2)  # what a test writes to fd 2 is captured; this copy is not


@pytest.hookimpl(optionalhook=True)
def pytest_timeout_set_timer(item, settings):
    """Arm the backstop beside pytest-timeout's own timer (returning None lets it run)."""
    backstop = float(item.config.getini("timeout_backstop"))
    faulthandler.dump_traceback_later(settings.timeout + backstop, exit=True,
                                      file=_stderr_fd)


@pytest.hookimpl(optionalhook=True)
def pytest_timeout_cancel_timer(item):
    faulthandler.cancel_dump_traceback_later()
