"""Operators, literals and subscripts: the expressions that compute a value from their
operands.

`a + b` is a primitive (`@` is np.matmul, library code); `a and b`, `a or b` and
`x if c else y` switch between branch graphs, so that only the operand needed is
evaluated; `a < b < c` is `a < b and b < c`; `x in s` is the library's py_contains and
`x is None` a question about a type, answered at compile time.  Tuples, lists
(`[a, *rest]`) and dicts (`{**d, k: v}`) are tuples with a static kind; `x[i]`,
`x[a:b, 0]`, `x[[0, 2]]` and `np.r_[...]` are indexing.  `ExpressionParsing` is a mixin of `parse.Parser`.
"""

import ast
import types

import numpy as np

from .. import lib
from ..errors import MyiaSyntaxError
from ..ir import Constant, Graph
from ..prim import ops as P
from ..prim.containers import KEY_TYPES
from .slices import slice_node

BINARY_OPS = {
    ast.Add: P.add, ast.Sub: P.sub, ast.Mult: P.mul, ast.Div: P.truediv,
    ast.FloorDiv: P.floordiv, ast.Mod: P.mod, ast.Pow: P.pow,
    ast.BitAnd: P.bitwise_and, ast.BitOr: P.bitwise_or, ast.BitXor: P.bitwise_xor,
}
COMPARE_OPS = {
    ast.Eq: P.eq, ast.NotEq: P.ne, ast.Lt: P.lt, ast.LtE: P.le, ast.Gt: P.gt, ast.GtE: P.ge,
}
OPERATOR_SYMBOLS = {
    ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>",
    ast.Invert: "~", ast.In: "in", ast.NotIn: "not in",
}


class ExpressionParsing:
    """The Parser's methods for operators, literals and subscripts (a mixin of
    `parse.Parser`)."""

    # ---- operators ----------------------------------------------------------------

    def visit_Tuple(self, node):
        """`(a, b)`; `(a, *rest)` is `(a,) + tuple(rest)`."""
        return self._display(node, lib.builtins.py_tuple, lib.builtins.tuple_concat,
                             lambda nodes, loc: self.apply(P.make_tuple, *nodes, loc=loc))

    def _binary_op(self, op, node):
        if isinstance(op, ast.MatMult):  # np.matmul: library code (batched, 1-d promoted)
            return self._operation(lib.np_linalg.np_matmul, self.loc(node), "@")
        try:
            return BINARY_OPS[type(op)]
        except KeyError:
            raise self.refuse(node, f"the operator `{OPERATOR_SYMBOLS[type(op)]}` is",
                              "use NumPy functions or arithmetic instead") from None

    def visit_BinOp(self, node):
        op = self._binary_op(node.op, node)
        return self.apply(op, self.expr(node.left), self.expr(node.right), loc=self.loc(node))

    def visit_UnaryOp(self, node):
        loc = self.loc(node)
        op = node.op
        if isinstance(op, ast.USub):
            operand = node.operand
            if (isinstance(operand, ast.Constant) and isinstance(operand.value, (int, float))
                    and not isinstance(operand.value, bool)):
                return Constant(-operand.value, loc)  # -1 is a constant, not neg(1)
            return self.apply(P.neg, self.expr(operand), loc=loc)
        if isinstance(op, ast.UAdd):  # (+True is 1; NumPy refuses +np.True_)
            return self._lib_call(lib.builtins.py_pos, [self.expr(node.operand)], loc)
        if isinstance(op, ast.Not):
            return self.apply(P.not_, self.expr(node.operand), loc=loc)
        return self.apply(P.invert, self.expr(node.operand), loc=loc)  # `~`

    def visit_BoolOp(self, node):
        return self._bool_op(node.op, node.values, node)

    def _bool_op(self, op, values, node):
        """`a and b`: `switch(truth(a), <b>, <a>)()`: b is evaluated only if needed
        (`or` swaps the branches).  More operands nest to the right."""
        loc = self.loc(node)
        left = self.expr(values[0])
        if len(values) == 1:
            return left
        kind = "and" if isinstance(op, ast.And) else "or"
        cond = self.truth(left, self.loc(values[0]))
        rest = self.branch_expr(f"{kind}_rhs", lambda: self._bool_op(op, values[1:], node), loc)
        keep = self.branch_expr(f"{kind}_lhs", lambda: left, loc)
        if kind == "and":
            return self.switch(cond, rest, keep, loc)
        return self.switch(cond, keep, rest, loc)

    def visit_IfExp(self, node):
        loc = self.loc(node)
        cond = self.truth(self.expr(node.test), self.loc(node.test))
        g_true = self.branch_expr("ifexp_true", lambda: self.expr(node.body), loc)
        g_false = self.branch_expr("ifexp_false", lambda: self.expr(node.orelse), loc)
        return self.switch(cond, g_true, g_false, loc)

    def visit_Compare(self, node):
        return self._compare(self.expr(node.left), node.left, node.ops, node.comparators, node)

    def _compare(self, left, left_ast, ops, comparators, node):
        """`a < b < c` is `a < b and b < c`, with b evaluated once."""
        right_ast = comparators[0]
        right = self.expr(right_ast)
        loc = self.source.loc(_span(left_ast, right_ast))
        result = self._compare_one(ops[0], left, right, loc, node)
        if len(ops) == 1:
            return result
        cond = self.truth(result, loc)
        rest = self.branch_expr(
            "and_rhs", lambda: self._compare(right, right_ast, ops[1:], comparators[1:], node),
            loc)
        keep = self.branch_expr("and_lhs", lambda: result, loc)
        return self.switch(cond, rest, keep, loc)

    def _compare_one(self, op, left, right, loc, node):
        if isinstance(op, (ast.In, ast.NotIn)):
            test = self._lib_call(lib.builtins.py_contains, [right, left], loc)
            return test if isinstance(op, ast.In) else self.apply(P.not_, test, loc=loc)
        if isinstance(op, (ast.Is, ast.IsNot)):
            # Only `x is None`: a question about the type of x, answered at compile time
            def is_none(n):
                return isinstance(n, Constant) and n.value is None

            if is_none(left) or is_none(right):
                test = self.apply(P.is_none, right if is_none(left) else left, loc=loc)
                return test if isinstance(op, ast.Is) else self.apply(P.not_, test, loc=loc)
            raise MyiaSyntaxError(
                "`is` is only supported to compare a value with None",
                loc, hint="use `==` to compare values",
            )
        try:
            prim = COMPARE_OPS[type(op)]
        except KeyError:
            raise MyiaSyntaxError(
                f"the operator `{OPERATOR_SYMBOLS[type(op)]}` is not supported in Myia", loc,
                hint="compare the elements one by one with `==`",
            ) from None
        return self.apply(prim, left, right, loc=loc)

    # ---- lists and dicts ----------------------------------------------------------

    def visit_List(self, node):
        """`[a, b]`; `[a, *rest]` is `[a] + list(rest)`."""
        return self._display(node, lib.builtins.py_list, lib.builtins.list_concat,
                             self._list_of)

    def _display(self, node, convert, concat, make):
        """A tuple or list display: runs of plain elements made by `make`, starred
        ones converted by `convert`, the parts joined by `concat` in order."""
        loc = self.loc(node)
        parts, current = [], []
        for e in node.elts:
            if isinstance(e, ast.Starred):
                if current:
                    parts.append(make(current, loc))
                    current = []
                parts.append(self._lib_call(convert, [self.expr(e.value)], loc))
            else:
                current.append(self.expr(e))
        if current or not parts:
            parts.append(make(current, loc))
        out = parts[0]
        for part in parts[1:]:
            out = self._lib_call(concat, [out, part], loc)
        return out

    def _list_of(self, nodes, loc):
        return self.apply(P.tuple_as, self.apply(P.make_tuple, *nodes, loc=loc), "list",
                          loc=loc)

    def visit_Dict(self, node):
        """`{k: v, ...}` (keys known at compile time); `{**a, k: v}` merges in order."""
        loc = self.loc(node)
        parts, keys, values = [], [], []
        for k, v in zip(node.keys, node.values):
            if k is None:  # **d
                if keys:
                    parts.append(self._dict_of(keys, values, loc))
                    keys, values = [], []
                parts.append(self.expr(v))
            else:
                keys.append(self.expr(k))
                values.append(self.expr(v))
        if keys or not parts:
            parts.append(self._dict_of(keys, values, loc))
        out = parts[0]
        for part in parts[1:]:
            out = self._lib_call(lib.builtins.dict_merge, [out, part], loc)
        return out

    def _dict_of(self, keys, values, loc):
        """A dict of the key and value nodes: its kind is a constant when the keys
        are (a key given twice keeps its first place and its last value, as in
        Python); otherwise inference checks the keys it computes."""
        if all(isinstance(k, Constant) and isinstance(k.value, KEY_TYPES) for k in keys):
            entries = {}
            for k, v in zip(keys, values):
                entries[(type(k.value), k.value)] = (k.value, v)
            kind = Constant(("dict", tuple(k for k, _ in entries.values())), loc)
            values = [v for _, v in entries.values()]
        else:
            kind = self.apply(P.make_tuple, "dict", self.apply(P.make_tuple, *keys, loc=loc),
                              loc=loc)
        return self.apply(P.tuple_as, self.apply(P.make_tuple, *values, loc=loc), kind,
                          loc=loc)

    # ---- subscripts ---------------------------------------------------------------

    def visit_Subscript(self, node):
        loc = self.loc(node)
        base = self._static_object(node.value)
        if base is np.r_ or base is np.c_:
            joiner = lib.np_shape.np_r_ if base is np.r_ else lib.np_shape.np_c_
            return self._index_trick(node, joiner, loc)
        value = self.expr(node.value)
        index = self._index(node.slice)
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if any(isinstance(p, ast.List) for p in parts):
            # `x[[0, 2], 1:]`: NumPy's advanced indexing, with constant lists
            fn = self._operation(lib.np_shape.index_with_lists, loc, "indexing with a list")
            return self.call(fn, [value, index], [], loc, "indexing with a list")
        return self.apply(P.getitem, value, index, loc=loc)

    def _index_trick(self, node, joiner, loc):
        """`np.r_[x, 0:3, y]` and `np.c_[...]`: each slice is the range it spans (its
        bounds must be constants), the parts joined by `joiner`."""
        text = ast.unparse(node.value)
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        items = []
        for p in parts:
            if isinstance(p, ast.Slice):
                bounds = [self.expr(b) if b is not None else Constant(None, loc)
                          for b in (p.lower, p.upper, p.step)]
                arange = self._operation(np.arange, loc, "np.arange")
                if isinstance(bounds[0], Constant) and bounds[0].value is None:
                    bounds[0] = Constant(0, loc)
                items.append(self.call(arange, bounds, [], self.loc(p), "np.arange"))
            elif isinstance(p, ast.Constant) and isinstance(p.value, str):
                raise MyiaSyntaxError(f"`{text}[...]` with a directive string is not supported",
                                      self.loc(p), hint="use np.concatenate or np.stack")
            else:
                items.append(self.expr(p))
        fn = self._operation(joiner, loc, text)
        return self.call(fn, [self.apply(P.make_tuple, *items, loc=loc)], [], loc, text)

    def _index(self, node):
        """An index: a node, a slice (constant, or make_slice), or a make_tuple of those
        for several dimensions (`x[1:3, 0]`)."""
        loc = self.loc(node)
        if isinstance(node, ast.Slice):
            parts = [self.expr(p) if p is not None else Constant(None, loc)
                     for p in (node.lower, node.upper, node.step)]
            if all(isinstance(p, Constant) and not isinstance(p.value, Graph) for p in parts):
                return Constant(slice(*(p.value for p in parts)), loc)
            # x[i:i + n]: make_dslice, whose length is known apart (see slices)
            return slice_node(self.apply, *parts, loc)
        if isinstance(node, ast.Tuple):
            return self.apply(P.make_tuple, *[self._index(e) for e in node.elts], loc=loc)
        return self.expr(node)


def _span(first, last):
    """An ast-like object spanning from `first` to `last` (for locations)."""
    return types.SimpleNamespace(
        lineno=first.lineno, col_offset=first.col_offset,
        end_lineno=last.end_lineno, end_col_offset=last.end_col_offset)
