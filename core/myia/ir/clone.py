"""Copying graphs: `clone` a graph with everything nested in it, or `inline` a
graph's body into another graph."""

from .anf import Apply, Constant, EnvKey, Graph, Parameter
from .manager import manage


def _copy_graphs(graphs, repl, mng, *, keep_params=(), loc=None, keep_keys=False,
                 keep_graphs=(), keep_names=True, detach=False, fixed_keys=()):
    """Copy the nodes of `graphs` following the mapping `repl` (old -> new).

    `repl` must already map every graph of `graphs` to its new Graph (or, for a graph
    being inlined, to the graph that receives its nodes) and may map parameters to
    arbitrary nodes.  Nodes outside `graphs` (free variables from above) stay shared.
    Environment keys (EnvKey constants) follow their node, unless `keep_keys` (or the
    node is one of `fixed_keys`).
    A copied derivative node follows its primal node (`node.primal`) if that was copied
    too; else, with `detach` (a copy made while the original stays, as inlining makes),
    it loses the link: J keys the sensitivity of a free variable by the node it is the
    image of, and two copies of one node are two free variables.
    Constants of the graphs `keep_graphs` stay (a recursive graph inlined into its
    caller still calls itself, not the caller).  Without `keep_names`, the copies go
    unnamed (the library's local names mean nothing where its code is inlined).
    """
    created = []
    for g in graphs:
        ng = repl[g]
        if g not in keep_params:
            for p in g.parameters:
                if p not in repl:
                    repl[p] = ng.add_parameter(p.name, p.loc)
                    repl[p].abstract = p.abstract
                    repl[p].primal = p.primal
                    repl[p].adjoint = p.adjoint
                    created.append(repl[p])
    applies = []
    for g in graphs:
        for node in mng.nodes(g):
            if isinstance(node, Apply) and node not in repl:
                new = Apply(repl[g], [], loc or node.loc, node.name if keep_names else None)
                new.abstract = node.abstract
                new.primal = node.primal
                new.adjoint = node.adjoint
                created.append(new)
                repl[node] = new
                applies.append(node)

    def get(inp):
        if inp in repl:
            return repl[inp]
        if isinstance(inp, Constant):
            value = inp.value
            if isinstance(value, Graph) and value not in keep_graphs:
                value = repl.get(value, value)
            elif isinstance(value, EnvKey) and not keep_keys and value.node in repl \
                    and value.node not in fixed_keys:
                value = EnvKey(repl[value.node])
            c = Constant(value, inp.loc)
            c.abstract = inp.abstract
            return c
        return inp

    for node in applies:
        repl[node].inputs = [get(i) for i in node.inputs]
    for g in graphs:
        ng = repl[g]
        if ng is not g and g not in keep_params:
            ng.output = get(g.output)
    for new in created:
        if new.primal is not None:
            new.primal = repl.get(new.primal, None if detach else new.primal)
        if new.adjoint is not None:
            new.adjoint = repl.get(new.adjoint, new.adjoint)
    return get


def _new_graph(g):
    ng = Graph(g.name, g.loc)
    ng.defaults = dict(g.defaults)
    ng.flags = dict(g.flags)
    return ng


def clone(graph, *, total=True, manager=None):
    """A fresh copy of `graph`; with `total`, graphs nested in it are copied too."""
    mng = manager or manage(graph)
    graphs = mng.scope(graph) if total else [graph]
    repl = {g: _new_graph(g) for g in graphs}
    _copy_graphs(graphs, repl, mng)
    return repl[graph]


def clone_many(graphs, *, manager=None):
    """Copy several graphs at once (and their scopes), keeping the references between
    them.  Returns {old graph: new graph}.

    A copy of a whole typed program (what the optimizer rewrites): environment keys
    stay as they are, as in specialization, because the types of the program (AEnv,
    which the LLVM backend lays out) name the original keys; a key remapped in the
    code but not in the types would no longer be found in its environment's type."""
    mng = manager or manage(*graphs)
    todo = []
    for g in graphs:
        for s in mng.scope(g):
            if s not in todo:
                todo.append(s)
    repl = {g: _new_graph(g) for g in todo}
    _copy_graphs(todo, repl, mng, keep_keys=True)
    return {g: repl[g] for g in todo}


def snapshot(root, manager=None):
    """(a copy of the program `root` reaches, {copied node or graph: the original}):
    the program as it is now, kept while the original goes on being rewritten in
    place (the optimizer's pass log draws what each pass changed)."""
    mng = manager or manage(root)
    graphs = list(mng.graphs)
    repl = {g: _new_graph(g) for g in graphs}
    _copy_graphs(graphs, repl, mng, keep_keys=True)
    return repl[root], {new: old for old, new in repl.items()}


def inline(graph, target, args, *, manager=None, loc=None, keep_names=True, free=None):
    """Copy `graph`'s body into `target` with its parameters bound to `args`.

    Graphs nested in `graph` are copied as new graphs nested in `target`.  Returns the
    node of `target` that computes `graph`'s output.  With `loc`, the copied nodes
    take that location (the library's own code, inlined, points at the user's line);
    without `keep_names`, they go unnamed (a bprop rule's `db` is not the user's b).
    `free` maps free variables of `graph` to the nodes the copy uses instead (the
    environment keys that name them stay).
    """
    if len(args) != len(graph.parameters):
        raise ValueError(f"inline {graph}: {len(args)} args for {len(graph.parameters)} parameters")
    mng = manager or _LeafNodes.of(graph) or manage(graph)
    scope = mng.scope(graph)
    repl = {graph: target}
    for p, a in zip(graph.parameters, args):
        repl[p] = a
    repl.update(free or {})
    for g in scope[1:]:
        repl[g] = _new_graph(g)
    get = _copy_graphs(scope, repl, mng, keep_params=(graph,), loc=loc, keep_graphs=(graph,),
                       keep_names=keep_names, detach=True, fixed_keys=free or ())
    return get(graph.output)


class _LeafNodes:
    """The nodes of a graph that uses no other graph (most of what is inlined: bprop
    rules, small functions): found by one walk, without a manager's whole analysis."""

    def __init__(self, graph, nodes):
        self.graph = graph
        self._nodes = nodes

    @classmethod
    def of(cls, graph):
        order, seen, stack = [], set(), [(graph.output, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
                continue
            if node in seen:
                continue
            seen.add(node)
            if isinstance(node, Constant):
                if isinstance(node.value, Graph):
                    return None  # uses a graph: it may have graphs nested in it
                continue
            if not isinstance(node, Apply) or node.graph is not graph:
                continue
            stack.append((node, True))
            stack.extend((i, False) for i in reversed(node.inputs))
        return cls(graph, order)

    def scope(self, graph):
        return [graph]

    def nodes(self, graph):
        return self._nodes


__all__ = ["clone", "clone_many", "inline", "Parameter"]
