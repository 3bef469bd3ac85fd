"""The native entry point of a compiled signature: a CPython METH_FASTCALL function.

    PyObject *entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs)

emitted in LLVM IR next to the compiled body and made into a Python callable once,
with `PyCFunction_NewEx`.  Calling it costs what calling any builtin costs (tens of
nanoseconds): no ctypes, no argument conversion in Python.

Unboxing (native): a float64 is a `float` (read `ob_fval`), an int64 an `int`
(PyLong_AsLongLong), a bool `True`/`False`; where the signature says a NumPy scalar
(`NumpyScalar`: NumPy promotes the two differently) a `numpy.float64`, `numpy.int64`,
`numpy.True_`/`numpy.False_`; a float32 a `numpy.float32`, a tuple an exact `tuple`
of the right length, a list an exact `list` of the right length, a dict an exact `dict` with the keys of
the signature in their order (PyDict_Next; a list and a dict are tuples inside),
an array an exact `numpy.ndarray` whose rank, dtype, byte order, alignment and
statically known dimensions match (its fields are read from the struct, see
`capi`), with strides that are multiples of the item size.  Anything else is not
this signature: the entry returns the `MISMATCH` sentinel and the dispatcher
specializes anew.

Boxing (native): floats with PyFloat_FromDouble, ints with PyLong_FromLongLong (a
NumPy scalar: those, given to its type), tuples with PyTuple_New, lists with PyList_New, dicts with PyDict_New and
PyDict_SetItem (where the program returns a list or a dict: `with_kinds`), arrays with NumPy's C API (`PyArray_NewFromDescr` from
the `_ARRAY_API` table) around the compiled code's own buffer: the arena block
that holds it escapes into a PyCapsule that becomes the array's base, and frees the
block when NumPy drops the array.  An array that is a view of an argument gets that
argument as its base; a view of a constant of the program, the constant.

Statuses (see `runtime`): an error calls the module's `error_of(status, site, a, b,
c, steps)` (a Python function that makes the right MyiaError) and raises what it returns
(so that no frame of the compiler's is in the traceback); STATUS_STACK returns the
`DEEP` sentinel (the dispatcher runs the call again on a thread with a large stack,
through the `deep` variant of the entry, which releases the GIL and never calls
Python's signal handlers).

An entry may have a fallback (`make_callable`): a Python callable that it calls with
the same arguments instead of answering MISMATCH or DEEP.  A compiled function whose
`__call__` is such an entry reaches native code without a Python frame (see
`myia.api.CompiledFunction`).
"""

import ctypes
import resource

import llvmlite.ir as ir
import numpy as np

from ...abstract import AScalar, ATuple
from . import capi
from .cg import (NULL, Builder, alloca, arena_free_fn, arena_owner_fn, at, ctx_load, ctx_store,
                 cycle_counter, for_range, frame_address, gep, i32, i64, load_at, runtime_fn,
                 store_at)
from .ltypes import ITEMSIZE, Array, Scalar, Static, Tuple, of_value, to_ir
from .runtime import (CTX_TYPE, F32, F64, I1, I32, I64, I8, PTR, SIGNAL_POLL_PERIOD, STATUS_INTERRUPT,
                      STATUS_OK, STATUS_STACK, declare, declare_global)

METH_FASTCALL = 0x80
METH_KEYWORDS = 0x02
NPY_ARRAY_WRITEABLE = 0x0400
#: PyListObject: the size at TUPLE_SIZE, as a tuple's; its items are behind a pointer
LIST_ITEMS = 24
PY_EQ = 2


# ---- NumPy scalars, lists and dicts at the boundary ------------------------------------


class NumpyScalar(Scalar):
    """A NumPy scalar crossing the boundary (np.float64, np.int64, np.bool_): inside, a
    number like a Python one (the same layout)."""

    __slots__ = ()

    def key(self):
        return ("numpy", self.dtype)

    def __str__(self):
        return "np." + super().__str__()


_NUMPY_SCALARS = {np.float64: "float64", np.int64: "int64", np.bool_: "bool"}
_TYPES = {"float64": np.float64, "int64": np.int64}


class ListType(Tuple):
    """A list crossing the boundary: inside, a tuple (the same layout)."""

    __slots__ = ()

    def key(self):
        return ("list", self.elems)

    def __str__(self):
        return "[" + ", ".join(map(str, self.elems)) + "]"


class DictType(Tuple):
    """A dict crossing the boundary: inside, the tuple of its values (keys in order)."""

    __slots__ = ("keys",)

    def __init__(self, elems, keys):
        super().__init__(elems)
        self.keys = tuple(keys)

    def key(self):
        return ("dict", self.keys, self.elems)

    def __str__(self):
        return "{" + ", ".join(f"{k!r}: {e}" for k, e in zip(self.keys, self.elems)) + "}"


def with_kinds(t, a):
    """The boundary type of a value of LType `t` whose abstract is `a`: its lists and
    dicts (tuples inside) become ListType and DictType, for boxing and unboxing."""
    if isinstance(a, AScalar) and a.numpy and type(t) is Scalar and t.dtype != "float32":
        return NumpyScalar(t.dtype)
    if not (isinstance(a, ATuple) and isinstance(t, Tuple)) or len(a) != len(t.elems):
        return t
    elems = [with_kinds(e, ea) for e, ea in zip(t.elems, a.elements)]
    if a.is_list:
        return ListType(elems)
    if a.is_dict:
        return DictType(elems, a.keys)
    if all(x is e for x, e in zip(elems, t.elems)):
        return t
    return Tuple(elems)


def value_type(x):
    """The boundary type of a Python value (the dispatcher's key), or None."""
    if isinstance(x, list):
        elems = [value_type(e) for e in x]
        return None if None in elems else ListType(elems)
    if isinstance(x, dict):
        elems = [value_type(e) for e in x.values()]
        return None if None in elems else DictType(elems, x.keys())
    if isinstance(x, tuple):
        elems = [value_type(e) for e in x]
        return None if None in elems else Tuple(elems)
    dtype = _NUMPY_SCALARS.get(type(x))
    if dtype is not None:
        return NumpyScalar(dtype)
    return of_value(x)


class _Sentinel:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<{self.name}>"


#: returned by an entry whose signature does not match its arguments
MISMATCH = _Sentinel("signature mismatch")
#: returned by an entry whose call ran out of its stack budget
DEEP = _Sentinel("needs a deep stack")

def _shallow_budget():
    """The stack a call may use on the caller's thread: 4 MiB where threads have the
    usual 8 MiB stacks (glibc gives new threads RLIMIT_STACK), half the limit where it
    is smaller.  Past it the call runs again on a dedicated thread (see dispatch)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_STACK)
    if soft == resource.RLIM_INFINITY or soft >= 8 << 20:
        return 4 << 20
    return max(soft // 2, 256 << 10)


SHALLOW_STACK_BUDGET = _shallow_budget()


def _obj(module, engine, obj):
    """The address of Python object `obj` as a constant of `module` (kept alive)."""
    return declare_global(module, engine.keep(obj), I8)


class EntryBuilder:
    """Emits the entry for body `body` (i32 body(ctx, args..., out*)).

    One native function serves both ways of calling: its `self` argument (set when
    the callable is made) is a tuple (deep, error_of, fallback): `deep` is True for
    the deep variant (GIL released, stack budget `deep_budget`, no Python signal
    handlers), `error_of(status, site, a, b, c, steps)` makes the error of a failed call, and
    `fallback` (or None) takes the calls this signature cannot.  (No per-program
    Python object is baked into the code, which can then be cached.)"""

    def __init__(self, module, engine, name, arg_types, result_type, body, *,
                 deep_budget=0):
        self.module = module
        self.engine = engine
        self.name = name
        self.arg_types = arg_types
        self.result_type = result_type
        self.body = body
        self.deep_budget = deep_budget

    def obj(self, o):
        return _obj(self.module, self.engine, o)

    def build(self):
        m = self.module
        fnty = ir.FunctionType(PTR, [PTR, PTR, I64, PTR])
        f = ir.Function(m, fnty, self.name)
        self.fn = f
        self_, args, nargs, kwnames = f.args
        entry = f.append_basic_block("entry")
        self.mismatch_bb = f.append_basic_block("mismatch")
        b = Builder(entry)
        self.b = b
        # the context first (allocas in the entry block)
        ctx = alloca(b, CTX_TYPE, name="ctx")
        out = alloca(b, to_ir(self.result_type), name="out")
        self.unbox_buf = alloca(b, ir.ArrayType(I64, 2 + 2 * 32), name="unbox")
        self.ctx = ctx
        ok_n = b.and_(b.icmp_signed("==", nargs, i64(len(self.arg_types))),
                      b.icmp_unsigned("==", kwnames, NULL))
        start = f.append_basic_block("unbox")
        b.cbranch(ok_n, start, self.mismatch_bb)
        b.position_at_end(start)
        values = []
        for i, t in enumerate(self.arg_types):
            o = b.load(gep(b, args, [i64(i)], PTR), typ=PTR)
            values.append(self.unbox(o, t))
        deep = b.icmp_unsigned("==", load_at(b, self_, capi.TUPLE_ITEMS, PTR), self.obj(True))
        fa = frame_address(b)
        budget = b.select(deep, i64(self.deep_budget), i64(SHALLOW_STACK_BUDGET))
        ctx_store(b, ctx, "stack_limit", b.sub(fa, budget))
        ctx_store(b, ctx, "depth", i64(0))
        ctx_store(b, ctx, "countdown", i64(SIGNAL_POLL_PERIOD))
        ctx_store(b, ctx, "check_signals", b.zext(b.not_(deep), I64))
        ctx_store(b, ctx, "err_site", i64(-1))
        for name in ("err_a", "err_b", "err_c"):
            ctx_store(b, ctx, name, i64(0))
        ctx_store(b, ctx, "arena", NULL)
        ctx_store(b, ctx, "bump_cur", NULL)
        ctx_store(b, ctx, "bump_end", NULL)
        ctx_store(b, ctx, "last_yield", b.call(cycle_counter(m), []))
        ctx_store(b, ctx, "allocated", i64(0))
        # a request to interrupt that no running code saw is dropped here
        b.store_atomic(i32(0), declare_global(m, "myia_interrupt_flag", I32),
                       ordering="monotonic", align=4)
        pre = b.block
        save_bb = f.append_basic_block("release_gil")
        call_bb = f.append_basic_block("call")
        b.cbranch(deep, save_bb, call_bb)
        b.position_at_end(save_bb)
        ts1 = b.call(declare(m, "PyEval_SaveThread"), [])
        b.branch(call_bb)
        b.position_at_end(call_bb)
        ts = b.phi(PTR)
        ts.add_incoming(NULL, pre)
        ts.add_incoming(ts1, save_bb)
        st = b.call(self.body, [ctx, *values, out])
        with b.if_then(deep):
            b.call(declare(m, "PyEval_RestoreThread"), [ts])
        ok_bb = f.append_basic_block("ok")
        err_bb = f.append_basic_block("error")
        b.cbranch(b.icmp_signed("==", st, i32(STATUS_OK)), ok_bb, err_bb)
        # success: box, free the arena, return
        b.position_at_end(ok_bb)
        result = self.box(b.load(out, typ=to_ir(self.result_type)), self.result_type)
        b.call(arena_free_fn(m), [ctx])
        b.ret(result)  # null if boxing failed (a Python error is set)
        # failure
        b.position_at_end(err_bb)
        b.call(arena_free_fn(m), [ctx])
        stack_bb = f.append_basic_block("stack")
        other_bb = f.append_basic_block("other")
        b.cbranch(b.and_(b.icmp_signed("==", st, i32(STATUS_STACK)), b.not_(deep)),
                  stack_bb, other_bb)
        b.position_at_end(stack_bb)
        self.answer(DEEP)
        b.position_at_end(other_bb)
        # an interrupt seen through a Python signal handler: its error is set
        pyerr_bb = f.append_basic_block("pyerr")
        raise_bb = f.append_basic_block("raise")
        is_int = b.icmp_signed("==", st, i32(STATUS_INTERRUPT))
        has_err = b.icmp_unsigned("!=", b.call(declare(m, "PyErr_Occurred"), []), NULL)
        b.cbranch(b.and_(is_int, has_err), pyerr_bb, raise_bb)
        b.position_at_end(pyerr_bb)
        b.ret(NULL)
        b.position_at_end(raise_bb)
        tup = b.call(declare(m, "PyTuple_New"), [i64(6)])
        items = [b.sext(st, I64)] + [ctx_load(b, ctx, n) for n in ("err_site", "err_a", "err_b",
                                                                    "err_c", "depth")]
        for k, v in enumerate(items):
            store_at(b, b.call(declare(m, "PyLong_FromLongLong"), [v]), tup, capi.TUPLE_ITEMS + 8 * k)
        error_of = load_at(b, self_, capi.TUPLE_ITEMS + 8, PTR)
        exc = b.call(declare(m, "PyObject_Call"), [error_of, tup, NULL])
        b.call(declare(m, "Py_DecRef"), [tup])
        with b.if_then(b.icmp_unsigned("!=", exc, NULL)):  # (null: error_of failed)
            b.call(declare(m, "PyErr_SetObject"), [load_at(b, exc, capi.OB_TYPE, PTR), exc])
            b.call(declare(m, "Py_DecRef"), [exc])
        b.ret(NULL)
        # signature mismatch
        b.position_at_end(self.mismatch_bb)
        self.answer(MISMATCH)
        return f

    def answer(self, sentinel):
        """Return `sentinel` (MISMATCH, DEEP); or, where the entry has a fallback,
        what the fallback returns for the same arguments."""
        b = self.b
        m = self.module
        self_, args, nargs, kwnames = self.fn.args
        fallback = load_at(b, self_, capi.TUPLE_ITEMS + 16, PTR)
        with b.if_then(b.icmp_unsigned("!=", fallback, self.obj(None))):
            b.ret(b.call(declare(m, "PyObject_Vectorcall"), [fallback, args, nargs, kwnames]))
        s = self.obj(sentinel)
        b.call(declare(m, "Py_IncRef"), [s])
        b.ret(s)

    # ---- unboxing -------------------------------------------------------------------

    def require(self, cond):
        """Continue where cond holds; else the signature does not match."""
        b = self.b
        nxt = b.append_basic_block("ok")
        b.cbranch(cond, nxt, self.mismatch_bb)
        b.position_at_end(nxt)

    def type_of(self, o):
        return load_at(self.b, o, capi.OB_TYPE, PTR)

    def unbox(self, o, t):
        b = self.b
        if isinstance(t, Scalar):
            return self.unbox_scalar(o, t.dtype, isinstance(t, NumpyScalar))
        if isinstance(t, ListType):
            self.require(b.icmp_unsigned("==", self.type_of(o), self.obj(list)))
            n = load_at(b, o, capi.TUPLE_SIZE, I64)
            self.require(b.icmp_signed("==", n, i64(len(t.elems))))
            items = load_at(b, o, LIST_ITEMS, PTR)
            value = ir.Constant(to_ir(t), ir.Undefined)
            for k, et in enumerate(t.elems):
                item = load_at(b, items, 8 * k, PTR)
                value = b.insert_value(value, self.unbox(item, et), k)
            return value
        if isinstance(t, DictType):
            return self.unbox_dict(o, t)
        if isinstance(t, Tuple):
            self.require(b.icmp_unsigned("==", self.type_of(o), self.obj(tuple)))
            n = load_at(b, o, capi.TUPLE_SIZE, I64)
            self.require(b.icmp_signed("==", n, i64(len(t.elems))))
            value = ir.Constant(to_ir(t), ir.Undefined)
            for k, et in enumerate(t.elems):
                item = load_at(b, o, capi.TUPLE_ITEMS + 8 * k, PTR)
                value = b.insert_value(value, self.unbox(item, et), k)
            return value
        if isinstance(t, Array):
            return self.unbox_array(o, t)
        if isinstance(t, Static):
            # None, a bool, a string (a dtype name or a mode passed as a default): the
            # very object the program was compiled for; another one takes the slow path
            if t.value is None or isinstance(t.value, (bool, str)):
                self.require(b.icmp_unsigned("==", o, self.obj(t.value)))
                return ir.Constant(to_ir(t), [])
        raise NotImplementedError(f"arguments of type {t} from Python")

    def unbox_dict(self, o, t):
        """The values of dict `o`, whose keys must be t's, in t's order."""
        b = self.b
        m = self.module
        self.require(b.icmp_unsigned("==", self.type_of(o), self.obj(dict)))
        pos = alloca(b, I64)
        b.store(i64(0), pos)
        key_p = alloca(b, PTR)
        value_p = alloca(b, PTR)
        value = ir.Constant(to_ir(t), ir.Undefined)
        for k, (key, et) in enumerate(zip(t.keys, t.elems)):
            more = b.call(declare(m, "PyDict_Next"), [o, pos, key_p, value_p])
            self.require(b.icmp_signed("!=", more, i32(0)))
            found = b.load(key_p, typ=PTR)
            expected = self.obj(key)
            # the same object (an interned string), or an equal one of the same type
            self.require(b.icmp_unsigned("==", self.type_of(found), self.obj(type(key))))
            same = b.icmp_unsigned("==", found, expected)
            with b.if_then(b.not_(same)):
                eq = b.call(declare(m, "PyObject_RichCompareBool"), [found, expected, i32(PY_EQ)])
                self.require(b.icmp_signed("==", eq, i32(1)))
            value = b.insert_value(value, self.unbox(b.load(value_p, typ=PTR), et), k)
        more = b.call(declare(m, "PyDict_Next"), [o, pos, key_p, value_p])
        self.require(b.icmp_signed("==", more, i32(0)))
        return value

    def unbox_scalar(self, o, dtype, numpy=False):
        """A number of the signature: a Python number, or (`numpy`) a NumPy scalar."""
        b = self.b
        typ = self.type_of(o)
        if dtype == "float64":
            self.require(b.icmp_unsigned("==", typ, self.obj(np.float64 if numpy else float)))
            return load_at(b, o, capi.FLOAT_VALUE, F64)
        if dtype == "float32":
            self.require(b.icmp_unsigned("==", typ, self.obj(np.float32)))
            return load_at(b, o, capi.FLOAT_VALUE, F32)
        if dtype == "bool":
            true, false = (np.True_, np.False_) if numpy else (True, False)
            is_true = b.icmp_unsigned("==", o, self.obj(true))
            is_false = b.icmp_unsigned("==", o, self.obj(false))
            self.require(b.or_(is_true, is_false))
            return is_true
        if dtype == "int64" and numpy:
            self.require(b.icmp_unsigned("==", typ, self.obj(np.int64)))
            return load_at(b, o, capi.FLOAT_VALUE, I64)
        if dtype == "int64":
            f = self.fn
            py_bb = f.append_basic_block("pylong")
            done = f.append_basic_block("int")
            b.cbranch(b.icmp_unsigned("==", typ, self.obj(int)), py_bb, self.mismatch_bb)
            b.position_at_end(py_bb)
            v_py = b.call(declare(self.module, "PyLong_AsLongLong"), [o])
            # -1 may be an overflow: then the value is not an int64
            check = f.append_basic_block("overflow?")
            good = f.append_basic_block("good")
            b.cbranch(b.icmp_signed("==", v_py, i64(-1)), check, good)
            b.position_at_end(check)
            err = b.call(declare(self.module, "PyErr_Occurred"), [])
            clear = f.append_basic_block("clear")
            b.cbranch(b.icmp_unsigned("==", err, NULL), good, clear)
            b.position_at_end(clear)
            b.call(declare(self.module, "PyErr_Clear"), [])
            b.branch(self.mismatch_bb)
            b.position_at_end(good)
            b.branch(done)
            b.position_at_end(done)
            return v_py
        raise NotImplementedError(dtype)

    def unbox_array(self, o, t):
        """Through `myia_unbox_array` (one copy of the checks per module)."""
        b = self.b
        nd = t.ndim
        if nd > 32:
            raise NotImplementedError("arrays of more than 32 dimensions")
        nums = capi.TYPE_NUMS[t.dtype]
        expect = alloca(b, ir.ArrayType(I64, max(nd, 1)))
        for k, d in enumerate(t.shape):
            b.store(i64(-1 if d is None else d), gep(b, expect, [i32(0), i32(k)],
                                                     ir.ArrayType(I64, max(nd, 1))))
        ok = b.call(unbox_array_fn(self.module), [
            o, self.obj(np.ndarray), i32(nd), i64(ITEMSIZE[t.dtype]), i32(nums[0]),
            i32(nums[-1]), expect, self.unbox_buf])
        self.require(ok)
        return b.load(self.unbox_buf, typ=to_ir(t))

    # ---- boxing ---------------------------------------------------------------------

    def box(self, v, t):
        """A new reference to the Python value of native `v` (null on error)."""
        b = self.b
        m = self.module
        if isinstance(t, NumpyScalar) and t.dtype != "bool":
            # the Python number, given to the NumPy scalar's type
            number = self.box(v, Scalar(t.dtype))
            r = b.call(declare(m, "PyObject_CallOneArg"), [self.obj(_TYPES[t.dtype]), number])
            b.call(declare(m, "Py_DecRef"), [number])
            return r
        if isinstance(t, Scalar):
            if t.dtype == "float64":
                return b.call(declare(m, "PyFloat_FromDouble"), [v])
            if t.dtype == "int64":
                return b.call(declare(m, "PyLong_FromLongLong"), [v])
            if t.dtype == "bool":
                true, false = (np.True_, np.False_) if isinstance(t, NumpyScalar) else (True, False)
                o = b.select(v, self.obj(true), self.obj(false))
                b.call(declare(m, "Py_IncRef"), [o])
                return o
            if t.dtype == "float32":
                f = b.call(declare(m, "PyFloat_FromDouble"), [b.fpext(v, F64)])
                r = b.call(declare(m, "PyObject_CallOneArg"), [self.obj(np.float32), f])
                b.call(declare(m, "Py_DecRef"), [f])
                return r
        if isinstance(t, ListType):
            lst = b.call(declare(m, "PyList_New"), [i64(len(t.elems))])
            items = load_at(b, lst, LIST_ITEMS, PTR)
            failed = ir.Constant(I1, 0)
            for k, et in enumerate(t.elems):
                item = self.box(b.extract_value(v, k), et)
                failed = b.or_(failed, b.icmp_unsigned("==", item, NULL))
                store_at(b, item, items, 8 * k)
            with b.if_then(failed, likely=False):
                b.call(declare(m, "Py_DecRef"), [lst])
            return b.select(failed, NULL, lst)
        if isinstance(t, DictType):
            d = b.call(declare(m, "PyDict_New"), [])
            failed = ir.Constant(I1, 0)
            for k, (key, et) in enumerate(zip(t.keys, t.elems)):
                item = self.box(b.extract_value(v, k), et)
                bad = b.icmp_unsigned("==", item, NULL)
                failed = b.or_(failed, bad)
                with b.if_then(b.not_(bad)):
                    b.call(declare(m, "PyDict_SetItem"), [d, self.obj(key), item])
                    b.call(declare(m, "Py_DecRef"), [item])
            with b.if_then(failed, likely=False):
                b.call(declare(m, "Py_DecRef"), [d])
            return b.select(failed, NULL, d)
        if isinstance(t, Tuple):
            tup = b.call(declare(m, "PyTuple_New"), [i64(len(t.elems))])
            # elements that fail to box leave null items; the tuple is then dropped
            failed = ir.Constant(I1, 0)
            for k, et in enumerate(t.elems):
                item = self.box(b.extract_value(v, k), et)
                failed = b.or_(failed, b.icmp_unsigned("==", item, NULL))
                store_at(b, item, tup, capi.TUPLE_ITEMS + 8 * k)
            with b.if_then(failed, likely=False):
                b.call(declare(m, "Py_DecRef"), [tup])
            return b.select(failed, NULL, tup)
        if isinstance(t, Static):
            o = self.obj(t.value)
            b.call(declare(m, "Py_IncRef"), [o])
            return o
        if isinstance(t, Array):
            return self.box_array(v, t)
        raise NotImplementedError(f"results of type {t} to Python")

    def box_array(self, v, t):
        b = self.b
        nd = t.ndim
        buf = alloca(b, to_ir(t))
        b.store(v, buf)
        return b.call(box_array_fn(self.module), [
            self.ctx, i32(nd), at(b, buf, 8), at(b, buf, 8 + 8 * nd), i64(ITEMSIZE[t.dtype]),
            i32(capi.NEW_TYPE_NUM[t.dtype]), b.extract_value(v, 0),
            self.obj(np.ndarray), self.obj(np.array), self.obj(np.ascontiguousarray)])


@runtime_fn("myia_unbox_array", I1, [PTR, PTR, I32, I64, I32, I32, PTR, PTR])
def unbox_array_fn(f):
    """i1 myia_unbox_array(obj, ndarray type, i32 nd, i64 itemsize, i32 num_a, i32 num_b,
    i64 *expected dims (-1: any), out {data, dims[nd], strides[nd]} (strides in items)):
    false if `obj` is not an aligned, native-order ndarray of that rank, dtype and
    shape."""
    o, ndarray, nd, itemsize, num_a, num_b, expect, out = f.args
    b = ir.IRBuilder(f.append_basic_block())
    no = f.append_basic_block("no")

    def need(cond):
        nxt = f.append_basic_block("yes")
        b.cbranch(cond, nxt, no)
        b.position_at_end(nxt)

    need(b.icmp_unsigned("==", load_at(b, o, capi.OB_TYPE, PTR), ndarray))
    need(b.icmp_signed("==", load_at(b, o, capi.ARRAY_ND, I32), nd))
    descr = load_at(b, o, capi.ARRAY_DESCR, PTR)
    num = load_at(b, descr, capi.DESCR_TYPE_NUM, I32)
    need(b.or_(b.icmp_signed("==", num, num_a), b.icmp_signed("==", num, num_b)))
    order = load_at(b, descr, capi.DESCR_BYTEORDER, I8)
    need(b.icmp_unsigned("!=", order, ir.Constant(I8, ord(">"))))
    flags = load_at(b, o, capi.ARRAY_FLAGS, I32)
    need(b.icmp_unsigned("!=", b.and_(flags, i32(capi.NPY_ARRAY_ALIGNED)), i32(0)))
    data = load_at(b, o, capi.ARRAY_DATA, PTR)
    dims = load_at(b, o, capi.ARRAY_DIMS, PTR)
    strides = load_at(b, o, capi.ARRAY_STRIDES, PTR)
    b.store(data, out)
    n64 = b.zext(nd, I64)
    pre = b.block
    loop = f.append_basic_block("dim")
    body = f.append_basic_block("dim.body")
    done = f.append_basic_block("dims.done")
    b.branch(loop)
    b.position_at_end(loop)
    k = b.phi(I64)
    k.add_incoming(i64(0), pre)
    b.cbranch(b.icmp_signed("<", k, n64), body, done)
    b.position_at_end(body)
    off = b.mul(k, i64(8))
    d = b.load(at(b, dims, off), typ=I64)
    e = b.load(at(b, expect, off), typ=I64)
    need(b.or_(b.icmp_signed("==", e, i64(-1)), b.icmp_signed("==", d, e)))
    s = b.load(at(b, strides, off), typ=I64)
    need(b.icmp_signed("==", b.srem(s, itemsize), i64(0)))
    b.store(d, at(b, out, b.add(off, i64(8))))
    b.store(b.sdiv(s, itemsize), at(b, out, b.add(b.add(off, i64(8)), b.mul(n64, i64(8)))))
    k.add_incoming(b.add(k, i64(1)), b.block)
    b.branch(loop)
    b.position_at_end(done)
    b.ret(ir.Constant(I1, 1))
    b.position_at_end(no)
    b.ret(ir.Constant(I1, 0))


@runtime_fn("myia_box_array", PTR, [PTR, I32, PTR, PTR, I64, I32, PTR, PTR, PTR, PTR],
            nocapture=(0,))
def box_array_fn(f):
    """PyObject *myia_box_array(ctx, i32 nd, i64 *dims, i64 *strides (items), i64
    itemsize, i32 typenum, ptr data, ndarray type, numpy.array,
    numpy.ascontiguousarray): a new reference to an ndarray over `data`, whose base
    owns the data: the escaping arena block's capsule.  Any other data is copied: a
    chunk of the arena, and an argument or a constant of the program (a result never
    shares memory with them: `np.copy(x)`, `x * 1.0` and `W` are new arrays, as in
    JAX); a broadcast view (a zero stride) too.  Null with a Python error on failure."""
    module = f.module
    (ctx, nd, dims, estrides, itemsize, typenum, data, ndarray, np_array, np_contig) = f.args
    b = ir.IRBuilder(f.append_basic_block())
    n64 = b.zext(nd, I64)
    bstrides = alloca(b, ir.ArrayType(I64, 32))
    size_p = alloca(b, I64)
    zero_p = alloca(b, I1)
    b.store(i64(1), size_p)
    b.store(ir.Constant(I1, 0), zero_p)
    with for_range(b, 0, n64, name="k") as k:
        off = b.mul(k, i64(8))
        d = b.load(at(b, dims, off), typ=I64)
        s = b.load(at(b, estrides, off), typ=I64)
        b.store(b.mul(s, itemsize), at(b, bstrides, off))
        b.store(b.mul(b.load(size_p, typ=I64), d), size_p)
        z = b.and_(b.icmp_signed("==", s, i64(0)), b.icmp_signed(">", d, i64(1)))
        b.store(b.or_(b.load(zero_p, typ=I1), z), zero_p)
    empty = b.icmp_signed("==", b.load(size_p, typ=I64), i64(0))
    descr = b.call(declare(module, "PyArray_DescrFromType"), [typenum])
    arr = b.call(declare(module, "PyArray_NewFromDescr"), [
        ndarray, descr, nd, dims, bstrides, b.select(empty, NULL, data),
        i32(NPY_ARRAY_WRITEABLE), NULL])
    done = f.append_basic_block("done")
    own = f.append_basic_block("own")
    b.cbranch(b.or_(empty, b.icmp_unsigned("==", arr, NULL)), done, own)
    b.position_at_end(done)
    b.ret(arr)
    b.position_at_end(own)
    own_obj = b.call(arena_owner_fn(module), [ctx, data])
    result = alloca(b, PTR)
    b.store(arr, result)
    with b.if_else(b.icmp_unsigned("!=", own_obj, NULL)) as (then, otherwise):
        with then:
            b.call(declare(module, "PyArray_SetBaseObject"), [arr, own_obj])
        with otherwise:
            # data that no block of the arena owns (a chunk, an argument, a constant)
            copy = b.call(declare(module, "PyObject_CallOneArg"), [np_array, arr])
            b.call(declare(module, "Py_DecRef"), [arr])
            b.store(copy, result)
    cur = b.load(result, typ=PTR)
    with b.if_then(b.and_(b.load(zero_p, typ=I1), b.icmp_unsigned("!=", cur, NULL)),
                   likely=False):
        copy = b.call(declare(module, "PyObject_CallOneArg"), [np_contig, cur])
        b.call(declare(module, "Py_DecRef"), [cur])
        b.store(copy, result)
    b.ret(b.load(result, typ=PTR))


# ---- making the Python callable ---------------------------------------------------------


class PyMethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


_new_cfunction = ctypes.pythonapi.PyCFunction_NewEx
_new_cfunction.restype = ctypes.py_object
_new_cfunction.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p]

def make_callable(address, name, deep, error_of, fallback=None, doc="", keep=None):
    """A builtin-function object calling the native entry at `address`, whose `self`
    is (deep, error_of, fallback) (see EntryBuilder) and what must live as long as the
    function: its method definition and `keep` (the machine code's engine)."""
    bname = name.encode()
    d = PyMethodDef(bname, address, METH_FASTCALL | METH_KEYWORDS, doc.encode() or None)
    self_obj = (deep, error_of, fallback, (d, bname, keep))
    return _new_cfunction(ctypes.addressof(d), self_obj, None)
