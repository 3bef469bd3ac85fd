"""Gradient programs in the style other AD projects test with (autograd's test_numpy,
test_list, test_dict, test_tuple, test_scalar_ops; JAX's numpy tests): the way users
write NumPy, closures over module-level data, methods, indexing, containers.  Written
here, not copied; each is checked on both backends against NumPy (values) and autograd
(gradients) by tests/thirdparty/test_programs.py.
"""

import operator

import numpy as np

from ..numpy.harness import collector

CASES, case = collector()
_rng = np.random.default_rng(10)


def randn(*shape):
    return _rng.standard_normal(shape)


ITEM0 = operator.itemgetter(0)
A = randn(5, 6, 4)
B = randn(5, 6, 4)
M = randn(4, 4)
V = randn(4)

# ---- cases


@case("index ints", randn(5, 6, 4))
def index_ints(x):
    return x[3, 0, 1]


@case("index slices", randn(5, 6, 4))
def index_slices(x):
    return x[::-1, 2:4, :]


@case("index list", randn(5, 6, 4))
def index_list(x):
    return x[[0, 1, 2], :, :]


@case("index mixed", randn(5, 6, 4))
def index_mixed(x):
    return x[3, 2:, [1, 3]]


@case("slice fanout", randn(5, 6, 4))
def slice_fanout(x):
    y = x[::-1, 2:4, :]
    z = x[::-1, 3:5, :]
    return y + z


@case("slices of slices", randn(7))
def slices_of_slices(x):
    y = x[2:6]
    return y[1:3]


@case("negative index", randn(6))
def negative_index(x):
    return x[-1] * x[-2] + x[:-1].sum()


@case("newaxis", randn(3), randn(4))
def newaxis(x, y):
    return x[:, None] * y[np.newaxis, :]


@case("reshape method", randn(5, 6, 4))
def reshape_method(x):
    return x.reshape((5 * 4, 6)) + x.reshape(5 * 4, 6)


@case("ravel and flatten", randn(5, 6, 4))
def ravel_flatten(x):
    return x.ravel() + np.ravel(x) + x.flatten()


@case("concatenate with a closure's data", randn(5, 6, 4))
def concatenate_closure(x):
    return np.concatenate((B, x, B), axis=1)


@case("concatenate a list", randn(4, 6, 4))
def concatenate_list(x):
    return np.concatenate([A, x])


@case("trace", randn(4, 5))
def trace_offset(x):
    return np.trace(x, offset=1) + np.trace(x)


@case("diag", randn(4, 4))
def diag_(x):
    return np.diag(x) + np.diag(np.diag(x)).sum(axis=0)


@case("roll", randn(4, 5))
def roll_(x):
    return np.roll(x, 2, axis=1)


@case("triu tril", randn(5, 5))
def triu_tril(x):
    return np.triu(x, k=2) + np.tril(x, k=-1)


@case("clip keywords", randn(5, 5))
def clip_keywords(x):
    return np.clip(x, a_min=0.1, a_max=1.1)


@case("prod", randn(2, 3) ** 2 + 0.1)
def prod_axes(x):
    return np.prod(x) + np.prod(x, axis=0).sum() + np.prod(x, axis=0, keepdims=True).sum()


@case("array of scalars", 3.0)
def array_of_scalars(x):
    return np.array([x, x * 1.0, x + 2.5])


@case("2-d array of scalars", 3.0)
def array_2d(x):
    return np.array([[x, x * 1.0, x + 2.5], [x ** 2, x, x / 2.0]])


@case("array of arrays", randn(3, 2))
def array_of_arrays(x):
    return np.array([[2 * x, x + 1], [x, x]])


@case("array fanout", 3.0)
def array_fanout(x):
    a = np.array([x, x * 1.0, x + 2.5])
    return a + a


@case("var and std with ddof", randn(3, 4))
def var_std_ddof(x):
    return np.var(x, ddof=1) + np.std(x, axis=0, ddof=1).sum()


@case("where", randn(5, 5))
def where_(x):
    return np.where(x > 0, x ** 2, -x)


@case("squeeze", randn(5, 1, 4))
def squeeze_(x):
    return np.squeeze(x) + x.squeeze(axis=1)


@case("repeat", randn(3, 2))
def repeat_(x):
    return np.repeat(x, 2, axis=1)


@case("expand_dims", randn(5, 4))
def expand_dims_(x):
    return np.expand_dims(x, 1) * 2.0


@case("tensordot", randn(3, 4, 5), randn(4, 3, 2))
def tensordot_(x, y):
    return np.tensordot(x, y, ([0, 1], [1, 0]))


@case("matmul of stacks", randn(2, 3, 4), randn(2, 4, 5))
def matmul_3d(x, y):
    return x @ y


@case("dot with a float", randn(4, 3), 2.5)
def dot_float(x, s):
    return np.dot(x, s) + np.dot(s, x)


@case("outer", randn(5), randn(4))
def outer_(x, y):
    return np.outer(x, y)


@case("einsum", randn(3, 4), randn(4, 5))
def einsum_(x, y):
    return np.einsum("ij,jk->ik", x, y) + np.einsum("ij->j", x)[0]


@case("cumsum", randn(3, 4))
def cumsum_(x):
    return np.cumsum(x, axis=0) + np.cumsum(x, axis=1) + np.cumsum(x).reshape(3, 4)


@case("flips", randn(4, 5))
def flips(x):
    return np.flipud(x) + np.fliplr(x) + np.rot90(np.rot90(x))


@case("nan_to_num", randn(4))
def nan_to_num_(x):
    return np.nan_to_num(x / 0.5)


@case("max with ties", np.array([1.0, 3.0, 3.0, 2.0]))
def max_ties(x):
    return np.max(x) + np.min(x)


@case("maximum with ties", np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 4.0]))
def maximum_ties(x, y):
    return np.maximum(x, y)


@case("linspace", 1.0, 3.0)
def linspace_(a, b):
    return np.linspace(a, b, 5)


@case("astype", randn(3, 3))
def astype_float(x):
    return x.astype(float) * 2.0


@case("gradient", randn(6))
def gradient_(x):
    return np.gradient(x)


@case("scalar shape and attributes", np.float64(3.0))
def scalar_attributes(x):
    assert x.shape == ()
    assert x.ndim == 0
    assert x.size == 1
    return x ** 2


@case("len", randn(3, 2))
def len_(x):
    assert len(x) == 3
    return x * len(x)


@case("defaults from the enclosing scope", randn(3), 2.0)
def default_from_scope(x, y, num=3):
    return x * y * num


@case("list getter", randn(5, 6))
def list_of_arrays(x):
    items = [x, x * 2.0, np.sin(x)]
    return np.sum(items[0]) + np.sum(items[1]) * np.sum(items[2])


@case("list comprehension", randn(4))
def list_comprehension(x):
    squares = [x ** k for k in range(1, 4)]
    return sum(squares)


@case("dict of arrays", randn(3), randn(3))
def dict_of_arrays(w, b):
    params = {"w": w, "b": b}
    total = 0.0
    for k, v in params.items():
        total = total + np.sum(v ** 2)
    return total * params["w"]


@case("for over rows", randn(4, 3))
def rows(x):
    out = 0.0
    for row in x:
        out = out + np.sum(row * row)
    return out * np.ones(2)


@case("zip and enumerate", randn(3), randn(3))
def zip_enumerate(x, y):
    total = 0.0
    for i, (a, b) in enumerate(zip(x, y)):
        total = total + a * b * (i + 1.0)
    return total


@case("stack and vstack", randn(3), randn(3))
def stacks(x, y):
    return np.stack([x, y]) + np.vstack((x, y)) + np.column_stack((x, y)).T


@case("split", randn(6, 2))
def split_(x):
    a, b, c = np.split(x, 3)
    return a * b + c


@case("sort", randn(6))
def sort_(x):
    return np.sort(x) * np.arange(6)


@case("tile and pad", randn(3), autograd=False)  # autograd's pad_vjp fails
def tile_pad(x):
    return np.tile(x, 2) + np.pad(x, (1, 2))[:6]


@case("kron and cross", randn(3), randn(3))
def kron_cross(x, y):
    return np.kron(x, y)[:3] + np.cross(x, y)


@case("moveaxis and swapaxes", randn(2, 3, 4), autograd=False)  # autograd: no .transpose(1, 0, 2)
def moveaxis_swapaxes(x):
    return np.moveaxis(x, 0, -1) + np.swapaxes(x, 0, 2).transpose(1, 0, 2)


@case("atleast", randn(3))
def atleast(x):
    return np.atleast_2d(x) + np.atleast_3d(x)[0].T


@case("logsumexp by hand", randn(5))
def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


@case("softmax", randn(3, 4))
def softmax(x):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return e / np.sum(e, axis=1, keepdims=True)


@case("mlp layer", randn(4, 3), randn(5, 4), randn(4))
def mlp_layer(W, X, b):
    return np.tanh(X @ W + b[:3])


@case("hypot and arctan2", randn(4), randn(4))
def polar(x, y):
    return np.hypot(x, y) * np.arctan2(y, x)


@case("all the elementwise", np.abs(randn(4)) + 0.5)
def elementwise_mix(x):
    return (np.sqrt(x) + np.log1p(x) + np.expm1(x * 0.1) + np.arcsinh(x) + np.cosh(x)
            + np.log10(x) + np.log2(x) + np.exp2(x) + np.sinc(x) + np.deg2rad(x)
            + np.reciprocal(x) + np.square(x) + np.fabs(-x) + np.logaddexp(x, 1.0))


@case("mean of a list of arrays", randn(3), randn(3))
def mean_of_list(x, y):
    return np.mean([x, y], axis=0) + np.std([x, y], axis=0)


@case("append", randn(3))
def append_(x):
    return np.append(x, 4.0) + np.append([1.0], x)


@case("r_ and c_", randn(3, 2))
def r_c(x):
    return np.r_[x, x].sum() + np.c_[x, x].sum() * np.ones(2)


@case("sorted dict", {"item_2": randn(3), "item_1": randn(2), "item_X": randn(2, 2)},
      order=1, autograd=False)
def sorted_dict(input_dict):
    A = 0.0
    B = 0.0
    for i, k in enumerate(sorted(input_dict)):
        A = A + np.sum(np.sin(input_dict[k])) * (i + 1.0)
        B = B + np.sum(np.cos(input_dict[k]))
    return A + B


@case("items by key", {"b": randn(3), "a": randn(2)}, order=1, autograd=False)
def items_by_key(d):
    total = 0.0
    for i, (k, v) in enumerate(sorted(d.items(), key=ITEM0)):
        total = total + np.sum(np.sin(v)) * (i + 1.0)
    for v in d.values():
        total = total + np.sum(v)
    return total


@case("isinstance", randn(3), [2.0, 3.0], autograd=False)  # autograd: ArrayBox
def isinstance_checks(x, lst):
    assert isinstance(lst, list) and isinstance(x, np.ndarray) and not isinstance(x, float)
    assert isinstance(lst[0], (float, int)) and not isinstance(lst, (tuple, dict))
    return x * lst[0] + lst[1]


@case("dict get", 2.0)
def dict_get(x):
    d = {"a": x * 3.0}
    return d.get("a", x) ** 2 + d.get("b", x)
