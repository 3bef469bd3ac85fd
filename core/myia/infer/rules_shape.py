"""Inference rules of the shape primitives of issue 18 (see rules.py for the conventions)."""

from .rules import rule  # noqa: F401
