"""Loops: `while`, `for`, `break` and `continue`, and the loops of comprehensions.

A loop is a tail-recursive graph (the shapes are listed in `parse`): `loop` makes its
header, body and after blocks; a `for` steps a hidden counter (`range`) or a hidden
iteration state per sequence, made and stepped by the library (myia.lib.builtins:
iter_start, iter_more, iter_next); a comprehension is a nested function whose body is
its loops around `acc = tuple_cons(element, acc)`.  `LoopParsing` is a mixin of
`parse.Parser`, whose state (`block`, `loops`, `loop_assignments`) it reads and writes.
"""

import ast
from collections import Counter

import numpy as np

from .. import lib
from ..errors import MyiaSyntaxError, MyiaTypeError, MyiaValueError
from ..ir import Constant, Graph
from ..prim import ops as P
from ..prim.containers import DictValue
from ..prim.logic import range_message

#: comprehensions: the kind of container each makes, and where it starts (a list or a
#: tuple is made reversed, as a tuple: see `LoopParsing.comprehension_body`)
_COMPREHENSIONS = {ast.ListComp: "list", ast.GeneratorExp: "tuple", ast.DictComp: "dict"}
_EMPTY = {"list": (), "tuple": (), "dict": DictValue((), ())}


class ComprehensionElement(ast.stmt):
    """The innermost statement of a comprehension `node` (made by the parser): add
    its element to the result."""

    _fields = ("node",)


# ---- scans of a function body --------------------------------------------------------


def _assignments(body):
    """Counter of the names assigned in a function body (Python's rule: a name assigned
    anywhere in a function is local to it), nested functions excluded.  (The Parser
    reads a function's local names with it, a loop the names its body assigns.)"""
    counts = Counter()

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            counts[node.name] += 1
            return
        if isinstance(node, (ast.Lambda, ast.SetComp, *_COMPREHENSIONS)):
            return  # their variables are their own
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            counts[node.id] += 1
        for child in ast.iter_child_nodes(node):
            visit(child)

    for stmt in body:
        visit(stmt)
    return counts


def _has_break(body):
    """Whether a loop body has a `break` of its own (not of a nested loop)."""
    for stmt in body:
        if isinstance(stmt, ast.Break):
            return True
        if isinstance(stmt, ast.If) and (_has_break(stmt.body) or _has_break(stmt.orelse)):
            return True
    return False


class LoopParsing:
    """The Parser's methods for loops and comprehensions (a mixin of `parse.Parser`)."""

    def visit_While(self, node):
        if node.orelse:
            raise self.refuse(node.orelse[0], "`while ... else` is",
                              "use a variable to remember how the loop ended")
        test = node.test
        if isinstance(test, ast.Constant) and test.value:
            # `while True:` has no test: the header is the body, left by `break` only.
            self.loop(node, "while", None, lambda body: None)
        else:
            self.loop(node, "while",
                      lambda: self.truth(self.expr(test), self.loc(test)),
                      lambda body: None)

    def visit_For(self, node):
        if node.orelse:
            raise self.refuse(node.orelse[0], "`for ... else` is",
                              "use a variable to remember how the loop ended")
        it = node.iter
        if getattr(node, "in_comprehension", False):
            self.for_sequence(node, unrolled=True)
        elif (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
                and self._static_object(it.func) is range):
            self.for_range(node)
        else:
            self.for_sequence(node)

    def for_range(self, node):
        """`for i in range(start, stop, step)`: a counting loop on a hidden counter."""
        call = node.iter
        loc = self.loc(call)
        if call.keywords or not 1 <= len(call.args) <= 3:
            raise MyiaTypeError("range() takes 1 to 3 positional arguments", loc)
        args = [self._range_index(call, k) for k in range(len(call.args))]
        if len(args) == 1:
            args = [Constant(0, loc)] + args
        if len(args) == 2:
            args.append(Constant(1, loc))
        start, stop, step = args
        if isinstance(step, Constant):
            if step.value == 0:
                raise MyiaValueError("range() step must not be zero", self.loc(call.args[2]))
        else:
            self.add_effect(self.apply(
                P.assert_, self.apply(P.ne, step, 0, loc=loc),
                "range() step must not be zero", loc=loc), loc)
        counter = self.ssa.hidden_name(_target_name(node.target) + ".range")
        self.block.write(counter, start)

        def cond():
            i = self.block.read(counter, loc)
            if isinstance(step, Constant):
                return self.apply(P.lt if step.value > 0 else P.gt, i, stop, loc=loc)
            return self.apply(P.switch, self.apply(P.gt, step, 0, loc=loc),
                              self.apply(P.lt, i, stop, loc=loc),
                              self.apply(P.gt, i, stop, loc=loc), loc=loc)

        def enter(body):
            i = body.read(counter, loc)
            body.write(counter, self.apply(P.add, i, step, loc=loc))
            self.assign(node.target, i)

        self.loop(node, "for", cond, enter)

    def _range_index(self, call, k):
        """The node of argument k of `range(...)`: an int, as Python requires (a float
        constant is refused here, anything else not an int constant when compiling,
        see myia.prim.logic.range_bound)."""
        arg = call.args[k]
        what = ("stop",) if len(call.args) == 1 else ("start", "stop", "step")
        node = self.expr(arg)
        if isinstance(node, Constant) and isinstance(node.value, (int, np.integer)):
            return node
        fixed = ast.Call(ast.Name("int", ast.Load()), [arg], [])
        if isinstance(arg, ast.Constant) and isinstance(arg.value, float) \
                and arg.value.is_integer():
            fixed = ast.Constant(int(arg.value))
        hint = "use an int: " + ast.unparse(
            ast.Call(call.func, call.args[:k] + [fixed] + call.args[k + 1:], []))
        if isinstance(node, Constant) and isinstance(node.value, (float, np.floating)):
            kind = f"a {np.dtype(type(node.value))}"
            raise MyiaTypeError(range_message(what[k], kind), self.loc(arg),
                                hint=hint)
        loc = self.loc(arg)
        return self.apply(P.range_bound, node, Constant(what[k], loc), Constant(hint, loc),
                          loc=loc)

    def for_sequence(self, node, unrolled=False):
        """`for x in seq`: a hidden state per sequence (several for `zip`), made and
        stepped by the library (myia.lib.builtins: iter_start, iter_more, iter_next);
        `enumerate` counts with the state's index.  `unrolled` (the loops of a
        comprehension, which build a list of static length): an array or a range is
        walked as the tuple of its elements, so that the loop runs once per element
        at compile time even where an `if` leaves the list as it is."""
        loc = self.loc(node.iter)
        sources = []
        shape = self._iteration(node.iter, loc, sources)
        states = []
        for src in sources:
            name = self.ssa.hidden_name(_target_name(node.target) + ".iter")
            seq = self.expr(src)
            if unrolled:
                seq = self._lib_call(lib.builtins.py_tuple, [seq], loc)
            self.block.write(name, self._lib_call(lib.builtins.iter_start, [seq], loc))
            states.append(name)

        def cond():
            test = None
            for name in states:
                more = self._lib_call(lib.builtins.iter_more, [self.block.read(name, loc)],
                                      loc)
                test = more if test is None else self.apply(P.switch, test, more, False,
                                                            loc=loc)
            return test

        def enter(body):
            values, indexes = [], []
            for name in states:
                state = body.read(name, loc)
                indexes.append(self.apply(P.tuple_getitem, state, 1, loc=loc))
                step = self._lib_call(lib.builtins.iter_next, [state], loc)
                body.write(name, self.apply(P.tuple_getitem, step, 1, loc=loc))
                values.append(self.apply(P.tuple_getitem, step, 0, loc=loc))
            self.assign(node.target, self._loop_value(shape, values, indexes, loc))

        self.loop(node, kind="for", cond=cond, enter=enter)

    def _iteration(self, it, loc, sources):
        """The shape of what a `for` over `it` gives, appending the sequences it walks
        to `sources`: `zip(a, b)` walks a and b side by side, `enumerate(s, start)`
        walks s and counts (nested: `enumerate(zip(X, Y))`), anything else is one
        sequence.  Shapes: ("seq", k), ("zip", [shapes]), ("enumerate", start node,
        the first sequence it walks, shape)."""
        if isinstance(it, ast.Call) and isinstance(it.func, (ast.Name, ast.Attribute)) \
                and not any(isinstance(a, ast.Starred) for a in it.args) \
                and all(k.arg is not None for k in it.keywords):
            fn = self._static_object(it.func)
            if fn is zip and it.args and not it.keywords:
                return ("zip", [self._iteration(a, loc, sources) for a in it.args])
            n = len(it.args) + len(it.keywords)
            if fn is enumerate and it.args and n <= 2 \
                    and all(k.arg == "start" for k in it.keywords):
                if len(it.args) == 2:
                    start = self.expr(it.args[1])
                elif it.keywords:
                    start = self.expr(it.keywords[0].value)
                else:
                    start = Constant(0, loc)
                first = len(sources)
                return ("enumerate", start, first, self._iteration(it.args[0], loc, sources))
        sources.append(it)
        return ("seq", len(sources) - 1)

    def _loop_value(self, shape, values, indexes, loc):
        """The value of a loop's target, from its shape (see `_iteration`), the next
        element of each sequence, and the index of each (the elements seen before)."""
        if shape[0] == "seq":
            return values[shape[1]]
        if shape[0] == "zip":
            return self.apply(P.make_tuple, *[self._loop_value(s, values, indexes, loc)
                                              for s in shape[1]], loc=loc)
        _, start, first, inner = shape
        count = self.apply(P.add, start, indexes[first], loc=loc)
        return self.apply(P.make_tuple, count, self._loop_value(inner, values, indexes, loc),
                          loc=loc)

    # ---- comprehensions -----------------------------------------------------------

    def visit_ListComp(self, node):
        return self.comprehension(node)

    visit_GeneratorExp = visit_DictComp = visit_ListComp

    def comprehension(self, node):
        """A comprehension is a nested function (its variables are its own), called
        where it is written."""
        loc = self.loc(node)
        name = {"list": "<listcomp>", "tuple": "<genexpr>", "dict": "<dictcomp>"}
        graph = Graph(name[_COMPREHENSIONS[type(node)]], loc)
        self.nested_function(node, graph)
        return self.apply(Constant(graph, loc), loc=loc)

    def comprehension_body(self):
        """The body of a comprehension's function: acc = () (or {}), its loops and
        `if`s around `acc = tuple_cons(element, acc)` (or dict_set(acc, k, v)), then
        acc reversed (as a list for a list comprehension).  (Consing, not `+`: the
        derivative rules of tuple_cons and of slices hold on any program, typed or not.)"""
        node = self.node
        loc = self.loc(node)
        self.comprehension_acc = self.ssa.hidden_name("comprehension.acc")
        self.block.write(self.comprehension_acc,
                         Constant(_EMPTY[_COMPREHENSIONS[type(node)]], loc))
        stmt = ast.copy_location(ComprehensionElement(node), node)
        for gen in reversed(node.generators):
            if gen.is_async:
                raise self.refuse(gen.iter, "`async for` in a comprehension is",
                                  "use a plain `for`")
            if gen.ifs:
                test = gen.ifs[0]
                if len(gen.ifs) > 1:
                    test = ast.BoolOp(op=ast.And(), values=gen.ifs)
                    _locate(test, gen.ifs[0], gen.ifs[-1])
                stmt = _locate(ast.If(test=test, body=[stmt], orelse=[]), test, test)
            stmt = _locate(ast.For(target=gen.target, iter=gen.iter, body=[stmt], orelse=[]),
                           gen.target, gen.iter)
            stmt.in_comprehension = True
        self.stmt(stmt)
        acc = self.block.read(self.comprehension_acc, loc)
        kind = _COMPREHENSIONS[type(node)]
        if kind == "dict":
            return acc
        acc = self.apply(P.getitem, acc, Constant(slice(None, None, -1), loc), loc=loc)
        if kind == "list":
            acc = self.apply(P.tuple_as, acc, "list", loc=loc)
        return acc

    def visit_ComprehensionElement(self, stmt):
        node = stmt.node
        loc = self.loc(node)
        acc = self.block.read(self.comprehension_acc, loc)
        if isinstance(node, ast.DictComp):
            new = self._lib_call(lib.builtins.dict_set,
                                 [acc, self.expr(node.key), self.expr(node.value)], loc)
        else:
            new = self.apply(P.tuple_cons, self.expr(node.elt), acc, loc=loc)
        self.block.write(self.comprehension_acc, new)

    # ---- the blocks of a loop -----------------------------------------------------

    def loop(self, node, kind, cond, enter):
        """The blocks of a loop.  The current block jumps to `kind_header`, a join block
        whose output is `switch(cond(), kind_body, after_kind)()` (cond=None: the header
        is the body).  `enter(body)` starts the body (the loop variable); the body's end
        and `continue` jump back to the header, `break` to the after block."""
        loc = self.loc(node)
        header = self.new_join(f"{kind}_header", loc)
        self.block.jump(header, loc)
        self.block = header
        if cond is None:
            body = header
            exit_block = None
            after = self.new_join(f"after_{kind}", loc)
        else:
            test = cond()
            body = self.new_branch(f"{kind}_body", loc)
            if _has_break(node.body):
                # `break` jumps to the after block, which must then be a join block:
                # the exit branch of the switch jumps to it too.
                exit_block = self.new_branch(f"{kind}_exit", loc)
                after = self.new_join(f"after_{kind}", loc)
            else:
                exit_block = after = self.new_branch(f"after_{kind}", loc)
            header.graph.output = self.switch(test, body.graph, exit_block.graph, loc)
        self.block = body
        assigned = set(_assignments(node.body))
        if isinstance(node, ast.For):
            assigned |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        self.loop_assignments.append(assigned)
        enter(body)
        self.loops.append((header, after))
        self.stmts(node.body)
        self.loops.pop()
        self.loop_assignments.pop()
        if self.block is not None:
            self.block.jump(header, loc)
        header.seal()
        if exit_block is not None and exit_block is not after:
            exit_block.jump(after, loc)
        if after.join:
            after.seal()
            self.block = after if after.jumps else None
        else:
            self.block = after

    def visit_Break(self, node):
        if not self.loops:
            raise MyiaSyntaxError("`break` outside a loop", self.loc(node))
        self.block.jump(self.loops[-1][1], self.loc(node))
        self.block = None

    def visit_Continue(self, node):
        if not self.loops:
            raise MyiaSyntaxError("`continue` outside a loop", self.loc(node))
        self.block.jump(self.loops[-1][0], self.loc(node))
        self.block = None


def _target_name(target):
    return target.id if isinstance(target, ast.Name) else "for"


def _locate(node, first, last):
    """`node` (made by the parser) with the location from `first` to `last`."""
    node.lineno, node.col_offset = first.lineno, first.col_offset
    node.end_lineno, node.end_col_offset = last.end_lineno, last.end_col_offset
    return node
