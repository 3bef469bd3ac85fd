"""saddle: min over x of max over y of f(x, y) = (x1^2 + y1^2) - (x2^2 + y2^2), both
by gradient descent from the same start s, so the argmin differentiates through an
argmax (nested AD); then the argmax at the x found.  The output is x and y, end to
end.  Each variant (ff, fr, rf, rr: the outer, then the inner mode) is one subset
function, compiled whole.
"""

import numpy as np

from . import Function, to_list
from .solver import argmax, argmin, grad_f, grad_r, maximum


def f(x1, y1, x2, y2):
    return (x1 ** 2 + y1 ** 2) - (x2 ** 2 + y2 ** 2)


def saddle(outer, inner, start):
    def max_over_y(x):
        return maximum(inner, lambda y: f(x[0], x[1], y[0], y[1]), start)

    x = argmin(outer, max_over_y, start)
    y = argmax(outer, lambda y: f(x[0], x[1], y[0], y[1]), start)
    return np.concatenate((x, y))


def ff(start):
    return saddle(grad_f, grad_f, start)


def fr(start):
    return saddle(grad_f, grad_r, start)


def rf(start):
    return saddle(grad_r, grad_f, start)


def rr(start):
    return saddle(grad_r, grad_r, start)


def start_point(input):
    return (np.asarray(input["start"], dtype=np.float64),)


FUNCTIONS = {name: Function(fn, prepare=start_point, post=to_list)
             for name, fn in [("ff", ff), ("fr", fr), ("rf", rf), ("rr", rr)]}
