"""Rearranging arrays: concatenation, flips, rolls, diagonals, sorting (issue 18)."""
