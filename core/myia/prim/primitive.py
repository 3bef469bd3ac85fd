"""The `Primitive` class: one object per primitive operation of the IR.

A primitive holds its name, its reference implementation (`impl`: on Python scalars,
tuples and NumPy arrays; what the VM runs) and its *traits*, which every layer reads
instead of keeping lists of names:

    nondiff       its derivative is zero (comparison, integer or shape operation): it
                  gets a bprop that returns zeros of its inputs' structure;
    elementwise   n > 0 for an operation applied element by element, with NumPy's
                  broadcasting, to its first n inputs (the others are static: a dtype);
                  the backends fuse such operations into one loop, inference types them
                  by NumPy's promotion unless a rule says otherwise;
    commutative   f(x, y) is f(y, x), bit for bit (not maximum: of -0.0 and 0.0 it
                  returns the first): common subexpressions match both orders, and the
                  pictures give its inputs no ports;
    foldable      pure and cheap: computed when compiling where every input is known
                  (by inference, and by the optimizer's constant folding);
    effect        never folded, never removed (assert);
    libm          the C math library's name of the function (sin, atan2), which each
                  backend calls: a primitive with it needs no lowering of its own.

Its rules are registered next to it and kept in tables keyed by the primitive object:
`@bprop(p)`, `@jvp(p)` (functions written in the Python subset, parsed like user code),
`@jet(p)` and `@batch(p)` (vmap's rule) here in `p.rules`.  A jet rule is a Python
function that builds the
truncated series of the output from those of the inputs (myia.prim.series);
`jet(p)(linear_in(i, ...))` serves a primitive linear in inputs i (the others static:
shapes, axes, keys), `jet(p)(PIECEWISE_LINEAR)` one that is linear near every point
(abs, max), whose k-th coefficient is its jvp, `jet(p)(derivative_is(fn))` one whose
derivative is the subset function fn (gammaln: digamma).  Its inference rule is in
`myia.infer.rules.RULES` (a default for elementwise primitives); each backend's
lowering in that backend's table (`myia.backend.llvm.registry.RULES`, the CuPy
`ImplTable`).
tests/prim/test_completeness.py lists what each primitive has and fails naming what is
missing.  Asking for a rule a primitive lacks is an error that names the primitive and
the rule.
"""

_registry = {}


class Primitive:
    __slots__ = ("name", "impl", "doc", "nondiff", "elementwise", "commutative", "foldable",
                 "effect", "libm", "rules", "__weakref__")

    def __init__(self, name, impl, doc="", nondiff=False, *, elementwise=0,
                 commutative=False, foldable=False, effect=False, libm=None):
        if name in _registry:
            raise ValueError(f"primitive {name!r} is defined twice")
        if effect and foldable:
            raise ValueError(f"primitive {name!r}: an effect cannot be folded")
        self.name = name
        self.impl = impl
        self.doc = doc
        self.nondiff = nondiff
        self.elementwise = elementwise
        self.commutative = commutative
        self.foldable = foldable
        self.effect = effect
        self.libm = libm
        self.rules = {}
        _registry[name] = self

    @property
    def ir_name(self):
        return self.name

    def __call__(self, *args):
        return self.impl(*args)

    def rule(self, kind):
        """The rule `kind` ('bprop', 'jvp', 'jet') or a clear error."""
        try:
            return self.rules[kind]
        except KeyError:
            raise NotImplementedError(
                f"primitive {self.name!r} has no {kind} rule; "
                f"define one next to the primitive in myia/prim/"
            ) from None

    def __repr__(self):
        return f"<Primitive {self.name}>"

    def __reduce__(self):
        return (get_primitive, (self.name,))


def get_primitive(name):
    return _registry[name]


def all_primitives():
    return dict(_registry)


def _register(kind):
    def deco_for(prim):
        def deco(fn):
            if kind in prim.rules:
                raise ValueError(f"primitive {prim.name!r} has two {kind} rules")
            prim.rules[kind] = fn
            return fn

        return deco

    return deco_for


#: `@bprop(p)`: the reverse rule of `p`: `def bprop_p(*inputs, out, dout)` in the
#: subset, returning a tuple with one sensitivity per input.
bprop = _register("bprop")
#: `@jvp(p)`: the forward rule of `p`: `def jvp_p(*inputs, *tangents)` returning the
#: tangent of the output.
jvp = _register("jvp")
#: `@jet(p)`: the Taylor rule of `p`: `def jet_p(out, *series)`, each series a list of
#: K + 1 `series.Term`s (`out`: the term of p at the inputs' values), returning the
#: output's series.
jet = _register("jet")
#: `@batch(p)`: the batching rule of `p` (myia.ad.batching, for vmap): a Python
#: function `rule(b, *inputs)` of BValues (node, batched, one example's abstract) that
#: builds, with the Builder b, the batched output (batch axis first) where at least one
#: input is batched.  An elementwise primitive needs none (its trait gives it).
batch = _register("batch")


def linear_in(*indices):
    """The Taylor rule of a primitive linear in inputs `indices` (all, if none given):
    the k-th coefficient is the primitive of the k-th coefficients of those inputs and
    of the values of the others."""
    return ("linear", indices or None)


#: the Taylor rule of a primitive that is linear near every point (abs, maximum, mod):
#: the k-th coefficient is its jvp at the values, with the k-th coefficients as tangents
PIECEWISE_LINEAR = ("piecewise linear", None)


def derivative_is(fn):
    """The Taylor rule of a primitive of one input whose derivative is `fn`, a function
    written in the subset: y' = fn(x) x'.  The jet transform makes the series of fn(x)
    by the jet of fn itself (one order lower) and integrates its product with x':
    for a function whose derivative has no recurrence of its own (gammaln: digamma)."""
    return ("derivative", fn)


def compile_time(fn):
    """`@compile_time def helper(...)`: a Python function of values known at compile
    time (shapes, axes, counts, dtype names), callable from subset code as a primitive.
    Inference computes it when all its arguments are constants (the result is a
    constant, so no backend ever runs it) and refuses it, with the location of the
    call, when one is known only at run time.  Not differentiable."""
    module = fn.__module__.rsplit(".", 1)[-1]
    doc = (fn.__doc__ or "").strip().splitlines()
    p = Primitive(f"{module}.{fn.__name__.lstrip('_')}", fn, doc[0] if doc else "",
                  nondiff=True)
    p.rules["compile_time"] = True
    return p

