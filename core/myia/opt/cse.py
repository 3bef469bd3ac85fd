"""Common subexpression elimination: one node for each distinct pure computation."""

from ..ir import Apply, Constant, Graph, manage
from ..prim import Primitive



def _key(node):
    parts = []
    for i in node.inputs:
        if isinstance(i, Constant):
            v = i.value
            try:
                hash(v)
                parts.append(("c", type(v), v) if not isinstance(v, (Graph, Primitive)) else ("o", id(v)))
            except TypeError:
                return None  # unhashable constant (an array): leave it
        else:
            parts.append(("n", id(i)))
    fn = node.inputs[0]
    if len(parts) == 3 and isinstance(fn, Constant) and getattr(fn.value, "commutative", False):
        # (x * y and y * x are one computation: the trait means bit for bit)
        parts[1:] = sorted(parts[1:], key=repr)
    return tuple(parts)


def cse(root, mng=None):
    """Merge identical applications of pure primitives within each graph (`mng`: a
    manager of the program as it is, if the caller has one)."""
    mng = mng or manage(root)
    repl = {}
    merged = 0
    for g in mng.graphs:
        seen = {}
        for node in mng.nodes(g):
            if not isinstance(node, Apply):
                continue
            node.inputs = [repl.get(i, i) for i in node.inputs]
            fn = node.inputs[0]
            if not (isinstance(fn, Constant) and isinstance(fn.value, Primitive)) \
                    or fn.value.effect:
                continue
            key = _key(node)
            if key is None:
                continue
            if key in seen:
                repl[node] = seen[key]
                merged += 1
            else:
                seen[key] = node
    if repl:
        m = manage(root, like=mng)
        for g in m.graphs:
            g.output = repl.get(g.output, g.output)
            for node in m.nodes(g):
                if isinstance(node, Apply):
                    node.inputs = [repl.get(i, i) for i in node.inputs]
    return merged
