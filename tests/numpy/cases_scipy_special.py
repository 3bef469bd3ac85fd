"""scipy.special's functions: cases for tests/numpy/test_scipy_special.py.

Everything above `# ---- cases` is machinery; below, subset code written with
`special.` (scipy.special) and `np.`, re-executed with autograd.numpy and
autograd.scipy.special (completed in the test module where autograd lacks a function)
for the reference gradients.
"""

import numpy as np
from scipy import special

from .harness import collector

CASES, case = collector()
_rng = np.random.default_rng(0)


def rand(*shape):
    return _rng.standard_normal(shape)


def prob(*shape):
    """In (0.02, 0.98): both of logit's formulas (its middle is [0.3, 0.65])."""
    return _rng.uniform(0.02, 0.98, shape)


def pos(*shape):
    """In [0.5, 4.0)."""
    return _rng.uniform(0.5, 4.0, shape)


F32 = dict(rtol=1e-6, order=0)

# ---- cases


@case("expit", rand(3, 4) * 4.0)
def expit_(x):
    return special.expit(x)


@case("expit", np.array([-800.0, -40.0, -0.0, 0.0, 40.0, 800.0]))
def expit_extremes(x):
    return special.expit(x)


@case("expit", 0.3)
def expit_of_a_number(x):
    return special.expit(x)


@case("expit", np.array([-2, 0, 3]), order=0)
def expit_of_ints(x):
    return special.expit(x)


@case("expit", rand(5).astype(np.float32), **F32)
def expit_float32(x):
    return special.expit(x)


@case("logit", prob(3, 4))
def logit_(x):
    return special.logit(x)


@case("logit", np.array([0.0, 0.1, 0.3, 0.5, 0.65, 0.9, 1.0, 1.5]), order=0)
def logit_edges(x):
    return special.logit(x)


@case("logit", prob(5).astype(np.float32), **F32)
def logit_float32(x):
    return special.logit(x)


@case("softmax", rand(3, 4))
def softmax_(x):
    return special.softmax(x)


@case("softmax", rand(3, 4) * 3.0)
def softmax_axis(x):
    return special.softmax(x, axis=1)


@case("softmax", rand(2, 3, 4))
def softmax_axes(x):
    return special.softmax(x, axis=(0, -1))


@case("softmax", 2.0, order=0)
def softmax_of_a_number(x):
    return special.softmax(x)


@case("softmax", rand(6).astype(np.float32), **F32)
def softmax_float32(x):
    return special.softmax(x)


@case("log_softmax", rand(3, 4))
def log_softmax_(x):
    return special.log_softmax(x, axis=0)


@case("log_softmax", np.array([1000.0, 1.0, -5.0]))
def log_softmax_saturated(x):
    return special.log_softmax(x)


@case("log_softmax", np.array([np.inf, 1.0]), order=0)
def log_softmax_of_inf(x):
    return special.log_softmax(x)


@case("logsumexp", rand(3, 4))
def logsumexp_(x):
    return special.logsumexp(x)


@case("logsumexp", rand(3, 4))
def logsumexp_axis(x):
    return special.logsumexp(x, axis=1)


@case("logsumexp", rand(3, 4))
def logsumexp_keepdims(x):
    return special.logsumexp(x, axis=0, keepdims=True)


@case("logsumexp", rand(2, 3, 4))
def logsumexp_axes(x):
    return special.logsumexp(x, axis=(0, 2))


@case("logsumexp", 1000.0 + rand(5))
def logsumexp_large(x):
    return special.logsumexp(x)


@case("logsumexp", -1000.0 + rand(5))
def logsumexp_very_negative(x):
    return special.logsumexp(x)


@case("logsumexp", rand(3, 4), pos(4), argnums=(0,))
def logsumexp_weighted(x, b):
    return special.logsumexp(x, axis=1, b=b)


@case("logsumexp", rand(3, 4), pos(3, 1), autograd=False)
def logsumexp_weights_gradient(x, b):
    return special.logsumexp(x, b=b, axis=0)


@case("logsumexp", np.array([[1.0, 2.0, 3.0], [np.inf, 1.0, 2.0]]), np.array([0.0, -1.0, 2.0]),
      order=0)
def logsumexp_negative_and_zero_weights(x, b):
    return special.logsumexp(x, axis=1, b=b)


@case("logsumexp", np.array([1.0, 2.0, 0.5]), np.array([1.0, -1.0, 1.0]), order=0)
def logsumexp_sign(x, b):
    return special.logsumexp(x, b=b, return_sign=True)


@case("logsumexp", np.array([[-np.inf, -np.inf], [np.inf, 1.0], [np.nan, 1.0],
                             [1e308, 1e308]]), order=0)
def logsumexp_of_infinities(x):
    return special.logsumexp(x, axis=-1)


@case("logsumexp", np.array([1, 2, 3]), order=0)
def logsumexp_of_ints(x):
    return special.logsumexp(x)


@case("logsumexp", 3.0, order=0)
def logsumexp_of_a_number(x):
    return special.logsumexp(x, keepdims=True)


@case("logsumexp", rand(3, 4).astype(np.float32), **F32)
def logsumexp_float32(x):
    return special.logsumexp(x, axis=1)


@case("erf", rand(3, 4) * 2.0)
def erf_(x):
    return special.erf(x)


@case("erf", np.array([-30.0, -3.0, 0.0, 1e-10, 6.0]))
def erf_extremes(x):
    return special.erf(x)


@case("erf", rand(5).astype(np.float32), **F32)
def erf_float32(x):
    return special.erf(x)


@case("erfc", rand(3, 4) * 2.0)
def erfc_(x):
    return special.erfc(x)


@case("erfc", np.array([5.0, 10.0, 26.0]), rtol=1e-12)
def erfc_tail(x):
    return special.erfc(x)


@case("gammaln", pos(3, 4))
def gammaln_(x):
    return special.gammaln(x)


@case("gammaln", np.array([0.5, 1.0, 2.0, 10.0, 1e3]))
def gammaln_points(x):
    return special.gammaln(x)


@case("gammaln", np.array([-2.5, -1.7, -0.3]))
def gammaln_negative(x):
    return special.gammaln(x)


@case("gammaln", np.array([0.0, -1.0, 1e300]), order=0)
def gammaln_poles(x):
    return special.gammaln(x)


@case("multigammaln", pos(3, 4) + 1.5)
def multigammaln_(x):
    return special.multigammaln(x, 4)  # (a > 1.5: SciPy's condition for d = 4)


@case("multigammaln", 2.75)
def multigammaln_number(x):
    return special.multigammaln(x, 3) * x


@case("gammaln", pos(5).astype(np.float32), **F32)
def gammaln_float32(x):
    return special.gammaln(x)


@case("gammaln", np.array([1, 2, 5]), order=0)
def gammaln_of_ints(x):
    return special.gammaln(x)


@case("digamma", pos(3, 4))
def digamma_(x):
    return special.digamma(x)


@case("digamma", np.array([-2.5, -1.3, -0.4, 1e-3, 0.2, 7.0, 1e3]))
def digamma_wide(x):
    return special.digamma(x)


@case("psi", pos(4))
def psi_(x):
    return special.psi(x)


@case("digamma", np.array([0.0, -0.0, -1.0, -3.0, np.inf, 1e8, 1e17]), order=0)
def digamma_poles(x):
    return special.digamma(x)


@case("digamma", pos(5).astype(np.float32), **F32)
def digamma_float32(x):
    return special.digamma(x)


@case("xlogy", np.array([0.0, 1.5, -2.0, 0.0, 3.0]), pos(5))
def xlogy_(x, y):
    return special.xlogy(x, y)


@case("xlogy", rand(3, 1), pos(4))
def xlogy_broadcast(x, y):
    return special.xlogy(x, y)


@case("xlogy", np.array([0.0, 0.0, 0.0, 0.0, 2.0, 2.0]),
      np.array([0.0, np.nan, -1.0, np.inf, 0.0, -1.0]), order=0)
def xlogy_at_zero(x, y):
    return special.xlogy(x, y)


@case("xlogy", 0, 0, order=0)
def xlogy_of_ints(x, y):
    return special.xlogy(x, y)


@case("xlogy", pos(4).astype(np.float32), pos(4).astype(np.float32), **F32)
def xlogy_float32(x, y):
    return special.xlogy(x, y)


@case("xlogy", pos(4).astype(np.float32), 3.0, **F32)
def xlogy_float32_and_a_number(x, y):
    return special.xlogy(x, y)
