"""A Myia session: the namespace, the cells, the magics; shared by the kernel and the REPL.

    s = Session()
    r = s.execute("def f(x):\\n    return x * x\\nf(3.0)")
    r.status, r.value, r.outputs        # "ok", 9.0, [{"output_type": "execute_result", ...}]

A cell holds subset code.  Its top-level statements run in order:

    def f(...)          joins the session; parsed and resolved now, so that a syntax or
                        name error shows at once (consecutive defs are bound first, so
                        that they may call each other)
    expression          compiled (on the session's backend) and run; the last one is the
                        cell's result
    x = expression      the same, and the name joins the session
    import ...          numpy, math or myia only (names join the session)
    %magic args         a line magic (see `magics`); `%%magic` on the first line makes
                        the whole cell a cell magic (`%%python`: ordinary Python)
    name?               help on a name

An expression is compiled like user code: the cell's text is registered in `linecache`
under a synthetic file name (`<myia-cell-3>`), with the expression statement rewritten in
place as `def __cell_expr__(): return <expression>`, a real Python function of the session
that the parser reads like any other (errors point at the cell's own line and column).
Values that are functions (`df = grad(f)`) are bound as the Python object that the same
expression gives when Python evaluates it: it compiles to the same program, and stays
callable from `%%python` cells.  An expression *cell* that calls `jvp`, `vjp`, `hessian` or
`jet` is read by `seal.SafeEval`, which calls them from Python (they compile the function
they are given, a lambda written in place included: `jvp(lambda x: x * x, (3.0,), (1.0,))`)
and runs no Python code of the cell; inside a `def` they are part of the subset, as `grad`
is.
Nothing else of a subset cell is evaluated by Python either (see `seal`): annotations are
dropped, default values and magic arguments are read by SafeEval.

Redefining a name rebuilds what depends on it: the definitions (defs and assignments) of
the session that use the name, directly or through others, are made again, in order.

Outputs are dicts in the shape of Jupyter's messages (and of nbformat outputs):
`{"output_type": "stream", "name": "stdout", "text": ...}`, `display_data` and
`execute_result` with `data` (a MIME bundle), and `error` with `ename`, `evalue`,
`traceback` (lines: the message, the cell line and a caret, the hint; never the
compiler's frames).  `on_output` receives each one as it is made.
"""

import ast
import builtins
import codeop
import inspect
import io
import keyword
import linecache
import math
import re
import symtable
import tokenize
import traceback
import types

import numpy as np

import myia
from myia.errors import MyiaError, MyiaSyntaxError
from myia.introspect import (class_name, default_backend, foreign_part, is_myia_class,
                             progress, returns_function)

from . import limits
from . import magics as _magics
from . import seal
from .display import format_value

PREFIX = "def __cell_expr__(): return "
#: a compile that runs longer than this many seconds gets a status line (the stage),
#: brought up to date every STATUS_EVERY seconds
STATUS_AFTER = 1.0
STATUS_EVERY = 0.5
WRAPPER = "__cell_expr__"
HOST_TRANSFORMS = (myia.jvp, myia.vjp, myia.hessian, myia.jet)
_CELL_FILE = re.compile(r"^<myia-(cell|magic)-(\d+)>$")
_HELP_LINE = re.compile(r"^\s*(\?{1,2})?([A-Za-z_][\w.]*)(\?{1,2})?\s*$")
#: a line that names the python magic (a locked session refuses the whole cell)
_PYTHON_MAGIC = re.compile(r"^\s*%{1,2}\s*python(?![\w?])", re.MULTILINE | re.IGNORECASE)
_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")


class UsageError(Exception):
    """A magic was called the wrong way (IPython's `UsageError`)."""


class Result:
    """What `Session.execute` returns.

    status: "ok" or "error"; outputs: the output dicts, in order; value: the cell's
    result (None when it has none); error: the error output dict, or None; payload:
    Jupyter payloads (the pages of `name?`)."""

    def __init__(self):
        self.status = "ok"
        self.outputs = []
        self.value = None
        self.has_value = False
        self.error = None
        self.payload = []

    def text(self, name="stdout"):
        """All the text of the stream `name` (for tests and the REPL)."""
        return "".join(o["text"] for o in self.outputs
                       if o["output_type"] == "stream" and o["name"] == name)

    def displays(self):
        return [o for o in self.outputs if o["output_type"] == "display_data"]

    def __repr__(self):
        return f"<Result {self.status} outputs={len(self.outputs)} value={self.value!r}>"


class CellSource:
    """The original text of a cell, and how to map the synthetic file's positions back
    to it: {synthetic line: (original line, column shift)}."""

    def __init__(self, filename, text, label):
        self.filename = filename
        self.lines = text.splitlines()
        self.label = label
        self.linemap = {}

    def original(self, line, col):
        orig_line, shift = self.linemap.get(line, (line, 0))
        return orig_line, col - shift

    def line_text(self, line):
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""


class Definition:
    """A name (or names) the session's cells defined, and how to make it again.

    kind: "def" (code: the module code of the `def`), "assign" (code: the module code of
    the wrapper def; targets: the assignment's target), "python" (an import or a
    `%%python` cell: never made again).  deps: the global names it reads."""

    def __init__(self, kind, names, deps, code=None, targets=None, filename=None,
                 value_node=None):
        self.kind = kind
        self.value_node = value_node
        self.names = tuple(names)
        self.deps = frozenset(deps)
        self.code = code
        self.targets = targets
        self.filename = filename
        self.defaults = ((), {})  # a def's default values (see Session._defaults)
        self.stale = None  # the error that keeps it from being recomputed, if any


def _names_read(node):
    """The global names that the def or expression `node` reads (its parameters and
    local variables, and those of nested functions, excluded)."""
    if isinstance(node, ast.expr):
        node = ast.Expr(node)
    table = symtable.symtable(ast.unparse(node), "<cell>", "exec")
    names = {s.get_name() for s in table.get_symbols() if s.is_referenced()}
    todo = list(table.get_children())
    while todo:
        t = todo.pop()
        names |= {s.get_name() for s in t.get_symbols() if s.is_global()}
        todo.extend(t.get_children())
    return names


def _target_names(target):
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _target_names(elt)]
    return None


def _bind(target, value, ns):
    if isinstance(target, ast.Name):
        ns[target.id] = value
        return
    values = tuple(value)
    if len(values) != len(target.elts):
        raise MyiaError(
            f"cannot unpack {len(values)} values into {len(target.elts)} names")
    for t, v in zip(target.elts, values):
        _bind(t, v, ns)


def is_data(value):
    """True for the values compiled code returns as data (not functions)."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes,
                                           np.ndarray, np.generic)):
        return True
    return isinstance(value, tuple) and all(is_data(v) for v in value)


_MISSING = object()
#: the environment variable that locks every session of a process (see README)
LOCKED_VARIABLE = "MYIA_LOCKED"


def locked_from_environment():
    import os

    return os.environ.get(LOCKED_VARIABLE, "").strip().lower() in ("1", "true", "yes", "on")


def new_namespace():
    return {
        "__name__": "__myia_session__",
        "__builtins__": builtins,
        "np": np,
        "math": math,
        "grad": myia.grad,
        "value_and_grad": myia.value_and_grad,
        "jvp": myia.jvp,
        "vjp": myia.vjp,
        "hessian": myia.hessian,
        "jet": myia.jet,
    }


class Session:
    """The state of one kernel or REPL: namespace, definitions, backend, history."""

    def __init__(self, backend=None, on_output=None, locked=None, time_limit=None,
                 memory_limit=None):
        #: a locked session (shared hubs): no %%python, no route to ordinary Python
        self.locked = locked_from_environment() if locked is None else locked
        # optional limits (see limits.py): seconds per cell, bytes per compiled call
        env_time, env_memory = limits.from_environment()
        self.time_limit = time_limit if time_limit is not None else env_time
        self.memory_limit = memory_limit if memory_limit is not None else env_memory
        if self.memory_limit:
            limits.set_memory_limit(self.memory_limit)
        self.namespace = new_namespace()
        self.backend = backend or default_backend()
        self.on_output = on_output
        self.definitions = {}      # name -> Definition (in order of (re)definition)
        self.cells = {}            # synthetic filename -> CellSource
        self.history = []          # (number, input, output text or None)
        self.execution_count = 0
        self._files = 0
        self._compiled = {}        # function object -> myia CompiledFunction
        self._result = None
        self.warned_no_dot = False

    # ---- running cells ---------------------------------------------------------------

    def execute(self, code, number=None, store_history=True):
        """Run one cell; never raises (errors become an `error` output)."""
        result = self._result = Result()
        if number is None:
            self.execution_count += 1
            number = self.execution_count
        try:
            with progress.watching(self._status, after=STATUS_AFTER, every=STATUS_EVERY), \
                    limits.time_limit(self.time_limit):
                value, has_value = self._execute(code, number)
            if has_value and not _ends_with_semicolon(code):
                result.value, result.has_value = value, True
                self.emit({"output_type": "execute_result",
                           "data": self.bundle(value), "metadata": {}})
        except limits.TimeLimitExceeded as e:
            self._error(result, {
                "output_type": "error", "ename": "TimeLimitExceeded", "evalue": str(e),
                "traceback": [f"TimeLimitExceeded: {e}"]})
        except KeyboardInterrupt:
            self._error(result, {
                "output_type": "error", "ename": "KeyboardInterrupt", "evalue": "",
                "traceback": ["KeyboardInterrupt: the cell was interrupted; the session "
                              "keeps its definitions"]})
        except BaseException as e:  # noqa: BLE001  the session survives every error
            if isinstance(e, SystemExit):
                e = UsageError("exit() is not available in a Myia session; "
                               "close the notebook or the REPL instead")
            self._error(result, self.error_output(e))
        finally:
            self._result = None
        if store_history:
            out = None
            if result.has_value:
                out = result.outputs[-1]["data"]["text/plain"] if result.outputs else None
            self.history.append((number, code, out))
        return result

    def _error(self, result, err):
        result.status = "error"
        result.error = err
        self.emit(err)

    def emit(self, output):
        if self._result is not None:
            self._result.outputs.append(output)
        if self.on_output is not None:
            self.on_output(output)

    def _status(self, text, seconds):
        """A compile has run for more than STATUS_AFTER seconds: tell the front end what
        it is doing (`text` None: it is over).  Called from the watcher's thread; a
        status is transient, so it is not one of the cell's outputs."""
        if self.on_output is not None:
            if text is not None:
                text = text.replace("__cell_expr__", "the cell")
            self.on_output({"output_type": "status", "text": text, "seconds": seconds})

    def print(self, text, name="stdout"):
        if not text.endswith("\n"):
            text += "\n"
        self.emit({"output_type": "stream", "name": name, "text": text})

    def display(self, data, metadata=None):
        self.emit({"output_type": "display_data", "data": data, "metadata": metadata or {}})

    def page(self, text):
        if self._result is not None:
            self._result.payload.append(
                {"source": "page", "data": {"text/plain": text}, "start": 0})
        else:
            self.print(text)

    def bundle(self, value):
        from .display import bundle_for

        return bundle_for(value, self)

    def picture_bundles(self, view, **options):
        """The drawing of a program, one bundle per picture (see display.py)."""
        from .display import picture_bundles

        return picture_bundles(view, self, **options)

    def _new_file(self, kind="cell"):
        self._files += 1
        return f"<myia-{kind}-{self._files}>"

    def _execute(self, code, number):
        if code.strip() in ("exit", "quit", "exit()", "quit()"):
            # as IPython: the front end (jupyter console, the REPL) ends the session
            self._result.payload.append({"source": "ask_exit", "keepkernel": False})
            return None, False
        if self.locked and _PYTHON_MAGIC.search(code):
            # `%%python` anywhere (after blank lines or comments, `%python`, any case):
            # one message, before anything of the cell runs
            raise UsageError(_magics.LOCKED_MESSAGE)
        first = _LEADING_BLANK_LINES.sub("", code)
        if first.startswith("%%"):
            head, _, body = first.partition("\n")
            name, _, line = head[2:].partition(" ")
            if name.endswith("?") and not line.strip() and not body.strip():
                text = _magics.magic_help(name.rstrip("?"))
                if text is None:
                    raise UsageError(f"Cell magic `%%{name.rstrip('?')}` not found.")
                self.page(text)
                return None, False
            fn = _magics.CELL_MAGICS.get(name)
            if fn is None:
                raise UsageError(f"Cell magic `%%{name}` not found.")
            return _magic_value(fn(self, line.strip(), body, number))
        return self._run_cell(code, number)

    def _run_cell(self, code, number):
        filename = self._new_file()
        cell = CellSource(filename, code, number)
        self.cells[filename] = cell
        lines = code.split("\n")
        magic_lines = {}
        blanked = []
        for i, line in enumerate(lines, 1):
            if line.startswith("%%") and not line.rstrip().endswith("?"):
                name = line[2:].split(" ")[0]
                raise UsageError(f"`%%{name}` is a cell magic: it must be the first line "
                                 f"of the cell (line {i} here)")
            if line.startswith("%") or (_HELP_LINE.match(line) and "?" in line):
                magic_lines[i] = line
                blanked.append("")
            else:
                blanked.append(line)
        text = "\n".join(blanked)
        linecache.cache[filename] = (len(text), None, [ln + "\n" for ln in blanked], filename)
        try:
            tree = ast.parse(text, filename)
        except SyntaxError as e:
            raise syntax_error(e, filename) from None
        for stmt in tree.body:
            self._check_statement(stmt, filename)
        synthetic, wrapper_lines = self._rewrite(tree, blanked, cell)
        linecache.cache[filename] = (len(synthetic), None,
                                     [ln + "\n" for ln in synthetic.split("\n")], filename)
        # The same statements, as they are in the synthetic source (with line numbers
        # that match it); a wrapper def for each expression and assignment.
        tree2 = ast.parse(synthetic, filename)
        wrappers = {s.lineno: s for s in tree2.body
                    if isinstance(s, ast.FunctionDef) and s.name == WRAPPER}
        items = [(s.lineno, "stmt", (s, wrappers.get(wrapper_lines.get(s), s2)))
                 for s, s2 in zip(tree.body, tree2.body)]
        items += [(ln, "magic", text) for ln, text in magic_lines.items()]
        items.sort(key=lambda it: it[0])
        value, has_value = None, False
        i = 0
        while i < len(items):
            _, kind, payload = items[i]
            if kind == "magic":
                value, has_value = self._run_magic_line(payload)
                i += 1
                continue
            stmt, stmt2 = payload
            if isinstance(stmt, ast.FunctionDef):
                group = []
                while (i < len(items) and items[i][1] == "stmt"
                       and isinstance(items[i][2][0], ast.FunctionDef)):
                    group.append(items[i][2])
                    i += 1
                self._define_functions(group, filename)
                value, has_value = None, False
                continue
            value, has_value = self._run_statement(stmt, stmt2, filename)
            i += 1
        return value, has_value

    def _check_statement(self, stmt, filename):
        """Refuse the top-level statements a cell cannot hold, before anything runs."""
        ok = (ast.FunctionDef, ast.Expr, ast.Assign, ast.AnnAssign, ast.Import,
              ast.ImportFrom, ast.Pass)
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            seal.check_import(stmt, _loc(filename, stmt))
        elif isinstance(stmt, ast.FunctionDef):
            seal.check_binding(stmt.name, _loc(filename, stmt), "define")
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]):
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        seal.check_binding(n.id, _loc(filename, n))
        if isinstance(stmt, ok) and not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            seal.check_reads(stmt, lambda n: _loc(filename, n))
        if isinstance(stmt, ast.Assign):
            bad = [t for t in stmt.targets if _target_names(t) is None]
            if bad:
                raise MyiaSyntaxError(
                    "a cell can only assign names (`x = ...`, `a, b = ...`)",
                    _loc(filename, bad[0]),
                    hint="values are immutable in Myia; use a %%python cell to build "
                         "data with Python")
        elif isinstance(stmt, ast.AnnAssign) and (stmt.value is None
                                                   or _target_names(stmt.target) is None):
            raise MyiaSyntaxError("a cell can only assign names", _loc(filename, stmt))
        elif isinstance(stmt, ast.AugAssign):
            op = type(stmt.op).__name__
            raise MyiaSyntaxError(
                f"augmented assignment ({op}) is not supported at the top level of a cell",
                _loc(filename, stmt), hint="write `x = x + ...`")
        elif not isinstance(stmt, ok):
            what = type(stmt).__name__.lower()
            what = {"functiondef": "def", "asyncfunctiondef": "async def",
                    "classdef": "class", "expr": "expression"}.get(what, what)
            raise MyiaSyntaxError(
                f"a top-level `{what}` statement cannot be in a Myia cell",
                _loc(filename, stmt),
                hint="cells hold defs, expressions and assignments: put the code in a "
                     "function and call it, or use a %%python cell for ordinary Python")

    def _rewrite(self, tree, lines, cell):
        """(synthetic source, {statement: line of its wrapper}): each expression or
        assignment statement rewritten as `def __cell_expr__(): return <value>` in place
        (same line); appended at the end when it shares its line with another statement.
        `cell.linemap` records how columns moved."""
        lines = list(lines)
        wrapper_lines = {}
        starts = {}
        for s in tree.body:
            starts.setdefault(s.lineno, []).append(s)
        appended = []
        for s in tree.body:
            value = _statement_value(s)
            if value is None:
                continue
            line = lines[s.lineno - 1]
            alone = len(starts[s.lineno]) == 1 and s.col_offset == 0
            if isinstance(s, ast.Expr):
                cut = 0
            else:
                last = s.targets[-1] if isinstance(s, ast.Assign) else s.target
                cut = None
                if last.end_lineno == s.lineno and value.lineno == s.lineno:
                    eq = line.find("=", _char_col(line, last.end_col_offset))
                    if eq >= 0:
                        cut = eq + 1
                        while cut < len(line) and line[cut] == " ":
                            cut += 1
                if cut is None:
                    alone = False
            if alone:
                lines[s.lineno - 1] = PREFIX + line[cut:]
                cell.linemap[s.lineno] = (s.lineno, len(PREFIX) - cut)
                wrapper_lines[s] = s.lineno
            else:
                segment = ast.get_source_segment("\n".join(lines), value)
                seg_lines = segment.split("\n")
                start = len(lines) + len(appended) + 1
                appended.append(PREFIX + "(" + seg_lines[0])
                col = _char_col(lines[value.lineno - 1], value.col_offset)
                cell.linemap[start] = (value.lineno, len(PREFIX) + 1 - col)
                for k, extra in enumerate(seg_lines[1:], 1):
                    appended.append(extra)
                    cell.linemap[start + k] = (value.lineno + k, 0)
                appended[-1] += ")"
                wrapper_lines[s] = start
        return "\n".join(lines + appended), wrapper_lines

    def _run_statement(self, stmt, stmt2, filename):
        ns = self.namespace
        if isinstance(stmt, ast.Pass):
            return None, False
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            before = dict(ns)
            exec(compile(ast.Module([stmt2], []), filename, "exec"), ns)
            changed = [k for k in ns if k not in before or ns[k] is not before[k]]
            self._record(Definition("python", changed, ()))
            self._rebuild(changed)
            return None, False
        code = compile(ast.Module([stmt2], []), filename, "exec")  # the wrapper def
        wrapper = self._make_wrapper(code)
        value_node = _statement_value(stmt)
        value = self._evaluate(wrapper, value_node)
        if isinstance(stmt, ast.Expr):
            return value, True
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for t in targets:
            _bind(t, value, ns)
        names = [n for t in targets for n in _target_names(t)]
        self._record(Definition("assign", names, _names_read(value_node), code,
                                targets, filename, value_node))
        self._rebuild(names)
        return None, False

    def _make_wrapper(self, code):
        """The Python function that the code of a `def __cell_expr__()` makes."""
        ns = self.namespace
        saved = ns.pop(WRAPPER, None)
        try:
            exec(code, ns)
            return ns.pop(WRAPPER)
        finally:
            if saved is not None:
                ns[WRAPPER] = saved

    def _evaluate(self, wrapper, value_node):
        """Run a wrapper: compiled; an expression that calls a transform that runs in
        Python (jvp, vjp, hessian, jet) by `seal.SafeEval`, which calls what the subset
        knows and runs no Python code of the cell."""
        if self._uses_host_transforms(value_node):
            filename = wrapper.__code__.co_filename
            node = _wrapper_value(filename, wrapper.__code__.co_firstlineno)
            return seal.SafeEval(self, lambda n: _loc(filename, n)).eval(node)
        compiled = myia.compile(wrapper, backend=self.backend)  # a new wrapper: not kept
        if self.backend == "llvm" and returns_function(compiled.pipeline.specialize(wrapper, ())):
            # native code hands only data to Python: a function value (its type says so)
            # is the Python object for it, as below
            return wrapper()
        value = compiled()
        if not is_data(value):
            value = wrapper()  # a function value: the Python object for it
        return value

    def _uses_host_transforms(self, node):
        for name in _names_read(node):
            v = self.namespace.get(name)
            # (is_myia_class first: the name of a user's class could run its metaclass)
            if any(v is t for t in HOST_TRANSFORMS) or is_myia_class(type(v)) and \
                    type(v).__name__ in ("HessianFunction", "_VJPFunction",
                                         "_NativeVJPFunction"):
                return True
        return False

    def compiled(self, fn):
        """`myia.compile(fn)` on the session's backend, kept until a definition changes."""
        try:
            c = self._compiled.get(fn)
        except TypeError:
            c = None
        if c is None:
            c = myia.compile(fn, backend=self.backend)
            try:
                self._compiled[fn] = c
            except TypeError:
                pass
        return c

    def _define_functions(self, group, filename):
        """Bind consecutive defs (so that they can call each other), then parse each.
        The valid ones join the session; one that does not compile keeps its previous
        definition (if any), and the cell says which were kept."""
        ns = self.namespace
        missing = object()
        saved = {}
        made = []

        def restore(names):
            for name in names:
                old = saved[name]
                if old is missing:
                    ns.pop(name, None)
                else:
                    ns[name] = old

        try:
            for stmt, stmt2 in group:
                if stmt2.decorator_list:
                    raise MyiaSyntaxError("decorators are not supported in Myia cells",
                                          _loc(filename, stmt.decorator_list[0]),
                                          hint="call the decorator on the function explicitly")
                # Python evaluates neither annotations (dropped: the compiler ignores
                # them) nor default values (read by seal.SafeEval, then set)
                seal.strip_annotations(stmt2)
                defaults = self._defaults(stmt2, filename)
                code = compile(ast.Module([stmt2], []), filename, "exec")
                saved.setdefault(stmt.name, ns.get(stmt.name, missing))
                exec(code, ns)
                _set_defaults(ns[stmt.name], defaults)
                made.append((stmt, code, defaults))
        except BaseException:
            restore(saved)
            raise
        errors = {}
        for stmt, _, _ in made:
            try:
                myia.ir(ns[stmt.name], stage="parsed")
            except KeyboardInterrupt:
                restore(saved)
                raise
            except Exception as e:  # noqa: BLE001  reported below, the others are kept
                errors.setdefault(stmt.name, e)
        restore(errors)
        names = []
        for stmt, code, defaults in made:
            if stmt.name in errors:
                continue
            d = Definition("def", [stmt.name], _names_read(stmt), code, filename=filename)
            d.defaults = defaults
            self._record(d)
            names.append(stmt.name)
        self._rebuild(names)
        if errors:
            if len(made) > 1:
                bad = ", ".join(errors)
                kept = ", ".join(names)
                old = [n for n in errors if saved[n] is not missing]
                self.print((f"kept {kept}; " if kept else "none of the cell's definitions "
                            "were kept; ") + f"not defined: {bad} (the error below)"
                           + (f"; {', '.join(old)} keep{'s' if len(old) == 1 else ''} "
                              f"the previous definition" if old else ""), name="stderr")
            raise next(iter(errors.values()))

    def _defaults(self, fdef, filename):
        """(positional defaults, keyword-only defaults) of a def, read by SafeEval; the
        AST's default expressions become None (Python does not evaluate them)."""
        reader = seal.SafeEval(self, lambda n: _loc(filename, n))
        a = fdef.args
        positional = tuple(reader.eval(d) for d in a.defaults)
        keyword = {arg.arg: reader.eval(d) for arg, d in zip(a.kwonlyargs, a.kw_defaults)
                   if d is not None}
        a.defaults = [ast.copy_location(ast.Constant(None), d) for d in a.defaults]
        a.kw_defaults = [None if d is None else ast.copy_location(ast.Constant(None), d)
                         for d in a.kw_defaults]
        return positional, keyword

    def _record(self, definition):
        for name in definition.names:
            self.definitions.pop(name, None)
            self.definitions[name] = definition
        self._compiled.clear()

    # ---- redefinition ----------------------------------------------------------------

    def dependents(self, names):
        """The definitions to make again when `names` change, in definition order."""
        changed = set(names)
        todo = []
        ordered = []
        for d in self.definitions.values():
            if d not in ordered:
                ordered.append(d)
        grew = True
        while grew:
            grew = False
            for d in ordered:
                if d in todo or d.kind == "python" or set(d.names) & set(names):
                    continue
                if d.deps & changed:
                    todo.append(d)
                    changed.update(d.names)
                    grew = True
        return [d for d in ordered if d in todo]

    def _rebuild(self, names):
        todo = _topological(self.dependents(names))
        if not todo:
            return
        ns = self.namespace
        self._compiled.clear()
        problems = []
        # Bind every def first (they may call each other), then parse or evaluate each
        # one after what it reads: parsing resolves global names to their values.
        for d in todo:
            if d.kind == "def":
                exec(d.code, ns)
                _set_defaults(ns[d.names[0]], d.defaults)
        for d in todo:
            try:
                if d.kind == "def":
                    myia.ir(ns[d.names[0]], stage="parsed")
                    continue
                wrapper = self._make_wrapper(d.code)
                value = self._evaluate(wrapper, d.value_node)
                for t in d.targets:
                    _bind(t, value, ns)
            except Exception as e:  # noqa: BLE001  reported below; the cell goes on
                problems.append((d, e))
                if d.kind == "assign":
                    # set aside, not forgotten: recomputed when what it reads changes
                    for n in d.names:
                        ns.pop(n, None)
                    d.stale = e
                continue
            d.stale = None
        rebuilt = ", ".join(n for d in todo for n in d.names)
        what = ", ".join(names)
        self.print(f"(rebuilt after redefining {what}: {rebuilt})")
        for d, e in problems:
            dropped = d.kind == "assign"
            msg = f"warning: {', '.join(d.names)} " + (
                "could not be recomputed: set aside until what it reads compiles again"
                if dropped else "no longer compiles") + ":\n"
            self.print(msg + "\n".join(self.error_output(e)["traceback"]), name="stderr")

    # ---- magics and help -------------------------------------------------------------

    def _run_magic_line(self, line):
        if not line.startswith("%"):
            m = _HELP_LINE.match(line)
            self.page(self.inspect_name(m.group(2), detail=1)
                      or f"Object `{m.group(2)}` not found.")
            return None, False
        name, _, args = line[1:].partition(" ")
        if name.endswith("?") and not args.strip():
            # `%grad?` (and `%%python?`, `%grad??`): the magic's usage, as IPython pages it
            text = _magics.magic_help(name.rstrip("?").lstrip("%"))
            if text is None:
                raise UsageError(f"Line magic function `%{name.rstrip('?')}` not found.")
            self.page(text)
            return None, False
        fn = _magics.LINE_MAGICS.get(name)
        if fn is None:
            raise UsageError(f"Line magic function `%{name}` not found.")
        return _magic_value(fn(self, args.strip()))

    def eval_python(self, text):
        """A magic's argument: a name, a literal, or an expression of those that
        `seal.SafeEval` reads (arithmetic, indexing, calls of what the subset knows);
        no Python code runs."""
        filename = self._new_file("magic")
        cell = CellSource(filename, text, None)
        self.cells[filename] = cell
        linecache.cache[filename] = (len(text), None, [text + "\n"], filename)
        try:
            node = ast.parse(text.strip(), filename, mode="eval").body
        except SyntaxError as e:
            raise UsageError(f"cannot read the argument `{text}`: {e.msg}") from None
        return seal.SafeEval(self, lambda n: _loc(filename, n)).eval(node)

    def restore_own_names(self, before):
        """Put back the session's own names (`np`, `grad`, `__builtins__`...) that a
        %%python cell rebound or deleted, and say so: later cells rely on them."""
        fresh = new_namespace()
        undone = []
        for name in (*seal.SESSION_NAMES, "__builtins__", "__name__"):
            if self.namespace.get(name, _MISSING) is not before.get(name, fresh[name]):
                self.namespace[name] = before.get(name, fresh[name])
                undone.append(name)
        if undone:
            names = ", ".join(f"`{n}`" for n in undone)
            self.print(f"warning: {names}: the session's own name"
                       f"{'s' if len(undone) > 1 else ''}; the cell's change was undone",
                       name="stderr")

    def defined_function(self, fn):
        """Whether `fn` is a function a cell of this session defined (a def, or a
        lambda or closure that subset code made)."""
        code = getattr(fn, "__code__", None)
        return isinstance(fn, types.FunctionType) and code is not None and bool(
            _CELL_FILE.match(code.co_filename or ""))

    def wrap_expression(self, text):
        """(wrapper function, value node) for a subset expression given to a magic."""
        filename = self._new_file("magic")
        cell = CellSource(filename, text, None)
        self.cells[filename] = cell
        try:
            node = ast.parse(text.strip(), filename, mode="eval").body
        except SyntaxError as e:
            raise syntax_error(e, filename) from None
        src = PREFIX + text.strip()
        cell.lines = [text.strip()]
        cell.linemap[1] = (1, len(PREFIX))
        linecache.cache[filename] = (len(src), None, [src + "\n"], filename)
        code = compile(src, filename, "exec")
        return self._make_wrapper(code), node

    def evaluate_expression(self, text):
        """Compile and run a subset expression (for %time, %type...)."""
        wrapper, node = self.wrap_expression(text)
        return self._evaluate(wrapper, node)

    def user_names(self):
        """The names the user's cells defined, in order."""
        return [n for n in self.definitions if n in self.namespace]

    # ---- completion, inspection, is_complete -------------------------------------------

    def complete(self, code, cursor_pos=None):
        """(matches, cursor_start, cursor_end) at `cursor_pos` (default: the end)."""
        if cursor_pos is None:
            cursor_pos = len(code)
        before = code[:cursor_pos]
        line = before.rsplit("\n", 1)[-1]
        m = re.match(r"^(%{1,2})(\w*)$", line)
        if m:
            table = _magics.CELL_MAGICS if m.group(1) == "%%" else _magics.LINE_MAGICS
            names = sorted(m.group(1) + n for n in table if n.startswith(m.group(2)))
            if m.group(1) == "%":
                names += sorted("%%" + n for n in _magics.CELL_MAGICS
                                if n.startswith(m.group(2)))
            return names, cursor_pos - len(line), cursor_pos
        m = re.match(r"^%(\w+)\s+(?:(\S+)\s+)?(\S*)$", line)
        if m and m.group(1) in _magics.ARG_COMPLETIONS:
            options = _magics.ARG_COMPLETIONS[m.group(1)](self, m.group(2))
            if options is not None:
                word = m.group(3)
                return ([o for o in options if o.startswith(word)],
                        cursor_pos - len(word), cursor_pos)
        m = re.search(r"[A-Za-z_][\w.]*$|(?<![\w.])$", before)
        token = m.group(0) if m else ""
        start = cursor_pos - len(token)
        if "." in token:
            base, _, prefix = token.rpartition(".")
            obj = self._lookup(base)
            if obj is None:
                return [], start, cursor_pos
            names = [n for n in dir(obj) if n.startswith(prefix)
                     and (not n.startswith("_") or prefix.startswith("_"))]
            return sorted(f"{base}.{n}" for n in names), start, cursor_pos
        candidates = set(k for k in self.namespace if not k.startswith("__"))
        candidates |= set(keyword.kwlist) | _SUBSET_BUILTINS
        return sorted(c for c in candidates if c.startswith(token)), start, cursor_pos

    def _lookup(self, dotted):
        # only what a cell may read (see seal.help_value): help is no way around the seal;
        # nor the attributes of a user's object (`dir` would run its code)
        value = seal.help_value(self.namespace, dotted)
        return None if foreign_part(value) is not None else value

    def inspect(self, code, cursor_pos=None, detail=0):
        """Help text on the name at `cursor_pos`, or None."""
        if cursor_pos is None:
            cursor_pos = len(code)
        left = re.search(r"[A-Za-z_][\w.]*$", code[:cursor_pos])
        right = re.match(r"\w*", code[cursor_pos:])
        name = (left.group(0) if left else "") + (right.group(0) if right else "")
        if not name:
            # inside a call's parentheses: the callee
            m = re.search(r"([A-Za-z_][\w.]*)\s*\([^()]*$", code[:cursor_pos])
            name = m.group(1) if m else ""
        name = name.strip(".")
        if not name:
            return None
        return self.inspect_name(name, detail)

    def inspect_name(self, name, detail=0):
        from .display import describe_type

        if name.startswith("%"):
            fn = _magics.LINE_MAGICS.get(name.lstrip("%")) or _magics.CELL_MAGICS.get(
                name.lstrip("%"))
            return _magics.magic_help(name.lstrip("%")) if fn else None
        obj = seal.help_value(self.namespace, name, _MISSING)
        if obj is _MISSING:
            return None
        part = foreign_part(obj)
        if part is not None:  # said without reading it: its methods are the user's code
            return (f"Type:      {class_name(type(obj))} (a Python object)\n"
                    f"Kind:      a value of a %%python cell; compiled code does not take "
                    f"it (it holds an object of class {class_name(type(part))})")
        lines = []
        d = self.definitions.get(name)
        if isinstance(obj, types.FunctionType) and (d is None or d.kind == "def") and \
                _CELL_FILE.match(obj.__code__.co_filename or ""):
            lines.append(f"Signature: {name}{_signature(obj)}")
            cell = self.cells.get(obj.__code__.co_filename)
            where = f" (defined in cell [{cell.label}])" if cell and cell.label else ""
            lines.append(f"Kind:      a function of the session, in the Myia subset{where}")
            lines.append("Type:      " + self.function_type(obj))
            try:
                view = myia.ir(obj, stage="parsed")
                lines.append(f"Program:   {view.op_count()} primitive operations (parsed)")
            except MyiaError as e:
                lines.append(f"Program:   does not compile: {e.message}")
            if obj.__doc__:
                lines.append("Docstring:\n" + inspect.cleandoc(obj.__doc__))
            if detail:
                try:
                    lines.append("Source:\n" + inspect.getsource(obj).rstrip())
                except (OSError, TypeError):
                    pass
            return "\n".join(lines)
        sig = _signature(obj) if callable(obj) else None
        if sig is not None:
            lines.append(f"Signature: {name}{sig}")
        lines.append(f"Type:      {describe_type(obj)}")
        if is_data(obj):
            text = format_value(obj)
            lines.append("Value:     " + (text if len(text) < 400 else text[:400] + "..."))
        doc = inspect.getdoc(obj) if not is_data(obj) else None
        if doc:
            doc = doc if detail else "\n".join(doc.split("\n\n")[0:1])
            lines.append("Docstring:\n" + doc)
        return "\n".join(lines)

    def function_type(self, fn):
        """The type of a session function, as far as the pipeline can tell."""
        n = len(inspect.signature(fn).parameters)
        return (f"a function of {n} argument{'s' if n != 1 else ''}, specialized per "
                f"argument types: `%ir {fn.__name__} typed <example args>` shows one")

    def is_complete(self, code):
        """("complete" | "incomplete" | "invalid", indent), like the Python REPL: a
        block continues until a blank line."""
        return is_complete(code)


_SUBSET_BUILTINS = {"range", "len", "abs", "float", "int", "bool", "min", "max", "sum",
                    "tuple", "print", "round", "pow"}


def is_complete(code):
    if not code.strip():
        return "complete", ""
    lines = code.split("\n")
    trailing_blank = len(lines) > 1 and not lines[-1].strip()
    first = code.lstrip("\n")
    if first.startswith("%%"):
        if first.partition("\n")[0][2:].split(" ")[0] == "python" and trailing_blank:
            body = first.partition("\n")[2]
            return is_complete(body) if body.strip() else ("complete", "")
        return ("complete", "") if trailing_blank else ("incomplete", "")
    py = "\n".join("pass" if ln.startswith("%") or (_HELP_LINE.match(ln) and "?" in ln)
                   else ln for ln in lines)
    try:
        compiled = codeop.compile_command(py, "<input>", "exec")
    except (SyntaxError, ValueError, OverflowError):
        return "invalid", None
    last = next((ln for ln in reversed(lines) if ln.strip()), "")
    indent = last[:len(last) - len(last.lstrip())]
    if compiled is None:
        if trailing_blank and not _open_brackets(py):
            return "complete", ""
        if last.rstrip().endswith(":"):
            indent += "    "
        return "incomplete", indent
    if indent and not trailing_blank:
        return "incomplete", indent
    return "complete", ""


def _open_brackets(code):
    depth = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.OP and tok.string in "([{":
                depth += 1
            elif tok.type == tokenize.OP and tok.string in ")]}":
                depth -= 1
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return True
    return depth > 0


def _topological(defs):
    """`defs` ordered so that each comes after the ones it reads (ties and cycles, e.g.
    mutually recursive functions, in definition order)."""
    by_name = {n: d for d in defs for n in d.names}
    done, out = set(), []
    pending = list(defs)
    while pending:
        for d in pending:
            needs = {by_name[n] for n in d.deps if n in by_name} - {d}
            if needs <= done:
                break
        else:
            d = pending[0]  # a cycle: take the earliest
        pending.remove(d)
        done.add(d)
        out.append(d)
    return out


def _magic_value(value):
    return (value, True) if value is not None else (None, False)


def _statement_value(s):
    if isinstance(s, ast.Expr):
        return s.value
    if isinstance(s, (ast.Assign, ast.AnnAssign)):
        return s.value
    return None


def _char_col(line, byte_col):
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


def _set_defaults(fn, defaults):
    positional, keyword = defaults
    fn.__defaults__ = positional or None
    fn.__kwdefaults__ = keyword or None


def _wrapper_value(filename, line):
    """The expression node of the wrapper def (`def __cell_expr__(): return <value>`)
    at `line` of a cell's synthetic source, in that source's coordinates."""
    tree = ast.parse("".join(linecache.getlines(filename)), filename)
    for s in ast.walk(tree):
        if isinstance(s, ast.FunctionDef) and s.name == WRAPPER and s.lineno == line:
            return s.body[0].value
    raise RuntimeError(f"no expression at line {line} of {filename}")  # pragma: no cover


def _loc(filename, node):
    from myia.errors import Location

    lines = linecache.getlines(filename)
    text = lines[node.lineno - 1] if 0 < node.lineno <= len(lines) else ""
    end = node.end_col_offset if getattr(node, "end_lineno", None) == node.lineno else None
    return Location(filename, node.lineno, _char_col(text, node.col_offset),
                    end_col=_char_col(text, end) if end is not None else None)


def syntax_error(e, filename):
    from myia.errors import Location

    line = e.lineno or 1
    col = max((e.offset or 1) - 1, 0)
    end = None
    if getattr(e, "end_lineno", None) == line and e.end_offset and e.end_offset > e.offset:
        end = e.end_offset - 1
    msg = e.msg if e.msg.startswith("invalid syntax") else f"invalid syntax: {e.msg}"
    err = MyiaSyntaxError(msg, Location(filename, line, col, end_col=end))
    err.python = True
    return err


def _ends_with_semicolon(code):
    try:
        toks = [t for t in tokenize.generate_tokens(io.StringIO(code).readline)
                if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT,
                                  tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT)]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return False
    return bool(toks) and toks[-1].string == ";"


def _signature(obj):
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return None


# ---- errors as Jupyter error outputs --------------------------------------------------

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
    mine = [f for f in frames if _CELL_FILE.match(f.filename or "")]
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


Session.error_output = error_output
