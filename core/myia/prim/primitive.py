"""The `Primitive` class: one object per primitive operation of the IR.

A primitive holds, in one place, every rule about it:

    impl      the reference implementation on Python scalars, tuples and NumPy arrays
              (what the VM runs);
    bprop     its reverse-mode rule, a function written in the Python subset
              (`@bprop(p)` right after the definition; parsed like user code);
    jvp       its forward-mode rule, also in the subset (`@jvp(p)`);
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
#: `@infer(p)`: the inference rule of `p` (see myia.infer).
infer = _register("infer")


def lowering(backend, prim):
    """`@lowering("llvm", p)`: register `p`'s lowering for a backend."""
    return _register(backend)(prim)
