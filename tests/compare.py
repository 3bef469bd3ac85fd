"""Comparing program results: numbers, arrays and nested tuples of them."""

import numpy as np


def assert_same(got, want, rtol=1e-9, atol=1e-12, path="result"):
    """`got` equals `want` up to floating-point tolerance, with the same structure
    (a list where `want` has a list, a dict with the same keys in the same order)."""
    if isinstance(want, list):
        assert isinstance(got, list), f"{path}: expected a list, got {type(got).__name__}"
        assert len(got) == len(want), f"{path}: expected {len(want)} elements, got {len(got)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, rtol, atol, f"{path}[{i}]")
        return
    if isinstance(want, dict):
        assert isinstance(got, dict), f"{path}: expected a dict, got {type(got).__name__}"
        assert list(got) == list(want), f"{path}: keys {list(got)} != {list(want)}"
        for k in want:
            assert_same(got[k], want[k], rtol, atol, f"{path}[{k!r}]")
        return
    if isinstance(want, str) or want is None:
        assert got == want, f"{path}: {got!r} != {want!r}"
        return
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
