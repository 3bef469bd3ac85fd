"""llsq: a linear least-squares objective and its gradient (cmpad's llsq_obj).

    y(x) = 1/2 sum_i (s_i - x_0 - x_1 t_i - x_2 t_i^2 - ...)^2,
    t_i = -1 + 2 i / (n - 1),  s_i = sign(t_i),  i < n.

written as the spec reads, over arrays: the n sample points are np.arange(n), so n is
a static argument (one program per n, as `static_argnums` in JAX); the powers of t
are a cumulative product along the m coefficients.
"""

import numpy as np
from myia import grad

from . import Function, to_list


def llsq(x, n):
    m = x.shape[0]
    t = -1.0 + np.arange(n) * 2.0 / (n - 1.0)
    powers = np.cumprod(np.concatenate(
        (np.ones((n, 1)), np.repeat(t[:, None], m - 1, axis=1)), axis=1), axis=1)
    r = np.sign(t) - powers @ x
    return np.sum(r * r) / 2.0


def vector_and_n(input):
    return (np.asarray(input["x"], dtype=np.float64), int(input["n"]))


FUNCTIONS = {
    "primal": Function(llsq, prepare=vector_and_n, post=float, static=(1,)),
    "gradient": Function(grad(llsq), prepare=vector_and_n, post=to_list, static=(1,)),
}
