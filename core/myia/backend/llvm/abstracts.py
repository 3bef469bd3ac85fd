"""From inference's abstract values (`myia.abstract`) to the backend's LTypes.

    AScalar(dtype[, value])   -> Scalar(dtype)        (a known value is a Constant by now)
    AArray(dtype, shape)      -> Array(dtype, shape)
    ATuple(elements)          -> Tuple(...)
    AConstant(value)          -> Static(value)
    AEnv(entries)             -> Env(entries in a fixed order: by the id of the key's node)
    ENV_ANY                   -> AnyEnv (see `dynenv`)
    AFunction(options)        -> Func(Callee per option):
        GraphFunction(g, ctx)  the specialized graph for that option, found in the
                               program (every closure value is made from a constant
                               of its graph, whose abstract names the option)
        PrimitiveFunction(p)   the primitive
        PartialFunction(f, a)  f with leading arguments of abstracts a bound (what
                               closure conversion's make_closure builds)
        MacroFunction          refused: `grad` inside subset code must be expanded by
                               specialization

An LType given directly as a node's `abstract` is taken as it is (tests use this).
"""

from ... import abstract as A
from ...abstract import NOT_CONSTANT, AFunction, constant_value
from ...ir import Apply, Constant, Graph
from ...prim import ops as P
from .ltypes import ANY_ENV, Array, Callee, Env, Func, LType, Scalar, Static, Tuple
from .registry import backend_error

_DTYPES = ("bool", "int64", "float64", "float32")


class OptionTable:
    """Maps function options (GraphFunction...) to the specialized graphs of one
    program.

    Inlining copies the graphs nested in the inlined one with their abstracts, so
    several graphs may stand for one option; the optimizer then rewrites each copy in
    its own context, so their captured values and their code differ.  Where an option
    is made as a value by several graphs, each copy is a function of its own (`copies`):
    a value of that option says, by its tag, which copy made it."""

    def __init__(self, mng):
        self.mng = mng
        self._any = {}  # option -> a graph of a constant naming it
        self._values = {}  # option -> the graphs of constants that make it as a value
        # closures whose values are records (myia.infer.specialize, "J of a closure
        # made elsewhere"): option -> the make_closure nodes that make one, one per
        # record graph
        self._records = {}
        for g in mng.graphs:
            for node in mng.nodes(g):
                for i, inp in enumerate(getattr(node, "inputs", ())):
                    if isinstance(inp, Constant) and isinstance(inp.value, Graph):
                        self._note(inp, AFunction, as_value=not (i == 0 and isinstance(node, Apply)))
                if node.is_apply(P.make_closure) and isinstance(node.abstract, AFunction) \
                        and len(node.abstract.options) == 1:
                    makers = self._records.setdefault(next(iter(node.abstract.options)), [])
                    if all(m.inputs[1].value is not node.inputs[1].value for m in makers):
                        makers.append(node)
            out = g.output
            if isinstance(out, Constant) and isinstance(out.value, Graph):
                self._note(out, AFunction, as_value=True)

    def _note(self, const, AFunction, as_value):
        a = const.abstract
        if a is None and "option" in const.value.flags:
            # an untyped copy of a function inference never saw called (its value is
            # still used: `grad(fs[i])` calls only the J of each function of fs)
            a = AFunction([const.value.flags["option"]])
        if isinstance(a, AFunction) and len(a.options) == 1:
            (opt,) = a.options
            g = const.value
            if g in self.mng:
                self._any.setdefault(opt, g)
                graphs = self._values.setdefault(opt, []) if as_value else None
                if graphs is not None and g not in graphs:
                    graphs.append(g)

    def graph_of(self, opt):
        graphs = self._values.get(opt)
        return graphs[0] if graphs else self._any.get(opt)

    def copies(self, opt):
        """The graphs that make values of `opt`, when there are several (else [])."""
        graphs = self._values.get(opt, ())
        return list(graphs) if len(graphs) > 1 else []

    def records(self, opt):
        """The make_closure nodes that make records of `opt`, one per record graph."""
        return self._records.get(opt, [])


class Converter:
    """Converts abstracts for one program (`lowering` gives types of free variables)."""

    def __init__(self, lowering):
        self.L = lowering
        self.options = OptionTable(lowering.mng)
        self.cache = {}

    def __call__(self, a, node=None):
        if isinstance(a, LType):
            return a
        r = self.cache.get(a)
        if r is None:
            r = self.convert(a, node)
            self.cache[a] = r
        return r

    def convert(self, a, node):
        t = type(a)
        if t is A.AScalar:
            if a.dtype not in _DTYPES:
                raise backend_error(f"scalars of dtype {a.dtype}", node)
            return Scalar(a.dtype)
        if t is A.AArray:
            if a.dtype not in _DTYPES:
                raise backend_error(f"arrays of dtype {a.dtype}", node)
            return Array(a.dtype, a.shape)
        if t is A.ATuple:
            return Tuple([self(e, node) for e in a.elements])
        if t is A.AConstant:
            return Static(a.value)
        if t is A.AEnv:
            if a.entries is None:
                return ANY_ENV
            items = sorted(a.entries.items(), key=lambda kv: kv[0].node.id)
            return Env([(k, self(v, node)) for k, v in items])
        if t is A.AFunction:
            options = a.sorted_options()
            if len(options) > 1:
                # an option whose graph the program no longer contains (the optimizer
                # removed every constant that made it) is a function no value can be
                options = [o for o in options if not self.unreachable(o)] or options
            return Func([c for o in options for c in self.callees(o, node)])
        if t is A.ASlice:
            raise backend_error(
                "a slice whose bounds are computed at run time and whose length is not "
                "known when compiling", node,
                hint="write x[i:i + n] with n known at compile time (a constant, or a shape): "
                     "its length is then static")
        raise backend_error(f"a value of abstract type {a}", node)

    def unreachable(self, o):

        return isinstance(o, A.GraphFunction) and self.options.graph_of(o) is None \
            and not self.options.records(o)

    def callees(self, o, node):
        """The Callees that values of option `o` may be: one, or one per copy."""

        if isinstance(o, A.GraphFunction):
            records = self.options.records(o)
            if len(records) > 1:
                return [self.record(rec, o, copy=True) for rec in records]
            copies = self.options.copies(o)
            if copies and not records:
                return [Callee(graph=g, fvs=self.L.fvs[g], key=o, copy=True) for g in copies]
        return [self.option(o, node)]

    def record(self, rec, o, copy=False):
        """The Callee of a closure's record made by make_closure node `rec`: the free
        variables of its graph, then the bound values."""
        g = rec.inputs[1].value
        bound = [self.L.ltype(b) for b in rec.inputs[2:]]
        return Callee(graph=g, fvs=self.L.fvs[g], bound=bound, key=o, copy=copy)

    def is_copy(self, o, g):
        """Is graph `g` one of several that make values of option `o`?"""
        return g in self.options.copies(o)

    def option(self, o, node):
        if isinstance(o, A.PrimitiveFunction):
            return Callee(prim=o.prim, key=o)
        if isinstance(o, A.GraphFunction):
            records = self.options.records(o)
            if records:  # {the wrapper's free variables, the bound values}
                return self.record(records[0], o)
            g = self.options.graph_of(o)
            if g is None:
                raise backend_error(
                    f"a call of the function {o.name}, which the specialized program "
                    f"does not contain", node)
            return Callee(graph=g, fvs=self.L.fvs[g], key=o)
        if isinstance(o, A.PartialFunction):
            inner = self.option(o.fn, node)
            if inner.graph is None:
                raise backend_error(f"a partial application of {o.fn.name}", node)
            if self.options.copies(o.fn) or len(self.options.records(o.fn)) > 1:
                raise backend_error(f"a partial application of {o.fn.name}, a function "
                                    f"the optimizer copied", node)
            bound = [self(x, node) for x in o.args]
            return Callee(graph=inner.graph, fvs=inner.fvs, bound=list(inner.bound) + bound,
                          key=o)
        raise backend_error(f"the function value {o!r} (grad inside the program must be "
                            f"resolved when the program is specialized)", node)


def known_value(node):
    """(True, value) when the node's abstract is a known constant."""
    a = node.abstract
    if a is None or isinstance(a, LType):
        return False, None
    v = constant_value(a)
    if v is NOT_CONSTANT:
        return False, None
    return True, v
