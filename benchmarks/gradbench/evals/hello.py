"""hello: `square(x) = x * x` and its derivative `double` (GradBench's protocol check).

Its input is a bare number, without min_runs/min_seconds: each function runs once.
"""

from myia import grad

from . import Function


def square(x):
    return x * x


FUNCTIONS = {
    "square": Function(square, prepare=lambda x: (float(x),), post=float),
    "double": Function(grad(square), prepare=lambda x: (float(x),), post=float),
}
