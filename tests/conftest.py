"""Shared pytest configuration.

Markers (`gpu`, `slow`) are declared in pyproject.toml. Keep this module free of
module-level `import myia`, so that collection works while the package is incomplete;
fixtures that need myia import it inside the fixture body.

Backends.  Every test that runs programs through the default backend (what
`myia.compile`, `myia.grad`, `myia.vjp`... use when no backend is named) runs on each
of `BACKENDS`, through the `backend` fixture: a module whose tests run programs says
`pytestmark = pytest.mark.usefixtures("backend")` (or a test takes `backend` as an
argument), and the test id ends with the backend (`test_x[...-llvm]`).  What the
LLVM backend refuses is asserted, not skipped: see `refused_by_llvm` in
tests/helpers.py.  Tests about the VM itself stay on the VM, and tests that compare
a backend with the VM (tests/backend) name their backends themselves.

Process state.  tests/guards.py fails a test that leaves a signal's disposition
changed, and backs pytest-timeout up against hangs that SIGALRM cannot break.  A test
that sends itself SIGINT takes the `sigint_raises` fixture: the suite may start with
SIGINT ignored (a background job of a script, `nohup`).
"""

import signal

import pytest

pytest_plugins = ["tests.guards", "pytester"]

#: the backends every program-running test runs on
BACKENDS = ("vm", "llvm")


@pytest.fixture(params=BACKENDS)
def backend(request, monkeypatch):
    """The default backend ($MYIA_BACKEND) for this test: each of BACKENDS in turn."""
    monkeypatch.setenv("MYIA_BACKEND", request.param)
    return request.param


@pytest.fixture
def sigint_raises():
    """SIGINT raises KeyboardInterrupt for the test's duration, whatever the process
    started with (a background job of a non-interactive shell starts with it ignored)."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


@pytest.fixture
def memory_limit():
    """`memory_limit(nbytes)` sets the LLVM backend's limit on what one compiled call
    holds (myia.backend.llvm.runtime); the limit it had comes back after the test."""
    from myia.backend.llvm import runtime

    before = runtime.memory_limit()
    yield runtime.set_memory_limit
    runtime.set_memory_limit(before)
