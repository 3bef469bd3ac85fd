"""Finding CuPy and a CUDA device, with errors that say what is missing."""

from ...errors import MyiaBackendError

INSTALL_HINT = "install CuPy with `pip install myia[gpu]` (it installs cupy-cuda12x)"


def load_cupy():
    """The `cupy` module, or a MyiaBackendError when it is not installed."""
    try:
        # import here: CuPy is optional (myia[gpu]); its absence is the error below
        import cupy
    except ImportError as e:
        raise MyiaBackendError(
            f"the cupy backend needs CuPy, which is not installed ({e})",
            hint=INSTALL_HINT) from None
    return cupy


def device_problem(cupy):
    """Why `cupy` cannot run kernels here (a sentence), or None when it can."""
    try:
        if cupy.cuda.is_available():
            return None
        return "CuPy finds no CUDA device on this machine"
    except Exception as e:  # noqa: BLE001  (a broken driver raises many kinds)
        return f"CuPy cannot reach a CUDA device ({type(e).__name__}: {e})"


def check_available():
    """The `cupy` module if it can run kernels; else a MyiaBackendError saying why."""
    cupy = load_cupy()
    problem = device_problem(cupy)
    if problem is not None:
        raise MyiaBackendError(
            f"the cupy backend needs a CUDA device: {problem}",
            hint="run on a machine with an NVIDIA GPU and its driver, or choose "
                 "backend='vm' or 'llvm'")
    return cupy


def is_available():
    """True where the cupy backend can run (CuPy installed and a device found)."""
    try:
        check_available()
    except MyiaBackendError:
        return False
    return True
