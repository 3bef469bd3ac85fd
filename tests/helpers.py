"""Shared test helpers: values as trees, finite differences, gradient checks.

Values are *trees*: floats, NumPy arrays (and NumPy scalars), and tuples of trees, as
myia's functions take and return them.  The checks follow `jax.test_util.check_grads`:

- forward mode (`check_jvp`): `myia.jvp(fn, args, t)` for a random tangent `t`,
  against the central difference `(ref(args + eps t) - ref(args - eps t)) / 2 eps`;
- reverse mode (`check_vjp`): `myia.vjp(fn, *args)` with a random cotangent `u`,
  against the central differences of `<u, ref(args)>` element by element;
- second order (`check_grads(..., order=2)`): the same checks applied to the
  derivative programs themselves, with myia's first-order results as the reference
  (forward: the tangent program of the tangent program; reverse: the vjp of the
  gradient program of `<u, fn(args)>`).

`ref` is the reference implementation: plain Python by default (a subset function is
ordinary Python; primitives called as `P.name(...)` run their NumPy implementation).

Keep this module free of module-level `import myia` (see conftest.py).
"""

import numpy as np

EPS = 1e-5
RTOL = 1e-5
ATOL = 1e-6


# ---- trees ---------------------------------------------------------------------------


def is_float_leaf(x):
    """A differentiable leaf: a float, a NumPy float scalar or a float array."""
    if isinstance(x, (bool, np.bool_)):
        return False
    if isinstance(x, (float, np.floating)):
        return True
    return isinstance(x, np.ndarray) and x.dtype.kind == "f"


def tree_leaves(x):
    if isinstance(x, tuple):
        out = []
        for y in x:
            out.extend(tree_leaves(y))
        return out
    return [x]


def tree_map(fn, *trees):
    """`fn` applied leaf by leaf to trees of the same structure."""
    first = trees[0]
    if isinstance(first, tuple):
        for t in trees[1:]:
            assert isinstance(t, tuple) and len(t) == len(first), (
                f"tree structures differ: {first!r} and {t!r}")
        return tuple(tree_map(fn, *parts) for parts in zip(*trees))
    return fn(*trees)


def tree_structure(x):
    """The shape of a tree, for error messages and structure checks:
    tuples stay tuples, a float is 'float', an array is ('array', shape)."""
    if isinstance(x, tuple):
        return tuple(tree_structure(y) for y in x)
    if isinstance(x, np.ndarray) and x.ndim > 0:
        return ("array", x.shape)
    return "float"


def random_like(x, rng):
    """A random tree of the same structure (zeros where x is not a float leaf)."""
    def leaf(v):
        if not is_float_leaf(v):
            return v
        if isinstance(v, np.ndarray):
            return rng.standard_normal(v.shape)
        return float(rng.standard_normal())

    return tree_map(leaf, x)


def axpy(a, t, x):
    """x + a * t on the float leaves (other leaves are taken from x)."""
    return tree_map(lambda xv, tv: xv + a * tv if is_float_leaf(xv) else xv, x, t)


def vdot(x, y):
    """The inner product of two trees (over their float leaves)."""
    total = 0.0
    for a, b in zip(tree_leaves(x), tree_leaves(y)):
        if is_float_leaf(a) or is_float_leaf(b):
            total += float(np.sum(np.asarray(a, dtype=float) * np.asarray(b, dtype=float)))
    return total


def assert_tree_close(actual, expected, rtol=RTOL, atol=ATOL, what="value"):
    """Same structure (tuples match tuples) and close leaves."""
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple), f"{what}: expected a tuple, got {actual!r}"
        assert len(actual) == len(expected), (
            f"{what}: expected a tuple of {len(expected)}, got {len(actual)}: {actual!r}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_tree_close(a, e, rtol, atol, f"{what}[{i}]")
        return
    assert not isinstance(actual, tuple), f"{what}: expected {expected!r}, got a tuple {actual!r}"
    assert np.shape(actual) == np.shape(expected), (
        f"{what}: shape {np.shape(actual)} != expected {np.shape(expected)}")
    np.testing.assert_allclose(np.asarray(actual, dtype=float),
                               np.asarray(expected, dtype=float),
                               rtol=rtol, atol=atol, err_msg=what)


# ---- finite differences -----------------------------------------------------------------


def fd_jvp(fn, args, tangents, eps=EPS):
    """Central difference of `fn` at `args` in the direction `tangents`."""
    plus = fn(*axpy(eps, tangents, tuple(args)))
    minus = fn(*axpy(-eps, tangents, tuple(args)))
    return tree_map(lambda p, m: (np.asarray(p, dtype=float) - np.asarray(m, dtype=float))
                    / (2 * eps) if is_float_leaf(p) or isinstance(p, (int, np.integer))
                    else p, plus, minus)


def numerical_grad(fn, args, argnum=0, eps=EPS):
    """The gradient of the scalar function `fn` with respect to `args[argnum]` (a tree),
    by central differences, element by element.  Same structure as the argument."""
    args = tuple(args)

    def perturbed(path_set):
        return fn(*args[:argnum], path_set, *args[argnum + 1:])

    def grad_of(x, rebuild):
        if isinstance(x, tuple):
            return tuple(
                grad_of(x[i], lambda v, i=i: rebuild(x[:i] + (v,) + x[i + 1:]))
                for i in range(len(x)))
        if not is_float_leaf(x):
            return x
        if isinstance(x, np.ndarray):
            g = np.zeros(x.shape)
            for idx in np.ndindex(x.shape):
                xp = x.astype(float)
                xm = x.astype(float)
                xp[idx] += eps
                xm[idx] -= eps
                g[idx] = (float(perturbed(rebuild(xp))) - float(perturbed(rebuild(xm)))) / (2 * eps)
            return g
        return (float(perturbed(rebuild(x + eps))) - float(perturbed(rebuild(x - eps)))) / (2 * eps)

    return grad_of(args[argnum], lambda v: v)


# ---- gradient checks ----------------------------------------------------------------------


def _myia():
    import myia

    return myia


def check_jvp(fn, args, ref=None, rng=None, rtol=RTOL, atol=ATOL, eps=EPS):
    """myia.jvp(fn) against finite differences of `ref` (default: `fn` in Python)."""
    myia = _myia()
    ref = ref or fn
    rng = rng or np.random.default_rng(0)
    args = tuple(args)
    tangents = random_like(args, rng)
    out, tangent = myia.jvp(fn, args, tangents)
    assert_tree_close(out, ref(*args), rtol, atol, what="jvp primal output")
    assert_tree_close(tangent, fd_jvp(ref, args, tangents, eps), rtol, atol,
                      what="jvp tangent vs finite differences")
    return out, tangent


def check_vjp(fn, args, ref=None, rng=None, rtol=RTOL, atol=ATOL, eps=EPS, nargs=None):
    """myia.vjp(fn) against the finite-difference gradient of `<u, ref(args)>` for a
    random cotangent `u`.  `nargs`: how many leading arguments to check (all)."""
    myia = _myia()
    ref = ref or fn
    rng = rng or np.random.default_rng(1)
    args = tuple(args)
    out, vjp_fn = myia.vjp(fn, *args)
    assert_tree_close(out, ref(*args), rtol, atol, what="vjp primal output")
    u = random_like(out, rng)
    cts = vjp_fn(u)
    assert isinstance(cts, tuple) and len(cts) == len(args), cts
    for i in range(nargs if nargs is not None else len(args)):
        if not any(is_float_leaf(v) for v in tree_leaves(args[i])):
            continue
        num = numerical_grad(lambda *a: vdot(u, ref(*a)), args, i, eps)
        assert_tree_close(cts[i], num, rtol, atol,
                          what=f"vjp cotangent of argument {i} vs finite differences")
    return out, cts


def check_grads(fn, args, order=2, modes=("fwd", "rev"), rtol=RTOL, atol=ATOL, eps=EPS,
                seed=0):
    """Like `jax.test_util.check_grads`: first-order checks of `fn` (a subset function)
    in each mode, and for order 2 the same checks of its derivative programs:

    - fwd: the tangent program of `fn`'s tangent program (forward over forward),
      against finite differences of myia.jvp(fn);
    - rev: the vjp of the gradient program of `s(args, u) = sum(fn(args) * u)` for a
      fixed random `u` (reverse over reverse), against finite differences of myia's
      gradient.  `scalarized(fn, n)` makes `s`.
    """
    myia = _myia()
    from myia.api import JVPFunction

    rng = np.random.default_rng(seed)
    args = tuple(args)
    n = len(args)
    if "fwd" in modes:
        check_jvp(fn, args, rng=rng, rtol=rtol, atol=atol, eps=eps)
    if "rev" in modes:
        check_vjp(fn, args, rng=rng, rtol=rtol, atol=atol, eps=eps)
    if order < 2:
        return
    if "fwd" in modes:
        tangents = random_like(args, rng)
        jfn = JVPFunction(fn)

        def jvp_ref(*xt):
            return myia.jvp(fn, xt[:n], xt[n:])

        check_jvp(jfn, args + tangents, ref=jvp_ref, rng=rng, rtol=rtol, atol=atol, eps=eps)
    if "rev" in modes:
        u = random_like(fn(*args), rng)
        s = scalarized(fn, n, pair=isinstance(u, tuple))
        g = myia.grad(s, tuple(range(n)))

        check_vjp(g, args + (u,), ref=g, rng=rng, rtol=rtol, atol=atol, eps=eps, nargs=n)
    if order > 2:
        raise NotImplementedError("order > 2")


def scalarized(fn, n, pair=False):
    """A subset function `s(x1, ..., xn, u) = sum(fn(x1, ..., xn) * u)`: the scalar
    whose gradient is the vjp of `fn` against `u`.  `pair`: `fn` returns a pair
    `(y0, y1)` and `u` is a pair too (the sum is over both)."""
    if pair:
        if n == 1:
            def p1(x0, u):
                y = fn(x0)
                return np.sum(y[0] * u[0]) + np.sum(y[1] * u[1])
            return p1
        if n == 2:
            def p2(x0, x1, u):
                y = fn(x0, x1)
                return np.sum(y[0] * u[0]) + np.sum(y[1] * u[1])
            return p2
    elif n == 1:
        def s1(x0, u):
            return np.sum(fn(x0) * u)
        return s1
    elif n == 2:
        def s2(x0, x1, u):
            return np.sum(fn(x0, x1) * u)
        return s2
    elif n == 3:
        def s3(x0, x1, x2, u):
            return np.sum(fn(x0, x1, x2) * u)
        return s3
    raise NotImplementedError(f"scalarized for {n} arguments (pair={pair})")




# ---- the LLVM backend's code --------------------------------------------------------------


def llvm_ir(fn, *args):
    """The LLVM IR (after O3) that the llvm backend makes of `fn` for these arguments."""
    from myia.backend.llvm.dispatch import compile_program
    from myia.infer import signature_of
    from myia.pipeline import optimized_program

    g = optimized_program(fn, signature_of(args))
    dump = {}
    compile_program(g, dump=dump)
    return dump["optimized"]
