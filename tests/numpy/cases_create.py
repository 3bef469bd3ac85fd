"""Array creation (issue 18): cases for tests/numpy/test_create.py."""

import numpy as np

from .harness import collector

CASES, case = collector()
_rng = np.random.default_rng(2)


def rand(*shape):
    return _rng.standard_normal(shape)


# ---- cases


@case("zeros", rand(3), order=0)
def zeros_(x):
    return np.zeros((2, 3)) + np.zeros(3, dtype=np.float32) + np.zeros(x.shape[0])


@case("ones", rand(3), order=0)
def ones_(x):
    return np.ones((2, 3), dtype=int) * 2


@case("empty", rand(3), order=0)
def empty_(x):
    return np.empty((2, 3)) * 0.0 + x


@case("full", rand(3), order=0)
def full_(x):
    return np.full((2, 3), 7) + np.full(3, 0.5, dtype=np.float32)


@case("full", 1.5)
def full_of_a_value(v):
    return np.full((2, 3), v) * v


@case("zeros_like", rand(2, 3), order=0)
def zeros_like_(x):
    return np.zeros_like(x) + np.zeros_like(x, dtype=np.float32)


@case("ones_like", np.arange(6).reshape(2, 3), order=0)
def ones_like_(x):
    return np.ones_like(x)


@case("empty_like", rand(2, 3), order=0)
def empty_like_(x):
    return np.empty_like(x) * 0.0


@case("full_like", rand(2, 3))
def full_like_(x):
    return np.full_like(x, 2.5) * x


@case("eye", rand(3, 3))
def eye_(x):
    return np.eye(3) * x + np.eye(3, 3, 1) * 2.0


@case("eye", rand(2, 4), order=0)
def eye_rectangular(x):
    return np.eye(2, 4, k=-1, dtype=int) + np.eye(x.shape[0], x.shape[1])


@case("identity", rand(4, 4))
def identity_(x):
    return x @ np.identity(4)


@case("arange", rand(5))
def arange_(x):
    return x * np.arange(5)


@case("arange", rand(4), order=0)
def arange_forms(x):
    return np.arange(2, 6) + np.arange(0.0, 2.0, 0.5) + np.arange(10, 2, -2) + \
        np.arange(x.shape[0], dtype=np.float32)


@case("linspace", 0.5, 2.0)
def linspace_(a, b):
    return np.linspace(a, b, 7)


@case("linspace", -1.0, 3.0, autograd=False)  # autograd: no endpoint=
def linspace_no_endpoint(a, b):
    return np.linspace(a, b, 5, endpoint=False) + np.linspace(0, 1, 5)


@case("linspace", rand(3), rand(3), order=0)
def linspace_arrays(a, b):
    return np.linspace(a, b, 4)


@case("linspace", 0.0, 1.0, autograd=False)  # autograd: no retstep=
def linspace_retstep(a, b):
    y, step = np.linspace(a, b, 11, retstep=True)
    return y * step


@case("copy", rand(2, 3), autograd=False)  # autograd: no rule
def copy_(x):
    return np.copy(x) * 2.0


@case("asarray", rand(2, 3), autograd=False)  # autograd: no rule
def asarray_(x):
    return np.asarray(x) + np.asarray(x, dtype=np.float64)
