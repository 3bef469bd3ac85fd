"""Limits for shared hubs: the wall time of a cell and the memory of compiled programs.

Both are optional; a locked kernel is where they are meant to be set (see README,
"Running on a shared hub"):

    MYIA_CELL_TIME_LIMIT=60      seconds a cell may run (then it is stopped, as the
                                 interrupt button would, and says so with the figures)
    MYIA_MEMORY_LIMIT=2G         bytes one call of compiled (llvm) code may hold
                                 (K, M, G, T: powers of 1000; KiB, MiB, GiB: of 1024)

The kernel takes them as options too (`--MyiaKernel.cell_time_limit=60`,
`--MyiaKernel.memory_limit=2G`), and `python -m myia_kernel install --locked` writes
them into the kernelspec.
"""

import _thread
import contextlib
import os
import re
import signal
import threading
import time

from myia import introspect

TIME_VARIABLE = "MYIA_CELL_TIME_LIMIT"
MEMORY_VARIABLE = "MYIA_MEMORY_LIMIT"

_UNITS = {"": 1, "B": 1, "K": 10**3, "KB": 10**3, "M": 10**6, "MB": 10**6, "G": 10**9,
          "GB": 10**9, "T": 10**12, "TB": 10**12, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30,
          "TIB": 2**40}


def parse_size(text):
    """Bytes of "2G", "512MiB", "1.5GB", "1000000" (None for "" or "0")."""
    if text is None or not str(text).strip():
        return None
    m = re.fullmatch(r"\s*([\d.]+)\s*([A-Za-z]*)\s*", str(text))
    if not m or m.group(2).upper() not in _UNITS:
        raise ValueError(f"cannot read the size {text!r}: write e.g. 2G, 512M or 1.5GiB")
    n = int(float(m.group(1)) * _UNITS[m.group(2).upper()])
    return n or None


def parse_seconds(text):
    if text is None or str(text).strip() in ("", "0"):
        return None
    try:
        s = float(text)
    except ValueError:
        raise ValueError(f"cannot read the time limit {text!r}: write seconds, e.g. 60") \
            from None
    return s if s > 0 else None


def from_environment():
    """(cell time limit in seconds or None, memory limit in bytes or None)."""
    return (parse_seconds(os.environ.get(TIME_VARIABLE)),
            parse_size(os.environ.get(MEMORY_VARIABLE)))


def set_memory_limit(nbytes):
    """The most bytes one call of compiled code may hold, and one value that compiling
    (or reading a magic's argument) builds (None: no limit)."""
    introspect.set_memory_limit(nbytes)


class TimeLimitExceeded(Exception):
    """A cell ran past the session's time limit."""

    def __init__(self, limit, elapsed):
        super().__init__(f"the cell ran for {elapsed:.1f} s, past this session's time "
                         f"limit of {limit:g} s; it was stopped and the session keeps its "
                         f"definitions")
        self.limit, self.elapsed = limit, elapsed


@contextlib.contextmanager
def time_limit(seconds):
    """Stop the block after `seconds` (as an interrupt would: compiled loops poll for
    it), raising TimeLimitExceeded; None: no limit."""
    if not seconds:
        yield
        return
    fired = threading.Event()
    lock = threading.Lock()
    done = []
    main = threading.current_thread() is threading.main_thread()

    def stop():
        with lock:
            if done:
                return
            fired.set()
        _thread.interrupt_main()  # Python code (the VM) stops at its next bytecode
        introspect.request_interrupt()  # compiled code polls the runtime's flag

    saved = None
    if main and signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL, None):
        # interrupt_main does nothing where SIGINT is not handled by Python (nohup)
        saved = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(seconds, stop)
    timer.daemon = True
    t0 = time.monotonic()
    timer.start()
    try:
        try:
            yield
        finally:
            with lock:
                done.append(True)
            timer.cancel()
        if fired.is_set():
            # it fired as the block ended: its interrupt is on its way, take it here
            try:
                for _ in range(200):
                    time.sleep(0.001)
            except KeyboardInterrupt:
                pass
            raise TimeLimitExceeded(seconds, time.monotonic() - t0)
    except KeyboardInterrupt:
        if fired.is_set():
            raise TimeLimitExceeded(seconds, time.monotonic() - t0) from None
        raise
    finally:
        if saved is not None:
            signal.signal(signal.SIGINT, saved)
