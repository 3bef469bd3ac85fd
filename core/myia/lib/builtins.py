"""Python's builtins, the `math` and `operator` modules and functools.reduce, as the
subset sees them; lists, dicts and the loops over them.

Containers have a static structure (see myia.abstract, "Containers"): a list
or a dict is a tuple whose kind the compiler knows, so `len`, `list(t)`, `zip` or
`d.keys()` are decided at compile time, and a loop over a tuple, a list or a dict runs
once per element at compile time (its elements may have different types).  A loop
over an array runs over its first axis at run time.

    for x in seq      iter_start(seq), then while iter_more(state):
                      x, state = iter_next(state)
    x in seq          py_contains(seq, x)
    d.keys() ...      METHODS, the methods of dicts (MUTATING_METHODS: those refused)
    {k: v for ...}    dict_set(acc, k, v) for each pair; {**a, **b} is dict_merge(a, b)
"""

import functools
import math
import operator

import numpy as np

from ..errors import MyiaTypeError
from ..prim import compile_time
from ..prim import ops as P
from ..prim.logic import range_message
from .np_linalg import np_matmul
from .np_shape import index_with_lists


def py_max(a, b=None):
    if b is None:
        return _extreme(a, True)
    if b > a:
        return b
    return a


def py_min(a, b=None):
    if b is None:
        return _extreme(a, False)
    if b < a:
        return b
    return a


def _extreme(seq, largest):
    """max(seq) or min(seq): the first largest (smallest) element."""
    best = _first(seq)
    for x in seq:
        if largest:
            if x > best:
                best = x
        elif x < best:
            best = x
    return best


def _first(seq):
    if _is_dict(P.kind_of(seq)):
        return _dict_keys(P.kind_of(seq), "keys")[0]
    return seq[0]


def py_bool(x):
    return P.truth(x)


@compile_time
def _positive_kind(python_number, dtype):
    """How `+x` works on x: 1 for a Python bool (the int: +True is 1), else 0 (x
    itself); NumPy refuses it for its bools."""
    if dtype == "bool" and not python_number:
        raise MyiaTypeError("unary `+` of a NumPy bool (or of a bool array) is an error in "
                            "NumPy", hint="convert it first: x.astype(int)")
    return 1 if dtype == "bool" else 0


def _itself(x):
    return x


def py_pos(x):
    """+x."""
    return (_itself, P.to_int)[_positive_kind(P.python_number(x), P.dtype(x))](x)


def math_floor(x):
    return P.to_int(P.floor(x))


def math_pow(x, y):
    return P.to_float(x) ** P.to_float(y)


# ---- containers -----------------------------------------------------------------------


@compile_time
def _is_dict(kind):
    """Whether a container kind (see myia.prim.containers.kind_of) is a dict's."""
    return isinstance(kind, tuple)


@compile_time
def _dict_keys(kind, method):
    """The keys of a dict of that kind (the method asking, for the error)."""
    if not isinstance(kind, tuple):
        what = "an array or a number" if kind is None else f"a {kind}"
        raise MyiaTypeError(f"`.{method}()` is a method of dicts, not of {what}")
    return tuple(kind[1])


@compile_time
def _row_indices(shape):
    """The indices of the rows of an array of that shape (a number has none)."""
    return tuple(range(shape[_first_row(shape)]))


@compile_time
def _first_row(shape):
    """0, the index of the first row of an array of that shape (a number has none)."""
    if not shape:
        raise MyiaTypeError("cannot iterate over a number (or a 0-d array)",
                            hint="iterate over a tuple, a list, a dict or an array")
    return 0


@compile_time
def _range(start, stop, step):
    """range(start, stop, step) as a tuple of ints."""
    if stop is None:
        start, stop = 0, start
    for what, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, (float, np.floating)):  # (Python's TypeError, located)
            raise MyiaTypeError(range_message(what, f"a {np.dtype(type(v))}"),
                                hint="use an int: range(int(n))")
    return tuple(range(start, stop, 1 if step is None else step))


@compile_time
def _shortest(lengths):
    return min(lengths, default=0)


@compile_time
def _index_of(keys, key):
    for i, k in enumerate(keys):
        if k == key and type(k) is type(key):
            return i
    return -1


@compile_time
def _dict_key(key):
    """A key of a dict, which must be known at compile time."""
    return key


def py_range(start, stop=None, step=None):
    """range(...) as a value: the tuple of its ints (its bounds known at compile time).
    (`for i in range(n)` is a counting loop; see myia.parser.)"""
    return _range(start, stop, step)


def _elements(seq):
    """The elements a loop over `seq` visits, as a tuple: a tuple's or a list's, a
    dict's keys, an array's rows."""
    kind = P.kind_of(seq)
    if kind is None:
        return P.tuple_as([seq[i] for i in _row_indices(P.shape(seq))], "tuple")
    if _is_dict(kind):
        return _dict_keys(kind, "keys")
    return P.tuple_as(seq, "tuple")


def iter_start(seq):
    """The state of a `for` loop over `seq`: (what is left to visit, or the array; the
    index of the next element)."""
    kind = P.kind_of(seq)
    if kind is None:
        return (seq, _first_row(P.shape(seq)))
    return (_elements(seq), 0)


def iter_more(state):
    rest, i = state
    if P.kind_of(rest) is None:
        return i < P.len_(rest)
    return P.len_(rest) > 0


def iter_next(state):
    """(the next element, the state after it)."""
    rest, i = state
    if P.kind_of(rest) is None:
        return rest[i], (rest, i + 1)
    return P.tuple_getitem(rest, 0), (P.tuple_tail(rest), i + 1)


def py_list(seq=()):
    return P.tuple_as(_elements(seq), "list")


def py_tuple(seq=()):
    return _elements(seq)


def py_dict(pairs=()):
    """dict(d) or dict(pairs): the keys must be known at compile time."""
    if _is_dict(P.kind_of(pairs)):
        return pairs  # a copy is the same value
    items = _elements(pairs)
    keys = _elements([_dict_key(p[0]) for p in items])
    return P.tuple_as(_elements([p[1] for p in items]), ("dict", keys))


def dict_set(d, key, value):
    """d with `key` set to `value`: a new dict (the key known at compile time)."""
    keys = _dict_keys(P.kind_of(d), "keys")
    i = _index_of(keys, _dict_key(key))
    values = P.tuple_as(d, "tuple")
    if i < 0:
        return P.tuple_as(_append(values, value), ("dict", keys + (key,)))
    return P.tuple_as(P.tuple_setitem(values, i, value), ("dict", keys))


def _append(t, x):
    """t + (x,), by operations whose derivative rules hold in any program (typed or
    not: the rule of `+` does not know tuples)."""
    return P.tuple_cons(x, t[::-1])[::-1]


def list_append(x, v):
    """`x.append(v)` as the statement `x = list_append(x, v)`: a new list, where the
    parser has checked that no other name sees x's list (myia.parser.mutation)."""
    checked = (x,)[_a_list(P.kind_of(x), "append")]  # (0: the check is used)
    return P.tuple_as(_append(P.tuple_as(checked, "tuple"), v), "list")


def list_extend(x, seq):
    """`x.extend(seq)`: x + list(seq), as `list_append`."""
    return list_concat((x,)[_a_list(P.kind_of(x), "extend")], seq)


@compile_time
def _a_list(kind, method):
    """0 where x's kind is a list's; an error otherwise."""
    if kind != "list":
        raise MyiaTypeError(
            f"`x.{method}(...)` needs a list, got {'an array' if kind is None else 'a ' + kind}",
            hint="an array has no append: build a list and np.array(it), or np.concatenate")
    return 0


def tuple_concat(a, b):
    """a + b for the parts of a tuple display (`(x, *rest)`)."""
    out = P.tuple_as(_elements(b), "tuple")
    for x in _elements(a)[::-1]:
        out = P.tuple_cons(x, out)
    return out


def list_concat(a, b):
    """a + b for the parts of a list display (`[x, *rest]`)."""
    return P.tuple_as(tuple_concat(a, b), "list")


def dict_merge(a, b):
    """{**a, **b}."""
    out = P.tuple_as(a, ("dict", _dict_keys(P.kind_of(a), "keys")))
    for key in b:
        out = dict_set(out, key, b[key])
    return out


def dict_keys(d):
    return P.tuple_as(_dict_keys(P.kind_of(d), "keys"), "list")


def dict_values(d):
    return P.tuple_as(P.tuple_as(d, ("dict", _dict_keys(P.kind_of(d), "values"))), "list")


def dict_items(d):
    return [(key, d[key]) for key in _dict_keys(P.kind_of(d), "items")]


def dict_get(d, key, default=None):
    if key in _dict_keys(P.kind_of(d), "get"):
        return d[key]
    return default


def py_contains(seq, x):
    """x in seq (for a dict, among its keys)."""
    for e in seq:
        if e == x:
            return True
    return False


def py_sum(seq, start=0):
    total = start
    for x in seq:
        total = total + x
    return total


def py_any(seq):
    for x in seq:
        if x:
            return True
    return False


def py_all(seq):
    for x in seq:
        if not x:
            return False
    return True


def py_zip(*seqs):
    """zip(a, b, ...) as a value: a list of tuples (in a `for` loop, the parser walks
    the sequences side by side instead, over arrays without making their rows)."""
    items = [_elements(s) for s in seqs]
    n = _shortest(tuple([P.len_(s) for s in items]))
    return [tuple([s[i] for s in items]) for i in range(n)]


def py_enumerate(seq, start=0):
    items = _elements(seq)
    return [(start + i, items[i]) for i in range(P.len_(items))]


def py_reversed(seq):
    if P.kind_of(seq) is None:
        return seq[::-1]  # an array: its rows from the last
    return P.tuple_as(_elements(seq)[::-1], "list")


#: the methods of dicts (`d.keys()`: dict_keys(d))
METHODS = {
    "keys": dict_keys,
    "values": dict_values,
    "items": dict_items,
    "get": dict_get,
}

#: methods that change a list in place, as statements: x = fn(x, arg) (see
#: myia.parser.mutation for when that means what Python does)
LIST_UPDATES = {"append": list_append, "extend": list_extend}

#: methods that would change a list or a dict in place, and what to write instead
#: (append and extend too, where they are not a statement on a name: `y = x.append(v)`):
#: {name: hint}, `{x}` standing for the container's text and `{args}` for the arguments
MUTATING_METHODS = {
    "append": "write `{x} = {x} + [{args}]`",
    "extend": "write `{x} = {x} + {args}`",
    "insert": "write `{x} = {x}[:i] + [v] + {x}[i:]`",
    "pop": "read the value first (`{x}[-1]`, `d[k]`), then build the container without "
           "it: `{x} = {x}[:-1]`, or `{{k2: v for k2, v in d.items() if k2 != k}}`",
    "remove": "build a new list without it: `[e for e in {x} if e != v]`",
    "clear": "write `{x} = []` (or `{{}}`)",
    "sort": "write `{x} = np.sort({x})`",
    "fill": "write `{x} = np.full_like({x}, {args})`",
    "resize": "write `{x} = np.resize({x}, shape)` or `{x}.reshape(...)`",
    "put": "build the new array with np.where(mask, new, {x})",
    "itemset": "build the new array with np.where(mask, new, {x})",
    "partition": "write `{x} = np.partition({x}, {args})`",
    "setfield": "build the new array",
    "reverse": "write `{x} = {x}[::-1]`",
    "update": "write `{x} = {{**{x}, **other}}`",
    "setdefault": "write `{x} = {{**{x}, k: v}}` where the key is missing",
    "popitem": "read the value by its key, then build a dict without it",
}


# ---- sorted, itemgetter, isinstance -------------------------------------------------------


@compile_time
def _sorted_order(keys, reverse):
    """The positions of `keys` (constants: dict keys, strings, numbers known at compile
    time) in sorted order (stable, as Python's sort)."""
    return tuple(sorted(range(len(keys)), key=lambda i: keys[i], reverse=reverse))


def py_sorted(iterable, key=None, reverse=False):
    # the order is decided at compile time: sort the keys of a dict, names, constants;
    # numbers computed at run time are sorted as an array (np.sort)
    items = py_list(iterable)
    if key is None:
        return [items[i] for i in _sorted_order(items, reverse)]
    if _is_item_getter(P.kind_of(key), key):
        # operator.itemgetter(k): read at each element, whatever its type (a key
        # function is one value, with one signature: it could not be called on the
        # (key, array) pairs of a dict's items, whose arrays differ)
        return [items[i] for i in _sorted_order([e[key[1]] for e in items], reverse)]
    return [items[i] for i in _sorted_order([key(e) for e in items], reverse)]


def py_itemgetter(item):
    return ("operator.itemgetter", item)  # what py_sorted's key= reads


def _is_item_getter(kind, key):
    if kind == "tuple":
        return _names_item_getter(key[0])
    return False


@compile_time
def _names_item_getter(tag):
    return tag == "operator.itemgetter"


# ---- the operator module, functools.reduce ------------------------------------------------


def py_getitem(a, b):
    """operator.getitem(a, b): a[b], where a list in the index of an array is NumPy's
    index array, as it is in brackets (`x[[0, 2], 1:]`)."""
    if P.kind_of(a) is None and _sequence_index(_index_kinds(b)):
        return index_with_lists(a, b)
    return a[b]


def _index_kinds(b):
    """The container kinds of the items of the index b (None for an int, a slice...)."""
    if _is_plain_tuple(P.kind_of(b)):
        return tuple([P.kind_of(e) for e in b])
    return (P.kind_of(b),)


@compile_time
def _is_plain_tuple(kind):
    return kind == "tuple"


@compile_time
def _sequence_index(kinds):
    """Whether an index whose items have these kinds holds a list (or a tuple)."""
    return any(k is not None for k in kinds)


@compile_time
def _reduce_check(n):
    """0, the index of the first element of what reduce() visits (there must be one)."""
    if n == 0:
        raise MyiaTypeError("reduce() of empty iterable with no initial value",
                            hint="give an initial value: functools.reduce(f, seq, initial)")
    return 0


def functools_reduce(function, iterable, initial=None):
    """functools.reduce(function, iterable[, initial]): a loop, at compile time over a
    tuple, a list or a dict's keys, at run time over the rows of an array.  (None as
    `initial` stands for no initial value.)"""
    if P.kind_of(iterable) is not None:
        iterable = _elements(iterable)
    if initial is None:
        acc = iterable[_reduce_check(P.len_(iterable))]  # (the first element: 0)
        rest = iterable[1:]
    else:
        acc = initial
        rest = iterable
    for x in rest:
        acc = function(acc, x)
    return acc


#: the functions of the operator module: the primitives of the operators (`x + y`...),
#: or the library's functions that the parser writes for them (`@`, unary `+`, `in`)
OPERATOR_NAMES = {
    operator.add: P.add,
    operator.sub: P.sub,
    operator.mul: P.mul,
    operator.truediv: P.truediv,
    operator.floordiv: P.floordiv,
    operator.mod: P.mod,
    operator.pow: P.pow,
    operator.matmul: np_matmul,
    operator.neg: P.neg,
    operator.pos: py_pos,
    operator.abs: P.abs,
    operator.lt: P.lt,
    operator.le: P.le,
    operator.gt: P.gt,
    operator.ge: P.ge,
    operator.eq: P.eq,
    operator.ne: P.ne,
    operator.and_: P.bitwise_and,
    operator.or_: P.bitwise_or,
    operator.xor: P.bitwise_xor,
    operator.invert: P.invert,
    operator.inv: P.invert,
    operator.not_: P.not_,
    operator.truth: py_bool,
    operator.getitem: py_getitem,
    operator.contains: py_contains,
}


#: the classes `isinstance` may ask about, by the name py_isinstance reads
ISINSTANCE_TYPES = {list: "list", tuple: "tuple", dict: "dict", float: "float", int: "int",
                    bool: "bool", np.ndarray: "ndarray"}


@compile_time
def _is_instance(kind, ndim, dtype, names):
    """Whether a value of this kind (container kind, or None), rank and dtype is an
    instance of one of the classes `names`."""
    if kind is not None:
        what = kind if isinstance(kind, str) else "dict"
        return what in names
    if ndim > 0:
        return "ndarray" in names
    if dtype == "bool":
        return "bool" in names or "int" in names
    if dtype == "int64":
        return "int" in names
    return "float" in names


def py_isinstance(x, names):
    if P.kind_of(x) is None:
        return _is_instance(None, P.ndim(x), P.dtype(x), names)
    return _is_instance(P.kind_of(x), 0, None, names)


NAMES = {
    # builtins
    abs: P.abs,
    len: P.len_,
    range: py_range,
    list: py_list,
    tuple: py_tuple,
    dict: py_dict,
    sum: py_sum,
    any: py_any,
    all: py_all,
    zip: py_zip,
    enumerate: py_enumerate,
    reversed: py_reversed,
    sorted: py_sorted,
    operator.itemgetter: py_itemgetter,
    float: P.to_float,
    int: P.to_int,
    bool: py_bool,
    max: py_max,
    min: py_min,
    # math
    # the primitive itself, so that pictures show `sin`; NumPy's function, it gives an
    # np.float64 where Python's gives a float (which NumPy 2 promotes alike, except
    # next to float32: math.sin(x) * f32_array is a float64 array here)
    **{fn: p for fn, p in (
        (math.sin, P.sin), (math.cos, P.cos), (math.tan, P.tan), (math.tanh, P.tanh),
        (math.exp, P.exp), (math.log, P.log), (math.sqrt, P.sqrt), (math.atan, P.arctan),
        (math.asin, P.arcsin), (math.acos, P.arccos), (math.sinh, P.sinh),
        (math.cosh, P.cosh), (math.asinh, P.arcsinh), (math.acosh, P.arccosh),
        (math.atanh, P.arctanh), (math.atan2, P.arctan2), (math.hypot, P.hypot),
        (math.log2, P.log2), (math.log10, P.log10), (math.log1p, P.log1p),
        (math.expm1, P.expm1), (math.fabs, P.abs))},
    math.floor: math_floor,
    math.pow: math_pow,
    # the operator module, functools.reduce
    **OPERATOR_NAMES,
    functools.reduce: functools_reduce,
}
