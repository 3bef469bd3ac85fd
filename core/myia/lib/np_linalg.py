"""NumPy's products: dot, matmul..."""

import numpy as np

from ..prim import ops as P

NAMES = {
    np.dot: P.dot,
    np.matmul: P.dot,
}
