"""The kernel through jupyter_client: a real kernel process, started from the kernelspec
installed in a private Jupyter folder (one kernel for this module and each backend, per
pytest-xdist worker: each test defines what it uses)."""

import time

import pytest

from ..conftest import BACKENDS
from .kernel_env import collect_iopub, execute, start_kernel
from .test_session import embedded_svg


@pytest.fixture(scope="module", params=BACKENDS)
def kernel(request):
    km, kc = start_kernel(backend=request.param)
    kc.backend = request.param
    yield km, kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


@pytest.fixture
def kc(kernel):
    return kernel[1]


def of_type(outputs, kind):
    return [m for m in outputs if m["msg_type"] == kind]


def test_kernel_info(kc):
    info = kc.kernel_info(reply=True, timeout=30)["content"]
    lang = info["language_info"]
    assert info["implementation"] == "myia"
    assert lang["name"] == "python"
    assert lang["mimetype"] == "text/x-python"
    assert lang["file_extension"] == ".py"
    assert lang["pygments_lexer"] == "ipython3"
    assert lang["codemirror_mode"] == "python"
    assert "debugger" not in info.get("supported_features", [])
    assert "Myia" in info["banner"]


def test_the_kernel_runs_on_the_backend_of_its_environment(kc):
    reply, outputs = execute(kc, "%backend")
    assert reply["status"] == "ok"
    text = "".join(m["content"].get("text", "") or m["content"].get("data", {}).get(
        "text/plain", "") for m in outputs)
    assert f"* {kc.backend}" in text


def test_a_definition_and_an_execute_result(kc):
    reply, outputs = execute(kc, "def square(x):\n    return x * x\nsquare(3.0)")
    assert reply["status"] == "ok"
    (result,) = of_type(outputs, "execute_result")
    assert result["content"]["data"]["text/plain"] == "9.0"
    assert result["content"]["execution_count"] == reply["execution_count"]
    reply, outputs = execute(kc, "grad(square)(3.0)")
    assert of_type(outputs, "execute_result")[0]["content"]["data"]["text/plain"] == "6.0"


def test_definitions_only_give_no_result(kc):
    reply, outputs = execute(kc, "def cube(x):\n    return x * x * x")
    assert reply["status"] == "ok"
    assert outputs == []


def test_grad_magic_draws_svg(kc):
    execute(kc, "def poly(x):\n    return x * x * x + 2.0 * x")
    reply, outputs = execute(kc, "%grad poly --view all")
    assert reply["status"] == "ok"
    displays = of_type(outputs, "display_data")
    assert len(displays) == 3  # the transform, then the primal and the adjoint optimized
    for d in displays:
        data = d["content"]["data"]
        assert data["image/svg+xml"].lstrip().startswith(("<?xml", "<svg"))
        assert embedded_svg(data["text/html"]) == data["image/svg+xml"]
        assert "graph @" in data["text/plain"]  # the text IR
    text = "".join(m["content"]["text"] for m in of_type(outputs, "stream"))
    assert "the transform" in text and "adjoint/primal operations" in text


def test_ir_magic_draws_svg(kc):
    execute(kc, "def twice(x):\n    return x + x")
    reply, outputs = execute(kc, "%ir twice")
    assert reply["status"] == "ok"
    (d,) = of_type(outputs, "display_data")
    assert "<svg" in d["content"]["data"]["image/svg+xml"]
    assert "add(" in d["content"]["data"]["text/plain"]


SQUARE = "def square(x):\n    return x * x"


def test_an_error_shows_the_cell_line_and_a_caret(kc):
    execute(kc, SQUARE)
    reply, outputs = execute(kc, "def broken(x):\n    y = x * 2.0\n    return y + undefined_name")
    assert reply["status"] == "error"
    assert reply["ename"] == "MyiaNameError"
    assert "undefined_name" in reply["evalue"]
    (err,) = of_type(outputs, "error")
    tb = err["content"]["traceback"]
    assert "    return y + undefined_name" in tb
    caret = tb[tb.index("    return y + undefined_name") + 1]
    assert caret == "               " + "^" * len("undefined_name")
    assert any("line 3" in line for line in tb)
    assert not any("site-packages" in line or "myia/parser" in line for line in tb)
    # the session survives, and the broken def did not join it
    reply, outputs = execute(kc, "square(2.0)")
    assert reply["status"] == "ok"
    reply, _ = execute(kc, "broken(1.0)")
    assert reply["status"] == "error" and "broken" in reply["evalue"]


def test_a_runtime_error_points_at_the_expression(kc):
    execute(kc, SQUARE)
    reply, outputs = execute(kc, "square(2.0) + (1.0, 2.0)")
    assert reply["status"] == "error"
    tb = of_type(outputs, "error")[0]["content"]["traceback"]
    assert "    square(2.0) + (1.0, 2.0)" in tb  # the user's text, not the wrapper
    assert not any("__cell_expr__" in line for line in tb)


def test_unknown_magic_is_a_usage_error(kc):
    reply, outputs = execute(kc, "%nosuchmagic 1 2")
    assert reply["status"] == "error"
    assert reply["ename"] == "UsageError"
    assert reply["evalue"] == "Line magic function `%nosuchmagic` not found."


def test_print_in_a_python_cell_reaches_the_client(kc):
    execute(kc, SQUARE)
    reply, outputs = execute(kc, "%%python\nprint('hello from python')\ndata = 3.5")
    assert reply["status"] == "ok"
    streams = of_type(outputs, "stream")
    assert any(m["content"]["name"] == "stdout" and "hello from python" in m["content"]["text"]
               for m in streams)
    reply, outputs = execute(kc, "square(data)")
    assert of_type(outputs, "execute_result")[0]["content"]["data"]["text/plain"] == "12.25"


def test_redefinition_rebuilds_dependents(kc):
    execute(kc, "def inner(x):\n    return x + 1.0\n\ndef outer(x):\n    return inner(x) * 2.0")
    execute(kc, "d_outer = grad(outer)")
    reply, outputs = execute(kc, "outer(1.0), d_outer(1.0)")
    assert of_type(outputs, "execute_result")[0]["content"]["data"]["text/plain"] == "(4.0, 2.0)"
    reply, outputs = execute(kc, "def inner(x):\n    return x * x")
    assert reply["status"] == "ok"
    note = "".join(m["content"]["text"] for m in of_type(outputs, "stream"))
    assert "outer" in note and "d_outer" in note
    reply, outputs = execute(kc, "outer(3.0), d_outer(3.0)")
    assert of_type(outputs, "execute_result")[0]["content"]["data"]["text/plain"] == "(18.0, 12.0)"


def test_interrupt_stops_a_running_cell_and_keeps_the_session(kernel):
    km, kc = kernel
    execute(kc, "def spin(n):\n    s = 0.0\n    for i in range(n):\n        s = s + 1.0\n"
                "    return s")
    msg_id = kc.execute("spin(1000000000)")
    # wait until the cell runs, then interrupt it
    deadline = time.time() + 30
    while time.time() < deadline:
        msg = kc.get_iopub_msg(timeout=30)
        if (msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "execute_input"):
            break
    time.sleep(0.5)
    km.interrupt_kernel()
    reply = kc.get_shell_msg(timeout=30)
    assert reply["parent_header"]["msg_id"] == msg_id
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "KeyboardInterrupt"
    outputs = collect_iopub(kc, msg_id)
    assert [m["msg_type"] for m in outputs] == ["error"]
    assert km.is_alive()
    reply, outputs = execute(kc, "spin(3)")
    assert of_type(outputs, "execute_result")[0]["content"]["data"]["text/plain"] == "3.0"


def test_complete_inspect_is_complete(kc):
    execute(kc, SQUARE)
    content = kc.complete("%gr", reply=True, timeout=30)["content"]
    assert content["matches"] == ["%grad"]
    content = kc.complete("squ", reply=True, timeout=30)["content"]
    assert "square" in content["matches"]
    assert content["cursor_start"] == 0 and content["cursor_end"] == 3
    content = kc.complete("np.tan", reply=True, timeout=30)["content"]
    assert "np.tanh" in content["matches"]
    content = kc.inspect("square", reply=True, timeout=30)["content"]
    assert content["found"]
    assert "Signature: square(x)" in content["data"]["text/plain"]

    def is_complete(code):
        msg_id = kc.is_complete(code)
        reply = kc.get_shell_msg(timeout=30)
        assert reply["parent_header"]["msg_id"] == msg_id
        return reply["content"]

    assert is_complete("square(2.0)")["status"] == "complete"
    assert is_complete("def f(x):")["status"] == "incomplete"
    assert is_complete("def f(x):")["indent"] == "    "
    assert is_complete("def f(x):\n    return x\n")["status"] == "complete"
    assert is_complete("def f(x):\n    return x\n    ")["status"] == "complete"
    assert is_complete("square(2.0")["status"] == "incomplete"
    assert is_complete("x = )")["status"] == "invalid"


def test_silent_execution_publishes_nothing(kc):
    execute(kc, SQUARE)
    msg_id = kc.execute("square(5.0)", silent=True)
    reply = kc.get_shell_msg(timeout=30)
    assert reply["content"]["status"] == "ok"
    assert collect_iopub(kc, msg_id) == []


def test_a_long_compile_shows_a_status_line_that_goes(kc):
    # make every compile "long" in the kernel process, then put it back
    set_up = ("%%python\nimport myia_kernel.session as _s\n"
              "_s.STATUS_AFTER, _s.STATUS_EVERY = 0.0, 0.01")
    assert execute(kc, set_up)[0]["status"] == "ok"
    try:
        execute(kc, "def slow_q(x, n):\n    i = 0\n    while i < n:\n        x = np.sin(x) * 1.1\n"
                    "        i = i + 1\n    return x")
        reply, outputs = execute(kc, "grad(grad(grad(slow_q)))(0.3, 4)")
    finally:
        execute(kc, "%%python\n_s.STATUS_AFTER, _s.STATUS_EVERY = 1.0, 0.5")
    assert reply["status"] == "ok"
    shown = [m for m in outputs if m["msg_type"] in ("display_data", "update_display_data")]
    assert shown and shown[0]["msg_type"] == "display_data"
    ids = {m["content"]["transient"]["display_id"] for m in shown}
    assert len(ids) == 1  # one line, updated in place
    assert shown[0]["content"]["data"]["text/plain"].startswith("compiling ")
    assert shown[-1]["msg_type"] == "update_display_data"
    assert shown[-1]["content"]["data"]["text/plain"] == ""  # and emptied at the end
    assert of_type(outputs, "execute_result")
