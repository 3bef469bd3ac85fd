"""The memory limit of compiled code (it counts what an LLVM call's arena holds; the
limit is process-wide, so the test puts it back) and the sizes the limits read."""

import pytest

from myia_kernel import limits
from myia_kernel.session import Session

from .test_integrity import err, ok, text


def test_the_memory_limit_of_compiled_code():
    s = Session(backend="llvm", memory_limit=10**8)
    try:
        ok(s, "def big(n):\n    return np.ones((n, 20000)) * 2.0")
        e = err(s, "big(2000)")
        assert e["ename"] == "MyiaMemoryError"
        assert "asked for 320 MB" in e["evalue"]
        assert "beyond this session's memory limit of 100 MB" in e["evalue"]
        assert ok(s, "big(10).sum()").value == 400000.0
        assert "100 MB at most" in text(ok(s, "%help"))
    finally:
        limits.set_memory_limit(None)


@pytest.mark.parametrize("text_, value", [("2G", 2 * 10**9), ("512MiB", 512 * 2**20),
                                          ("1.5GB", 1.5e9), ("1000", 1000), ("", None)])
def test_sizes(text_, value):
    assert limits.parse_size(text_) == value


@pytest.mark.parametrize("code, what", [
    ("(jvp, np.ones(2**28))[1]", "the result of `np.ones`"),
    ("(jvp, np.ones((2**14, 2**14)))[1]", "the result of `np.ones`"),
    ("(jvp, np.eye(2**15))[1]", "the result of `np.eye`"),
    ("(jvp, np.linspace(0.0, 1.0, 2**28))[1]", "the result of `np.linspace`"),
    ("(jvp, np.repeat(x, 2**40))[1]", "the result of `np.repeat`"),
    ("(jvp, np.outer(np.ones(2**15), np.ones(2**15)))[1]", "the result of `np.outer`"),
    ("%grad f 0 np.ones(3 * 10**9)", "the result of `np.ones`"),
    ("def rep(a):\n    return np.sum(np.repeat(x, 2**30)) * a\nrep(1.0)", "np.repeat's result"),
])
def test_the_memory_limit_holds_before_the_program_runs(code, what):
    """What the expression reader (SafeEval) and compile-time evaluation (a gather's
    index) would build is measured before NumPy is called (issue 32, item 2)."""
    s = Session(backend="llvm", memory_limit=2**30)
    try:
        ok(s, "x = np.ones(3)\ndef f(a):\n    return np.sum(a)")
        e = err(s, code)
        assert e["ename"] == "MyiaMemoryError", e
        assert what in e["evalue"] and "built before the program runs" in e["evalue"]
        assert "memory limit of 1.07 GB" in e["evalue"]
        assert any("^" in line for line in e["traceback"])  # located
        assert ok(s, "(jvp, np.ones((100, 100)).shape)[1]").value == (100, 100)
        assert ok(s, "f(np.repeat(x, 1000))").value == 3000.0
    finally:
        limits.set_memory_limit(None)


def test_a_quadratic_sum_of_sequences_is_refused():
    """sum() of lists runs in C, quadratic, where neither an interrupt nor the time
    limit stops it (issue 32, item 3)."""
    s = Session(backend="vm")
    e = err(s, "(jvp, sum([[1] * 3000] * 3000, []))[0]")
    assert e["ename"] == "MyiaSyntaxError" and "`sum` of sequences" in e["evalue"]
    assert ok(s, "(jvp, sum([1.0, 2.0]))[1]").value == 3.0


@pytest.mark.parametrize("code", [
    "(1.0,) * 10**9",
    "def rep(a):\n    return a * len([0.0] * 10**9)\nrep(1.0)",
    "def rep2(a):\n    n = 10**5\n    return np.sum(np.array(n * [a, a]))\nrep2(1.0)",
])
def test_a_long_repetition_of_a_list_is_refused_before_it_is_built(code):
    """A list's length is static: `[0.0] * 10**9` was built, and each element typed,
    at compile time (8 GB and minutes past a 1 GiB and 5 s limit)."""
    s = Session(backend="llvm", memory_limit=2**30, time_limit=5)
    try:
        e = err(s, code)
        assert e["ename"] == "MyiaValueError", e
        assert "at most 10000" in e["evalue"] and "np.zeros(n)" in "".join(e["traceback"])
        assert any("^" in line for line in e["traceback"])  # located
        assert ok(s, "def short(a):\n    return np.sum(np.array([a] * 3))\nshort(2.0)"
                  ).value == 6.0
    finally:
        limits.set_memory_limit(None)
