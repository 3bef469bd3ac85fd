"""The fusion pass: which nodes of a typed graph run as one generated GPU kernel.

Decisions are plain data (`fusion_plan(graph)` -> `FusionPlan`, a list of `Group`s,
each with its CUDA source), so they are tested on any machine; `fuse(graph, plan)`
then rewrites the graph so that each group is one call of a `FusedKernel` (see
`kernels`), which the executor runs.

Elementwise groups.  Within one graph, elementwise array primitives (the templates of
`codegen.EW_OPS`: arithmetic, math functions, comparisons, `where`, casts, broadcasts)
on statically shaped arrays are grouped, consumers first: a group starts at its last
node (its *root*, whose shape is the group's iteration shape S) and absorbs the
elementwise nodes that compute its operands,

- a node of shape S, whatever its other users: if something outside the group uses
  it, it becomes one more *output* of the group;
- a node of a smaller shape (broadcast to S inside the kernel) only when every user of
  it is already in the group (a kernel writes its outputs with shape S);

and never a node whose absorption would make the groups depend on each other in a
cycle (a path from the group through an outside node back into it: `tanh` feeding a
matmul whose result comes back to the same group stays outside).  Matmul, reductions,
reshapes that move data, indexing, and every call stay outside: groups never cross them.

Before grouping, `remove_aliases` drops the operations that leave their input's type
unchanged (`reshape` to the same shape, `astype` to the same dtype...): they would
only cost a copy, or an extra output.

Reduction groups.  A `reduce_sum`/`reduce_max` (and `unbroadcast`/`sum_to` that sum
over broadcast axes) becomes a `ReductionKernel`; when the reduced value is computed
by a group and used only by the reduction, the part of that group it depends on is
the reduction's map expression (recomputed, never written to memory), and the nodes
used by nothing else leave the elementwise group.  A group that ends in a reduction
thus becomes one `ReductionKernel`.
"""

import hashlib
import re

import numpy as np

from ...abstract import AArray, AScalar, ATuple
from ...ir import Apply, Constant, Graph, manage
from ...prim import Primitive
from ...prim import ops as P
from .codegen import (DTYPES, EW_OPS, PREAMBLE, ElementwiseSource, Operand, ReductionSource,
                      Unsupported, ctype, literal, params, reduce_parts)

#: primitives whose first input is the value and the rest static (dtype, shape, like)
_FIRST_ONLY = frozenset({P.astype, P.to_float, P.to_int, P.broadcast_to, P.reshape,
                         P.unbroadcast, P.sum_to})


# ---- what can be fused -------------------------------------------------------------


def _prim(node):
    if isinstance(node, Apply) and isinstance(node.inputs[0], Constant) \
            and isinstance(node.inputs[0].value, Primitive):
        return node.inputs[0].value
    return None


def dtype_of(node):
    """The dtype name of a number or array node, or None."""
    a = node.abstract
    if isinstance(a, (AArray, AScalar)):
        return a.dtype
    if isinstance(node, Constant):
        v = node.value
        if isinstance(v, (bool, np.bool_)):
            return "bool"
        if isinstance(v, int):
            return "int64"
        if isinstance(v, float):
            return "float64"
        if isinstance(v, (np.number, np.ndarray)):
            return v.dtype.name
    return None


def _static_shape(a):
    return isinstance(a, AArray) and all(d is not None for d in a.shape)


def _is_scalar_operand(node):
    if isinstance(node, Constant):
        return isinstance(node.value, (bool, int, float, np.number)) and \
            dtype_of(node) in DTYPES
    return isinstance(node.abstract, AScalar) and node.abstract.dtype in DTYPES


def _is_array_operand(node):
    a = node.abstract
    return _static_shape(a) and a.dtype in DTYPES


def _size(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def value_inputs(node):
    """The inputs of an elementwise node that are values (not dtype names or shapes)."""
    prim = _prim(node)
    args = node.inputs[1:]
    return args[:1] if prim in _FIRST_ONLY else args


def elementwise_ok(node):
    """True if `node` can be part of an elementwise group."""
    prim = _prim(node)
    if prim not in EW_OPS or not _is_array_operand(node):
        return False
    out = node.abstract
    vals = value_inputs(node)
    if not vals:
        return False
    for v in vals:
        if not (_is_array_operand(v) or _is_scalar_operand(v)):
            return False
        if isinstance(v.abstract, AArray) and len(v.abstract.shape) > len(out.shape):
            return False
    x = vals[0]
    xshape = x.abstract.shape if isinstance(x.abstract, AArray) else ()
    if prim is P.reshape and not (xshape == out.shape or _size(xshape) == 1):
        return False  # a reshape that moves data
    if prim in (P.unbroadcast, P.sum_to) and xshape != out.shape:
        return False  # a reduction (see reduction_ok)
    if prim is P.unbroadcast and out.dtype not in ("float64", "float32"):
        return False  # zeros for an integer input
    try:
        EW_OPS[prim](out.dtype, *[_probe_operand(v) for v in vals])
    except Unsupported:
        return False
    return True


def _probe_operand(node):
    return Operand("x", dtype_of(node), _constant_number(node))


def _constant_number(node):
    if isinstance(node, Constant) and _is_scalar_operand(node):
        return node.value
    return None


_REDUCE_OPS = {P.reduce_sum: "sum", P.reduce_max: "max"}


def reduction_spec(node):
    """(op, input node, axes, final shape) if `node` is a reduction a kernel can do,
    else None.  `final shape` is () for a scalar result."""
    prim = _prim(node)
    out = node.abstract
    if isinstance(out, AScalar):
        out_shape = ()
    elif _static_shape(out):
        out_shape = out.shape
    else:
        return None
    if out.dtype not in DTYPES:
        return None
    if prim in _REDUCE_OPS:
        x, axis, keepdims = node.inputs[1:]
        if not _is_array_operand(x) or not isinstance(axis, Constant):
            return None
        nd = len(x.abstract.shape)
        ax = axis.value
        if ax is None:
            axes = tuple(range(nd))
        elif isinstance(ax, tuple):
            axes = tuple(sorted(a % nd for a in ax))
        elif isinstance(ax, int):
            axes = (ax % nd,)
        else:
            return None
        if _REDUCE_OPS[prim] == "max" and out.dtype != x.abstract.dtype:
            return None
        return (_REDUCE_OPS[prim], x, axes, out_shape)
    if prim in (P.unbroadcast, P.sum_to):
        x = node.inputs[1]
        if not _is_array_operand(x) or out.dtype not in ("float64", "float32"):
            return None
        shape = x.abstract.shape
        if shape == out_shape:
            return None
        lead = len(shape) - len(out_shape)
        if lead < 0:
            return None
        axes = tuple(range(lead)) + tuple(
            i + lead for i, n in enumerate(out_shape) if n == 1 and shape[i + lead] != 1)
        return ("sum", x, axes, out_shape)
    return None


# ---- groups --------------------------------------------------------------------------


class Group:
    """Nodes of one graph that run as one kernel.

    kind: "elementwise" or "reduction"; nodes: members in evaluation order; inputs:
    the nodes outside the group it reads (parameters, other results, free variables,
    array constants); outputs: the members used outside (for a reduction, the
    reduction node itself); shape: the iteration shape (elementwise) or the shape of
    the reduced input (reduction); source: the kernel's CUDA source (codegen)."""

    def __init__(self, kind, graph, nodes, inputs, outputs, shape, reduce=None):
        self.kind = kind
        self.graph = graph
        self.nodes = nodes
        self.inputs = inputs
        self.outputs = outputs
        self.shape = shape
        self.reduce = reduce  # (op, axes, final shape) for a reduction
        self.source = None

    @property
    def prims(self):
        """The names of the members' primitives, in order."""
        return [_prim(n).name for n in self.nodes]

    def __repr__(self):
        outs = ", ".join(_label(o) for o in self.outputs)
        return f"<{self.kind} group {'+'.join(self.prims)} -> {outs}>"


def _label(node):
    return node.name or f"%{node.id}"


class FusionPlan:
    """The groups of every graph reachable from a root (see the module doc)."""

    def __init__(self, root, groups):
        self.root = root
        self.groups = groups

    def kernels(self):
        return [g.source for g in self.groups]

    def __iter__(self):
        return iter(self.groups)

    def __len__(self):
        return len(self.groups)

    def __str__(self):
        parts = []
        for i, g in enumerate(self.groups):
            parts.append(f"[{i}] {g!r} in {g.graph.name}\n{g.source}")
        return "\n".join(parts) if parts else "(no groups)"


def fusion_plan(root, manager=None):
    """The fusion groups of the typed graphs reachable from `root`, with their sources."""
    mng = manager or manage(root)
    groups = []
    for g in mng.graphs:
        if g.flags.get("untyped"):
            continue
        groups.extend(_plan_graph(mng, g))
    return FusionPlan(root, groups)


class _Deps:
    """Evaluation dependencies among the nodes of one graph: data edges, and a closure
    made in the graph depending on the free variables it captures from it."""

    def __init__(self, mng, g):
        self.nodes = [n for n in mng.nodes(g) if isinstance(n, Apply)]
        self.pos = {n: i for i, n in enumerate(self.nodes)}
        self.succ = {n: [] for n in self.nodes}
        for n in self.nodes:
            for inp in n.inputs:
                if inp in self.pos:
                    self.succ[inp].append(n)
                elif isinstance(inp, Constant) and isinstance(inp.value, Graph):
                    for fv in mng.free_variables(inp.value):
                        if fv in self.pos:
                            self.succ[fv].append(n)
        self.users = {n: mng.users(n) for n in self.nodes}
        # (a closure made here may return a node of this graph as it is: no Apply uses
        # it, but it is used outside)
        self.returned = {h.output for h in mng.graphs}
        self.graph = g
        #: {node: the cone it is recomputed in}: nodes computed inside a reduction
        #: kernel and used by nothing else, gone once the graph is rewritten.  Their
        #: uses of nodes of the cone are recomputations too; of other nodes, reads
        #: by the reduction kernel (which needs them as inputs)
        self.dead = {}

    def used_outside(self, node, members):
        if node in self.returned:
            return True
        dead = self.dead
        for u, _ in self.users[node]:
            if u in members:
                continue
            cone = dead.get(u)
            if cone is None or node not in cone:
                return True
        return False

    def only_users_in(self, node, members):
        return not self.used_outside(node, members)

    def creates_cycle(self, members):
        """True if a path leaves `members` and comes back into them."""
        limit = max(self.pos[m] for m in members)
        seen = set()
        stack = [u for m in members for u in self.succ[m] if u not in members]
        while stack:
            n = stack.pop()
            if n in seen or self.pos[n] > limit:
                continue
            seen.add(n)
            for u in self.succ[n]:
                if u in members:
                    return True
                stack.append(u)
        return False


def _plan_graph(mng, g):
    deps = _Deps(mng, g)
    ew = {n for n in deps.nodes if elementwise_ok(n)}
    assigned = {}
    ew_groups = []
    for root in reversed(deps.nodes):
        if root not in ew or root in assigned:
            continue
        shape = root.abstract.shape
        members = {root}
        work = [root]
        while work:
            m = work.pop()
            for inp in value_inputs(m):
                if inp not in ew or inp in assigned or inp in members:
                    continue
                same = inp.abstract.shape == shape
                if not same and not deps.only_users_in(inp, members):
                    continue
                if deps.creates_cycle(members | {inp}):
                    continue
                members.add(inp)
                work.append(inp)
        for m in members:
            assigned[m] = root
        ew_groups.append(members)

    # reductions, fed by (part of) a group when the reduced value has no other use
    red_groups = []
    for node in deps.nodes:
        spec = reduction_spec(node)
        if spec is None:
            continue
        op, x, axes, final = spec
        cone = set()
        home = next((s for s in ew_groups if x in s), None)
        if home is not None and x is not g.output and \
                all(u is node for u, _ in deps.users[x]):
            cone = _cone(x, home)
            removed = {x}
            changed = True
            while changed:
                changed = False
                for m in cone - removed:
                    if all(u in removed or u is node for u, _ in deps.users[m]) \
                            and m is not g.output:
                        removed.add(m)
                        changed = True
            home -= removed
            for r in removed:
                deps.dead[r] = cone
        red_groups.append((node, spec, cone))

    groups = []
    for members in ew_groups:
        if not members:
            continue
        nodes = sorted(members, key=deps.pos.get)
        outputs = [n for n in nodes if deps.used_outside(n, members)]
        inputs = _inputs(nodes, members)
        grp = Group("elementwise", g, nodes, inputs, outputs, nodes[-1].abstract.shape)
        # the root sets the shape; all outputs have it (see the module doc)
        grp.shape = outputs[0].abstract.shape
        assert all(o.abstract.shape == grp.shape for o in outputs), grp
        grp.source = elementwise_source(grp)
        groups.append(grp)
    for node, (op, x, axes, final), cone in red_groups:
        nodes = sorted(cone, key=deps.pos.get)
        inputs = _inputs(nodes, cone) if cone else [x]
        grp = Group("reduction", g, nodes + [node], inputs, [node], x.abstract.shape,
                    reduce=(op, axes, final))
        grp.source = reduction_source(grp, x)
        groups.append(grp)
    groups.sort(key=lambda grp: deps.pos[grp.nodes[-1]])
    return groups


def _cone(x, members):
    """The members of a group that `x` depends on (through members), `x` included."""
    out = set()
    stack = [x]
    while stack:
        n = stack.pop()
        if n in out:
            continue
        out.add(n)
        stack.extend(i for i in value_inputs(n) if i in members)
    return out


def _inputs(nodes, members):
    seen = {}
    for n in nodes:
        for i in value_inputs(n):
            if i in members or i in seen:
                continue
            if isinstance(i, Constant) and _is_scalar_operand(i) and \
                    literal(i.value, dtype_of(i)) is not None:
                continue  # inlined as a literal
            seen[i] = None
    return list(seen)


# ---- sources ---------------------------------------------------------------------------


def _body(nodes, inputs):
    """The statements computing `nodes` from the inputs named in0, in1, ...: returns
    (lines, {member: temporary name})."""
    names = {inp: Operand(f"in{i}", dtype_of(inp)) for i, inp in enumerate(inputs)}
    temps = {}
    lines = []
    for k, n in enumerate(nodes):
        out = n.abstract.dtype
        ops = []
        for v in value_inputs(n):
            if v in temps:
                ops.append(temps[v])
            elif v in names:
                ops.append(names[v])
            else:  # a literal
                ops.append(Operand(literal(v.value, dtype_of(v)), dtype_of(v), v.value))
        expr = EW_OPS[_prim(n)](out, *ops)
        t = f"t{k}"
        lines.append(f"const {ctype(out)} {t} = {expr};  // {_prim(n).name}")
        temps[n] = Operand(t, out)
    return lines, temps


def _kernel_name(prims, text):
    digest = hashlib.sha1(text.encode()).hexdigest()[:8]
    ops = "_".join(dict.fromkeys(prims))[:40]
    return re.sub(r"[^A-Za-z0-9_]", "_", f"myia_{ops}_{digest}")


def elementwise_source(grp):
    lines, temps = _body(grp.nodes, grp.inputs)
    for j, o in enumerate(grp.outputs):
        lines.append(f"out{j} = {temps[o].expr};")
    in_params = params((f"in{i}", dtype_of(n)) for i, n in enumerate(grp.inputs))
    out_params = params((f"out{j}", o.abstract.dtype) for j, o in enumerate(grp.outputs))
    operation = "\n".join(lines)
    name = _kernel_name(grp.prims, in_params + out_params + operation)
    return ElementwiseSource(name, in_params, out_params, operation, PREAMBLE)


def reduction_source(grp, x):
    op, axes, final = grp.reduce
    red = grp.nodes[-1]
    out_dtype = red.abstract.dtype
    members = grp.nodes[:-1]
    if members:
        lines, temps = _body(members, grp.inputs)
        result = temps[x]
    else:
        lines, result = [], Operand("in0", dtype_of(x))
    args = ", ".join(f"{ctype(dtype_of(n))} in{i}" for i, n in enumerate(grp.inputs))
    body = "\n".join("  " + ln for ln in lines + [f"return {result.to(out_dtype)};"])
    fn = f"__device__ inline {ctype(out_dtype)} myia_map({args}) {{\n{body}\n}}\n"
    call = "myia_map(" + ", ".join(f"in{i}" for i in range(len(grp.inputs))) + ")"
    reduce_expr, identity = reduce_parts(op, out_dtype)
    in_params = params((f"in{i}", dtype_of(n)) for i, n in enumerate(grp.inputs))
    out_params = params([("out0", out_dtype)])
    name = _kernel_name([op] + grp.prims[:-1], in_params + fn + reduce_expr)
    return ReductionSource(name, in_params, out_params, call, reduce_expr, "out0 = a",
                           identity, ctype(out_dtype), PREAMBLE + fn)


# ---- rewriting the graph ---------------------------------------------------------------

#: primitives that are the identity when the result has the type of their first input
_ALIASES = frozenset({P.reshape, P.broadcast_to, P.astype, P.unbroadcast, P.sum_to,
                      P.to_float})


def remove_aliases(root):
    """`reshape(x, s) -> x` where x has shape s, and likewise broadcast_to, astype,
    unbroadcast, sum_to and to_float that leave the type unchanged: no kernel, no
    copy, and no extra output for a fused group.  Returns how many were removed."""
    mng = manage(root)
    repl = {}
    for g in mng.graphs:
        for n in mng.nodes(g):
            prim = _prim(n)
            if prim in _ALIASES and len(n.inputs) > 1:
                x = n.inputs[1]
                if isinstance(n.abstract, AArray) and x.abstract == n.abstract:
                    repl[n] = repl.get(x, x)
    if repl:
        def resolve(x):
            while x in repl:
                x = repl[x]
            return x

        for g in mng.graphs:
            for n in mng.nodes(g):
                if isinstance(n, Apply):
                    n.inputs = [resolve(i) for i in n.inputs]
            g.output = resolve(g.output)
        mng.invalidate()
    return len(repl)



def fuse(root, make_kernel, plan=None):
    """Rewrite the graphs of `root` in place: each group of `plan` (default: the plan
    of `root`) becomes one call of `make_kernel(group)` (a callable value), with
    `tuple_getitem`s for a group of several outputs.  Returns the plan."""
    mng = manage(root)
    plan = plan or fusion_plan(root, mng)
    repl = {}
    calls = []
    for grp in plan.groups:
        kernel = make_kernel(grp)
        fn = Constant(kernel)
        loc = grp.nodes[-1].loc
        call = Apply(grp.graph, [fn] + list(grp.inputs), loc)
        calls.append(call)
        if len(grp.outputs) == 1:
            call.abstract = grp.outputs[0].abstract
            call.name = grp.outputs[0].name
            repl[grp.outputs[0]] = call
            continue
        call.abstract = ATuple(o.abstract for o in grp.outputs)
        for j, o in enumerate(grp.outputs):
            item = grp.graph.apply(P.tuple_getitem, call, j, loc=o.loc, name=o.name)
            item.abstract = o.abstract
            item.inputs[2].abstract = AScalar("int64", j)
            repl[o] = item
    if repl:
        # one level suffices: the replacements are new nodes, never replaced themselves
        for g in mng.graphs:
            for n in mng.nodes(g):
                if isinstance(n, Apply):
                    n.inputs = [repl.get(i, i) for i in n.inputs]
            g.output = repl.get(g.output, g.output)
        for call in calls:
            call.inputs = [repl.get(i, i) for i in call.inputs]
        mng.invalidate()
    return plan


__all__ = ["FusionPlan", "Group", "elementwise_ok", "fuse", "fusion_plan", "reduction_spec",
           "remove_aliases"]
