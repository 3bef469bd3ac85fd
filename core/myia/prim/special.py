"""digamma, the derivative of gammaln, and gammaln's rules.

gammaln (log |Gamma(x)|) is C's lgamma, a primitive of myia.prim.mathfn.  Its
derivative, digamma (psi), has no C function: it is written here in the subset over
primitives, so that gammaln's bprop and jvp call it, and its own derivatives (trigamma
and up: gammaln's second derivative and beyond) come from AD through it.  It lives
here, below the library (myia.lib.scipy_special maps scipy.special.digamma and psi to
it), because a rule of a primitive can only call what the primitives' layer defines;
and here rather than in mathfn because it needs `where`, `floor` and `rint`, whose
module (arith) imports mathfn.  gammaln's Taylor rule is `derivative_is(digamma)`: the jet
transform takes the jet of digamma's own code (see myia.ad.taylor).

digamma follows Cephes' psi (SciPy's): for x < 0.5 the reflection
psi(x) = psi(1 - x) - pi cot(pi x); then the recurrence psi(z) = psi(z + 10) -
sum_{k<10} 1 / (z + k), written out (a fixed shift, elementwise on arrays), and for
w = z + 10 >= 10 the asymptotic series ln w - 1/(2w) - sum_{k=1..7} B_2k / (2k w^2k),
accurate to about 1e-16 there and differentiable term by term.  At the poles (the
negative integers) it is nan, at 0 -inf and at -0.0 inf, as SciPy.
"""

import math

from .arith import floor, rint, where
from .mathfn import cos, gammaln, log, sin
from .primitive import bprop, compile_time, derivative_is, jet, jvp
from .shape import astype, dtype

PI = math.pi
NAN = math.nan


@compile_time
def _float_of(name):
    """The float dtype of digamma's result: float32 for float32, else float64."""
    return "float32" if name == "float32" else "float64"


def digamma(x):
    """psi(x) = d/dx ln Gamma(x), elementwise (numbers or arrays); computed in float64
    (a float32 one loses 7 units in the last place in the recurrence), as SciPy's."""
    return astype(_digamma64(astype(x, "float64")), _float_of(dtype(x)))


def _digamma64(x):
    neg = x < 0.5
    z = where(neg, 1.0 - x, x)  # >= 0.5 (or nan)
    w = z + 10.0
    r = 1.0 / (w * w)
    # B_2k / 2k for k = 1..7, by Horner's rule in 1 / w^2
    tail = r * (0.08333333333333333 + r * (-0.008333333333333333 + r * (
        0.003968253968253968 + r * (-0.004166666666666667 + r * (
            0.007575757575757576 + r * (-0.021092796092796094 + r * 0.08333333333333333))))))
    shift = (1.0 / z + 1.0 / (z + 1.0) + 1.0 / (z + 2.0) + 1.0 / (z + 3.0) + 1.0 / (z + 4.0)
             + 1.0 / (z + 5.0) + 1.0 / (z + 6.0) + 1.0 / (z + 7.0) + 1.0 / (z + 8.0)
             + 1.0 / (z + 9.0))
    psi = log(w) - 0.5 / w - tail - shift
    # the reflection, from x less its nearest integer (an exact reduction, cot's period
    # being pi; exact near 0 too); 0.25 where it is not used, so that no branch divides
    # by zero; -0.0 stays -0.0.  cos / sin, not 1 / tan: near a half-integer, where tan
    # is about 1e16, the derivatives of 1 / tan subtract terms of that size
    s = where(neg, x, 0.25)
    angle = PI * where(s == 0.0, s, s - rint(s))
    reflected = psi - PI * cos(angle) / sin(angle)
    pole = (x < 0.0) & (x == floor(x))
    return where(pole, NAN, where(neg, reflected, psi))


@bprop(gammaln)
def bprop_gammaln(x, out, dout):
    return (dout * digamma(x),)


@jvp(gammaln)
def jvp_gammaln(x, dx):
    return dx * digamma(x)


jet(gammaln)(derivative_is(digamma))
