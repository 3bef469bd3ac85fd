"""The tutorials, written as HTML by `python -m myia_kernel run`, fit a browser window
1,000 px wide: headless Chromium loads each page with a small script that measures every
picture (`svg`, `img`) and the page itself, and writes the numbers into the page, which
`--dump-dom` prints; no picture may be wider than the page, nor the page scroll sideways.
A screenshot of each whole page is kept, for people, in build/screenshots/.

Skipped only where no Chromium is installed (`make chromium` installs it).
"""

import html
import json
import re
import shutil
import struct
import subprocess
import sys

import pytest

from .kernel_env import ROOT

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
OUT = ROOT / "build" / "screenshots"
WINDOW_PX = 1000
TUTORIALS = ["01-tour", "04-reverse-mode-by-hand"]

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium or chromium-browser on PATH (`make chromium`, "
    "or e.g. `sudo apt-get install chromium`)")

# Runs after the page (and its images) loaded; the result goes into the page, as JSON.
MEASURE = """<script>
window.addEventListener("load", function () {
  var doc = document.documentElement;
  var pictures = Array.prototype.slice.call(document.querySelectorAll("svg, img"))
    .filter(function (e) { return !(e.parentElement && e.parentElement.closest("svg")); })
    .map(function (e) {
      var r = e.getBoundingClientRect();
      return {tag: e.tagName.toLowerCase(), left: r.left, right: r.right, width: r.width};
    });
  var out = document.createElement("pre");
  out.id = "myia-widths";
  out.textContent = JSON.stringify({clientWidth: doc.clientWidth,
                                    scrollWidth: doc.scrollWidth,
                                    scrollHeight: doc.scrollHeight, pictures: pictures});
  document.body.appendChild(out);
});
</script>"""


def chromium(*args):
    r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", *args],
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, f"chromium {' '.join(args)} failed:\n{r.stderr[-2000:]}"
    return r.stdout


def measure(page, height=1400):
    """What the page measures in a window WINDOW_PX wide: {clientWidth, scrollWidth,
    scrollHeight, pictures: [{tag, left, right, width}]} (CSS pixels)."""
    probe = page.with_name(page.stem + ".measure.html")
    text = page.read_text(encoding="utf-8")
    assert "</body>" in text
    probe.write_text(text.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    dom = chromium(f"--window-size={WINDOW_PX},{height}", "--virtual-time-budget=5000",
                   "--dump-dom", probe.as_uri())
    m = re.search(r'<pre id="myia-widths">(.*?)</pre>', dom, re.S)
    assert m, "the measuring script did not run (no #myia-widths in the dumped page)"
    return json.loads(html.unescape(m.group(1)))


def overflows(widths):
    """The pictures that stick out of the page, and whether the page scrolls sideways."""
    page = widths["clientWidth"]
    wide = [p for p in widths["pictures"]
            if p["width"] > page + 0.5 or p["right"] > page + 0.5]
    return wide, widths["scrollWidth"] > page


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", TUTORIALS)
def test_a_tutorial_fits_a_window_1000_px_wide(name):
    OUT.mkdir(parents=True, exist_ok=True)
    page = OUT / f"{name}.html"
    r = subprocess.run([sys.executable, "-m", "myia_kernel", "run",
                        str(ROOT / "notebooks" / f"{name}.ipynb"), "--html", str(page)],
                       capture_output=True, text=True, cwd=ROOT, timeout=240)
    assert r.returncode == 0, r.stderr
    widths = measure(page)
    drawn = page.read_text(encoding="utf-8").count("<svg")
    svgs = [p for p in widths["pictures"] if p["tag"] == "svg"]
    assert drawn and len(svgs) == drawn, "the script measured every drawing"
    assert widths["clientWidth"] >= WINDOW_PX - 20  # the window, less a scrollbar at most
    wide, scrolls = overflows(widths)
    assert not wide, f"pictures wider than the page ({widths['clientWidth']} px): {wide}"
    assert not scrolls, f"the page scrolls sideways: {widths['scrollWidth']} px wide"
    # the whole page as one picture, for people to look at
    shot = OUT / f"{name}.png"
    shot.unlink(missing_ok=True)
    chromium("--hide-scrollbars", f"--window-size={WINDOW_PX},{widths['scrollHeight']}",
             f"--screenshot={shot}", page.as_uri())
    assert png_size(shot) == (WINDOW_PX, widths["scrollHeight"])


def test_the_measure_sees_a_picture_wider_than_the_page(tmp_path):
    page = tmp_path / "wide.html"
    page.write_text('<!DOCTYPE html><html><body><p>text</p>'
                    '<svg width="3000" height="20"><rect width="3000" height="20"/></svg>'
                    '<img width="1500" height="10" src="data:image/png;base64,'
                    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk'
                    'YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="></body></html>',
                    encoding="utf-8")
    widths = measure(page)
    wide, scrolls = overflows(widths)
    assert [(p["tag"], p["width"]) for p in wide] == [("svg", 3000), ("img", 1500)]
    assert scrolls


# ---- a drawing in trusted and untrusted output -------------------------------------------
# JupyterLab renders text/html output as innerHTML; trusted, it then re-creates the
# scripts so that they run (attached to the page after); untrusted, its sanitizer has
# removed the scripts with their text first, and any <svg> tags (their text stays).  The page below does both with the HTML of
# each picture of an overview (JupyterLab itself is not installed here).

RENDER = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>
<div id="trusted"></div><div id="untrusted"></div>
<script>
var OUTPUTS = %s;
OUTPUTS.forEach(function (h) {
  var host = document.createElement("div");
  host.innerHTML = h;
  host.querySelectorAll("script").forEach(function (s) {
    var c = document.createElement("script");
    c.textContent = s.textContent;
    s.parentNode.replaceChild(c, s);
  });
  document.getElementById("trusted").appendChild(host);
  // (as the sanitizer: scripts go with their text, an <svg> goes and leaves its text)
  var bare = document.createElement("div");
  bare.innerHTML = h.replace(/<script[\\s\\S]*?<\\/script>/g, "");
  bare.querySelectorAll("svg").forEach(function (e) {
    e.replaceWith(document.createTextNode(e.textContent));
  });
  document.getElementById("untrusted").appendChild(bare);
});
window.addEventListener("load", function () {
  function seen(id) {
    var box = document.getElementById(id);
    return {
      svg: box.querySelectorAll("svg").length,
      img: Array.prototype.map.call(box.querySelectorAll("img"), function (i) {
        return {natural: i.naturalWidth, shown: i.getBoundingClientRect().width}; }),
      titles: box.querySelectorAll("svg title").length,
      text: box.innerText.trim()
    };
  }
  var out = document.createElement("pre");
  out.id = "myia-seen";
  out.textContent = JSON.stringify({trusted: seen("trusted"), untrusted: seen("untrusted")});
  document.body.appendChild(out);
});
</script></body></html>"""


@pytest.mark.timeout(120)
def test_a_drawing_shows_in_trusted_and_untrusted_output(tmp_path):
    from myia_kernel.session import Session

    s = Session(backend="vm")
    assert s.execute("import numpy as np").status == "ok"
    r = s.execute("def loop(x, n):\n    i = 0\n    while i < n:\n        x = np.sin(x)\n"
                  "        i = i + 1\n    return x")
    assert r.status == "ok", r.error
    r = s.execute("%grad loop")  # an overview, then one picture per graph
    outputs = [d["data"]["text/html"] for d in r.displays()]
    assert len(outputs) > 1
    page = tmp_path / "outputs.html"
    # (`</` closes the page's own script: written `<\/` in the JSON)
    page.write_text(RENDER % json.dumps(outputs).replace("</", "<\\/"), encoding="utf-8")
    dom = chromium(f"--window-size={WINDOW_PX},1400", "--virtual-time-budget=5000",
                   "--dump-dom", page.as_uri())
    m = re.search(r'<pre id="myia-seen">(.*?)</pre>', dom, re.S)
    assert m, "the page's script did not run"
    seen = json.loads(html.unescape(m.group(1)))
    trusted, untrusted = seen["trusted"], seen["untrusted"]
    # trusted: each picture inline, with its tooltips (a <title> per node)
    assert trusted["svg"] >= len(outputs) and trusted["titles"] > 0 and not trusted["img"]
    # untrusted: each picture an image that decoded and shows, and no label spilled as
    # text: what is left to read is the captions
    assert untrusted["svg"] == 0 and len(untrusted["img"]) == len(outputs)
    assert all(i["natural"] > 0 and 0 < i["shown"] <= WINDOW_PX for i in untrusted["img"])
    captions = [line for line in untrusted["text"].splitlines() if line.strip()]
    assert len(captions) == len(outputs), captions
    assert captions[0].startswith("overview"), captions
