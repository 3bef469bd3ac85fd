"""gmm: the log posterior of a Gaussian mixture with a Wishart prior on the
precision matrices, and its gradient with respect to alpha, mu, q and l (GradBench's
evals/gmm/README.md, section "Implementation": the algebraically simplified form).

For component k, Q_k is lower triangular with exp(q_k) on the diagonal and l_k below
it, column by column; the precision matrix is Q_k^T Q_k.  With
beta_ik = alpha_k + sum_j q_kj - |Q_k (x_i - mu_k)|^2 / 2,

    log p(X | theta, phi) = -N (D/2 log 2 pi + lse(alpha)) + sum_i lse(beta_i)
    log p(theta) = K (n D log(gamma / sqrt 2) - log Gamma_D(n / 2))
                   - gamma^2 / 2 sum_k |Q_k|_F^2 + m sum_kj q_kj,   n = D + m + 1.
"""

import math

import numpy as np
from myia import grad
from scipy.special import multigammaln

from . import Function, to_list


def logsumexp_rows(v):
    a = np.max(v, axis=1)
    return a + np.log(np.sum(np.exp(v - a[:, None]), axis=1))


def lower_triangles(q, l, below):
    """The K matrices Q_k, as a (K, D, D) array: `below` (from the input's layout, see
    `strictly_lower`) picks for each of the D*D places of a matrix the element of l
    that goes there, or the 0 put in front of l."""
    k, d = q.shape
    ls = np.concatenate((np.zeros((k, 1)), l), axis=1)[:, below].reshape(k, d, d)
    return ls + np.exp(q)[:, :, None] * np.eye(d)[None, :, :]


def log_posterior(alpha, mu, q, l, x, below, m, gamma, log_gamma_d):
    n, d = x.shape
    k = alpha.shape[0]
    Q = lower_triangles(q, l, below)
    centered = x[:, None, :] - mu[None, :, :]  # (N, K, D)
    Qx = np.einsum("kij,nkj->nki", Q, centered)
    beta = alpha[None, :] + np.sum(q, axis=1)[None, :] - 0.5 * np.sum(Qx * Qx, axis=2)
    alpha_max = np.max(alpha)
    lse_alpha = alpha_max + np.log(np.sum(np.exp(alpha - alpha_max)))
    log_likelihood = (-n * (0.5 * d * math.log(2.0 * math.pi) + lse_alpha)
                      + np.sum(logsumexp_rows(beta)))
    dof = d + m + 1
    log_prior = (k * (dof * d * np.log(gamma / math.sqrt(2.0)) - log_gamma_d)
                 - 0.5 * gamma * gamma * np.sum(Q * Q) + m * np.sum(q))
    return log_likelihood + log_prior


# ---- the protocol's side ------------------------------------------------------------

INDEPENDENT = ("alpha", "mu", "q", "l")


def strictly_lower(d):
    """For each place (r, c) of a D x D matrix, row-major: 1 + the index in l_k of the
    element that goes there (l fills the part below the diagonal column by column),
    or 0 (the zero in front of l) on and above the diagonal."""
    below = np.zeros((d, d), dtype=np.int64)
    index = 1
    for c in range(d):
        for r in range(c + 1, d):
            below[r, c] = index
            index += 1
    return below.ravel()


def arguments(input):
    d, k = int(input["d"]), int(input["k"])
    m, gamma = int(input["m"]), float(input["gamma"])
    shapes = {"alpha": (k,), "mu": (k, d), "q": (k, d), "l": (k, d * (d - 1) // 2)}
    independent = tuple(np.asarray(input[name], dtype=np.float64).reshape(shapes[name])
                        for name in INDEPENDENT)
    x = np.asarray(input["x"], dtype=np.float64).reshape(int(input["n"]), d)
    # log Gamma_D(n / 2) is a constant of the input (no independent variable in it),
    # and Myia's subset has no log-gamma function: it is computed here
    log_gamma_d = float(multigammaln(0.5 * (d + m + 1), d))
    return independent + (x, strictly_lower(d), m, gamma, log_gamma_d)


def as_independent(gradients):
    return {name: to_list(g) for name, g in zip(INDEPENDENT, gradients)}


FUNCTIONS = {
    "objective": Function(log_posterior, prepare=arguments, post=float),
    "jacobian": Function(grad(log_posterior, argnums=(0, 1, 2, 3)), prepare=arguments,
                         post=as_independent),
}
