"""Comparing program results: numbers, arrays and nested tuples of them."""

import numpy as np


def assert_same(got, want, rtol=1e-9, atol=1e-12, path="result"):
    """`got` equals `want` up to floating-point tolerance, with the same structure."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple), f"{path}: expected a tuple, got {type(got).__name__}"
        assert len(got) == len(want), f"{path}: expected {len(want)} elements, got {len(got)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, rtol, atol, f"{path}[{i}]")
        return
    if isinstance(want, np.ndarray):
        assert np.shape(got) == want.shape, f"{path}: shape {np.shape(got)} != {want.shape}"
    else:
        assert not isinstance(got, tuple), f"{path}: expected a scalar, got a tuple"
    if isinstance(want, (bool, np.bool_)):
        assert bool(got) == bool(want), f"{path}: {got!r} != {want!r}"
        return
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float),
                               rtol=rtol, atol=atol, err_msg=path)
