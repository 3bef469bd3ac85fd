"""Finding the source of a Python function: its file, its `ast` node, its locations.

We parse the whole file the function comes from (through `linecache`, which also knows
IPython cells and modules loaded by import hooks) and find the function's node in it by
line and name.  Locations are then those of the real file, columns included, with no
offsets to track.  When the whole file does not parse (a notebook cell with magics...),
we fall back to `inspect.getsource`, keeping the real lines and columns by padding the
snippet (see `_parse_snippet`).
"""

import ast
import inspect
import linecache
import types

from ..errors import Location, MyiaSourceError

# filename -> (lines, tree): a file is parsed once, again only if its text changed.
_trees = {}


class SourceFile:
    """Turns `ast` positions into `Location`s.

    `ast` columns count UTF-8 bytes; `Location` columns count characters (for carets).
    """

    def __init__(self, filename, lines):
        self.filename = filename
        self.lines = lines

    def loc(self, node):
        if node is None or not hasattr(node, "lineno"):
            return None
        line = node.lineno
        end_line = getattr(node, "end_lineno", None) or line
        col = self._char_col(line, node.col_offset)
        end_col = getattr(node, "end_col_offset", None)
        if end_col is not None:
            end_col = self._char_col(end_line, end_col)
        return Location(self.filename, line, col, end_line, end_col)

    def _char_col(self, line, byte_col):
        if 0 < line <= len(self.lines):
            text = self.lines[line - 1]
            if not text.isascii():
                return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))
        return byte_col


def function_name(fn):
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def find_function_ast(fn):
    """(ast node of `fn`'s `def` or `lambda`, SourceFile) for a Python function."""
    if not isinstance(fn, types.FunctionType):
        kind = "a builtin or C function" if callable(fn) else f"a {type(fn).__name__}"
        raise MyiaSourceError(
            f"cannot parse `{function_name(fn)}`: it is {kind}, not a Python function "
            f"with source code",
            hint="pass a function defined with `def` or `lambda` in a file or a cell",
        )
    code = fn.__code__
    filename = code.co_filename
    lines = linecache.getlines(filename, fn.__globals__)
    if not lines:
        raise MyiaSourceError(
            f"cannot parse `{function_name(fn)}`: its source code is not available "
            f"(file {filename!r})",
            hint="define the function in a file, a notebook cell or the Myia kernel; "
            "functions made by exec() of a string have no source",
        )
    # What inspect finds for this function alone comes first in a file not parsed yet
    # (parsing a library's whole files to find a few derivative rules was 20-35 ms of a
    # first compile), last where the file did not parse or changed since the function
    # was defined; a lambda is found in its file's tree first.
    snippet_first = filename not in _trees and code.co_name != "<lambda>"
    attempts = [lambda: _parse_file(filename, lines), lambda: _parse_snippet(fn)]
    node = None
    for parse in attempts[::-1] if snippet_first else attempts:
        tree = parse()
        node = _find_node(tree, code) if tree is not None else None
        if node is not None:
            break
    if node is None:
        raise MyiaSourceError(
            f"cannot find the source of `{function_name(fn)}` in {filename} "
            f"(line {code.co_firstlineno})",
            hint="the file may have changed since the function was defined; reload it",
        )
    return node, SourceFile(filename, lines)


#: how many files' trees are kept (the files of the functions parsed last)
TREES_KEPT = 64


def _parse_file(filename, lines):
    cached = _trees.pop(filename, None)
    if cached is not None and cached[0] == lines:
        _trees[filename] = cached  # the most recent last
        return cached[1]
    try:
        tree = ast.parse("".join(lines), filename)
    except (SyntaxError, ValueError):
        tree = None
    _trees[filename] = (list(lines), tree)
    while len(_trees) > TREES_KEPT:
        del _trees[next(iter(_trees))]
    return tree


def _parse_snippet(fn):
    """Parse `inspect.getsource(fn)` keeping the real line and column numbers: pad it
    with empty lines, and put an indented snippet under an `if 1:`, instead of
    dedenting it (which would shift every column)."""
    try:
        src = inspect.getsource(fn)
    except (OSError, TypeError):
        return None
    first = fn.__code__.co_firstlineno
    if src[:1] in (" ", "\t") and first >= 2:
        text = "\n" * (first - 2) + "if 1:\n" + src
    else:
        text = "\n" * (first - 1) + src
    try:
        return ast.parse(text)
    except SyntaxError:
        return None


def _first_line(node):
    if isinstance(node, ast.Lambda):
        return node.lineno
    return min([d.lineno for d in node.decorator_list] + [node.lineno])


def _find_node(tree, code):
    """The FunctionDef or Lambda of `tree` whose code object is `code`."""
    line = code.co_firstlineno
    if code.co_name != "<lambda>":
        for node in ast.walk(tree):
            if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and node.name == code.co_name and _first_line(node) == line):
                return node
        return None
    lambdas = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and n.lineno == line]
    if len(lambdas) <= 1:
        return lambdas[0] if lambdas else None
    # Several lambdas start on this line: the one whose argument names match and whose
    # body span is that of one of the code's instructions (the return of the body).
    argnames = list(code.co_varnames[:code.co_argcount])
    lambdas = [n for n in lambdas if [a.arg for a in n.args.args] == argnames] or lambdas
    positions = set(code.co_positions())
    exact = [n for n in lambdas
             if (n.body.lineno, n.body.end_lineno, n.body.col_offset, n.body.end_col_offset)
             in positions]
    if len(exact) == 1:
        return exact[0]
    raise MyiaSourceError(
        f"cannot tell apart the {len(lambdas)} lambdas on line {line} of {code.co_filename}",
        hint="put the lambda on a line of its own, or use a `def`",
    )
