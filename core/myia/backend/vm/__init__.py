"""The reference VM backend."""

from .vm import VM, Closure, Partial

__all__ = ["VM", "Closure", "Partial"]
