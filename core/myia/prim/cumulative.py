"""Cumulative and product reductions: reduce_prod, cumsum, cumprod (issue 18)."""
