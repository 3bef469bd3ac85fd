"""Inference rules of the linalg primitives of issue 18 (see rules.py for the conventions)."""

import numpy as np

from ..errors import MyiaShapeError
from ..prim import ops as P
from ..abstract import AArray
from .rules import _dtype_of, _shape_of, fmt_shape, rule


def _differ(x, y):
    return x is not None and y is not None and x != y


@rule(P.batch_matmul)
def infer_batch_matmul(a, b):
    sa, sb = _shape_of(a), _shape_of(b)
    what = f"batch_matmul of shapes {fmt_shape(sa)} and {fmt_shape(sb)}"
    if len(sa) < 2 or len(sa) != len(sb):
        raise MyiaShapeError(f"{what}: expected two arrays of the same rank, at least 2")
    if any(_differ(x, y) for x, y in zip(sa[:-2], sb[:-2])):
        raise MyiaShapeError(f"{what}: the leading (batch) axes differ",
                             hint="broadcast both to the same batch shape first")
    if _differ(sa[-1], sb[-2]):
        raise MyiaShapeError(
            f"{what}: the inner dimensions {sa[-1]} and {sb[-2]} differ",
            hint="for A @ B, the last dimension of A must equal the second-to-last of B")
    batch = [x if x is not None else y for x, y in zip(sa[:-2], sb[:-2])]
    dtype = np.result_type(np.dtype(_dtype_of(a)), np.dtype(_dtype_of(b))).name
    return AArray(dtype, batch + [sa[-2], sb[-1]])
