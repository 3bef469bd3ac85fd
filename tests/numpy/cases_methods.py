"""Methods and attributes of arrays (issue 18): cases for tests/numpy/test_methods.py."""

import numpy as np

from .harness import collector

CASES, case = collector()
_rng = np.random.default_rng(3)


def rand(*shape):
    return _rng.standard_normal(shape)


# ---- cases


@case("sum", rand(3, 4))
def sum_method(x):
    return x.sum() + x.sum(axis=0).sum() + x.sum(1, keepdims=True).sum()


@case("mean", rand(3, 4))
def mean_method(x):
    return x.mean(axis=1)


@case("max", rand(3, 4))
def max_method(x):
    return x.max(axis=0) + x.min(axis=0)


@case("reshape", rand(3, 4))
def reshape_method(x):
    return x.reshape(2, 6) + x.reshape((2, 6)) + x.reshape(-1, 6)


@case("transpose", rand(2, 3, 4), autograd=False)  # autograd: no x.transpose(2, 0, 1)
def transpose_method(x):
    return x.transpose(2, 0, 1) + x.transpose((2, 0, 1)) + x.T.transpose().transpose(2, 0, 1)


@case("T", rand(3, 4))
def t_attribute(x):
    return x.T * 2.0


@case("dot", rand(3, 4), rand(4), autograd=False)  # autograd's arrays lack .dot
def dot_method(x, y):
    return x.dot(y)


@case("astype", rand(3, 4), rtol=1e-6, fd=False)
def astype_method(x):
    return x.astype(np.float32) * 2.0 + x.astype(float).astype("float32")


@case("astype", rand(3, 4) * 5.0, order=0)
def astype_int(x):
    return x.astype(int) + x.astype(np.int64) * 2


@case("copy", rand(3, 4), autograd=False)
def copy_method(x):
    return x.copy() * 3.0


@case("clip", rand(3, 4), autograd=False)  # autograd's clip: no min=/max=
def clip_method(x):
    return x.clip(-0.5, 0.5) + x.clip(min=0.0) + x.clip(max=0.1)


@case("round", rand(3, 4) * 100.0, order=0)
def round_method(x):
    return x.round() + x.round(1)


@case("flatten", rand(3, 4))
def flatten_method(x):
    return x.flatten() * 2.0


@case("item", rand(1, 1), autograd=False)  # autograd's arrays lack .item
def item_method(x):
    return x.item() * 3.0


@case("shape", rand(3, 4), order=0)
def attributes(x):
    return np.zeros(x.shape) + x.ndim + x.size + np.ones(x.size, dtype=x.dtype).sum()


@case("dtype", rand(3, 4).astype(np.float32), order=0)
def dtype_attribute(x):
    return np.zeros(3, dtype=x.dtype)


@case("prod", rand(3, 4) * 0.5 + 1.0)
def prod_method(x):
    return x.prod(axis=0) + x.prod()


@case("std", rand(3, 4))
def std_var_methods(x):
    return x.std(axis=1) + x.var(axis=1, ddof=1)


@case("cumsum", rand(3, 4), autograd=False)  # autograd: no rule for cumprod
def cumulative_methods(x):
    return x.cumsum(axis=1) + x.cumprod(axis=0)


@case("argmax", rand(3, 4), order=0)
def arg_methods(x):
    return x.argmax(axis=0) + x.argmin(axis=0) + x.argmax()


@case("all", rand(3, 4), order=0)
def all_any_methods(x):
    return (x > -5.0).all(axis=0) & (x > 0.5).any(axis=0)


@case("trace", rand(4, 4), autograd=False)  # autograd: no x.trace()
def trace_diagonal_methods(x):
    return x.trace() + x.diagonal().sum() + x.trace(offset=1)


@case("ravel", rand(3, 4))
def ravel_squeeze_swapaxes(x):
    return x.ravel() + x.reshape(1, 12).squeeze() + x.swapaxes(0, 1).T.ravel()


@case("repeat", rand(3, 2))
def repeat_method(x):
    return x.repeat(2, axis=0)


@case("argsort", rand(5), order=0)
def argsort_method(x):
    return x.argsort()
