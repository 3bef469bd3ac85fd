"""`jupyter console --kernel myia` in a pseudo-terminal: multi-line input (the kernel's
is_complete), magics, and `exit`."""

import os
import sys

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
        child.expect("adjoint/primal operations")
        child.send("exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
