"""`x[i:i + n]`: a slice whose bounds share a term is written `make_dslice(i, n, step)`
(myia.prim.dynamic), its length an input of its own.

The bounds are sums: each is read as its terms (through `+` and `-` of the nodes the
parser made), the terms they share are dropped, and the length is what is left of the
stop minus what is left of the start.  So `i:i + 4`, `i:4 + i`, `i + 1:i + 5`,
`k - 2:k + n` and `i:j` after `j = i + 4` all have a length that does not depend on the
shared term: known at compile time when what is left is (a literal, a name bound to
one, a shape), which gives the slice a static length (myia.infer.rules_dynamic).
Bounds without a shared term stay a make_slice.
"""

from ..ir import Apply, Constant
from ..prim import ops as P

#: how deep the sums are read
_MAX_DEPTH = 8


def _terms(node, sign, out, depth):
    """Append the (sign, node) terms whose sum `node` computes."""
    if depth < _MAX_DEPTH and isinstance(node, Apply) and len(node.inputs) == 3 \
            and (node.is_apply(P.add) or node.is_apply(P.sub)):
        _terms(node.inputs[1], sign, out, depth + 1)
        _terms(node.inputs[2], sign if node.is_apply(P.add) else -sign, out, depth + 1)
    else:
        out.append((sign, node))
    return out


def length_terms(start, stop):
    """The (sign, node) terms of stop - start once the terms they share are dropped, or
    None when they share none (a term computed at run time: not a constant)."""
    lo = _terms(start, 1, [], 0)
    hi = _terms(stop, 1, [], 0)
    shared = False
    rest = []
    for sign, node in lo:
        k = next((k for k, (s2, n2) in enumerate(hi) if n2 is node and s2 == sign), None)
        if k is None or isinstance(node, Constant):
            rest.append((sign, node))
        else:
            del hi[k]
            shared = True
    if not shared:
        return None
    return hi + [(-s, n) for s, n in rest]


def slice_node(apply, start, stop, step, loc):
    """The node of the slice start:stop:step whose bounds are nodes: make_dslice when
    they share a term, else make_slice.  `apply(prim, *inputs, loc=)` makes a node."""
    terms = length_terms(start, stop)
    if terms is None:
        return apply(P.make_slice, start, stop, step, loc=loc)
    length = None
    for sign, node in sorted(terms, key=lambda t: -t[0]):  # the positive terms first
        if length is None:
            length = node if sign > 0 else apply(P.neg, node, loc=loc)
        else:
            length = apply(P.add if sign > 0 else P.sub, length, node, loc=loc)
    if length is None:
        length = Constant(0, loc)
    return apply(P.make_dslice, start, length, step, loc=loc)
