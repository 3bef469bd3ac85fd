"""Myia: a compiler for a subset of Python, with automatic differentiation.

    import myia
    f = myia.compile(fn)                 # specialized, cached per argument types
    df = myia.grad(fn)                   # derivatives compose: myia.grad(myia.grad(fn))
    print(myia.ir(fn, 3.0, stage="parsed"))
"""

# The package myia.ir (the IR) is imported first: importing it binds the name `ir` on
# this package, which must end up being the function `myia.ir` (bound below).
from . import ir as _ir_package  # noqa: F401  isort: skip
from . import viz  # noqa: F401  (myia.viz.render)
from .api import compile, grad, ir, jet, jvp, stop_gradient, value_and_grad, vjp
from .api_custom import checkpoint, custom_jvp, custom_vjp
from .api_jacobian import hessian, jacfwd, jacobian, jacrev
from .api_vmap import vmap
from .errors import (
    MyiaBatchingError,
    MyiaError,
    MyiaGradError,
    MyiaIndexError,
    MyiaNameError,
    MyiaOverflowError,
    MyiaShapeError,
    MyiaSourceError,
    MyiaStaticError,
    MyiaSyntaxError,
    MyiaTypeError,
    MyiaValueError,
)

from . import in_subset  # noqa: E402

in_subset.register()
from .api import ir  # noqa: E402,F811  (the function, not the subpackage)


# The default backend's code is imported with the package (as JAX imports its tracer
# and XLA's client; the pipeline, inference and the optimizer come with myia.api), so
# that the first compile only compiles.  A backend that cannot be imported is reported,
# with context, when a program first needs it.
from .api import default_backend as _default_backend  # noqa: E402

if _default_backend() == "llvm":
    try:
        from .backend.llvm import dispatch as _dispatch  # noqa: F401
    except ImportError:  # pragma: no cover
        pass
