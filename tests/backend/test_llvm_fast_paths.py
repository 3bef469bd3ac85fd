"""The LLVM backend's fast paths for NumPy functions, against NumPy, on contiguous and
strided inputs of every dtype they take:

- a lone C math function of a C-contiguous array, or x ** y of such arrays, calls
  NumPy's own loop where it is the faster (myia.backend.llvm.npyloops): NumPy's
  results, bit for bit;
- a sort, take_along_axis(x, argsort(x)), is one call of NumPy's sort per lane;
- a gather at constant positions (tile, repeat, pad...) copies blocks
  (myia.backend.llvm.gathers): the gather's results, bit for bit;
- a float max keeps eight vectors of partial maxima (nan still wins).
"""

import numpy as np
import pytest

import myia
from myia.backend.llvm import gathers, npyloops

from ..helpers import llvm_ir

RNG = np.random.default_rng(20261202)


def llvm(fn):
    return myia.compile(fn, backend="llvm")


def vm(fn):
    return myia.compile(fn, backend="vm")


def same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    return got.dtype == want.dtype and got.shape == want.shape and \
        got.tobytes() == np.ascontiguousarray(want).tobytes()


def layouts(a):
    """a, and views of the same values that are not C-contiguous."""
    out = {"contiguous": a}
    if a.ndim >= 1 and a.shape[-1] > 1:
        wide = np.repeat(a, 2, axis=-1)
        out["strided"] = wide[..., ::2]
        out["reversed"] = a[..., ::-1].copy()[..., ::-1]
    if a.ndim == 2:
        out["transposed"] = np.ascontiguousarray(a.T).T
    return out


# ---- NumPy's own loops ---------------------------------------------------------------------


UNARY = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
         "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
         "arctanh"]
DOMAIN = {"log": (0.1, 3.0), "log2": (0.1, 3.0), "log10": (0.1, 3.0), "log1p": (0.1, 3.0),
          "arcsin": (-0.9, 0.9), "arccos": (-0.9, 0.9), "arctanh": (-0.9, 0.9),
          "tan": (-1.0, 1.0), "arccosh": (1.1, 4.0)}


def _unary(name):
    fn = {
        "exp": lambda x: np.exp(x), "exp2": lambda x: np.exp2(x),
        "expm1": lambda x: np.expm1(x), "log": lambda x: np.log(x),
        "log2": lambda x: np.log2(x), "log10": lambda x: np.log10(x),
        "log1p": lambda x: np.log1p(x), "sin": lambda x: np.sin(x),
        "cos": lambda x: np.cos(x), "tan": lambda x: np.tan(x),
        "arcsin": lambda x: np.arcsin(x), "arccos": lambda x: np.arccos(x),
        "arctan": lambda x: np.arctan(x), "sinh": lambda x: np.sinh(x),
        "cosh": lambda x: np.cosh(x), "tanh": lambda x: np.tanh(x),
        "arcsinh": lambda x: np.arcsinh(x), "arccosh": lambda x: np.arccosh(x),
        "arctanh": lambda x: np.arctanh(x)}[name]
    return fn


def one_function(name):
    f = _unary(name)

    def g(x):
        return f(x)
    return g


def inputs(name, shape, dtype):
    lo, hi = DOMAIN.get(name, (-2.0, 2.0))
    return RNG.uniform(lo, hi, shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", UNARY)
def test_a_lone_math_function_matches_numpy_on_every_layout(name, dtype):
    # (a 0-d array gives a number, computed by libm as any number is)
    fn = one_function(name)
    ref = getattr(np, name)
    numpy_loop = npyloops.loop_symbol(name, dtype) is not None
    tol = 1e-14 if dtype == "float64" else 2e-6
    for shape in [(1000,), (33, 17), (7,), ()]:
        x = inputs(name, shape, dtype)
        for layout, a in layouts(x).items():
            want = ref(a)
            assert same_bits(vm(fn)(a), want)
            got = llvm(fn)(a)
            assert np.asarray(got).dtype == want.dtype
            if numpy_loop and a.ndim > 0 and a.flags.c_contiguous:
                assert same_bits(got, want), (shape, layout)  # NumPy's own loop
            else:
                np.testing.assert_allclose(got, want, rtol=tol, err_msg=f"{shape} {layout}")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_numpy_loops_are_called_where_numpy_says_they_are_the_faster(dtype):
    x = inputs("arcsinh", (64,), dtype)
    text = llvm_ir(one_function("arcsinh"), x)
    symbol = npyloops.loop_symbol("arcsinh", dtype)
    if symbol is None:  # no AVX-512 loop in this NumPy, on this machine: ours
        assert "myia_npyloop" not in text
    else:
        assert f"@{symbol}(" in text
    # sin: libmvec's is faster than NumPy's (glibc's vector sin; NumPy's is accurate
    # and slow): never NumPy's
    assert npyloops.loop_symbol("sin", dtype) is None
    assert "myia_npyloop" not in llvm_ir(one_function("sin"), x)


def fused(x):
    return np.arcsinh(x) * 2.0 + 1.0


def of_ints(x):
    return np.exp(x)


def test_fused_and_converting_expressions_keep_our_loops():
    x = inputs("arcsinh", (50,), "float64")
    assert "myia_npyloop" not in llvm_ir(fused, x)
    np.testing.assert_allclose(llvm(fused)(x), np.arcsinh(x) * 2.0 + 1.0, rtol=1e-14,
                               atol=1e-15)
    k = np.arange(-5, 6)
    assert "myia_npyloop" not in llvm_ir(of_ints, k)
    np.testing.assert_allclose(llvm(of_ints)(k), np.exp(k), rtol=1e-14)


def power(x, y):
    return x ** y


def power_of_2_5(x):
    return x ** 2.5


def two_to_the(y):
    return 2 ** y


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_power_matches_numpy_on_every_layout(dtype):
    # x ** y of two arrays of one shape, contiguous, calls NumPy's loop where NumPy's
    # is the faster (its results, bit for bit); other layouts and broadcasts run our
    # loops (libmvec's pow: within an ulp or two)
    numpy_loop = npyloops.loop_symbol("power", dtype, 2) is not None
    tol = 1e-14 if dtype == "float64" else 2e-6
    for shape in [(1000,), (33, 17)]:
        x = RNG.uniform(0.5, 2.0, shape).astype(dtype)
        y = RNG.uniform(-3.0, 3.0, shape).astype(dtype)
        for (lx, a), (ly, b) in zip(layouts(x).items(), layouts(y).items()):
            want = a ** b
            assert same_bits(vm(power)(a, b), want)
            got = llvm(power)(a, b)
            assert got.dtype == want.dtype
            if numpy_loop and a.flags.c_contiguous and b.flags.c_contiguous:
                assert same_bits(got, want), (shape, lx, ly)
            else:
                np.testing.assert_allclose(got, want, rtol=tol, err_msg=f"{shape} {lx} {ly}")
    x = RNG.uniform(0.5, 2.0, (33, 17)).astype(dtype)
    row = RNG.uniform(-3.0, 3.0, (17,)).astype(dtype)
    np.testing.assert_allclose(llvm(power)(x, row), x ** row, rtol=tol)  # a broadcast
    with pytest.raises(myia.MyiaShapeError, match="broadcast"):
        llvm(power)(x, row[:5])
    # a Python number is converted to the array's dtype, as NumPy does
    for fn in (power_of_2_5, two_to_the):
        want = fn(x)
        got = llvm(fn)(x)
        assert got.dtype == want.dtype == np.dtype(dtype)
        if numpy_loop:
            assert same_bits(got, want)
        np.testing.assert_allclose(got, want, rtol=tol)


def test_float32_expressions_with_python_numbers_keep_eight_lanes():
    # a scalar does not widen a float32 loop to float64's four lanes: our loop of
    # x ** 2.5 calls libmvec's 8-lane powf, not powf once per element (a matrix:
    # where NumPy's loop takes a contiguous one, ours still runs on rows of a slice)
    from myia.backend.llvm import runtime

    x = RNG.uniform(0.5, 2.0, (8, 16)).astype("float32")
    text = llvm_ir(power_of_2_5, x)
    if ("pow", "float32") in runtime.MVEC:
        assert "_ZGVdN8vv_powf" in text
    np.testing.assert_allclose(llvm(power_of_2_5)(x), x ** 2.5, rtol=2e-6)


def mixed_math(m, x, k):
    return np.where(m > 0.0, np.exp(x) * 2.0, k * 3) + np.arctan2(x, m) ** 2


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_math_on_strided_operands_of_every_dtype(dtype):
    # where no operand walks its memory with a unit stride (a transpose, a step), a
    # loop that calls libmvec still runs 4 (8) elements at a time, their lanes loaded
    # one by one: results as on contiguous operands, within libmvec's ulps
    tol = 1e-13 if dtype == "float64" else 2e-6
    for shape in [(33, 17), (7, 3), (2, 1)]:
        m = RNG.uniform(-1.0, 1.0, shape).astype(dtype)
        x = RNG.uniform(-2.0, 2.0, shape).astype(dtype)
        k = RNG.integers(-5, 5, shape)
        for (lm, a), (lx, c), (lk, e) in zip(layouts(m).items(), layouts(x).items(),
                                            layouts(k).items()):
            want = mixed_math(a, c, e)
            got = llvm(mixed_math)(a, c, e)
            assert got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol,
                                       err_msg=f"{shape} {lm} {lx} {lk}")


def tanh_loss(x):
    return np.sum(np.tanh(x) * np.tanh(x))


def test_gradients_through_numpy_loops_are_unchanged():
    x = inputs("tanh", (40,), "float64")
    want = vm(myia.grad(tanh_loss))(x)
    np.testing.assert_allclose(llvm(myia.grad(tanh_loss))(x), want, rtol=1e-13)
    np.testing.assert_allclose(want, 2 * np.tanh(x) * (1 - np.tanh(x) ** 2), rtol=1e-13)
    # and through x ** y, with respect to both
    x, y = RNG.uniform(0.5, 2.0, 40), RNG.uniform(-2.0, 2.0, 40)
    gx, gy = llvm(myia.grad(power_loss, argnums=(0, 1)))(x, y)
    np.testing.assert_allclose(gx, y * x ** (y - 1), rtol=1e-13)
    np.testing.assert_allclose(gy, x ** y * np.log(x), rtol=1e-13)


def power_loss(x, y):
    return np.sum(x ** y)


# ---- sorts ----------------------------------------------------------------------------------


def sort_last(x):
    return np.sort(x)


def sort_first(x):
    return np.sort(x, axis=0)


def sort_flat(x):
    return np.sort(x, axis=None)


def awkward(shape, dtype):
    """Values with repeats, nan, infinities and both zeros (floats)."""
    if dtype == "bool":
        return RNG.random(shape) < 0.5
    if dtype == "int64":
        return RNG.integers(-5, 5, shape)
    x = RNG.standard_normal(shape).round(1).astype(dtype)
    flat = x.reshape(-1)
    for k, v in enumerate([np.nan, 0.0, -0.0, np.inf, -np.inf, 0.0, -0.0, np.nan]):
        flat[(k * 7) % flat.size] = v
    return x


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool"])
@pytest.mark.parametrize("fn,ref", [(sort_last, lambda x: np.sort(x)),
                                    (sort_first, lambda x: np.sort(x, axis=0)),
                                    (sort_flat, lambda x: np.sort(x, axis=None))])
def test_sort_is_numpys_sort_bit_for_bit(fn, ref, dtype):
    for shape in [(300,), (9, 40), (40, 9), (3, 5, 7)]:
        if fn is sort_first and len(shape) == 1:
            continue
        for layout, a in layouts(awkward(shape, dtype)).items():
            want = ref(a)
            got = llvm(fn)(a)
            assert same_bits(got, want), (shape, layout)
            # the VM sorts stably: the same values (-0.0 and 0.0 may change places)
            np.testing.assert_array_equal(vm(fn)(a), want)


def test_a_sort_calls_numpys_sort_once_per_lane():
    x = awkward((6, 50), "float64")
    text = llvm_ir(sort_last, x)
    assert "@myia_npysort_float64(" in text and "myia_argsort" not in text


def sorted_weighted(x, w):
    return np.sum(np.sort(x) * w)


def argsort_and_sort(x):
    i = np.argsort(x)
    return i, np.take_along_axis(x, i, -1)


def test_sort_gradients_and_shared_argsorts_are_unchanged():
    x = RNG.standard_normal(50)
    w = np.arange(50.0)
    want = vm(myia.grad(sorted_weighted))(x, w)
    np.testing.assert_array_equal(llvm(myia.grad(sorted_weighted))(x, w), want)
    np.testing.assert_array_equal(want, w[np.argsort(np.argsort(x))])
    i, s = llvm(argsort_and_sort)(x)  # the argsort has another user: computed
    np.testing.assert_array_equal(i, np.argsort(x, kind="stable"))
    np.testing.assert_array_equal(s, np.sort(x))


# ---- gathers at constant positions ------------------------------------------------------------


def tile2(x):
    return np.tile(x, 2)


def tile23(x):
    return np.tile(x, (2, 3))


def repeat2(x):
    return np.repeat(x, 2)


def repeat5_axis0(x):
    return np.repeat(x, 5, axis=0)


def repeat3_axis1(x):
    return np.repeat(x, 3, axis=1)


def repeat40(x):
    return np.repeat(x, 40)


def repeat_counts(x):
    return np.repeat(x, [1, 0, 3, 2, 1, 4, 2], axis=0)


def pad3(x):
    return np.pad(x, 3)


def pad_values(x):
    return np.pad(x, ((1, 2), (3, 4)), constant_values=((1, 2), (3, 4)))


def pad_value(x, c):
    return np.pad(x, 2, constant_values=c)


def pad_edge(x):
    return np.pad(x, (2, 5), mode="edge")


def pad_reflect(x):
    return np.pad(x, 3, mode="reflect")


def pad_wrap(x):
    return np.pad(x, 2, mode="wrap")


def listed(x):
    return x[[0, 2, 2, 1, 0, 4]]


def one_listed(x):
    return x[[2]]


GATHERS = [
    (tile2, lambda x: np.tile(x, 2), [(1000,), (7, 9)]),
    (tile23, lambda x: np.tile(x, (2, 3)), [(50,), (7, 9), (2, 3, 4)]),
    (repeat2, lambda x: np.repeat(x, 2), [(1000,), (7, 9)]),
    (repeat5_axis0, lambda x: np.repeat(x, 5, axis=0), [(7, 9)]),
    (repeat3_axis1, lambda x: np.repeat(x, 3, axis=1), [(7, 9), (2, 5, 3)]),
    (repeat40, lambda x: np.repeat(x, 40), [(37,)]),
    (repeat_counts, lambda x: np.repeat(x, [1, 0, 3, 2, 1, 4, 2], axis=0), [(7, 3)]),
    (pad3, lambda x: np.pad(x, 3), [(1000,), (7, 9), (2, 3, 4)]),
    (pad_values, lambda x: np.pad(x, ((1, 2), (3, 4)), constant_values=((1, 2), (3, 4))),
     [(70, 90)]),
    (pad_edge, lambda x: np.pad(x, (2, 5), mode="edge"), [(1000,), (7, 9)]),
    (pad_reflect, lambda x: np.pad(x, 3, mode="reflect"), [(1000,), (7, 9)]),
    (pad_wrap, lambda x: np.pad(x, 2, mode="wrap"), [(100,), (7, 9)]),
    (listed, lambda x: x[[0, 2, 2, 1, 0, 4]], [(6,), (6, 4)]),
    (one_listed, lambda x: x[[2]], [(6,), (6, 4)]),
]


def values(shape, dtype):
    if dtype == "bool":
        return RNG.random(shape) < 0.5
    if dtype == "int64":
        return RNG.integers(-100, 100, shape)
    return RNG.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool"])
@pytest.mark.parametrize("fn,ref,shapes", GATHERS, ids=[g[0].__name__ for g in GATHERS])
def test_gathers_at_constant_positions_match_numpy(fn, ref, shapes, dtype):
    for shape in shapes:
        for layout, a in layouts(values(shape, dtype)).items():
            want = ref(a)
            assert same_bits(llvm(fn)(a), want), (shape, layout)
            assert same_bits(vm(fn)(a), want), (shape, layout)


def test_a_run_time_pad_constant():
    x = RNG.standard_normal((5, 6))
    for c in (0.0, -2.5, np.nan):
        assert same_bits(llvm(pad_value)(x, c), np.pad(x, 2, constant_values=c))


def padded_weighted(x, w):
    return np.sum(np.pad(x, 3) * w)


def repeated_weighted(x, w):
    return np.sum(np.repeat(x, 3) * w)


def test_gather_gradients_are_unchanged():
    x = RNG.standard_normal(20)
    for fn, n in ((padded_weighted, 26), (repeated_weighted, 60)):
        w = RNG.standard_normal(n)
        want = vm(myia.grad(fn))(x, w)
        assert same_bits(llvm(myia.grad(fn))(x, w), want)


def test_gather_plans():
    pos = np.arange(10)
    p = gathers.plan(np.tile(pos, 3), [10])
    assert isinstance(p, gathers.Affine) and (p.dims, p.strides) == ((3, 10), (0, 1))
    p = gathers.plan(np.repeat(pos, 4), [10])
    assert isinstance(p, gathers.Affine) and (p.dims, p.strides) == ((10, 4), (1, 0))
    p = gathers.plan(np.tile(np.arange(12).reshape(3, 4), (2, 3)).ravel(), [12])
    assert isinstance(p, gathers.Affine) and (p.dims, p.strides) == ((2, 3, 3, 4), (0, 4, 0, 1))
    # a constant pad: the constants (positions 1000 and 1001, a second part), the array
    p = gathers.plan(np.concatenate(([1000] * 3, np.arange(1000), [1001] * 3)), [1000, 2])
    assert isinstance(p, gathers.Runs)
    assert p.table.tolist() == [[0, 1, 0, 3, 0], [3, 0, 0, 1000, 1], [1003, 1, 1, 3, 0]]
    # positions in no order: a gather
    assert gathers.plan(RNG.permutation(1000), [1000]) is None


def test_plans_rebuild_the_positions():
    for _ in range(200):
        n = int(RNG.integers(1, 30))
        kind = RNG.integers(0, 4)
        if kind == 0:
            pos = np.tile(np.arange(n), int(RNG.integers(1, 4)))
        elif kind == 1:
            pos = np.repeat(np.arange(n), int(RNG.integers(1, 5)))
        elif kind == 2:
            pos = np.pad(np.arange(n), int(RNG.integers(0, 5)),
                         mode=str(RNG.choice(["edge", "reflect", "symmetric", "wrap"])))
        else:
            pos = RNG.integers(0, n, int(RNG.integers(1, 50)))
        p = gathers.plan(pos, [n])
        if isinstance(p, gathers.Affine):
            got = np.full(p.dims, p.base)
            for axis, s in enumerate(p.strides):
                got = got + s * np.indices(p.dims)[axis]
        elif isinstance(p, gathers.Runs):
            got = np.empty(len(pos), int)
            for dst, _, start, length, step in p.table:
                got[dst:dst + length] = start + step * np.arange(length)
        else:
            continue
        np.testing.assert_array_equal(got.reshape(-1), pos)


def test_a_planned_pad_reads_the_parts_of_its_concatenation():
    x = RNG.standard_normal(1000)
    text = llvm_ir(pad3, x)
    assert "_runs" in text and "memcpy" in text


def test_planned_gathers_do_not_make_their_positions():
    # a constant array is data the program keeps (`myia_data_<digest>`): a tile or a
    # repeat needs none, the gather of positions in no order needs them
    x = RNG.standard_normal(1000)
    assert "myia_data_" not in llvm_ir(tile2, x)
    assert "myia_data_" not in llvm_ir(repeat2, x)
    assert "myia_data_" in llvm_ir(listed, x)


# ---- max ---------------------------------------------------------------------------------------


def flat_max(x):
    return np.max(x)


def row_max(x):
    return np.max(x, axis=1)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_max_of_every_length_propagates_nan(dtype):
    for n in (1, 3, 31, 32, 33, 100, 1001):
        x = RNG.standard_normal(n).astype(dtype)
        assert llvm(flat_max)(x) == np.max(x)
        x[-1] = np.inf
        assert llvm(flat_max)(x) == np.inf
        x[n // 2] = np.nan
        assert np.isnan(llvm(flat_max)(x))
        x[n // 2] = 0.0
        x[-1] = np.nan  # in the remainder, after the vectors
        assert np.isnan(llvm(flat_max)(x))
        m = np.full((3, n), -np.inf, dtype)
        m[1, n // 3] = np.nan
        got = llvm(row_max)(m)
        assert np.isnan(got[1]) and got[0] == -np.inf and got[2] == -np.inf
