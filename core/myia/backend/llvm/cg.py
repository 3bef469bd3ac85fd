"""Small code-generation helpers on top of llvmlite's IRBuilder: byte offsets, loops,
and the runtime helpers (arena allocation, polling) that each module defines for
itself (internal linkage, so LLVM can inline them)."""

import contextlib

import llvmlite.ir as ir

from .runtime import (ARENA_HEADER, BLOCK_CHUNK, BLOCK_OWN, CHUNK, CTX_POINTERS, GIL_YIELD_CYCLES,
                      SMALL_ALLOC,
                      CTX_INDEX, CTX_TYPE, I1, I8, I32, I64, PTR, SIGNAL_POLL_PERIOD,
                      STATUS_INTERRUPT, STATUS_NOMEM, STATUS_OK, VOID, declare, declare_global)


def const(typ, value):
    return ir.Constant(typ, value)


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


def alloc_fn(module):
    """ptr myia_alloc(ctx, i64 nbytes): arena memory (32-byte aligned), freed when the
    call returns; null if memory is exhausted.  Small requests bump a pointer in the
    current chunk; large ones get their own block (see runtime.ARENA_HEADER)."""
    f, new = _internal(module, "myia_alloc", PTR, [PTR, I64])
    if not new:
        return f
    ctx, n = f.args
    b = ir.IRBuilder(f.append_basic_block())
    aligned_alloc = declare(module, "aligned_alloc")
    small_bb = f.append_basic_block("small")
    fits_bb = f.append_basic_block("fits")
    chunk_bb = f.append_basic_block("chunk")
    big_bb = f.append_basic_block("big")
    fail = f.append_basic_block("fail")
    size = b.and_(b.add(n, i64(31)), i64(~31))
    b.cbranch(b.icmp_unsigned("<=", size, i64(SMALL_ALLOC)), small_bb, big_bb)
    # small: bump
    b.position_at_end(small_bb)
    cur = ctx_load(b, ctx, "bump_cur")
    end = ctx_load(b, ctx, "bump_end")
    room = b.sub(b.ptrtoint(end, I64), b.ptrtoint(cur, I64))
    b.cbranch(b.icmp_signed(">=", room, size), fits_bb, chunk_bb)
    b.position_at_end(fits_bb)
    ctx_store(b, ctx, "bump_cur", at(b, cur, size))
    b.ret(cur)
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
    total = b.and_(b.add(n, i64(ARENA_HEADER + 63)), i64(~63))
    block = b.call(aligned_alloc, [i64(64), total])
    ok = b.append_basic_block("big.ok")
    b.cbranch(b.icmp_unsigned("==", block, NULL), fail, ok)
    b.position_at_end(fail)
    b.ret(NULL)
    b.position_at_end(ok)
    b.store(ctx_load(b, ctx, "arena"), block)
    store_at(b, n, block, 8)
    store_at(b, NULL, block, 16)
    store_at(b, i64(BLOCK_OWN), block, 24)
    ctx_store(b, ctx, "arena", block)
    b.ret(at(b, block, ARENA_HEADER))
    return f


def arena_free_fn(module):
    """void myia_arena_free(ctx): free the call's blocks, except those that escaped
    (owned by a capsule: the base of a returned array)."""
    f, new = _internal(module, "myia_arena_free", VOID, [PTR])
    if not new:
        return f
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
    return f


def arena_owner_fn(module):
    """PyObject *myia_arena_owner(ctx, ptr data): a new reference to the capsule that
    owns the arena block of its own holding `data` (made at first request), or null
    (data in a chunk, or not in the arena)."""
    f, new = _internal(module, "myia_arena_owner", PTR, [PTR, PTR])
    if not new:
        return f
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
    lo = b.add(b.ptrtoint(cur, I64), i64(ARENA_HEADER))
    size = load_at(b, cur, 8, I64)
    size1 = b.select(b.icmp_signed("<", size, i64(1)), i64(1), size)
    hi = b.add(lo, size1)
    ok = b.and_(b.icmp_unsigned(">=", addr, lo), b.icmp_unsigned("<", addr, hi))
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
    with b.if_then(cond, likely=False):
        b.ret(status_value)


def check_status(b, st):
    """Propagate a non-OK status: if st != 0: return st."""
    ret_status_if(b, b.icmp_signed("!=", st, i32(STATUS_OK)), st)


def alloc(b, ctx, nbytes):
    """Allocate nbytes in the call's arena; returns STATUS_NOMEM on failure."""
    p = b.call(alloc_fn(b.module), [ctx, nbytes])
    ret_status_if(b, b.icmp_unsigned("==", p, NULL), i32(STATUS_NOMEM))
    return p


def interrupt_flag_load(b):
    flag = declare_global(b.module, "myia_interrupt_flag", I32)
    return b.load_atomic(flag, ordering="monotonic", align=4, typ=I32)


__all__ = ["I1", "I8", "I32", "I64", "PTR", "at", "load_at", "store_at", "for_range"]
