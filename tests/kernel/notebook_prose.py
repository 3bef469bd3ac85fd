"""What a notebook's prose says of its pictures, checked against them.

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

test_notebooks.py applies `problems` to each tutorial as executed on each backend;
test_notebook_pictures.py tests the checker itself.  Plots (PNG, from %plot) are not
drawings in this sense.
"""

import html
import re

#: an element looked up in the SVG markup, not in the labels
MARKUP = re.compile(r'#[0-9a-fA-F]{6}|[a-z-]+="[^"]*"|stroke-dasharray')
LABEL = re.compile(r"<text\b[^>]*>([^<]*)</text>")


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
