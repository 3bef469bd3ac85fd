"""Type and shape inference by abstract interpretation, and specialization.

    rules        one inference rule per primitive (NumPy semantics, constant folding)
    infer        the work-list engine: contexts, fixed points of loops and recursion
    specialize   monomorphic typed copies of the graphs, per context

    from myia.infer import specialize, abstract_of
    typed = specialize(graph, [abstract_of(3.0)])

The abstract values themselves (AScalar, AArray, ATuple, AFunction, AEnv..., join) are
in myia.abstract, below the parser and AD, which read them too; the names above are
exported here as well, as inference's vocabulary.
"""

from ..abstract import (
    ANY,
    BOTTOM,
    AArray,
    AConstant,
    AEnv,
    AFunction,
    AScalar,
    ASlice,
    ATuple,
    GraphFunction,
    MacroFunction,
    PartialFunction,
    PrimitiveFunction,
    abstract_of,
    broaden,
    join,
    signature_of,
)
from .infer import InferenceResult, infer_graph
from .specialize import specialize

__all__ = [
    "ANY", "BOTTOM", "AArray", "AConstant", "AEnv", "AFunction", "AScalar", "ASlice",
    "ATuple", "GraphFunction", "InferenceResult", "MacroFunction", "PartialFunction",
    "PrimitiveFunction", "abstract_of", "broaden", "infer_graph", "join", "signature_of",
    "specialize",
]
