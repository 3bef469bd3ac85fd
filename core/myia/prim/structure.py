"""Tuples, indexing, control flow and checks."""

import numpy as np

from ..errors import MyiaAssertionError, MyiaTypeError, MyiaValueError
from .containers import same_container
from .grad_ops import zeros_like
from .primitive import Primitive, batch, bprop, jet, jvp, linear_in


def _switch(cond, if_true, if_false):
    if not isinstance(cond, (bool, np.bool_)):
        raise MyiaTypeError(f"switch expects a bool condition, got {type(cond).__name__}")
    return if_true if cond else if_false


switch = Primitive("switch", _switch, "cond ? x : y, for a bool cond (both are evaluated)")


@bprop(switch)
def bprop_switch(cond, x, y, out, dout):
    return (False, switch(cond, dout, zeros_like(x)), switch(cond, zeros_like(y), dout))


@jvp(switch)
def jvp_switch(cond, x, y, dcond, dx, dy):
    return switch(cond, dx, dy)


jet(switch)(linear_in(1, 2))


# make_tuple takes any number of inputs: its bprop is built per arity by myia.ad.
make_tuple = Primitive("make_tuple", lambda *xs: xs, "(x, y, ...)", foldable=True)
jet(make_tuple)(linear_in())  # the tuple of the inputs' coefficients


def _check_tuple(t, what):
    if not isinstance(t, tuple):
        raise MyiaTypeError(f"{what} expects a tuple, got a {type(t).__name__}")


def _tuple_getitem(t, i):
    _check_tuple(t, "tuple_getitem")
    try:
        return t[i]
    except IndexError:
        raise MyiaValueError(f"tuple index {i} out of range for a tuple of length {len(t)}") from None


def _tuple_setitem(t, i, v):
    _check_tuple(t, "tuple_setitem")
    return same_container(t, t[:i] + (v,) + t[i + 1:] if i != -1 else t[:-1] + (v,))


tuple_getitem = Primitive("tuple_getitem", _tuple_getitem, "t[i] for a constant i", foldable=True)
tuple_setitem = Primitive("tuple_setitem", _tuple_setitem, "t with element i replaced by v",
                          foldable=True)
tuple_tail = Primitive("tuple_tail", lambda t: t[1:], "t[1:]", foldable=True)
tuple_cons = Primitive("tuple_cons", lambda h, t: (h, *t), "(h, *t)", foldable=True)


@bprop(tuple_getitem)
def bprop_tuple_getitem(t, i, out, dout):
    return (tuple_setitem(zeros_like(t), i, dout), 0)


@jvp(tuple_getitem)
def jvp_tuple_getitem(t, i, dt, di):
    return tuple_getitem(dt, i)


jet(tuple_getitem)(linear_in(0))


@bprop(tuple_setitem)
def bprop_tuple_setitem(t, i, v, out, dout):
    return (tuple_setitem(dout, i, zeros_like(v)), 0, tuple_getitem(dout, i))


@jvp(tuple_setitem)
def jvp_tuple_setitem(t, i, v, dt, di, dv):
    return tuple_setitem(dt, i, dv)


jet(tuple_setitem)(linear_in(0, 2))


@bprop(tuple_tail)
def bprop_tuple_tail(t, out, dout):
    return (tuple_cons(zeros_like(tuple_getitem(t, 0)), dout),)


@jvp(tuple_tail)
def jvp_tuple_tail(t, dt):
    return tuple_tail(dt)


jet(tuple_tail)(linear_in(0))


@bprop(tuple_cons)
def bprop_tuple_cons(h, t, out, dout):
    return (tuple_getitem(dout, 0), tuple_tail(dout))


@jvp(tuple_cons)
def jvp_tuple_cons(h, t, dh, dt):
    return tuple_cons(dh, dt)


jet(tuple_cons)(linear_in(0, 1))


def _key_position(x, index):
    """A dict's key as the position of its value (a DictValue knows its keys: what
    the VM runs where specialization left a dict untyped; elsewhere the specializer
    has made keys positions already)."""
    if type(x).__name__ == "DictValue" and not isinstance(index, slice):
        try:
            return x.keys.index(index)
        except ValueError:
            raise MyiaValueError(f"key {index!r} is not in the dict") from None
    return index


def _getitem(x, index):
    if isinstance(x, tuple):
        if isinstance(index, slice):
            return x[index]
        return _tuple_getitem(x, _key_position(x, index))
    if isinstance(x, np.ndarray):
        try:
            out = x[index]
        except IndexError as e:  # NumPy's words, as the LLVM backend's check says them
            raise MyiaValueError(f"{e} (an array of shape {x.shape})") from None
        return out
    raise MyiaTypeError(f"cannot index a value of type {type(x).__name__}")


def _getitem_grad(x, index, d):
    """The sensitivity of x[index] is d; this is the sensitivity of x."""
    if isinstance(x, tuple):
        z = list(zeros_like.impl(x))
        z[_key_position(x, index)] = d
        return same_container(x, z)
    out = np.zeros_like(x)
    np.add.at(out, index, d)
    return out


def _index_kind(index):
    """How an index reads an array: "mask" (one bool array), "arrays" (integer arrays
    among its items: positions known only at run time), else "basic"."""
    items = index if isinstance(index, tuple) else (index,)
    arrays = [it for it in items if isinstance(it, np.ndarray) and it.ndim > 0]
    if len(items) == 1 and arrays and arrays[0].dtype == np.bool_:
        return "mask"
    return "arrays" if arrays else "basic"


getitem = Primitive("getitem", _getitem, "x[index] for a tuple or an array", foldable=True)
# (what index assignment does depends on it: myia.lib.np_update)
index_kind = Primitive("index_kind", _index_kind,
                       "'mask', 'arrays' or 'basic': how index reads an array", nondiff=True)
getitem_grad = Primitive("getitem_grad", _getitem_grad,
                         "zeros like x, with the sensitivity d added at index")


@bprop(getitem)
def bprop_getitem(x, index, out, dout):
    return (getitem_grad(x, index, dout), zeros_like(index))


@jvp(getitem)
def jvp_getitem(x, index, dx, dindex):
    return getitem(dx, index)


jet(getitem)(linear_in(0))


@bprop(getitem_grad)
def bprop_getitem_grad(x, index, d, out, dout):
    return (zeros_like(x), zeros_like(index), getitem(dout, index))


@jvp(getitem_grad)
def jvp_getitem_grad(x, index, d, dx, dindex, dd):
    return getitem_grad(x, index, dd)


jet(getitem_grad)(linear_in(2))


def _backend_only(*args):
    raise NotImplementedError("make_closure is implemented by each backend")


# Made by closure conversion, after differentiation: it never meets AD.
make_closure = Primitive("make_closure", _backend_only,
                         "a closure record: a top-level graph and its captured values",
                         nondiff=True)


def _closure_bound(f, i):
    args = getattr(f, "args", None)  # the VM's Partial
    if args is None:
        raise MyiaTypeError(f"closure_bound of {f!r}, which make_closure did not make")
    return args[i]


# Made by specialization for J of a closure made elsewhere (see myia.infer.specialize):
# the i-th value make_closure bound in the record f.
closure_bound = Primitive("closure_bound", _closure_bound,
                          "the i-th value bound in a make_closure record", nondiff=True)


def _assert(cond, message):
    if not cond:
        raise MyiaAssertionError(f"assertion failed{': ' + str(message) if message else ''}")
    return True


def _len(x):
    if isinstance(x, (tuple, np.ndarray, str)):  # (a str: a dict's key)
        return len(x)
    raise MyiaTypeError(f"len() of a {type(x).__name__}")


make_slice = Primitive("make_slice", lambda a, b, c: slice(a, b, c), "slice(start, stop, step)",
                       nondiff=True, foldable=True)
len_ = Primitive("len", _len, "len(x) of a tuple or an array", nondiff=True, foldable=True)
assert_ = Primitive("assert", _assert, "raise if cond is false", nondiff=True, effect=True)


# ---- batching rules (vmap: myia.ad.batching) ---------------------------------------

def _batched_index(b, index):
    """The index of one example's array as an index of the batched array: a whole
    slice in front of it; an int that differs between the examples picks, for each
    example (np.arange(B)), its own row."""
    if index.batched:
        a = index.abstract
        if a.__class__.__name__ == "AScalar" and a.dtype in ("int64", "int32"):
            return b.apply(make_tuple, np.arange(b.B), index)
        raise b.error("vmap: an index that differs between the examples (other than "
                      "one int)", hint="index with a value shared by every example, or "
                                       "use np.take_along_axis")
    items = index.value
    if items is NotImplemented:  # (known at run time only: an int, or a tuple of them)
        if index.abstract.__class__.__name__ == "ATuple":
            return b.apply(tuple_cons, slice(None), index)
        return b.apply(make_tuple, slice(None), index)
    items = items if isinstance(items, tuple) else (items,)
    arrays = [i for i, it in enumerate(items) if isinstance(it, np.ndarray)]
    if any(items[i].dtype == np.bool_ for i in arrays):
        raise b.error("vmap: a boolean mask index (each example could select a different "
                      "number of elements)", hint="use np.where(mask, x, 0) instead")
    if arrays and arrays[-1] - arrays[0] != len(arrays) - 1:
        raise b.error("vmap: integer-array indices separated by a slice (NumPy moves "
                      "their axes in front, which the batch axis must keep)",
                      hint="index one axis at a time")
    return (slice(None),) + items


@batch(getitem)
def batch_getitem(b, x, index):
    if hasattr(x.abstract, "elements"):  # a tuple or a list, at a constant position
        i = b.constant(index, "the position in a tuple")
        specs = x.batched if isinstance(x.batched, tuple) else (x.batched,) * len(
            x.abstract.elements)
        return b.apply(getitem, x, index), (tuple(specs[i]) if isinstance(i, slice)
                                            else specs[i])
    return b.apply(getitem, b.batched(x), _batched_index(b, index))


@batch(getitem_grad)
def batch_getitem_grad(b, x, index, d):
    if hasattr(x.abstract, "elements"):  # d at a constant position of a tuple of zeros
        i = b.constant(index, "the position in a tuple")
        if not isinstance(i, int):
            raise b.error("vmap: the gradient of a slice of a tuple")
        i %= len(x.abstract.elements)
        specs = list(x.batched if isinstance(x.batched, tuple) else (x.batched,) * len(
            x.abstract.elements))
        specs[i] = d.batched
        parts = [d.node if j == i else b.apply(zeros_like, b.apply(tuple_getitem, x, j))
                 for j in range(len(specs))]
        return b.apply(make_tuple, *parts), tuple(specs)
    return b.apply(getitem_grad, b.batched(x), _batched_index(b, index), b.batched(d))


@batch(len_)
def batch_len(b, x):
    a = x.abstract
    n = len(a.elements) if hasattr(a, "elements") else x.shape[0]
    return b.graph.constant(n), False
