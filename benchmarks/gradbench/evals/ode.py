"""ode: s steps of classical Runge-Kutta (t from 0 to 2) on cmpad's an_ode,

    y_0' = x_0,   y_i' = x_i y_{i-1}  (i > 0),   y(0) = 0,

and the gradient of the last component of the result with respect to x.  The
steps are a loop whose count s arrives at run time: reverse mode keeps one
backpropagator per step (the "tape" the spec's commentary speaks of).
"""

import numpy as np
from myia import grad

from . import Function, to_list


def ode_fun(x, y):
    return np.concatenate((x[:1], x[1:] * y[:-1]))


def ode(x, s):
    h = 2.0 / s
    y = np.zeros_like(x)
    for _ in range(s):
        k1 = ode_fun(x, y)
        k2 = ode_fun(x, y + h * k1 / 2.0)
        k3 = ode_fun(x, y + h * k2 / 2.0)
        k4 = ode_fun(x, y + h * k3)
        y = y + h * (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0
    return y


def ode_last(x, s):
    return ode(x, s)[-1]


def vector_and_steps(input):
    return (np.asarray(input["x"], dtype=np.float64), int(input["s"]))


FUNCTIONS = {
    "primal": Function(ode, prepare=vector_and_steps, post=to_list),
    "gradient": Function(grad(ode_last), prepare=vector_and_steps, post=to_list),
}
