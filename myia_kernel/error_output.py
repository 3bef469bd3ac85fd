"""Errors as a session shows them: where in a cell, and as Jupyter `error` outputs.

    node_location(filename, node)     the Location of an AST node of a cell's source
    syntax_error(e, filename)         Python's SyntaxError as a located MyiaSyntaxError
    error_output(session, exc)        {"output_type": "error", "ename", "evalue", "traceback"}

The traceback of an error output is lines: the message, the cell's line and a caret
under the faulty part (positions in a cell's synthetic source mapped back to the cell's
own text, see `session.CellSource`), the hint; never the compiler's frames.
"""

import linecache
import re
import traceback

from myia.errors import Location, MyiaError, MyiaSyntaxError

#: the synthetic file name of a cell or of a magic's argument (see Session._new_file)
CELL_FILE = re.compile(r"^<myia-(cell|magic)-(\d+)>$")


class UsageError(Exception):
    """A magic was called the wrong way (IPython's `UsageError`)."""


def char_col(line, byte_col):
    """The character column of the UTF-8 byte offset `byte_col` of `line` (the AST's
    column offsets are in bytes)."""
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


def node_location(filename, node):
    """The Location of an AST node parsed from the source of `filename` (in linecache)."""
    lines = linecache.getlines(filename)
    text = lines[node.lineno - 1] if 0 < node.lineno <= len(lines) else ""
    end = node.end_col_offset if getattr(node, "end_lineno", None) == node.lineno else None
    return Location(filename, node.lineno, char_col(text, node.col_offset),
                    end_col=char_col(text, end) if end is not None else None)


def syntax_error(e, filename):
    """Python's SyntaxError `e` as a MyiaSyntaxError at the same place."""
    line = e.lineno or 1
    col = max((e.offset or 1) - 1, 0)
    end = None
    if getattr(e, "end_lineno", None) == line and e.end_offset and e.end_offset > e.offset:
        end = e.end_offset - 1
    msg = e.msg if e.msg.startswith("invalid syntax") else f"invalid syntax: {e.msg}"
    err = MyiaSyntaxError(msg, Location(filename, line, col, end_col=end))
    err.python = True
    return err


def _format_location(session, loc):
    """(where, caret lines) for a Location, mapped back to the cell's own text."""
    cell = session.cells.get(loc.filename)
    if cell is None:
        where = f'  File "{loc.filename}", line {loc.line}, column {loc.col + 1}'
        caret = loc.caret()
        return [where] + (caret.split("\n") if caret else [])
    line, col = cell.original(loc.line, loc.col)
    text = cell.line_text(line)
    end_col = None
    if loc.end_col is not None and loc.end_line == loc.line:
        end_col = cell.original(loc.line, loc.end_col)[1]
    col = min(max(col, 0), max(len(text) - 1, 0))
    if cell.label is None:
        where = f"  In the magic's argument, column {col + 1}"
    else:
        where = f"  Cell [{cell.label}], line {line}, column {col + 1}"
    if not text.strip():
        return [where]
    stripped = text.lstrip()
    indent = len(text) - len(stripped)
    width = max((end_col - col) if end_col is not None else len(text) - col, 1)
    return [where, f"    {stripped}", "    " + " " * max(col - indent, 0) + "^" * width]


def error_output(session, exc):
    """The Jupyter `error` output of an exception: message, cell line, caret, hint."""
    if isinstance(exc, UsageError):
        return {"output_type": "error", "ename": "UsageError", "evalue": str(exc),
                "traceback": [f"UsageError: {exc}"]}
    if isinstance(exc, MyiaError):
        ename = "SyntaxError" if getattr(exc, "python", False) else (
            getattr(exc, "kind", None) or type(exc).__name__)
        tb = [f"{ename}: {exc.message}"]
        if exc.loc is not None:
            tb += _format_location(session, exc.loc)
        hint = exc.hint
        m = re.match(r"name `(\w+)` is not defined", exc.message)
        stale = session.definitions.get(m.group(1)) if m else None
        if stale is not None and stale.stale is not None:
            # a value set aside after a redefinition: say why, and how it comes back
            first = str(getattr(stale.stale, "message", stale.stale)).split("\n")[0]
            hint = (f"`{m.group(1)}` was set aside when it could not be recomputed "
                    f"({first}); it comes back when what it reads compiles again, or "
                    f"assign it anew")
        if hint:
            tb.append(f"  Hint: {hint}")
        return {"output_type": "error", "ename": ename, "evalue": exc.message,
                "traceback": tb}
    # A Python exception: from a %%python cell or a Python-evaluated expression (show the
    # session's frames), or from the compiler itself (an internal error: say so).
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if CELL_FILE.match(f.filename or "")]
    tb = []
    if mine:
        tb.append("Traceback (most recent call last):")
        for f in mine:
            cell = session.cells.get(f.filename)
            label = f"Cell [{cell.label}]" if cell and cell.label else f.filename
            tb.append(f"  {label}, line {f.lineno}")
            text = cell.line_text(f.lineno).strip() if cell else (f.line or "")
            if text:
                tb.append(f"    {text}")
    tb += [ln.rstrip("\n") for ln in traceback.format_exception_only(type(exc), exc)]
    if not mine and frames:
        last = frames[-1]
        tb.append(f"  (an internal error of Myia, in {last.filename}, line {last.lineno}, "
                  f"{last.name}: please report it)")
    return {"output_type": "error", "ename": type(exc).__name__, "evalue": str(exc),
            "traceback": tb}
