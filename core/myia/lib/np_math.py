"""NumPy's elementwise functions (its ufuncs and their relatives).

The C math library's functions are primitives (myia.prim.mathfn); the others are
written here over primitives, so their derivatives come from the primitives' rules.
"""

import numpy as np

from ..prim import ops as P
from ..prim.mathfn import LIBM


def np_where(condition, x, y):
    return P.where(condition, x, y)


def np_square(x):
    return x * x


def np_clip(a, a_min, a_max):
    return P.minimum(P.maximum(a, a_min), a_max)


NAMES = {
    **{getattr(np, p.name): p for p in LIBM},  # np.exp, np.arcsinh, np.arctan2...
    np.abs: P.abs,
    np.sign: P.sign,
    np.floor: P.floor,
    np.maximum: P.maximum,
    np.minimum: P.minimum,
    np.where: np_where,
    np.square: np_square,
    np.clip: np_clip,
}
