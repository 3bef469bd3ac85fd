"""Myia's transforms checked against one another: for a function of a float `x` (other
arguments held fixed), the second derivative by grad∘grad, by `hessian`, by jvp∘grad,
by `jet`'s second coefficient, and by central differences of Myia's own `grad`; the
first by `grad`, `jvp`, `jet` and central differences of the function.  No oracle is
needed: a transform that disagrees with the others is wrong.

Keep this module free of module-level `import myia` (see tests/conftest.py).
"""

import os

import numpy as np

H = 1e-5


def central(fn, x, args, h=H):
    return (fn(x + h, *args) - fn(x - h, *args)) / (2 * h)


def first_derivatives(fn, x, args, backend):
    """{transform name: d fn / dx at x} for a scalar-valued fn."""
    import myia

    zeros = tuple(_zero_tangent(a) for a in args)
    with default_backend(backend):
        views = {
            "grad": myia.compile(myia.grad(fn), backend)(x, *args),
            "jvp": myia.jvp(fn, (x, *args), (1.0, *zeros))[1],
            "jet": myia.jet(fn, order=1)(x, *args)[1],
        }
    plain = myia.compile(fn, backend)
    views["central differences"] = central(plain, x, args)
    return {k: float(v) for k, v in views.items()}


def second_derivatives(fn, x, args, backend):
    """{transform name: d² fn / dx² at x} for a scalar-valued fn."""
    import myia

    zeros = tuple(_zero_tangent(a) for a in args)
    with default_backend(backend):
        dfn = myia.grad(fn)
        views = {
            "grad(grad)": myia.compile(myia.grad(dfn), backend)(x, *args),
            "hessian": myia.hessian(fn)(x, *args),
            "jvp(grad)": myia.jvp(dfn, (x, *args), (1.0, *zeros))[1],
            "jet": myia.jet(fn, order=2)(x, *args)[2],
        }
    views["central differences of grad"] = central(myia.compile(dfn, backend), x, args)
    return {k: float(v) for k, v in views.items()}


def transform_views(fn, x, args, backend, h=H):
    """Every view of one program at one point, each transform built once:
    (value, {name: d fn/dx}, {name: d² fn/dx²}), with jet's first and second
    coefficients from one `jet(fn, order=2)`, and central differences of Myia's own
    compiled `grad` with step `h` (tests/ad/test_transforms_fuzz.py)."""
    import myia

    zeros = tuple(_zero_tangent(a) for a in args)
    tangents = (1.0, *zeros)
    primals = (x, *args)
    with default_backend(backend):
        value = myia.compile(fn, backend)(*primals)
        dfn = myia.grad(fn)
        compiled_grad = myia.compile(dfn, backend)
        value_jvp, tangent_jvp = myia.jvp(fn, primals, tangents)
        series = myia.jet(fn, order=2)(*primals)
        first = {"grad": compiled_grad(*primals), "jvp": tangent_jvp, "jet": series[1]}
        second = {
            "grad(grad)": myia.compile(myia.grad(dfn), backend)(*primals),
            "hessian": myia.hessian(fn)(*primals),
            "jvp(grad)": myia.jvp(dfn, primals, tangents)[1],
            "jet": series[2],
            "central differences of grad": central(compiled_grad, x, args, h),
        }
    values = {"compile": value, "jvp": value_jvp, "jet": series[0]}
    return ({k: float(v) for k, v in values.items()}, {k: float(v) for k, v in first.items()},
            {k: float(v) for k, v in second.items()})


def assert_agree(views, rtol=1e-5, atol=1e-6, reference=None):
    """All values of `views` equal to the first one (or to `reference`)."""
    name0, want = (next(iter(views.items())) if reference is None
                   else ("reference", reference))
    bad = {k: v for k, v in views.items()
           if not np.isclose(v, want, rtol=rtol, atol=atol, equal_nan=False)}
    assert not bad, f"disagree with {name0} = {want!r}: {bad} (all: {views})"


def _zero_tangent(a):
    if isinstance(a, np.ndarray):
        return np.zeros_like(a, dtype=a.dtype if a.dtype.kind == "f" else float)
    if isinstance(a, tuple):
        return tuple(_zero_tangent(e) for e in a)
    if isinstance(a, (bool, np.bool_)):
        return False
    return 0 if isinstance(a, (int, np.integer)) else 0.0 if isinstance(a, float) else a


class default_backend:
    """$MYIA_BACKEND set for the block (the transforms called from Python use it)."""

    def __init__(self, backend):
        self.backend = backend

    def __enter__(self):
        self.old = os.environ.get("MYIA_BACKEND")
        os.environ["MYIA_BACKEND"] = self.backend

    def __exit__(self, *exc):
        if self.old is None:
            del os.environ["MYIA_BACKEND"]
        else:
            os.environ["MYIA_BACKEND"] = self.old
