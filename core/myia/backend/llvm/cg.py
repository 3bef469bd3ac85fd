"""Small code-generation helpers on top of llvmlite's IRBuilder: byte offsets, loops,
outlined kernels, and the runtime helpers.

Runtime helpers are of two kinds.  The small ones on hot paths (the arena's bump
allocation, polling) are defined by each module for itself (internal linkage, so LLVM
can inline them).  The others (the arena's slow paths, freeing, unboxing and boxing
arrays, strided copies) are defined once, in the engine's runtime module (see
`runtime_fn` and `runtime._compile_runtime`), and only declared by each program's
module: they are compiled once per machine (the runtime module is cached on disk
like any other), not once per program."""

import contextlib

import llvmlite.ir as ir

from .runtime import (ARENA_HEADER, BLOCK_CHUNK, BLOCK_OWN, CHUNK, CTX_POINTERS, GIL_YIELD_CYCLES,
                      SMALL_ALLOC,
                      CTX_INDEX, CTX_TYPE, I1, I8, I32, I64, PTR, SIGNAL_POLL_PERIOD,
                      PREFIX, STATUS_INTERRUPT, STATUS_NOMEM, STATUS_OK, VOID, declare,
                      declare_global)


def const(typ, value):
    return ir.Constant(typ, value)


# ---- a builder that folds what it knows ------------------------------------------------------


def _known_int(v):
    """The Python int of integer constant `v`, or None."""
    if isinstance(v, ir.Constant) and isinstance(v.type, ir.IntType):
        c = v.constant
        if isinstance(c, (bool, int)):
            return int(c)
    return None


def _int(typ, value):
    bits = typ.width
    value &= (1 << bits) - 1
    if bits > 1 and value >= 1 << (bits - 1):
        value -= 1 << bits
    return ir.Constant(typ, value)


def _unsigned(value, bits):
    return value & ((1 << bits) - 1)


_CMP = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


class Builder(ir.IRBuilder):
    """An IRBuilder that folds integer arithmetic and comparisons on constants,
    selects on a constant condition, and the extraction of a field that an
    `insertvalue` chain set (an array's static shape and strides, a tuple's items):
    less IR to print, parse, and to compile, especially where nothing optimizes it
    (the cold tier, see `tiers`).  Branches are not folded (phis may count on both
    edges)."""

    def _arith(self, op, fold, lhs, rhs, name, flags):
        a, c = _known_int(lhs), _known_int(rhs)
        if a is not None and c is not None and lhs.type == rhs.type:
            return _int(lhs.type, fold(a, c))
        return getattr(ir.IRBuilder, op)(self, lhs, rhs, name=name, flags=flags)

    def add(self, lhs, rhs, name="", flags=()):
        if _known_int(rhs) == 0:
            return lhs
        if _known_int(lhs) == 0:
            return rhs
        return self._arith("add", lambda a, c: a + c, lhs, rhs, name, flags)

    def sub(self, lhs, rhs, name="", flags=()):
        if _known_int(rhs) == 0:
            return lhs
        return self._arith("sub", lambda a, c: a - c, lhs, rhs, name, flags)

    def mul(self, lhs, rhs, name="", flags=()):
        if _known_int(rhs) == 1:
            return lhs
        if _known_int(lhs) == 1:
            return rhs
        if _known_int(rhs) == 0 or _known_int(lhs) == 0:
            return _int(lhs.type, 0)
        return self._arith("mul", lambda a, c: a * c, lhs, rhs, name, flags)

    def and_(self, lhs, rhs, name="", flags=()):
        if isinstance(lhs.type, ir.IntType) and lhs.type.width == 1:
            for x, y in ((lhs, rhs), (rhs, lhs)):
                k = _known_int(x)
                if k is not None:
                    return y if k & 1 else _int(lhs.type, 0)
        return self._arith("and_", lambda a, c: a & c, lhs, rhs, name, flags)

    def or_(self, lhs, rhs, name="", flags=()):
        if isinstance(lhs.type, ir.IntType) and lhs.type.width == 1:
            for x, y in ((lhs, rhs), (rhs, lhs)):
                k = _known_int(x)
                if k is not None:
                    return _int(lhs.type, 1) if k & 1 else y
        return self._arith("or_", lambda a, c: a | c, lhs, rhs, name, flags)

    def not_(self, value, name=""):
        k = _known_int(value)
        if k is not None:
            return _int(value.type, ~k)
        return ir.IRBuilder.not_(self, value, name=name)

    def _fold_icmp(self, signed, cmpop, lhs, rhs, name):
        a, c = _known_int(lhs), _known_int(rhs)
        if a is not None and c is not None and cmpop in _CMP:
            if not signed:
                bits = lhs.type.width
                a, c = _unsigned(a, bits), _unsigned(c, bits)
            elif lhs.type.width == 1:
                a, c = -(a & 1), -(c & 1)
            return ir.Constant(ir.IntType(1), int(_CMP[cmpop](a, c)))
        if signed:
            return ir.IRBuilder.icmp_signed(self, cmpop, lhs, rhs, name=name)
        return ir.IRBuilder.icmp_unsigned(self, cmpop, lhs, rhs, name=name)

    def icmp_signed(self, cmpop, lhs, rhs, name=""):
        return self._fold_icmp(True, cmpop, lhs, rhs, name)

    def icmp_unsigned(self, cmpop, lhs, rhs, name=""):
        return self._fold_icmp(False, cmpop, lhs, rhs, name)

    def select(self, cond, lhs, rhs, name="", flags=()):
        k = _known_int(cond)
        if k is not None:
            return lhs if k & 1 else rhs
        if lhs is rhs:
            return lhs
        return ir.IRBuilder.select(self, cond, lhs, rhs, name=name, flags=flags)

    def _cast(self, op, value, typ, name, signed):
        k = _known_int(value)
        if k is not None and isinstance(typ, ir.IntType):
            if not signed:
                k = _unsigned(k, value.type.width)
            elif value.type.width == 1:
                k = -(k & 1)
            return _int(typ, k)
        return getattr(ir.IRBuilder, op)(self, value, typ, name=name)

    def trunc(self, value, typ, name=""):
        return self._cast("trunc", value, typ, name, True)

    def zext(self, value, typ, name=""):
        return self._cast("zext", value, typ, name, False)

    def sext(self, value, typ, name=""):
        return self._cast("sext", value, typ, name, True)

    def extract_value(self, agg, idx, name=""):
        path = list(idx) if isinstance(idx, (list, tuple)) else [idx]
        v = agg
        while True:
            if isinstance(v, ir.InsertValue):
                ind = list(v.indices)
                if ind == path:
                    return v.value
                n = min(len(ind), len(path))
                if ind[:n] == path[:n]:
                    if len(ind) < len(path):  # a sub-aggregate was inserted
                        v, path = v.value, path[len(ind):]
                        continue
                    break  # a field of the extracted sub-aggregate was set
                v = v.aggregate
                continue
            if isinstance(v, ir.Constant) and isinstance(v.constant, (list, tuple)):
                c = v.constant[path[0]]
                if not isinstance(c, ir.Constant):
                    elem_ty = (v.type.elements[path[0]] if hasattr(v.type, "elements")
                               else v.type.element)
                    c = ir.Constant(elem_ty, c)
                if len(path) == 1:
                    return c
                v, path = c, path[1:]
                continue
            break
        return ir.IRBuilder.extract_value(self, agg, idx, name=name)


def i64(v):
    return ir.Constant(I64, v)


def i32(v):
    return ir.Constant(I32, v)


NULL = ir.Constant(PTR, None)


def alloca(b, typ, name=""):
    """An alloca whose value is an opaque pointer (llvmlite would make it typed)."""
    a = b.alloca(typ, name=name)
    a.type = PTR
    return a


def gep(b, ptr, indices, etype, name=""):
    """getelementptr etype, ptr, indices... (an opaque pointer)."""
    g = b.gep(ptr, indices, source_etype=etype, name=name)
    g.type = PTR
    return g


def at(b, ptr, offset):
    """ptr + offset bytes."""
    if isinstance(offset, int):
        if offset == 0:
            return ptr
        offset = i64(offset)
    return gep(b, ptr, [offset], I8)


def load_at(b, ptr, offset, typ, name=""):
    return b.load(at(b, ptr, offset), typ=typ, name=name)


def store_at(b, value, ptr, offset):
    b.store(value, at(b, ptr, offset))


def ctx_field_ptr(b, ctx, name):
    return gep(b, ctx, [i32(0), i32(CTX_INDEX[name])], CTX_TYPE)


def ctx_load(b, ctx, name):
    typ = PTR if name in CTX_POINTERS else I64
    return b.load(ctx_field_ptr(b, ctx, name), typ=typ)


def ctx_store(b, ctx, name, value):
    b.store(value, ctx_field_ptr(b, ctx, name))


@contextlib.contextmanager
def for_range(b, start, stop, step=1, name="i"):
    """`for i in range(start, stop, step)` (step a positive Python int); yields the
    index; the builder is left after the loop."""
    if isinstance(start, int):
        start = i64(start)
    if isinstance(stop, int):
        stop = i64(stop)
    pre = b.block
    cond_bb = b.append_basic_block(f"{name}.cond")
    body_bb = b.append_basic_block(f"{name}.body")
    end_bb = b.append_basic_block(f"{name}.end")
    b.branch(cond_bb)
    b.position_at_end(cond_bb)
    phi = b.phi(I64, name=name)
    phi.add_incoming(start, pre)
    b.cbranch(b.icmp_signed("<", phi, stop), body_bb, end_bb)
    b.position_at_end(body_bb)
    yield phi
    nxt = b.add(phi, i64(step), flags=["nsw"])
    phi.add_incoming(nxt, b.block)
    b.branch(cond_bb)
    b.position_at_end(end_bb)


def const_ptr(module, typ, value):
    """A pointer to a constant `value` of type `typ` (a private global of `module`):
    for the arguments that BLAS takes by pointer."""
    name = f"myia.const.{typ}.{value}".replace(" ", "")
    try:
        return module.get_global(name)
    except KeyError:
        pass
    g = ir.GlobalVariable(module, typ, name)
    g.linkage = "private"
    g.global_constant = True
    g.unnamed_addr = True
    g.initializer = ir.Constant(typ, value)
    return g


def frame_address(b):
    m = b.module
    try:
        fa = m.get_global("llvm.frameaddress.p0")
    except KeyError:
        fa = ir.Function(m, ir.FunctionType(PTR, [I32]), "llvm.frameaddress.p0")
    return b.ptrtoint(b.call(fa, [i32(0)]), I64)


def cycle_counter(module):
    return intrinsic(module, "llvm.readcyclecounter", I64, [])


def intrinsic(module, name, ret, args):
    try:
        return module.get_global(name)
    except KeyError:
        return ir.Function(module, ir.FunctionType(ret, args), name)


# ---- per-module runtime helpers ----------------------------------------------------------


def _internal(module, name, ret, args):
    try:
        return module.get_global(name), False
    except KeyError:
        f = ir.Function(module, ir.FunctionType(ret, args), name)
        f.linkage = "internal"
        return f, True


#: the helpers that the runtime module defines (see runtime._compile_runtime)
RUNTIME_FUNCTIONS = {}


def runtime_fn(name, ret, args, nocapture=()):
    """`@runtime_fn(name, ret, [args])` on `build(f)`: makes `get(module)`, which
    returns the helper `name` of `module`: defined (by `build`) in the engine's
    runtime module, declared (external) anywhere else.  The arguments numbered in
    `nocapture` (the call's context) do not escape: callers keep what LLVM knows of
    them (their fields stay in registers across the call)."""

    def deco(build):
        def get(module):
            try:
                return module.get_global(name)
            except KeyError:
                pass
            f = ir.Function(module, ir.FunctionType(ret, args), name)
            f.attributes.add("nounwind")
            for k in nocapture:
                f.args[k].add_attribute("captures(none)")
            if getattr(module, "myia_runtime", False):
                build(f)
            return f

        get.__doc__ = build.__doc__
        get.__name__ = build.__name__
        RUNTIME_FUNCTIONS[name] = get
        return get

    return deco


def alloc_fn(module, packed=False):
    """ptr myia_alloc(ctx, i64 nbytes): arena memory (32-byte aligned), freed when the
    call returns; null if memory is exhausted.  Small requests bump a pointer in the
    current chunk (inlined); a new chunk, and large requests (a block of their own, see
    runtime.ARENA_HEADER), are the runtime's `myia_alloc_slow`.

    `packed`: myia_alloc_packed, 8-byte aligned and sizes rounded to 8, for records
    that many iterations keep (a loop gradient's closures, `cons_loop`): a 24-byte
    record takes 24 bytes, not 32.  The bump pointer then stays 8-aligned, so
    myia_alloc rounds it up to 32 first."""
    name, grain = ("myia_alloc_packed", 8) if packed else ("myia_alloc", 32)
    f, new = _internal(module, name, PTR, [PTR, I64])
    if not new:
        return f
    ctx, n = f.args
    b = ir.IRBuilder(f.append_basic_block())
    fits_bb = f.append_basic_block("fits")
    slow_bb = f.append_basic_block("slow")
    # a record of values that take no room (functions known statically) asks for 0
    # bytes: it gets 1, so that the answer is never the null of a chunk not yet made
    n = b.or_(n, b.zext(b.icmp_unsigned("==", n, i64(0)), I64))
    size = b.and_(b.add(n, i64(grain - 1)), i64(-grain))
    small = b.icmp_unsigned("<=", size, i64(SMALL_ALLOC))
    cur = b.ptrtoint(ctx_load(b, ctx, "bump_cur"), I64)
    if not packed:
        cur = b.and_(b.add(cur, i64(31)), i64(~31))
    end = ctx_load(b, ctx, "bump_end")
    room = b.sub(b.ptrtoint(end, I64), cur)
    b.cbranch(b.and_(small, b.icmp_signed(">=", room, size)), fits_bb, slow_bb)
    b.position_at_end(fits_bb)
    start = b.inttoptr(cur, PTR)
    ctx_store(b, ctx, "bump_cur", at(b, start, size))
    b.ret(start)
    b.position_at_end(slow_bb)
    b.ret(b.call(alloc_slow_fn(module), [ctx, n]))
    return f


@runtime_fn("myia_alloc_slow", PTR, [PTR, I64], nocapture=(0,))
def alloc_slow_fn(f):
    """ptr myia_alloc_slow(ctx, i64 nbytes): what myia_alloc does when the current
    chunk has no room: a new chunk for a small request, a block of its own for a
    large one; null if memory is exhausted."""
    _alloc_slow(f, chunks=True)


@runtime_fn("myia_alloc_block", PTR, [PTR, I64], nocapture=(0,))
def alloc_block_fn(f):
    """ptr myia_alloc_block(ctx, i64 nbytes): a block of its own, whatever the size:
    for a small array that must outlive the chunk it would share (the cotangents a
    checkpoint's recomputation returns: see FnLowering.returned_alone)."""
    _alloc_slow(f, chunks=False)


def _alloc_slow(f, chunks):
    module = f.module
    ctx, n = f.args
    b = ir.IRBuilder(f.append_basic_block())
    aligned_alloc = declare(module, "aligned_alloc")
    chunk_bb = f.append_basic_block("chunk")
    big_bb = f.append_basic_block("big")
    fail = f.append_basic_block("fail")
    over = f.append_basic_block("over_limit")
    size = b.and_(b.add(n, i64(31)), i64(~31))
    small = b.icmp_unsigned("<=", size, i64(SMALL_ALLOC)) if chunks else ir.Constant(I1, 0)
    # what the call will hold after this request, against the limit (0: none); the
    # error reports err_a = the bytes asked, err_b = the limit, err_c = those held
    total = b.and_(b.add(n, i64(ARENA_HEADER + 63)), i64(~63))
    held = ctx_load(b, ctx, "allocated")
    after = b.add(held, b.select(small, i64(CHUNK), total))
    limit = b.load(declare_global(module, "myia_memory_limit", I64), typ=I64)
    past = b.and_(b.icmp_unsigned("!=", limit, i64(0)), b.icmp_unsigned(">", after, limit))
    go = b.append_basic_block("go")
    b.cbranch(past, over, go)
    b.position_at_end(over)
    ctx_store(b, ctx, "err_a", n)
    ctx_store(b, ctx, "err_b", limit)
    ctx_store(b, ctx, "err_c", held)
    b.ret(NULL)
    b.position_at_end(go)
    ctx_store(b, ctx, "allocated", after)
    b.cbranch(small, chunk_bb, big_bb)
    # a new chunk
    b.position_at_end(chunk_bb)
    chunk = b.call(aligned_alloc, [i64(64), i64(CHUNK)])
    ok_chunk = b.append_basic_block("chunk.ok")
    b.cbranch(b.icmp_unsigned("==", chunk, NULL), fail, ok_chunk)
    b.position_at_end(ok_chunk)
    b.store(ctx_load(b, ctx, "arena"), chunk)
    store_at(b, i64(CHUNK - ARENA_HEADER), chunk, 8)
    store_at(b, NULL, chunk, 16)
    store_at(b, i64(BLOCK_CHUNK), chunk, 24)
    ctx_store(b, ctx, "arena", chunk)
    data = at(b, chunk, ARENA_HEADER)
    ctx_store(b, ctx, "bump_cur", at(b, data, size))
    ctx_store(b, ctx, "bump_end", at(b, chunk, CHUNK))
    b.ret(data)
    # large: a block of its own
    b.position_at_end(big_bb)
    block = b.call(aligned_alloc, [i64(64), total])
    ok = b.append_basic_block("big.ok")
    b.cbranch(b.icmp_unsigned("==", block, NULL), fail, ok)
    b.position_at_end(fail)  # the machine's memory: no limit to report
    ctx_store(b, ctx, "err_a", n)
    ctx_store(b, ctx, "err_b", i64(0))
    ctx_store(b, ctx, "err_c", held)
    b.ret(NULL)
    b.position_at_end(ok)
    b.store(ctx_load(b, ctx, "arena"), block)
    store_at(b, n, block, 8)
    store_at(b, NULL, block, 16)
    store_at(b, i64(BLOCK_OWN), block, 24)
    ctx_store(b, ctx, "arena", block)
    b.ret(at(b, block, ARENA_HEADER))


@runtime_fn("myia_arena_free", VOID, [PTR], nocapture=(0,))
def arena_free_fn(f):
    """void myia_arena_free(ctx): free the call's blocks, except those that escaped
    (owned by a capsule: the base of a returned array)."""
    module = f.module
    (ctx,) = f.args
    b = ir.IRBuilder(f.append_basic_block())
    entry = b.block
    loop = b.append_basic_block("loop")
    body = b.append_basic_block("body")
    do_free = b.append_basic_block("free")
    nxt_bb = b.append_basic_block("next")
    done = b.append_basic_block("done")
    head = ctx_load(b, ctx, "arena")
    b.branch(loop)
    b.position_at_end(loop)
    cur = b.phi(PTR)
    cur.add_incoming(head, entry)
    b.cbranch(b.icmp_unsigned("==", cur, NULL), done, body)
    b.position_at_end(body)
    nxt = b.load(cur, typ=PTR)
    cap = load_at(b, cur, 16, PTR)
    b.cbranch(b.icmp_unsigned("==", cap, NULL), do_free, nxt_bb)
    b.position_at_end(do_free)
    b.call(declare(module, "free"), [cur])
    b.branch(nxt_bb)
    b.position_at_end(nxt_bb)
    cur.add_incoming(nxt, nxt_bb)
    b.branch(loop)
    b.position_at_end(done)
    ctx_store(b, ctx, "arena", NULL)
    ctx_store(b, ctx, "bump_cur", NULL)
    ctx_store(b, ctx, "bump_end", NULL)
    b.ret_void()


def _block_holds(b, block, addr):
    """Does the arena block `block` hold the address `addr` (an i64) in its data?  (A
    block of 0 bytes holds its first address.)"""
    lo = b.add(b.ptrtoint(block, I64), i64(ARENA_HEADER))
    size = load_at(b, block, 8, I64)
    hi = b.add(lo, b.select(b.icmp_signed("<", size, i64(1)), i64(1), size))
    return b.and_(b.icmp_unsigned(">=", addr, lo), b.icmp_unsigned("<", addr, hi))


@runtime_fn("myia_arena_release", VOID, [PTR, PTR, PTR, I64], nocapture=(0, 2))
def arena_release_fn(f):
    """void myia_arena_release(ctx, ptr mark, ptr keep, i64 nkeep): free the blocks
    made since `mark` (the arena's head when the function began) except those that
    hold one of the `nkeep` addresses at `keep` (the data of the arrays a loop carries
    to its next iteration) or escaped; see `FnLowering.release_arena`.  Without it a
    loop kept every iteration's arrays until its call returned: a whole training epoch
    in the subset held GBs."""
    module = f.module
    ctx, mark, keep, nkeep = f.args
    b = ir.IRBuilder(f.append_basic_block())
    entry = b.block
    loop = b.append_basic_block("loop")
    body = b.append_basic_block("body")
    scan = b.append_basic_block("scan")
    scan_body = b.append_basic_block("scan.body")
    keep_bb = b.append_basic_block("keep")
    drop_bb = b.append_basic_block("drop")
    nxt_bb = b.append_basic_block("next")
    done = b.append_basic_block("done")
    link0 = ctx_field_ptr(b, ctx, "arena")  # where the pointer to the current block is
    head = b.load(link0, typ=PTR)
    b.branch(loop)
    b.position_at_end(loop)
    cur = b.phi(PTR, "cur")
    link = b.phi(PTR, "link")  # the kept block (or ctx.arena) whose next is `cur`
    cur.add_incoming(head, entry)
    link.add_incoming(link0, entry)
    stop = b.or_(b.icmp_unsigned("==", cur, mark), b.icmp_unsigned("==", cur, NULL))
    b.cbranch(stop, done, body)
    # does `cur` hold a kept address?  (an escaped block is always kept)
    b.position_at_end(body)
    nxt = b.load(cur, typ=PTR)
    size = load_at(b, cur, 8, I64)
    escaped = b.icmp_unsigned("!=", load_at(b, cur, 16, PTR), NULL)
    b.cbranch(escaped, keep_bb, scan)
    b.position_at_end(scan)
    j = b.phi(I64, "j")
    j.add_incoming(i64(0), body)
    b.cbranch(b.icmp_signed("<", j, nkeep), scan_body, drop_bb)
    b.position_at_end(scan_body)
    inside = _block_holds(b, cur, b.ptrtoint(b.load(gep(b, keep, [j], PTR), typ=PTR), I64))
    j.add_incoming(b.add(j, i64(1)), scan_body)
    b.cbranch(inside, keep_bb, scan)
    b.position_at_end(keep_bb)
    b.store(cur, link)
    b.branch(nxt_bb)
    b.position_at_end(drop_bb)
    # what alloc_slow_fn counted for it; the chunk being bumped is forgotten
    chunk = b.icmp_signed("==", load_at(b, cur, 24, I64), i64(BLOCK_CHUNK))
    counted = b.select(chunk, i64(CHUNK), b.and_(b.add(size, i64(ARENA_HEADER + 63)), i64(~63)))
    ctx_store(b, ctx, "allocated", b.sub(ctx_load(b, ctx, "allocated"), counted))
    bumped = b.icmp_unsigned("==", ctx_load(b, ctx, "bump_end"), at(b, cur, CHUNK))
    with b.if_then(b.and_(chunk, bumped)):
        ctx_store(b, ctx, "bump_cur", NULL)
        ctx_store(b, ctx, "bump_end", NULL)
    b.call(declare(module, "free"), [cur])
    dropped = b.block
    b.branch(nxt_bb)
    b.position_at_end(nxt_bb)
    new_link = b.phi(PTR)
    new_link.add_incoming(cur, keep_bb)  # (a block's first field is its next)
    new_link.add_incoming(link, dropped)
    cur.add_incoming(nxt, nxt_bb)
    link.add_incoming(new_link, nxt_bb)
    b.branch(loop)
    b.position_at_end(done)
    b.store(cur, link)
    b.ret_void()


@runtime_fn("myia_arena_owner", PTR, [PTR, PTR], nocapture=(0,))
def arena_owner_fn(f):
    """PyObject *myia_arena_owner(ctx, ptr data): a new reference to the capsule that
    owns the arena block of its own holding `data` (made at first request), or null
    (data in a chunk, or not in the arena)."""
    module = f.module
    ctx, data = f.args
    b = ir.IRBuilder(f.append_basic_block())
    entry = b.block
    loop = b.append_basic_block("loop")
    body = b.append_basic_block("body")
    inside = b.append_basic_block("inside")
    make = b.append_basic_block("make")
    give = b.append_basic_block("give")
    nxt_bb = b.append_basic_block("next")
    none = b.append_basic_block("none")
    addr = b.ptrtoint(data, I64)
    head = ctx_load(b, ctx, "arena")
    b.branch(loop)
    b.position_at_end(loop)
    cur = b.phi(PTR)
    cur.add_incoming(head, entry)
    b.cbranch(b.icmp_unsigned("==", cur, NULL), none, body)
    b.position_at_end(body)
    check = b.append_basic_block("own?")
    kind = load_at(b, cur, 24, I64)
    b.cbranch(b.icmp_signed("==", kind, i64(BLOCK_OWN)), check, nxt_bb)
    b.position_at_end(check)
    ok = _block_holds(b, cur, addr)
    b.cbranch(ok, inside, nxt_bb)
    b.position_at_end(inside)
    cap = load_at(b, cur, 16, PTR)
    b.cbranch(b.icmp_unsigned("==", cap, NULL), make, give)
    b.position_at_end(make)
    destructor = declare(module, "myia_capsule_free")
    newcap = b.call(declare(module, "PyCapsule_New"), [cur, NULL, destructor])
    store_at(b, newcap, cur, 16)
    b.ret(newcap)  # the block keeps a borrowed pointer; this reference is the caller's
    b.position_at_end(give)
    b.call(declare(module, "Py_IncRef"), [cap])
    b.ret(cap)
    b.position_at_end(nxt_bb)
    cur.add_incoming(b.load(cur, typ=PTR), nxt_bb)
    b.branch(loop)
    b.position_at_end(none)
    b.ret(NULL)
    return f


def poll_fn(module):
    """i32 myia_poll(ctx): STATUS_INTERRUPT if an interrupt was requested, else
    STATUS_OK.  A poll only counts down; every SIGNAL_POLL_PERIOD polls it reads the
    interrupt flag and, where the GIL is held, runs the Python signal handlers
    (PyErr_CheckSignals: SIGINT raises KeyboardInterrupt, or a handler may set the
    flag) and, every GIL_YIELD_CYCLES, lets the other Python threads run a moment (as
    the interpreter does every 5 ms; one of them may set the flag)."""
    f, new = _internal(module, "myia_poll", I32, [PTR])
    if not new:
        return f
    (ctx,) = f.args
    b = ir.IRBuilder(f.append_basic_block())
    stop = b.append_basic_block("stop")
    check = b.append_basic_block("check")
    ok = b.append_basic_block("ok")
    c = b.sub(ctx_load(b, ctx, "countdown"), i64(1))
    ctx_store(b, ctx, "countdown", c)
    b.cbranch(b.icmp_signed("<=", c, i64(0)), check, ok)
    b.position_at_end(check)
    ctx_store(b, ctx, "countdown", i64(SIGNAL_POLL_PERIOD))
    signals = b.icmp_signed("!=", ctx_load(b, ctx, "check_signals"), i64(0))
    call_bb = b.append_basic_block("call")
    flag_bb = b.append_basic_block("flag")
    b.cbranch(signals, call_bb, flag_bb)
    b.position_at_end(call_bb)
    now = b.call(cycle_counter(module), [])
    due = b.icmp_signed(">", b.sub(now, ctx_load(b, ctx, "last_yield")), i64(GIL_YIELD_CYCLES))
    with b.if_then(due, likely=False):
        ctx_store(b, ctx, "last_yield", now)
        ts = b.call(declare(module, "PyEval_SaveThread"), [])
        b.call(declare(module, "PyEval_RestoreThread"), [ts])
    r = b.call(declare(module, "PyErr_CheckSignals"), [])
    b.cbranch(b.icmp_signed("!=", r, i32(0)), stop, flag_bb)
    b.position_at_end(flag_bb)
    flag = declare_global(module, "myia_interrupt_flag", I32)
    v = b.load_atomic(flag, ordering="monotonic", align=4, typ=I32)
    b.cbranch(b.icmp_signed("!=", v, i32(0)), stop, ok)
    b.position_at_end(stop)
    b.ret(i32(STATUS_INTERRUPT))
    b.position_at_end(ok)
    b.ret(i32(STATUS_OK))
    return f


def ret_status_if(b, cond, status_value):
    """if cond: return status_value (an i32 value)."""
    if _known_int(cond) == 0:
        return
    with b.if_then(cond, likely=False):
        b.ret(status_value)


def check_status(b, st):
    """Propagate a non-OK status: if st != 0: return st."""
    ret_status_if(b, b.icmp_signed("!=", st, i32(STATUS_OK)), st)


def alloc(b, ctx, nbytes, site=-1, packed=False, own=False):
    """Allocate nbytes in the call's arena; returns STATUS_NOMEM on failure, with
    ctx.err_site = `site` (the error table's entry for the node that asked).
    `packed`: 8-byte aligned, for records (see alloc_fn); `own`: in a block of its
    own (see alloc_block_fn)."""
    p = b.call(alloc_block_fn(b.module) if own else alloc_fn(b.module, packed), [ctx, nbytes])
    with b.if_then(b.icmp_unsigned("==", p, NULL), likely=False):
        ctx_store(b, ctx, "err_site", i64(site))
        b.ret(i32(STATUS_NOMEM))
    return p


def interrupt_flag_load(b):
    flag = declare_global(b.module, "myia_interrupt_flag", I32)
    return b.load_atomic(flag, ordering="monotonic", align=4, typ=I32)


__all__ = ["I1", "I8", "I32", "I64", "PTR", "at", "load_at", "store_at", "for_range"]


# ---- kernels: loop nests outlined into functions of their own ------------------------------


@contextlib.contextmanager
def outlined(fl, what="kernel"):
    """`with outlined(fl, "ew"): ...emit a loop nest...`: the code emitted in the block
    goes into a function of its own, a *kernel* (named PREFIX_k<n>_<what>), called where
    the builder was.  The values it uses from the enclosing function become the
    kernel's parameters (found after the fact: any operand defined outside it).

    Kernels keep the loops of array code out of the functions that call them: a
    function whose loops are all kernels is straight-line code, which the engine
    compiles quickly without optimizing it, while the kernels are optimized (see
    `tiers`).  LLVM inlines a kernel again where the whole module is optimized.

    The block must not define values used after it (its results go through memory).
    Nested blocks, and blocks where the builder is not at the end of its block, are
    emitted inline; so is a block that returns or branches out (it is moved back
    into the enclosing function)."""
    b = fl.b
    home = b.block
    if getattr(fl, "in_kernel", False) or not hasattr(fl, "alloca_block") or \
            home.is_terminated or b._anchor != len(home.instructions):
        yield
        return
    module = home.function.module
    n = getattr(module, "myia_kernel_count", 0) + 1
    module.myia_kernel_count = n
    name = f"{PREFIX}_k{n}_{what}"
    tmp = ir.Function(module, ir.FunctionType(VOID, []), name + ".region")
    entry = tmp.append_basic_block("entry")  # allocas only (see FnLowering.alloca)
    start = tmp.append_basic_block("start")
    saved_alloca = fl.alloca_block
    fl.alloca_block = entry
    fl.in_kernel = True
    b.position_at_end(start)
    try:
        yield
        b.ret_void()
    finally:
        fl.alloca_block = saved_alloca
        fl.in_kernel = False
        b.position_at_end(home)
    ir.IRBuilder(entry).branch(start)
    try:
        kernel, args = _extract(module, tmp, name)
    except _NotAKernel:
        _inline_back(fl, tmp, home, saved_alloca)
        return
    b.call(kernel, args)


class _NotAKernel(Exception):
    pass


def _rename(v, scope):
    v._name = scope.register(v.name, deduplicate=True)
    v.__dict__.pop("_StringReferenceCaching__cached_refstr", None)
    v.__dict__.pop("_StrCaching__cached_str", None)


def _inline_back(fl, region, home, alloca_block):
    """Move the blocks of `region` back where they were emitted (after `home`), its
    allocas into `alloca_block`; the builder is left after them."""
    b = fl.b
    fn = home.parent
    module = fn.module
    entry, start = region.blocks[0], region.blocks[1]
    last = [blk for blk in region.blocks if blk.instructions and
            isinstance(blk.instructions[-1], ir.Ret) and blk.instructions[-1].return_value is None]
    allocas = [ins for ins in entry.instructions if isinstance(ins, ir.AllocaInstr)]
    pos = len(alloca_block.instructions) - (1 if alloca_block.is_terminated else 0)
    for ins in allocas:
        ins.parent = alloca_block
        _rename(ins, fn.scope)
    alloca_block.instructions[pos:pos] = allocas
    cont = fn.append_basic_block("region.end")
    for blk in region.blocks[1:]:
        blk.parent = fn
        blk.scope = fn.scope
        _rename(blk, fn.scope)
        for ins in blk.instructions:
            if ins.name:
                _rename(ins, fn.scope)
        fn.blocks.insert(len(fn.blocks) - 1, blk)
    for blk in last:  # `ret void` (the end of the region) -> branch to the continuation
        blk.instructions.pop()
        blk.terminator = None
        ir.IRBuilder(blk).branch(cont)
    del module.globals[region.name]
    b.position_at_end(home)
    b.branch(start)
    b.position_at_end(cont)


def _extract(module, region, name):
    """The function `name` made of the blocks of `region` (a void function without
    parameters), whose operands defined in other functions become parameters;
    returns (function, the values to pass)."""
    outer = {}  # id(value) -> (index, value)

    def outside(v):
        if isinstance(v, ir.Instruction):
            return v.parent.parent is not region
        if isinstance(v, ir.Argument):
            return v.parent is not region
        return False

    def collect(v):
        if outside(v) and id(v) not in outer:
            outer[id(v)] = (len(outer), v)

    for blk in region.blocks:
        for ins in blk.instructions:
            if isinstance(ins, ir.Ret) and ins.return_value is not None:
                raise _NotAKernel(f"{name} returns")
            ops = list(ins.operands)
            if isinstance(ins, ir.PhiInstr):
                ops += [v for v, _ in ins.incomings]
                for _, blk2 in ins.incomings:
                    if blk2.parent is not region:
                        raise _NotAKernel(f"{name} has a phi of an outer block")
            for op in ops:
                if isinstance(op, ir.Block) and op.parent is not region:
                    raise _NotAKernel(f"{name} branches out")
                collect(op)
    values = [v for _, v in sorted(outer.values(), key=lambda iv: iv[0])]
    f = ir.Function(module, ir.FunctionType(VOID, [v.type for v in values]), name)
    f.linkage = "internal"
    for a in f.args:
        a._name = region.scope.register("in", deduplicate=True)
    f.scope = region.scope
    f.blocks = region.blocks
    for blk in f.blocks:
        blk.parent = f
    del module.globals[region.name]
    repl = {id(v): f.args[k] for k, v in enumerate(values)}

    def m(v):
        return repl.get(id(v), v)

    for blk in f.blocks:
        for ins in blk.instructions:
            ins.operands = [m(op) for op in ins.operands]
            if isinstance(ins, ir.PhiInstr):
                ins.incomings = [(m(v), blk2) for v, blk2 in ins.incomings]
            for attr in ("pointer", "aggregate", "value"):
                v = ins.__dict__.get(attr)
                if v is not None and id(v) in repl:
                    setattr(ins, attr, repl[id(v)])
            if isinstance(ins, ir.GEPInstr):
                ins.indices = [m(v) for v in ins.indices]
    return f, values
