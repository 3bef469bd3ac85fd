"""Closure conversion: make every graph top-level, so backends see first-order code.

A graph `g` with free variables `v1..vm` becomes `g'(v1, ..., vm, *params)`, with no
free variables.  Each use of the constant `g` changes accordingly:

    g(args)                      ->  g'(v1, ..., vm, args)           a direct call
    switch(c, g, h)(args)        ->  switch(c, g', h')(u1..uk, args)  both branches take
                                     the union u of their free variables, in one order,
                                     so the call stays a plain call of one of two graphs
    g as a value (stored, passed)->  make_closure(g', v1, ..., vm)   an explicit record

`make_closure` records are the only closures left: a backend lays them out as
{function, captured values} and calls them indirectly.
"""

from ..ir import Apply, Constant, manage
from ..ir.clone import _copy_graphs, _new_graph
from ..prim import ops as P


def _switch_branches(node):
    """(g1, g2) if `node` is switch(c, Constant(g1), Constant(g2)), else None."""
    if node.is_apply(P.switch):
        _, _, a, b = node.inputs
        if a.is_constant_graph() and b.is_constant_graph():
            return a.value, b.value
    return None


def closure_convert(root):
    """Return a new program equivalent to `root` in which no graph has free
    variables (the original graphs are left untouched)."""
    mng = manage(root)
    graphs = mng.graphs

    # 1. The lifted parameters of each graph: its free variables, and for branches of
    #    one switch, the union of theirs (grouped with a union-find).
    group = {g: g for g in graphs}

    def find(g):
        while group[g] is not g:
            group[g] = group[group[g]]
            g = group[g]
        return g

    for g in graphs:
        for node in mng.nodes(g):
            if isinstance(node, Apply):
                pair = _switch_branches(node)
                if pair:
                    a, b = find(pair[0]), find(pair[1])
                    if a is not b:
                        group[a] = b
    members = {}
    for g in graphs:
        members.setdefault(find(g), []).append(g)
    lifted = {}
    for gs in members.values():
        fvs = {}
        for g in gs:
            for v in mng.free_variables(g):
                fvs[v] = None
        for g in gs:
            lifted[g] = list(fvs)

    # 2. New graphs: lifted parameters first, then the original ones.
    new = {}
    for g in graphs:
        ng = _new_graph(g)
        new[g] = ng
    old_of = {ng: g for g, ng in new.items()}
    for g in graphs:
        ng = new[g]
        repl = dict(new)  # graph constants point at the new graphs
        for v in lifted[g]:
            p = ng.add_parameter(v.name)
            p.abstract = v.abstract
            repl[v] = p
        # copy g's own nodes only (nested graphs are lifted on their own)
        _copy_graphs([g], repl, mng)
        _rewrite_uses(ng, repl, old_of, lifted)
    return new[root]


def _fv_arg(v, repl):
    return repl[v] if v in repl else v


def _rewrite_uses(ng, repl, old_of, lifted):
    """In the new graph `ng`, make the uses of graph constants explicit."""
    m = manage(ng)
    # nodes of ng only: graphs it uses are rewritten separately
    nodes = [n for n in m.nodes(ng) if isinstance(n, Apply)]
    handled = set()
    for node in nodes:
        fn = node.inputs[0]
        # direct call of a graph constant
        if fn.is_constant_graph() and fn.value in old_of:
            old = old_of[fn.value]
            extra = [_fv_arg(v, repl) for v in lifted[old]]
            node.inputs = [Constant(fn.value, fn.loc), *extra, *node.inputs[1:]]
            handled.add(id(node.inputs[0]))
            continue
        # call of switch(c, g1, g2)
        if isinstance(fn, Apply):
            pair = _switch_branches(fn)
            if pair and all(g in old_of for g in pair):
                old = old_of[pair[0]]
                extra = [_fv_arg(v, repl) for v in lifted[old]]
                node.inputs = [fn, *extra, *node.inputs[1:]]
                handled.add(id(fn.inputs[2]))
                handled.add(id(fn.inputs[3]))
    # every other use of a graph constant is a closure value
    for node in nodes:
        for i, inp in enumerate(node.inputs):
            if inp.is_constant_graph() and id(inp) not in handled and inp.value in old_of:
                old = old_of[inp.value]
                if lifted[old]:
                    extra = [_fv_arg(v, repl) for v in lifted[old]]
                    node.inputs[i] = ng.apply(P.make_closure, inp, *extra, loc=inp.loc)
    out = ng.output
    if out.is_constant_graph() and out.value in old_of:
        old = old_of[out.value]
        if lifted[old]:
            ng.output = ng.apply(P.make_closure, out, *[_fv_arg(v, repl) for v in lifted[old]])
