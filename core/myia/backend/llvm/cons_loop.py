"""A recursion that only wraps its recursive call's result in a new closure, as a loop.

The forward pass of a loop's gradient has this shape: each iteration computes what
its backpropagator needs, calls the rest of the loop, and returns its backpropagator,
a closure capturing those values and the backpropagator the rest returned:

    body():  c = cos(x); k = header(i + 1, sin(x)); return <closure over c, k>

As a stack loop (`explicit_stack`) it would save c, recurse, then make each closure
while unwinding.  Here (tail recursion modulo cons) each iteration makes its
closure's record right away, with a hole where k goes, writes the closure into the
hole of the previous iteration's record, and loops; a return fills the last hole and
returns the first closure.  One pass, no stack.  Where the closure is a chain option
(chain.py), there is no hole: records are appended to segments, and the return
stores the last segment's count and its terminal.

Applies when the graph holding the recursive call returns a closure that captures
the call's result, nothing else in that graph uses the result, and the call is the
graph's only call of a function (so every other value the closure captures is
computed before it).
"""

import llvmlite.ir as ir

from ...errors import MyiaMemoryError, MyiaRecursionError
from ...ir import Apply
from ...prim import Primitive
from . import cg, chain
from .cg import NULL, ctx_store, i32, i64
from .chain import chain_layout
# bounded like native recursion: past MAX_DEPTH pending iterations, or MAX_BYTES of
# records, a MyiaRecursionError
from .explicit_stack import MAX_BYTES, MAX_DEPTH
from .ltypes import to_ir
from .registry import LoopRecords, what_is_made
from .runtime import I64, PTR, STATUS_OK
from .values import coerce, load_captured


def is_cons_site(L, site):
    """Does the recursive call `site` only feed the closure its graph returns (see the
    module doc)?"""
    g = site.graph
    out = g.output
    if not out.is_constant_graph() or site not in L.fvs.get(out.value, ()):
        return False
    if any(u.graph is g for u, _ in L.mng.users(site)):
        return False
    calls = [n for n in L.mng.nodes(g) if isinstance(n, Apply)
             and not n.inputs[0].is_constant(Primitive)]
    if calls != [site]:
        return False
    callee = site.inputs[0]
    if callee.is_constant_graph():
        return True
    t = L.ltype(callee)
    return getattr(t, "single", False)


class ConsLoop:
    """The cons loop of one FnLowering (see the module doc)."""

    def __init__(self, fl, site):
        self.fl = fl
        self.site = site
        b = fl.b
        g = site.graph
        opt = fl.ltype(g.output).options[0]
        # a chain's records go one after another in segments (see chain.py)
        lay = chain_layout(fl.L, opt)
        self.lay = lay if lay is not None and lay.link == fl.L.fvs[g.output.value].index(site) \
            else None
        with b.goto_block(fl.alloca_block):
            self.hole = cg.alloca(b, PTR, "cons.hole")  # where the next result goes
            self.first = cg.alloca(b, to_ir(fl.out_t), "cons.first")  # the result
            self.depth = cg.alloca(b, I64, "cons.depth")
            b.store(NULL, self.hole)
            b.store(i64(0), self.depth)
            if self.lay is not None:  # the chain's last segment: its records, its room
                self.segment = cg.alloca(b, PTR, "chain.segment")
                self.count = cg.alloca(b, I64, "chain.count")
                self.cap = cg.alloca(b, I64, "chain.capacity")
                b.store(NULL, self.segment)
                b.store(i64(0), self.count)
                b.store(i64(0), self.cap)

    def emit_site(self, node):
        """Make the closure the graph returns, link it, and loop; the block ends (None)."""
        fl = self.fl
        b = fl.b
        L = fl.L
        g = fl.graph
        closure = g.output.value
        ctype = fl.ltype(g.output)
        opt = ctype.options[0]
        fvs = L.fvs[closure]
        k = fvs.index(node)
        out = fl.ltype(node)
        depth = b.add(b.load(self.depth, typ=I64), i64(1))
        b.store(depth, self.depth)
        rec_ir = L.captured_ir(opt)
        size = self.lay.size if self.lay is not None else \
            rec_ir.get_abi_size(L.engine.tm.target_data)
        fl.error_if(b.icmp_signed(">", depth, i64(min(MAX_DEPTH, MAX_BYTES // size))),
                    node, MyiaRecursionError,
                    f"recursion too deep: more than {MAX_DEPTH} pending calls of "
                    f"{fl.entry.name}, or {MAX_BYTES >> 20} MiB of their closures")
        # (a loop's derivative: its memory error says how many steps, of how much)
        ctx_store(b, fl.ctx, "depth", depth)
        site = fl.site(node, MyiaMemoryError,
                       LoopRecords(size, any(t.contains_array() for t in L.captured_types(opt)))
                       if fl.loop_of(fl.entry) is not None else what_is_made(node))
        if self.lay is not None:
            self.append(node, ctype, [None if i == k else fl.value(v) for i, v in enumerate(fvs)],
                        site)
        else:
            rec = ir.Constant(rec_ir, ir.Undefined)
            for i, v in enumerate(fvs):
                if i != k:
                    rec = b.insert_value(rec, fl.value(v), i)
            # records packed at 8 bytes where they allow it: one per iteration
            packed = rec_ir.get_abi_alignment(L.engine.tm.target_data) <= 8
            p = cg.alloc(b, fl.ctx, i64(size), site, packed=packed)
            b.store(rec, p)
            hole = b.load(self.hole, typ=PTR)
            with b.if_else(b.icmp_unsigned("==", hole, NULL)) as (first, then):
                with first:
                    b.store(coerce(fl, p, ctype, fl.out_t, node), self.first)
                with then:
                    b.store(coerce(fl, p, ctype, out, node), hole)
            b.store(cg.gep(b, p, [i32(0), i32(k)], rec_ir), self.hole)
        callee = node.inputs[0]
        args = [fl.value(i) for i in node.inputs[1:]]
        types = [fl.ltype(i) for i in node.inputs[1:]]
        if callee.is_constant_graph():
            bound = [fl.value(fv) for fv in L.fvs.get(callee.value, ())]
        else:
            fopt = fl.ltype(callee).options[0]
            bound = load_captured(b, L, fopt, fl.value(callee)) if fopt.n_captured else []
        fl.call_graph(fl.entry, bound, args, types, out, node, tail=True)
        return None

    def append(self, node, ctype, values, site):
        """A chain's record of `values` after the last one, in a new segment when
        that one is full; the first is the result."""
        fl = self.fl
        b = fl.b
        lay = self.lay
        seg = b.load(self.segment, typ=PTR)
        begun = b.icmp_unsigned("!=", seg, NULL)
        if lay.shared:
            # a value the segment's records share that this one does not (the loop
            # changed it after all) ends the segment here
            with b.if_then(begun, likely=True):
                with b.if_then(chain.shared_differ(b, lay, seg, values), likely=False):
                    count = b.load(self.count, typ=I64)
                    cg.store_at(b, count, seg, chain.COUNT)
                    b.store(count, self.cap)
        cap = b.load(self.cap, typ=I64)
        with b.if_then(b.icmp_signed("==", b.load(self.count, typ=I64), cap), likely=False):
            # a new segment: FIRST records, then twice those of the last (it is full)
            cap = b.select(begun, b.select(b.icmp_signed("<", cap, i64(lay.max_count // 2)),
                                           b.add(cap, cap), i64(lay.max_count)),
                           i64(chain.FIRST))
            new = chain.new_segment(fl, lay, cap, seg, site)
            chain.store_shared(b, lay, new, values)
            b.store(new, self.segment)
            b.store(cap, self.cap)
            b.store(i64(0), self.count)
        count = b.load(self.count, typ=I64)
        p = chain.store(fl, lay, b.load(self.segment, typ=PTR), count, values)
        b.store(b.add(count, i64(1)), self.count)
        with b.if_then(b.not_(begun), likely=False):
            b.store(coerce(fl, p, ctype, fl.out_t, node), self.first)

    def ret(self, v):
        """Return `v` (of the function's output type): into the last hole (or as the
        chain's terminal), if any."""
        fl = self.fl
        b = fl.b
        last = self.hole if self.lay is None else self.segment
        with b.if_else(b.icmp_unsigned("==", b.load(last, typ=PTR), NULL)) as (direct, linked):
            with direct:
                b.store(v, fl.outp)
            with linked:
                t = coerce(fl, v, fl.out_t, fl.ltype(self.site), self.site)
                if self.lay is None:
                    b.store(t, b.load(self.hole, typ=PTR))
                else:  # the last segment's count, and what its last record links to
                    seg = b.load(self.segment, typ=PTR)
                    cg.store_at(b, b.load(self.count, typ=I64), seg, chain.COUNT)
                    cg.store_at(b, t, seg, chain.TERMINAL)
                b.store(b.load(self.first, typ=to_ir(fl.out_t)), fl.outp)
        b.ret(i32(STATUS_OK))

    def finish(self):
        pass
