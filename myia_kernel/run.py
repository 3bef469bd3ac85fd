"""`python -m myia_kernel run NOTEBOOK [--html OUT] [--output NB]`: run a notebook
through the Myia kernel and write it as a self-contained HTML page (drawings inline).

No kernelspec needs to be installed: the kernel is started with this Python.  Markdown
cells are turned into HTML by a small converter (headings, paragraphs, lists, `code`,
**bold**, *italics*), enough for our notebooks.  A cell that fails stops the run with
an error, unless it is tagged `raises-exception` (as with nbclient).
"""

import argparse
import html
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import KernelManager

from .install import kernel_spec


class CellError(Exception):
    pass


class _Manager(KernelManager):
    """A KernelManager for this Python's Myia kernel, without an installed kernelspec."""

    @property
    def kernel_spec(self):
        return KernelSpec(resource_dir=str(Path(__file__).parent), **kernel_spec())


def execute_notebook(nb, timeout=300):
    """Run the code cells of the notebook dict `nb` in place (outputs, counts)."""
    # Local sockets in a private folder (TCP without keys makes ipykernel warn).
    sockets = tempfile.mkdtemp(prefix="myia-run-")
    km = _Manager(transport="ipc", ip=os.path.join(sockets, "kernel"))
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=120)
        for cell in nb["cells"]:
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            msg_id = kc.execute(source)
            outputs, count = _collect(kc, msg_id, timeout)
            reply = kc.get_shell_msg(timeout=timeout)
            while reply["parent_header"].get("msg_id") != msg_id:
                reply = kc.get_shell_msg(timeout=timeout)
            cell["outputs"] = outputs
            cell["execution_count"] = reply["content"].get("execution_count", count)
            tags = cell.get("metadata", {}).get("tags", [])
            if reply["content"]["status"] == "error" and "raises-exception" not in tags:
                raise CellError(f"a cell failed:\n{source}\n\n"
                                + "\n".join(reply["content"].get("traceback", [])))
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
        shutil.rmtree(sockets, ignore_errors=True)
    return nb


def _collect(kc, msg_id, timeout):
    outputs, count = [], None
    while True:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "status" and content["execution_state"] == "idle":
            return outputs, count
        if kind == "execute_input":
            count = content.get("execution_count")
        elif kind == "stream":
            if outputs and outputs[-1]["output_type"] == "stream" and \
                    outputs[-1]["name"] == content["name"]:
                outputs[-1]["text"] += content["text"]
            else:
                outputs.append({"output_type": "stream", "name": content["name"],
                                "text": content["text"]})
        elif kind in ("display_data", "execute_result"):
            out = {"output_type": kind, "data": content["data"],
                   "metadata": content.get("metadata", {})}
            if kind == "execute_result":
                out["execution_count"] = content.get("execution_count")
            outputs.append(out)
        elif kind == "error":
            outputs.append({"output_type": "error", "ename": content["ename"],
                            "evalue": content["evalue"], "traceback": content["traceback"]})


# ---- HTML ----------------------------------------------------------------------------

# (the page is wide enough for a 1,000 px output column, the width the drawings are
# made legible at: see myia.viz.fit)
CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; max-width: 1140px;
       margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.5; }
.cell { margin: 1.2em 0; }
.input { display: flex; }
.prompt { color: #307fc1; font-family: monospace; min-width: 5.5em; padding-top: .5em; }
.out-prompt { color: #bf5b3d; }
pre { margin: 0; padding: .5em .7em; overflow-x: auto; font-size: 13px; }
.source { background: #f6f8fa; border: 1px solid #e1e4e8; border-radius: 4px; flex: 1; }
.outputs { margin-left: 5.5em; }
.output { margin: .4em 0; overflow-x: auto; }
.stderr { background: #fff5f0; }
.error { background: #fde8e8; color: #8a1c1c; }
.output svg { max-width: 100%; height: auto; }
code { background: #f3f3f3; padding: 0 .25em; border-radius: 3px; }
"""


def _inline(text):
    parts = re.split(r"(`[^`]+`)", text)
    out = []
    for p in parts:
        if p.startswith("`") and p.endswith("`") and len(p) > 1:
            out.append(f"<code>{html.escape(p[1:-1])}</code>")
        else:
            p = html.escape(p)
            p = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", p)
            p = re.sub(r"(?<!\*)\*(?!\s)(.+?)(?<!\s)\*(?!\*)", r"<em>\1</em>", p)
            out.append(p)
    return "".join(out)


def markdown_to_html(text):
    """A small Markdown subset: headings, paragraphs, bullet lists, inline code."""
    blocks, para, items = [], [], []

    def flush():
        if para:
            blocks.append("<p>" + _inline(" ".join(para)) + "</p>")
            para.clear()
        if items:
            blocks.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in items) + "</ul>")
            items.clear()

    for line in text.split("\n"):
        m = re.match(r"^(#{1,6})\s+(.*)$", line)
        if m:
            flush()
            n = len(m.group(1))
            blocks.append(f"<h{n}>{_inline(m.group(2))}</h{n}>")
        elif re.match(r"^\s*[*-]\s+", line):
            if para:
                flush()
            items.append(re.sub(r"^\s*[*-]\s+", "", line))
        elif not line.strip():
            flush()
        elif items and line.startswith("  "):
            items[-1] += " " + line.strip()
        else:
            if items:
                flush()
            para.append(line.strip())
    flush()
    return "\n".join(blocks)


def _highlight(code):
    try:
        # import here: pygments is optional (without it, the code is plain text)
        from pygments import highlight
        # import here: pygments is optional, as above
        from pygments.formatters import HtmlFormatter
        # import here: pygments is optional, as above
        from pygments.lexers import PythonLexer

        return highlight(code, PythonLexer(), HtmlFormatter(nowrap=True, noclasses=True))
    except ImportError:  # pragma: no cover
        return html.escape(code)


def _svg_inline(svg):
    svg = re.sub(r"<\?xml[^>]*\?>\s*", "", svg)
    return re.sub(r"<!DOCTYPE[^>]*>\s*", "", svg)


def _output_html(out):
    kind = out["output_type"]
    if kind == "stream":
        return f'<pre class="output {out["name"]}">{html.escape(out["text"])}</pre>'
    if kind == "error":
        text = "\n".join(out["traceback"])
        return f'<pre class="output error">{html.escape(text)}</pre>'
    data = out["data"]
    if "image/svg+xml" in data:
        return f'<div class="output">{_svg_inline(data["image/svg+xml"])}</div>'
    if "image/png" in data:
        return (f'<div class="output"><img alt="{html.escape(data.get("text/plain", ""))}" '
                f'src="data:image/png;base64,{data["image/png"]}"></div>')
    if "text/html" in data:
        return f'<div class="output">{data["text/html"]}</div>'
    return f'<pre class="output">{html.escape(data.get("text/plain", ""))}</pre>'


def notebook_to_html(nb, title="Myia notebook"):
    cells = []
    for cell in nb["cells"]:
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "markdown":
            cells.append(f'<div class="cell markdown">{markdown_to_html(source)}</div>')
            continue
        if cell["cell_type"] != "code":
            continue
        n = cell.get("execution_count") or " "
        outs = "".join(_output_html(o) for o in cell.get("outputs", []))
        cells.append(
            f'<div class="cell code"><div class="input"><div class="prompt">In [{n}]:</div>'
            f'<pre class="source">{_highlight(source)}</pre></div>'
            f'<div class="outputs">{outs}</div></div>')
    body = "\n".join(cells)
    return (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title><style>{CSS}</style></head><body>\n{body}\n</body></html>\n")


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m myia_kernel run",
                                description="Run a notebook through the Myia kernel.")
    p.add_argument("notebook")
    p.add_argument("--html", metavar="OUT", help="write the executed notebook as HTML")
    p.add_argument("--output", metavar="NB", help="write the executed notebook (.ipynb)")
    p.add_argument("--timeout", type=float, default=300, help="seconds per cell")
    args = p.parse_args(argv)
    path = Path(args.notebook)
    nb = json.loads(path.read_text(encoding="utf-8"))
    try:
        execute_notebook(nb, timeout=args.timeout)
    except CellError as e:
        print(f"error: {path}: {e}", file=sys.stderr)
        return 1
    if args.output:
        Path(args.output).write_text(json.dumps(nb, indent=1) + "\n", encoding="utf-8")
        print(f"Wrote {Path(args.output).resolve()}")
    if args.html:
        out = Path(args.html)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(notebook_to_html(nb, title=path.stem), encoding="utf-8")
        print(f"Wrote {out.resolve()}")
    if not args.html and not args.output:
        print(f"{path}: all cells ran")
    return 0
