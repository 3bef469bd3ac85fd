"""`jupyter console --kernel myia` in a pseudo-terminal: multi-line input (the kernel's
is_complete), magics, and `exit`."""

import os
import sys
import time

import pytest

from .kernel_env import setup_jupyter_env

pexpect = pytest.importorskip("pexpect")
pytest.importorskip("jupyter_console")


def test_jupyter_console():
    setup_jupyter_env()
    env = dict(os.environ, TERM="dumb")
    child = pexpect.spawn(sys.executable, ["-m", "jupyter_console", "--kernel", "myia"],
                          env=env, encoding="utf-8", timeout=60, dimensions=(40, 200))
    try:
        child.expect(r"In \[1\]")
        # Enter after the def header continues the cell (auto-indented); a blank line ends it
        for line in ("def triple(x):", "return x * 3.0", "", ""):
            child.send(line + "\r")
        child.expect(r"In \[2\]")
        child.send("triple(2.0)\r")
        child.expect(r"6\.0")
        child.send("%grad triple --view optimized\r")
        # each drawing is saved as a file, named where the console shows the text
        child.expect(r"\[drawing: (\S+\.svg)\]")
        path = child.match.group(1)
        assert "<svg" in open(path, encoding="utf-8").read()
        child.expect("adjoint/primal operations")
        child.send("exit\r")
        child.expect(pexpect.EOF)
        deadline = time.monotonic() + 20  # the kernel removes its drawings as it shuts down
        while os.path.exists(path) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not os.path.exists(path)
    finally:
        child.close(force=True)
