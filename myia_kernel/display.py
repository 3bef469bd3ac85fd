"""Values and drawings as Jupyter MIME bundles.

    is_data(value)                     whether compiled code returned data (not a function)
    bundle_for(value, session)         {"text/plain": ...} for data; a drawing for an IRView
    ir_bundle(view, session)           the drawing of a program, as one bundle
    picture_bundles(view, session)     the drawing as one bundle per picture

Programs are drawn by myia.viz.  A drawing too wide to read at notebook width becomes
an overview and one picture per graph (`myia.viz.pictures`).  Each picture is sent as
`text/html` (see `html_of`) and `image/svg+xml` (nbconvert's PDF, other front ends),
with the text IR as `text/plain`.  Without Graphviz's `dot` program there is no
picture: the session warns once, plainly, and the bundle holds the text IR and the
DOT source.
"""

import base64
import html
import inspect
import sys
import types

import numpy as np

from myia.introspect import class_name, library_class
from myia.viz import VizUnavailable, pictures, to_svg

NO_DOT_WARNING = (
    "warning: Graphviz's `dot` program was not found, so graphs are shown as text (the "
    "IR and its DOT source), not pictures.  Install it to see them drawn:\n"
    "    sudo apt-get install graphviz    (Debian/Ubuntu)\n"
    "    brew install graphviz            (macOS)")


def is_data(value):
    """True for the values compiled code returns as data (not functions)."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes,
                                           np.ndarray, np.generic)):
        return True
    return isinstance(value, tuple) and all(is_data(v) for v in value)


def format_value(value):
    """The text/plain form of a result: Python's repr, NumPy scalars as numbers,
    functions as `<function name(signature)>`."""
    if isinstance(value, types.FunctionType):
        try:
            sig = str(inspect.signature(value))
        except (TypeError, ValueError):  # pragma: no cover
            sig = "(...)"
        return f"<function {value.__name__}{sig}>"
    if isinstance(value, np.generic):
        return repr(value.item())
    if isinstance(value, tuple):
        inner = ", ".join(format_value(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return repr(value)


def describe_type(value):
    """A short name for the type of a value: float, ndarray(float64, shape=(3,))..."""
    if not library_class(type(value)):  # a user's object: its attributes are its code
        return f"{class_name(type(value))} (a Python object)"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, np.ndarray):
        return f"ndarray({value.dtype}, shape={value.shape})"
    if isinstance(value, np.generic):
        return f"{type(value).__name__} (NumPy scalar)"
    if isinstance(value, tuple):
        return "tuple(" + ", ".join(describe_type(v) for v in value) + ")"
    if type(value).__name__ == "GradFunction":  # (Myia's: library_class said so)
        return f"a {value.mode} function (myia.{value.mode})"
    if type(value).__name__ == "JacobianFunction":
        return f"a {value.kind} function (myia.{value.kind})"
    if callable(value) and not isinstance(value, type):
        return "function"
    return type(value).__name__


def is_ir_view(value):
    return hasattr(value, "op_count") and hasattr(value, "graph") and hasattr(value, "stage")


def bundle_for(value, session=None):
    """The MIME bundle of a cell's value."""
    if is_ir_view(value):
        return ir_bundle(value, session)
    if hasattr(value, "pipe") and hasattr(value, "source"):  # a graphviz.Digraph
        return digraph_bundle(value, session)
    rich = getattr(value, "_repr_mimebundle_", None)
    if callable(rich) and not isinstance(value, type):
        try:
            data = rich()
            if isinstance(data, tuple):
                data = data[0]
            if data:
                data = dict(data)
                data.setdefault("text/plain", format_value(value))
                return data
        except Exception:  # noqa: BLE001  a broken repr must not break the cell
            pass
    return {"text/plain": format_value(value)}


def render_svg(digraph):
    """(svg text, None) or (None, reason) when Graphviz cannot draw ("no-dot", or the
    reason in one line, after myia.viz.to_svg's retries with simpler layouts)."""
    try:
        return to_svg(digraph), None
    except VizUnavailable as e:
        return None, "no-dot" if "not installed" in e.message else e.message
    except (OSError, RuntimeError) as e:
        return None, f"Graphviz failed: {' '.join(str(e).split())[:200]}"


def _warn(session, reason):
    """One short line per kind of failure and session (never the same one twice)."""
    text = NO_DOT_WARNING if reason == "no-dot" else (
        f"warning: no picture: {reason}; the program is shown as text")
    if session is None:
        print(text, file=sys.stderr)
        return
    if reason == "no-dot" and session.warned_no_dot:
        session.print("(no picture: Graphviz's dot is not installed)", name="stderr")
        return
    if reason == "no-dot":
        session.warned_no_dot = True
    session.print(text, name="stderr")


def digraph_bundle(digraph, session=None, text=None):
    svg, problem = render_svg(digraph)
    if svg is not None:
        return {"image/svg+xml": svg, "text/plain": text or digraph.source}
    _warn(session, problem)
    if problem == "no-dot" or text is None:
        # without Graphviz the DOT text is the drawing a user can paste elsewhere
        plain = (text + "\n\n" if text else "") + "DOT source:\n" + digraph.source
        return {"text/plain": plain, "text/vnd.graphviz": digraph.source}
    return {"text/plain": text}


def view_digraph(view, session=None):
    """The graphviz.Digraph of an IRView (`IRView.render()`, from myia.viz), or None
    with a warning if it cannot be drawn."""
    try:
        return view.render()
    except Exception as e:  # noqa: BLE001  a drawing bug must not lose the cell
        msg = (f"warning: myia.viz could not draw this program ({type(e).__name__}: {e}); "
               f"showing its text")
        if session is not None:
            session.print(msg, name="stderr")
        return None


def html_of(svg, caption=None):
    """The picture as HTML that every front end shows, a notebook opened untrusted
    included (every notebook a student downloads): an <img> of the SVG, as wide as the
    column at most.  JupyterLab prefers text/html to image/svg+xml; in an untrusted
    notebook it sanitizes the HTML, which strips an inline <svg> and leaves its text
    (labels and tooltips run together), and shows no image/svg+xml at all, but it
    keeps an image's data URI.  Where the notebook is trusted (the cell just ran, or
    the notebook is signed), the script after it puts the SVG inline in the image's
    place, so that each node's tooltip (its source line and IR line) shows on hover;
    untrusted, the script is removed with its text and the image stays."""
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    head = (f'<div style="font-size: 0.85em; color: #555; margin: 0.4em 0">{_esc(caption)}'
            "</div>") if caption else ""
    alt = _esc(caption or "the program drawn")
    return (f'<div class="myia-drawing">{head}<img src="data:image/svg+xml;base64,{data}" '
            f'alt="{alt}" style="max-width: 100%; height: auto"></div>{_INLINE_SCRIPT}')


#: trusted output only (a sanitizer removes it): the <img> just before it becomes the
#: inline SVG it shows, scaled the same way
_INLINE_SCRIPT = """<script>(function () {
  var box = document.currentScript && document.currentScript.previousElementSibling;
  var img = box && box.querySelector("img");
  if (!img || !window.TextDecoder) return;
  var b64 = img.getAttribute("src").split(",")[1];
  var bytes = Uint8Array.from(atob(b64), function (c) { return c.charCodeAt(0); });
  var holder = document.createElement("div");
  holder.innerHTML = new TextDecoder("utf-8").decode(bytes);
  var svg = holder.querySelector("svg");
  if (!svg) return;
  svg.style.maxWidth = "100%";
  svg.style.height = "auto";
  img.replaceWith(svg);
})();</script>"""


def _esc(text):
    return html.escape(text, quote=True)


def picture_bundles(view, session=None, text=None, **options):
    """[bundle]: the drawing of a program (an IRView or a Graph) as one bundle per
    picture (one, or an overview and one per graph when too wide to read); the text
    IR goes with the first.  Options go to myia.viz.render (title, values, library...)."""
    text = str(view) if text is None else text
    try:
        parts = pictures(view, **options)
    except VizUnavailable as e:
        reason = "no-dot" if "not installed" in e.message else e.message
        _warn(session, reason)
        if reason == "no-dot":
            plain = text + "\n\nDOT source:\n" + e.source
            return [{"text/plain": plain, "text/vnd.graphviz": e.source}]
        return [{"text/plain": text}]
    except Exception as e:  # noqa: BLE001  a drawing bug must not lose the cell
        msg = (f"warning: myia.viz could not draw this program ({type(e).__name__}: {e}); "
               f"showing its text")
        if session is not None:
            session.print(msg, name="stderr")
        return [{"text/plain": text}]
    out = []
    for k, (caption, svg) in enumerate(parts):
        out.append({"text/html": html_of(svg, caption if len(parts) > 1 else None),
                    "image/svg+xml": svg,
                    "text/plain": text if k == 0 else f"({caption})"})
    return out


def ir_bundle(view, session=None, **options):
    """A program drawn, as one bundle: its pictures in one HTML block (the first as
    image/svg+xml too), with its text IR."""
    bundles = picture_bundles(view, session, **options)
    if len(bundles) == 1:
        return bundles[0]
    out = dict(bundles[0])
    out["text/html"] = "".join(b["text/html"] for b in bundles)
    return out
