"""Truncated power series on IR nodes: the arithmetic that Taylor rules (`@jet(p)`) use.

A series is a list `[x0, x1, ..., xK]` of Taylor coefficients, x_k = x^(k)(0) / k!, of
a value along a line.  Each coefficient is a `Term`: an IR node of the graph being
built, or `ZERO`, a coefficient that is zero by construction (the higher coefficients
of a constant, of an integer, of a comparison...).  Arithmetic on terms adds nodes to
the current graph and skips every product with ZERO at build time, so the series of
`3 * x` along x never computes the products of zeros that a plain polynomial
arithmetic would.

The recurrences below are the classical ones (Griewank and Walther, "Evaluating
Derivatives", ch. 13): each coefficient of exp, log, sin... costs O(k) products of
lower ones, so a rule of order K costs O(K^2) and no rule ever differentiates.
"""

import threading

from ..ir import Constant

_here = threading.local()  # the graph (and source location) new nodes go to


class building:
    """`with building(graph, loc):` terms made inside add their nodes to `graph`."""

    def __init__(self, graph, loc=None):
        self.graph, self.loc = graph, loc

    def __enter__(self):
        self.saved = getattr(_here, "at", None)
        _here.at = (self.graph, self.loc)
        return self

    def __exit__(self, *exc):
        _here.at = self.saved


class _Ops:
    """`P.add`...: the primitives, looked up when first used (they import this module)."""

    def __getattr__(self, name):
        # import here: the primitives' modules import this one
        from . import ops

        return getattr(ops, name)


P = _Ops()


def apply(prim, *inputs):
    """A node `prim(*inputs)` in the current graph (inputs: nodes or constant values)."""
    graph, loc = _here.at
    return graph.apply(prim, *inputs, loc=loc)


class Term:
    """One coefficient of a series: a node, with arithmetic that builds nodes."""

    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node

    def map(self, prim, *others):
        """`prim(self, *others)` (others: terms, nodes or constants)."""
        return Term(apply(prim, self.node, *(_node(o) for o in others)))

    def __add__(self, other):
        if other is ZERO or _is_number(other, 0):
            return self
        return Term(apply(P.add, self.node, _node(other)))

    def __radd__(self, other):
        if _is_number(other, 0):  # sum() starts from 0
            return self
        return Term(apply(P.add, _node(other), self.node))

    def __sub__(self, other):
        if other is ZERO or _is_number(other, 0):
            return self
        return Term(apply(P.sub, self.node, _node(other)))

    def __rsub__(self, other):
        if _is_number(other, 0):
            return -self
        return Term(apply(P.sub, _node(other), self.node))

    def __neg__(self):
        return Term(apply(P.neg, self.node))

    def __mul__(self, other):
        if other is ZERO or _is_number(other, 0):
            return ZERO  # a coefficient of the recurrence, exactly 0: no product at all
        if _is_number(other, 1):
            return self
        return Term(apply(P.mul, self.node, _node(other)))

    def __rmul__(self, other):
        if _is_number(other, 0):
            return ZERO
        if _is_number(other, 1):
            return self
        return Term(apply(P.mul, _node(other), self.node))

    def __truediv__(self, other):
        if _is_number(other, 1):
            return self
        return Term(apply(P.truediv, self.node, _node(other)))


class _Zero(Term):
    """The structural zero: it absorbs products and vanishes from sums."""

    def __init__(self):
        super().__init__(None)

    def map(self, prim, *others):
        raise AssertionError("a structural zero has no node to apply a primitive to")

    def __add__(self, other):
        if other is ZERO or _is_number(other, 0):
            return ZERO
        return other if isinstance(other, Term) else Term(Constant(_node(other)))

    __radd__ = __add__

    def __sub__(self, other):
        return -(self.__add__(other))

    def __rsub__(self, other):
        return self.__add__(other)  # other - 0

    def __neg__(self):
        return ZERO

    def __mul__(self, other):
        return ZERO

    __rmul__ = __mul__

    def __truediv__(self, other):
        return ZERO

    def __repr__(self):
        return "ZERO"


ZERO = _Zero()


def _is_number(x, value):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x == value


def _node(x):
    if isinstance(x, Term):
        if x is ZERO:
            raise AssertionError("a structural zero reached a node")
        return x.node
    return float(x) if isinstance(x, int) and not isinstance(x, bool) else x


def materialize(term, like):
    """The node of `term`; for ZERO, `zeros_like(like)` (a zero of the value's type:
    what crosses a call, a branch or a tuple)."""
    if term is ZERO:
        return apply(P.zeros_like, like.node)
    return term.node


def total(terms):
    """The sum of terms (ZERO when every one is)."""
    out = ZERO
    for t in terms:
        out = out + t
    return out


# ---- the recurrences -------------------------------------------------------------------


def like(term, out):
    """`term` broadcast to the shape of the value `out` (a term): a coefficient of an
    input of lower rank than the output of an operation that broadcasts (x + zeros(3):
    each element moves with x).  The optimizer drops it where the shapes agree."""
    if term is ZERO:
        return ZERO
    return Term(apply(P.broadcast_to, term.node, apply(P.shape, out.node)))


def elementwise(a, b, combine, out=None):
    """Coefficients k >= 1 of a linear map of two series, k by k; with `out` (the
    value), a coefficient met by a ZERO is broadcast to it, as the sum would be."""
    def one(x, y):
        c = combine(x, y)
        return like(c, out) if out is not None and (x is ZERO) != (y is ZERO) else c

    return [one(x, y) for x, y in zip(a[1:], b[1:])]


def cauchy(a, b, out=None, prim=None):
    """The series of a bilinear `prim(a, b)` (mul, dot): c_k = sum_j a_j b_{k-j}
    (`out`: the node of c_0 where it is made already)."""
    prim = prim or P.mul

    def product(x, y):
        if x is ZERO or y is ZERO:
            return ZERO
        return Term(apply(prim, x.node, y.node))

    first = out if out is not None else product(a[0], b[0])
    return [first] + [total(product(a[j], b[k - j]) for j in range(k + 1))
                      for k in range(1, len(a))]


def divide(a, b, out):
    """y = a / b: b_0 y_k = a_k - sum_{j=1..k} b_j y_{k-j}."""
    y = [out]
    for k in range(1, len(a)):
        rest = total(b[j] * y[k - j] for j in range(1, k + 1))
        y.append((a[k] - rest) / b[0])
    return y


def integrate(y0, dy):
    """The series of y from y(0) and the series of y' (one shorter): y_k = dy_{k-1} / k."""
    return [y0] + [d * (1.0 / k) for k, d in enumerate(dy, start=1)]


def derivative(x):
    """The series of x' (one shorter): (x')_k = (k + 1) x_{k+1}."""
    return [x[k + 1] * float(k + 1) for k in range(len(x) - 1)]


def exp(x, out):
    """y = exp(x): y' = x' y, so k y_k = sum_{j=1..k} j x_j y_{k-j}."""
    y = [out]
    for k in range(1, len(x)):
        y.append(total(x[j] * (j / k) * y[k - j] for j in range(1, k + 1)))
    return y


def log(x, out):
    """y = log(x): x y' = x', so x_0 y_k = x_k - sum_{j=1..k-1} (j/k) y_j x_{k-j}."""
    y = [out]
    for k in range(1, len(x)):
        rest = total(y[j] * (j / k) * x[k - j] for j in range(1, k))
        y.append((x[k] - rest) / x[0])
    return y


def sin_cos(x, s0, c0):
    """(sin x, cos x) together: s' = x' c and c' = -x' s."""
    s, c = [s0], [c0]
    for k in range(1, len(x)):
        s.append(total(x[j] * (j / k) * c[k - j] for j in range(1, k + 1)))
        c.append(-total(x[j] * (j / k) * s[k - j] for j in range(1, k + 1)))
    return s, c


def by_square(x, out, sign):
    """y with y' = (1 + sign * y^2) x' (tan: +1, tanh: -1)."""
    y = [out]
    z = []  # the series of 1 + sign * y^2, made as far as y is known
    for k in range(1, len(x)):
        m = k - 1
        sq = total(y[i] * y[m - i] for i in range(m + 1)) * float(sign)
        z.append(1.0 + sq if m == 0 else sq)
        y.append(total(x[j] * (j / k) * z[k - j] for j in range(1, k + 1)))
    return y


def sqrt(x, out):
    """y = sqrt(x): y^2 = x, so 2 y_0 y_k = x_k - sum_{j=1..k-1} y_j y_{k-j}."""
    y = [out]
    twice = out * 2.0
    for k in range(1, len(x)):
        rest = total(y[j] * y[k - j] for j in range(1, k))
        y.append((x[k] - rest) / twice)
    return y


def arctan(x, out):
    """y = arctan(x): y' = x' / (1 + x^2)."""
    one_plus_sq = [1.0 + x[0] * x[0]] + [
        total(x[i] * x[m - i] for i in range(m + 1)) for m in range(1, len(x) - 1)]
    dx = derivative(x)
    quotient = divide(dx, one_plus_sq, dx[0] / one_plus_sq[0]) if dx else []
    return integrate(out, quotient)


def power(x, r, out):
    """y = x ** r for a constant r: x y' = r x' y, so
    k x_0 y_k = sum_{i=1..k} (r i - (k - i)) x_i y_{k-i}."""
    y = [out]
    for k in range(1, len(x)):
        terms = (x[i] * y[k - i] * (r * float(i) - float(k - i)) if isinstance(r, Term)
                 else x[i] * y[k - i] * (r * i - (k - i)) for i in range(1, k + 1))
        y.append(total(terms) / (x[0] * float(k)))
    return y


def integer_power(x, n, out):
    """y = x ** n for a constant integer n >= 0, by squaring: exact where x_0 = 0 (the
    recurrence of `power` divides by x_0)."""
    result, base = None, x
    while n:
        if n & 1:
            result = base if result is None else cauchy(result, base)
        n >>= 1
        if n:
            base = cauchy(base, base)
    if result is None:  # x ** 0
        return [out] + [ZERO] * (len(x) - 1)
    return [out] + result[1:]
