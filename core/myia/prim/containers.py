"""Lists and dicts: tuples whose kind inference remembers (see myia.abstract).

A list or a dict is a tuple at run time; what it is for Python (and for `d["k"]`,
iteration and the values a compiled function returns) is part of its type.  These
primitives change or read that type and do nothing at run time:

    tuple_as(t, kind)       t seen as a container of `kind`: "tuple", "list", or
                            ("dict", keys) for a dict of t's values under those keys
                            (a constant; a literal `[a, b]` is tuple_as((a, b), "list"))
    structure_like(d, x)    d with the kinds of x, recursively (the sensitivity of a
                            list is a list, of a dict a dict with the same keys)
    kind_of(x)              the kind of x as a constant: "tuple", "list", ("dict",
                            keys), or None when x is not a container (an array, a
                            number): library code chooses at compile time with it
"""

from ..errors import MyiaTypeError
from .grad_ops import zeros_like
from .primitive import Primitive, bprop, jet, jvp, linear_in

#: the types of the keys a dict may have (compared by value at compile time)
KEY_TYPES = (str, int, bool, type(None))


class ListValue(tuple):
    """A constant list of the program (a tuple that remembers it is a list)."""

    __slots__ = ()

    def __repr__(self):
        return repr(list(self))


class DictValue(tuple):
    """A constant dict of the program: its values in order, and its keys."""

    def __new__(cls, values, keys):
        self = super().__new__(cls, values)
        self.keys = tuple(keys)
        return self

    def __reduce__(self):
        return (DictValue, (tuple(self), self.keys))

    def __repr__(self):
        return repr(dict(zip(self.keys, self)))


def container_value(values, kind):
    """The constant of kind `kind` ("tuple", "list" or ("dict", keys)) holding
    `values`."""
    if kind == "list":
        return ListValue(values)
    if type(kind) is tuple:
        return DictValue(values, kind[1])
    return tuple(values)


def kind_of_value(value):
    """The kind of a Python tuple, list or dict (or of a ListValue, a DictValue)."""
    t = type(value)
    if t is tuple:
        return "tuple"
    if t is list or t is ListValue:
        return "list"
    if t is DictValue:
        return ("dict", value.keys)
    if t is dict:
        return ("dict", tuple(value.keys()))
    return "tuple" if isinstance(value, tuple) else None


def _tuple_as(t, kind):
    if not isinstance(t, tuple):
        raise MyiaTypeError(f"tuple_as expects a tuple, got a {type(t).__name__}")
    # (a dict that the VM runs untyped reads its keys from the value: see getitem;
    # only a value typed as a dict is a DictValue)
    if type(kind) is tuple:
        return DictValue(t, kind[1])
    return tuple(t) if type(t) is DictValue else t


def same_container(x, values):
    """`values` as a tuple, or as a DictValue with x's keys when x is one: the VM runs
    programs that specialization left untyped (the backpropagator myia.vjp returns)
    on values, and a dict's sensitivity must know its keys there too."""
    if type(x) is DictValue and len(values) == len(x):
        return DictValue(values, x.keys)
    return tuple(values)


def _structure_like(d, x):
    return same_container(x, d) if isinstance(d, tuple) else d


def _kind_of(x):
    # inference knows the answer and folds it; at run time (a program left untyped)
    # a list is a tuple, and a dict a DictValue (see tuple_as), which knows its keys
    if isinstance(x, tuple):
        kind = kind_of_value(x)
        return "tuple" if kind == "list" and type(x) is not ListValue else kind
    return None


tuple_as = Primitive("tuple_as", _tuple_as, "t as a tuple, a list or a dict (static kind)")
structure_like = Primitive("structure_like", _structure_like,
                           "d with the container kinds of x (lists, dicts)")
kind_of = Primitive("kind_of", _kind_of, "the container kind of x, or None", nondiff=True)


@bprop(tuple_as)
def bprop_tuple_as(t, kind, out, dout):
    return (structure_like(dout, t), zeros_like(kind))


@jvp(tuple_as)
def jvp_tuple_as(t, kind, dt, dkind):
    return tuple_as(dt, kind)


jet(tuple_as)(linear_in(0))


@bprop(structure_like)
def bprop_structure_like(d, x, out, dout):
    return (structure_like(dout, d), zeros_like(x))


@jvp(structure_like)
def jvp_structure_like(d, x, dd, dx):
    return structure_like(dd, x)


jet(structure_like)(linear_in(0))
