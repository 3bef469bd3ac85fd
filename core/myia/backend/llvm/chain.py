"""A loop gradient's backpropagators laid out flat: records in segments, no links.

The forward pass of a loop's gradient makes one backpropagator per iteration, a
closure that captures what that iteration's backward step needs (its residuals) and
the backpropagator of the rest of the loop (its link `k`), which it calls once:

    ◀body(dout) [free: c, k]:   return k(1.0) * c

As ordinary records, each iteration kept {c, k}, k a tagged pointer (24 bytes for one
float), and the backward walk (explicit_stack) saved c once more per level.

A *chain option* is a closure option with exactly one captured value of a function
type that offers the option itself (the link; a type with other options too, one of
which ends the chain).  Its records leave the link out.  They lie one after another
in segments, each record ending with its position in its segment (2 bytes), and the
link is computed when a record is read (`load`):

    segment:  {prev, next, count, terminal}  record 0, record 1, ..., record count-1
    link of record i:  record i + 1, else the next segment's record 0, else the
                       terminal (the closure the loop's last iteration linked to)

`cons_loop` appends a record per iteration and stores the terminal when the loop
ends; a record made anywhere else is a segment of its own (`make`), whose terminal
is its link.  In the chain option's own function, `ChainWalk` runs the recursion
through the link keeping the record of the level it is in: when what follows the
recursive call uses only residuals, a level saves nothing, since on the way back the
level's record is the one before in the chain and its residuals are read from it
again.  For x = sin(x) repeated n times: 10 bytes per iteration (JAX's scan
keeps 8), was 32.
"""

import llvmlite.ir as ir

from ...ir import Apply
from ...prim import Primitive
from . import cg
from .cg import NULL, i64
from .explicit_stack import ExplicitStack
from .ltypes import CLOSURE_IR, Func, to_ir
from .runtime import I64, PTR

I16 = ir.IntType(16)
# the segment header: {prev segment, next segment, records in it, terminal}, then the
# values every record of the segment shares (`ChainLayout.shared`)
PREV, NEXT, COUNT, TERMINAL = 0, 8, 16, 24
SHARED = 48
#: a chain's first segment holds FIRST records; each next one twice as many, up to
#: what the 2-byte position allows or about SEGMENT_BYTES
FIRST = 8
SEGMENT_BYTES = 1 << 20


class ChainLayout:
    """The record layout of chain option `option`, whose captured value number
    `link` is its link."""

    def __init__(self, L, option, link):
        self.option = option
        self.link = link
        self.link_t = L.ltype(option.fvs[link])
        self.tag = next(k for k, o in enumerate(self.link_t.options) if _is(o, option))
        types = L.captured_types(option)
        # values the loop making the records does not change (a parameter the loop
        # reads): once per segment (a record that differs starts a new one)
        self.shared = [i for i in range(len(types))
                       if i != link and _outside_loop(L, option, i, to_ir(types[i]))]
        self.residuals = [i for i in range(len(types)) if i != link and i not in self.shared]
        td = L.engine.tm.target_data
        self.shared_ir = ir.LiteralStructType([to_ir(types[i]) for i in self.shared])
        self.header = SHARED + -(-self.shared_ir.get_abi_size(td) // 8) * 8
        # packed: a record is its values and its position, nothing more
        self.rec_ir = ir.LiteralStructType([to_ir(types[i]) for i in self.residuals] + [I16],
                                           packed=True)
        self.size = self.rec_ir.get_abi_size(td)
        self.max_count = min(1 << 16, max(FIRST, SEGMENT_BYTES // self.size))

    def field(self, i):
        """The field of the record that holds captured value number i."""
        return self.residuals.index(i)


def _outside_loop(L, option, i, t):
    """Is captured value number i of `option` a value that the recursion making its
    records cannot change: a node of a graph that the maker (the graph that makes the
    closure) does not reach through the graphs it uses?"""
    if not _comparable(t):
        return False
    maker = L.mng.parent(option.graph)
    owner = getattr(option.fvs[i], "graph", None)
    if maker is None or owner is None or owner is maker:
        return False
    return owner not in _reached(L, maker)


def _reached(L, maker):
    """The graphs `maker` reaches through the graphs it uses (once per maker)."""
    out = L.chains.get(("reached", maker))
    if out is None:
        out, todo = {maker}, [maker]
        while todo:
            for h in L.mng.graphs_used(todo.pop()):
                if h not in out:
                    out.add(h)
                    todo.append(h)
        L.chains[("reached", maker)] = out
    return out


def _comparable(t):
    """Can `shared_differ` compare values of LLVM type t bit for bit: numbers,
    pointers, and structs and arrays of them (an array's data, shape and strides)?"""
    if isinstance(t, (ir.DoubleType, ir.FloatType, ir.IntType, ir.PointerType)):
        return True
    if isinstance(t, ir.LiteralStructType):
        return all(_comparable(e) for e in t.elements)
    return isinstance(t, ir.ArrayType) and _comparable(t.element)


def _is(o, option):
    # two copies of a graph may share an option (see ltypes.Callee): either way
    return o.prim is None and (o == option or o.graph is option.graph)


def chain_layout(L, option):
    """The ChainLayout of function option `option`, or None if it is not a chain.
    Decided by its graph alone: whoever makes a record and whoever reads it agree."""
    if option.prim is not None or option.graph is None or option.bound:
        return None
    cache = L.chains
    if option.graph in cache:
        return cache[option.graph]
    links = []
    for i, v in enumerate(option.fvs):
        t = L.ltype(v)
        if isinstance(t, Func) and not t.single and any(_is(o, option) for o in t.options):
            links.append(i)
    lay = cache[option.graph] = ChainLayout(L, option, links[0]) if len(links) == 1 else None
    return lay


# ---- records ---------------------------------------------------------------------------


def _slot(b, lay, seg, i):
    """The address of record number i of segment `seg`."""
    return cg.at(b, seg, b.add(i64(lay.header), b.mul(i, i64(lay.size))))


def _segment_of(b, lay, p):
    """(the segment of record p, p's position in it, the record)."""
    rec = b.load(p, typ=lay.rec_ir)
    idx = b.zext(b.extract_value(rec, len(lay.residuals)), I64)
    seg = cg.at(b, p, b.sub(i64(0), b.add(i64(lay.header), b.mul(idx, i64(lay.size)))))
    return seg, idx, rec


def load(b, lay, p):
    """The captured values of chain record p, its link included (see the module doc)."""
    seg, idx, rec = _segment_of(b, lay, p)
    inside = b.icmp_signed("<", b.add(idx, i64(1)), cg.load_at(b, seg, COUNT, I64))
    return _with_link(b, lay, p, rec, seg, inside)


def _with_link(b, lay, p, rec, seg, inside):
    """The captured values of record p (`rec`, in segment `seg`; `inside`: is p not
    the segment's last?): the residuals, and the link computed."""
    nxt = cg.load_at(b, seg, NEXT, PTR)
    terminal = cg.load_at(b, seg, TERMINAL, to_ir(lay.link_t))
    following = b.select(inside, cg.at(b, p, lay.size), cg.at(b, nxt, lay.header))
    linked = b.insert_value(ir.Constant(CLOSURE_IR, [i64(lay.tag), NULL]), following, 1)
    link = b.select(b.or_(inside, b.icmp_unsigned("!=", nxt, NULL)), linked, terminal)
    return [link if i == lay.link else _captured(b, lay, rec, seg, i)
            for i in range(len(lay.residuals) + len(lay.shared) + 1)]


def _captured(b, lay, rec, seg, i):
    """Captured value number i of record `rec` (a residual), or of its segment."""
    if i in lay.shared:
        return shared_values(b, lay, seg)[lay.shared.index(i)]
    return b.extract_value(rec, lay.field(i))


def shared_values(b, lay, seg):
    """The values every record of segment `seg` shares."""
    block = b.load(cg.at(b, seg, SHARED), typ=lay.shared_ir)
    return [b.extract_value(block, j) for j in range(len(lay.shared))]


def store_shared(b, lay, seg, values):
    """Store in segment `seg`'s header the shared ones among `values` (all captured
    values)."""
    if lay.shared:
        block = ir.Constant(lay.shared_ir, ir.Undefined)
        for j, i in enumerate(lay.shared):
            block = b.insert_value(block, values[i], j)
        b.store(block, cg.at(b, seg, SHARED))


def shared_differ(b, lay, seg, values):
    """Does any shared one among `values` differ from segment `seg`'s (bit for bit)?"""
    out = ir.Constant(ir.IntType(1), 0)
    for old, i in zip(shared_values(b, lay, seg), lay.shared):
        out = b.or_(out, _differ(b, old, values[i]))
    return out


def _differ(b, old, new):
    t = new.type
    if isinstance(t, (ir.LiteralStructType, ir.ArrayType)):
        n = len(t.elements) if isinstance(t, ir.LiteralStructType) else t.count
        out = ir.Constant(ir.IntType(1), 0)
        for k in range(n):
            out = b.or_(out, _differ(b, b.extract_value(old, k), b.extract_value(new, k)))
        return out
    if isinstance(t, (ir.DoubleType, ir.FloatType)):  # (a NaN is the same NaN)
        bits = ir.IntType(64 if isinstance(t, ir.DoubleType) else 32)
        old, new = b.bitcast(old, bits), b.bitcast(new, bits)
    return b.icmp_unsigned("!=", old, new)


def residuals_at(b, lay, p, indices, seg):
    """The captured values number `indices` of record p, in segment `seg`."""
    rec = b.load(p, typ=lay.rec_ir)
    return [_captured(b, lay, rec, seg, i) for i in indices]


def _record(b, lay, values, idx):
    rec = ir.Constant(lay.rec_ir, ir.Undefined)
    for f, i in enumerate(lay.residuals):
        rec = b.insert_value(rec, values[i], f)
    return b.insert_value(rec, b.trunc(idx, I16), len(lay.residuals))


def new_segment(fl, lay, count, prev, site=None):
    """A segment for `count` records after segment `prev` (or NULL); its count says
    it is full (the last one's is set when its chain ends).  `site`: the error
    site of a failed allocation (else the node being lowered)."""
    b = fl.b
    nbytes = b.add(i64(lay.header), b.mul(count, i64(lay.size)))
    seg = fl.alloc(nbytes) if site is None else cg.alloc(b, fl.ctx, nbytes, site)
    cg.store_at(b, prev, seg, PREV)
    cg.store_at(b, NULL, seg, NEXT)
    cg.store_at(b, count, seg, COUNT)
    with b.if_then(b.icmp_unsigned("!=", prev, NULL)):
        cg.store_at(b, seg, prev, NEXT)
    return seg


def store(fl, lay, seg, idx, values):
    """Store record number `idx` of segment `seg`: `values` (all captured values; the
    link's is not stored); its address."""
    p = _slot(fl.b, lay, seg, idx)
    fl.b.store(_record(fl.b, lay, values, idx), p)
    return p


def make(fl, lay, values):
    """A record of `values` made outside a chain's loop: a segment of its own, whose
    terminal is the link it captures."""
    b = fl.b
    seg = new_segment(fl, lay, i64(1), NULL)
    cg.store_at(b, values[lay.link], seg, TERMINAL)
    store_shared(b, lay, seg, values)
    return store(fl, lay, seg, i64(0), values)


# ---- the backward walk -------------------------------------------------------------------


def walk_applies(L, entry, site, lay):
    """Can the recursion of chain option `lay`'s function (entry graph `entry`) through
    its link at `site` run as a ChainWalk?  The site must call the link, which
    nothing else uses, and no other call in the function may enter `entry`."""
    k = lay.option.fvs[lay.link]
    if site.graph is not entry or site.inputs[0] is not k:
        return False
    if any(u is not site or i != 0 for u, i in L.mng.users(k)):
        return False
    for g in L.tail_group(entry):
        for node in L.mng.nodes(g):
            if node is site or not isinstance(node, Apply) \
                    or node.inputs[0].is_constant(Primitive):
                continue
            gs = L.callee_graphs(node.inputs[0])
            if gs is None or entry in gs:
                return False
    return True


class ChainWalk(ExplicitStack):
    """The recursion of a chain option's function through its link (see the module
    doc).  Its state: the record of the level it is in (`cur`), that record's segment
    and the end of the segment's records.  Going down, the next record is found by
    comparing pointers; coming back, the level's record is the one before.  A level
    saves nothing, except the first (its values, in allocas) and one entered where
    the link leads out of the chain (to a record of another chain: its previous
    record and the depth of the last such level, 16 bytes)."""

    def __init__(self, fl, site, lay):
        super().__init__(fl, site)
        self.lay = lay
        b = fl.b
        with b.goto_block(fl.alloca_block):
            self.cur = cg.alloca(b, PTR, "chain.record")
            self.seg = cg.alloca(b, PTR, "chain.segment")
            self.end = cg.alloca(b, PTR, "chain.end")
            self.mark = cg.alloca(b, I64, "chain.mark")  # the depth of the last jump
            b.store(i64(0), self.mark)
        self.remat = None  # per value a level needs: its captured-value number, or a constant
        self.top = self.back = None  # allocas: the first level's values, popped ones

    def entry_type(self, live, values):
        fvs = self.lay.option.fvs
        # each live value is a residual (its number), or a constant (an empty
        # environment made before the call: the same at every level)
        idx = [v if isinstance(v, ir.Constant) else
               next((i for i, f in enumerate(fvs) if f is x), None)
               for x, v in zip(live, values)]
        if any(i is None or i == self.lay.link for i in idx):
            return super().entry_type(live, values)  # a value computed before the call
        self.remat = idx
        self.top = [self.fl.alloca(v.type, "chain.top") for v in values]
        self.back = [self.fl.alloca(v.type, "chain.back") for v in values]
        return ir.LiteralStructType([PTR, I64])

    def _locate(self, p):
        """Set the state to record p, found through its position."""
        b = self.fl.b
        b.store(p, self.cur)
        self._enter(_segment_of(b, self.lay, p)[0])

    def _enter(self, seg):
        """The state's segment is `seg`: where its records end."""
        b = self.fl.b
        b.store(seg, self.seg)
        b.store(_slot(b, self.lay, seg, cg.load_at(b, seg, COUNT, I64)), self.end)

    def push(self, values, record=None):
        if self.remat is None or record is None:
            return super().push(values, record)
        b = self.fl.b
        depth = b.load(self.depth, typ=I64)
        new_depth = b.add(depth, i64(1))
        with b.if_else(b.icmp_signed("==", depth, i64(0)), likely=False) as (top, deeper):
            with top:
                for slot, v in zip(self.top, values):
                    b.store(v, slot)
                self._locate(record)
            with deeper:
                self._step_down(record, new_depth)
        b.store(new_depth, self.depth)

    def _step_down(self, record, depth):
        """Move the state from the level's record to the next level's, `record`."""
        b = self.fl.b
        cur = b.load(self.cur, typ=PTR)
        after = cg.at(b, cur, self.lay.size)
        same = b.and_(b.icmp_unsigned("==", record, after),
                      b.icmp_unsigned("<", after, b.load(self.end, typ=PTR)))
        with b.if_else(same, likely=True) as (inside, outside):
            with inside:
                b.store(record, self.cur)
            with outside:
                nxt = cg.load_at(b, b.load(self.seg, typ=PTR), NEXT, PTR)
                following = b.and_(b.icmp_unsigned("!=", nxt, NULL),
                                   b.icmp_unsigned("==", record,
                                                   cg.at(b, nxt, self.lay.header)))
                with b.if_else(following) as (on, jump):
                    with on:
                        b.store(record, self.cur)
                        self._enter(nxt)
                    with jump:  # into another chain: remember where we were
                        self.save([cur, b.load(self.mark, typ=I64)], depth)
                        b.store(depth, self.mark)
                        self._locate(record)

    def level_values(self, opt, record):
        if self.remat is None:
            return super().level_values(opt, record)
        b = self.fl.b
        lay = self.lay
        # `record` is the state's: its segment is known, and where its records end
        inside = b.icmp_unsigned("<", cg.at(b, record, lay.size), b.load(self.end, typ=PTR))
        return _with_link(b, lay, record, b.load(record, typ=lay.rec_ir),
                          b.load(self.seg, typ=PTR), inside)

    def pop(self):
        if self.remat is None:
            return super().pop()
        b = self.fl.b
        lay = self.lay
        old = b.load(self.depth, typ=I64)
        depth = b.sub(old, i64(1))
        b.store(depth, self.depth)
        types = [slot.allocated_type for slot in self.top]
        with b.if_else(b.icmp_signed("==", depth, i64(0)), likely=False) as (top, deeper):
            with top:
                for slot, tmp, t in zip(self.top, self.back, types):
                    b.store(b.load(slot, typ=t), tmp)
            with deeper:
                self._step_back(old)
                fields = [i for i in self.remat if isinstance(i, int)]
                values = iter(residuals_at(b, lay, b.load(self.cur, typ=PTR), fields,
                                           b.load(self.seg, typ=PTR)))
                for i, tmp in zip(self.remat, self.back):
                    b.store(i if isinstance(i, ir.Constant) else next(values), tmp)
        return [b.load(tmp, typ=t) for tmp, t in zip(self.back, types)]

    def _step_back(self, depth):
        """Move the state from the record of the level at `depth` to the one before."""
        b = self.fl.b
        size = self.lay.size
        jumped = b.icmp_signed("==", depth, b.load(self.mark, typ=I64))
        with b.if_else(jumped, likely=False) as (back, chained):
            with back:  # the level was entered from another chain
                p, mark = self.restore()
                b.store(mark, self.mark)
                self._locate(p)
            with chained:
                cur = b.load(self.cur, typ=PTR)
                seg = b.load(self.seg, typ=PTR)
                first = b.icmp_unsigned("==", cur, cg.at(b, seg, self.lay.header))
                with b.if_else(first, likely=False) as (cross, within):
                    with cross:  # the last record of the previous segment
                        self._enter(cg.load_at(b, seg, PREV, PTR))
                        b.store(cg.at(b, b.load(self.end, typ=PTR), -size), self.cur)
                    with within:
                        b.store(cg.at(b, cur, -size), self.cur)
