"""The batched matrix product: `batch_matmul(a, b)`, one matrix product per index of
the leading (batch) axes, which a and b share exactly: (..., m, k) @ (..., k, n) ->
(..., m, n).

`dot` (prim/array.py) is the product of 1-d and 2-d operands; np.matmul, np.einsum and
np.tensordot (myia/lib/np_linalg.py) bring everything else to one of the two, with
broadcasting of the batch axes done by `broadcast_to` before the call (so that its
gradient, a sum over the broadcast axes, comes from broadcast_to's rule).
"""

import numpy as np

from ..errors import MyiaShapeError
from . import series as S
from .primitive import Primitive, batch, bprop, compile_time, jet, jvp
from .shape import _as_array, ndim, transpose


def _batch_matmul(a, b):
    a, b = _as_array(a), _as_array(b)
    if a.ndim < 2 or a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2] \
            or a.shape[-1] != b.shape[-2]:
        raise MyiaShapeError(
            f"batch_matmul of shapes {a.shape} and {b.shape}: expected (..., m, k) and "
            f"(..., k, n) with the same leading axes")
    return np.matmul(a, b)


batch_matmul = Primitive("batch_matmul", _batch_matmul,
                         "a @ b for stacks of matrices with the same leading (batch) axes")


@compile_time
def _last_two_swapped(rank):
    """The permutation that swaps the last two axes of an array of rank `rank`."""
    return tuple(range(rank - 2)) + (rank - 1, rank - 2)


def _mT(x):
    return transpose(x, _last_two_swapped(ndim(x)))


@bprop(batch_matmul)
def bprop_batch_matmul(a, b, out, dout):
    return (batch_matmul(dout, _mT(b)), batch_matmul(_mT(a), dout))


@jvp(batch_matmul)
def jvp_batch_matmul(a, b, da, db):
    return batch_matmul(da, b) + batch_matmul(a, db)


@jet(batch_matmul)
def jet_batch_matmul(out, a, b):
    return S.cauchy(a, b, out, prim=batch_matmul)


@batch(batch_matmul)
def batch_batch_matmul(b, x, y):
    return b.apply(batch_matmul, b.batched(x), b.batched(y))
