"""Gradient descent for particle and saddle, in the subset (after the reference in
GradBench's tools/futhark/solver.fut, itself after Pearlmutter and Siskind).

`argmin(gradient, f, x)` takes its derivative as an argument: `grad_r` (reverse
mode, one `grad`) or `grad_f` (forward mode, one `jvp` per basis direction); the
four variants of each eval are the four ways to pick them for the two nested
optimizations.  The step size starts at 1e-5, doubles after 10 accepted steps and
halves on a rejected one; the descent stops when the gradient or the step is no
longer than 1e-5.
"""

import numpy as np
from myia import grad, jvp


def grad_r(fn, x):
    """The gradient of `fn` at the vector `x`, by reverse mode."""
    return grad(fn)(x)


def grad_f(fn, x):
    """The gradient of `fn` at the vector `x`, by forward mode: one jvp per e_i."""
    basis = np.eye(x.shape[0])
    return np.array([jvp(fn, (x,), (basis[i],))[1] for i in range(x.shape[0])])


def norm(v):
    return np.sqrt(np.sum(v * v))


def argmin(gradient, f, x):
    fx = f(x)
    gx = gradient(f, x)
    eta = 1e-5
    accepted = 0
    while norm(gx) > 1e-5:
        if accepted == 10:
            eta = 2.0 * eta
            accepted = 0
        else:
            x_new = x - eta * gx
            if norm(x - x_new) <= 1e-5:
                break
            fx_new = f(x_new)
            if fx_new < fx:
                x = x_new
                fx = fx_new
                gx = gradient(f, x_new)
                accepted = accepted + 1
            else:
                eta = eta / 2.0
                accepted = 0
    return x


def argmax(gradient, f, x):
    return argmin(gradient, lambda z: -f(z), x)


def maximum(gradient, f, x):
    return f(argmax(gradient, f, x))
