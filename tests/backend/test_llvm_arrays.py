"""Arrays on the LLVM backend, against NumPy: fused elementwise loops with
broadcasting, reductions, views, BLAS products, creation, and their gradients."""

import numpy as np
import pytest

import myia
from tests.compare import assert_same


def llvm(fn):
    return myia.compile(fn, backend="llvm")


RNG = np.random.default_rng(1234)


def rand(*shape):
    return RNG.standard_normal(shape)


# ---- elementwise -------------------------------------------------------------------


def expr(x, y):
    return np.tanh(x * y + 1.0) - np.exp(-x * x) / (1.0 + y * y) + np.maximum(x, y) * 0.5


@pytest.mark.parametrize("sx,sy", [
    ((7,), (7,)), ((3, 5), (5,)), ((3, 1), (1, 4)), ((2, 3, 4), (3, 1)), ((4, 6), ()),
    ((1,), (9,)), ((2, 1, 5), (2, 3, 1)), ((0, 3), (3,)), ((33,), (33,)),
])
def test_fused_elementwise_broadcasting(sx, sy):
    x, y = rand(*sx), rand(*sy) if sy else 0.7
    assert_same(llvm(expr)(x, y), expr(x, y), rtol=1e-13)


def test_strided_operands():
    x = rand(6, 8)
    for a, b in ((x[::2], x[1::2]), (x.T, x.T[::-1]), (x[:, ::3], x[:, 1::3][:, :3])):
        assert_same(llvm(expr)(a, b), expr(a, b), rtol=1e-13)


def compare_and_select(x, y):
    return np.where(x > y, x - y, y * 2.0), x <= y, np.abs(x) + np.sign(y)


def test_comparisons_where_and_bool_results():
    x, y = rand(5, 3), rand(3)
    got = llvm(compare_and_select)(x, y)
    assert got[1].dtype == np.bool_
    assert_same(got, compare_and_select(x, y))


def scale32(x, a):
    return np.exp(x) * a + 1.0


def test_float32_stays_float32():
    x = rand(17).astype(np.float32)
    got = llvm(scale32)(x, np.float32(2.0))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, scale32(x, np.float32(2.0)), rtol=1e-6)


def int_ops(a, b):
    return a * b + a // 3 - b % 4


def test_int_arrays():
    a = np.arange(-6, 6, dtype=np.int64)
    b = np.arange(12, dtype=np.int64)
    assert_same(llvm(int_ops)(a, b), int_ops(a, b))


def nan_max(x, y):
    return np.maximum(x, y)


def test_maximum_propagates_nan_like_numpy():
    x = np.array([1.0, np.nan, 3.0, -1.0])
    y = np.array([np.nan, 2.0, 1.0, 0.0])
    np.testing.assert_array_equal(llvm(nan_max)(x, y), np.maximum(x, y))


# ---- reductions -----------------------------------------------------------------------


def reductions(x):
    return (np.sum(x, axis=0), np.sum(x, axis=-1), np.max(x, axis=1), np.mean(x, axis=0),
            np.sum(x), np.max(x), np.sum(x * x, axis=1, keepdims=True))


@pytest.mark.parametrize("shape", [(3, 4), (1, 9), (8, 1), (5, 33)])
def test_reductions(shape):
    x = rand(*shape)
    assert_same(llvm(reductions)(x), reductions(x), rtol=1e-12)


def reduce3(x):
    return np.sum(x, axis=(0, 2)), np.max(x, axis=2), np.sum(np.exp(x), axis=1)


def test_reductions_3d():
    x = rand(2, 3, 4)
    assert_same(llvm(reduce3)(x), reduce3(x), rtol=1e-12)


# ---- products ---------------------------------------------------------------------------


def dot(a, b):
    return np.dot(a, b)


@pytest.mark.parametrize("sa,sb", [
    ((3, 4), (4, 5)), ((3, 4), (4,)), ((4,), (4, 5)), ((6,), (6,)), ((1, 1), (1, 1)),
    ((64, 784), (784, 256)), ((3, 0), (0, 2)),
])
def test_dot_shapes(sa, sb):
    a, b = rand(*sa), rand(*sb)
    assert_same(llvm(dot)(a, b), np.dot(a, b), rtol=1e-12, atol=1e-12)


def test_dot_of_transposed_and_strided_operands():
    a, b = rand(5, 3), rand(4, 5)
    f = llvm(dot)
    assert_same(f(a.T, b.T), a.T @ b.T, rtol=1e-12)
    assert_same(f(a[::2].T, b[:, ::2].T), a[::2].T @ b[:, ::2].T, rtol=1e-12)
    v = rand(10)
    assert_same(f(a.T, v[::2]), a.T @ v[::2], rtol=1e-12)
    assert_same(f(v[1::2], a), v[1::2] @ a, rtol=1e-12)


def test_dot_float32_and_int64():
    a, b = rand(3, 4).astype(np.float32), rand(4, 2).astype(np.float32)
    got = llvm(dot)(a, b)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, a @ b, rtol=1e-5)
    i, j = np.arange(6).reshape(2, 3), np.arange(12).reshape(3, 4)
    assert_same(llvm(dot)(i, j), i @ j)


def test_dot_shape_mismatch():
    with pytest.raises(myia.MyiaShapeError):
        llvm(dot)(rand(3, 4), rand(5, 2))


# ---- views, indexing, creation ------------------------------------------------------------


def views(x):
    y = x.reshape((3, 4))
    return y.T, y[1], y[:, 1:3], y[::-1, ::2], x.reshape((12,))[2:9:3], y[2, 3]


def test_views():
    x = rand(2, 6)
    assert_same(llvm(views)(x), views(x))
    assert_same(llvm(views)(x.T.copy().T), views(x.T.copy().T))  # not C-contiguous: copied


def creation(x):
    return np.zeros((2, 3)) + x, np.ones((3,)) * 2.0, np.full((2, 2), 0.5)


def test_creation():
    assert_same(llvm(creation)(1.5), creation(1.5))


def zero_d_constants(x):
    # np.full((), 2.0) and np.array(3.0) fold into 0-d array constants
    two = np.full((), 2.0)
    return two * x, (np.array(3.0), two)


def test_zero_d_array_constants():
    # a 0-d constant was laid out as a 1-d array (np.ascontiguousarray makes it 1-d):
    # the tuple holding it did not compile
    assert_same(llvm(zero_d_constants)(1.5), myia.compile(zero_d_constants, backend="vm")(1.5))
    assert_same(llvm(zero_d_constants)(1.5), zero_d_constants(1.5))


# ---- gradients -------------------------------------------------------------------------------


def mlp_loss(W1, b1, W2, b2, X, Y):
    H = np.tanh(X @ W1 + b1)
    out = H @ W2 + b2
    return np.sum((out - Y) ** 2) / X.shape[0]


def numpy_mlp_grad(W1, b1, W2, b2, X, Y):
    H = np.tanh(X @ W1 + b1)
    D = H @ W2 + b2 - Y
    dout = 2.0 * D / X.shape[0]
    dH = dout @ W2.T * (1.0 - H * H)
    return (np.sum(D * D) / X.shape[0],
            (X.T @ dH, dH.sum(axis=0), H.T @ dout, dout.sum(axis=0)))


def test_mlp_value_and_grad_matches_a_hand_written_gradient():
    args = (rand(20, 16) * 0.3, rand(16) * 0.1, rand(16, 3) * 0.3, rand(3) * 0.1,
            rand(8, 20), rand(8, 3))
    vg = llvm(myia.value_and_grad(mlp_loss, argnums=(0, 1, 2, 3)))
    assert_same(vg(*args), numpy_mlp_grad(*args), rtol=1e-10, atol=1e-12)


# ---- summation accuracy --------------------------------------------------------------------


def total(x):
    return np.sum(x)


def average(x):
    return np.mean(x)


def row_totals(x):
    return np.sum(x, axis=1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_long_sums_are_as_accurate_as_numpy(dtype):
    """Sequential float32 sums of 10^7 values of 0.1 were off by 1% (1010791.88): sums
    are pairwise now, as NumPy's, whose error grows with log(n)."""
    x = np.full(10 ** 7, 0.1, dtype=dtype)
    for fn, exact in ((total, 1e6), (average, 0.1)):
        got, want = llvm(fn)(x), fn(x)
        assert np.asarray(got).dtype == np.asarray(want).dtype
        assert abs(float(got) - exact) <= 2 * abs(float(want) - exact) + 4 * np.finfo(dtype).eps * exact


@pytest.mark.parametrize("shape", [(7,), (1001,), (12293,), (13, 37), (3, 5000), (5000, 3)])
def test_sums_of_every_length_and_layout(shape):
    """Lengths around the blocks of the pairwise sum, strided and transposed operands:
    the sum of float64 values agrees with math.fsum to a few ulps."""
    import math

    x = rand(*shape)
    for fn, views in ((total, [x, x.T]), (row_totals, [x, x.T] if x.ndim == 2 else [])):
        for v in views:
            got = np.atleast_1d(llvm(fn)(v))
            exact = ([math.fsum(v.ravel())] if fn is total
                     else [math.fsum(row) for row in np.atleast_2d(v)])
            np.testing.assert_allclose(got, exact, rtol=1e-13, atol=1e-13)
    if x.ndim == 1:
        np.testing.assert_allclose(llvm(total)(x[::3]), math.fsum(x[::3]), rtol=1e-13)
