"""gmm: the log posterior of a Gaussian mixture with a Wishart prior on the
precision matrices, and its gradient with respect to alpha, mu, q and l (GradBench's
evals/gmm/README.md), written as GradBench's JAX tool writes it
(python/gradbench/gradbench/tools/jax/gmm_objective.py), in NumPy.

For component k, Q_k is lower triangular with exp(q_k) on the diagonal and l_k below
it, column by column: `Ls[:, rows, cols] = l` writes l below the diagonals (an index
assignment at positions known when the program runs), and
Q_k (x_i - mu_k) = exp(q_k) * (x_i - mu_k) + L_k (x_i - mu_k).

One difference from the JAX lines: `rows` and `cols` (which depend only on d) are
computed by the tool's prepare, with the same NumPy calls, and passed in.  Inside the
subset, `np.repeat(np.arange(d - 1), np.arange(d - 1, 0, -1))` needs its repeats
known when compiling, and an array computed in the program is not (JAX's version
passes `total_repeat_length` for the same reason).
"""

import math

import numpy as np
from myia import grad
from scipy.special import logsumexp, multigammaln

from . import Function, to_list


def log_wishart_prior(k, p, gamma, m, sum_qs, Qdiags, l):
    n = p + m + 1
    out = np.sum(0.5 * gamma * gamma * (np.sum(Qdiags**2, axis=1) + np.sum(l**2, axis=1))
                 - m * sum_qs)
    C = n * p * (np.log(gamma / math.sqrt(2)))
    return -out + k * (C - multigammaln(0.5 * n, p))


def gmm_objective(alpha, mu, q, l, x, m, gamma, rows, cols):
    n, d = x.shape
    k = alpha.shape[0]
    Qdiags = np.exp(q)
    sum_qs = np.sum(q, axis=1)
    Ls = np.zeros((k, d, d), dtype=l.dtype)
    Ls[:, rows, cols] = l

    xcentered = x[:, None, :] - mu[None, ...]
    Lxcentered = Qdiags * xcentered + np.einsum("ijk,mik->mij", Ls, xcentered)
    sqsum_Lxcentered = np.sum(Lxcentered**2, axis=2)
    inner_term = alpha + sum_qs - 0.5 * sqsum_Lxcentered
    slse = np.sum(logsumexp(inner_term, axis=1))

    CONSTANT = -n * d * 0.5 * math.log(2 * math.pi)
    return (CONSTANT + slse - n * logsumexp(alpha, axis=0)
            + log_wishart_prior(k, d, gamma, m, sum_qs, Qdiags, l))


# ---- the protocol's side ------------------------------------------------------------

INDEPENDENT = ("alpha", "mu", "q", "l")


def below_the_diagonal(d):
    """(rows, cols) of the places of l_k in Q_k, as GradBench's JAX tool computes them:
    column by column, below the diagonal."""
    cols = np.repeat(np.arange(d - 1), np.arange(d - 1, 0, -1))
    rows = np.concatenate([np.arange(c + 1, d) for c in range(d - 1)] + [np.zeros(0, int)])
    return rows.astype(np.int64), cols.astype(np.int64)


def arguments(input):
    d, k = int(input["d"]), int(input["k"])
    m, gamma = int(input["m"]), float(input["gamma"])
    shapes = {"alpha": (k,), "mu": (k, d), "q": (k, d), "l": (k, d * (d - 1) // 2)}
    independent = tuple(np.asarray(input[name], dtype=np.float64).reshape(shapes[name])
                        for name in INDEPENDENT)
    x = np.asarray(input["x"], dtype=np.float64).reshape(int(input["n"]), d)
    return independent + (x, m, gamma) + below_the_diagonal(d)


def as_independent(gradients):
    return {name: to_list(g) for name, g in zip(INDEPENDENT, gradients)}


FUNCTIONS = {
    "objective": Function(gmm_objective, prepare=arguments, post=float),
    "jacobian": Function(grad(gmm_objective, argnums=(0, 1, 2, 3)), prepare=arguments,
                         post=as_independent),
}
