"""Environments of unknown contents: a list in the arena, typed at run time.

Inference widens an environment to "unknown contents" (ENV_ANY, the LType `AnyEnv`)
where environments nest without bound: in the second derivative of a loop, the
sensitivity of an iteration's backpropagator holds the sensitivity of the next one's,
and so on.  Such an environment has no static layout, so it is a pointer to an
immutable list of nodes (null: empty) allocated in the call's arena:

    {i64 key, i64 tid, ptr value, ptr next}

`key` numbers the EnvKey within the module, `tid` the type of the value stored at
`value`.  A value is stored in its *canonical* type (every environment in it of
unknown contents, every array dimension unknown), so that the values stored under one
key have one type and can be added.  A key occurs once in a list: setting it copies
the nodes in front of the old one and shares the rest.

Reading converts the stored value to the type the reader expects (each reader knows
it: the default of env_getitem), and adding two environments adds the values of a key
by their type.  Both dispatch on `tid`, so their functions are defined once the whole
module is lowered (`finish`), when every stored type is known.
"""

import llvmlite.ir as ir

from ...errors import MyiaTypeError
from . import cg
from .cg import NULL, check_status, i32, i64
from .ltypes import ANY_ENV, AnyEnv, Array, Env, Scalar, Static, Tuple, to_ir
from .ops_struct import gadd
from .runtime import I32, I64, PREFIX, PTR, STATUS_OK
from .values import coerce, sizeof

NODE = ir.LiteralStructType([I64, I64, PTR, PTR])
KEY, TID, VALUE, NEXT = range(4)


def canonical(t):
    """The type a value of type `t` is stored in."""
    if isinstance(t, (Env, AnyEnv)):
        return ANY_ENV
    if isinstance(t, Tuple):
        return Tuple([canonical(e) for e in t.elems])
    if isinstance(t, Array):
        return Array(t.dtype, [None] * t.ndim)
    return t


def readable_as(src, dst):
    """True if `coerce` converts a value of canonical type `src` to `dst`."""
    if src == dst:
        return True
    if isinstance(src, Scalar) and isinstance(dst, Scalar):
        return True
    if isinstance(src, Array):
        return (isinstance(dst, Array) and src.dtype == dst.dtype and src.ndim == dst.ndim) \
            or (isinstance(dst, Scalar) and src.ndim == 0)
    if isinstance(src, Tuple):
        return isinstance(dst, Tuple) and len(src.elems) == len(dst.elems) \
            and all(readable_as(s, d) for s, d in zip(src.elems, dst.elems))
    if isinstance(src, AnyEnv):
        return isinstance(dst, (Env, AnyEnv))
    return isinstance(src, Static) and isinstance(dst, Static)


def _field(b, node, k, typ):
    return b.load(cg.gep(b, node, [i32(0), i32(k)], NODE), typ=typ)


def _set_field(b, node, k, v):
    b.store(v, cg.gep(b, node, [i32(0), i32(k)], NODE))


def _loop_over_list(b, head, init):
    """The header of a loop over the nodes of the list `head`, carrying a pointer
    (`init` at first).  Returns (node, carried, loop block, done block) and leaves the
    builder in the body, where node is not null; `_next_node` closes the loop."""
    f = b.function
    pre = b.block
    loop, body, done = (f.append_basic_block(n) for n in ("loop", "body", "done"))
    b.branch(loop)
    b.position_at_end(loop)
    node, carried = b.phi(PTR), b.phi(PTR)
    node.add_incoming(head, pre)
    carried.add_incoming(init, pre)
    b.cbranch(b.icmp_unsigned("==", node, NULL), done, body)
    b.position_at_end(body)
    return node, carried, loop, done


def _next_node(b, loop, node, carried, value):
    node.add_incoming(_field(b, node, NEXT, PTR), b.block)
    carried.add_incoming(value, b.block)
    b.branch(loop)


class DynamicEnvs:
    """The environments of unknown contents of one module (`Lowering.dynenv`)."""

    def __init__(self, L):
        self.L = L
        self.keys = {}  # EnvKey -> its number
        self.types = []  # tid -> canonical LType
        self.tids = {}
        self.readers = {}  # LType read -> its function (defined by `finish`)
        self.unfinished = []
        self.add_fn = None

    def key_id(self, key):
        return self.keys.setdefault(key, len(self.keys))

    def tid(self, t):
        k = self.tids.get(t)
        if k is None:
            k = self.tids[t] = len(self.types)
            self.types.append(t)
        return k

    def _function(self, name, args):
        f = ir.Function(self.L.module, ir.FunctionType(I32, [PTR, *args, PTR]),
                        f"{PREFIX}_env_{name}")
        f.linkage = "internal"
        return f

    def _call(self, fl, f, args, out_ir):
        out = fl.alloca(out_ir)
        check_status(fl.b, fl.b.call(f, [fl.ctx, *args, out]))
        return fl.b.load(out, typ=out_ir)

    # ---- what the program's code calls ------------------------------------------------

    def store(self, fl, env, key, v, t):
        """env with `key` set to `v` (of type t)."""
        b = fl.b
        c = canonical(t)
        box = fl.alloc(i64(max(8, sizeof(fl, to_ir(c)))))
        b.store(coerce(fl, v, t, c), box)
        return self.set(fl, env, i64(self.key_id(key)), i64(self.tid(c)), box)

    def set(self, fl, env, key, tid, box):
        return self._call(fl, self._set_fn(), [env, key, tid, box], PTR)

    def find(self, fl, env, key):
        """The node of `key` (an i64 value) in env, or null."""
        return fl.b.call(self._find_fn(), [env, key])

    def lookup(self, fl, env, key, out):
        """(found, the value of `key` as an `out`; undefined if not found)."""
        b = fl.b
        node = self.find(fl, env, i64(self.key_id(key)))
        found = b.icmp_unsigned("!=", node, NULL)
        tmp = fl.alloca(to_ir(out))
        with b.if_then(found):
            check_status(b, b.call(self._reader(out), [fl.ctx, node, tmp]))
        return found, b.load(tmp, typ=to_ir(out))

    def add(self, fl, x, y):
        if self.add_fn is None:
            self.add_fn = self._function("add", [PTR, PTR])
        return self._call(fl, self.add_fn, [x, y], PTR)

    def from_known(self, fl, v, t):
        """Env value v of type t as an environment of unknown contents."""
        b = fl.b
        acc = fl.alloca(PTR)
        b.store(NULL, acc)
        for k, (key, et) in enumerate(t.entries):
            slot = b.extract_value(v, k)
            with b.if_then(b.extract_value(slot, 0)):
                new = self.store(fl, b.load(acc, typ=PTR), key, b.extract_value(slot, 1), et)
                b.store(new, acc)
        return b.load(acc, typ=PTR)

    def to_known(self, fl, v, t):
        """An environment of unknown contents as an Env of type t (the keys t has)."""
        b = fl.b
        out = ir.Constant(to_ir(t), ir.Undefined)
        for k, (key, et) in enumerate(t.entries):
            found, value = self.lookup(fl, v, key, et)
            slot = ir.Constant(to_ir(t).elements[k], ir.Undefined)
            slot = b.insert_value(b.insert_value(slot, found, 0), value, 1)
            out = b.insert_value(out, slot, k)
        return out

    # ---- the functions ------------------------------------------------------------------

    def _find_fn(self):
        """ptr find(ptr env, i64 key): the node of key, or null."""
        try:
            return self.L.module.get_global(f"{PREFIX}_env_find")
        except KeyError:
            pass
        f = ir.Function(self.L.module, ir.FunctionType(PTR, [PTR, I64]), f"{PREFIX}_env_find")
        f.linkage = "internal"
        env, key = f.args
        b = ir.IRBuilder(f.append_basic_block("entry"))
        loop, check, hit, nxt, miss = (f.append_basic_block(n)
                                       for n in ("loop", "check", "hit", "next", "miss"))
        b.branch(loop)
        b.position_at_end(loop)
        p = b.phi(PTR)
        p.add_incoming(env, f.entry_basic_block)
        b.cbranch(b.icmp_unsigned("==", p, NULL), miss, check)
        b.position_at_end(check)
        b.cbranch(b.icmp_signed("==", _field(b, p, KEY, I64), key), hit, nxt)
        b.position_at_end(hit)
        b.ret(p)
        b.position_at_end(nxt)
        p.add_incoming(_field(b, p, NEXT, PTR), nxt)
        b.branch(loop)
        b.position_at_end(miss)
        b.ret(NULL)
        return f

    def _set_fn(self):
        """i32 set(ctx, ptr env, i64 key, i64 tid, ptr value, ptr out): a new node of
        key in front of a copy of the nodes before key's old one (the rest shared)."""
        # import here: lower.py imports this module before it defines Emitter
        from .lower import Emitter

        try:
            return self.L.module.get_global(f"{PREFIX}_env_set")
        except KeyError:
            pass
        f = self._function("set", [PTR, I64, I64, PTR])
        e = Emitter.helper(self.L, f)
        b = e.b
        _, env, key, tid, value, out = f.args
        head = self._node(e, key, tid, value)
        p, tail, loop, done = _loop_over_list(b, env, head)
        relink, copy = f.append_basic_block("relink"), f.append_basic_block("copy")
        b.cbranch(b.icmp_signed("==", _field(b, p, KEY, I64), key), relink, copy)
        b.position_at_end(relink)  # the old node of key: the rest follows the copies
        _set_field(b, tail, NEXT, _field(b, p, NEXT, PTR))
        b.branch(done)
        b.position_at_end(copy)
        n = self._node(e, _field(b, p, KEY, I64), _field(b, p, TID, I64),
                       _field(b, p, VALUE, PTR))
        _set_field(b, tail, NEXT, n)
        _next_node(b, loop, p, tail, n)
        b.position_at_end(done)
        b.store(head, out)
        b.ret(i32(STATUS_OK))
        return f

    def _node(self, e, key, tid, value):
        b = e.b
        n = e.alloc(i64(sizeof(e, NODE)))
        for k, v in ((KEY, key), (TID, tid), (VALUE, value), (NEXT, NULL)):
            _set_field(b, n, k, v)
        return n

    def _reader(self, out):
        f = self.readers.get(out)
        if f is None:
            f = self.readers[out] = self._function(f"read{len(self.readers)}", [PTR])
            self.unfinished.append((f, out))
        return f

    def finish(self):
        """Define the functions that dispatch on the stored types, now all known."""
        if self.add_fn is not None:
            self._define_add()
        while self.unfinished:
            self._define_reader(*self.unfinished.pop())

    def _dispatch(self, e, tid, tids, case):
        """switch on tid: `case(k)` emits the code for each of tids (and returns); any
        other type is a run-time error."""
        b = e.b
        f = e.fn
        default = f.append_basic_block("other")
        sw = b.switch(tid, default)
        for k in tids:
            bb = f.append_basic_block(f"tid{k}")
            sw.add_case(i64(k), bb)
            b.position_at_end(bb)
            case(k)
        b.position_at_end(default)
        e.fail(None, MyiaTypeError, "an environment of unknown contents held a value of "
                                    "another type than the one read or added to it")
        b.unreachable()

    def _define_reader(self, f, out):
        """i32 read(ctx, ptr node, ptr out): the node's value as an `out`."""
        # import here: lower.py imports this module before it defines Emitter
        from .lower import Emitter
        e = Emitter.helper(self.L, f)
        b = e.b
        _, node, outp = f.args

        def case(k):
            c = self.types[k]
            v = b.load(_field(b, node, VALUE, PTR), typ=to_ir(c))
            b.store(coerce(e, v, c, out), outp)
            b.ret(i32(STATUS_OK))

        tids = [k for k, c in enumerate(self.types) if readable_as(c, out)]
        self._dispatch(e, _field(b, node, TID, I64), tids, case)

    def _define_add(self):
        """i32 add(ctx, ptr x, ptr y, ptr out): x's and y's entries, those of the keys
        both have added."""
        # import here: lower.py imports this module before it defines Emitter
        from .lower import Emitter

        f = self.add_fn
        e = Emitter.helper(self.L, f)
        b = e.b
        _, x, y, out = f.args
        q, acc, loop, done = _loop_over_list(b, y, x)
        key, tid = _field(b, q, KEY, I64), _field(b, q, TID, I64)
        vq = _field(b, q, VALUE, PTR)
        p = self.find(e, x, key)
        absent, both, nxt = (f.append_basic_block(n) for n in ("absent", "both", "next"))
        b.cbranch(b.icmp_unsigned("==", p, NULL), absent, both)
        b.position_at_end(absent)
        acc_absent = self.set(e, acc, key, tid, vq)
        absent_end = b.block
        b.branch(nxt)
        b.position_at_end(both)
        e.error_if(b.icmp_signed("!=", _field(b, p, TID, I64), tid), None, MyiaTypeError,
                   "adding environments of unknown contents that hold values of different "
                   "types under one key")
        box = e.alloca(PTR)
        summed = f.append_basic_block("summed")

        def case(k):
            c = self.types[k]
            vx = b.load(_field(b, p, VALUE, PTR), typ=to_ir(c))
            vy = b.load(vq, typ=to_ir(c))
            s = gadd(e, vx, vy, c, c, c, None)
            new = e.alloc(i64(max(8, sizeof(e, to_ir(c)))))
            b.store(s, new)
            b.store(new, box)
            b.branch(summed)

        self._dispatch(e, tid, range(len(self.types)), case)
        b.position_at_end(summed)
        acc_both = self.set(e, acc, key, tid, b.load(box, typ=PTR))
        both_end = b.block
        b.branch(nxt)
        b.position_at_end(nxt)
        merged = b.phi(PTR)
        merged.add_incoming(acc_absent, absent_end)
        merged.add_incoming(acc_both, both_end)
        _next_node(b, loop, q, acc, merged)
        b.position_at_end(done)
        b.store(acc, out)
        b.ret(i32(STATUS_OK))

