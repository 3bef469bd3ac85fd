"""The pictures a student sees, through the kernel's session: every `%grad` view and
`%ir` stage of the test programs (polynomial, branch, 10-step loop, closure,
recursion, MLP loss, grad of grad) is legible at notebook width (the median label at
least 9 px once shown 1,000 px wide), and the transform names what reverse mode does
(▶ and ◀ graphs, each backward step boxed under the forward node it undoes, ∂ names,
values and sensitivities)."""

import re
import shutil

import pytest

from myia.viz.fit import COLUMN_PX, MIN_LABEL_PX, label_px, svg_width_pt
from myia_kernel.session import Session

pytestmark = pytest.mark.skipif(shutil.which("dot") is None,
                                reason="Graphviz's dot is not installed")

PROGRAMS = {
    "polynomial": ("def poly(x):\n    return 3.0 * x ** 3 + 2.0 * x * x - x + 1.0",
                   "poly", "2.0"),
    "branch": ("def branch(x):\n    if x > 0.0:\n        return x * x\n"
               "    else:\n        return -x * 3.0", "branch", "2.0"),
    "loop": ("def loop(x):\n    y = x\n    for i in range(10):\n        y = np.sin(y) * x\n"
             "    return y", "loop", "0.5"),
    "closure": ("def closure(x, w):\n    def inner(y):\n        return y * w + x\n"
                "    return inner(x) * inner(w)", "closure", "2.0 3.0"),
    "recursion": ("def power(x, n):\n    if n == 0:\n        return 1.0\n"
                  "    return x * power(x, n - 1)", "power", "2.0 3"),
    "mlp loss": ("def mlp(W1, b1, W2, x, y):\n    h = np.tanh(x @ W1 + b1)\n"
                 "    out = h @ W2\n    return np.mean((out - y) ** 2)", "mlp",
                 "np.ones((3, 4))*0.1 np.zeros(4) np.ones((4, 1)) np.ones((5, 3)) "
                 "np.zeros((5, 1))"),
}


def run(session, code):
    r = session.execute(code)
    assert r.status == "ok", r.error
    return r


def svgs(result):
    return [d["data"]["image/svg+xml"] for d in result.displays()
            if "image/svg+xml" in d["data"]]


@pytest.fixture(scope="module")
def session():
    s = Session()
    run(s, "import numpy as np")
    return s


@pytest.mark.parametrize("program", list(PROGRAMS))
def test_every_picture_is_legible_at_notebook_width(session, program):
    source, name, args = PROGRAMS[program]
    run(session, source)
    commands = [f"%grad {name}", f"%grad {name} 0 {args} --view values",
                f"%grad {name} 0 {args} --view optimized", f"%ir {name}",
                f"%ir {name} optimized {args}", f"%ir {name} --passes {args}"]
    if program != "mlp loss":  # grad of grad needs a scalar input
        commands.append(f"%grad {name} 0 {args} --order 2")
    for command in commands:
        pictures = svgs(run(session, command))
        assert pictures, command
        for svg in pictures:
            px = label_px(svg)
            assert px >= MIN_LABEL_PX, (
                f"{command}: labels of {px:.1f} px in a picture "
                f"{svg_width_pt(svg) * 4 / 3:.0f} px wide, shown {COLUMN_PX} px wide")


def test_the_transform_names_what_reverse_mode_does(session):
    run(session, "def f(x, w, b):\n    y = x * w\n    z = np.tanh(y + b)\n    return z * z")
    r = run(session, "%grad f (1, 2)")
    text = r.text()
    assert "the transform" in text and "▶ forward" in text and "◀ backward" in text
    (svg,) = svgs(r)
    assert "▶f" in svg and "◀f" in svg
    # each backward step is boxed under the forward node it undoes, with its line
    assert "◀ y = x * w (line 2)" in svg and "◀ tanh in z = np.tanh(y + b) (line 3)" in svg
    # sensitivities named after the user's variables; the inputs in signature order
    assert "∂w" in svg and "∂b" in svg
    row = re.search(r'id="(\w+)_inputs".*?</g>', svg, re.S)
    assert row is not None
    order = [m for m in re.findall(r">(x|w|b)</text>", row.group(0))]
    assert order == ["x", "w", "b"]


def test_values_and_sensitivities_on_the_nodes(session):
    run(session, "def sq(x):\n    return x * x")
    r = run(session, "%grad sq 0 3.0 --view values")
    assert "grad(sq)(3) = 6.0" in r.text()
    (svg,) = svgs(r)
    # the forward value x * x = 9, the seed 1 and the total sensitivity ∂x = 6
    for shown in ("= 9", "= 1", "= 6"):
        assert shown in svg, shown


def test_a_gradient_never_goes_under_another_variables_name(session):
    source, name, args = PROGRAMS["mlp loss"]
    run(session, source)
    r = run(session, f"%grad {name} (0, 1) {args} --view optimized")
    adjoint = r.displays()[-1]["data"]["text/plain"]  # the adjoint's text IR
    assert adjoint.startswith("graph @grad_mlp(")
    assert "%∂W1 = " in adjoint and "%∂b1 = " in adjoint
    # the bprop rule of matmul names its inputs' gradients da and db: they stay there
    assert not re.search(r"%d[ab]\b", adjoint)
    # every operation of the optimized adjoint keeps a source line (rewrites and
    # inlined library code take the line of the node they came from)
    lines = [ln for ln in adjoint.splitlines() if re.match(r"\s+%\S+ = (?!make_tuple)", ln)]
    assert lines and all("#" in ln for ln in lines), "\n".join(lines)


def test_a_loop_is_one_box_of_the_overview(session):
    run(session, PROGRAMS["loop"][0])
    r = run(session, "%grad loop")
    first = svgs(r)[0]
    assert "overview" in r.displays()[0]["data"]["text/html"]
    assert "a loop: its graphs call each other" in first


LABEL = re.compile(r"<text\b[^>]*>([^<]*)</text>")
CLUSTER_TITLE = re.compile(r'<g id="cluster_[^"]*" class="cluster">.*?<text[^>]*x="([\d.]+)"'
                           r'[^>]*>([^<]*)<', re.S)


@pytest.mark.parametrize("source", [
    "def square(x):\n    return x * x",
    "def mul(x, w):\n    return x * w",
    "def chain(x):\n    y = x * x\n    z = np.sin(y)\n    return np.exp(z)",
    "def f(x, w):\n    y = x * w\n    return np.tanh(y) * w",
])
def test_the_graphs_read_left_to_right_wrapper_forward_backward(session, source):
    # (dot's crossing minimization drew ◀square left of ▶square, and ▶g left of ◀g)
    run(session, source)
    name = source.split("(")[0][len("def "):]
    (svg,) = svgs(run(session, f"%grad {name}"))
    x = {title: float(pos) for pos, title in CLUSTER_TITLE.findall(svg)}
    assert x[f"grad_{name}"] < x[f"▶{name}"] < x[f"◀{name}"], x


def test_a_graphs_name_is_never_cut_in_a_label(session):
    # (`switch(·, @repeat_sin:for_b…, …)` named no graph of the drawing)
    run(session, "def repeat_sin(x, n):\n    for i in range(n):\n        x = np.sin(x)\n"
                 "    return x")
    for command in ("%ir repeat_sin", "%grad repeat_sin"):
        labels = [t for svg in svgs(run(session, command)) for t in LABEL.findall(svg)]
        assert not [t for t in labels if "@" in t and "…" in t], command
        assert any("@repeat_sin:for_body" in t or "@▶repeat_sin:for_body" in t
                   for t in labels), command
