"""Inference rules of the linalg primitives of issue 18 (see rules.py for the conventions)."""

from .rules import rule  # noqa: F401
