"""The checker of tests/kernel/notebook_prose.py (which test_notebooks.py applies to
each tutorial, executed on each backend), on small made-up notebooks: it finds what is
drawn and refuses what is not."""

import nbformat

from .notebook_prose import problems


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
