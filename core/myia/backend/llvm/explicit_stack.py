"""A function's recursion as a loop over an explicit stack.

A loop's gradient, as the J transform builds it, is two recursions as deep as the
trip count: the forward pass calls itself and wraps the result in a backpropagator
closure; each backpropagator calls the next one and multiplies what it returns.
Native recursion that deep costs more than the work it does: past the ~32 entries of
the CPU's return-address predictor, every return mispredicts (~5 ns a level, measured
here), and every level pays a call, a stack guard and a status check.

A function whose one recursive call (a non-tail call of its own entry, directly or
as an option of a function value) is followed by more work is lowered as a loop:

    resume point:  t = f(args)  -> push the values the rest of the graph uses
                                   (`live`), branch to the entry's header with args
    return v                    -> to `unwind`: if the stack is empty, return v; else
                                   pop the values, t = v, continue after the call

The rest of the graph (after the call) is lowered once, in a `resume` block whose
phis take either the popped values or, where the call picked a function that is not
this one (the base of the chain), the current ones.  The stack lives in arena chunks
(freed with the call's arena); a chunk emptied by pops is kept for the next push.
Its depth is bounded like native recursion: past `MAX_DEPTH` pending calls or
`MAX_BYTES` of saved values, the program fails with a MyiaRecursionError.
"""

import llvmlite.ir as ir

from ...errors import MyiaRecursionError
from ...ir import Apply
from ...prim import Primitive
from ...prim import ops as P
from . import cg
from .cg import NULL, i32, i64
from .ltypes import to_ir
from .runtime import I64, PTR, STATUS_OK

#: the limits of pending calls: as deep as native recursion on the 1 GiB stack goes
MAX_DEPTH = 1 << 26
MAX_BYTES = 1 << 30
#: a chunk's header: the previous chunk
HEADER = 16
CHUNK_BYTES = 16 << 10


def recursive_site(L, entry):
    """The one call in the function of `entry` (its tail-call group) that may call
    `entry` again and is not a tail call, or None (none, several, or a callee that
    is not known)."""
    found = []
    for g in L.tail_group(entry):
        for node in L.mng.nodes(g):
            if not isinstance(node, Apply) or node.inputs[0].is_constant(Primitive):
                continue
            gs = L.callee_graphs(node.inputs[0])
            if gs is None:
                return None
            if entry not in gs:
                continue
            if node is g.output:
                continue  # a tail call is a branch already
            if node.inputs[0].is_apply(P.switch):
                return None  # a call of a switch is lowered as branches: not handled
            found.append(node)
    return found[0] if len(found) == 1 else None


class ExplicitStack:
    """The explicit stack of one FnLowering (see the module doc)."""

    def __init__(self, fl, site):
        self.fl = fl
        self.site = site
        b = fl.b
        with b.goto_block(fl.alloca_block):
            self.chunk = cg.alloca(b, PTR, "stack.chunk")
            self.idx = cg.alloca(b, I64, "stack.idx")
            self.depth = cg.alloca(b, I64, "stack.depth")
            self.spare = cg.alloca(b, PTR, "stack.spare")
            self.nbytes = cg.alloca(b, I64, "stack.bytes")
            for a, v in ((self.chunk, NULL), (self.idx, i64(0)), (self.depth, i64(0)),
                         (self.spare, NULL), (self.nbytes, i64(0))):
                b.store(v, a)
        self.returns = []  # (value, block) returned to `unwind`
        self.resume = None  # (resume block, phi of the call's result, phis of the
        #                      values saved, the call's type)
        self.entry_t = None  # the type of one stack entry

    # ---- the call ----------------------------------------------------------------------

    def live(self, node):
        """The values of the graph being lowered that what follows `node` uses."""
        fl = self.fl
        L = fl.L
        env = fl.env
        g = fl.graph
        used = set()

        def use(x):
            used.add(x)
            if x.is_constant_graph():
                used.update(L.fvs.get(x.value, ()))

        for n in L.mng.nodes(g):
            if n is not node and n not in env:
                for i in n.inputs:
                    use(i)
        use(g.output)
        return [x for x in env if x in used and x is not node]

    def emit_site(self, node):
        """Lower the recursive call `node`; returns its result, in the resume block."""
        fl = self.fl
        b = fl.b
        L = fl.L
        entry = fl.entry
        callee = node.inputs[0]
        args = [fl.value(i) for i in node.inputs[1:]]
        types = [fl.ltype(i) for i in node.inputs[1:]]
        out = fl.ltype(node)
        live = self.live(node)
        values = [fl.env[x] for x in live]
        self.entry_t = self.entry_type(live, values)
        block = fl.fn.append_basic_block("resume")
        with b.goto_block(block):
            t_phi = b.phi(to_ir(out), name="returned")
            phis = [b.phi(v.type, name=getattr(x, "name", None) or "") for x, v in
                    zip(live, values)]
        self.resume = (block, t_phi, phis, out)

        def recurse(opt, record, bound=None):
            # saved first: a ChainWalk reads the next level's values with its state
            self.push(values, record)
            if bound is None:
                bound = self.level_values(opt, record)
            fl.call_graph(entry, bound, args, types, out, node, tail=True)

        def base(r):
            here = b.block
            t_phi.add_incoming(r, here)
            for phi, v in zip(phis, values):
                phi.add_incoming(v, here)
            b.branch(block)

        if callee.is_constant_graph():
            recurse(None, None, [fl.value(fv) for fv in L.fvs.get(callee.value, ())])
        else:
            # import here: values imports chain, which imports this module
            from .values import load_captured

            ftype = fl.ltype(callee)
            fv = fl.value(callee)
            if ftype.single:
                recurse(ftype.options[0], fv)
            else:
                env, blocks = fl.branch_on_tag(fv, len(ftype.options), "option")
                for opt, bb in zip(ftype.options, blocks):
                    b.position_at_end(bb)
                    if opt.prim is None and opt.graph is entry:
                        recurse(opt, env)
                    elif opt.prim is not None:
                        base(fl.call_prim(opt.prim, args, types, out, node, False))
                    else:
                        bound = load_captured(b, L, opt, env) if opt.n_captured else []
                        base(fl.call_graph(opt.graph, bound, args, types, out, node, False))
        b.position_at_end(block)
        for x, phi in zip(live, phis):
            fl.env[x] = phi
        return t_phi

    # ---- the stack -------------------------------------------------------------------

    def level_values(self, opt, record):
        """The values the called level binds: those of `opt` in `record`."""
        # import here: values imports chain, which imports this module
        from .values import load_captured

        return load_captured(self.fl.b, self.fl.L, opt, record) if opt.n_captured else []

    def entry_type(self, live, values):
        """The type of one stack entry: the values saved at the call."""
        return ir.LiteralStructType([v.type for v in values])

    def _entry_size(self):
        return self.entry_t.get_abi_size(self.fl.L.engine.tm.target_data) \
            if self.entry_t.elements else 0

    def push(self, values, record=None):
        """Save `values` for the call being made (of the function value whose record
        is `record`, if known)."""
        b = self.fl.b
        depth = b.add(b.load(self.depth, typ=I64), i64(1))
        b.store(depth, self.depth)
        self.save(values, depth)

    def save(self, values, depth):
        """Push an entry of `values` (`depth`: the pending calls, with this one)."""
        fl = self.fl
        b = fl.b
        size = self._entry_size()
        if not size:  # (otherwise MAX_BYTES bounds the depth, checked per chunk)
            fl.error_if(b.icmp_signed(">", depth, i64(MAX_DEPTH)), self.site,
                        MyiaRecursionError, f"recursion too deep: more than {MAX_DEPTH} "
                        f"pending calls of {fl.entry.name}")
            return
        per_chunk = max(16, (CHUNK_BYTES - HEADER) // size)
        chunk = b.load(self.chunk, typ=PTR)
        idx = b.load(self.idx, typ=I64)
        full = b.or_(b.icmp_unsigned("==", chunk, NULL), b.icmp_signed("==", idx, i64(per_chunk)))
        with b.if_then(full, likely=False):
            spare = b.load(self.spare, typ=PTR)
            has_spare = b.icmp_unsigned("!=", spare, NULL)
            with b.if_else(has_spare) as (then, otherwise):
                with then:
                    b.store(spare, self.chunk)
                    b.store(NULL, self.spare)
                with otherwise:
                    nbytes = HEADER + per_chunk * size
                    total = b.add(b.load(self.nbytes, typ=I64), i64(nbytes))
                    b.store(total, self.nbytes)
                    fl.error_if(b.icmp_signed(">", total, i64(MAX_BYTES)), self.site,
                                MyiaRecursionError,
                                f"recursion too deep: the pending calls of {fl.entry.name} "
                                f"saved more than {MAX_BYTES >> 20} MiB")
                    b.store(fl.alloc(i64(nbytes)), self.chunk)
            new = b.load(self.chunk, typ=PTR)
            b.store(chunk, new)  # its previous chunk
            b.store(i64(0), self.idx)
        chunk = b.load(self.chunk, typ=PTR)
        idx = b.load(self.idx, typ=I64)
        slot = cg.at(b, chunk, b.add(i64(HEADER), b.mul(idx, i64(size))))
        rec = ir.Constant(self.entry_t, ir.Undefined)
        for k, v in enumerate(values):
            rec = b.insert_value(rec, v, k)
        b.store(rec, slot)
        b.store(b.add(idx, i64(1)), self.idx)

    def pop(self):
        """The values of the last push (the stack is not empty)."""
        b = self.fl.b
        b.store(b.sub(b.load(self.depth, typ=I64), i64(1)), self.depth)
        return self.restore()

    def restore(self):
        """Pop the last entry; its values."""
        fl = self.fl
        b = fl.b
        size = self._entry_size()
        if not size:  # the values take no room (functions that capture nothing...)
            return [ir.Constant(t, None) for t in self.entry_t.elements]
        idx = b.load(self.idx, typ=I64)
        with b.if_then(b.icmp_signed("==", idx, i64(0)), likely=False):
            # back to the previous chunk; this one is kept for the next push
            chunk = b.load(self.chunk, typ=PTR)
            b.store(chunk, self.spare)
            b.store(b.load(chunk, typ=PTR), self.chunk)
            b.store(i64(max(16, (CHUNK_BYTES - HEADER) // size)), self.idx)
        idx = b.sub(b.load(self.idx, typ=I64), i64(1))
        b.store(idx, self.idx)
        chunk = b.load(self.chunk, typ=PTR)
        rec = b.load(cg.at(b, chunk, b.add(i64(HEADER), b.mul(idx, i64(size)))),
                     typ=self.entry_t)
        return [b.extract_value(rec, k) for k in range(len(self.entry_t.elements))]

    # ---- returns -------------------------------------------------------------------

    def ret(self, v):
        """Return `v` (of the function's output type): through `unwind`."""
        self.returns.append((v, self.fl.b.block))
        self.fl.b.branch(self.unwind_block())

    def unwind_block(self):
        u = getattr(self, "_unwind", None)
        if u is None:
            u = self._unwind = self.fl.fn.append_basic_block("unwind")
        return u

    def finish(self):
        """Emit `unwind`: return when no call is pending, else resume the last one."""
        fl = self.fl
        b = fl.b
        if not self.returns:
            return
        # import here: values imports chain, which imports this module
        from .values import coerce

        b.position_at_end(self.unwind_block())
        v = b.phi(to_ir(fl.out_t), name="result")
        for r, bb in self.returns:
            v.add_incoming(r, bb)
        empty = b.icmp_signed("==", b.load(self.depth, typ=I64), i64(0))
        done = fl.fn.append_basic_block("done")
        more = fl.fn.append_basic_block("pop")
        b.cbranch(empty, done, more)
        b.position_at_end(done)
        b.store(v, fl.outp)
        b.ret(i32(STATUS_OK))
        b.position_at_end(more)
        if self.resume is None:  # the call is never reached: nothing is ever pushed
            b.unreachable()
            return
        block, t_phi, phis, out = self.resume
        # (no poll here: each pop matches a push, which polled on its way to the header)
        values = self.pop()
        t = coerce(fl, v, fl.out_t, out, self.site)
        here = b.block
        t_phi.add_incoming(t, here)
        for phi, x in zip(phis, values):
            phi.add_incoming(x, here)
        b.branch(block)

