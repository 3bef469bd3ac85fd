"""Gathers at positions known at compile time, as copies of blocks.

np.tile, np.repeat, np.pad (and indexing with lists) are `take_along_axis` of a 1-d
array by a constant array of positions (myia.lib.np_shape).  Read one position at a
time, such a gather is several times slower than NumPy's own functions, which copy
blocks.  The positions say which blocks: at compile time, `plan` finds

- an affine plan: the result, seen with some shape `dims` (C order), is
  `src[base + sum(i_k * strides_k)]`: a tile is (reps, n) with strides (0, 1), a
  repeat (n, reps) with strides (1, 0).  It is a loop nest of vector loads and
  stores (a repeat: loads whose lanes are shuffled to `reps` copies each);
- else a run plan: the result is a few runs of positions with a constant step (a
  pad: the constants, then each row of the array, then constants...), copied run
  by run (memcpy for a contiguous run), from a table of (destination, part, start,
  length, step);
- else nothing: the gather stays a gather.

Each element of the result is still a copy of the element at its position: the
results are the gather's, bit for bit.  The source may be the parts of a
concatenation (a constant pad gathers from the array and its constants joined):
the copy then reads from the parts, and the concatenation is never made.
"""

import llvmlite.ir as ir
import numpy as np

from .arrays import array_constant, c_strides
from .cg import for_range, i32, i64, outlined
from .ltypes import ITEMSIZE, Array
from .ops_elementwise import LoopNest
from .runtime import I1, I64, PTR, declare

#: a run plan is used when its runs hold this many positions on average, at least
MIN_RUN = 8
#: an affine plan has at most this many axes (a loop each)
MAX_AXES = 8
#: a repeat of at most this many copies is copied by shuffling the lanes of a vector
MAX_SHUFFLE = 16


class Affine:
    """result[i_0, ..., i_k] (C order over dims) = part[base + sum(i_k * strides_k)]."""

    def __init__(self, part, base, dims, strides):
        self.part, self.base, self.dims, self.strides = part, base, dims, strides


class Runs:
    """table: an int64 array of rows (destination, part, start, length, step): result
    [destination + q] = part[start + q * step] for q < length."""

    def __init__(self, table):
        self.table = table


def plan(positions, sizes):
    """The plan of a gather of `positions` (1-d, each in [0, sum(sizes))) from the
    concatenation of parts of lengths `sizes`; None when neither plan fits."""
    idx = np.asarray(positions, dtype=np.int64).reshape(-1)
    m = len(idx)
    if m == 0:
        return None
    bounds = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    part = np.searchsorted(bounds, idx, side="right") - 1
    if (part == part[0]).all():
        affine = _affine(idx - bounds[part[0]])
        if affine is not None:
            return Affine(int(part[0]), *affine)
    table = _runs(idx, part, bounds)
    return Runs(table) if table is not None else None


def _affine(pos):
    """(base, dims, strides) with pos == base + sum(i_k * strides_k) over the C-order
    indices of dims, or None.  Axis by axis from the innermost: the longest run of a
    constant step at the start, shortened to the largest length that divides what is
    left and fits every block."""
    dims, strides = [], []
    cur = pos
    while len(cur) > 1:
        n = len(cur)
        step = int(cur[1] - cur[0])
        fits = cur == cur[0] + step * np.arange(n)
        longest = n if fits.all() else int(np.argmin(fits))
        for d in range(longest, 1, -1):
            if n % d == 0:
                blocks = cur.reshape(-1, d)
                if (blocks == blocks[:, :1] + step * np.arange(d)).all():
                    break
        else:
            return None
        dims.insert(0, d)
        strides.insert(0, step)
        if len(dims) > MAX_AXES:
            return None
        cur = cur[::d]
    return int(cur[0]), tuple(dims) or (1,), tuple(strides) or (1,)


def _runs(idx, part, bounds):
    """The rows of a run plan (greedy from the left: each run as long as its step
    holds, within one part), or None if the runs are too short on average."""
    m = len(idx)
    step = np.diff(idx)
    crossing = part[1:] != part[:-1]
    # the last index (into `step`) of the stretch of equal steps that each belongs to
    change = np.flatnonzero((step[1:] != step[:-1]) | crossing[1:] | crossing[:-1])
    ends = np.concatenate((change, [m - 2]))
    stretch_end = ends[np.searchsorted(ends, np.arange(m - 1))]
    rows = []
    k = 0
    limit = max(m // MIN_RUN, 4)
    while k < m:
        if k == m - 1 or crossing[k]:
            length, st = 1, 0
        else:
            length, st = int(stretch_end[k]) + 2 - k, int(step[k])
        p = int(part[k])
        rows.append((k, p, int(idx[k] - bounds[p]), length, st))
        if len(rows) > limit:
            return None
        k += length
    return np.array(rows, dtype=np.int64)


# ---- emitting the copies ---------------------------------------------------------------------


def _raw(dtype, lanes=1):
    """The integer type of an element of `dtype` (copies move bits, bools as bytes)."""
    t = ir.IntType(8 * ITEMSIZE[dtype])
    return t if lanes == 1 else ir.VectorType(t, lanes)


def _ptr(b, data, offset, dtype):
    g = b.gep(data, [offset], source_etype=_raw(dtype))
    g.type = PTR
    return g


def _load(b, data, offset, dtype, lanes=1):
    return b.load(_ptr(b, data, offset, dtype), typ=_raw(dtype, lanes), align=ITEMSIZE[dtype])


def _store(b, v, data, offset, dtype):
    b.store(v, _ptr(b, data, offset, dtype), align=ITEMSIZE[dtype])


def emit(fl, p, parts, out_data, dtype):
    """Write the gather of plan `p` into `out_data` (C-contiguous); parts: the
    (data, element stride) of each part of the source, values."""
    if isinstance(p, Affine):
        _emit_affine(fl, p, parts[p.part], out_data, dtype)
    else:
        _emit_runs(fl, p, parts, out_data, dtype)


def _emit_affine(fl, p, part, out_data, dtype):
    """A loop nest over p.dims: vector copies where the innermost step is 1, a vector
    of `lanes` elements shuffled to `inner` copies each where it is 0 (a repeat), a
    splat where it is 0 along a long axis, else element by element."""
    b = fl.b
    data, pst = part
    src = _ptr(b, data, b.mul(i64(p.base), pst), dtype)
    dims = [i64(d) for d in p.dims]
    src_st = [b.mul(i64(s), pst) for s in p.strides]
    out_st, _ = c_strides(b, dims)
    lanes = max(1, 32 // ITEMSIZE[dtype])  # one 256-bit vector
    unit = b.icmp_signed("==", pst, i64(1))
    inner, step = p.dims[-1], p.strides[-1]
    if step == 0 and inner <= MAX_SHUFFLE and len(p.dims) >= 2 and p.strides[-2] == 1:
        # a repeat: `shuffled` elements loaded, each stored `inner` times (a vector of
        # at most 64 elements stored)
        shuffled = 1
        while shuffled * 2 <= lanes and shuffled * 2 * inner <= 64:
            shuffled *= 2

        def body(offs, j, ln, state):
            v = _load(b, src, offs["x"], dtype, ln)
            if ln > 1:
                mask = ir.Constant(ir.VectorType(ir.IntType(32), ln * inner),
                                   [k // inner for k in range(ln * inner)])
                v = b.shuffle_vector(v, ir.Constant(v.type, ir.Undefined), mask)
            else:
                v = b.insert_element(ir.Constant(_raw(dtype, inner), ir.Undefined), v, i32(0))
                v = b.shuffle_vector(v, ir.Constant(v.type, ir.Undefined),
                                     ir.Constant(ir.VectorType(ir.IntType(32), inner),
                                                 [0] * inner))
            _store(b, v, out_data, offs["out"], dtype)
            return state

        operands = [("x", src, src_st[:-1]), ("out", out_data, out_st[:-1])]
        LoopNest(fl, dims[:-1], operands, shuffled, unit).run(body)
        return
    operands = [("x", src, src_st), ("out", out_data, out_st)]
    if step == 0:  # each element copied along the innermost axis: loaded once
        loaded = {}

        def before(offs):
            loaded[1] = _load(b, src, offs["x"], dtype)
            loaded[lanes] = b.shuffle_vector(
                b.insert_element(ir.Constant(_raw(dtype, lanes), ir.Undefined), loaded[1], i32(0)),
                ir.Constant(_raw(dtype, lanes), ir.Undefined),
                ir.Constant(ir.VectorType(ir.IntType(32), lanes), [0] * lanes))

        def body(offs, j, ln, state):
            _store(b, loaded[ln], out_data, offs["out"], dtype)
            return state

        LoopNest(fl, dims, operands, lanes, ir.Constant(I1, 1)).run(body, before)
        return

    def copy(offs, j, ln, state):
        _store(b, _load(b, src, offs["x"], dtype, ln), out_data, offs["out"], dtype)
        return state

    vec_ok = unit if step == 1 else ir.Constant(I1, 0)
    LoopNest(fl, dims, operands, lanes if step == 1 else 1, vec_ok).run(copy)


def _emit_runs(fl, p, parts, out_data, dtype):
    """A loop over the rows of the plan's table (a constant array): memcpy for a run
    of step 1 in a part of unit stride, else a copy element by element."""
    b = fl.b
    rows = len(p.table)
    table = b.extract_value(array_constant(fl, p.table, Array("int64", p.table.shape)), 0)
    bases = fl.alloca(ir.ArrayType(PTR, len(parts)))
    steps = fl.alloca(ir.ArrayType(I64, len(parts)))
    for k, (data, pst) in enumerate(parts):
        b.store(data, _ptr(b, bases, i64(k), "int64"))
        b.store(pst, _ptr(b, steps, i64(k), "int64"))
    size = i64(ITEMSIZE[dtype])
    with outlined(fl, "runs"), for_range(b, 0, rows, name="run") as r:
        dst, part, start, length, step = (
            _load(b, table, b.add(b.mul(r, i64(5)), i64(c)), "int64") for c in range(5))
        base = b.load(_ptr(b, bases, part, "int64"), typ=PTR)
        pst = _load(b, steps, part, "int64")
        contiguous = b.and_(b.icmp_signed("==", step, i64(1)), b.icmp_signed("==", pst, i64(1)))
        with b.if_else(contiguous) as (whole, each):
            with whole:
                b.call(declare(b.module, "memcpy"), [
                    _ptr(b, out_data, dst, dtype), _ptr(b, base, start, dtype),
                    b.mul(length, size)])
            with each:
                with for_range(b, 0, length, name="q") as q:
                    v = _load(b, base, b.mul(b.add(start, b.mul(q, step)), pst), dtype)
                    _store(b, v, out_data, b.add(dst, q), dtype)
