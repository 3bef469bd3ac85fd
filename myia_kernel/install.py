"""`python -m myia_kernel install`: install the `myia` kernelspec.

The spec is the repository's `kernel.json`, with `argv` naming this Python
(`sys.executable`), `-Xfrozen_modules=off` (without it, debugpy warns on 3.11) and `-P`:
the notebook's folder is not put first on sys.path, where a planted `resource.py` or
`runpy.py` would run in the kernel as it starts (the kernel appends it last when it is
not locked, for the %%python cells' own modules).
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from jupyter_client.kernelspec import KernelSpecManager

from . import KERNEL_NAME

TEMPLATE = Path(__file__).resolve().parent.parent / "kernel.json"
DEFAULT_SPEC = {
    "argv": ["python", "-Xfrozen_modules=off", "-P", "-m", "myia_kernel", "-f",
             "{connection_file}"],
    "display_name": "Myia",
    "language": "python",
    "interrupt_mode": "signal",
    "metadata": {"debugger": False},
}


def kernel_spec():
    """The kernelspec dict, with argv for this Python."""
    spec = json.loads(TEMPLATE.read_text()) if TEMPLATE.is_file() else dict(DEFAULT_SPEC)
    spec["argv"] = [sys.executable, "-Xfrozen_modules=off", "-P", "-m", "myia_kernel", "-f",
                    "{connection_file}"]
    return spec


LOCKED_NAME = "myia-locked"


def install(user=False, prefix=None, name=KERNEL_NAME, display_name=None, locked=False,
            time_limit=None, memory_limit=None):
    """Install the kernelspec; returns the directory it went to.  `locked`: a kernel
    for shared hubs (no %%python), with optional limits (seconds per cell, bytes per
    compiled call, e.g. "2G")."""
    spec = kernel_spec()
    if locked:
        spec["argv"].append("--MyiaKernel.locked=True")
        spec["display_name"] = "Myia (locked)"
    if time_limit:
        spec["argv"].append(f"--MyiaKernel.cell_time_limit={float(time_limit):g}")
    if memory_limit:
        spec["argv"].append(f"--MyiaKernel.memory_limit={memory_limit}")
    if display_name:
        spec["display_name"] = display_name
    with tempfile.TemporaryDirectory() as td:
        os.chmod(td, 0o755)  # the spec dir is copied with these permissions
        with open(os.path.join(td, "kernel.json"), "w") as f:
            json.dump(spec, f, indent=2)
        return KernelSpecManager().install_kernel_spec(td, kernel_name=name, user=user,
                                                       prefix=prefix)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m myia_kernel install",
                                description="Install the Myia kernelspec for Jupyter.")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true",
                       help="install for the current user (~/.local/share/jupyter)")
    where.add_argument("--sys-prefix", action="store_true",
                       help=f"install into this Python's prefix ({sys.prefix})")
    where.add_argument("--prefix", metavar="P", help="install into the prefix P")
    p.add_argument("--name", help="the kernel's name (default: myia, or myia-locked)")
    p.add_argument("--display-name", help="the name shown in Jupyter (default: Myia)")
    p.add_argument("--locked", action="store_true",
                   help="a kernel for shared hubs: subset cells only, no %%%%python")
    p.add_argument("--time-limit", type=float, metavar="S",
                   help="stop a cell after S seconds")
    p.add_argument("--memory-limit", metavar="SIZE",
                   help="the most one call of compiled code may hold, e.g. 2G")
    args = p.parse_args(argv)
    prefix = sys.prefix if args.sys_prefix else args.prefix
    name = args.name or (LOCKED_NAME if args.locked else KERNEL_NAME)
    if args.memory_limit:
        # import here: limits imports the compiler (seconds); only --memory-limit needs it
        from .limits import parse_size

        try:
            parse_size(args.memory_limit)
        except ValueError as e:
            p.error(str(e))
    try:
        path = install(user=args.user, prefix=prefix, name=name,
                       display_name=args.display_name, locked=args.locked,
                       time_limit=args.time_limit, memory_limit=args.memory_limit)
    except PermissionError as e:
        print(f"error: cannot write the kernelspec ({e}); try --user or --sys-prefix",
              file=sys.stderr)
        return 1
    print(f"Installed the kernelspec {name} in {path}")
    return 0
