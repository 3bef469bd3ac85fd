"""Calls: `f(a, k=v)`, methods (`x.sum(axis=0)`, `d.items()`), and the calls of the
library that the parser writes itself.

The IR has only positional calls: `call` matches the keywords to the parameters of a
function known at compile time and fills in its defaults, now; a `*rest` parameter
gets the tuple of the extra arguments.  Two calls are answered here: `isinstance(x, T)`
(a question about types, at compile time) and `dict(k=v)`.  `CallParsing` is a mixin
of `parse.Parser`.
"""

import ast
import types

from .. import lib
from ..errors import MyiaSyntaxError, MyiaTypeError
from ..ir import Constant, Graph
from ..prim import Primitive
from ..prim import ops as P
from .resolve import _check_dunder


class CallParsing:
    """The Parser's methods for calls (a mixin of `parse.Parser`)."""

    # ---- calls ---------------------------------------------------------------------

    def visit_Call(self, node):
        loc = self.loc(node)
        starred = _starred(node)
        if starred and node.keywords:
            raise self.refuse(node.keywords[0], "keyword arguments beside starred ones "
                              "(`f(*args, k=v)`) are", "pass the keyword's value by "
                              "position, or the starred arguments one by one")
        for k in node.keywords:
            if k.arg is None:
                raise self.refuse(k, "`**kwargs` arguments are",
                                  "pass the keyword arguments one by one")
        func = node.func
        text = ast.unparse(func)
        if node.keywords and isinstance(func, ast.Name) and self._static_object(func) is dict:
            return self._dict_call(node, loc)
        if isinstance(func, ast.Name) and self._static_object(func) is isinstance \
                and len(node.args) == 2 and not node.keywords:
            return self._isinstance(node, loc)
        keywords = [(k.arg, self.argument(k.value), self.loc(k)) for k in node.keywords]
        if isinstance(func, ast.Attribute):
            _check_dunder(func, self.source)
            if not isinstance(self._static_object(func.value), types.ModuleType):
                return self._method_call(node, func, keywords, loc, text)
        fn = self.used(func, as_callee=True)
        if starred:
            return self._unpacked_call(fn, [], node, loc)
        args = [self.argument(a) for a in node.args]
        return self.call(fn, args, keywords, loc, text)

    def _packed(self, node):
        """The tuple of the positional arguments of call `node`, some starred
        (`f(a, *rest)`: the tuple display `(a, *rest)`)."""
        return self.visit_Tuple(ast.copy_location(ast.Tuple(elts=node.args, ctx=ast.Load()),
                                                  node))

    def _unpacked_call(self, fn, first, node, loc):
        """`fn(*first, <the arguments of call node>)`, some of them starred: a call
        made by myia.lib.unpacking once their number is known (`first`: nodes made
        already, a method's receiver)."""
        packed = self._packed(node)
        for x in reversed(first):
            packed = self.apply(P.tuple_cons, x, packed, loc=loc)
        graph = fn.value if isinstance(fn, Constant) else None
        if isinstance(graph, Graph) and graph.flags.get("varargs"):
            # `def g(a, *rest)`: rest gets what follows the named parameters
            named = Constant(len(graph.param_names) - 1, loc)
            return self._lib_call(lib.unpacking.call_into_rest, [fn, packed, named], loc)
        return self._lib_call(lib.unpacking.call_unpacked, [fn, packed], loc)

    def argument(self, node):
        """The node of `node`, an argument of a call (a closure named there is used by
        the call, not handed out: see `hands_out`)."""
        self._argument = node
        try:
            return self.used(node)
        finally:
            self._argument = None

    def _isinstance(self, node, loc):
        """`isinstance(x, list)`: a question about x's type, answered at compile time;
        the types (names of Python and NumPy classes, or a tuple of them) are static."""
        spec = node.args[1]
        types_ = spec.elts if isinstance(spec, ast.Tuple) else [spec]
        names = []
        for t in types_:
            obj = self._static_object(t)
            name = lib.builtins.ISINSTANCE_TYPES.get(obj) if isinstance(obj, type) else None
            if name is None:
                raise MyiaSyntaxError(
                    f"isinstance with `{ast.unparse(t)}` is not supported", self.loc(t),
                    hint="the types the subset knows are list, tuple, dict, np.ndarray, "
                         "float, int and bool")
            names.append(name)
        return self._lib_call(lib.builtins.py_isinstance,
                              [self.expr(node.args[0]), Constant(tuple(names), loc)], loc)

    def _dict_call(self, node, loc):
        """`dict(a=1, b=x)`, `dict(d, c=y)`: the keywords are the keys."""
        if len(node.args) > 1:
            raise MyiaTypeError(f"dict expected at most 1 argument, got {len(node.args)}", loc)
        keys = [Constant(k.arg, self.loc(k)) for k in node.keywords]
        out = self._dict_of(keys, [self.expr(k.value) for k in node.keywords], loc)
        if node.args:
            base = self._lib_call(lib.builtins.py_dict, [self.expr(node.args[0])], loc)
            out = self._lib_call(lib.builtins.dict_merge, [base, out], loc)
        return out

    def _method_call(self, node, func, keywords, loc, text):
        """`x.sum(axis=0)`: lib.ARRAY_METHODS["sum"](x, axis=0); `d.items()`:
        lib.CONTAINER_METHODS["items"](d)."""
        attr = func.attr
        if attr not in lib.ARRAY_METHODS:
            if attr in lib.CONTAINER_METHODS:
                fn = self._operation(lib.CONTAINER_METHODS[attr], loc, text)
                if _starred(node):
                    return self._unpacked_call(fn, [self.expr(func.value)], node, loc)
                args = [self.expr(func.value)] + [self.expr(a) for a in node.args]
                return self.call(fn, args, keywords, loc, text)
            if attr in lib.MUTATING_METHODS:
                x = ast.unparse(func.value)
                args = ", ".join(ast.unparse(a) for a in node.args) or "v"
                raise MyiaSyntaxError(
                    f"arrays, lists and dicts are values in Myia: `{ast.unparse(node)}` "
                    f"cannot change `{x}` in place", loc,
                    hint=lib.MUTATING_METHODS[attr].format(x=x, args=args))
            raise _unknown_attribute(func, self.loc(func))
        base = self.expr(func.value)
        fn = self._operation(lib.ARRAY_METHODS[attr], loc, text)
        if _starred(node):
            if attr in ("reshape", "transpose"):  # x.reshape(*shape): the shape
                return self.call(fn, [base, self._packed(node)], [], loc, text)
            return self._unpacked_call(fn, [base], node, loc)
        args = [self.expr(a) for a in node.args]
        if attr in ("reshape", "transpose") and len(args) > 1:
            args = [self.apply(P.make_tuple, *args, loc=loc)]  # x.reshape(2, 3)
        return self.call(fn, [base] + args, keywords, loc, text)

    def call(self, fn, args, keywords, loc, text):
        """Apply `fn` to `args` and `keywords` ([(name, node, loc)]).

        When `fn` is a known graph (or a value with a signature, `param_names` and
        `defaults`, such as the macro behind `grad`), keywords are matched to its
        parameters and missing arguments are filled from its defaults, now: the IR only
        has positional calls.
        """
        graph = fn.value if isinstance(fn, Constant) else None
        if not (isinstance(graph, Graph) or hasattr(graph, "param_names")):
            graph = None
        if graph is None:
            if keywords:
                if isinstance(fn, Constant) and isinstance(fn.value, Primitive):
                    raise MyiaSyntaxError(
                        f"`{text}` takes no keyword arguments", keywords[0][2],
                        hint="pass the arguments by position")
                raise MyiaSyntaxError(
                    f"keyword arguments need a function known at compile time, and "
                    f"`{text}` is a computed value", keywords[0][2],
                    hint="pass the arguments by position, or call the function by the "
                    "name of its `def`")
            return self.apply(fn, *args, loc=loc)
        return self.apply(fn, *self._bind(graph, args, keywords, loc, text), loc=loc)

    def _bind(self, graph, args, keywords, loc, text):
        names = graph.param_names
        flags = getattr(graph, "flags", {})
        if flags.get("varargs"):
            names = names[:-1]
            rest = self.apply(P.make_tuple, *args[len(names):], loc=loc)
            return self._bind_named(graph, names, args[:len(names)], keywords, loc, text) \
                + [rest]
        return self._bind_named(graph, names, args, keywords, loc, text)

    def _bind_named(self, graph, names, args, keywords, loc, text):
        if len(args) > len(names):
            raise MyiaTypeError(
                f"`{text}()` takes {len(names)} argument{'s' if len(names) != 1 else ''} "
                f"but {len(args)} were given", loc)
        bound = dict(zip(names, args))
        for name, value, kw_loc in keywords:
            if name not in names:
                raise MyiaTypeError(
                    f"`{text}()` got an unexpected keyword argument `{name}`", kw_loc,
                    hint=f"its parameters are: {', '.join(names)}")
            if name in bound:
                raise MyiaTypeError(
                    f"`{text}()` got several values for argument `{name}`", kw_loc)
            bound[name] = value
        out = []
        for name in names:
            if name in bound:
                out.append(bound[name])
            elif name in graph.defaults:
                out.append(Constant(graph.defaults[name], loc))
            else:
                raise MyiaTypeError(f"`{text}()` is missing the argument `{name}`", loc)
        return out

    # ---- the library's functions as callees ---------------------------------------

    def _lib_call(self, fn, args, loc):
        """A call of `fn`, a function of myia.lib, on the nodes `args`."""
        return self.call(self._operation(fn, loc, fn.__name__), args, [], loc, fn.__name__)

    def _operation(self, value, loc, text):
        return self.resolver.to_node(value, self.block.graph, loc, text, as_callee=True)


def _starred(call):
    """Whether some positional argument of `call` is starred (`f(*args)`)."""
    return any(isinstance(a, ast.Starred) for a in call.args)


def _unknown_attribute(node, loc):
    known = sorted(set(lib.ARRAY_ATTRIBUTES) | set(lib.ARRAY_METHODS))
    return MyiaSyntaxError(
        f"attribute `.{node.attr}` is not supported (in `{ast.unparse(node)}`)", loc,
        hint="the supported attributes of arrays are " + ", ".join(f".{k}" for k in known)
        + "; the methods of dicts are " + ", ".join(f".{k}()" for k in lib.CONTAINER_METHODS),
    )
