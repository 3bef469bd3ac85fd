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
