"""Values and drawings as Jupyter MIME bundles.

    bundle_for(value, session)   {"text/plain": ...} for data; a drawing for an IRView
    ir_bundle(view, session)     {"image/svg+xml": <svg>, "text/plain": <text IR>}

Programs are drawn by `IRView.render()` (myia.viz).  Without Graphviz's `dot` program
there is no picture: the session warns once, plainly, and the bundle holds the text IR
and the DOT source.
"""

import inspect
import re
import types

import numpy as np

NO_DOT_WARNING = (
    "warning: Graphviz's `dot` program was not found, so graphs are shown as text (the "
    "IR and its DOT source), not pictures.  Install it to see them drawn:\n"
    "    sudo apt-get install graphviz    (Debian/Ubuntu)\n"
    "    brew install graphviz            (macOS)")


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
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, np.ndarray):
        return f"ndarray({value.dtype}, shape={value.shape})"
    if isinstance(value, np.generic):
        return f"{type(value).__name__} (NumPy scalar)"
    if isinstance(value, tuple):
        return "tuple(" + ", ".join(describe_type(v) for v in value) + ")"
    mode = getattr(value, "mode", None)
    if type(value).__name__ == "GradFunction":
        return f"a {mode} function (myia.{mode})"
    if type(value).__name__ == "HessianFunction":
        return "a hessian function (myia.hessian)"
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
    from myia.viz import VizUnavailable, to_svg

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
        import sys

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


def ir_bundle(view, session=None):
    """A program drawn (image/svg+xml) with its text IR (text/plain)."""
    digraph = view_digraph(view, session)
    if digraph is None:
        return {"text/plain": str(view)}
    return digraph_bundle(digraph, session, text=str(view))
