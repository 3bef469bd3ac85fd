"""Checking NumPy functions as users write them, case by case (issue 18's targets):

- the value, compiled on each backend, against NumPy itself (the same function run
  as plain Python);
- the gradient (first order), against autograd and against central finite differences;
- the second order: the gradient of `<v, grad(f)>` for a fixed random v, against
  autograd's and against finite differences of myia's first-order gradient.

A case module (`cases_*.py`) holds subset functions written with `np.` and registers
them with `@case(...)`; `autograd_twin` re-executes that module with `np` bound to
`autograd.numpy`, which gives each function its autograd twin (same name, same lines).

Functions of several arrays are differentiated with respect to every float argument
(`argnums` of the case narrows it); a function with an array result is reduced to a
scalar as `sum(f(x) * w)` for a fixed random `w`.
"""

import sys
import types
from dataclasses import dataclass, field

import numpy as np

BACKENDS = ("vm", "llvm")


@dataclass
class Case:
    name: str  # the NumPy function (or method) the case is about
    fn: object
    args: tuple
    argnums: tuple = None  # differentiated arguments (None: every float argument)
    order: int = 2  # 0: values only; 1: first-order gradients; 2: second order too
    rtol: float = 1e-9
    grad_rtol: float = 1e-7
    tags: frozenset = field(default_factory=frozenset)
    #: False where autograd has no derivative of the function: derivatives are then
    #: checked against finite differences only (of the function, and of myia's gradient)
    autograd: bool = True
    #: False where central differences cannot measure the derivative (a function that
    #: rounds to float32 in between: its steps are larger than the differences' step)
    fd: bool = True

    def __str__(self):
        return f"{self.name}-{self.fn.__name__}"

    def diff_args(self):
        if self.argnums is not None:
            return tuple(self.argnums)
        return tuple(i for i, a in enumerate(self.args) if _is_float(a))


def _is_float(a):
    if isinstance(a, (bool, np.bool_, int, np.integer)):
        return False
    if isinstance(a, (float, np.floating)):
        return True
    return isinstance(a, np.ndarray) and a.dtype.kind == "f"


def collector():
    """(cases list, `case` decorator) for a case module."""
    cases = []

    def case(name, *args, **options):
        def deco(fn):
            cases.append(Case(name, fn, tuple(args), **options))
            return fn
        return deco

    return cases, case


def autograd_twin(module):
    """The case module re-executed with `np` = autograd.numpy: {function name: function}."""
    import autograd.numpy as anp

    name = module.__name__ + "_with_autograd"
    twin = sys.modules.get(name)
    if twin is None:
        with open(module.__file__) as fh:
            source = fh.read()
        twin = types.ModuleType(name)
        twin.__file__ = module.__file__
        sys.modules[name] = twin
        exec(compile(source, module.__file__, "exec"), twin.__dict__)
        twin.np = anp
    return {c.fn.__name__: c.fn for c in twin.CASES}


# ---- the checks ------------------------------------------------------------------------------


def assert_close(got, want, rtol, atol=1e-12, what="value"):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), (what, got, want)
        for k, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, rtol, atol, f"{what}[{k}]")
        return
    want_arr = np.asarray(want)
    got_arr = np.asarray(got)
    assert got_arr.shape == want_arr.shape, f"{what}: shape {got_arr.shape} != {want_arr.shape}"
    if want_arr.dtype.kind in "biu":
        assert got_arr.dtype.kind == want_arr.dtype.kind, f"{what}: dtype {got_arr.dtype} != {want_arr.dtype}"
        np.testing.assert_array_equal(got_arr, want_arr, err_msg=what)
        return
    assert got_arr.dtype == want_arr.dtype, f"{what}: dtype {got_arr.dtype} != {want_arr.dtype}"
    np.testing.assert_allclose(got_arr, want_arr, rtol=rtol, atol=atol, err_msg=what)


def check_value(case, backend):
    import myia

    want = case.fn(*case.args)
    got = myia.compile(case.fn, backend=backend)(*case.args)
    assert_close(got, want, case.rtol, what=f"{case} on {backend}")


def _weights(case):
    """A fixed random array like each output (the scalarizing weights)."""
    rng = np.random.default_rng(7)
    out = case.fn(*case.args)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return tuple(rng.standard_normal(np.shape(o)) for o in outs)


def _subset_scalar(case, n_out):
    fn, n = case.fn, len(case.args)
    # written out per arity: subset functions take fixed parameters
    if n_out != 1:
        raise NotImplementedError("cases with tuple results are checked by value only")
    if n == 1:
        def s1(a, w):
            return np.sum(fn(a) * w)
        return s1
    if n == 2:
        def s2(a, b, w):
            return np.sum(fn(a, b) * w)
        return s2
    if n == 3:
        def s3(a, b, c, w):
            return np.sum(fn(a, b, c) * w)
        return s3
    raise NotImplementedError(f"{n} arguments")


def _autograd_scalar(afn, n):
    import autograd.numpy as anp

    def s(*args):
        return anp.sum(afn(*args[:n]) * args[n])
    return s


def _like_args(values, case, nums):
    """Expected gradients with the dtypes of the arguments they are gradients of."""
    out = []
    for x, i in zip(values, nums):
        a = case.args[i]
        x = np.asarray(x)
        out.append(float(x) if np.ndim(a) == 0 else x.astype(np.asarray(a).dtype))
    return tuple(out)


def check_grad(case, backend, twin, order):
    """First (order=1) or second (order=2) derivatives of the case against autograd
    (against finite differences where autograd has no rule: `case.autograd`)."""
    import autograd

    import myia

    if not case.autograd:
        return check_fd(case, backend) if order == 1 else check_second_fd(case, backend)
    (w,) = _weights(case)
    nums = case.diff_args()
    n = len(case.args)
    afn = twin[case.fn.__name__]
    s = _subset_scalar(case, 1)
    a_s = _autograd_scalar(afn, n)
    args = case.args + (w,)
    if order == 1:
        got = myia.compile(myia.grad(s, nums), backend=backend)(*args)
        want = autograd.grad(a_s, nums)(*args) if len(nums) > 1 else \
            (autograd.grad(a_s, nums[0])(*args),)
        assert_close(tuple(got), _like_args(want, case, nums), case.grad_rtol,
                     atol=1e-9, what=f"grad of {case} on {backend}")
        return
    # second order: d/dx_i <v, grad_x_i s> for each differentiated argument
    rng = np.random.default_rng(11)
    for i in nums:
        v = rng.standard_normal(np.shape(case.args[i]))
        g = myia.grad(s, i)
        got = myia.compile(myia.grad(_with_v(g, v, len(args)), nums), backend=backend)(*args)
        ag = autograd.grad(a_s, i)

        def a_hv(*a):
            import autograd.numpy as anp
            return anp.sum(ag(*a) * v)
        want = [autograd.grad(a_hv, j)(*args) for j in nums]
        assert_close(tuple(got), _like_args(want, case, nums),
                     case.grad_rtol * 10, atol=1e-8, what=f"second order ({i}) of {case} on {backend}")


def _with_v(g, v, n):
    if n == 2:
        def hv2(a, w):
            return np.sum(g(a, w) * v)
        return hv2
    if n == 3:
        def hv3(a, b, w):
            return np.sum(g(a, b, w) * v)
        return hv3
    if n == 4:
        def hv4(a, b, c, w):
            return np.sum(g(a, b, c, w) * v)
        return hv4
    raise NotImplementedError(f"{n} arguments")


def check_fd(case, backend):
    """The first-order gradient against central finite differences."""
    import myia

    (w,) = _weights(case)
    s = _subset_scalar(case, 1)
    args = case.args + (w,)
    nums = case.diff_args()
    got = myia.compile(myia.grad(s, nums), backend=backend)(*args)
    for k, i in enumerate(nums):
        num = _numerical(lambda *a: float(np.sum(case.fn(*a[:-1]) * a[-1])), args, i)
        assert_close(got[k], _like_args([num], case, [i])[0], max(1e-5, case.grad_rtol),
                     atol=1e-6 if _f64(case.args[i]) else 1e-3,
                     what=f"grad {i} of {case} vs finite differences")


def check_second_fd(case, backend):
    """Second order: the gradient of <v, grad f> against finite differences of myia's
    own first-order gradient (computed on the VM)."""
    import myia

    (w,) = _weights(case)
    s = _subset_scalar(case, 1)
    args = case.args + (w,)
    nums = case.diff_args()
    rng = np.random.default_rng(11)
    for i in nums:
        v = rng.standard_normal(np.shape(case.args[i]))
        g = myia.grad(s, i)
        got = myia.compile(myia.grad(_with_v(g, v, len(args)), nums), backend=backend)(*args)
        first = myia.compile(g, backend="vm")
        for k, j in enumerate(nums):
            num = _numerical(lambda *a: float(np.sum(first(*a) * v)), args, j)
            assert_close(got[k], num, 1e-4, atol=1e-5,
                         what=f"second order ({i}, {j}) of {case} vs finite differences")


def _numerical(f, args, i, eps=1e-6):
    x = np.array(args[i], dtype=float, order="C")  # reshape(-1) below must be a view
    out = np.zeros_like(x)
    flat, oflat = x.reshape(-1), out.reshape(-1)
    for k in range(flat.size):
        old = flat[k]
        flat[k] = old + eps
        hi = f(*(args[:i] + (x.reshape(np.shape(args[i])) if np.ndim(args[i]) else _scalar_like(x, args[i]),)
               + args[i + 1:]))
        flat[k] = old - eps
        lo = f(*(args[:i] + (x.reshape(np.shape(args[i])) if np.ndim(args[i]) else _scalar_like(x, args[i]),)
               + args[i + 1:]))
        flat[k] = old
        oflat[k] = (hi - lo) / (2 * eps)
    return out if np.ndim(args[i]) else float(out)


def _scalar_like(x, a):
    """The number x as the type of the scalar argument a (np.float64 keeps .shape)."""
    return type(a)(x) if isinstance(a, np.generic) else float(x)


def _f64(a):
    return np.asarray(a).dtype == np.float64
