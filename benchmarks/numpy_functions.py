"""The NumPy surface on LLVM against NumPy's own call, on arrays of 10^5 elements (issue
18: "the array functions added to llvm run at least as fast as NumPy's own call").

Each row compiles `def f(x): return np.<function>(x, ...)` once and times a call of the
compiled function (entry, work and boxing of the result included) against the same
call of NumPy, in the same process, side by side.  Everything above `# ---- programs`
is machinery; below, subset code.
"""

import numpy as np

N = 100_000
SIDE = 316  # a 316 x 316 matrix: about 10^5 elements


def _inputs():
    rng = np.random.default_rng(0)
    return {
        "x": rng.standard_normal(N),
        "unit": rng.uniform(-0.9, 0.9, N),
        "pos": rng.uniform(0.5, 2.0, N),
        "big": rng.uniform(1.5, 4.0, N),
        "y": rng.standard_normal(N),
        "m": rng.standard_normal((SIDE, SIDE)),
    }


def bench_numpy_functions(t):
    """Each function's compiled call against NumPy's, and how many are at most 1.0x."""
    import myia
    from benchmarks.run import attempt, fmt, median_time

    name = f"NumPy functions on {N:,} elements (Myia llvm vs NumPy)"
    print(name)
    data = _inputs()
    ratios = {}
    for label, fn, ref, keys in PROGRAMS:
        args = tuple(data[k] for k in keys)
        base = attempt(t, name, f"{label}: NumPy", lambda: median_time(ref, *args))
        compiled = myia.compile(fn, backend="llvm")

        def mine(compiled=compiled, args=args, ref=ref):
            got, want = compiled(*args), ref(*args)
            if not np.allclose(got, want, rtol=1e-9, atol=1e-12, equal_nan=True):
                raise AssertionError("a different result from NumPy's")
            return median_time(compiled, *args)

        s = attempt(t, name, f"{label}: Myia", mine, base)
        if s is not None and base:
            ratios[label] = s / base
            print(f"  {label}: myia {fmt(s)}, numpy {fmt(base)} ({s / base:.2f}x)")
    slow = sorted((r, k) for k, r in ratios.items() if r > 1.0)
    t.target(f"NumPy functions on {N:,} elements: each at most 1.0x NumPy's own call",
             f"{len(ratios) - len(slow)} of {len(PROGRAMS)} met"
             + (("; slower: " + ", ".join(f"{k} {r:.2f}x" for r, k in slow[::-1]))
                if slow else ""),
             not slow and len(ratios) == len(PROGRAMS))


# ---- programs


def f_exp(x):
    return np.exp(x)


def f_exp2(x):
    return np.exp2(x)


def f_expm1(x):
    return np.expm1(x)


def f_log(x):
    return np.log(x)


def f_log2(x):
    return np.log2(x)


def f_log10(x):
    return np.log10(x)


def f_log1p(x):
    return np.log1p(x)


def f_sqrt(x):
    return np.sqrt(x)


def f_sin(x):
    return np.sin(x)


def f_cos(x):
    return np.cos(x)


def f_tan(x):
    return np.tan(x)


def f_arcsin(x):
    return np.arcsin(x)


def f_arccos(x):
    return np.arccos(x)


def f_arctan(x):
    return np.arctan(x)


def f_sinh(x):
    return np.sinh(x)


def f_cosh(x):
    return np.cosh(x)


def f_tanh(x):
    return np.tanh(x)


def f_arcsinh(x):
    return np.arcsinh(x)


def f_arccosh(x):
    return np.arccosh(x)


def f_arctanh(x):
    return np.arctanh(x)


def f_arctan2(x, y):
    return np.arctan2(x, y)


def f_hypot(x, y):
    return np.hypot(x, y)


def f_power(x, y):
    return x ** y


def f_logaddexp(x, y):
    return np.logaddexp(x, y)


def f_sinc(x):
    return np.sinc(x)


def f_square(x):
    return np.square(x)


def f_reciprocal(x):
    return np.reciprocal(x)


def f_clip(x):
    return np.clip(x, -0.5, 0.5)


def f_fmax(x, y):
    return np.fmax(x, y)


def f_round(x):
    return np.round(x, 2)


def f_floor(x):
    return np.floor(x)


def f_sum(x):
    return np.sum(x)


def f_mean(x):
    return np.mean(x)


def f_prod(x):
    return np.prod(x)


def f_std(x):
    return np.std(x)


def f_var(x):
    return np.var(x)


def f_max(x):
    return np.max(x)


def f_cumsum(x):
    return np.cumsum(x)


def f_cumprod(x):
    return np.cumprod(x)


def f_diff(x):
    return np.diff(x)


def f_sum_axis0(m):
    return np.sum(m, axis=0)


def f_concatenate(x, y):
    return np.concatenate((x, y))


def f_flip(x):
    return np.flip(x)


def f_roll(x):
    return np.roll(x, 7)


def f_tile(x):
    return np.tile(x, 2)


def f_repeat(x):
    return np.repeat(x, 2)


def f_pad(x):
    return np.pad(x, 3)


def f_sort(x):
    return np.sort(x)


def f_transpose(m):
    return np.transpose(m)


def f_triu(m):
    return np.triu(m)


def f_outer(x, y):
    return np.outer(x[:300], y[:300])


PROGRAMS = [
    # (label, subset function, NumPy's call, inputs)
    ("exp", f_exp, np.exp, ("x",)),
    ("exp2", f_exp2, np.exp2, ("x",)),
    ("expm1", f_expm1, np.expm1, ("x",)),
    ("log", f_log, np.log, ("pos",)),
    ("log2", f_log2, np.log2, ("pos",)),
    ("log10", f_log10, np.log10, ("pos",)),
    ("log1p", f_log1p, np.log1p, ("pos",)),
    ("sqrt", f_sqrt, np.sqrt, ("pos",)),
    ("sin", f_sin, np.sin, ("x",)),
    ("cos", f_cos, np.cos, ("x",)),
    ("tan", f_tan, np.tan, ("unit",)),
    ("arcsin", f_arcsin, np.arcsin, ("unit",)),
    ("arccos", f_arccos, np.arccos, ("unit",)),
    ("arctan", f_arctan, np.arctan, ("x",)),
    ("sinh", f_sinh, np.sinh, ("x",)),
    ("cosh", f_cosh, np.cosh, ("x",)),
    ("tanh", f_tanh, np.tanh, ("x",)),
    ("arcsinh", f_arcsinh, np.arcsinh, ("x",)),
    ("arccosh", f_arccosh, np.arccosh, ("big",)),
    ("arctanh", f_arctanh, np.arctanh, ("unit",)),
    ("arctan2", f_arctan2, np.arctan2, ("x", "y")),
    ("hypot", f_hypot, np.hypot, ("x", "y")),
    ("power", f_power, np.power, ("pos", "y")),
    ("logaddexp", f_logaddexp, np.logaddexp, ("x", "y")),
    ("sinc", f_sinc, np.sinc, ("x",)),
    ("square", f_square, np.square, ("x",)),
    ("reciprocal", f_reciprocal, np.reciprocal, ("pos",)),
    ("clip", f_clip, lambda x: np.clip(x, -0.5, 0.5), ("x",)),
    ("fmax", f_fmax, np.fmax, ("x", "y")),
    ("round", f_round, lambda x: np.round(x, 2), ("x",)),
    ("floor", f_floor, np.floor, ("x",)),
    ("sum", f_sum, np.sum, ("x",)),
    ("mean", f_mean, np.mean, ("x",)),
    ("prod", f_prod, np.prod, ("pos",)),
    ("std", f_std, np.std, ("x",)),
    ("var", f_var, np.var, ("x",)),
    ("max", f_max, np.max, ("x",)),
    ("cumsum", f_cumsum, np.cumsum, ("x",)),
    ("cumprod", f_cumprod, np.cumprod, ("pos",)),
    ("diff", f_diff, np.diff, ("x",)),
    ("sum axis 0", f_sum_axis0, lambda m: np.sum(m, axis=0), ("m",)),
    ("concatenate", f_concatenate, lambda x, y: np.concatenate((x, y)), ("x", "y")),
    ("flip (a view, as NumPy's)", f_flip, np.flip, ("x",)),
    ("roll", f_roll, lambda x: np.roll(x, 7), ("x",)),
    ("tile", f_tile, lambda x: np.tile(x, 2), ("x",)),
    ("repeat", f_repeat, lambda x: np.repeat(x, 2), ("x",)),
    ("pad", f_pad, lambda x: np.pad(x, 3), ("x",)),
    ("sort", f_sort, np.sort, ("x",)),
    ("transpose (a view, as NumPy's)", f_transpose, np.transpose, ("m",)),
    ("triu", f_triu, np.triu, ("m",)),
    ("outer", f_outer, lambda x, y: np.outer(x[:300], y[:300]), ("x", "y")),
]
