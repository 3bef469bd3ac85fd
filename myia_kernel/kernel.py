"""The Jupyter kernel: the Jupyter protocol around a `Session`.

Launched by `python -m myia_kernel -f <connection file>` (see `__main__`), with
`IPKernelApp.launch_instance(kernel_class=MyiaKernel)`.

Interrupts: a cell runs in the kernel's main thread, so SIGINT raises KeyboardInterrupt
in the running code (the session catches it and answers with a KeyboardInterrupt error).
While `do_execute` awaits instead, SIGINT cancels the awaited task (raising in the event
loop would kill the kernel), and the reply is the same KeyboardInterrupt error.  Either
way the session keeps its definitions.
"""

import asyncio
import atexit
import contextlib
import fnmatch
import os
import shutil
import signal
import sys
import tempfile
import threading
import uuid

from ipykernel.kernelbase import Kernel

from traitlets import Bool, Float, Unicode

from . import __version__
from .limits import parse_size
from .session import Session

HISTORY_SESSION = 1

BANNER = f"""Myia {__version__}: a compiler for a subset of Python, with automatic differentiation.
Cells hold functions written in the subset; the last expression is compiled and run.
  def f(x): return x * np.sin(x)
  grad(f)(1.0)          %grad f          %ir f          %plot f grad(f) -3 3
Already there: np, math, grad, value_and_grad, jvp, vjp, jacfwd, jacrev, jacobian,
hessian, jet, stop_gradient, custom_vjp, custom_jvp, checkpoint, vmap.  %help
tells more."""


LOCKED_BANNER = ("This kernel is locked: cells hold subset code only (no %%python, no "
                 "route to ordinary Python).")


@contextlib.contextmanager
def cancel_on_sigint(task, running_sync):
    """While the block runs, SIGINT raises KeyboardInterrupt if `running_sync()` (code
    of the cell is running), and otherwise cancels `task` (we are awaiting it)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    loop = task.get_loop()

    def handler(signum, frame):
        if running_sync():
            raise KeyboardInterrupt
        loop.call_soon_threadsafe(task.cancel)

    saved = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, saved)


class MyiaKernel(Kernel):
    implementation = "myia"
    implementation_version = __version__
    language = "python"
    language_version = ".".join(map(str, sys.version_info[:3]))
    language_info = {
        "name": "python",
        "version": ".".join(map(str, sys.version_info[:3])),
        "mimetype": "text/x-python",
        "file_extension": ".py",
        "pygments_lexer": "ipython3",
        "codemirror_mode": "python",
        "nbconvert_exporter": "python",
    }
    banner = BANNER
    # options (`--MyiaKernel.locked=True`...; the environment variables of limits.py and
    # MYIA_LOCKED do the same): see README, "Running on a shared hub"
    locked = Bool(False, help="turn off %%python and every route to ordinary Python").tag(
        config=True)
    cell_time_limit = Float(0.0, help="seconds a cell may run (0: no limit)").tag(config=True)
    memory_limit = Unicode("", help="bytes one compiled call may hold, e.g. 2G").tag(
        config=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.myia = Session(on_output=self._publish, locked=self.locked or None,
                            time_limit=self.cell_time_limit or None,
                            memory_limit=parse_size(self.memory_limit))
        if self.myia.locked:
            self.banner = BANNER + "\n" + LOCKED_BANNER
        elif os.getcwd() not in sys.path:
            # the kernelspec's `-P` keeps the notebook's folder off sys.path while the
            # kernel starts (see install.py); %%python cells may import its modules,
            # found after the standard library and the installed packages
            sys.path.append(os.getcwd())
        self._silent = False
        self._running_sync = False
        self._status_id = None  # the display of the status line of a long compile
        self._drawings = None  # the folder of this kernel's drawings (see _with_file)
        self._drawn = 0

    # ---- protocol details ------------------------------------------------------------

    @property
    def kernel_info(self):
        info = super().kernel_info
        info["supported_features"] = [f for f in info.get("supported_features", [])
                                      if f != "debugger"]
        return info

    def set_parent(self, ident, parent, channel="shell"):
        """Also route print() of the cell (sys.stdout/stderr) to this request."""
        super().set_parent(ident, parent, channel)
        if channel == "shell":
            for stream in (sys.stdout, sys.stderr):
                if hasattr(stream, "set_parent"):
                    stream.set_parent(parent)

    def _publish(self, output):
        if self._silent:
            return
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        kind = output["output_type"]
        if kind == "status":  # a transient line, replaced in place, then emptied
            self._publish_compile_status(output)
            return
        if kind == "stream":
            content = {"name": output["name"], "text": output["text"]}
        elif kind == "display_data":
            content = {"data": self._with_file(output["data"]),
                       "metadata": output.get("metadata", {}), "transient": {}}
        elif kind == "execute_result":
            content = {"execution_count": self.execution_count, "data": output["data"],
                       "metadata": output.get("metadata", {})}
        elif kind == "error":
            content = {k: output[k] for k in ("ename", "evalue", "traceback")}
        else:  # pragma: no cover
            return
        self.send_response(self.iopub_socket, kind, content)

    def _with_file(self, data):
        """A drawing is also saved as an SVG file, named on the first line of its
        text/plain: what a terminal front end (jupyter console) shows.  The files go
        with the kernel (see do_shutdown)."""
        svg = data.get("image/svg+xml")
        if svg is None:
            return data
        try:
            if self._drawings is None:
                self._drawings = tempfile.mkdtemp(prefix="myia-drawings-")
                atexit.register(self._remove_drawings)  # a kernel that is not shut down
            self._drawn += 1
            path = os.path.join(self._drawings, f"myia-{self._drawn:03d}.svg")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(svg)
        except OSError:
            return data  # no file: the text is still there
        text = data.get("text/plain", "")
        return {**data, "text/plain": f"[drawing: {path}]" + (f"\n{text}" if text else "")}

    async def do_shutdown(self, restart):
        self._remove_drawings()
        return await super().do_shutdown(restart)

    def _remove_drawings(self):
        if self._drawings is not None:
            shutil.rmtree(self._drawings, ignore_errors=True)
            self._drawings = None

    def _publish_compile_status(self, output):
        text = output["text"]
        if text is None:
            if self._status_id is not None:
                self.send_response(self.iopub_socket, "update_display_data", {
                    "data": {"text/plain": ""}, "metadata": {},
                    "transient": {"display_id": self._status_id}})
                self._status_id = None
            return
        line = f"compiling {text} ({output['seconds']:.0f} s)"
        data = {"text/plain": line}
        if self._status_id is None:
            self._status_id = f"myia-status-{uuid.uuid4().hex}"
            kind = "display_data"
        else:
            kind = "update_display_data"
        self.send_response(self.iopub_socket, kind, {
            "data": data, "metadata": {}, "transient": {"display_id": self._status_id}})

    # ---- execute ---------------------------------------------------------------------

    async def do_execute(self, code, silent, store_history=True, user_expressions=None,
                         allow_stdin=False, *, cell_meta=None, cell_id=None):
        self._silent = silent
        task = asyncio.ensure_future(self._execute(code, silent, store_history))
        with cancel_on_sigint(task, lambda: self._running_sync):
            try:
                return await task
            except asyncio.CancelledError:
                err = {"output_type": "error", "ename": "KeyboardInterrupt", "evalue": "",
                       "traceback": ["KeyboardInterrupt: the cell was interrupted; the "
                                     "session keeps its definitions"]}
                self._publish(err)
                return self._error_reply(err)
            finally:
                self._silent = False

    async def _execute(self, code, silent, store_history):
        await asyncio.sleep(0)
        self._running_sync = True
        try:
            result = self.myia.execute(code, number=self.execution_count,
                                       store_history=store_history and not silent)
        finally:
            self._running_sync = False
        if result.status == "error":
            return self._error_reply(result.error)
        return {"status": "ok", "execution_count": self.execution_count,
                "payload": result.payload, "user_expressions": {}}

    def _error_reply(self, err):
        return {"status": "error", "execution_count": self.execution_count,
                "ename": err["ename"], "evalue": err["evalue"],
                "traceback": err["traceback"]}

    # ---- completion, inspection, is_complete, history ----------------------------------

    async def do_complete(self, code, cursor_pos):
        matches, start, end = self.myia.complete(code, cursor_pos)
        return {"status": "ok", "matches": matches, "cursor_start": start,
                "cursor_end": end, "metadata": {}}

    async def do_inspect(self, code, cursor_pos, detail_level=0, omit_sections=()):
        text = self.myia.inspect(code, cursor_pos, detail_level)
        return {"status": "ok", "found": text is not None,
                "data": {"text/plain": text} if text is not None else {}, "metadata": {}}

    async def do_is_complete(self, code):
        status, indent = self.myia.is_complete(code)
        reply = {"status": status}
        if status == "incomplete":
            reply["indent"] = indent or ""
        return reply

    async def do_history(self, hist_access_type, output, raw, session=None, start=None,
                         stop=None, n=None, pattern=None, unique=False):
        def entry(number, code, out):
            return (HISTORY_SESSION, number, (code, out) if output else code)

        items = self.myia.history
        if hist_access_type == "tail":
            items = items[-n:] if n else items
        elif hist_access_type == "range":
            if session not in (None, 0, HISTORY_SESSION) and not (session or 0) < 0:
                items = []
            lo = start or 0
            items = [h for h in items if h[0] >= lo and (stop is None or h[0] < stop)]
        elif hist_access_type == "search":
            pat = pattern or "*"
            items = [h for h in items if fnmatch.fnmatchcase(h[1], pat)]
            if unique:
                seen, kept = set(), []
                for h in reversed(items):
                    if h[1] not in seen:
                        seen.add(h[1])
                        kept.append(h)
                items = kept[::-1]
            if n:
                items = items[-n:]
        else:
            items = []
        return {"status": "ok", "history": [entry(*h) for h in items]}
