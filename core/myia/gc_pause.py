"""Pausing Python's cyclic garbage collector while a program compiles.

Each full collection walks every live object.  Compiling a large program (a fourth
derivative is about 100,000 IR nodes, and the optimizer copies many of them) makes
millions of objects, and the collections it triggers took most of the compile time:
grad(grad(grad(grad(f)))) of a polynomial optimized in 88 s with the collector on,
25 s without.  IR graphs are full of reference cycles, so what a compile discards waits
for the next collection after it, which reclaims it as before.
"""

import contextlib
import gc


@contextlib.contextmanager
def gc_paused():
    """Run the block with the cyclic collector off (nested uses are fine)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
