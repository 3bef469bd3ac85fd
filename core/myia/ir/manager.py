"""The manager: answers questions about a set of graphs and the graphs they reach.

Questions: which graphs are reachable, the nodes of each graph, the users of each
node, free variables (direct and total), the parent of each graph (the innermost graph
whose nodes it uses), its children and scope.  Answers are computed from scratch when
first asked after a change (`invalidate`, or an edit made through the manager); this
keeps the code small and obviously right, and it is fast enough for graphs of the
sizes people write.
"""

import heapq

from .anf import Apply, Constant, Graph


class GraphManager:
    def __init__(self, *roots, like=None, edited=None):
        self.roots = list(roots)
        self._state = None
        # a manager of the same program before some edits: its free variables are
        # likely still right, which saves a walk (see _compute); and with `edited`, the
        # set of every graph whose nodes or output the edits changed, so are its walks
        # of the other graphs
        self._like = like
        self._edited = edited

    # ---- computation ------------------------------------------------------------

    def invalidate(self):
        self._state = None

    def add_root(self, graph):
        if graph not in self.roots:
            self.roots.append(graph)
            self.invalidate()

    @property
    def _s(self):
        if self._state is None:
            hint = self._like._state if self._like is not None else None
            self._like = None
            edited, self._edited = self._edited, None
            if hint is None:
                self._state = _compute(self.roots)
            else:
                self._state = _compute(self.roots, hint.fv_total,
                                       hint.walks if edited is not None else None, edited)
        return self._state

    def __contains__(self, graph):
        """Is `graph` reachable from the roots?"""
        return graph in self._s.nodes

    @property
    def graphs(self):
        """Every graph reachable from the roots, in discovery order."""
        return list(self._s.nodes)

    def nodes(self, graph):
        """The nodes owned by `graph` and reachable from its output, inputs first."""
        return self._s.nodes[graph]

    def all_nodes(self):
        for g in self._s.nodes:
            yield from g.parameters
            yield from self._s.nodes[g]

    def users(self, node):
        """List of (user Apply, input index) for every use of `node`."""
        return self._s.users.get(node, [])

    def free_variables_direct(self, graph):
        """Nodes of other graphs that `graph`'s own nodes use."""
        return list(self._s.fv_direct[graph])

    def free_variables(self, graph):
        """All nodes of enclosing graphs that `graph` needs, including through the
        graphs it uses (a closure made inside `graph` captures them through it)."""
        return list(self._s.fv_total[graph])

    def graphs_used(self, graph):
        """Graphs that appear as constants in `graph`'s nodes."""
        return list(self._s.graphs_used[graph])

    def uses(self, graph):
        """How many inputs of nodes hold the graph `graph` (its call sites, and its
        uses as a value)."""
        st = self._s
        if st.uses is None:
            st.uses = {}
            for used in st.graphs_used.values():
                for g, n in used.items():
                    st.uses[g] = st.uses.get(g, 0) + n
        return st.uses.get(graph, 0)

    def graph_users(self, graph):
        """Graphs whose nodes hold `graph` as a constant."""
        return [g for g, used in self._s.graphs_used.items() if graph in used]

    def parent(self, graph):
        """The innermost graph whose nodes `graph` uses, or None (top level)."""
        return self._s.parents[graph]

    def children(self, graph):
        st = self._s
        if st.children is None:
            st.children = {}
            for g, p in st.parents.items():
                st.children.setdefault(p, []).append(g)
        return list(st.children.get(graph, ()))

    def scope(self, graph):
        """`graph` and all graphs nested in it, `graph` first."""
        out = [graph]
        for g in out:
            out.extend(self.children(g))
        return out

    def ancestors(self, graph):
        out = []
        p = self.parent(graph)
        while p is not None:
            out.append(p)
            p = self.parent(p)
        return out

    # ---- edits ----------------------------------------------------------------

    def set_edge(self, node, index, value):
        node.inputs[index] = value
        self.invalidate()

    def replace(self, old, new):
        """Make every user of `old` use `new` instead; also graph outputs."""
        for user, i in list(self.users(old)):
            user.inputs[i] = new
        for g in self._s.nodes:
            if g.output is old:
                g.output = new
        self.invalidate()


class _State:
    __slots__ = ("nodes", "users", "fv_direct", "fv_total", "graphs_used", "parents",
                 "children", "walks", "uses")


def _compute(roots, fv_total_hint=None, walks_hint=None, edited=None):
    """Walk the graphs reachable from `roots`.

    A node of `g` may be needed only by a closure made in `g` (a nested graph reads it
    as a free variable).  Such a node must still be computed by `g`, before the
    closure is made: so the walk of `g` treats the constant of a nested graph `h` as
    depending on `h`'s free variables owned by `g`.  Those are known only once free
    variables are, hence the graphs that use a graph whose free variables changed are
    walked again until nothing changes (nothing is walked twice when
    `fv_total_hint`, the free variables of a similar program, is right).

    `walks_hint`: the walks of that program, of which those of the graphs not in
    `edited` are still right (a walk reads the graph's own nodes, and the free
    variables of the graphs it uses, which are checked as for any walk): the optimizer
    edits a few graphs per sweep of a program of hundreds."""
    st = _State()
    fv_total = fv_total_hint or {}
    by_owner = _by_owner(fv_total)  # {graph: {owner graph: its free variables there}}
    # graph -> (order, fvs, used, edges, read) of its last walk
    walks = {} if walks_hint is None else \
        {g: w for g, w in walks_hint.items() if g not in edited}
    stale = None if walks_hint is None else set()  # the graphs to walk again (None: all)
    while True:
        reached = {}
        todo = list(roots)
        while todo:
            g = todo.pop()
            if g in reached:
                continue
            w = walks.get(g)
            if w is None or stale is None or g in stale:
                w = walks[g] = _walk(g, by_owner)
            reached[g] = w
            todo.extend(x for x in w[2] if x not in reached)
            todo.extend(n.graph for n in w[1] if n.graph not in reached)
        st.nodes = {g: w[0] for g, w in reached.items()}
        st.fv_direct = {g: w[1] for g, w in reached.items()}
        st.graphs_used = {g: w[2] for g, w in reached.items()}
        new_total = _free_variables_total(st)
        # (graphs no longer reached may remain in a hint)
        changed = {g for g, fvs in new_total.items() if fvs != fv_total.get(g, {})}
        fv_total = new_total
        if changed:
            by_owner = _by_owner(fv_total)
            # a walk reads the free variables of the graphs it uses, and nothing else
            stale = {g for g, w in reached.items() if any(h in changed for h in w[2])}
            continue
        # a walk made with a hint may have read free variables that no graph has now
        # (kept alive by that very walk): walk those again
        stale = {g for g, w in reached.items() if _read_stale(g, w[4], by_owner)}
        if not stale:
            break
    users = st.users = {}
    for w in reached.values():
        for inp, use in w[3]:
            users.setdefault(inp, []).append(use)
    st.fv_total = fv_total
    st.walks = reached
    st.parents = _parents(st)
    st.children = None  # {graph: graphs whose parent it is}, when first asked
    st.uses = None  # {graph: the inputs that hold it}, when first asked
    return st


def _by_owner(fv_total):
    by_owner = {}
    for g, fvs in fv_total.items():
        groups = by_owner[g] = {}
        for fv in fvs:
            groups.setdefault(fv.graph, []).append(fv)
    return by_owner


def _read_stale(graph, read, by_owner):
    return any(tuple(by_owner.get(h, {}).get(graph, ())) != tuple(fvs)
               for h, fvs in read.items())


def _walk(graph, by_owner):
    """The nodes owned by `graph` that its output needs, inputs before users, and
    otherwise in creation order (so that parsed code prints in source order); its
    free variables, the graphs it uses (with the number of inputs that hold each), its
    edges [(input, (user, index))], and what it read of `by_owner` ({used graph: its
    free variables owned by `graph`})."""
    fvs = {}
    used = {}
    edges = []
    read = {}
    deps = {}  # node -> the nodes of this graph it needs first
    seen = set()
    stack = [graph.output] if graph.output is not None else []
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if isinstance(node, Constant):
            if isinstance(node.value, Graph):
                used.setdefault(node.value, 0)  # (the output: not an input)
                # a graph returning a closure computes what the closure captures
                needed = read[node.value] = by_owner.get(node.value, {}).get(graph, ())
                stack.extend(needed)
            continue
        if node.graph is not graph:
            fvs[node] = None
            continue
        if isinstance(node, Apply):
            before = []
            for i, inp in enumerate(node.inputs):
                edges.append((inp, (node, i)))
                if isinstance(inp, Constant):
                    if isinstance(inp.value, Graph):
                        used[inp.value] = used.get(inp.value, 0) + 1
                        # the closure needs its free variables owned by this graph first
                        needed = read[inp.value] = by_owner.get(inp.value, {}).get(graph, ())
                        before.extend(needed)
                elif inp.graph is graph:
                    before.append(inp)
                else:
                    fvs[inp] = None
            deps[node] = before
            stack.extend(before)
    return _creation_order(deps), fvs, used, edges, read


def _creation_order(deps):
    """Topological order of `deps`, taking the oldest ready node first."""
    waiting = {n: 0 for n in deps}
    users = {}
    for n, before in deps.items():
        for b in set(before):
            if b in deps:
                waiting[n] += 1
                users.setdefault(b, []).append(n)
    ready = [(n.id, n) for n, k in waiting.items() if k == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, n = heapq.heappop(ready)
        order.append(n)
        for u in users.get(n, ()):
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, (u.id, u))
    return order


def _free_variables_total(st):
    total = {g: dict(st.fv_direct[g]) for g in st.nodes}
    changed = True
    while changed:
        changed = False
        for g in st.nodes:
            fvs = total[g]
            for used in st.graphs_used[g]:
                for n in total[used]:
                    if n.graph is not g and n not in fvs:
                        fvs[n] = None
                        changed = True
    return total


def _parents(st):
    """{graph: its parent}.  Plain loops, not nested functions: two closures that call
    each other form a reference cycle, and this one would hold the whole state (every
    users list) until a full garbage collection."""
    parents = {}
    for g in st.nodes:
        _parent(g, st.fv_total, parents)
    return parents


def _parent(g, fv_total, parents):
    if g in parents:
        return parents[g]
    parents[g] = None  # guards against cycles while computing
    owners = list(dict.fromkeys(n.graph for n in fv_total[g]))
    best = None
    for c in owners:
        above = _ancestors(c, fv_total, parents)
        if all(o is c or o in above for o in owners):
            best = c
            break
    if best is None and owners:
        best = owners[0]
    parents[g] = best
    return best


def _ancestors(g, fv_total, parents):
    out = set()
    p = _parent(g, fv_total, parents)
    while p is not None:
        out.add(p)
        p = _parent(p, fv_total, parents)
    return out


def manage(*graphs, like=None, edited=None):
    return GraphManager(*graphs, like=like, edited=edited)
