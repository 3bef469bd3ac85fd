"""`python -m myia_kernel install`: install the `myia` kernelspec.

The spec is the repository's `kernel.json`, with `argv` naming this Python
(`sys.executable`) and `-Xfrozen_modules=off` (without it, debugpy warns on 3.11).
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from . import KERNEL_NAME

TEMPLATE = Path(__file__).resolve().parent.parent / "kernel.json"
DEFAULT_SPEC = {
    "argv": ["python", "-Xfrozen_modules=off", "-m", "myia_kernel", "-f", "{connection_file}"],
    "display_name": "Myia",
    "language": "python",
    "interrupt_mode": "signal",
    "metadata": {"debugger": False},
}


def kernel_spec():
    """The kernelspec dict, with argv for this Python."""
    spec = json.loads(TEMPLATE.read_text()) if TEMPLATE.is_file() else dict(DEFAULT_SPEC)
    spec["argv"] = [sys.executable, "-Xfrozen_modules=off", "-m", "myia_kernel", "-f",
                    "{connection_file}"]
    return spec


def install(user=False, prefix=None, name=KERNEL_NAME, display_name=None):
    """Install the kernelspec; returns the directory it went to."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = kernel_spec()
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
    p.add_argument("--name", default=KERNEL_NAME, help="the kernel's name (default: myia)")
    p.add_argument("--display-name", help="the name shown in Jupyter (default: Myia)")
    args = p.parse_args(argv)
    prefix = sys.prefix if args.sys_prefix else args.prefix
    try:
        path = install(user=args.user, prefix=prefix, name=args.name,
                       display_name=args.display_name)
    except PermissionError as e:
        print(f"error: cannot write the kernelspec ({e}); try --user or --sys-prefix",
              file=sys.stderr)
        return 1
    print(f"Installed the kernelspec {args.name} in {path}")
    return 0
