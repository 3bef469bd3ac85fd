"""What a transform of a function value became during inference, per option: the
records that specialization reads to build it (see myia.infer.specialize)."""


class JRecord:
    """What J of a function value became: for each option, ("graph", J graph) for a
    graph without free variables or a primitive, ("lift", context of lift_closure's
    graph) for a closure, ("macro", JOf)."""

    __slots__ = ("parts",)

    def __init__(self):
        self.parts = {}


class TRecord(JRecord):
    """What T of a function value became, per option: ("graph", T graph) for a
    primitive (or a function that captures nothing, among several chosen at run
    time), ("static", transform object) for a function that captures nothing,
    ("lift", context of lift_closure_T's graph) for a closure; for the jet of a
    closure, ("lift", context of lift_closure_jet's graph).  (A JRecord: the contexts
    it names are live as J's are.)"""

    __slots__ = ()
