"""The terminal REPL: `myia-repl` (or `python -m myia_kernel repl`).

The same `Session` and magics as the kernel.  Input is read with prompt_toolkit when
stdin is a terminal (multi-line editing: a `def` continues until a blank line, as in the
Python REPL; history in ~/.myia_history; completion from the session), else line by line
from the pipe.  Drawings are written as SVG files (plots as PNG) in an output folder
whose paths are printed, followed by the text IR.

Interrupts: at a terminal, Ctrl-C stops the running cell and keeps the session, even when
the process started with SIGINT ignored (the person at the terminal means it).  Reading a
pipe, the REPL is a script and keeps the disposition it was started with, as Python does.
"""

import argparse
import base64
import contextlib
import os
import signal
import sys
import tempfile
import termios
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import Completer, Completion
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings

from myia.backend import BACKENDS

from . import __version__
from .session import Session

HISTORY_FILE = "~/.myia_history"


class Repl:
    """Feeds input lines to a Session and writes its outputs to text streams."""

    def __init__(self, session=None, out_dir=None, stdout=None, stderr=None, backend=None):
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        self.session = session or Session(backend=backend)
        self.session.on_output = self.show
        self._out_dir = Path(out_dir) if out_dir else None
        self.buffer = []
        self.files = []
        self.exit_requested = False
        self._last_status = None

    @property
    def out_dir(self):
        if self._out_dir is None:
            self._out_dir = Path(tempfile.mkdtemp(prefix="myia-repl-"))
        self._out_dir.mkdir(parents=True, exist_ok=True)
        return self._out_dir

    def feed(self, line):
        """Add one input line; run the cell once it is complete.  True if it ran.

        As in the Python REPL, a block ends at a blank line; a line that starts at
        column 0 after a finished block also ends it (so that scripts can be piped in).
        """
        if (self.buffer and line[:1] not in ("", " ", "\t", ")", "]", "}")
                and not line.startswith(("else", "elif", "%%"))
                and not self.buffer[0].startswith("%%")
                and self.session.is_complete("\n".join(self.buffer) + "\n")[0] == "complete"):
            self.flush()
        self.buffer.append(line)
        code = "\n".join(self.buffer)
        status, _ = self.session.is_complete(code)
        if status == "incomplete":
            return False
        self.buffer = []
        if code.strip():
            self.run(code)
        return True

    def flush(self):
        """Run what is left in the buffer (at the end of the input)."""
        if self.buffer:
            code = "\n".join(self.buffer)
            self.buffer = []
            if code.strip():
                self.run(code)

    def run(self, code):
        result = self.session.execute(code)
        for payload in result.payload:
            if payload["source"] == "page":
                self._write(payload["data"]["text/plain"])
            elif payload["source"] == "ask_exit":
                self.exit_requested = True
        return result

    def _status(self, output):
        """The status line of a long compile, on stderr: rewritten in place at a
        terminal, else one line per stage."""
        text = output["text"]
        tty = getattr(self.stderr, "isatty", lambda: False)()
        if text is None:
            if tty:
                self.stderr.write("\r\x1b[K")
                self.stderr.flush()
            return
        line = f"compiling {text} ({output['seconds']:.0f} s)"
        if tty:
            self.stderr.write(f"\r\x1b[K{line}")
        elif text != self._last_status:  # a log: a line when the stage changes
            self.stderr.write(line + "\n")
        self._last_status = text
        self.stderr.flush()

    def _write(self, text, err=False):
        stream = self.stderr if err else self.stdout
        stream.write(text if text.endswith("\n") else text + "\n")
        stream.flush()

    def _save(self, data, ext, binary=False):
        n = len(self.files) + 1
        path = self.out_dir / f"myia-{n:03d}.{ext}"
        if binary:
            path.write_bytes(base64.b64decode(data))
        else:
            path.write_text(data, encoding="utf-8")
        self.files.append(path)
        return path

    def show(self, output):
        kind = output["output_type"]
        if kind == "status":
            self._status(output)
        elif kind == "stream":
            stream = self.stderr if output["name"] == "stderr" else self.stdout
            stream.write(output["text"])
            stream.flush()
        elif kind == "error":
            self._write("\n".join(output["traceback"]), err=True)
        else:
            data = output["data"]
            text = data.get("text/plain", "")
            if "image/svg+xml" in data:
                path = self._save(data["image/svg+xml"], "svg")
                self._write(f"[drawing: {path}]")
            elif "image/png" in data:
                path = self._save(data["image/png"], "png", binary=True)
                self._write(f"[picture: {path}]")
            if text:
                self._write(text)


@contextlib.contextmanager
def sigint_raises():
    """SIGINT raises KeyboardInterrupt in the block (the session answers it as an error
    of the cell), whatever disposition the process had; the old one comes back."""
    try:
        old = signal.signal(signal.SIGINT, signal.default_int_handler)
    except ValueError:  # not the main thread: signals are not ours to take
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


@contextlib.contextmanager
def _keys_as_typed(fd):
    """The terminal out of its line mode from before the prompt is written until the
    prompt is done (prompt_toolkit takes raw mode only after writing it): a Ctrl-D
    typed as the prompt appears is a key, not an end of file that would be lost."""
    try:
        old = termios.tcgetattr(fd)
    except termios.error:
        yield
        return
    new = termios.tcgetattr(fd)
    new[3] &= ~(termios.ICANON | termios.ECHO)
    new[6][termios.VMIN], new[6][termios.VTIME] = 1, 0
    termios.tcsetattr(fd, termios.TCSANOW, new)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, old)


def interactive(repl, history_file=None, input=None, output=None):
    """The prompt_toolkit loop (`input`/`output`: prompt_toolkit's, for tests)."""
    session = repl.session

    class SessionCompleter(Completer):
        def get_completions(self, document, complete_event):
            matches, start, _ = session.complete(document.text, document.cursor_position)
            for m in matches:
                yield Completion(m, start_position=start - document.cursor_position)

    kb = KeyBindings()

    @kb.add("enter")
    def _(event):
        buf = event.current_buffer
        status, indent = session.is_complete(buf.document.text)
        if status == "incomplete":
            buf.insert_text("\n" + (indent or ""))
        else:
            buf.validate_and_handle()

    @kb.add("escape", "enter")
    def _(event):  # Alt-Enter: a new line, whatever the input so far
        event.current_buffer.insert_text("\n")

    lexer = None
    try:
        # import here: pygments is optional (without it, no colours)
        from prompt_toolkit.lexers import PygmentsLexer
        # import here: pygments is optional, as above
        from pygments.lexers.python import PythonLexer

        lexer = PygmentsLexer(PythonLexer)
    except ImportError:  # pragma: no cover
        pass
    path = os.path.expanduser(history_file or os.environ.get("MYIA_HISTORY", HISTORY_FILE))
    prompt = PromptSession(
        history=FileHistory(path), completer=SessionCompleter(), multiline=True,
        key_bindings=kb, lexer=lexer, complete_while_typing=False,
        prompt_continuation=lambda width, line_number, soft: "...: ".rjust(width),
        input=input, output=output)
    n = 1
    terminal = sys.stdin.fileno() if input is None and sys.stdin.isatty() else None
    while True:
        try:
            with _keys_as_typed(terminal) if terminal is not None else contextlib.nullcontext():
                text = prompt.prompt(f"In [{n}]: ")
        except KeyboardInterrupt:
            continue
        except EOFError:
            break
        if text.strip():
            with sigint_raises():
                repl.run(text)
            n += 1
        if repl.exit_requested:
            break


def main(argv=None):
    p = argparse.ArgumentParser(prog="myia-repl",
                                description="The Myia REPL: a session of compiled functions.")
    p.add_argument("--out", metavar="DIR",
                   help="where drawings are written (default: a new temporary folder)")
    p.add_argument("--backend", choices=BACKENDS,
                   help="the backend to start with (default: $MYIA_BACKEND, else llvm)")
    p.add_argument("--history", metavar="FILE", help=f"history file (default {HISTORY_FILE})")
    args = p.parse_args(argv)
    repl = Repl(out_dir=args.out, backend=args.backend)
    if sys.stdin.isatty() and sys.stdout.isatty():
        print(f"Myia {__version__} REPL.  %help tells how it works; Ctrl-D quits.")
        interactive(repl, args.history)
    else:
        for line in sys.stdin:
            repl.feed(line.rstrip("\n"))
            if repl.exit_requested:
                break
        else:
            repl.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
