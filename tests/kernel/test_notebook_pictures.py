"""The tutorial notebooks say what their pictures show.

A markdown cell that describes the drawings of the next code cell lists, in its cell
metadata, what its prose names in them:

    "pictures": ["▶square", "◀ return x * x (line 2)", "∂x", "= 6", "#fde2c6", ...]

Each element must be in that cell's `image/svg+xml` outputs, taken together: a colour
(`#fde2c6`) or an SVG attribute (`stroke-dasharray`, `stroke="#8f8f8f"`) anywhere in the
markup; anything else as the whole text of one label line (`∂x`, `= 6`, a graph's name, a
box's caption), or as the name of an operation drawn with its arguments (`switch` for
`switch(·, ...)`).  So "= 2" is not found in "= 2.507", and a picture that changes
makes the prose that described it fail here, by name.  And every code cell that draws
follows such a markdown cell: no picture goes undescribed.

Each notebook runs once, through the kernel on the default backend (test_notebooks.py
runs them on every backend); plots (PNG, from %plot) are not drawings in this sense.
"""

import html
import re
import signal

import nbformat
import pytest
from nbclient import NotebookClient

from .kernel_env import ROOT, setup_jupyter_env

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
#: an element looked up in the SVG markup, not in the labels
MARKUP = re.compile(r'#[0-9a-fA-F]{6}|[a-z-]+="[^"]*"|stroke-dasharray')
LABEL = re.compile(r"<text\b[^>]*>([^<]*)</text>")


def execute(path):
    setup_jupyter_env()
    nb = nbformat.read(path, as_version=4)
    # nbclient puts Python's default SIGINT handler back when it is done, not the
    # disposition it found: restore that (see test_notebooks.py)
    sigint = signal.getsignal(signal.SIGINT)
    try:
        NotebookClient(nb, kernel_name="myia", timeout=300).execute()  # raises on an error
    finally:
        signal.signal(signal.SIGINT, sigint)
    return nb


def drawings(cell):
    return [o.data["image/svg+xml"] for o in cell.get("outputs", [])
            if o.output_type in ("display_data", "execute_result")
            and "image/svg+xml" in o.data]


def found(element, svgs):
    if MARKUP.fullmatch(element):
        return any(element in svg for svg in svgs)
    labels = {html.unescape(t) for svg in svgs for t in LABEL.findall(svg)}
    return element in labels or any(t.startswith(element + "(") for t in labels)


def problems(nb):
    """What the notebook's prose gets wrong about its pictures, one line each."""
    out = []
    cells = nb.cells
    for i, cell in enumerate(cells):
        head = cell.source.split("\n")[0][:70]
        if cell.cell_type == "code" and drawings(cell):
            before = cells[i - 1] if i else None
            if before is None or before.cell_type != "markdown" or \
                    not before.metadata.get("pictures"):
                out.append(f"cell {i} ({head!r}) draws, but the markdown cell before it "
                           f"does not describe its pictures (metadata 'pictures')")
        want = cell.metadata.get("pictures")
        if want is None:
            continue
        if cell.cell_type != "markdown" or not isinstance(want, list) or not want or \
                not all(isinstance(w, str) and w for w in want):
            out.append(f"cell {i}: 'pictures' belongs to a markdown cell, as a list of "
                       f"strings")
            continue
        nxt = next((c for c in cells[i + 1:] if c.cell_type == "code"), None)
        svgs = drawings(nxt) if nxt is not None else []
        if not svgs:
            out.append(f"cell {i} ({head!r}) describes pictures, but the next code cell "
                       f"draws none")
            continue
        missing = [w for w in want if not found(w, svgs)]
        if missing:
            code = nxt.source.split("\n")[-1]
            out.append(f"cell {i} ({head!r}) names what `{code}` does not draw: "
                       + ", ".join(repr(m) for m in missing))
    return out


@pytest.mark.timeout(300)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_prose_is_true_of_the_pictures(path):
    nb = execute(path)
    described = [c for c in nb.cells if c.metadata.get("pictures")]
    assert described, f"{path.name} describes none of its pictures"
    wrong = problems(nb)
    assert not wrong, f"{path.name}:\n" + "\n".join(wrong)


# ---- the checker itself, on small made-up notebooks ------------------------------------

SVG = ('<svg width="100pt" height="50pt"><g><path fill="none" stroke="#8f8f8f" '
       'stroke-dasharray="5,2"/><text x="1" y="2">▶f</text>'
       '<text x="1" y="3">= 2.507</text><text x="1" y="4">switch(·, ·, ·)</text>'
       '<text x="1" y="5">x &gt; 0</text></g></svg>')


def _notebook(pictures, svg=SVG):
    nb = nbformat.v4.new_notebook()
    md = nbformat.v4.new_markdown_cell("What the picture shows.")
    md.metadata["pictures"] = pictures
    draw = nbformat.v4.new_code_cell("%grad f")
    if svg:
        draw.outputs = [nbformat.v4.new_output(
            "display_data", data={"image/svg+xml": svg, "text/plain": "f"})]
    nb.cells = [md, draw]
    return nb


def test_the_checker_finds_labels_operations_and_markup():
    nb = _notebook(["▶f", "= 2.507", "switch", "x > 0", "#8f8f8f", "stroke-dasharray",
                    'stroke="#8f8f8f"'])
    assert problems(nb) == []


def test_the_checker_refuses_what_is_not_drawn():
    wrong = problems(_notebook(["= 2", "◀f", "#fde2c6", "swi"]))
    assert len(wrong) == 1
    assert "'= 2', '◀f', '#fde2c6', 'swi'" in wrong[0]
    assert "describes pictures, but the next code cell draws none" in \
        problems(_notebook(["▶f"], svg=None))[0]


def test_the_checker_refuses_an_undescribed_drawing():
    nb = _notebook(["▶f"])
    del nb.cells[0].metadata["pictures"]
    assert "does not describe its pictures" in problems(nb)[0]
