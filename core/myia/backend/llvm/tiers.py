"""Machine code of three kinds in one program: loops optimized, array kernels given
careful instruction selection, straight-line code compiled fast.

A compiled program is mostly *straight-line* code: the body of an array program
allocates its arrays, checks their shapes, passes them to BLAS and to its loop
kernels (see `cg.outlined`), and returns; the entry point unboxes the arguments and
boxes the result.  Each instruction of it runs once per call: optimizing it saves
nanoseconds per call, and costs tens of microseconds per instruction at compile
time (O3 and its instruction selection and register allocation take 50-80% of the
time of compiling an MLP's gradient).  Loops are where optimization pays.

So a module is partitioned:

- *optimized*: the program's functions with a loop (a cycle in their control flow
  graph: the loops of the program), functions on a cycle of calls (recursion), and
  whatever they call.  Compiled with the O3 pipeline and full instruction selection,
  as before: inlining, closures and scalar code need it.
- *kernels*: the array loop nests (see `cg.outlined`) that only straight-line code
  calls.  They are emitted vectorized, in SSA form, with their strides and bounds
  folded (cg.Builder): instruction selection, loop strength reduction, machine LICM
  and the greedy register allocator (CodeGenOpt::Aggressive) make them as fast as O3
  did (within a few percent, measured), so they get no IR pass but SROA.
- *cold*: the other functions (and the entry point).  Compiled without any IR pass and
  with LLVM's fast instruction selector and register allocator (CodeGenOpt::None).
- *straight*: a whole module of scalar straight-line code (no loop, no recursion, no
  array work), such as a derivative of a polynomial or of an unrolled loop.  Each
  instruction runs once per call, and the call's entry and exit cost more than all of
  them: O1 and fast instruction selection gave the same call time (1.7-1.9 us) as O3
  in half the compile time (grad^3 of a 20-line function: 67 -> 38 ms).

Small internal helpers (the arena's bump allocation, polling) are defined in each
part that calls them.  A hot function that cold code calls is exported from the hot
object; the engine loads that object first and binds the name before loading the
cold one (see `Engine.compile`).  A module whose cold part is small is compiled
whole, optimized, as it always was (then LLVM inlines the kernels back), and so is
a module without array work (no kernel, no BLAS call): there the straight-line code
is the work of each call.
"""

import os

import llvmlite.ir as ir

from .runtime import PREFIX

#: below this many instructions of straight-line code, a module is compiled whole; so
#: is a module without array work (kernels, BLAS), whose straight-line code is its
#: work ($MYIA_LLVM_COLD_MIN; 0 splits every module, as the tests do to exercise it)
COLD_MIN_INSTRUCTIONS = int(os.environ.get("MYIA_LLVM_COLD_MIN", "300"))


def _successors(term):
    out = [op for op in term.operands if isinstance(op, ir.Block)]
    default = term.__dict__.get("default")
    if isinstance(default, ir.Block):
        out.append(default)
    for case in term.__dict__.get("cases", ()):
        if isinstance(case, tuple) and isinstance(case[-1], ir.Block):
            out.append(case[-1])
    return out


def has_loop(f):
    """Does the control flow graph of `f` have a cycle (reachable from the entry)?"""
    if not f.blocks:
        return False
    color = {}
    stack = [(f.blocks[0], None)]
    while stack:
        blk, it = stack[-1]
        if it is None:
            color[id(blk)] = 1
            term = blk.terminator or (blk.instructions[-1] if blk.instructions else None)
            it = iter(_successors(term) if term is not None else ())
            stack[-1] = (blk, it)
        nxt = next(it, None)
        if nxt is None:
            color[id(blk)] = 2
            stack.pop()
            continue
        c = color.get(id(nxt))
        if c == 1:
            return True
        if c is None:
            stack.append((nxt, None))
    return False


def _references(f, defined):
    out = []
    seen = set()
    for blk in f.blocks:
        for ins in blk.instructions:
            for op in ins.operands:
                if isinstance(op, ir.Function) and id(op) in defined and id(op) not in seen:
                    seen.add(id(op))
                    out.append(op)
    return out


def _unique(f):
    """Program functions (graphs, kernels, the entry) have names with the module's
    prefix; the others are helpers any part may define for itself."""
    return PREFIX in f.name


def _on_call_cycles(defs, refs):
    """The functions on a cycle of the call graph (Tarjan's strongly connected
    components, iteratively)."""
    index, low, on, stack, out = {}, {}, set(), [], set()
    counter = [0]
    for root in defs:
        if id(root) in index:
            continue
        work = [(root, iter(refs[id(root)]))]
        index[id(root)] = low[id(root)] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(id(root))
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if id(w) not in index:
                    index[id(w)] = low[id(w)] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(id(w))
                    work.append((w, iter(refs[id(w)])))
                elif id(w) in on:
                    low[id(v)] = min(low[id(v)], index[id(w)])
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[id(u)] = min(low[id(u)], low[id(v)])
            if low[id(v)] == index[id(v)]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(id(w))
                    comp.append(w)
                    if w is v:
                        break
                if len(comp) > 1 or v in refs[id(v)]:
                    out.update(id(x) for x in comp)
    return out


def _closure(roots, refs, stop=None):
    seen = {}
    todo = list(roots)
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen[id(f)] = f
        for g in refs[id(f)]:
            if stop is None or not stop(g):
                todo.append(g)
    return seen


def _kernel(f):
    """Array loop nests outlined by `cg.outlined`."""
    return f.name.startswith(PREFIX + "_k")


#: array work: a program that calls these (or has kernels) spends its calls there
_BLAS = ("dgemm", "sgemm", "dgemv", "sgemv", "ddot", "sdot")

#: how each part is compiled (see Engine.compile)
OPTIMIZED, KERNELS, COLD, STRAIGHT = "optimized", "kernels", "cold", "straight"


def partition(module):
    """([(functions, how)...], exported functions) where `how` is OPTIMIZED, KERNELS
    or COLD, the parts that other parts call first; or STRAIGHT, the whole module; or
    None when the module is better compiled whole (optimized)."""
    defs = [g for g in module.globals.values() if isinstance(g, ir.Function) and g.blocks]
    if any(not _unique(f) and f.linkage not in ("internal", "private") for f in defs):
        return None  # not a program's module (the runtime's)
    defined = {id(f) for f in defs}
    refs = {id(f): _references(f, defined) for f in defs}
    cyclic = _on_call_cycles(defs, refs)
    roots = [f for f in defs if _unique(f) and not _kernel(f) and
             (id(f) in cyclic or has_loop(f))]
    hot = _closure(roots, refs)
    kernel_roots = [f for f in defs if _kernel(f) and id(f) not in hot]
    kernels = _closure(kernel_roots, refs, stop=lambda g: _unique(g) and not _kernel(g))
    if not hot and not kernels and not any(n in module.globals for n in _BLAS):
        return [(defs, STRAIGHT)], []
    cold_roots = [f for f in defs if _unique(f) and id(f) not in hot and id(f) not in kernels]
    size = sum(len(blk.instructions) for f in cold_roots for blk in f.blocks)
    if not cold_roots or size < COLD_MIN_INSTRUCTIONS:
        return None
    if COLD_MIN_INSTRUCTIONS and not (any(_kernel(f) for f in defs) or
                                      any(n in module.globals for n in _BLAS)):
        # scalar code: its straight-line part is the work of each call
        return None
    cold = _closure(cold_roots, refs,
                    stop=lambda g: _unique(g) and (id(g) in hot or id(g) in kernels))
    exported = {}
    for part in (cold, kernels):
        for f in part.values():
            for g in refs[id(f)]:
                if _unique(g) and id(g) not in part:
                    exported[id(g)] = g
    order = {id(f): k for k, f in enumerate(defs)}

    def ordered(d):
        return sorted(d.values(), key=lambda f: order[id(f)])

    parts = [(ordered(hot), OPTIMIZED), (ordered(kernels), KERNELS), (ordered(cold), COLD)]
    return [(fs, how) for fs, how in parts if fs], ordered(exported)


def declaration(f):
    """`declare ...` for function `f` (defined in the module)."""
    blocks = f.blocks
    f.blocks = []
    try:
        buf = []
        f.descr_prototype(buf)
        return "".join(buf)
    finally:
        f.blocks = blocks


def texts(module, parts, exported):
    """The IR text of each part (exported functions get external linkage and are
    declared where they are not defined; every declaration and the metadata go into
    every part)."""
    for f in exported:
        f.linkage = ""
    head = ['; ModuleID = "%s"' % (module.name,), 'target triple = "%s"' % (module.triple,),
            'target datalayout = "%s"' % (module.data_layout,), '']
    head += [t.get_declaration() for t in module.get_identified_types().values()]
    head += [str(g) for g in module.globals.values()
             if not (isinstance(g, ir.Function) and g.blocks)]
    meta = module._get_metadata_lines()
    out = []
    for fs, _ in parts:
        mine = {id(f) for f in fs}
        decls = [declaration(f) for f in exported if id(f) not in mine]
        out.append("\n".join(head + decls + [str(f) for f in fs] + meta))
    return out


