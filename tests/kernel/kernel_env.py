"""A private Jupyter environment for the kernel tests: JUPYTER_* and IPYTHONDIR point to a
temporary folder, where the `myia` kernelspec is installed; and a helper to run cells
through jupyter_client."""

import atexit
import os
import shutil
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_env = {}


def setup_jupyter_env():
    """Idempotent: returns the temporary root."""
    if _env:
        return _env["root"]
    root = Path(tempfile.mkdtemp(prefix="myia-jupyter-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    for var, sub in (("JUPYTER_DATA_DIR", "data"), ("JUPYTER_CONFIG_DIR", "config"),
                     ("JUPYTER_RUNTIME_DIR", "runtime"), ("IPYTHONDIR", "ipython")):
        os.environ[var] = str(root / sub)
    os.environ["JUPYTER_PATH"] = str(root / "share" / "jupyter")
    os.environ["MYIA_HISTORY"] = str(root / "myia_history")
    # The kernel process imports the source tree even without an (editable) install.
    paths = [str(ROOT), str(ROOT / "core")]
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(paths + ([old] if old else []))
    from myia_kernel.install import install

    install(prefix=str(root))
    _env["root"] = root
    return root


def start_kernel(backend=None, **environ):
    """A kernel process (and its client); on `backend` ($MYIA_BACKEND) if given, with
    the environment variables `environ` besides this process's."""
    from jupyter_client.manager import start_new_kernel

    setup_jupyter_env()
    env = dict(os.environ, **environ)
    if backend is not None:
        env["MYIA_BACKEND"] = backend
    return start_new_kernel(kernel_name="myia", startup_timeout=120, env=env)


def execute(kc, code, timeout=60):
    """(reply content, [iopub messages of this request, status/execute_input excluded])."""
    msg_id = kc.execute(code)
    reply = kc.get_shell_msg(timeout=timeout)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kc.get_shell_msg(timeout=timeout)
    return reply["content"], collect_iopub(kc, msg_id, timeout)


def collect_iopub(kc, msg_id, timeout=60):
    outputs = []
    while True:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind = msg["msg_type"]
        if kind == "status":
            if msg["content"]["execution_state"] == "idle":
                return outputs
            continue
        if kind != "execute_input":
            outputs.append(msg)


__all__ = ["setup_jupyter_env", "start_kernel", "execute", "collect_iopub"]
