"""kmeans: the k-means cost and the Newton direction J * H^-1 of the spec.

    cost(P, C) = sum_i min_j |C_j - P_i|^2

J is the gradient with respect to the centroids C.  The Hessian is diagonal (each
centroid's cost is a sum of squares of its own coordinates), so its diagonal is
H . 1, the derivative of J in the direction of all ones: one forward-mode pass
(`jvp`) over the reverse-mode gradient gives J and H . 1 together, as the spec
recommends.
"""

import numpy as np
from myia import grad, jvp

from . import Function, to_list


def cost(points, centroids):
    # |p - c|^2 = |p|^2 + |c|^2 - 2 p.c, for all pairs at once: an (n, k) matrix
    p2 = np.sum(points * points, axis=1)
    c2 = np.sum(centroids * centroids, axis=1)
    dists = p2[:, None] + c2[None, :] - 2.0 * (points @ centroids.T)
    return np.sum(np.min(dists, axis=1))


def direction(points, centroids):
    def cost_of(c):
        return cost(points, c)

    J, H = jvp(grad(cost_of), (centroids,), (np.ones_like(centroids),))
    return J / H


def points_and_centroids(input):
    return (np.asarray(input["points"], dtype=np.float64),
            np.asarray(input["centroids"], dtype=np.float64))


FUNCTIONS = {
    "cost": Function(cost, prepare=points_and_centroids, post=float),
    "dir": Function(direction, prepare=points_and_centroids, post=to_list),
}
