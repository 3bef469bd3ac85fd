"""SciPy's special functions (scipy.special): expit, logit, softmax, log_softmax,
logsumexp, xlogy, erf, erfc, gammaln, multigammaln, digamma (psi).

erf, erfc and gammaln are C functions (erf, erfc, lgamma): primitives of
myia.prim.mathfn, with their rules there.  digamma, gammaln's derivative, has no C
function: it is written in the subset in myia.prim.special, below the library, so that
gammaln's rules can call it (and its own derivatives come from AD through it).  The
others are written here over primitives, so their derivatives come for free, in the
numerically stable forms SciPy computes:

- expit(x) = 1 / (1 + e^-x) from e^-|x|, which never overflows (nor does its gradient);
- logit(p) = log(p / (1 - p)), and log1p(2p - 1) - log1p(1 - 2p) for p in [0.3, 0.65],
  as SciPy (the first loses digits near 1/2);
- logsumexp, softmax and log_softmax subtract the maximum before exponentiating
  (logsumexp and log_softmax take 0 for a maximum that is not finite, so that inf, -inf
  and nan give SciPy's inf, -inf and nan); log_softmax(x) = (x - m) - log(sum e^(x - m));
- xlogy(x, y) = x log y, 0 where x == 0 and y is not nan (xlogy(0, 0) is 0), its
  gradient in x there log y (JAX's);
- multigammaln(a, d) = d (d - 1) / 4 log pi + sum of gammaln(a - j / 2), j < d (d an
  int known at compile time); nan where SciPy raises (a <= (d - 1) / 2).

Semantics are SciPy's: integer and bool inputs give float64, float32 stays float32
(xlogy of a float32 and a float64, or of a float32 and a Python float, is float64, as
SciPy's ufunc); a number gives a NumPy scalar; `axis` is None, an int or a tuple of
ints; logsumexp takes `b` (weights, broadcast with `a`, negative ones included),
`keepdims` and `return_sign`.  Differences: logsumexp of an empty array is an error
(SciPy's is -inf), and logsumexp computes log(sum e^(a - max)) + max where SciPy (1.15
and later) separates the maximum's term out of the sum and takes log1p of the rest:
the two agree to a few units in the last place, except that a result within about
1e-16 of 0 is 0 here.
"""

import math

import numpy as np
from scipy import special

from ..errors import MyiaValueError
from ..prim import compile_time
from ..prim import ops as P
from ..prim.special import digamma as _digamma
from .np_reduce import _reduced_axes
from .np_shape import as_array

INF = math.inf


@compile_time
def _float_dtype(dtype):
    """The dtype SciPy computes in for an input of `dtype`: float64 for bools and ints."""
    return "float32" if dtype == "float32" else "float64"


@compile_time
def _common_float_dtype(dtype1, dtype2):
    """The dtype of SciPy's binary ufuncs (xlogy): float32 if both are, else float64."""
    return "float32" if dtype1 == dtype2 == "float32" else "float64"


@compile_time
def _promoted(dtype1, dtype2):
    return np.result_type(dtype1, dtype2).name


@compile_time
def _pick(flag):
    """1 if flag else 0: which of two functions (a pair) to call (an `if` that forward
    mode over reverse mode need not follow)."""
    return 1 if flag else 0


@compile_time
def _at_least_1d(shape):
    return shape if len(shape) else (1,)


@compile_time
def _broadcast_shape(shape1, shape2):
    return tuple(np.broadcast_shapes(shape1, shape2))


def _same(x):
    return x


def _values(x):
    """x as SciPy takes it: a number or an array as it is, a list as an array."""
    return (_same, as_array)[_pick(P.kind_of(x) is not None)](x)


def _floating(x):
    """x in the float dtype SciPy computes in (a Python number: a NumPy scalar)."""
    return P.astype(x, _float_dtype(P.dtype(x)))


def _finite_or_zero(m):
    """The maximum that is subtracted: 0 where it is inf, -inf or nan."""
    return P.where(P.abs(m) < INF, m, 0.0)


# ---- elementwise -----------------------------------------------------------------------


def expit(x):
    x = _floating(_values(x))
    positive = x >= 0.0
    e = P.exp(P.where(positive, -x, x))  # e^-|x| <= 1, with the slope -1 at 0 too
    return P.where(positive, 1.0 / (1.0 + e), e / (1.0 + e))


def logit(x):
    x = _floating(_values(x))
    middle = (x >= 0.3) & (x <= 0.65)
    s = 2.0 * (P.where(middle, x, 0.5) - 0.5)  # each branch at a harmless value
    far = P.where(middle, 0.25, x)             # where the other is taken
    return P.where(middle, P.log1p(s) - P.log1p(-s), P.log(far / (1.0 - far)))


def xlogy(x, y):
    x, y = _values(x), _values(y)
    dtype = _common_float_dtype(P.dtype(x), P.dtype(y))
    x, y = P.astype(x, dtype), P.astype(y, dtype)
    # where x is 0, x log y is 0 unless log y is -inf, inf or nan: those give 0 too (but
    # a nan y), and log is taken at 1 there so that no gradient is 0 * inf
    zero = (x == 0.0) & ((y <= 0.0) | (y == INF))
    return P.where(zero, 0.0, x * P.log(P.where(zero, 1.0, y)))


def digamma(x):
    return _digamma(_floating(_values(x)))


# ---- reductions ------------------------------------------------------------------------


def _float_array(x):
    """x as SciPy's asarray, in its float dtype: a number as a 0-d array."""
    x = _floating(_values(x))
    return P.reshape(x, P.shape(x))


def softmax(x, axis=None):
    x = _float_array(x)
    axes = _reduced_axes(P.ndim(x), axis)
    e = P.exp(x - P.reduce_max(x, axes, True))
    return e / P.reduce_sum(e, axes, True)


def log_softmax(x, axis=None):
    x = _float_array(x)
    axes = _reduced_axes(P.ndim(x), axis)
    shifted = x - _finite_or_zero(P.reduce_max(x, axes, True))
    return shifted - P.log(P.reduce_sum(P.exp(shifted), axes, True))


def _unweighted(a, b):
    return a, 1.0


def _weighted(a, b):
    # a and b broadcast together, in one float dtype; where b is 0 the term is 0 even
    # where a is inf or nan (SciPy's convention)
    b = _float_array(b)
    dtype = _promoted(P.dtype(a), P.dtype(b))
    shape = _broadcast_shape(P.shape(a), P.shape(b))
    a = P.broadcast_to(P.astype(a, dtype), shape)
    b = P.broadcast_to(P.astype(b, dtype), shape)
    return P.where(b == 0.0, -INF, a), b


def _log_of_sum(s, shift):
    return P.log(s) + shift  # (a negative sum: nan, as SciPy without return_sign)


def _log_of_sum_and_sign(s, shift):
    return P.log(P.abs(s)) + shift, P.sign(s)


def multigammaln(a, d):
    a = _floating(_values(a))
    out = _log_pi_term(d)
    for j in range(d):
        out = out + P.gammaln(a - 0.5 * j)
    return P.where(a > 0.5 * (d - 1), out, math.nan)


@compile_time
def _log_pi_term(d):
    """d (d - 1) / 4 log pi, for d an int >= 1 (SciPy's check)."""
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise MyiaValueError(f"multigammaln: d must be an int >= 1, got {d!r}")
    return d * (d - 1) * 0.25 * math.log(math.pi)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    a = _float_array(a)
    a = P.reshape(a, _at_least_1d(P.shape(a)))  # as SciPy: keepdims of a number is (1,)
    a, w = (_unweighted, _weighted)[_pick(b is not None)](a, b)
    axes = _reduced_axes(P.ndim(a), axis)
    shift = _finite_or_zero(P.reduce_max(a, axes, True))
    s = P.reduce_sum(w * P.exp(a - shift), axes, keepdims)
    return (_log_of_sum, _log_of_sum_and_sign)[_pick(return_sign)](
        s, P.reshape(shift, P.shape(s)))


NAMES = {
    special.expit: expit,
    special.logit: logit,
    special.xlogy: xlogy,
    special.softmax: softmax,
    special.log_softmax: log_softmax,
    special.logsumexp: logsumexp,
    special.erf: P.erf,
    special.erfc: P.erfc,
    special.gammaln: P.gammaln,
    special.multigammaln: multigammaln,
    special.digamma: digamma,
    special.psi: digamma,
}
