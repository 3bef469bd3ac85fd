"""Backends run graphs: `vm` (reference interpreter), later `llvm` and `cupy`."""
