"""`python -m myia_kernel install` writes the kernelspec `myia`."""

import json
import subprocess
import sys

from .kernel_env import ROOT


def test_install_into_a_prefix(tmp_path):
    out = subprocess.run([sys.executable, "-m", "myia_kernel", "install", "--prefix",
                          str(tmp_path)], capture_output=True, text=True, cwd=ROOT,
                         check=True).stdout
    path = tmp_path / "share" / "jupyter" / "kernels" / "myia" / "kernel.json"
    assert str(path.parent) in out
    spec = json.loads(path.read_text())
    assert spec["argv"][:5] == [sys.executable, "-Xfrozen_modules=off", "-P", "-m",
                                "myia_kernel"]
    assert spec["argv"][-2:] == ["-f", "{connection_file}"]
    assert spec["language"] == "python" and spec["display_name"] == "Myia"
    template = json.loads((ROOT / "kernel.json").read_text())
    assert {k: v for k, v in spec.items() if k != "argv"} == \
        {k: v for k, v in template.items() if k != "argv"}


def test_install_refuses_two_places(tmp_path):
    r = subprocess.run([sys.executable, "-m", "myia_kernel", "install", "--user",
                        "--prefix", str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode != 0 and "not allowed with" in r.stderr
