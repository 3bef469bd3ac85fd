"""det: the determinant by expansion by minors, and its gradient (cmpad's
det_by_minor), written as the spec reads: along the first row, each term the entry
times the determinant of its minor, recursively.

The minor of column j joins the columns left and right of j (`A[1:, :j]`,
`A[1:, j + 1:]`), whose widths depend on j: inference unrolls the loop over j (its
trip count is the matrix's size, known from the shape) so that each minor's shape is
known, and the recursion is specialized per size down to 1 x 1.
"""

import numpy as np
from myia import grad

from . import Function, to_list


def det(A):
    n = A.shape[0]
    if n == 1:
        return A[0, 0]
    total = 0.0
    for j in range(n):
        minor = np.concatenate((A[1:, :j], A[1:, j + 1:]), axis=1)
        total = total + (-1.0) ** j * A[0, j] * det(minor)
    return total


def matrix(input):
    ell = int(input["ell"])
    return (np.asarray(input["A"], dtype=np.float64).reshape(ell, ell),)


def flat(gradient):
    return gradient.reshape(-1).tolist()


FUNCTIONS = {
    "primal": Function(det, prepare=matrix, post=float),
    "gradient": Function(grad(det), prepare=matrix, post=flat),
}
