"""Source locations and the errors users see.

Every user-facing error names its kind, the file, line and column, shows the source
line with a caret under the offending span, and says what to do.  Errors raised at
the API boundary carry no compiler traceback (see `myia.api`).
"""

import linecache


class Location:
    """A span of source code: file, line/column (1-based line, 0-based col)."""

    __slots__ = ("filename", "line", "col", "end_line", "end_col", "text")

    def __init__(self, filename, line, col, end_line=None, end_col=None, text=None):
        self.filename = filename
        self.line = line
        self.col = col
        self.end_line = end_line if end_line is not None else line
        self.end_col = end_col
        self.text = text

    @property
    def source_line(self):
        """The text of the first line of the span, without its newline."""
        if self.text is not None:
            return self.text
        return linecache.getline(self.filename, self.line).rstrip("\n")

    def caret(self):
        """Two lines: the source line and a caret under the span."""
        src = self.source_line
        if not src:
            return ""
        stripped = src.lstrip()
        indent = len(src) - len(stripped)
        col = max(self.col - indent, 0)
        if self.end_col is not None and self.end_line == self.line:
            width = max(self.end_col - self.col, 1)
        else:
            width = max(len(src) - self.col, 1)
        return f"    {stripped}\n    {' ' * col}{'^' * width}"

    def short(self):
        return f"{self.filename}:{self.line}:{self.col + 1}"

    def __repr__(self):
        return f"<Location {self.short()}>"


class MyiaError(Exception):
    """Base of all errors about the user's program.

    `message` says what went wrong, `loc` where, `hint` what to do.
    """

    kind = "MyiaError"

    def __init__(self, message, loc=None, hint=None):
        self.message = message
        self.loc = loc
        self.hint = hint
        super().__init__(message)

    def __str__(self):
        parts = [self.message]
        if self.loc is not None:
            parts.append(
                f'  File "{self.loc.filename}", line {self.loc.line}, '
                f"column {self.loc.col + 1}"
            )
            caret = self.loc.caret()
            if caret:
                parts.append(caret)
        if self.hint:
            parts.append(f"  Hint: {self.hint}")
        return "\n".join(parts)


class MyiaSyntaxError(MyiaError):
    """A construct outside the Python subset."""

    kind = "MyiaSyntaxError"


class MyiaNameError(MyiaError):
    """A name that is not defined where it is used."""

    kind = "MyiaNameError"


class MyiaSourceError(MyiaError):
    """A function whose source the compiler cannot read (builtin, C function...)."""

    kind = "MyiaSourceError"


class MyiaTypeError(MyiaError):
    """Values of the wrong type, found by inference or at run time."""

    kind = "MyiaTypeError"


class MyiaStaticError(MyiaTypeError):
    """A value that must be known at compile time (a shape, an axis, a count, the key
    of a dict) is known only when the program runs.  An argument that decides one can
    be made a constant of the program: `myia.compile(f, static_argnums=...)`."""


class MyiaShapeError(MyiaError):
    """Arrays of incompatible shapes."""

    kind = "MyiaShapeError"


class MyiaValueError(MyiaError):
    """A bad value at run time: an index out of range, a failed assert."""

    kind = "MyiaValueError"


class MyiaIndexError(MyiaValueError, IndexError):
    """An index, an index array or a run-time slice outside its array (an IndexError
    too, as Python's own)."""

    kind = "MyiaIndexError"


class MyiaSliceBoundsError(MyiaIndexError):
    """`x[i:i + n]` (n known when compiling, i at run time) that does not fit inside x:
    its result would be shorter than n, so it is an error, never a silent clip."""

    kind = "MyiaIndexError"

    def __init__(self, message, loc=None, hint=None):
        super().__init__(message, loc, hint or (
            "a slice x[i:i + n] must lie inside the array; in a loop over batches "
            "(for i in range(0, n, bs)), drop the last partial batch, e.g. "
            "range(0, n - n % bs, bs)"))


class MyiaOverflowError(MyiaValueError):
    """An integer result outside int64's range (never a silent wrap), or an array too
    big to allocate."""

    kind = "MyiaOverflowError"


class MyiaAssertionError(MyiaValueError):
    """An `assert` in the user's program failed."""

    kind = "MyiaAssertionError"


class MyiaRecursionError(MyiaError):
    """The program recursed deeper than the backend's limit."""

    kind = "MyiaRecursionError"


class MyiaGradError(MyiaError):
    """A request for a derivative that does not make sense (non-scalar output...)."""

    kind = "MyiaGradError"


class MyiaBatchingError(MyiaError):
    """vmap cannot batch a construct of the program (it says which, and where)."""

    kind = "MyiaBatchingError"


class MyiaBackendError(MyiaError):
    """A backend cannot run a construct of the program (never silent)."""

    kind = "MyiaBackendError"


class MyiaMemoryError(MyiaError):
    """The program asked for more memory than the machine (or the limit) gives: the
    user's error, at the line that asked."""

    kind = "MyiaMemoryError"


def format_bytes(n):
    """1.5 GB, 300 MB, 12 kB: decimal units, three significant digits."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} bytes"


def loop_memory_error(step_bytes, steps, loc, limit=None, used=None, arrays=False):
    """The error of a loop's derivative that ran out of memory (or of the session's
    limit) after `steps` steps, keeping `step_bytes` bytes a step (more where
    `arrays`: the arrays its records point to)."""
    kept = f"{step_bytes} bytes a step" + (" and the arrays they hold" if arrays else "")
    where = (f"this session's memory limit of {format_bytes(limit)}"
             + (f" (the program held {format_bytes(used)})" if used else "")
             if limit else "the machine's memory")
    return MyiaMemoryError(
        f"the derivative of this loop keeps what its backward pass needs, {kept}: "
        f"after {steps:,} steps it reached {where}", loc,
        hint="run fewer steps, or checkpoint the loop in segments (myia.checkpoint: m "
             "segments of k steps keep m + k steps' values)")


def memory_error(nbytes, what, loc=None, limit=None, used=None):
    """The error of an allocation of `nbytes` for `what` ("an array of shape (n, n),
    float64") that failed: beyond the machine's memory, or beyond `limit`."""
    if limit:
        held = f" (the program held {format_bytes(used)} already)" if used else ""
        return MyiaMemoryError(
            f"the program asked for {format_bytes(nbytes)} ({what}): beyond this "
            f"session's memory limit of {format_bytes(limit)}{held}", loc,
            hint="work on smaller arrays (fewer rows per batch), or ask whoever runs "
                 "the kernel for a higher limit")
    return MyiaMemoryError(
        f"the program asked for {format_bytes(nbytes)} ({what}), more than the machine "
        f"could give", loc, hint="check the shapes at this line: an array this large is "
                                 "often a shape mistake (an outer product instead of an "
                                 "elementwise one); else work on smaller pieces")
