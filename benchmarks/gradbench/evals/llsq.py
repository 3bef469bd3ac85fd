"""llsq: a linear least-squares objective and its gradient (cmpad's llsq_obj).

    y(x) = 1/2 sum_i (s_i - x_0 - x_1 t_i - x_2 t_i^2 - ...)^2,
    t_i = -1 + 2 i / (n - 1),  s_i = sign(t_i),  i < n.

`n` arrives at run time and Myia's shapes are static, so the sum over i is a loop
(as in the spec's C++ reference); each term is one vector operation over the m
coefficients: the powers of t_i are a running product, as in the reference.
"""

import numpy as np
from myia import grad

from . import Function, to_list


def llsq(x, n):
    m = x.shape[0]
    total = 0.0
    for i in range(n):
        t = -1.0 + i * 2.0 / (n - 1.0)
        powers = np.cumprod(np.concatenate((np.ones(1), np.full(m - 1, t))))
        r = np.sign(t) - np.sum(x * powers)
        total = total + r * r
    return total / 2.0


def vector_and_n(input):
    return (np.asarray(input["x"], dtype=np.float64), int(input["n"]))


FUNCTIONS = {
    "primal": Function(llsq, prepare=vector_and_n, post=float),
    "gradient": Function(grad(llsq), prepare=vector_and_n, post=to_list),
}
