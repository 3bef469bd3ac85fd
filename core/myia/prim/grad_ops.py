"""Primitives that derivative programs use: sensitivities and their environments.

The sensitivity of a function value (a closure) is an *environment*: a map from the
closure's free variables to their sensitivities.  Keys are compile-time constants
(`EnvKey` of an IR node), so the set of keys an environment may hold is static and a
native backend can lay it out as a plain record; `env_new()` is the zero.
"""

import numpy as np

from ..errors import MyiaGradError, MyiaTypeError
from ..ir.anf import EnvKey  # noqa: F401  (keys are IR-level: cloning maps them)
from . import series as S
from .primitive import Primitive, batch, bprop, jet, jvp, linear_in


class EnvInstance:
    """An immutable environment value (what the VM uses)."""

    __slots__ = ("contents",)

    def __init__(self, contents=None):
        self.contents = contents or {}

    def set(self, key, value):
        new = dict(self.contents)
        new[key] = value
        return EnvInstance(new)

    def get(self, key, default):
        return self.contents.get(key, default)

    def add(self, other):
        new = dict(self.contents)
        for k, v in other.contents.items():
            new[k] = _gadd(new[k], v) if k in new else v
        return EnvInstance(new)

    def __repr__(self):
        return f"Env({self.contents!r})"


EMPTY_ENV = EnvInstance()


def _gadd(x, y):
    """Add two sensitivities of the same structure."""
    if isinstance(x, tuple):
        if not isinstance(y, tuple) or len(x) != len(y):
            raise MyiaTypeError(f"cannot add sensitivities {x!r} and {y!r}")
        # import here: containers.py imports this module
        from .containers import same_container

        return same_container(x if type(x) is not tuple else y,
                              [_gadd(a, b) for a, b in zip(x, y)])
    if isinstance(x, EnvInstance):
        return x.add(y)
    if x is None:
        return y
    if isinstance(x, (EnvKey, str, slice)):  # keys and other static values
        return x
    return x + y


class SymbolicZero(float):
    """The zero sensitivity of a float, which AD knows to be zero: the number 0.0 for
    every backend, and for the optimizer a zero that what it feeds inherits (a product,
    a quotient's numerator, a linear operation: see myia.opt.zeros), whatever the
    other operands hold, inf and NaN included."""

    __slots__ = ()

    def __repr__(self):
        return "0.0"


#: the symbolic zero of a float (zeros_like of a float scalar)
ZERO = SymbolicZero(0.0)


#: the primitives whose result is zero when any of these inputs is (a factor, a
#: numerator), and the linear ones whose Taylor rule is written out
_ZERO_IF_ANY = {"mul": (0, 1), "truediv": (0,), "dot": (0, 1), "batch_matmul": (0, 1)}
_ZERO_IF_ALL = {"add": (0, 1), "sub": (0, 1), "neg": (0,)}


def zero_inputs(prim):
    """(the inputs any of which, zero, makes `prim`'s result zero; the inputs all of
    which do): a product or a quotient's numerator; a linear primitive (its Taylor
    rule says `linear_in`) in the inputs it is linear in.  Not make_tuple, whose zero
    is a tuple."""
    all_of = _ZERO_IF_ALL.get(prim.name)
    if all_of is None:
        jet_rule = prim.rules.get("jet")
        linear = type(jet_rule) is tuple and jet_rule[0] == "linear" and jet_rule[1] is not None
        all_of = jet_rule[1] if linear else ()
    return _ZERO_IF_ANY.get(prim.name, ()), all_of


def keep_symbolic(prim, values, result):
    """The `result` of `prim` folded on constant `values`, as ZERO where it is a
    symbolic zero (a product or a linear function of symbolic zeros): the optimizer
    and its analyses recognize the object ZERO, not any 0.0."""
    if result.__class__ in (float, np.float64) and result == 0 \
            and any(v.__class__ is SymbolicZero for v in values):
        any_of, all_of = zero_inputs(prim)
        symbolic = {i for i, v in enumerate(values) if v.__class__ is SymbolicZero}
        if symbolic.intersection(any_of) or all_of and symbolic.issuperset(all_of):
            return ZERO
    return result


def _zeros_like(x):
    """The zero sensitivity for a value of x's structure."""
    if isinstance(x, tuple):
        # import here: containers.py imports this module
        from .containers import same_container

        return same_container(x, [_zeros_like(e) for e in x])
    if isinstance(x, np.ndarray):
        return np.zeros_like(x)
    if isinstance(x, (bool, np.bool_)):
        return False
    if isinstance(x, (int, np.integer)):
        return 0
    if isinstance(x, (float, np.floating)):
        return ZERO
    if x is None or isinstance(x, (str, slice, EnvKey)):
        return x
    # functions (closures, primitives, partial applications) and environments
    return EMPTY_ENV


def _grad_seed(out):
    """1.0, the sensitivity that starts a gradient; `out` must be a float scalar."""
    if isinstance(out, (float, np.floating)) and not isinstance(out, bool):
        return type(out)(1.0)
    if isinstance(out, np.ndarray) and out.ndim == 0 and out.dtype.kind == "f":
        return out.dtype.type(1.0)
    if isinstance(out, np.ndarray):
        what = f"an array of shape {out.shape}"
    elif isinstance(out, (bool, int, np.integer)):
        what = f"an integer ({out!r})"
    else:
        what = f"a {type(out).__name__}"
    raise MyiaGradError(
        f"grad needs a function that returns a float scalar, but it returned {what}",
        hint="use myia.vjp for a function with a non-scalar output, or reduce it "
             "(np.sum) to a scalar first")


def _ones_like(x):
    if isinstance(x, np.ndarray):
        return np.ones_like(x)
    return type(x)(1)


gadd = Primitive("gadd", _gadd, "add two sensitivities (numbers, arrays, tuples, envs)",
                 commutative=True, foldable=True)
zeros_like = Primitive("zeros_like", _zeros_like, "the zero sensitivity of x's structure")
grad_seed = Primitive("grad_seed", _grad_seed, "1.0 for a float scalar output, else an error",
                      nondiff=True)
ones_like = Primitive("ones_like", _ones_like, "ones of x's shape (the seed of a gradient)",
                      nondiff=True, foldable=True)
env_new = Primitive("env_new", lambda: EMPTY_ENV, "the empty environment (zero)")
env_setitem = Primitive("env_setitem", lambda env, key, value: env.set(key, value),
                        "env with key set to value")
env_getitem = Primitive("env_getitem", lambda env, key, default: env.get(key, default),
                        "env[key], or default when absent")
env_add = Primitive("env_add", lambda a, b: a.add(b), "merge two environments, adding",
                    commutative=True)


def _backend_only(name):
    def impl(*args):
        raise NotImplementedError(f"{name} is implemented by each backend")

    return impl


#: J(f): the reverse-mode transform of a function value (data is its own J).  Calling
#: J(f) returns (f's value, backpropagator).  Backends implement it (see myia.ad).
J = Primitive("J", _backend_only("J"), "the reverse-mode transform of a value")
#: T(f): the forward-mode transform of a function value (data is its own T).  T(f)
#: takes (value, tangent) pairs and returns one.  Inference resolves it (see
#: myia.infer.tangent); the VM also computes it at run time.
T = Primitive("T", _backend_only("T"), "the forward-mode transform of a value")
#: Jinv(x): the inverse of J.
Jinv = Primitive("Jinv", _backend_only("Jinv"), "the inverse of J")


# ---- rules (in the subset; the AD layer parses them) ------------------------------


@bprop(gadd)
def bprop_gadd(x, y, out, dout):
    return (dout, dout)


@jvp(gadd)
def jvp_gadd(x, y, dx, dy):
    return gadd(dx, dy)


@jet(gadd)
def jet_gadd(out, x, y):
    return [out] + S.elementwise(x, y, lambda a, b: b if a is S.ZERO else a if b is S.ZERO
                                 else S.Term(S.apply(gadd, a.node, b.node)))


@bprop(zeros_like)
def bprop_zeros_like(x, out, dout):
    return (zeros_like(x),)


@jvp(zeros_like)
def jvp_zeros_like(x, dx):
    return zeros_like(dx)


@jet(zeros_like)
def jet_zeros_like(out, x):
    return [out] + [S.ZERO] * (len(x) - 1)


@bprop(env_new)
def bprop_env_new(out, dout):
    return ()


@jvp(env_new)
def jvp_env_new():
    return env_new()


@bprop(env_setitem)
def bprop_env_setitem(env, key, value, out, dout):
    return (env_setitem(dout, key, zeros_like(value)), key,
            env_getitem(dout, key, zeros_like(value)))


@jvp(env_setitem)
def jvp_env_setitem(env, key, value, denv, dkey, dvalue):
    return env_setitem(denv, key, dvalue)


jet(env_setitem)(linear_in(0, 2))


@bprop(env_getitem)
def bprop_env_getitem(env, key, default, out, dout):
    return (env_setitem(env_new(), key, dout), key, zeros_like(default))


@jvp(env_getitem)
def jvp_env_getitem(env, key, default, denv, dkey, ddefault):
    return env_getitem(denv, key, ddefault)


jet(env_getitem)(linear_in(0, 2))


@bprop(env_add)
def bprop_env_add(a, b, out, dout):
    return (dout, dout)


@jvp(env_add)
def jvp_env_add(a, b, da, db):
    return env_add(da, db)


@jet(env_add)
def jet_env_add(out, x, y):
    return [out] + S.elementwise(x, y, lambda a, b: b if a is S.ZERO else a if b is S.ZERO
                                 else S.Term(S.apply(env_add, a.node, b.node)))


#: differentiable(x, what): x, a value that grad, vjp or jet is taken with respect to.
#: Inference refuses it where it is an integer or a bool, or holds one (`what` names
#: the argument in the error), wherever the transform was applied: from Python, in
#: compiled code, in a cell.  The optimizer removes it.
differentiable = Primitive("differentiable", lambda x, what: x,
                           "x, which a derivative is taken with respect to")


@bprop(differentiable)
def bprop_differentiable(x, what, out, dout):
    return (dout, what)


@jvp(differentiable)
def jvp_differentiable(x, what, dx, dwhat):
    return dx


jet(differentiable)(linear_in(0))


#: stop_gradient(x): x, held constant by every derivative (JAX's `lax.stop_gradient`):
#: its derivative is zero in every mode and order (nondiff), for x of any structure.
#: The finishing rules of the optimizer remove it, after every transform has seen it.
stop_gradient = Primitive("stop_gradient", lambda x: x,
                          "x, with a derivative of zero (myia.stop_gradient)", nondiff=True)


# The sensitivity of J(x) is the sensitivity of x (see myia.ad): both rules pass it on.
@bprop(J)
def bprop_J(x, out, dout):
    return (dout,)


@bprop(Jinv)
def bprop_Jinv(x, out, dout):
    return (dout,)


@batch(grad_seed)
def batch_grad_seed(b, out):
    return b.apply(ones_like, b.batched(out))
