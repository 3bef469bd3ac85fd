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
the session that use the name, directly or through others, are made again, in order
(see `definitions`).  Completion, help on a name and is_complete are in `introspection`.

Outputs are dicts in the shape of Jupyter's messages (and of nbformat outputs):
`{"output_type": "stream", "name": "stdout", "text": ...}`, `display_data` and
`execute_result` with `data` (a MIME bundle), and `error` with `ename`, `evalue`,
`traceback` (lines: the message, the cell line and a caret, the hint; never the
compiler's frames; see `error_output`).  `on_output` receives each one as it is made.
"""

import ast
import builtins
import io
import linecache
import math
import os
import re
import tokenize
import types

import numpy as np

import myia
from myia.errors import MyiaSyntaxError
from myia.introspect import default_backend, is_myia_class, progress, returns_function

from . import limits
from . import magics as _magics
from . import seal
from .definitions import Definition, DefinitionsMixin, bind, names_read, target_names
from .display import bundle_for, is_data, picture_bundles
from .error_output import (CELL_FILE, UsageError, char_col, error_output, node_location,
                           syntax_error)
from .introspection import HELP_LINE, IntrospectionMixin

PREFIX = "def __cell_expr__(): return "
#: a compile that runs longer than this many seconds gets a status line (the stage),
#: brought up to date every STATUS_EVERY seconds
STATUS_AFTER = 1.0
STATUS_EVERY = 0.5
WRAPPER = "__cell_expr__"
#: what a cell's expression calls in Python, through seal.SafeEval (custom_vjp,
#: custom_jvp and checkpoint make their objects from the cell's functions)
HOST_TRANSFORMS = (myia.jvp, myia.vjp, myia.jacfwd, myia.jacrev, myia.hessian, myia.jet,
                   myia.custom_vjp, myia.custom_jvp, myia.checkpoint)
#: a line that names the python magic (a locked session refuses the whole cell)
_PYTHON_MAGIC = re.compile(r"^\s*%{1,2}\s*python(?![\w?])", re.MULTILINE | re.IGNORECASE)
_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")


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


_MISSING = object()
#: the environment variable that locks every session of a process (see README)
LOCKED_VARIABLE = "MYIA_LOCKED"


def locked_from_environment():
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
        "jacfwd": myia.jacfwd,
        "jacrev": myia.jacrev,
        "jacobian": myia.jacobian,
        "hessian": myia.hessian,
        "jet": myia.jet,
        "stop_gradient": myia.stop_gradient,
        "custom_vjp": myia.custom_vjp,
        "custom_jvp": myia.custom_jvp,
        "checkpoint": myia.checkpoint,
        "vmap": myia.vmap,
    }


class Session(DefinitionsMixin, IntrospectionMixin):
    """The state of one kernel or REPL: namespace, definitions, backend, history.

    Its definitions and their rebuilding are in `definitions.DefinitionsMixin`;
    completion, inspection and is_complete in `introspection.IntrospectionMixin`."""

    #: the Jupyter `error` output of an exception (see error_output.py)
    error_output = error_output

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
        return bundle_for(value, self)

    def picture_bundles(self, view, **options):
        """The drawing of a program, one bundle per picture (see display.py)."""
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
            if line.startswith("%") or (HELP_LINE.match(line) and "?" in line):
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
            seal.check_import(stmt, node_location(filename, stmt))
        elif isinstance(stmt, ast.FunctionDef):
            seal.check_binding(stmt.name, node_location(filename, stmt), "define")
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]):
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        seal.check_binding(n.id, node_location(filename, n))
        if isinstance(stmt, ok) and not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            seal.check_reads(stmt, lambda n: node_location(filename, n))
        if isinstance(stmt, ast.Assign):
            bad = [t for t in stmt.targets if target_names(t) is None]
            if bad:
                raise MyiaSyntaxError(
                    "a cell can only assign names (`x = ...`, `a, b = ...`)",
                    node_location(filename, bad[0]),
                    hint="assign elements inside a def, to an array the function made or "
                         "copied (`x = np.copy(y)`, then `x[0] = v`); or use a %%python "
                         "cell to build data with Python")
        elif isinstance(stmt, ast.AnnAssign) and (stmt.value is None
                                                   or target_names(stmt.target) is None):
            raise MyiaSyntaxError("a cell can only assign names",
                                  node_location(filename, stmt))
        elif isinstance(stmt, ast.AugAssign):
            op = type(stmt.op).__name__
            raise MyiaSyntaxError(
                f"augmented assignment ({op}) is not supported at the top level of a cell",
                node_location(filename, stmt), hint="write `x = x + ...`")
        elif not isinstance(stmt, ok):
            what = type(stmt).__name__.lower()
            what = {"functiondef": "def", "asyncfunctiondef": "async def",
                    "classdef": "class", "expr": "expression"}.get(what, what)
            raise MyiaSyntaxError(
                f"a top-level `{what}` statement cannot be in a Myia cell",
                node_location(filename, stmt),
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
                    eq = line.find("=", char_col(line, last.end_col_offset))
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
                col = char_col(lines[value.lineno - 1], value.col_offset)
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
            bind(t, value, ns)
        names = [n for t in targets for n in target_names(t)]
        self._record(Definition("assign", names, names_read(value_node), code,
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
            return seal.SafeEval(self, lambda n: node_location(filename, n)).eval(node)
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
        for name in names_read(node):
            v = self.namespace.get(name)
            # (is_myia_class first: the name of a user's class could run its metaclass)
            if any(v is t for t in HOST_TRANSFORMS) or is_myia_class(type(v)) and \
                    type(v).__name__ in ("JacobianFunction", "_VJPFunction",
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

    # ---- magics and help -------------------------------------------------------------

    def _run_magic_line(self, line):
        if not line.startswith("%"):
            m = HELP_LINE.match(line)
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
        return seal.SafeEval(self, lambda n: node_location(filename, n)).eval(node)

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
            CELL_FILE.match(code.co_filename or ""))

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


def _magic_value(value):
    return (value, True) if value is not None else (None, False)


def _statement_value(s):
    if isinstance(s, ast.Expr):
        return s.value
    if isinstance(s, (ast.Assign, ast.AnnAssign)):
        return s.value
    return None


def _wrapper_value(filename, line):
    """The expression node of the wrapper def (`def __cell_expr__(): return <value>`)
    at `line` of a cell's synthetic source, in that source's coordinates."""
    tree = ast.parse("".join(linecache.getlines(filename)), filename)
    for s in ast.walk(tree):
        if isinstance(s, ast.FunctionDef) and s.name == WRAPPER and s.lineno == line:
            return s.body[0].value
    raise RuntimeError(f"no expression at line {line} of {filename}")  # pragma: no cover


def _ends_with_semicolon(code):
    try:
        toks = [t for t in tokenize.generate_tokens(io.StringIO(code).readline)
                if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT,
                                  tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT)]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return False
    return bool(toks) and toks[-1].string == ";"
