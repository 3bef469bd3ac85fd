"""particle: a charged particle starts at (0, 8) with velocity (0.75, 0), pushed by
two unit charges at (10, 10 - w) and (10, 0); find the w for which it crosses the
x axis at the origin, by gradient descent on x0(t_f)^2 (evals/particle/README.md).

The trajectory is naive Euler integration (delta_t = 0.1) of the force -grad p(x),
stopped before the step that would cross the axis; t_f is found by linear
interpolation.  So the descent over w differentiates a loop that itself
differentiates the potential: nested AD.  Each variant (ff, fr, rf, rr: the mode of
the descent, then the mode of the force) is one subset function, compiled whole.
"""

import numpy as np

from . import Function
from .solver import argmin, grad_f, grad_r


def distance(u, v):
    return np.sqrt(np.sum((u - v) ** 2))


def naive_euler(force_gradient, w):
    def potential(x):
        return (1.0 / distance(x, np.array([10.0, 10.0 - w]))
                + 1.0 / distance(x, np.array([10.0, 0.0])))

    delta_t = 0.1
    x = np.array([0.0, 8.0])
    xdot = np.array([0.75, 0.0])
    while True:
        xddot = -force_gradient(potential, x)
        x_new = x + delta_t * xdot
        if x_new[1] <= 0.0:
            break
        x = x_new
        xdot = xdot + delta_t * xddot
    delta_t_f = -x[1] / xdot[1]
    x_t_f = x + delta_t_f * xdot
    return x_t_f[0] * x_t_f[0]


def particle(outer, inner, w0):
    def miss(w):
        return naive_euler(inner, w[0])

    return argmin(outer, miss, np.array([w0]))[0]


def ff(w):
    return particle(grad_f, grad_f, w)


def fr(w):
    return particle(grad_f, grad_r, w)


def rf(w):
    return particle(grad_r, grad_f, w)


def rr(w):
    return particle(grad_r, grad_r, w)


def start_w(input):
    return (float(input["w"]),)


FUNCTIONS = {name: Function(fn, prepare=start_w, post=float)
             for name, fn in [("ff", ff), ("fr", fr), ("rf", rf), ("rr", rr)]}
