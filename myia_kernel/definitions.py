"""The session's definitions: what the defs and assignments of cells made, the names
each one reads, and how they are made again when a name they read is redefined.

    Definition                the record of one def, assignment or Python binding
    names_read(node)          the global names a def or an expression reads
    DefinitionsMixin          Session's part: define a cell's defs, record a definition,
                              rebuild its dependents

Redefining a name rebuilds what depends on it: the definitions of the session that use
the name, directly or through others, are made again, in order (those that read each
other after what they read; mutually recursive defs bound together first).  An
assignment that can no longer be computed is set aside (its names leave the namespace)
until what it reads compiles again.
"""

import ast
import symtable

import myia
from myia.errors import MyiaError, MyiaSyntaxError

from . import seal
from .error_output import node_location


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
        self.defaults = ((), {})  # a def's default values (see DefinitionsMixin._defaults)
        self.stale = None  # the error that keeps it from being recomputed, if any


def names_read(node):
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


def target_names(target):
    """The names an assignment's target binds, or None if it is not made of names."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in target_names(elt)]
    return None


def bind(target, value, ns):
    """Bind `value` to an assignment's target (a name or nested tuples of names)."""
    if isinstance(target, ast.Name):
        ns[target.id] = value
        return
    values = tuple(value)
    if len(values) != len(target.elts):
        raise MyiaError(
            f"cannot unpack {len(values)} values into {len(target.elts)} names")
    for t, v in zip(target.elts, values):
        bind(t, v, ns)


def _set_defaults(fn, defaults):
    positional, keyword = defaults
    fn.__defaults__ = positional or None
    fn.__kwdefaults__ = keyword or None


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


class DefinitionsMixin:
    """The part of `Session` that makes and remakes definitions.  It uses the
    session's `namespace`, `definitions`, `_compiled`, `print`, `error_output`,
    `_make_wrapper` and `_evaluate`."""

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
                                          node_location(filename, stmt.decorator_list[0]),
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
            d = Definition("def", [stmt.name], names_read(stmt), code, filename=filename)
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
        reader = seal.SafeEval(self, lambda n: node_location(filename, n))
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
                    bind(t, value, ns)
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
