"""LLVM lowering of the shape primitives of issue 18 (see ops_array.py for the conventions)."""

from .lower import rule  # noqa: F401
