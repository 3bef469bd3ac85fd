"""What a front end asks of a session about code before it runs: completion, help on a
name (`name?`, Shift-Tab), and whether the code typed so far is a whole cell.

    IntrospectionMixin        Session's part: complete, inspect, inspect_name, is_complete
    is_complete(code)         ("complete" | "incomplete" | "invalid", indent)

Help reads only what a cell may read (`seal.help_value`): it is no way around the seal,
and it never reads the attributes of an object of the user's own class.
"""

import codeop
import inspect
import io
import keyword
import re
import tokenize
import types

import myia
from myia.errors import MyiaError
from myia.introspect import class_name, foreign_part

from . import magics as _magics
from . import seal
from .display import describe_type, format_value, is_data
from .error_output import CELL_FILE

#: a line of a cell that asks for help on a name (`name?`, `?name`, `name??`)
HELP_LINE = re.compile(r"^\s*(\?{1,2})?([A-Za-z_][\w.]*)(\?{1,2})?\s*$")
_SUBSET_BUILTINS = {"range", "len", "abs", "float", "int", "bool", "min", "max", "sum",
                    "tuple", "print", "round", "pow"}
_MISSING = object()


class IntrospectionMixin:
    """The part of `Session` that answers completion, inspection and is_complete
    requests.  It uses the session's `namespace`, `definitions` and `cells`."""

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
        m = re.match(r"^%(\w+)\s.*?(\S*)\s+(\S*)$", line)
        options = m and _magics.OPTION_COMPLETIONS.get(m.group(1), {})
        if options and (m.group(3).startswith("-") or m.group(2) in options):
            # an option of a magic, or its value: `%grad f 2.0 --v`, `--view v`
            word = m.group(3)
            found = options.get(m.group(2)) or (tuple(options) if word.startswith("-") else ())
            return [o for o in found if o.startswith(word)], cursor_pos - len(word), cursor_pos
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
                CELL_FILE.match(obj.__code__.co_filename or ""):
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


def is_complete(code):
    """See `IntrospectionMixin.is_complete`."""
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
    py = "\n".join("pass" if ln.startswith("%") or (HELP_LINE.match(ln) and "?" in ln)
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


def _signature(obj):
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return None
