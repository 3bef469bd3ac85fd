"""Elementwise functions of the C math library: exp, log, sin, arcsinh, arctan2...

Each is a primitive defined here with every rule about it: its implementation (NumPy's
ufunc), the C function that computes it on one number (`LIBM`: the LLVM backend calls
it, or libmvec's vector variant; CUDA's math library has the same names), its bprop,
its jvp and its Taylor rule.  A backend or an inference rule that handles "a libm
function" reads `LIBM`, so a new function here is one entry, not one per backend.

erf, erfc and gammaln (C's lgamma) are SciPy's functions (scipy.special), which NumPy
lacks: their implementation is SciPy's ufunc, imported when the VM first runs one
(myia.lib.scipy_special maps them); gammaln's rules are in myia.prim.special, next to
digamma, its derivative, which has no C function and is written in the subset there.

Semantics are NumPy's, np.sin's: an integer input gives a float64 result, a float32 one
a float32, a number a NumPy scalar (np.sin(1.0) is an np.float64; `math.sin` gives the
Python float, see myia.lib.builtins); a bool gives NumPy's float16, which compiled code
does not have: inference refuses it (convert first).  Outside the domain the result is
nan (arcsin(2.0)) or inf (log(0.0)), never an exception.
"""

import math

import numpy as np

from . import series as S
from .primitive import Primitive, bprop, jet, jvp
from .shape import unbroadcast

#: {primitive: (the C function's name, number of arguments)}
LIBM = {}


def _unary_impl(np_fn):
    def impl(x):
        with np.errstate(all="ignore"):
            return np_fn(x)  # (of a bool: a float16, which inference refuses)

    impl.__name__ = np_fn.__name__
    return impl


def _binary_impl(np_fn):
    def impl(x, y):
        with np.errstate(all="ignore"):
            return np_fn(x, y)

    impl.__name__ = np_fn.__name__
    return impl


def _scipy_special(name):
    """SciPy's ufunc `name` (scipy.special.erf...), imported when first called: importing
    scipy.special costs `import myia` 150-200 ms, and only programs that call one of
    these functions need it."""
    def fn(x):
        # import here: scipy.special takes 150-200 ms to import (see above)
        from scipy import special

        return getattr(special, name)(x)

    fn.__name__ = name
    return fn


def unary(name, np_fn, cname, doc):
    p = Primitive(name, _unary_impl(np_fn), doc, elementwise=1, foldable=True, libm=cname)
    LIBM[p] = (cname, 1)
    return p


def binary(name, np_fn, cname, doc):
    p = Primitive(name, _binary_impl(np_fn), doc, elementwise=2, foldable=True, libm=cname)
    LIBM[p] = (cname, 2)
    return p


exp = unary("exp", np.exp, "exp", "e ** x")
exp2 = unary("exp2", np.exp2, "exp2", "2 ** x")
expm1 = unary("expm1", np.expm1, "expm1", "e ** x - 1, exact for small x")
log = unary("log", np.log, "log", "natural logarithm")
log2 = unary("log2", np.log2, "log2", "base-2 logarithm")
log10 = unary("log10", np.log10, "log10", "base-10 logarithm")
log1p = unary("log1p", np.log1p, "log1p", "log(1 + x), exact for small x")
sqrt = unary("sqrt", np.sqrt, "sqrt", "square root")
sin = unary("sin", np.sin, "sin", "sine")
cos = unary("cos", np.cos, "cos", "cosine")
tan = unary("tan", np.tan, "tan", "tangent")
arcsin = unary("arcsin", np.arcsin, "asin", "inverse sine")
arccos = unary("arccos", np.arccos, "acos", "inverse cosine")
arctan = unary("arctan", np.arctan, "atan", "inverse tangent")
sinh = unary("sinh", np.sinh, "sinh", "hyperbolic sine")
cosh = unary("cosh", np.cosh, "cosh", "hyperbolic cosine")
tanh = unary("tanh", np.tanh, "tanh", "hyperbolic tangent")
arcsinh = unary("arcsinh", np.arcsinh, "asinh", "inverse hyperbolic sine")
arccosh = unary("arccosh", np.arccosh, "acosh", "inverse hyperbolic cosine")
arctanh = unary("arctanh", np.arctanh, "atanh", "inverse hyperbolic tangent")
arctan2 = binary("arctan2", np.arctan2, "atan2", "the angle of the point (x, y): arctan2(y, x)")
hypot = binary("hypot", np.hypot, "hypot", "sqrt(x ** 2 + y ** 2), without overflow")
erf = unary("erf", _scipy_special("erf"), "erf",
            "the error function, 2/sqrt(pi) ∫_0^x e^(-t^2) dt")
erfc = unary("erfc", _scipy_special("erfc"), "erfc", "1 - erf(x), exact where erf(x) is near 1")
gammaln = unary("gammaln", _scipy_special("gammaln"), "lgamma",
                "log |Gamma(x)|, C's lgamma (rules: myia.prim.special)")

LN2 = math.log(2.0)
LN10 = math.log(10.0)


# ---- Taylor-rule helpers: series of expressions of x ----------------------------------------


def _one_plus(sign, x):
    """The series of 1 + sign * x^2."""
    sq = S.cauchy(x, x)
    return [1.0 + sq[0] * float(sign)] + [t * float(sign) for t in sq[1:]]


def _by_derivative(out, x, denominator):
    """y with y' = x' / d, `d` the series of the denominator: y = ∫ x' / d."""
    dx = S.derivative(x)
    if not dx:
        return [out]
    return S.integrate(out, S.divide(dx, denominator, dx[0] / denominator[0]))


def _sqrt_series(u):
    return S.sqrt(u, u[0].map(sqrt))


# ---- exp and log -----------------------------------------------------------------------------


@bprop(exp)
def bprop_exp(x, out, dout):
    return (dout * out,)


@jvp(exp)
def jvp_exp(x, dx):
    return dx * exp(x)


@jet(exp)
def jet_exp(out, x):
    return S.exp(x, out)


@bprop(exp2)
def bprop_exp2(x, out, dout):
    return (dout * out * 0.6931471805599453,)


@jvp(exp2)
def jvp_exp2(x, dx):
    return dx * exp2(x) * 0.6931471805599453


@jet(exp2)
def jet_exp2(out, x):
    return S.exp([x[0]] + [t * LN2 for t in x[1:]], out)


@bprop(expm1)
def bprop_expm1(x, out, dout):
    return (dout * (out + 1.0),)


@jvp(expm1)
def jvp_expm1(x, dx):
    return dx * (expm1(x) + 1.0)


@jet(expm1)
def jet_expm1(out, x):
    # the coefficients past the first are those of e^x
    return [out] + S.exp(x, out + 1.0)[1:]


@bprop(log)
def bprop_log(x, out, dout):
    return (dout / x,)


@jvp(log)
def jvp_log(x, dx):
    return dx / x


@jet(log)
def jet_log(out, x):
    return S.log(x, out)


@bprop(log2)
def bprop_log2(x, out, dout):
    return (dout / (x * 0.6931471805599453),)


@jvp(log2)
def jvp_log2(x, dx):
    return dx / (x * 0.6931471805599453)


@jet(log2)
def jet_log2(out, x):
    return [out] + [t * (1.0 / LN2) for t in S.log(x, out)[1:]]


@bprop(log10)
def bprop_log10(x, out, dout):
    return (dout / (x * 2.302585092994046),)


@jvp(log10)
def jvp_log10(x, dx):
    return dx / (x * 2.302585092994046)


@jet(log10)
def jet_log10(out, x):
    return [out] + [t * (1.0 / LN10) for t in S.log(x, out)[1:]]


@bprop(log1p)
def bprop_log1p(x, out, dout):
    return (dout / (x + 1.0),)


@jvp(log1p)
def jvp_log1p(x, dx):
    return dx / (x + 1.0)


@jet(log1p)
def jet_log1p(out, x):
    return [out] + S.log([x[0] + 1.0] + x[1:], out)[1:]


@bprop(sqrt)
def bprop_sqrt(x, out, dout):
    return (dout / (2.0 * out),)


@jvp(sqrt)
def jvp_sqrt(x, dx):
    return dx / (2.0 * sqrt(x))


@jet(sqrt)
def jet_sqrt(out, x):
    return S.sqrt(x, out)


# ---- trigonometric ---------------------------------------------------------------------------


@bprop(sin)
def bprop_sin(x, out, dout):
    return (dout * cos(x),)


@jvp(sin)
def jvp_sin(x, dx):
    return dx * cos(x)


@jet(sin)
def jet_sin(out, x):
    return S.sin_cos(x, out, x[0].map(cos))[0]


@bprop(cos)
def bprop_cos(x, out, dout):
    return (-dout * sin(x),)


@jvp(cos)
def jvp_cos(x, dx):
    return -dx * sin(x)


@jet(cos)
def jet_cos(out, x):
    return S.sin_cos(x, x[0].map(sin), out)[1]


@bprop(tan)
def bprop_tan(x, out, dout):
    return (dout * (1.0 + out * out),)


@jvp(tan)
def jvp_tan(x, dx):
    return dx * (1.0 + tan(x) * tan(x))


@jet(tan)
def jet_tan(out, x):
    return S.by_square(x, out, +1)


@bprop(arcsin)
def bprop_arcsin(x, out, dout):
    return (dout / sqrt(1.0 - x * x),)


@jvp(arcsin)
def jvp_arcsin(x, dx):
    return dx / sqrt(1.0 - x * x)


@jet(arcsin)
def jet_arcsin(out, x):
    return _by_derivative(out, x, _sqrt_series(_one_plus(-1, x)))


@bprop(arccos)
def bprop_arccos(x, out, dout):
    return (-dout / sqrt(1.0 - x * x),)


@jvp(arccos)
def jvp_arccos(x, dx):
    return -dx / sqrt(1.0 - x * x)


@jet(arccos)
def jet_arccos(out, x):
    y = _by_derivative(out, [x[0]] + [-t for t in x[1:]], _sqrt_series(_one_plus(-1, x)))
    return y


@bprop(arctan)
def bprop_arctan(x, out, dout):
    return (dout / (1.0 + x * x),)


@jvp(arctan)
def jvp_arctan(x, dx):
    return dx / (1.0 + x * x)


@jet(arctan)
def jet_arctan(out, x):
    return S.arctan(x, out)


@bprop(arctan2)
def bprop_arctan2(y, x, out, dout):
    r2 = x * x + y * y
    return (unbroadcast(dout * x / r2, y), unbroadcast(-dout * y / r2, x))


@jvp(arctan2)
def jvp_arctan2(y, x, dy, dx):
    return (x * dy - y * dx) / (x * x + y * y)


@jet(arctan2)
def jet_arctan2(out, y, x):
    # θ' = (x y' - y x') / (x^2 + y^2)
    dy, dx = S.derivative(y), S.derivative(x)
    if not dx:
        return [out]
    num = [a - b for a, b in zip(S.cauchy(x[:-1], dy), S.cauchy(y[:-1], dx))]
    den = [a + b for a, b in zip(S.cauchy(x, x), S.cauchy(y, y))]
    return S.integrate(out, S.divide(num, den, num[0] / den[0]))


# ---- hyperbolic ------------------------------------------------------------------------------


def _sinh_cosh(x, s0, c0):
    """(sinh x, cosh x) together: s' = x' c and c' = x' s."""
    s, c = [s0], [c0]
    for k in range(1, len(x)):
        s.append(S.total(x[j] * (j / k) * c[k - j] for j in range(1, k + 1)))
        c.append(S.total(x[j] * (j / k) * s[k - j] for j in range(1, k + 1)))
    return s, c


@bprop(sinh)
def bprop_sinh(x, out, dout):
    return (dout * cosh(x),)


@jvp(sinh)
def jvp_sinh(x, dx):
    return dx * cosh(x)


@jet(sinh)
def jet_sinh(out, x):
    return _sinh_cosh(x, out, x[0].map(cosh))[0]


@bprop(cosh)
def bprop_cosh(x, out, dout):
    return (dout * sinh(x),)


@jvp(cosh)
def jvp_cosh(x, dx):
    return dx * sinh(x)


@jet(cosh)
def jet_cosh(out, x):
    return _sinh_cosh(x, x[0].map(sinh), out)[1]


@bprop(tanh)
def bprop_tanh(x, out, dout):
    return (dout * (1.0 - out * out),)


@jvp(tanh)
def jvp_tanh(x, dx):
    return dx * (1.0 - tanh(x) * tanh(x))


@jet(tanh)
def jet_tanh(out, x):
    return S.by_square(x, out, -1)


@bprop(arcsinh)
def bprop_arcsinh(x, out, dout):
    return (dout / sqrt(x * x + 1.0),)


@jvp(arcsinh)
def jvp_arcsinh(x, dx):
    return dx / sqrt(x * x + 1.0)


@jet(arcsinh)
def jet_arcsinh(out, x):
    return _by_derivative(out, x, _sqrt_series(_one_plus(+1, x)))


@bprop(arccosh)
def bprop_arccosh(x, out, dout):
    return (dout / sqrt(x * x - 1.0),)


@jvp(arccosh)
def jvp_arccosh(x, dx):
    return dx / sqrt(x * x - 1.0)


@jet(arccosh)
def jet_arccosh(out, x):
    sq = S.cauchy(x, x)
    return _by_derivative(out, x, _sqrt_series([sq[0] - 1.0] + sq[1:]))


@bprop(arctanh)
def bprop_arctanh(x, out, dout):
    return (dout / (1.0 - x * x),)


@jvp(arctanh)
def jvp_arctanh(x, dx):
    return dx / (1.0 - x * x)


@jet(arctanh)
def jet_arctanh(out, x):
    return _by_derivative(out, x, _one_plus(-1, x))


@bprop(hypot)
def bprop_hypot(x, y, out, dout):
    return (unbroadcast(dout * x / out, x), unbroadcast(dout * y / out, y))


@jvp(hypot)
def jvp_hypot(x, y, dx, dy):
    return (x * dx + y * dy) / hypot(x, y)


@jet(hypot)
def jet_hypot(out, x, y):
    return S.sqrt([a + b for a, b in zip(S.cauchy(x, x), S.cauchy(y, y))], out)


# ---- the error function ----------------------------------------------------------------------
#
# erf' = 2/sqrt(pi) e^(-x^2), erfc' = -erf'; the series of e^(-x^2) by exp's recurrence

TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _erf_series(out, x, sign):
    """y with y' = sign * 2/sqrt(pi) e^(-x^2) x'."""
    dx = S.derivative(x)
    if not dx:
        return [out]
    sq = S.cauchy(x[:-1], x[:-1])
    minus_sq = [-t for t in sq]
    gauss = S.exp(minus_sq, minus_sq[0].map(exp))
    scale = sign * TWO_OVER_SQRT_PI
    return S.integrate(out, [t * scale for t in S.cauchy(gauss, dx)])


@bprop(erf)
def bprop_erf(x, out, dout):
    return (dout * 1.1283791670955126 * exp(-(x * x)),)


@jvp(erf)
def jvp_erf(x, dx):
    return dx * 1.1283791670955126 * exp(-(x * x))


@jet(erf)
def jet_erf(out, x):
    return _erf_series(out, x, 1.0)


@bprop(erfc)
def bprop_erfc(x, out, dout):
    return (-dout * 1.1283791670955126 * exp(-(x * x)),)


@jvp(erfc)
def jvp_erfc(x, dx):
    return -dx * 1.1283791670955126 * exp(-(x * x))


@jet(erfc)
def jet_erfc(out, x):
    return _erf_series(out, x, -1.0)
