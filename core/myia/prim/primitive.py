"""The `Primitive` class: one object per primitive operation of the IR.

A primitive holds, in one place, every rule about it:

    impl      the reference implementation on Python scalars, tuples and NumPy arrays
              (what the VM runs);
    bprop     its reverse-mode rule, a function written in the Python subset
              (`@bprop(p)` right after the definition; parsed like user code);
    jvp       its forward-mode rule, also in the subset (`@jvp(p)`);
    jet       its Taylor-mode rule (`@jet(p)`): a Python function that builds the
              truncated series of the output from those of the inputs (myia.prim.series);
              `jet(p)(linear_in(i, ...))` for a primitive linear in inputs i (the others
              static: shapes, axes, keys), `jet(p)(PIECEWISE_LINEAR)` for one that is
              linear near every point (abs, max), whose k-th coefficient is its jvp;
    infer     its type/shape rule (`@infer(p)`, added by the inference layer);
    lowerings {backend name: rule}, filled in by each backend.

Asking for a rule a primitive lacks is an error that names the primitive and the rule.
"""

_registry = {}


class Primitive:
    __slots__ = ("name", "impl", "doc", "nondiff", "rules", "__weakref__")

    def __init__(self, name, impl, doc="", nondiff=False):
        if name in _registry:
            raise ValueError(f"primitive {name!r} is defined twice")
        self.name = name
        self.impl = impl
        self.doc = doc
        # A non-differentiable primitive (comparison, integer or shape operation)
        # gets a bprop that returns zeros of its inputs' structure.
        self.nondiff = nondiff
        self.rules = {}
        _registry[name] = self

    @property
    def ir_name(self):
        return self.name

    def __call__(self, *args):
        return self.impl(*args)

    def rule(self, kind):
        """The rule `kind` ('bprop', 'jvp', 'infer', 'llvm', ...) or a clear error."""
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


def linear_in(*indices):
    """The Taylor rule of a primitive linear in inputs `indices` (all, if none given):
    the k-th coefficient is the primitive of the k-th coefficients of those inputs and
    of the values of the others."""
    return ("linear", indices or None)


#: the Taylor rule of a primitive that is linear near every point (abs, maximum, mod):
#: the k-th coefficient is its jvp at the values, with the k-th coefficients as tangents
PIECEWISE_LINEAR = ("piecewise linear", None)
#: `@infer(p)`: the inference rule of `p` (see myia.infer).
infer = _register("infer")


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


def lowering(backend, prim):
    """`@lowering("llvm", p)`: register `p`'s lowering for a backend."""
    return _register(backend)(prim)
