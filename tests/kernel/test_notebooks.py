"""The tutorial notebooks run clean through the kernel (nbclient, kernel "myia"), with
the kernel on each backend ("vm" and "llvm": the `backend` fixture of tests/conftest.py
sets $MYIA_BACKEND, which the kernel process inherits), and their prose says what their
pictures show on each (tests/kernel/notebook_prose.py); and `python -m myia_kernel run`
writes a notebook as HTML with its drawings (on the default backend)."""

import json
import signal
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

from .kernel_env import ROOT, setup_jupyter_env
from .notebook_prose import problems

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_the_tutorials_are_there():
    names = [p.name for p in NOTEBOOKS]
    assert names == ["01-tour.ipynb", "02-ad-visually.ipynb", "03-higher-order.ipynb",
                     "04-reverse-mode-by-hand.ipynb"]


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_clean(path):
    setup_jupyter_env()
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata.kernelspec.name == "myia"
    # nbclient's asyncio loop puts Python's default SIGINT handler back when it is done,
    # not the disposition it found (SIGINT may have started ignored): restore that
    sigint = signal.getsignal(signal.SIGINT)
    try:
        NotebookClient(nb, kernel_name="myia", timeout=300).execute()  # raises on an error
    finally:
        signal.signal(signal.SIGINT, sigint)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    errors = [c for c in nb.cells if c.cell_type == "code"
              and any(o.output_type == "error" for o in c.outputs)]
    # only the cells that are meant to fail did
    assert all("raises-exception" in c.metadata.get("tags", []) for c in errors)
    drawings = [o for o in outputs if o.output_type == "display_data"
                and "image/svg+xml" in o.data]
    assert drawings, "every tutorial draws programs"
    assert any(c.metadata.get("pictures") for c in nb.cells), \
        f"{path.name} describes none of its pictures"
    wrong = problems(nb)
    assert not wrong, f"{path.name}:\n" + "\n".join(wrong)


def test_run_writes_html_with_the_pictures(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Title\n\nSome `code` and **bold**."),
                nbformat.v4.new_code_cell("def f(x):\n    return x * x\n\nf(3.0)"),
                nbformat.v4.new_code_cell("%grad f"),
                nbformat.v4.new_code_cell("%plot f -1 1")]
    src = tmp_path / "small.ipynb"
    nbformat.write(nb, src)
    out = tmp_path / "html" / "small.html"
    r = subprocess.run([sys.executable, "-m", "myia_kernel", "run", str(src), "--html", str(out),
                        "--output", str(tmp_path / "executed.ipynb")],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    assert f"Wrote {out.resolve()}" in r.stdout
    page = out.read_text()
    assert "<h1>Title</h1>" in page and "<code>code</code>" in page
    # %grad f draws the transform (▶f and ◀f in one picture); %plot is a PNG
    assert page.count("<svg") == 1 and "◀f" in page and "data:image/png;base64," in page
    assert "9.0" in page
    executed = json.loads((tmp_path / "executed.ipynb").read_text())
    assert executed["cells"][1]["outputs"][0]["data"]["text/plain"] == "9.0"


def test_run_fails_on_an_unexpected_error(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("nope(1.0)")]
    src = tmp_path / "bad.ipynb"
    nbformat.write(nb, src)
    r = subprocess.run([sys.executable, "-m", "myia_kernel", "run", str(src)],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 1
    assert "name `nope` is not defined" in r.stderr
