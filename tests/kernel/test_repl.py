"""The REPL: the same session in a terminal, fed line by line, on each backend ("vm" and
"llvm": the `backend` fixture of tests/conftest.py sets $MYIA_BACKEND, which a new
session and a REPL process start on)."""

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from myia_kernel.repl import Repl

from .kernel_env import ROOT

pytestmark = pytest.mark.usefixtures("backend")


def make(tmp_path):
    out, err = io.StringIO(), io.StringIO()
    return Repl(stdout=out, stderr=err, out_dir=tmp_path / "out"), out, err


def test_lines_make_cells(tmp_path):
    repl, out, err = make(tmp_path)
    assert not repl.feed("def f(x):")
    assert not repl.feed("    return x * 3.0")
    assert repl.feed("")  # a blank line ends the def
    assert repl.feed("f(2.0)")
    assert out.getvalue() == "6.0\n"
    # a line at column 0 after a finished block ends it (piped scripts)
    repl.feed("def g(x):")
    repl.feed("    return x + 1.0")
    repl.feed("g(1.0)")
    assert out.getvalue().endswith("2.0\n")
    repl.feed("%%python")
    repl.feed("v = 7.0")
    repl.feed("")
    repl.feed("v")
    assert out.getvalue().endswith("7.0\n")


def test_drawings_become_svg_files_and_text(tmp_path):
    repl, out, err = make(tmp_path)
    repl.run("def f(x):\n    return x * x")
    repl.run("%grad f")  # the transform: one picture of ▶f and ◀f
    repl.run("%grad f --view optimized")  # primal and adjoint, two pictures
    text = out.getvalue()
    paths = [line.split(": ", 1)[1].rstrip("]") for line in text.splitlines()
             if line.startswith("[drawing: ")]
    assert len(paths) == 3
    for p in paths:
        assert p.endswith(".svg") and "<svg" in open(p).read()
    assert "◀f" in open(paths[0]).read()
    assert "graph @▶f" in text and "graph @f" in text and "adjoint/primal operations" in text


def test_errors_go_to_stderr(tmp_path):
    repl, out, err = make(tmp_path)
    repl.run("nope(1.0)")
    assert "MyiaNameError: name `nope` is not defined" in err.getvalue()
    assert "    ^^^^" in err.getvalue()


def test_piped_stdin(tmp_path):
    script = "def f(x):\n    return x * x\nf(4.0)\n%ir f\nbad(1.0)\n%who\nexit\nf(5.0)\n"
    env = dict(os.environ, MYIA_HISTORY=str(tmp_path / "hist"),
               PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "core")]))
    script_path = Path(sys.executable).parent / "myia-repl"  # the console script
    cmd = [str(script_path)] if script_path.exists() else [sys.executable, "-m", "myia_kernel",
                                                           "repl"]
    r = subprocess.run(cmd + ["--out", str(tmp_path)], input=script, capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "16.0" in r.stdout
    assert "[drawing: " in r.stdout and "functions: f" in r.stdout
    assert "25.0" not in r.stdout  # after `exit`
    assert "name `bad` is not defined" in r.stderr
    assert list(tmp_path.glob("*.svg"))


def test_interactive_loop_with_prompt_toolkit(tmp_path):
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from myia_kernel.repl import interactive

    repl, out, err = make(tmp_path)
    history = tmp_path / "history"
    with create_pipe_input() as inp:
        # Enter after `def ...:` continues (auto-indented); a blank line ends the def.
        inp.send_text("def f(x):\rreturn x * 2.0\r\rf(4.0)\r%nope\r\x04")
        interactive(repl, history_file=str(history), input=inp, output=DummyOutput())
    assert out.getvalue() == "8.0\n"
    assert "Line magic function `%nope` not found." in err.getvalue()
    assert "+f(4.0)" in history.read_text()


@pytest.mark.parametrize("term", ["dumb", "xterm-256color"])
def test_ctrl_d_typed_as_the_prompt_appears_quits(tmp_path, term):
    # prompt_toolkit writes the prompt before it takes the terminal: a Ctrl-D typed in
    # between was an end of file in the terminal's line mode, and was lost
    pexpect = pytest.importorskip("pexpect")
    env = dict(os.environ, TERM=term, MYIA_HISTORY=str(tmp_path / "history"))
    child = pexpect.spawn(sys.executable, ["-m", "myia_kernel", "repl", "--out", str(tmp_path)],
                          env=env, encoding="utf-8", timeout=60, dimensions=(40, 200))
    try:
        child.expect(r"In \[1\]:")
        child.send("1.0 + 2.0\r")
        child.expect(r"In \[2\]:")
        child.sendeof()
        child.expect(pexpect.EOF, timeout=20)
    finally:
        child.close(force=True)


def test_ctrl_c_stops_a_cell_at_a_terminal_even_when_sigint_started_ignored(tmp_path):
    pexpect = pytest.importorskip("pexpect")
    env = dict(os.environ, TERM="dumb", MYIA_HISTORY=str(tmp_path / "history"))
    child = pexpect.spawn(
        sys.executable, ["-m", "myia_kernel", "repl", "--out", str(tmp_path)],
        env=env, encoding="utf-8", timeout=60, dimensions=(40, 200),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))  # as under nohup
    try:
        child.expect(r"In \[1\]")
        for line in ("def forever(x):", "while x > 0.0: x = x + 1.0", "return x", "", ""):
            child.send(line + "\r")
        child.expect(r"In \[2\]")
        child.send("forever(1.0)\r")
        time.sleep(1.0)  # the compiled loop is running
        child.sendintr()
        child.expect("KeyboardInterrupt: the cell was interrupted")
        child.expect(r"In \[3\]")
        child.send("forever(-2.0)\r")  # the session and its definitions survive
        child.expect(r"-2\.0")
        # (Ctrl-D once the prompt is there, as this test is about Ctrl-C: one typed while
        # the cell's output is still printing was lost once in a full run under load, a
        # gap of its own)
        child.expect(r"In \[4\]")
        child.sendeof()
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)


def test_a_long_compile_logs_its_stages_on_stderr(tmp_path, monkeypatch):
    import myia_kernel.session as session_module

    monkeypatch.setattr(session_module, "STATUS_AFTER", 0.0)
    monkeypatch.setattr(session_module, "STATUS_EVERY", 0.01)
    repl, out, err = make(tmp_path)
    repl.run("def q(x, n):\n    i = 0\n    while i < n:\n        x = np.sin(x) * np.exp(x)\n"
             "        i = i + 1\n    return x")
    repl.run("grad(grad(grad(q)))(0.3, 4)")
    lines = err.getvalue().splitlines()
    assert lines and all(line.startswith("compiling ") for line in lines), lines
    stages = [line.rsplit(" (", 1)[0] for line in lines]
    assert all(a != b for a, b in zip(stages, stages[1:]))  # not a tty: a line per stage
    grad, q = repl.session.namespace["grad"], repl.session.namespace["q"]
    assert float(out.getvalue()) == pytest.approx(grad(grad(grad(q)))(0.3, 4))
