"""Lowering typed graphs to LLVM IR.

Input: a specialized, optimized program (every node has its type, see `abstracts`).
Output: an LLVM module with one function per *entry* graph and the native entry
point of the root (see `wrapper`).

Functions.  A graph `g` with free variables `v1..vk` (in the manager's order) and
parameters `p1..pn` is lowered as if lambda-lifted:

    i32 @g(ptr ctx, v1, ..., vk, p1, ..., pn, ptr out)

(a closure-converted program simply has no free variables).  An LLVM function holds
its entry graph and every graph reachable from it through *tail calls*: each of them
is a block whose phis are its free variables and parameters, and a tail call is a
branch to that block.  So a loop (a graph calling itself in tail position, through
`switch(c, body, after)()`) becomes a real loop; a call that is not in tail position
is a native call of the callee's own function.

Calls.  The callee of an Apply is resolved statically where it can be: a graph
constant (a direct call, its free variables passed from the caller, who owns them or
has them as free variables itself), a primitive (lowered inline), `switch(c, f, g)`
(a conditional branch, each side resolved again), or a value of a function type.
Function values are defunctionalized: inference knows the set of functions a value
may be, so a value is a pointer to an arena record of the values its function
captures (nothing if none), and a value that may be one of several functions is
{tag, record}; its call is a branch on the tag to direct calls, which LLVM may
inline.  There are no indirect calls.

Recursion.  A function on a cycle of the call graph checks, on entry, that the stack
pointer is above the call's stack limit (else STATUS_STACK, see `dispatch`) and polls
the interrupt flag; a loop polls at each back edge.

Errors.  A primitive that fails at run time (integer division by zero, an index out of
range, incompatible shapes, a failed assert) stores the number of its *error site* and
up to three integers in the context and returns STATUS_ERROR; the site table gives
the exception class, the message and the source location (see `ErrorTable`).

What cannot be lowered raises MyiaBackendError naming the construct and the line.
"""

import heapq
import os

import llvmlite.ir as ir
import numpy as np

from ...errors import (MyiaBackendError, MyiaError, MyiaMemoryError, MyiaRecursionError,
                       MyiaTypeError, loop_memory_error, memory_error)
from ...ir import Apply, Constant, Graph, Parameter, is_loop_graph, manage
from ...prim import Primitive
from ...prim import ops as P
from . import abstracts, cg, chain
from .arrays import array_constant, copy_contiguous
from .cg import NULL, alloca, check_status, ctx_load, ctx_store, i32, i64
from .chain import chain_layout
from .cons_loop import ConsLoop, is_cons_site
from .dynenv import DynamicEnvs
from .explicit_stack import ExplicitStack, recursive_site
from .gemm_update import gemm_updates
from .ltypes import EMPTY, Array, Callee, Func, Scalar, Static, Tuple, to_ir
from .ops_elementwise import fused_nodes
from .ops_scalar import to_bool
from .registry import RULES, LoopRecords, backend_error, what_is_made
from .runtime import (F32, F64, I1, I32, PREFIX, PTR, STATUS_ERROR, STATUS_INTERRUPT,
                      STATUS_NOMEM, STATUS_OK, STATUS_STACK, clear_interrupt, declare)
from .values import coerce, load_captured, sizeof

# ---- errors ------------------------------------------------------------------------


class ErrorTable:
    """Error sites of a module: site number -> (exception class, message, location).

    A message may use {a}, {b}, {c}: the integers the failing code stored."""

    def __init__(self):
        self.sites = []
        self._index = {}

    def site(self, exc, message, loc):
        key = (exc, message, id(loc) if loc is not None else None)
        n = self._index.get(key)
        if n is None:
            n = self._index[key] = len(self.sites)
            self.sites.append((exc, message, loc))
        return n

    def error_of(self, status, site, a, b, c, steps=0):
        """The exception of a call that failed with `status` at error site `site`
        (returned: the native entry raises it, see wrapper); `steps`: the steps the
        loop (of a derivative) that failed had made (ctx.depth)."""
        if status == STATUS_INTERRUPT:
            clear_interrupt()
            return KeyboardInterrupt()
        if status == STATUS_STACK:
            # import here: dispatch imports this module
            from .dispatch import DEEP_STACK_SIZE

            message, hint, loc = ("recursion too deep: the program used the whole "
                                  "native stack ({a} MiB)",
                                  "check the base case of the recursion", None)
            if 0 <= site < len(self.sites):  # (the function that ran out: stack_site)
                _, (message, hint), loc = self.sites[site]
            return MyiaRecursionError(message.format(a=DEEP_STACK_SIZE >> 20), loc,
                                      hint=hint)
        if status == STATUS_NOMEM:
            what, loc = "an array", None
            if 0 <= site < len(self.sites):
                _, what, loc = self.sites[site]
            if isinstance(what, LoopRecords):
                return loop_memory_error(what.step_bytes, steps, loc, limit=b, used=c,
                                         arrays=what.holds_arrays)
            return memory_error(a, what, loc, limit=b, used=c)
        if status == STATUS_ERROR and 0 <= site < len(self.sites):
            exc, message, loc = self.sites[site]
            return exc(message.format(a=a, b=b, c=c), loc)
        return MyiaError(f"compiled code failed with status {status} (site {site})")


# ---- types of nodes ----------------------------------------------------------------------


def constant_ltype(value):
    """The LType of a constant of the program."""
    if isinstance(value, Graph):
        return None  # needs the free variables: see Lowering.graph_func_type
    if isinstance(value, Primitive):
        return Func([Callee(prim=value)])
    if isinstance(value, (bool, np.bool_)):
        return Scalar("bool")
    if isinstance(value, (int, np.integer)):
        return Scalar("int64")
    if isinstance(value, np.float32):
        return Scalar("float32")
    if isinstance(value, (float, np.floating)):
        return Scalar("float64")
    if isinstance(value, np.ndarray):
        if value.dtype.name in ("bool", "int64", "float64", "float32"):
            return Array(value.dtype.name, value.shape)
        return Static(value)
    if isinstance(value, tuple):
        elems = [constant_ltype(v) for v in value]
        if all(isinstance(e, Static) for e in elems):
            return Static(value)
        if any(e is None for e in elems):
            return None
        return Tuple(elems)
    return Static(value)


# ---- the module ------------------------------------------------------------------------


class Lowering:
    """Lowers the program rooted at `root` into a new module of `engine`."""

    def __init__(self, engine, root, name="myia_fn", types=None):
        self.engine = engine
        self.root = root
        self.name = name
        self.module = engine.new_module(name)
        self.mng = manage(root)
        self.errors = ErrorTable()
        self.functions = {}  # entry graph -> ir.Function
        self.todo = []
        self.fvs = {g: list(self.mng.free_variables(g)) for g in self.mng.graphs}
        self._types = {} if types is None else types
        self._to_ltype = abstracts.Converter(self)
        self._edges = {}
        self._recursive = {}
        self._guarded = None
        self.counter = 0
        self.dynenv = DynamicEnvs(self)
        self.chains = {}  # graph -> its ChainLayout or None, ("reached", g) -> graphs (chain.py)
        #: lower recursions with one recursive call as loops (explicit_stack,
        #: cons_loop); MYIA_LLVM_UNRECURSE=0 keeps them native recursions
        self.unrecurse = os.environ.get("MYIA_LLVM_UNRECURSE", "1") != "0"

    def check_program(self):
        """Refuse, with the line, what only an interpreter can run: J of a function
        value made at run time (the specializer leaves it for the VM when it cannot
        resolve `grad` of a closure inside the program).  Untyped copies (closures
        that are values but never called, see myia.infer.specialize) are never
        lowered."""
        for g in self.mng.graphs:
            if g.flags.get("untyped"):
                continue
            for node in self.mng.nodes(g):
                if (node.is_apply(P.J) and len(node.inputs) == 2) or node.is_apply(P.Jinv):
                    raise backend_error(
                        f"{node.inputs[0].value.name} of a function value computed at run "
                        f"time (grad, inside the program, of a function that "
                        f"specialization could not resolve; the VM can run it)", node,
                        hint="run it with backend=\"vm\" (or %backend vm)")

    # ---- types --------------------------------------------------------------------

    def ltype(self, node):
        t = self._types.get(node)
        if t is not None:
            return t
        if isinstance(node, Constant):
            v = node.value
            if isinstance(v, Graph):
                t = self.graph_func_type(v, node.abstract)
            elif node.abstract is not None and not isinstance(v, Primitive):
                t = self._to_ltype(node.abstract, node)
                if isinstance(t, Static) or t is None:
                    t = constant_ltype(v)
            else:
                t = constant_ltype(v)
        elif node.abstract is not None:
            t = self._to_ltype(node.abstract, node)
        elif isinstance(node, Apply) and node.inputs[0].is_constant(Primitive):
            t = self.infer_missing(node)
        if t is None:
            raise backend_error(f"the node {_describe(node)}, whose type is unknown", node,
                                hint="the program must be specialized (typed) first")
        self._types[node] = t
        return t

    def infer_missing(self, node):
        """Types of the few nodes that passes after inference make without one."""
        prim = node.inputs[0].value
        if prim is P.make_closure:
            g = node.inputs[1].value
            bound = [self.ltype(i) for i in node.inputs[2:]]
            return Func([Callee(graph=g, fvs=self.fvs[g], bound=bound)])
        if prim is P.make_tuple:
            return Tuple([self.ltype(i) for i in node.inputs[1:]])
        if prim is P.tuple_getitem:
            t = self.ltype(node.inputs[1])
            i = node.inputs[2]
            if isinstance(t, Tuple) and isinstance(i, Constant):
                return t.elems[i.value]
        return None

    def graph_func_type(self, g, abstract=None):
        fvs = self.fvs.get(g)
        if fvs is None:
            raise backend_error(f"the graph {g.name}, which is not part of the program")
        key = g.flags.get("option")  # an untyped copy: the function it stands for
        options = getattr(abstract, "options", None)
        if options is not None and len(options) == 1:
            (key,) = options
        copy = key is not None and self._to_ltype.is_copy(key, g)
        return Func([Callee(graph=g, fvs=fvs, key=key, copy=copy)])

    def param_types(self, g):
        return [self.ltype(p) for p in g.parameters]

    def out_type(self, g):
        return self.ltype(g.output)

    # ---- static analysis of calls ---------------------------------------------------

    def callee_graphs(self, callee):
        """The graphs a callee node may be (None if some are unknown)."""
        if isinstance(callee, Constant):
            v = callee.value
            if isinstance(v, Graph):
                return [v]
            if isinstance(v, Primitive):
                return []
            return None
        if isinstance(callee, Apply) and callee.is_apply(P.switch):
            a = self.callee_graphs(callee.inputs[2])
            b = self.callee_graphs(callee.inputs[3])
            return None if a is None or b is None else a + b
        if callee.abstract is None and callee not in self._types \
                and getattr(callee.graph, "flags", {}).get("untyped"):
            # in a copy of a closure inference never saw called (its record's wrapper
            # names it): no call of it is lowered
            return None
        t = self.ltype(callee)
        if isinstance(t, Func):
            return [o.graph for o in t.options if o.graph is not None]
        return None

    def edges(self, g):
        """(graphs called in tail position, graphs called otherwise) by graph `g`
        (including the options of closures it may call)."""
        e = self._edges.get(g)
        if e is None and g.flags.get("untyped"):
            # a copy of a closure inference never saw called is never lowered: what
            # it would call (library graphs left as parsed) is not part of the program
            e = self._edges[g] = (set(), set())
        if e is None:
            tail, calls = set(), set()
            for node in self.mng.nodes(g):
                if not isinstance(node, Apply):
                    continue
                fn = node.inputs[0]
                if fn.is_constant(Primitive):
                    continue
                gs = self.callee_graphs(fn) or []
                (tail if node is g.output else calls).update(gs)
            # closures made here may be called anywhere: count them as calls
            for node in self.mng.nodes(g):
                if isinstance(node, Apply):
                    for inp in node.inputs[1:]:
                        if inp.is_constant_graph():
                            calls.add(inp.value)
                    if node.is_apply(P.make_closure):
                        calls.add(node.inputs[1].value)
            if g.output.is_constant_graph():
                calls.add(g.output.value)
            e = self._edges[g] = (tail, calls)
        return e

    def tail_group(self, entry):
        group = [entry]
        seen = {entry}
        for g in group:
            for h in self.edges(g)[0]:
                if h not in seen:
                    seen.add(h)
                    group.append(h)
        return group

    def fn_calls(self, entry):
        out = set()
        for g in self.tail_group(entry):
            out |= self.edges(g)[1]
        return out

    def guarded(self, entry):
        """Does the function of `entry` check the stack and poll on entry?  Every cycle
        of calls must pass a guard: the targets of the back edges of a depth-first
        walk of the call graph from the root are guarded (one guard per loop of
        recursion, not one per function of it)."""
        if self._guarded is None:
            self._guarded = set()
            self._walked = set()
            on_stack = set()
            stack = [(self.root, iter(sorted(self.fn_calls(self.root), key=_gid)))]
            self._walked.add(self.root)
            on_stack.add(self.root)
            while stack:
                g, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    stack.pop()
                    on_stack.discard(g)
                    continue
                if nxt in on_stack:
                    self._guarded.add(nxt)
                elif nxt not in self._walked:
                    self._walked.add(nxt)
                    on_stack.add(nxt)
                    stack.append((nxt, iter(sorted(self.fn_calls(nxt), key=_gid))))
        if entry in self._walked:
            return entry in self._guarded
        return self.is_recursive(entry)

    def is_recursive(self, entry):
        r = self._recursive.get(entry)
        if r is None:
            seen = set()
            todo = list(self.fn_calls(entry))
            r = False
            while todo:
                g = todo.pop()
                if g is entry or entry in self.tail_group(g):
                    r = True
                    break
                if g in seen:
                    continue
                seen.add(g)
                todo.extend(self.fn_calls(g))
            self._recursive[entry] = r
        return r

    # ---- functions ------------------------------------------------------------------

    def fn_type(self, g):
        args = [PTR] + [to_ir(self.ltype(v)) for v in self.fvs[g]]
        args += [to_ir(t) for t in self.param_types(g)]
        return ir.FunctionType(I32, args + [PTR])

    def function(self, g):
        """The LLVM function whose entry is graph `g` (lowered later)."""
        f = self.functions.get(g)
        if f is None:
            self.counter += 1
            name = f"{PREFIX}_g{self.counter}_{_sanitize(g.name)}"
            f = ir.Function(self.module, self.fn_type(g), name)
            f.linkage = "internal"
            self.functions[g] = f
            self.todo.append(g)
        return f

    def run(self):
        """Lower everything; returns the root's function."""
        self.check_program()
        root_fn = self.function(self.root)
        while self.todo:
            g = self.todo.pop()
            FnLowering(self, g).lower()
        self.dynenv.finish()
        return root_fn

    # ---- closures -------------------------------------------------------------------

    def option_params(self, o):
        """The parameter types a call of closure option `o` passes (a closure-converted
        record binds the leading parameters of its graph)."""
        return self.param_types(o.graph)[len(o.bound):]

    def captured_types(self, o):
        """The types of the values function option `o` captures."""
        return [self.ltype(v) for v in o.fvs] + list(o.bound)

    def captured_ir(self, o):
        return ir.LiteralStructType([to_ir(t) for t in self.captured_types(o)])


def _gid(g):
    return g.id


def _sanitize(name):
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)[:40]


def _describe(node):
    if isinstance(node, Apply):
        fn = node.inputs[0]
        if fn.is_constant(Primitive):
            return f"{fn.value.name}(...)"
        return "a call"
    if isinstance(node, Parameter):
        return f"parameter {node.name}"
    return repr(node)


# ---- one function ---------------------------------------------------------------------


class Emitter:
    """What the rules need to emit code into an LLVM function `fn` of the program
    (i32 status, ctx first): its builder `b`, the context, arena memory, allocas and
    error exits.  FnLowering lowers graphs with it; `helper` makes one for a function
    of the backend's own (see `dynenv`)."""

    in_kernel = False

    def __init__(self, L, fn):
        self.L = L
        self.fn = fn
        self.fused = set()
        self.gemm_updates = {}  # (see gemm_update)

    @classmethod
    def helper(cls, L, fn):
        """An emitter positioned at the start of `fn`'s body, an empty function."""
        e = cls(L, fn)
        e.alloca_block = fn.append_basic_block("entry")
        start = fn.append_basic_block("start")
        e.b = cg.Builder(e.alloca_block)
        e.b.branch(start)
        e.b.position_at_end(start)
        e.ctx = fn.args[0]
        return e

    @property
    def module(self):
        return self.L.module

    def alloc(self, nbytes):
        """Arena memory for this call (returns STATUS_NOMEM on failure, naming the
        node being lowered: its line and what it makes go in the error)."""
        node = getattr(self, "node", None)
        site = self.site(node, MyiaMemoryError, what_is_made(node)) if node is not None \
            else -1
        return cg.alloc(self.b, self.ctx, nbytes, site, own=self.own_blocks)

    #: whether `alloc` gives blocks of their own (see returned_alone)
    own_blocks = False

    def alloca(self, typ, name=""):
        """An alloca in the entry block (so that LLVM promotes it)."""
        with self.b.goto_block(self.alloca_block):
            return alloca(self.b, typ, name)

    def site(self, node, exc, message):
        return self.L.errors.site(exc, message, getattr(node, "loc", None))

    def error_if(self, cond, node, exc, message, a=None, b_=None, c=None):
        """if cond: record the error site and return STATUS_ERROR."""
        b = self.b
        if cg._known_int(cond) == 0:  # checked statically (shapes known)
            return
        s = self.site(node, exc, message)
        with b.if_then(cond, likely=False):
            ctx_store(b, self.ctx, "err_site", i64(s))
            for name, v in (("err_a", a), ("err_b", b_), ("err_c", c)):
                if v is not None:
                    ctx_store(b, self.ctx, name, v if not isinstance(v, int) else i64(v))
            b.ret(i32(STATUS_ERROR))

    def fail(self, node, exc, message):
        """Always an error (the rest of the block is unreachable)."""
        self.error_if(ir.Constant(I1, 1), node, exc, message)


class FnLowering(Emitter):
    """Lowers one LLVM function: entry graph `entry` and its tail-call group."""

    def __init__(self, L, entry):
        super().__init__(L, L.functions[entry])
        self.entry = entry
        self.out_t = L.out_type(entry)
        self.headers = {}  # graph -> (block, [phis])
        self.pending = []  # graphs whose header exists but body is not lowered yet
        self.envs = {}
        self.stack = None  # its recursion as a loop (explicit_stack, cons_loop), if any

    def ltype(self, node):
        return self.L.ltype(node)

    def static(self, node):
        """The compile-time value of `node`, or raise."""
        if isinstance(node, Constant) and not isinstance(node.value, Graph):
            return node.value
        t = self.ltype(node)
        if isinstance(t, Static):
            return t.value
        ok, v = abstracts.known_value(node)
        if ok:
            return v
        raise backend_error(f"{_describe(node)} as a value known only at run time; "
                            f"it must be a constant here", node)

    def is_static(self, node):
        try:
            self.static(node)
            return True
        except MyiaBackendError:
            return False

    # ---- lowering ------------------------------------------------------------------

    def lower(self):
        f = self.fn
        L = self.L
        entry_block = f.append_basic_block("entry")
        self.alloca_block = entry_block
        b = cg.Builder(entry_block)  # folds constants (see cg.Builder)
        self.b = b
        self.ctx = f.args[0]
        # the arena's head as the function begins: what a loop frees at its back edge
        # is what was made since (see release_arena)
        self.arena_mark = ctx_load(b, self.ctx, "arena")
        site = recursive_site(L, self.entry) if L.unrecurse else None
        if site is not None:
            if is_cons_site(L, site):
                self.stack = ConsLoop(self, site)
            else:  # a chain option's function walks its chain (chain.py)
                lay = chain_layout(L, L.graph_func_type(self.entry).options[0])
                walk = lay is not None and chain.walk_applies(L, self.entry, site, lay)
                self.stack = chain.ChainWalk(self, site, lay) if walk \
                    else ExplicitStack(self, site)
        start = f.append_basic_block("start")
        if L.guarded(self.entry):
            b.branch(start)
            b.position_at_end(start)
            guard = b.append_basic_block("guard")
            below = b.icmp_signed("<", cg.frame_address(b), ctx_load(b, self.ctx, "stack_limit"))
            with b.if_then(below, likely=False):
                ctx_store(b, self.ctx, "err_site", i64(self.stack_site()))
                b.ret(i32(STATUS_STACK))
            st = b.call(cg.poll_fn(self.module), [self.ctx])
            check_status(b, st)
            b.branch(guard)
            b.position_at_end(guard)
        else:
            b.branch(start)
            b.position_at_end(start)
        header, phis = self.header(self.entry)
        for phi, a in zip(phis, f.args[1:-1]):
            phi.add_incoming(a, b.block)
        b.branch(header)
        self.outp = f.args[-1]
        while self.pending:
            g = self.pending.pop()
            self.lower_graph(g)
        if self.stack is not None:
            self.stack.finish()
        # the entry block branches to start once all allocas are in
        with b.goto_block(entry_block):
            pass

    def stack_site(self):
        """The error site of this function's running out of native stack: the loop of
        a derivative (whose forward pass keeps a frame per iteration) or the
        recursion it is, at its line."""
        g = self.loop_of(self.entry)
        if g is not None:
            message = ("the derivative of this loop keeps a native stack frame per "
                       "iteration, and its iterations used the whole native stack ({a} MiB)")
            hint = ("run fewer iterations, or checkpoint the loop in segments "
                    "(myia.checkpoint: m segments of k steps keep m + k frames)")
        else:
            g = self.entry
            message = ("recursion too deep: the program used the whole native stack "
                       "({a} MiB)")
            hint = "check the base case of the recursion"
        return self.L.errors.site(MyiaRecursionError, (message, hint), g.loc)

    def loop_of(self, g):
        """The loop graph that `g` is, tail-calls, or is nested in (a branch of an
        `if` in a loop's body), or None."""
        for h in self.L.tail_group(g):
            if is_loop_graph(h):
                return h
        h = self.L.mng.parent(g)
        while h is not None:
            if is_loop_graph(h):
                return h
            h = self.L.mng.parent(h)
        return None

    def header(self, g):
        h = self.headers.get(g)
        if h is None:
            block = self.fn.append_basic_block(f"{_sanitize(g.name)}")
            with self.b.goto_block(block):
                phis = []
                for v in self.L.fvs[g]:
                    phis.append(self.b.phi(to_ir(self.ltype(v)), name=v.name or ""))
                for p in g.parameters:
                    phis.append(self.b.phi(to_ir(self.ltype(p)), name=p.name or ""))
            h = self.headers[g] = (block, phis)
            self.pending.append(g)
        return h

    def lower_graph(self, g):
        block, phis = self.headers[g]
        b = self.b
        b.position_at_end(block)
        # alloca block must stay first: entry -> start -> ...; headers after
        env = {}
        self.envs[g] = env
        self.env = env
        self.graph = g
        k = len(self.L.fvs[g])
        for v, phi in zip(self.L.fvs[g], phis[:k]):
            env[v] = phi
        for p, phi in zip(g.parameters, phis[k:]):
            env[p] = phi
        skip = self.skipped_nodes(g)
        sincos = self.sincos_pairs(g)
        for node in self.schedule(g):
            if not isinstance(node, Apply) or node in skip or node in env:
                continue
            if node is g.output and self.is_call(node):
                if g.flags.get("release_on_return"):  # (the call's result, then free)
                    break
                self.lower_call(node, tail=True)
                return
            if node in sincos:
                self.lower_sincos(*sincos[node])
                continue
            if self.stack is not None and node is self.stack.site:
                r = self.stack.emit_site(node)
                if r is None:  # the graph ends there (a cons loop)
                    return
                env[node] = r
                continue
            self.node = node  # (an allocation failing here names it)
            env[node] = self.lower_apply(node)
        out = g.output
        if g.flags.get("release_on_return"):
            # (a checkpoint's forward pass made again, and its backward pass: what
            # they made is dead once the cotangents are out, see myia.ad.custom)
            v = self.lower_call(out, tail=False) \
                if isinstance(out, Apply) and self.is_call(out) else self.value(out)
            self.ret_value(self.released_but(v, self.ltype(out), out), self.ltype(out), out)
            return
        self.ret_value(self.value(out), self.ltype(out), out)

    def ret_value(self, v, t, node):
        b = self.b
        v = coerce(self, v, t, self.out_t, node)
        if self.stack is not None:  # a pending call may take it
            self.stack.ret(v)
            return
        b.store(v, self.outp)
        b.ret(i32(STATUS_OK))

    def schedule(self, g):
        """The nodes of `g` in an order to lower them: primitives as early as their
        inputs allow, calls of graphs as late.  A call is followed by a check of its
        status (a new basic block), so this keeps arithmetic together where LLVM can
        combine it: the cos(x) a backpropagator saved lands next to the forward's
        sin(x) and both become one sincos(x)."""
        mng = self.L.mng
        nodes = mng.nodes(g)
        position = {n: k for k, n in enumerate(nodes)}
        deps = {}
        for n in nodes:
            before = set()
            for inp in n.inputs:
                if inp in position:
                    before.add(inp)
                elif inp.is_constant_graph():
                    # a closure made here needs its free variables owned by g first
                    before.update(v for v in self.L.fvs.get(inp.value, ()) if v in position)
            deps[n] = before
        waiting = {n: len(d) for n, d in deps.items()}
        users = {}
        for n, d in deps.items():
            for m in d:
                users.setdefault(m, []).append(n)
        ready = [((not n.inputs[0].is_constant(Primitive)), position[n], n)
                 for n in nodes if not waiting[n]]
        heapq.heapify(ready)
        order = []
        while ready:
            _, _, n = heapq.heappop(ready)
            order.append(n)
            for u in users.get(n, ()):
                waiting[u] -= 1
                if not waiting[u]:
                    heapq.heappush(ready, ((not u.inputs[0].is_constant(Primitive)), position[u], u))
        assert len(order) == len(nodes), "the nodes of a graph form a cycle"
        return order

    def sincos_pairs(self, g):
        """{node: (sin node, cos node)} for the sin and cos of one float scalar in `g`."""
        by_input = {}
        for node in self.L.mng.nodes(g):
            for prim in (P.sin, P.cos):
                if node.is_apply(prim):
                    t = self.ltype(node)
                    if isinstance(t, Scalar) and t.dtype in ("float64", "float32") \
                            and self.ltype(node.inputs[1]) == t:
                        by_input.setdefault((node.inputs[1], prim), node)
        pairs = {}
        for (x, prim), node in by_input.items():
            if prim is P.sin and (x, P.cos) in by_input:
                pair = (node, by_input[(x, P.cos)])
                pairs[pair[0]] = pairs[pair[1]] = pair
        return pairs

    def lower_sincos(self, sin_node, cos_node):
        """One call of sincos(x) for sin(x) and cos(x)."""
        b = self.b
        t = self.ltype(sin_node)
        ft = F64 if t.dtype == "float64" else F32
        s_ptr, c_ptr = self.alloca(ft), self.alloca(ft)
        name = "sincos" if t.dtype == "float64" else "sincosf"
        b.call(declare(b.module, name), [self.value(sin_node.inputs[1]), s_ptr, c_ptr])
        self.env[sin_node] = b.load(s_ptr, typ=ft)
        self.env[cos_node] = b.load(c_ptr, typ=ft)

    def skipped_nodes(self, g):
        """Nodes lowered where they are used, not where they are computed: switches
        used only as callees, elementwise array nodes fused into their user."""
        mng = self.L.mng
        skip = set()
        for node in mng.nodes(g):
            if node.is_apply(P.switch) and isinstance(self.ltype(node), Func):
                users = mng.users(node)
                if users and all(i == 0 and u.graph is g for u, i in users):
                    skip.add(node)

        self.fused = fused_nodes(self, g)
        self.gemm_updates = gemm_updates(self, g, self.fused)
        self.fused |= {plan.product for plan in self.gemm_updates.values()}
        skip |= self.fused
        return skip

    def is_call(self, node):
        return not node.inputs[0].is_constant(Primitive)

    def value(self, node):
        """The native value of `node` (constants are made where they are used)."""
        v = self.env.get(node)
        if v is not None:
            return v
        if isinstance(node, Constant):
            return self.constant(node)
        for env in self.envs.values():  # a node of an enclosing graph in this function
            if node in env:
                raise backend_error(f"{_describe(node)} used outside its scope", node)
        raise backend_error(f"{_describe(node)} before it is computed", node)

    def make_func_value(self, callee, values):
        """The value of function option `callee` capturing `values`: a pointer to an
        arena record of them (nothing when it captures nothing)."""
        if not callee.n_captured:
            return ir.Constant(EMPTY, [])
        lay = chain_layout(self.L, callee)
        if lay is not None:  # a chain of one record
            return chain.make(self, lay, values)
        b = self.b
        rec_ir = self.L.captured_ir(callee)
        rec = ir.Constant(rec_ir, ir.Undefined)
        for k, (v, t) in enumerate(zip(values, self.L.captured_types(callee))):
            rec = b.insert_value(rec, v, k)
        p = self.alloc(i64(sizeof(self, rec_ir)))
        b.store(rec, p)
        return p

    def constant(self, node):
        v = node.value
        t = self.ltype(node)
        return self.constant_value(v, t, node)

    def constant_value(self, v, t, node=None):
        b = self.b
        if isinstance(t, Static):
            return ir.Constant(EMPTY, [])
        if isinstance(t, Scalar):
            if t.dtype == "bool":
                return ir.Constant(I1, int(bool(v)))
            if t.dtype == "int64":
                return i64(int(v))
            return ir.Constant(to_ir(t), float(v))
        if isinstance(t, Tuple):
            out = ir.Constant(to_ir(t), ir.Undefined)
            for k, (x, et) in enumerate(zip(v, t.elems)):
                out = b.insert_value(out, self.constant_value(x, et, node), k)
            return out
        if isinstance(t, Func):
            if isinstance(v, Graph):
                opt = t.options[0]
                return self.make_func_value(opt, [self.value(fv) for fv in self.L.fvs[v]])
            return ir.Constant(to_ir(t), [])  # a primitive
        if isinstance(t, Array):
            return array_constant(self, v, t)
        raise backend_error(f"the constant {v!r}", node)

    # ---- applications ---------------------------------------------------------------

    def lower_apply(self, node):
        fn = node.inputs[0]
        if fn.is_constant(Primitive):
            return self.lower_prim(fn.value, node)
        return self.lower_call(node, tail=False)

    def lower_prim(self, prim, node, args=None, types=None, out=None):
        r = RULES.get(prim)
        if r is None:
            raise backend_error(f"the primitive {prim.name}", node)
        if args is None:
            # inputs fused into this node's loop have no value of their own
            args = [None if i in self.fused else self.value(i) for i in node.inputs[1:]]
            types = [self.ltype(i) for i in node.inputs[1:]]
            out = self.ltype(node)
        return r(self, node, args, types, out)

    # ---- calls ---------------------------------------------------------------------

    def lower_call(self, node, tail):
        callee = node.inputs[0]
        args = [self.value(i) for i in node.inputs[1:]]
        types = [self.ltype(i) for i in node.inputs[1:]]
        out = self.ltype(node)
        return self.emit_call(callee, args, types, out, node, tail)

    def emit_call(self, callee, args, types, out, node, tail):
        """Call the function value of node `callee`; in tail position, the block
        ends (a branch or a return); otherwise returns the result."""
        b = self.b
        # switch(c, f, g)(args): a branch
        if isinstance(callee, Apply) and callee.is_apply(P.switch) and callee not in self.env:
            c = self.value(callee.inputs[1])
            c = to_bool(self, c, self.ltype(callee.inputs[1]), callee)
            then_bb = b.append_basic_block("then")
            else_bb = b.append_basic_block("else")
            b.cbranch(c, then_bb, else_bb)
            results = []
            for bb, branch in ((then_bb, callee.inputs[2]), (else_bb, callee.inputs[3])):
                b.position_at_end(bb)
                r = self.emit_call(branch, args, types, out, node, tail)
                if not tail:
                    results.append((r, b.block))
            return None if tail else self.join(results, out, "merge")
        if isinstance(callee, Constant):
            v = callee.value
            if isinstance(v, Graph):
                bound = [self.value(fv) for fv in self.L.fvs.get(v, ())]
                return self.call_graph(v, bound, args, types, out, node, tail)
            if isinstance(v, Primitive):
                return self.call_prim(v, args, types, out, node, tail)
            raise backend_error(f"a call of {v!r}", node)
        ftype = self.ltype(callee)
        if not isinstance(ftype, Func):
            raise backend_error(f"a call of a value of type {ftype}", node)
        fv = self.value(callee)
        return self.call_func_value(fv, ftype, args, types, out, node, tail)

    def call_func_value(self, fv, ftype, args, types, out, node, tail):
        b = self.b
        if ftype.single:
            opt = ftype.options[0]
            if opt.prim is not None:
                return self.call_prim(opt.prim, args, types, out, node, tail)
            bound = load_captured(b, self.L, opt, fv) if opt.n_captured else []
            return self.call_graph(opt.graph, bound, args, types, out, node, tail)
        # several functions: a branch on the tag, then a direct call of each
        env, blocks = self.branch_on_tag(fv, len(ftype.options), "option")
        results = []
        for opt, bb in zip(ftype.options, blocks):
            b.position_at_end(bb)
            if opt.prim is not None:
                r = self.call_prim(opt.prim, args, types, out, node, tail)
            else:
                bound = load_captured(b, self.L, opt, env) if opt.n_captured else []
                r = self.call_graph(opt.graph, bound, args, types, out, node, tail)
            if not tail:
                results.append((r, b.block))
        return None if tail else self.join(results, out, "called")

    def branch_on_tag(self, fv, n, name):
        """Branch on the tag of function value `fv` of n options: (its record, the
        block of each option)."""
        b = self.b
        tag, env = b.extract_value(fv, 0), b.extract_value(fv, 1)
        blocks = [b.append_basic_block(f"{name}{k}") for k in range(n)]
        sw = b.switch(tag, blocks[-1])
        for k, bb in enumerate(blocks[:-1]):
            sw.add_case(i64(k), bb)
        return env, blocks

    def join(self, results, out, name):
        """Branch from each (value, block) of `results` to a new block; its phi."""
        b = self.b
        merge = b.append_basic_block(name)
        for _, bb in results:
            b.position_at_end(bb)
            b.branch(merge)
        b.position_at_end(merge)
        phi = b.phi(to_ir(out))
        for r, bb in results:
            phi.add_incoming(r, bb)
        return phi

    def call_prim(self, prim, args, types, out, node, tail):
        v = self.lower_prim(prim, node, args, types, out)
        if tail:
            self.ret_value(v, out, node)
            return None
        return v

    def call_graph(self, g, bound, args, types, out, node, tail):
        b = self.b
        L = self.L
        params = L.param_types(g)
        # free variables come first, then (closure-converted records) the leading
        # parameters bound to the record
        params = params[len(bound) - len(L.fvs[g]):]
        args, types = self.bind_defaults(g, args, types, node, len(params))
        cargs = [coerce(self, a, t, p, node) for a, t, p in zip(args, types, params)]
        all_args = list(bound) + cargs
        gout = L.out_type(g)
        if tail:
            if self.can_join(g):
                existed = g in self.headers
                block, phis = self.header(g)
                if existed:  # a branch back to a block: every cycle of blocks has one
                    # a function with a loop stays one of its own: inlined into a
                    # caller's loop (particle fr: the Euler loop into the descent's),
                    # LLVM's code for both was 20-40% slower per call (measured)
                    self.fn.attributes.add("noinline")
                    st = b.call(cg.poll_fn(self.module), [self.ctx])
                    check_status(b, st)
                    self.release_arena(all_args, self.carried_types(g))
                for phi, a in zip(phis, all_args):
                    phi.add_incoming(a, b.block)
                b.branch(block)
                return None
            f = L.function(g)
            if gout == self.out_t and self.stack is None:
                st = b.call(f, [self.ctx, *all_args, self.outp])
                b.ret(st)
                return None
        f = L.function(g)
        tmp = self.alloca(to_ir(gout))
        st = b.call(f, [self.ctx, *all_args, tmp])
        check_status(b, st)
        r = coerce(self, b.load(tmp, typ=to_ir(gout)), gout, out, node)
        if tail:
            self.ret_value(r, out, node)
            return None
        return r

    def can_join(self, g):
        """A graph called in tail position becomes a block of this function."""
        return True

    def released_but(self, v, t, node):
        """v, once all the function made but v is freed (where release_arena can)."""
        if self.stack is not None or not _plain(t):
            return v
        v = self.returned_alone(v, t, node)
        self.release_arena([v], [t])
        self.rewind_bump()
        return v

    def returned_alone(self, v, t, node):
        """v (of type t), its arrays copied into blocks of their own: release_arena
        keeps the blocks that hold them, and a small array's block would otherwise
        be a whole chunk (runtime.CHUNK) of what the function made."""
        if isinstance(t, Array):
            self.own_blocks = True
            try:
                return copy_contiguous(self, v, t, node)
            finally:
                self.own_blocks = False
        if isinstance(t, Tuple):
            for i, e in enumerate(t.elems):
                if e.contains_array():
                    v = self.b.insert_value(v, self.returned_alone(
                        self.b.extract_value(v, i), e, node), i)
        return v

    def rewind_bump(self):
        """Where nothing made since the function began is live any more (see
        returned_alone): the chunk being bumped when it began is bumped again from
        where it was then (release_arena frees the chunks made since, but not that
        one, whose tail would otherwise go, and the caller's next small allocation
        would take a new chunk: a recomputed checkpoint in a loop kept one a call)."""
        b = self.b
        with b.goto_block(self.alloca_block):  # (read as the function begins)
            cur = ctx_load(b, self.ctx, "bump_cur")
            end = ctx_load(b, self.ctx, "bump_end")
        with b.if_then(b.icmp_unsigned("!=", end, NULL)):
            ctx_store(b, self.ctx, "bump_cur", cur)
            ctx_store(b, self.ctx, "bump_end", end)

    def carried_types(self, g):
        """The types of what the block of `g` receives: its free variables, then its
        parameters."""
        return [self.ltype(v) for v in self.L.fvs[g]] + [self.ltype(p) for p in g.parameters]

    def release_arena(self, values, types):
        """Where `values` (of `types`) are all that is live from here on (a branch back
        to a loop's block: what the block receives; or the value a function returns),
        free what the function made since it began, except the blocks that hold their
        arrays.  Only where those are numbers and arrays, or tuples of them: a closure
        or an environment holds pointers into the arena that this does not follow; and
        not in a recursion run as a loop, whose stack lives in the arena."""
        if self.stack is not None or not all(_plain(t) for t in types):
            return
        b = self.b
        ptrs = []

        def collect(v, t):
            if isinstance(t, Array):
                ptrs.append(b.extract_value(v, 0))
            elif isinstance(t, Tuple):
                for i, e in enumerate(t.elems):
                    collect(b.extract_value(v, i), e)

        for v, t in zip(values, types):
            collect(v, t)
        made = b.icmp_unsigned("!=", ctx_load(b, self.ctx, "arena"), self.arena_mark)
        with b.if_then(made):
            keep = NULL
            if ptrs:
                keep = self.alloca(ir.ArrayType(PTR, len(ptrs)), "carried")
                for i, p in enumerate(ptrs):
                    b.store(p, cg.gep(b, keep, [i32(0), i32(i)], ir.ArrayType(PTR, len(ptrs))))
            b.call(cg.arena_release_fn(self.module),
                   [self.ctx, self.arena_mark, keep, i64(len(ptrs))])


    def bind_defaults(self, g, args, types, node, n):
        if len(args) == n:
            return args, types
        if len(args) < n:
            names = [p.name for p in g.parameters][-n:]
            missing = names[len(args):]
            if all(m in g.defaults for m in missing):
                args = list(args)
                types = list(types)
                for m in missing:
                    v = g.defaults[m]
                    t = constant_ltype(v)
                    args.append(self.constant_value(v, t, node))
                    types.append(t)
                return args, types
        raise MyiaTypeError(
            f"{g.name}() takes {n} arguments but {len(args)} were given", node.loc)


def _plain(t):
    """Numbers, arrays, static values, functions that capture nothing, and tuples of
    them: values whose only pointers into the arena are array data."""
    if isinstance(t, Tuple):
        return all(_plain(e) for e in t.elems)
    if isinstance(t, Func):
        return t.single and not t.options[0].n_captured
    return isinstance(t, (Scalar, Array, Static))
