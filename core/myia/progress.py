"""What the compiler is doing now: for a front end that shows a status line while a
compile takes long (the kernel and the REPL do after a second).

The pipeline marks its stages (`with stage("inferring types", "f"):`); `watching`
calls a front end's callback from a timer thread with the innermost stage, the
function it is for, and the seconds since the watch began.
Reading the stages costs the compiler nothing but a list append and pop.
"""

import threading
import time

_stages = []  # (stage, what) of the compiles in progress, outermost first


class stage:
    """`with stage(name, what):` the compiler is at stage `name` for `what`."""

    __slots__ = ("entry",)

    def __init__(self, name, what=None):
        self.entry = (name, what)

    def __enter__(self):
        _stages.append(self.entry)
        return self

    def __exit__(self, *exc):
        try:
            _stages.remove(self.entry)
        except ValueError:  # pragma: no cover  (a watcher's list copy raced with it)
            pass


def current():
    """"<what>: <stage>" of the innermost compile in progress (what it is at, for which
    function), or None."""
    stages = list(_stages)
    if not stages:
        return None
    name = stages[-1][0]
    what = next((w for _, w in reversed(stages) if w), None)
    return f"{what}: {name}" if what else name


class watching:
    """`with watching(callback, after=1.0):` while the block runs longer than `after`
    seconds, `callback(text, seconds)` is called (from another thread) every `every`
    seconds with `current()`; at the end, if it was called, `callback(None, seconds)`."""

    def __init__(self, callback, after=1.0, every=0.5):
        self.callback, self.after, self.every = callback, after, every
        self._done = threading.Event()
        self._shown = False

    def __enter__(self):
        self.t0 = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="myia-progress", daemon=True)
        self._thread.start()
        return self

    def _run(self):
        if self._done.wait(self.after):
            return
        last = None
        while not self._done.is_set():
            text = current()
            if text is not None:
                seconds = time.monotonic() - self.t0
                shown = (text, int(seconds))
                if shown != last:
                    last = shown
                    self._shown = True
                    self._call(text, seconds)
            self._done.wait(self.every)

    def _call(self, text, seconds):
        try:
            self.callback(text, seconds)
        except Exception:  # noqa: BLE001  a status line must never break a compile
            pass

    def __exit__(self, *exc):
        self._done.set()
        self._thread.join()
        if self._shown:
            self._call(None, time.monotonic() - self.t0)
