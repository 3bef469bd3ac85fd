"""Side-by-side benchmarks (see run.py): `python -m benchmarks` or `make bench`."""
