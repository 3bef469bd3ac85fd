"""Each optimizer rule on its own (issue 34): the rewrite it promises, on a minimal
graph, and a neighbour it must leave alone.

A case builds a small typed graph by hand (`Build`), calls the rule on one node with
the context the pass manager gives it (`rewrite`), and compares the replacement with
the rewrite the rule promises, written as text (`show`: `mul(x, 2.0)`, parameters by
name); the replacement keeps the node's type.  Where a case gives arguments, the
graph runs on the VM before and after the rewrite and must give the same value, with
the same dtype and the same sign of zero.  A "keeps" case is a graph on which the
rule must not fire (it returns None): each is chosen to catch an over-eager rewrite.
The last test checks that every rule of `rules.ALL + rules.FINISH` has a case of
each kind.
"""

import numpy as np
import pytest

from myia.backend.vm import VM, Closure
from myia.abstract import (AArray, AEnv, AFunction, AScalar, ATuple, GraphFunction,
                                 abstract_of, dict_kind)
from myia.errors import MyiaTypeError
from myia.ir import Apply, Constant, EnvKey, Graph, Node, Parameter, clone_many, manage
from myia.ir.print import format_value
from myia.opt import rules as R
from myia.opt import zeros as Z
from myia.opt.pass_manager import Context
from myia.opt.select import branches_to_select
from myia.opt.unroll import unroll_counted_loop
from myia.pipeline import Pipeline
from myia.prim import Primitive
from myia.prim import ops as P
from myia.prim.grad_ops import EMPTY_ENV, ZERO, EnvInstance


# ---- building, rewriting, showing -----------------------------------------------------

F64, F32, I64, BOOL = AScalar("float64"), AScalar("float32"), AScalar("int64"), AScalar("bool")


def arr(dtype, *shape):
    return AArray(dtype, shape)


def tup(*elements, kind="tuple"):
    return ATuple(elements, kind)


def const(value, t=None):
    """A constant typed as its value (or as `t`)."""
    c = Constant(value)
    if t is None:
        try:
            t = abstract_of(value)
        except MyiaTypeError:
            t = None
    c.abstract = t
    return c


def key(name):
    """An environment key, printed `key:name`."""
    return EnvKey(Parameter(None, None, name))


class Build:
    """A graph under construction: `b = Build(x=F64)`; `b.x` is the parameter x and
    `b(P.mul, b.x, 2.0, t=F64)` the application mul(x, 2.0) of type f64 (constants
    are typed as their values)."""

    def __init__(self, name="f", **params):
        self.graph = Graph(name)
        for pname, t in params.items():
            self.graph.add_parameter(pname).abstract = t

    def __getattr__(self, name):
        for p in self.graph.parameters:
            if p.name == name:
                return p
        raise AttributeError(name)

    def __call__(self, fn, *args, t=None):
        node = Apply(self.graph, [a if isinstance(a, Node) else const(a) for a in (fn, *args)])
        node.abstract = t
        return node

    def returns(self, node):
        self.graph.output = node
        return self.graph


def rewrite(rule, root, node):
    """What `rule` makes of `node` (None: it leaves it), with the context a sweep of
    the pass manager over the program `root` gives it."""
    if root.output is None:
        root.output = node
    return rule(node, Context(manage(root)))


def show(node):
    """The expression `node` computes, as text: `mul(x, 2.0)`, `@g(x)`."""
    if isinstance(node, Parameter):
        return node.name
    if isinstance(node, Constant):
        v = node.value
        return v.name if isinstance(v, Primitive) else format_value(v)
    return f"{show(node.inputs[0])}({', '.join(show(i) for i in node.inputs[1:])})"


def substitute(root, old, new):
    """Point every use of `old` in the program `root` at `new`."""
    mng = manage(root)
    for g in mng.graphs:
        if g.output is old:
            g.output = new
        for n in mng.nodes(g):
            if isinstance(n, Apply):
                n.inputs = [new if i is old else i for i in n.inputs]


def run(root, args):
    return VM().call(Closure(root, None), list(args))


def same_value_after(rule, root, node, args, fires):
    """`rule` fires on `node` (or not, as `fires` says), and the graph computes the same
    value for `args` afterwards, the replacement keeping the node's type."""
    before = run(root, args)
    new = rewrite(rule, root, node)
    assert (new is not None) == fires, f"{rule.name} {'left' if fires else 'rewrote'} {show(node)}"
    if new is not None:
        assert str(new.abstract) == str(node.abstract)
        substitute(root, node, new)
    assert_same_value(run(root, args), before)


def assert_same_value(after, before, path="result"):
    """The same value, dtype and sign of zero (NaN equals NaN)."""
    if isinstance(before, tuple):
        assert isinstance(after, tuple) and len(after) == len(before), (path, after, before)
        for i, (a, b) in enumerate(zip(after, before)):
            assert_same_value(a, b, f"{path}[{i}]")
        return
    if isinstance(before, EnvInstance):
        assert isinstance(after, EnvInstance), (path, after)
        assert set(after.contents) == set(before.contents), (path, after, before)
        for k in before.contents:
            assert_same_value(after.contents[k], before.contents[k], f"{path}[{k}]")
        return
    a, b = np.asarray(after), np.asarray(before)
    assert (a.dtype, a.shape) == (b.dtype, b.shape), f"{path}: {after!r} != {before!r}"
    np.testing.assert_array_equal(a, b, err_msg=path)
    if b.dtype.kind == "f":
        assert np.array_equal(np.signbit(a), np.signbit(b)), f"{path}: {after!r} != {before!r}"


def typed_copy(fn, *args):
    """A private copy of the typed program of `fn` (the typed graphs are cached)."""
    typed = Pipeline().specialize(fn, args)
    return clone_many(manage(typed).graphs)[typed]


def find(root, pred):
    """The one node of the program `root` that satisfies `pred`."""
    mng = manage(root)
    found = [n for g in mng.graphs for n in mng.nodes(g) if isinstance(n, Apply) and pred(n)]
    assert len(found) == 1, found
    return found[0]


# ---- the table of cases -----------------------------------------------------------------

#: {rule: {"fires", "keeps"}}: the kinds of case each rule has in this file
COVERED = {}
FIRES = []  # (rule, build, expected text, [argument tuples for the VM], type)
KEEPS = []  # (rule, build)


def _covers(rule, kind):
    COVERED.setdefault(rule, set()).add(kind)


def fires(rule, expected, *runs, t=None, marks=()):
    """`build() -> (root graph, node)`: `rule` rewrites `node` into `expected`, of the
    node's type (or of the type `t`, printed); with `runs`, the program gives the same
    values for those arguments after the rewrite."""
    def register(build):
        _covers(rule, "fires")
        FIRES.append(pytest.param(rule, build, expected, runs, t, marks=marks,
                                  id=f"{rule.name}-{build.__name__}"))
        return build
    return register


def keeps(rule):
    """`build() -> (root graph, node)`: `rule` must leave `node` as it is."""
    def register(build):
        _covers(rule, "keeps")
        KEEPS.append(pytest.param(rule, build, id=f"{rule.name}-{build.__name__}"))
        return build
    return register


def covers(rule, *kinds):
    """For a test written out by hand: it checks `rule` in these kinds of case."""
    def register(test):
        for kind in kinds:
            _covers(rule, kind)
        return test
    return register


# ---- tuples -------------------------------------------------------------------------------
"""Tuples: reading an element of a tuple that is built in sight (make_tuple, a
constant, tuple_setitem) is that element; building a tuple from all the elements of
another, in order, is that tuple; an indexed getitem of a tuple is tuple_getitem."""


@fires(R.getitem_of_tuple, "tuple_getitem(t, 1)", ((2.5, 7),))
def getitem_of_a_tuple():
    b = Build(t=tup(F64, I64))
    return b.graph, b(P.getitem, b.t, 1, t=I64)


@keeps(R.getitem_of_tuple)
def getitem_of_an_array():
    b = Build(x=arr("float64", 3))  # an array's element is no tuple_getitem
    return b.graph, b(P.getitem, b.x, 1, t=F64)


@fires(R.getitem_of_make_tuple, "y", (1.5, 2.5))
def element_of_make_tuple():
    b = Build(x=F64, y=F64)
    return b.graph, b(P.tuple_getitem, b(P.make_tuple, b.x, b.y, t=tup(F64, F64)), 1, t=F64)


@fires(R.getitem_of_make_tuple, "v", ((1.0, 2.0), 3.0))
def element_just_set():
    b = Build(t=tup(F64, F64), v=F64)
    return b.graph, b(P.tuple_getitem, b(P.tuple_setitem, b.t, 1, b.v, t=tup(F64, F64)), 1, t=F64)


@fires(R.getitem_of_make_tuple, "tuple_getitem(t, 1)", ((1.0, 2.0), 3.0))
def element_next_to_the_one_set():
    b = Build(t=tup(F64, F64), v=F64)
    return b.graph, b(P.tuple_getitem, b(P.tuple_setitem, b.t, 0, b.v, t=tup(F64, F64)), 1, t=F64)


@keeps(R.getitem_of_make_tuple)
def element_next_to_an_assert():
    b = Build(x=F64, c=BOOL)  # the assert sequenced into the tuple must still run
    check = b(P.assert_, b.c, "c holds", t=BOOL)
    return b.graph, b(P.tuple_getitem, b(P.make_tuple, b.x, check, t=tup(F64, BOOL)), 0, t=F64)


@covers(R.getitem_of_make_tuple, "fires")
@pytest.mark.parametrize("setitem", [False, True], ids=["make_tuple", "tuple_setitem"])
def test_getitem_of_make_tuple_with_a_negative_index(setitem):
    b = Build(x=F64, y=F64)
    pair = b(P.make_tuple, b.x, b.y, t=tup(F64, F64))
    if setitem:
        node = b(P.tuple_getitem, b(P.tuple_setitem, pair, -1, b.x, t=tup(F64, F64)), 1, t=F64)
    else:
        node = b(P.tuple_getitem, pair, -1, t=F64)
    same_value_after(R.getitem_of_make_tuple, b.returns(node), node, (1.0, 2.0), fires=True)


@fires(R.make_tuple_of_getitems, "t", ((1.0, 2),))
def all_elements_in_order():
    b = Build(t=tup(F64, I64))
    return b.graph, b(P.make_tuple, b(P.tuple_getitem, b.t, 0, t=F64),
                      b(P.tuple_getitem, b.t, 1, t=I64), t=tup(F64, I64))


@keeps(R.make_tuple_of_getitems)
def a_prefix():
    b = Build(t=tup(F64, F64, F64))  # (t[0], t[1]) is not t
    return b.graph, b(P.make_tuple, b(P.tuple_getitem, b.t, 0, t=F64),
                      b(P.tuple_getitem, b.t, 1, t=F64), t=tup(F64, F64))


@keeps(R.make_tuple_of_getitems)
def the_elements_of_a_list():
    b = Build(t=tup(F64, F64, kind="list"))  # a tuple of a list's elements is no list
    return b.graph, b(P.make_tuple, b(P.tuple_getitem, b.t, 0, t=F64),
                      b(P.tuple_getitem, b.t, 1, t=F64), t=tup(F64, F64))


@fires(R.getitem_of_constant_tuple, "2.5", ())
def element_of_a_constant():
    b = Build()
    return b.graph, b(P.tuple_getitem, (1, 2.5), 1, t=F64)


@keeps(R.getitem_of_constant_tuple)
def element_out_of_range():
    b = Build()  # an error, left to run time where it has its location
    return b.graph, b(P.tuple_getitem, (1, 2.5), 2, t=F64)


@fires(R.setitem_of_make_tuple, "make_tuple(v, y)", (1.0, 2.0, 3.0))
def set_in_make_tuple():
    b = Build(x=F64, y=F64, v=F64)
    pair = b(P.make_tuple, b.x, b.y, t=tup(F64, F64))
    return b.graph, b(P.tuple_setitem, pair, 0, b.v, t=tup(F64, F64))


@fires(R.setitem_of_make_tuple, "make_tuple(0.0, v)", (3.0,))
def set_in_a_zero_sensitivity():
    b = Build(v=F64)
    return b.graph, b(P.tuple_setitem, (0.0, 0.0), 1, b.v, t=tup(F64, F64))


@keeps(R.setitem_of_make_tuple)
def set_at_a_runtime_index():
    b = Build(x=F64, y=F64, v=F64, i=I64)
    pair = b(P.make_tuple, b.x, b.y, t=tup(F64, F64))
    return b.graph, b(P.tuple_setitem, pair, b.i, b.v, t=tup(F64, F64))


@fires(R.make_tuple_as_update, "tuple_setitem(t, 1, v)", ((1.0, 2.0, 3.0), 9.0))
def a_record_update():
    b = Build(t=tup(F64, F64, F64), v=F64)
    return b.graph, b(P.make_tuple, b(P.tuple_getitem, b.t, 0, t=F64), b.v,
                      b(P.tuple_getitem, b.t, 2, t=F64), t=tup(F64, F64, F64))


@keeps(R.make_tuple_as_update)
def a_shorter_record():
    b = Build(t=tup(F64, F64, F64), v=F64)  # tuple_setitem would keep t's length
    return b.graph, b(P.make_tuple, b(P.tuple_getitem, b.t, 0, t=F64), b.v, t=tup(F64, F64))


@keeps(R.make_tuple_as_update)
def two_new_elements():
    b = Build(t=tup(F64, F64, F64), v=F64, w=F64)
    return b.graph, b(P.make_tuple, b(P.tuple_getitem, b.t, 0, t=F64), b.v, b.w,
                      t=tup(F64, F64, F64))


# ---- lists and dicts ----------------------------------------------------------------------
"""Lists and dicts (tuples with a kind): consing onto, the tail of and a constant
slice of a tuple built in sight are built directly; an element of `tuple_as(t, kind)`
is t's element."""


@fires(R.cons_of_make_tuple, "make_tuple(x, a, c)", (1.0, 2.0, 3.0))
def cons_onto_make_tuple():
    b = Build(x=F64, a=F64, c=F64)
    t = b(P.make_tuple, b.a, b.c, t=tup(F64, F64))
    return b.graph, b(P.tuple_cons, b.x, t, t=tup(F64, F64, F64))


@fires(R.cons_of_make_tuple, "make_tuple(x, 1.0, 2.0)", (3.0,))
def cons_onto_a_constant_list():
    b = Build(x=F64)
    t = b(P.tuple_as, (1.0, 2.0), "list", t=tup(F64, F64, kind="list"))
    return b.graph, b(P.tuple_cons, b.x, t, t=tup(F64, F64, F64))


@keeps(R.cons_of_make_tuple)
def cons_onto_a_parameter():
    b = Build(x=F64, t=tup(F64, F64))
    return b.graph, b(P.tuple_cons, b.x, b.t, t=tup(F64, F64, F64))


@fires(R.tail_of_make_tuple, "make_tuple(y, z)", (1.0, 2.0, 3.0))
def tail_of_make_tuple():
    b = Build(x=F64, y=F64, z=F64)
    t = b(P.make_tuple, b.x, b.y, b.z, t=tup(F64, F64, F64))
    return b.graph, b(P.tuple_tail, t, t=tup(F64, F64))


@keeps(R.tail_of_make_tuple)
def tail_after_an_assert():
    b = Build(c=BOOL, y=F64)  # the assert dropped from the head must still run
    t = b(P.make_tuple, b(P.assert_, b.c, "c holds", t=BOOL), b.y, t=tup(BOOL, F64))
    return b.graph, b(P.tuple_tail, t, t=tup(F64))


@fires(R.slice_of_make_tuple, "make_tuple(y, z)", (1.0, 2.0, 3.0))
def slice_of_make_tuple():
    b = Build(x=F64, y=F64, z=F64)
    t = b(P.make_tuple, b.x, b.y, b.z, t=tup(F64, F64, F64))
    return b.graph, b(P.getitem, t, slice(1, None), t=tup(F64, F64))


@fires(R.slice_of_make_tuple, "make_tuple(z, y, x)", (1.0, 2.0, 3.0))
def reversed_make_tuple():
    b = Build(x=F64, y=F64, z=F64)
    t = b(P.make_tuple, b.x, b.y, b.z, t=tup(F64, F64, F64))
    return b.graph, b(P.getitem, t, slice(None, None, -1), t=tup(F64, F64, F64))


@keeps(R.slice_of_make_tuple)
def slice_that_drops_an_assert():
    b = Build(c=BOOL, y=F64)
    t = b(P.make_tuple, b(P.assert_, b.c, "c holds", t=BOOL), b.y, t=tup(BOOL, F64))
    return b.graph, b(P.getitem, t, slice(1, None), t=tup(F64))


@fires(R.getitem_of_tuple_as, "tuple_getitem(t, 1)", ((1.0, 2.0),))
def element_of_a_list():
    b = Build(t=tup(F64, F64))
    lst = b(P.tuple_as, b.t, "list", t=tup(F64, F64, kind="list"))
    return b.graph, b(P.tuple_getitem, lst, 1, t=F64)


@keeps(R.getitem_of_tuple_as)
def dict_lookup_by_key():
    b = Build(t=tup(F64, F64))  # d["b"] names a key, not a position
    d = b(P.tuple_as, b.t, dict_kind(("a", "b")), t=tup(F64, F64, kind=dict_kind(("a", "b"))))
    return b.graph, b(P.getitem, d, "b", t=F64)


# ---- environments -------------------------------------------------------------------------
"""Environments (the sensitivities of closures): reading a key just set is its value,
reading another key skips the setitem, an empty environment reads as the default;
setting a zero is no change; adding an empty environment is no change; a setitem
moves out of a sum when neither side holds its key."""

KA, KB = key("a"), key("b")


@fires(R.env_getitem_of_setitem, "v", (EnvInstance({KA: 1.0}), 2.5))
def read_the_key_just_set():
    b = Build(e=AEnv({KA: F64}), v=F64)
    e = b(P.env_setitem, b.e, KA, b.v, t=AEnv({KA: F64}))
    return b.graph, b(P.env_getitem, e, KA, 0.0, t=F64)


@fires(R.env_getitem_of_setitem, "env_getitem(e, key:a, 0.0)", (EnvInstance({KA: 1.0}), 2.5))
def read_another_key():
    b = Build(e=AEnv({KA: F64}), v=F64)
    e = b(P.env_setitem, b.e, KB, b.v, t=AEnv({KA: F64, KB: F64}))
    return b.graph, b(P.env_getitem, e, KA, 0.0, t=F64)


@fires(R.env_getitem_of_setitem, "d", (1.5,))
def read_an_empty_environment():
    b = Build(d=F64)
    return b.graph, b(P.env_getitem, b(P.env_new, t=AEnv({})), KA, b.d, t=F64)


@keeps(R.env_getitem_of_setitem)
def read_an_unknown_environment():
    b = Build(e=AEnv({KA: F64}))
    return b.graph, b(P.env_getitem, b.e, KA, 0.0, t=F64)


@fires(R.env_setitem_of_zero, "e", (EMPTY_ENV,), t="env{}")
def set_a_zero():
    b = Build(e=AEnv({}))  # (the entry goes from the type too; reading it gives d)
    node = b(P.env_setitem, b.e, KA, 0.0, t=AEnv({KA: F64}))
    b.returns(b(P.env_getitem, node, KA, 0.0, t=F64))
    return b.graph, node


@keeps(R.env_setitem_of_zero)
def set_a_number():
    b = Build(e=AEnv({}))
    return b.graph, b(P.env_setitem, b.e, KA, 0.5, t=AEnv({KA: F64}))


@fires(R.env_getitem_of_integer, "0", (EMPTY_ENV,))
def read_an_integer():
    b = Build(e=AEnv({}))
    return b.graph, b(P.env_getitem, b.e, KA, 0, t=I64)


@keeps(R.env_getitem_of_integer)
def read_a_float():
    b = Build(e=AEnv({KA: F64}))
    return b.graph, b(P.env_getitem, b.e, KA, 0.0, t=F64)


@fires(R.env_add_of_new, "e", (EnvInstance({KA: 1.0}),))
def add_an_empty_environment():
    b = Build(e=AEnv({KA: F64}))
    return b.graph, b(P.env_add, b(P.env_new, t=AEnv({})), b.e, t=AEnv({KA: F64}))


@fires(R.env_add_of_new, "e", (EnvInstance({KA: 1.0}),))
def gadd_an_empty_environment():
    b = Build(e=AEnv({KA: F64}))
    return b.graph, b(P.gadd, b.e, b(P.env_new, t=AEnv({})), t=AEnv({KA: F64}))


@keeps(R.env_add_of_new)
def add_two_environments():
    b = Build(e=AEnv({KA: F64}), f=AEnv({KB: F64}))
    return b.graph, b(P.env_add, b.e, b.f, t=AEnv({KA: F64, KB: F64}))


@fires(R.add_of_env_setitem, "env_setitem(env_add(e, f), key:b, v)",
       (EnvInstance({KA: 1.0}), EMPTY_ENV, 2.0))
def setitem_out_of_a_sum():
    b = Build(e=AEnv({KA: F64}), f=AEnv({}), v=F64)
    s = b(P.env_setitem, b.f, KB, b.v, t=AEnv({KB: F64}))
    return b.graph, b(P.env_add, b.e, s, t=AEnv({KA: F64, KB: F64}))


@keeps(R.add_of_env_setitem)
def setitem_of_a_key_the_other_side_holds():
    b = Build(e=AEnv({KB: F64}), f=AEnv({}), v=F64)  # e's value under b is added to v
    s = b(P.env_setitem, b.f, KB, b.v, t=AEnv({KB: F64}))
    return b.graph, b(P.env_add, b.e, s, t=AEnv({KB: F64}))


@fires(R.env_getitem_of_switch,
       "switch(c, env_getitem(env_setitem(e, key:a, v), key:a, 0.0), "
       "env_getitem(env_new(), key:a, 0.0))",
       (True, EMPTY_ENV, 2.0), (False, EMPTY_ENV, 2.0))
def read_a_switch_of_environments():
    b = Build(c=BOOL, e=AEnv({}), v=F64)
    e1 = b(P.env_setitem, b.e, KA, b.v, t=AEnv({KA: F64}))
    sw = b(P.switch, b.c, e1, b(P.env_new, t=AEnv({})), t=AEnv({KA: F64}))
    return b.graph, b(P.env_getitem, sw, KA, 0.0, t=F64)


@keeps(R.env_getitem_of_switch)
def read_a_switch_of_unknown_environments():
    b = Build(c=BOOL, e=AEnv({KA: F64}), f=AEnv({KA: F64}))  # nothing to gain
    sw = b(P.switch, b.c, b.e, b.f, t=AEnv({KA: F64}))
    return b.graph, b(P.env_getitem, sw, KA, 0.0, t=F64)


# ---- control flow -------------------------------------------------------------------------
"""Control flow: a switch on a constant bool is the branch it picks, a switch between
one value is that value, complementary switches with zeros add up to one switch, and
the truth of a comparison is the comparison."""


@fires(R.switch_on_constant, "x", (1.0, 2.0))
def switch_on_true():
    b = Build(x=F64, y=F64)
    return b.graph, b(P.switch, True, b.x, b.y, t=F64)


@fires(R.switch_on_constant, "y", (1.0, 2.0))
def switch_on_false():
    b = Build(x=F64, y=F64)
    return b.graph, b(P.switch, False, b.x, b.y, t=F64)


@keeps(R.switch_on_constant)
def switch_on_an_int():
    b = Build(x=F64, y=F64)  # switch(1, ...) is a type error at run time, not x
    return b.graph, b(P.switch, 1, b.x, b.y, t=F64)


@fires(R.switch_same, "x", (True, 1.0), (False, 1.0))
def switch_between_one_value():
    b = Build(c=BOOL, x=F64)
    return b.graph, b(P.switch, b.c, b.x, b.x, t=F64)


@keeps(R.switch_same)
def switch_between_equal_numbers_of_two_types():
    b = Build(c=BOOL)  # 1 == 1.0, but an int and a float
    return b.graph, b(P.switch, b.c, 1, 1.0, t=F64)


@fires(R.add_of_complementary_switches, "switch(c, x, y)", (True, 1.5, 2.5), (False, 1.5, 2.5))
def complementary_switches():
    b = Build(c=BOOL, x=F64, y=F64)
    s1 = b(P.switch, b.c, b.x, 0.0, t=F64)
    s2 = b(P.switch, b.c, 0.0, b.y, t=F64)
    return b.graph, b(P.add, s1, s2, t=F64)


@keeps(R.add_of_complementary_switches)
def switches_on_two_conditions():
    b = Build(c=BOOL, d=BOOL, x=F64, y=F64)
    return b.graph, b(P.add, b(P.switch, b.c, b.x, 0.0, t=F64), b(P.switch, b.d, 0.0, b.y, t=F64),
                      t=F64)


@keeps(R.add_of_complementary_switches)
def switches_with_zeros_on_one_side():
    b = Build(c=BOOL, x=F64, y=F64)  # c ? x + y : 0, not c ? x : y
    return b.graph, b(P.add, b(P.switch, b.c, b.x, 0.0, t=F64), b(P.switch, b.c, b.y, 0.0, t=F64),
                      t=F64)


@fires(R.truth_of_bool, "lt(x, y)", (1.0, 2.0))
def truth_of_a_comparison():
    b = Build(x=F64, y=F64)
    return b.graph, b(P.truth, b(P.lt, b.x, b.y, t=BOOL), t=BOOL)


@fires(R.truth_of_bool, "not(c)", (True,))
def truth_of_a_negation():
    b = Build(c=BOOL)
    return b.graph, b(P.truth, b(P.not_, b.c, t=BOOL), t=BOOL)


@keeps(R.truth_of_bool)
def truth_of_an_array_comparison():
    b = Build(x=arr("float64", 3), y=arr("float64", 3))  # a bool[3]: truth raises on it
    return b.graph, b(P.truth, b(P.lt, b.x, b.y, t=arr("bool", 3)), t=BOOL)


# ---- closures, slices, J ------------------------------------------------------------------
"""Closure records, slices and J: reading a record or a slice built in sight is the
value it was built with; calling a closure record calls its graph with the bound
values first; J of a graph or a primitive constant is its J graph; Jinv undoes J."""


def _minus():
    g = Build("g", a=F64, z=F64)
    return g.returns(g(P.sub, g.a, g.z, t=F64))


@fires(R.closure_bound_of_make_closure, "y", (1.0, 2.0))
def bound_value_of_a_record():
    b = Build(x=F64, y=F64)
    g = Build("g", a=F64, c=F64, z=F64)
    g.returns(g.z)
    rec = b(P.make_closure, g.graph, b.x, b.y)
    return b.graph, b(P.closure_bound, rec, 1, t=F64)


@keeps(R.closure_bound_of_make_closure)
def bound_value_of_a_parameter():
    b = Build(f=AFunction([GraphFunction(_minus(), None)]))
    return b.graph, b(P.closure_bound, b.f, 0, t=F64)


@fires(R.call_of_make_closure, "@g(x, y)", (5.0, 2.0))
def call_of_a_record():
    b = Build(x=F64, y=F64)
    rec = b(P.make_closure, _minus(), b.x)
    return b.graph, b(rec, b.y, t=F64)


@keeps(R.call_of_make_closure)
def call_of_a_graph():
    b = Build(x=F64, y=F64)
    return b.graph, b(_minus(), b.x, b.y, t=F64)


@fires(R.slice_start_of_make_slice, "a", (1, 5))
def start_of_a_slice():
    b = Build(a=I64, n=I64)
    return b.graph, b(P.slice_start, b(P.make_slice, b.a, b.n, 1), t=I64)


@fires(R.slice_start_of_make_slice, "a", (1, 5))
def start_of_a_dynamic_slice():
    b = Build(a=I64, n=I64)
    return b.graph, b(P.slice_start, b(P.make_dslice, b.a, b.n, 1), t=I64)


@keeps(R.slice_start_of_make_slice)
def start_of_a_slice_parameter():
    b = Build(s=abstract_of(slice(0, 3)))
    return b.graph, b(P.slice_start, b.s, t=I64)


@covers(R.J_of_graph_constant, "fires")
def test_J_of_a_graph_constant_is_its_J_graph():
    g = Build("g", z=F64)
    g.returns(g(P.mul, g.z, 2.0, t=F64))
    b = Build(x=F64)
    j = b(P.J, g.graph)
    root = b.returns(b(P.tuple_getitem, b(j, b.x), 0))
    before = run(root, (3.0,))
    new = rewrite(R.J_of_graph_constant, root, j)
    assert isinstance(new, Constant) and show(new) == "@▶g"
    assert show(new.value.output) == "make_tuple(mul(z, 2.0), @◀g)"
    substitute(root, j, new)
    assert_same_value(run(root, (3.0,)), before)


@covers(R.J_of_graph_constant, "fires")
def test_J_of_a_primitive_is_its_fprop():
    from myia.ad.reverse import prim_fprop

    b = Build(x=F64)
    j = b(P.J, P.sin)
    root = b.returns(b(P.tuple_getitem, b(j, b.x), 0))
    before = run(root, (0.5,))
    new = rewrite(R.J_of_graph_constant, root, j)
    # a copy of the cached fprop: the optimizer rewrites the program's graphs in place
    assert isinstance(new, Constant) and show(new) == "@▶sin"
    assert new.value is not prim_fprop(P.sin)
    substitute(root, j, new)
    assert_same_value(run(root, (0.5,)), before)


@keeps(R.J_of_graph_constant)
def J_of_a_closure():
    b = Build(x=F64)  # its J depends on the frame of x: J of a graph with free variables
    inner = Build("inner", z=F64)
    inner.returns(inner(P.mul, inner.z, b.x, t=F64))
    return b.graph, b(P.J, inner.graph)


@keeps(R.J_of_graph_constant)
def J_of_make_tuple():
    b = Build()  # make_tuple takes any number of inputs: no one fprop
    return b.graph, b(P.J, P.make_tuple)


@fires(R.Jinv_of_J, "x", (2.0,))
def Jinv_of_J():
    b = Build(x=F64)
    return b.graph, b(P.Jinv, b(P.J, b.x))


@keeps(R.Jinv_of_J)
def Jinv_of_a_value_J_did_not_make():
    b = Build(f=AFunction([GraphFunction(_minus(), None)]))
    return b.graph, b(P.Jinv, b.f)


# ---- arithmetic ---------------------------------------------------------------------------
"""Arithmetic: fold pure primitives on constants; drop `* 1`, `+ 0`, `- 0`, `** 1`,
double negations, checked guards and reshapes to the same shape when the operand
already has the result's type; `x * 0` is 0 for integers; `x ** 2` is `x * x`; a
broadcast moves out of an elementwise operation when the other operand is the
result's shape or a scalar constant."""


@fires(R.constant_fold, "5", ())
def fold_a_sum():
    b = Build()
    return b.graph, b(P.add, 2, 3, t=I64)


@fires(R.constant_fold, "[2.0, 4.0]", ())
def fold_a_small_array():
    b = Build()
    return b.graph, b(P.mul, np.array([1.0, 2.0]), 2.0, t=arr("float64", 2))


@keeps(R.constant_fold)
def fold_a_division_by_zero():
    b = Build()  # the error is left to run time, where it has its location
    return b.graph, b(P.floordiv, 1, 0, t=I64)


@keeps(R.constant_fold)
def fold_a_large_array():
    b = Build()  # large arrays stay out of the program text
    return b.graph, b(P.add, np.ones(20), 1.0, t=arr("float64", 20))


@keeps(R.constant_fold)
def fold_an_effect():
    b = Build()
    return b.graph, b(P.assert_, True, "always", t=BOOL)


@fires(R.multiply_by_one, "x", (2.5,))
def times_one():
    b = Build(x=F64)
    return b.graph, b(P.mul, b.x, 1, t=F64)


@fires(R.multiply_by_one, "x", (-0.0,))
def one_times():
    b = Build(x=F64)
    return b.graph, b(P.mul, 1.0, b.x, t=F64)


@fires(R.multiply_by_one, "x", (np.array([1.0, -2.0, np.inf]),))
def times_ones():
    b = Build(x=arr("float64", 3))
    return b.graph, b(P.mul, b.x, np.ones(3), t=arr("float64", 3))


@keeps(R.multiply_by_one)
def int_array_times_a_float_one():
    b = Build(n=arr("int64", 3))  # the product is a float array
    return b.graph, b(P.mul, b.n, 1.0, t=arr("float64", 3))


@keeps(R.multiply_by_one)
def scalar_times_ones():
    b = Build(x=F64)  # the product is an array
    return b.graph, b(P.mul, b.x, np.ones(3), t=arr("float64", 3))


@fires(R.add_zero, "n", (4,))
def int_plus_zero():
    b = Build(n=I64)
    return b.graph, b(P.add, b.n, 0, t=I64)


@fires(R.add_zero, "n", (4,))
def zero_plus_int():
    b = Build(n=I64)
    return b.graph, b(P.add, 0, b.n, t=I64)


@fires(R.add_zero, "x", (-0.0,))
def float_minus_zero():
    b = Build(x=F64)
    return b.graph, b(P.sub, b.x, 0.0, t=F64)


@fires(R.add_zero, "x", (0.0,))
def float_plus_negative_zero():
    b = Build(x=F64)  # x + (-0.0) is x for every x, 0.0 and -0.0 included
    return b.graph, b(P.add, b.x, -0.0, t=F64)


@keeps(R.add_zero)
def float_minus_negative_zero():
    b = Build(x=F64)  # -0.0 - (-0.0) is 0.0
    return b.graph, b(P.sub, b.x, -0.0, t=F64)


@keeps(R.add_zero)
def zero_minus():
    b = Build(n=I64)  # 0 - n is -n
    return b.graph, b(P.sub, 0, b.n, t=I64)


@keeps(R.add_zero)
def int_plus_a_float_zero():
    b = Build(n=I64)  # the sum is a float
    return b.graph, b(P.add, b.n, 0.0, t=F64)


@covers(R.add_zero, "keeps")
@pytest.mark.parametrize("zero_first", [False, True], ids=["x+0.0", "0.0+x"])
def test_add_zero_keeps_the_sign_of_a_float_zero(zero_first):
    b = Build(x=F64)
    node = b(P.add, *((0.0, b.x) if zero_first else (b.x, 0.0)), t=F64)
    same_value_after(R.add_zero, b.returns(node), node, (-0.0,), fires=False)


@fires(R.double_negation, "x", (2.5,))
def negated_twice():
    b = Build(x=F64)
    return b.graph, b(P.neg, b(P.neg, b.x, t=F64), t=F64)


@keeps(R.double_negation)
def negated_once():
    b = Build(x=F64)
    return b.graph, b(P.neg, b.x, t=F64)


@covers(R.double_negation, "keeps")
def test_double_negation_of_a_bool_stays_an_int():
    b = Build(c=BOOL)
    node = b(P.neg, b(P.neg, b.c, t=I64), t=I64)
    same_value_after(R.double_negation, b.returns(node), node, (True,), fires=False)


@fires(R.multiply_by_zero, "0", (7,))
def int_times_zero():
    b = Build(n=I64)
    return b.graph, b(P.mul, b.n, 0, t=I64)


@fires(R.multiply_by_zero, "0", (7,))
def zero_times_int():
    b = Build(n=I64)
    return b.graph, b(P.mul, 0, b.n, t=I64)


@keeps(R.multiply_by_zero)
def float_times_zero():
    b = Build(x=F64)  # inf * 0 and nan * 0 are nan
    return b.graph, b(P.mul, b.x, 0.0, t=F64)


@fires(R.power_one_or_two, "x", (1.5,))
def power_one():
    b = Build(x=F64)
    return b.graph, b(P.pow, b.x, 1, t=F64)


@fires(R.power_one_or_two, "mul(x, x)", (1.5,), (-3.0,))
def power_two():
    b = Build(x=F64)
    return b.graph, b(P.pow, b.x, 2, t=F64)


@keeps(R.power_one_or_two)
def int_to_a_float_power_two():
    b = Build(n=I64)  # n ** 2.0 is a float, n * n an int
    return b.graph, b(P.pow, b.n, 2.0, t=F64)


@keeps(R.power_one_or_two)
def power_three():
    b = Build(x=F64)
    return b.graph, b(P.pow, b.x, 3, t=F64)


@fires(R.guard_checked, "x", (1.5,))
def a_checked_differentiable():
    b = Build(x=F64)
    return b.graph, b(P.differentiable, b.x, "x", t=F64)


@fires(R.guard_checked, "n", (3,))
def a_checked_range_bound():
    b = Build(n=I64)
    return b.graph, b(P.range_bound, b.n, "n", "use an int", t=I64)


@keeps(R.guard_checked)
def an_unchecked_guard():
    b = Build(x=None)  # no type: inference has not checked it
    return b.graph, b(P.differentiable, b.x, "x")


@fires(R.stop_gradient_done, "x", (np.array([1.5, -2.0]),))
def a_typed_stop_gradient():
    b = Build(x=arr("float64", 2))
    return b.graph, b(P.stop_gradient, b.x, t=arr("float64", 2))


@keeps(R.stop_gradient_done)
def an_untyped_stop_gradient():
    b = Build(x=None)  # an untyped copy: the VM may differentiate it at run time
    return b.graph, b(P.stop_gradient, b.x)


@fires(R.reshape_to_same_shape, "x", (np.arange(6.0).reshape(2, 3),))
def reshape_to_its_shape():
    b = Build(x=arr("float64", 2, 3))
    return b.graph, b(P.reshape, b.x, (2, 3), t=arr("float64", 2, 3))


@fires(R.reshape_to_same_shape, "x", (np.arange(6.0).reshape(2, 3),))
def broadcast_to_its_shape():
    b = Build(x=arr("float64", 2, 3))
    return b.graph, b(P.broadcast_to, b.x, (2, 3), t=arr("float64", 2, 3))


@fires(R.reshape_to_same_shape, "x", (np.arange(6.0).reshape(2, 3),))
def sum_to_its_shape():
    b = Build(x=arr("float64", 2, 3))
    return b.graph, b(P.sum_to, b.x, (2, 3), t=arr("float64", 2, 3))


@keeps(R.reshape_to_same_shape)
def reshape_to_another_shape():
    b = Build(x=arr("float64", 2, 3))
    return b.graph, b(P.reshape, b.x, (3, 2), t=arr("float64", 3, 2))


@fires(R.implicit_broadcast, "add(x, y)", (np.arange(3.0), np.ones((2, 3))))
def broadcast_then_add():
    b = Build(x=arr("float64", 3), y=arr("float64", 2, 3))
    bx = b(P.broadcast_to, b.x, (2, 3), t=arr("float64", 2, 3))
    return b.graph, b(P.add, bx, b.y, t=arr("float64", 2, 3))


@fires(R.implicit_broadcast, "sub(y, x)", (np.arange(3.0), np.ones((2, 3))))
def subtract_a_broadcast():
    b = Build(x=arr("float64", 3), y=arr("float64", 2, 3))
    bx = b(P.broadcast_to, b.x, (2, 3), t=arr("float64", 2, 3))
    return b.graph, b(P.sub, b.y, bx, t=arr("float64", 2, 3))


@fires(R.implicit_broadcast, "mul(s, y)", (1.5, np.arange(3.0)))
def a_number_reshaped_times_an_array():
    # the backward pass of np.sum(v * v) scales v by reshape(s, (1,)) * 2
    b = Build(s=F64, y=arr("float64", 3))
    rs = b(P.reshape, b.s, (1,), t=arr("float64", 1))
    return b.graph, b(P.mul, rs, b.y, t=arr("float64", 3))


@keeps(R.implicit_broadcast)
def a_number_reshaped_to_more_than_one():
    b = Build(s=arr("float64", 2), y=arr("float64", 2, 2))  # (not a number: a row)
    rs = b(P.reshape, b.s, (1, 2), t=arr("float64", 1, 2))
    return b.graph, b(P.mul, rs, b.y, t=arr("float64", 2, 2))


@keeps(R.implicit_broadcast)
def an_int_reshaped_times_a_float_array():
    b = Build(s=I64, y=arr("float32", 3))  # int64[1] * f32[3] is f64[3], int * f32[3] f32
    rs = b(P.reshape, b.s, (1,), t=arr("int64", 1))
    return b.graph, b(P.mul, rs, b.y, t=arr("float64", 3))


@keeps(R.implicit_broadcast)
def broadcast_then_add_a_smaller_array():
    b = Build(x=arr("float64", 3), y=arr("float64", 3))  # x + y is f64[3], not f64[2,3]
    bx = b(P.broadcast_to, b.x, (2, 3), t=arr("float64", 2, 3))
    return b.graph, b(P.add, bx, b.y, t=arr("float64", 2, 3))


@fires(R.broadcast_outward, "broadcast_to(mul(x, 2.0), (2, 3))", (np.arange(3.0),))
def broadcast_then_scale():
    b = Build(x=arr("float64", 3))
    bx = b(P.broadcast_to, b.x, (2, 3), t=arr("float64", 2, 3))
    return b.graph, b(P.mul, bx, 2.0, t=arr("float64", 2, 3))


@fires(R.broadcast_outward, "reshape(mul(s, 2), (1,))", (1.5,))
def a_number_reshaped_then_scaled():
    b = Build(s=F64)
    rs = b(P.reshape, b.s, (1,), t=arr("float64", 1))
    return b.graph, b(P.mul, rs, 2, t=arr("float64", 1))


@keeps(R.broadcast_outward)
def broadcast_then_add_a_constant_array():
    b = Build(x=arr("float64", 3))  # x + c would be f64[2,3] inside broadcast_to
    bx = b(P.broadcast_to, b.x, (2, 3), t=arr("float64", 2, 3))
    return b.graph, b(P.add, bx, np.ones((2, 3)), t=arr("float64", 2, 3))


@covers(R.broadcast_outward, "keeps")
@pytest.mark.parametrize("prim,c,dtype", [(P.mul, 2.5, "float64"), (P.lt, 0.5, "bool")],
                         ids=["int_times_float", "comparison"])
def test_broadcast_outward_keeps_a_change_of_dtype(prim, c, dtype):
    b = Build(x=arr("int64", 3))
    bx = b(P.broadcast_to, b.x, (2, 3), t=arr("int64", 2, 3))
    node = b(prim, bx, c, t=arr(dtype, 2, 3))
    # x op c would not have x's dtype: the rule leaves the node (it once typed the
    # inner x * 2.5 as an int array, and llvm computed it in ints)
    assert rewrite(R.broadcast_outward, b.returns(node), node) is None


# ---- derivative programs ------------------------------------------------------------------
"""Derivative programs: the seed of a float output is 1.0; sums of sensitivities
(gadd) of numbers and arrays are additions, of tuples built in sight the tuple of the
sums; an environment read through a switch reads both sides; an unbroadcast to the
same type is nothing; a backpropagator's cheap operations on forward values move to
the forward pass."""


@fires(R.grad_seed_of_float, "1.0", (2.5,))
def seed_of_a_float():
    b = Build(x=F64)
    return b.graph, b(P.grad_seed, b.x, t=AScalar("float64", 1.0))


@fires(R.grad_seed_of_float, "np.float32(1.0)", (np.float32(2.5),))
def seed_of_a_float32():
    b = Build(x=F32)
    return b.graph, b(P.grad_seed, b.x, t=AScalar("float32", np.float32(1.0)))


@keeps(R.grad_seed_of_float)
def seed_of_an_array():
    b = Build(x=arr("float64", 3))  # an error at run time (grad of a non-scalar)
    return b.graph, b(P.grad_seed, b.x, t=F64)


@fires(R.gadd_of_make_tuples, "make_tuple(gadd(a, c), gadd(b, d))", (1.0, 2.0, 3.0, 4.0))
def sum_of_two_pairs():
    b = Build(a=F64, b=F64, c=F64, d=F64)
    t1 = b(P.make_tuple, b.a, b.b, t=tup(F64, F64))
    t2 = b(P.make_tuple, b.c, b.d, t=tup(F64, F64))
    return b.graph, b(P.gadd, t1, t2, t=tup(F64, F64))


@keeps(R.gadd_of_make_tuples)
def sum_of_a_pair_and_a_parameter():
    b = Build(a=F64, b=F64, t=tup(F64, F64))
    return b.graph, b(P.gadd, b(P.make_tuple, b.a, b.b, t=tup(F64, F64)), b.t, t=tup(F64, F64))


@fires(R.gadd_to_add, "add(x, y)", (1.0, 2.0))
def sum_of_two_floats():
    b = Build(x=F64, y=F64)
    return b.graph, b(P.gadd, b.x, b.y, t=F64)


@fires(R.gadd_to_add, "add(x, y)", (np.ones(3), np.arange(3.0)))
def sum_of_two_arrays():
    b = Build(x=arr("float64", 3), y=arr("float64", 3))
    return b.graph, b(P.gadd, b.x, b.y, t=arr("float64", 3))


@keeps(R.gadd_to_add)
def sum_of_two_tuples():
    b = Build(s=tup(F64, F64), t=tup(F64, F64))  # add of tuples concatenates them
    return b.graph, b(P.gadd, b.s, b.t, t=tup(F64, F64))


@fires(R.unbroadcast_same_shape, "d", (np.arange(3.0), np.ones(3)))
def unbroadcast_to_the_same_shape():
    b = Build(d=arr("float64", 3), x=arr("float64", 3))
    return b.graph, b(P.unbroadcast, b.d, b.x, t=arr("float64", 3))


@keeps(R.unbroadcast_same_shape)
def unbroadcast_to_a_smaller_shape():
    b = Build(d=arr("float64", 2, 3), x=arr("float64", 3))
    return b.graph, b(P.unbroadcast, b.d, b.x, t=arr("float64", 3))


@covers(R.unbroadcast_same_shape, "keeps")
def test_unbroadcast_to_an_integer_is_zero():
    b = Build(d=I64, x=I64)
    node = b(P.unbroadcast, b.d, b.x, t=AScalar("int64", 0))
    same_value_after(R.unbroadcast_same_shape, b.returns(node), node, (5, 3), fires=False)


def _backpropagator(prim):
    """f(y, d) = bp(d), where the backpropagator bp(dout) = dout * prim(y) reads y, a
    value of f: (f, the node prim(y))."""
    f = Build(y=F64, d=F64)
    bp = Build("bp", dout=F64)
    bp.graph.flags["kind"] = "bprop"
    residual = bp(prim, f.y, t=F64)
    bp.returns(bp(P.mul, bp.dout, residual, t=F64))
    f.returns(f(bp.graph, f.d, t=F64))
    return f.graph, residual


@covers(R.hoist_residual, "fires")
def test_a_residual_moves_to_the_forward_pass():
    root, node = _backpropagator(P.cos)
    before = run(root, (0.5, 2.0))
    new = rewrite(R.hoist_residual, root, node)
    assert show(new) == "cos(y)" and new.graph is root and str(new.abstract) == "f64"
    substitute(root, node, new)
    assert manage(root).free_variables(node.graph)  # bp now reads cos(y) from f
    assert_same_value(run(root, (0.5, 2.0)), before)


@keeps(R.hoist_residual)
def a_residual_that_may_fail():
    return _backpropagator(P.log)  # log is not a cheap operation that cannot fail


@keeps(R.hoist_residual)
def an_operation_outside_a_backpropagator():
    root, node = _backpropagator(P.cos)
    node.graph.flags.pop("kind")
    return root, node


# ---- symbolic zeros -----------------------------------------------------------------------
"""Symbolic zeros (myia.opt.zeros): zeros_like of a number is a constant zero, of a
function the empty environment, of a tuple the tuple of its elements' zeros; adding a
symbolic zero is no change; a product (or a quotient's numerator) or a linear
operation of zeros is a zero."""


@fires(Z.zeros_like_of_scalar, "0", (7,))
def zero_of_an_int():
    b = Build(n=I64)
    return b.graph, b(P.zeros_like, b.n, t=AScalar("int64", 0))


@fires(Z.zeros_like_of_scalar, "False", (True,))
def zero_of_a_bool():
    b = Build(c=BOOL)
    return b.graph, b(P.zeros_like, b.c, t=AScalar("bool", False))


@fires(Z.zeros_like_of_scalar, "0.0", (np.inf,))
def zero_of_a_float():
    b = Build(x=F64)
    return b.graph, b(P.zeros_like, b.x, t=AScalar("float64", ZERO))


@keeps(Z.zeros_like_of_scalar)
def zero_of_an_array():
    b = Build(x=arr("float64", 3))  # an array of zeros, not the number 0
    return b.graph, b(P.zeros_like, b.x, t=arr("float64", 3))


@fires(Z.zeros_like_of_function, "env_new()", ())
def zero_of_a_graph():
    b = Build()
    return b.graph, b(P.zeros_like, _minus(), t=AEnv({}))


@fires(Z.zeros_like_of_function, "env_new()")
def zero_of_a_function_value():
    b = Build(f=AFunction([GraphFunction(_minus(), None)]))
    return b.graph, b(P.zeros_like, b.f, t=AEnv({}))


@keeps(Z.zeros_like_of_function)
def zero_of_a_float_is_no_environment():
    b = Build(x=F64)
    return b.graph, b(P.zeros_like, b.x, t=AScalar("float64", ZERO))


@fires(Z.zeros_like_of_tuple,
       "make_tuple(zeros_like(tuple_getitem(t, 0)), zeros_like(tuple_getitem(t, 1)))",
       ((2.5, 3),))
def zero_of_a_pair():
    b = Build(t=tup(F64, I64))
    return b.graph, b(P.zeros_like, b.t, t=tup(AScalar("float64", ZERO), AScalar("int64", 0)))


@keeps(Z.zeros_like_of_tuple)
def zero_of_an_untyped_tuple():
    b = Build(t=None)  # (its length is unknown)
    return b.graph, b(P.zeros_like, b.t)


@fires(Z.add_zeros_like, "x", (2.5, 1.0))
def plus_a_symbolic_zero():
    b = Build(x=F64, y=F64)
    return b.graph, b(P.gadd, b.x, b(P.zeros_like, b.y, t=AScalar("float64", ZERO)), t=F64)


@fires(Z.add_zeros_like, "x", (np.arange(3.0), np.ones(3)))
def symbolic_zero_plus():
    b = Build(x=arr("float64", 3), y=arr("float64", 3))
    return b.graph, b(P.gadd, b(P.zeros_like, b.y, t=arr("float64", 3)), b.x, t=arr("float64", 3))


@fires(Z.add_zeros_like, "t", ((1.5, 2.5),))
def plus_a_tuple_of_zeros():
    b = Build(t=tup(F64, F64))
    return b.graph, b(P.gadd, b.t, (0.0, 0.0), t=tup(F64, F64))


@keeps(Z.add_zeros_like)
def int_pair_plus_a_float_pair_of_zeros():
    b = Build(t=tup(I64, I64))  # (1, 2) + (0.0, 0.0) is (1.0, 2.0)
    return b.graph, b(P.gadd, b.t, (0.0, 0.0), t=tup(F64, F64))


@keeps(Z.add_zeros_like)
def plus_a_plain_zero():
    b = Build(x=F64)  # a 0.0 of the program, not a symbolic zero: -0.0 + 0.0 is 0.0
    return b.graph, b(P.gadd, b.x, 0.0, t=F64)


@fires(Z.add_symbolic_zero, "x", (2.5, 1.0))
def add_a_symbolic_zero():
    b = Build(x=F64, y=F64)
    return b.graph, b(P.add, b.x, b(P.zeros_like, b.y, t=AScalar("float64", ZERO)), t=F64)


@fires(Z.add_symbolic_zero, "x", (2.5, 1.0))
def subtract_a_symbolic_zero():
    b = Build(x=F64, y=F64)
    return b.graph, b(P.sub, b.x, b(P.zeros_like, b.y, t=AScalar("float64", ZERO)), t=F64)


@fires(Z.add_symbolic_zero, "neg(x)", (2.5, 1.0))
def subtract_from_a_symbolic_zero():
    b = Build(x=F64, y=F64)
    return b.graph, b(P.sub, b(P.zeros_like, b.y, t=AScalar("float64", ZERO)), b.x, t=F64)


@keeps(Z.add_symbolic_zero)
def int_plus_a_symbolic_float_zero():
    b = Build(n=I64, y=F64)  # the sum is a float
    return b.graph, b(P.add, b.n, b(P.zeros_like, b.y, t=AScalar("float64", ZERO)), t=F64)


@fires(Z.zero_through_linear, "zeros_like(y)", (2.5, 1.0))
def product_with_a_symbolic_zero():
    b = Build(x=F64, y=F64)  # (of any x, inf and nan included: the zero is symbolic)
    return b.graph, b(P.mul, b.x, b(P.zeros_like, b.y, t=AScalar("float64", ZERO)), t=F64)


@fires(Z.zero_through_linear, "zeros_like(full((2, 3), 0, 'float64'))")
def product_with_a_smaller_zero():
    b = Build(x=arr("float64", 2, 3), y=arr("float64", 3))
    z = b(P.zeros_like, b.y, t=arr("float64", 3))
    return b.graph, b(P.mul, b.x, z, t=arr("float64", 2, 3))


@fires(Z.zero_through_linear, "zeros_like(y)", (2.0, 1.0))
def quotient_of_a_symbolic_zero():
    b = Build(x=F64, y=F64)
    return b.graph, b(P.truediv, b(P.zeros_like, b.y, t=AScalar("float64", ZERO)), b.x, t=F64)


@fires(Z.zero_through_linear, "zeros_like(y)")
def negated_symbolic_zero():
    b = Build(y=F64)  # (a symbolic zero has no sign: its negation is itself)
    return b.graph, b(P.neg, b(P.zeros_like, b.y, t=AScalar("float64", ZERO)), t=F64)


@keeps(Z.zero_through_linear)
def quotient_by_a_symbolic_zero():
    b = Build(x=F64, y=F64)  # x / 0 is inf or nan, not zero
    return b.graph, b(P.truediv, b.x, b(P.zeros_like, b.y, t=AScalar("float64", ZERO)), t=F64)


@keeps(Z.zero_through_linear)
def sum_with_one_symbolic_zero():
    b = Build(x=F64, y=F64)  # x + 0 is x, not 0
    return b.graph, b(P.add, b.x, b(P.zeros_like, b.y, t=AScalar("float64", ZERO)), t=F64)


# ---- inlining, selects, unrolling ---------------------------------------------------------
"""Calls: a call of a graph that is not recursive is its body; a switch between two
small branches that cannot fail is a select of their values; a call of a loop whose
constant arguments fix its trip count is the loop's body (unrolled one step at a
time)."""


def _twice():
    g = Build("twice", z=F64)
    return g.returns(g(P.mul, g.z, 2.0, t=F64))


@fires(R.inline_call, "mul(x, 2.0)", (1.5,))
def call_of_a_graph_constant():
    b = Build(x=F64)
    return b.graph, b(_twice(), b.x, t=F64)


@keeps(R.inline_call)
def call_of_a_recursive_graph():
    g = Build("loop", z=F64)  # inlining it would never end
    g.returns(g(g.graph, g.z, t=F64))
    b = Build(x=F64)
    return b.graph, b(g.graph, b.x, t=F64)


@keeps(R.inline_call)
def call_of_a_noinline_graph():
    g = _twice()
    g.flags["noinline"] = True
    b = Build(x=F64)
    return b.graph, b(g, b.x, t=F64)


def conditional_expression(x, c):
    return x + 1.0 if c else x - 1.0


def conditional_statement(x, c):
    if c:
        y = x + 1.0
    else:
        y = x * 2.0
    return y


def conditional_sqrt(x, c):
    return np.sqrt(x) if c else -x


def _branch_call(fn):
    root = typed_copy(fn, 1.0, True)
    return root, find(root, lambda n: n.inputs[0].is_apply(P.switch))


@fires(branches_to_select, "switch(truth(c), add(x, 1.0), sub(x, 1.0))", (2.0, True), (2.0, False))
def if_expression():
    return _branch_call(conditional_expression)


@fires(branches_to_select, "@conditional_statement:after_if(switch(truth(c), add(x, 1.0), "
       "mul(x, 2.0)))", (2.0, True), (2.0, False))
def if_statement():
    return _branch_call(conditional_statement)


@keeps(branches_to_select)
def if_with_a_branch_that_may_be_nan():
    # sqrt(x) and its derivative are nan for x < 0: computing it when not taken is not
    # free, and zero times its derivative's inf makes the gradient nan
    return _branch_call(conditional_sqrt)


def three_steps(x):
    i = 0
    while i < 3:
        x = x * 2.0
        i = i + 1
    return x


def n_steps(x, n):
    i = 0
    while i < n:
        x = x * 2.0
        i = i + 1
    return x


def many_steps(x):
    i = 0
    while i < 1000:
        x = x * 2.0
        i = i + 1
    return x


def _loop_call(root):
    """The call of the loop's header (a recursive graph) from outside the loop: the
    specializer has typed the first iteration apart (i = 0), whose body calls the
    header with i = 1."""
    from myia.opt.pass_manager import recursive_graphs

    loop = recursive_graphs(manage(root))
    return root, find(root, lambda n: isinstance(n.inputs[0], Constant)
                      and n.inputs[0].value in loop and n.graph not in loop)


@covers(unroll_counted_loop, "fires")
def test_a_counted_loop_unrolls_one_step():
    root, node = _loop_call(typed_copy(three_steps, 1.5))
    assert show(node) == "@three_steps:while_header(1, mul(x, 2.0))"
    before = run(root, (1.5,))
    new = rewrite(unroll_counted_loop, root, node)
    # the header's body, with i = 1: its condition folds next
    assert show(new) == ("switch(truth(lt(1, 3)), @three_steps:while_body, "
                         "@three_steps:after_while)()")
    assert new.graph is node.graph and str(new.abstract) == "f64"
    substitute(root, node, new)
    assert_same_value(run(root, (1.5,)), before)


@keeps(unroll_counted_loop)
def loop_with_a_runtime_trip_count():
    return _loop_call(typed_copy(n_steps, 1.5, 3))


@keeps(unroll_counted_loop)
def loop_with_too_many_trips():
    return _loop_call(typed_copy(many_steps, 1.5))


def scaled_steps(x, w, n, k):
    i = 0
    while i < n:
        x = x * (w + 1.0) + np.log(w) * 0.0 + (k + 1) * 0.0
        i = i + 1
    return x


def _in_the_loop(text):
    """(the typed program of scaled_steps, its node inside the loop that reads `text`)."""
    from myia.opt.pass_manager import recursive_graphs

    root = typed_copy(scaled_steps, 1.5, 0.5, 3, 2)
    loop = recursive_graphs(manage(root))
    return root, find(root, lambda n: n.graph in loop and show(n) == text)


@covers(R.hoist_loop_invariant, "fires")
def test_a_loop_invariant_moves_out_of_the_loop():
    root, node = _in_the_loop("add(w, 1.0)")
    before = run(root, (1.5, 0.5, 3, 2))
    new = rewrite(R.hoist_loop_invariant, root, node)
    assert show(new) == "add(w, 1.0)" and new.graph is root and str(new.abstract) == "f64"
    substitute(root, node, new)
    assert node.graph is not root  # (the loop now reads it from the graph around it)
    assert_same_value(run(root, (1.5, 0.5, 3, 2)), before)


@keeps(R.hoist_loop_invariant)
def a_value_of_the_loop():
    return _in_the_loop("mul(x, add(w, 1.0))")


@keeps(R.hoist_loop_invariant)
def an_invariant_that_may_fail():
    return _in_the_loop("log(w)")  # of a negative w: an error where the loop never ran


@keeps(R.hoist_loop_invariant)
def an_integer_invariant():
    return _in_the_loop("add(k, 1)")  # (an int may overflow)


# ---- the tests ----------------------------------------------------------------------------


@pytest.mark.parametrize("rule,build,expected,runs,t", FIRES)
def test_rule_fires(rule, build, expected, runs, t):
    root, node = build()
    if root.output is None:
        root.output = node
    befores = [run(root, args) for args in runs]
    new = rewrite(rule, root, node)
    assert new is not None, f"{rule.name} left {show(node)}"
    assert show(new) == expected
    if node.abstract is not None:  # the replacement keeps the node's type
        assert str(new.abstract) == (t or str(node.abstract)), (new.abstract, node.abstract)
    substitute(root, node, new)
    for args, before in zip(runs, befores):
        assert_same_value(run(root, args), before, f"{rule.name}{args}")


@pytest.mark.parametrize("rule,build", KEEPS)
def test_rule_must_not_fire(rule, build):
    root, node = build()
    new = rewrite(rule, root, node)
    assert new is None, f"{rule.name} rewrote {show(node)} into {show(new)}"


def test_every_rule_has_a_case_that_fires_and_one_that_must_not():
    rules = R.ALL + R.FINISH
    assert set(rules) >= set(R.CONTAINERS) | set(Z.RULES)
    missing = [f"{r.name}: {', '.join(sorted({'fires', 'keeps'} - COVERED.get(r, set())))}"
               for r in rules if COVERED.get(r, set()) != {"fires", "keeps"}]
    assert not missing, "rules without a case of each kind:\n" + "\n".join(missing)
    assert set(COVERED) <= set(rules), "cases of a rule no list holds"
