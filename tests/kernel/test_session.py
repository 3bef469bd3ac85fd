"""The Session in process (no Jupyter): cells, definitions, errors, magics, completion.

Every test runs with a session on "vm" and one on "llvm" (the `backend` fixture,
tests/conftest.py)."""

import base64
import re
from html.parser import HTMLParser

import numpy as np
import pytest

from myia.viz.draw import MARKS
from myia_kernel.introspection import is_complete
from myia_kernel.session import Session


@pytest.fixture
def s(backend):
    return Session(backend=backend)


def ok(session, code):
    r = session.execute(code)
    assert r.status == "ok", "\n".join(r.error["traceback"])
    return r


def err(session, code):
    r = session.execute(code)
    assert r.status == "error", r
    return r.error


def result_text(r):
    (res,) = [o for o in r.outputs if o["output_type"] == "execute_result"]
    return res["data"]["text/plain"]


# ---- cells ---------------------------------------------------------------------------


def test_a_new_session_has_the_usual_names(s):
    import math

    import myia

    ns = s.namespace
    assert ns["np"] is np and ns["math"] is math
    for name in ("grad", "value_and_grad", "jvp", "vjp", "jacfwd", "jacrev", "jacobian",
                 "hessian", "jet", "stop_gradient", "custom_vjp", "custom_jvp",
                 "checkpoint"):
        assert ns[name] is getattr(myia, name)


def test_defs_join_and_the_last_expression_is_the_result(s):
    r = ok(s, "def f(x):\n    return x * x\n\nf(2.0)\nf(3.0)")
    assert r.value == 9.0 and result_text(r) == "9.0"
    assert "f" in s.user_names()


def test_a_semicolon_hides_the_result(s):
    r = ok(s, "1.0 + 2.0;")
    assert not r.has_value and r.outputs == []


def test_numpy_scalars_show_as_numbers(s):
    r = ok(s, "np.sum(np.ones(3))")
    assert result_text(r) == "3.0"


def test_assignments_bind_names(s):
    ok(s, "x = np.ones(3) * 2.0\na, (b, c) = 1.0, (2.0, 3)")
    assert np.array_equal(s.namespace["x"], np.full(3, 2.0))
    assert (s.namespace["a"], s.namespace["b"], s.namespace["c"]) == (1.0, 2.0, 3)
    r = ok(s, "def f(y):\n    return np.sum(x * y)\nf(a)")
    assert r.value == 6.0


def test_function_values_stay_callable_and_compilable(s):
    ok(s, "def f(x):\n    return x * x * x\ndf = grad(f)\nddf = grad(df)")
    assert s.namespace["df"](2.0) == 12.0  # callable from Python
    r = ok(s, "def g(x):\n    return df(x) + ddf(x)\ng(2.0)")  # and from subset code
    assert r.value == 24.0
    r = ok(s, "scale = (lambda k: lambda x: k * x)(3.0)\nscale(2.0)")
    assert r.value == 6.0
    # a lambda given a name, as in `f = lambda x: ...; jax.grad(f)(x)`
    r = ok(s, "cube = lambda x: x * x * x\ngrad(cube)(2.0)")
    assert r.value == 12.0 and s.namespace["cube"](2.0) == 8.0
    assert ok(s, "grad(grad(cube))(2.0)").value == 12.0


def test_host_transforms_run(s):
    ok(s, "def f(x):\n    return x * x * x")
    assert ok(s, "hessian(f)(2.0)").value == 12.0
    assert ok(s, "jvp(f, (2.0,), (1.0,))").value == (8.0, 12.0)
    out, vjp_fn = ok(s, "vjp(f, 2.0)").value
    assert out == 8.0 and vjp_fn(1.0) == (12.0,)


def test_mutual_recursion_in_one_cell(s):
    r = ok(s, "def even(n):\n    if n == 0:\n        return True\n    return odd(n - 1)\n\n"
              "def odd(n):\n    if n == 0:\n        return False\n    return even(n - 1)\n\n"
              "even(10), odd(7)")
    assert r.value == (True, True)


def test_imports_join_the_session(s):
    ok(s, "import math as m")
    assert ok(s, "m.sqrt(4.0)").value == 2.0


def test_python_cells(s, capsys):
    r = ok(s, "%%python\nimport numpy\nW = numpy.arange(3.0)\nprint('made W')\nW * 2")
    assert "made W" in capsys.readouterr().out
    assert np.array_equal(r.value, [0.0, 2.0, 4.0])
    assert ok(s, "np.sum(W)").value == 3.0


# ---- redefinition --------------------------------------------------------------------


def test_redefining_a_function_rebuilds_what_uses_it(s):
    ok(s, "def inner(x):\n    return x + 1.0\n\ndef outer(x):\n    return inner(x) * 2.0")
    ok(s, "d = grad(outer)\nv = outer(1.0)\n\ndef uses_d(x):\n    return d(x)")
    assert ok(s, "outer(1.0), d(1.0), v, uses_d(1.0)").value == (4.0, 2.0, 4.0, 2.0)
    r = ok(s, "def inner(x):\n    return x * x")
    note = r.text()
    assert "rebuilt after redefining inner" in note
    for name in ("outer", "d", "v", "uses_d"):
        assert name in note
    assert ok(s, "outer(3.0), d(3.0), v, uses_d(3.0)").value == (18.0, 12.0, 2.0, 12.0)


def test_a_python_value_change_rebuilds_the_functions_that_read_it(s):
    ok(s, "%%python\nW = 2.0")
    ok(s, "def f(x):\n    return W * x")
    assert ok(s, "f(1.0)").value == 2.0
    r = ok(s, "%%python\nW = 5.0")
    assert "f" in r.text()
    assert ok(s, "f(1.0)").value == 5.0


def test_parameters_named_like_globals_do_not_cause_rebuilds(s):
    ok(s, "def f(x):\n    return x * 2.0")
    r = ok(s, "x = 1.0")
    assert r.text() == ""


def test_a_dependent_that_no_longer_computes_is_removed(s):
    ok(s, "def f(x):\n    return x * 2.0\ny = f(1.0)")
    r = ok(s, "def f(x):\n    return x + (1.0, 2.0)")
    assert "y could not be recomputed" in r.text("stderr")
    assert "y" not in s.namespace


# ---- errors --------------------------------------------------------------------------


def test_a_name_error_shows_at_definition_with_a_caret(s):
    e = err(s, "def f(x):\n    return x + yy")
    assert e["ename"] == "MyiaNameError"
    tb = e["traceback"]
    assert tb[0] == "MyiaNameError: name `yy` is not defined"
    assert "Cell [1], line 2, column 16" in tb[1]
    assert tb[2:4] == ["    return x + yy", "               ^^"]
    assert "f" not in s.namespace  # it did not join the session


def test_a_failed_redefinition_keeps_the_old_function(s):
    ok(s, "def f(x):\n    return x * 2.0")
    err(s, "def f(x):\n    return {x}")
    assert ok(s, "f(2.0)").value == 4.0


def test_constructs_outside_the_subset_are_refused_at_definition(s):
    e = err(s, "def f(x):\n    return {x, x}")
    assert e["ename"] == "MyiaSyntaxError"
    assert "set" in e["evalue"]
    assert "    return {x, x}" in e["traceback"]


def test_python_syntax_errors(s):
    e = err(s, "def f(x)\n    return x")
    assert e["ename"] == "SyntaxError"
    assert "    def f(x)" in e["traceback"]


def test_runtime_errors_point_at_the_users_text(s):
    ok(s, "def f(x):\n    return x * 2.0")
    e = err(s, "y = 1.0\nf(y) + (1.0, 2.0)")
    tb = e["traceback"]
    assert "Cell [2], line 2" in tb[1]
    assert tb[2] == "    f(y) + (1.0, 2.0)"
    assert tb[3].startswith("    ^")
    assert not any("__cell_expr__" in line for line in tb)


def test_an_error_in_a_continuation_line(s):
    e = err(s, "q = (1.0 +\n     zz)")
    assert "Cell [1], line 2, column 6" in e["traceback"][1]
    assert e["traceback"][2:4] == ["    zz)", "    ^^"]


def test_statements_outside_cells_are_refused_before_anything_runs(s):
    e = err(s, "def f(x):\n    return x\nfor i in range(3):\n    pass")
    assert e["ename"] == "MyiaSyntaxError" and "`for`" in e["evalue"]
    assert "f" not in s.namespace
    e = err(s, "x = 1.0\nx += 1.0")
    assert "x = x + ..." in e["traceback"][-1]


def test_python_errors_show_the_cell_frames_only(s):
    e = err(s, "%%python\ndef boom():\n    return 1 / 0\nboom()")
    assert e["ename"] == "ZeroDivisionError"
    tb = e["traceback"]
    assert tb[0] == "Traceback (most recent call last):"
    assert "    return 1 / 0" in tb
    assert not any("myia_kernel" in line for line in tb)


def test_the_session_survives_interrupts_and_exits(s):
    ok(s, "def f(x):\n    return x")
    e = err(s, "%%python\nraise KeyboardInterrupt")
    assert e["ename"] == "KeyboardInterrupt"
    e = err(s, "%%python\nraise SystemExit(3)")
    assert e["ename"] == "UsageError"
    assert ok(s, "f(1.0)").value == 1.0


# ---- magics --------------------------------------------------------------------------


def test_unknown_magics_are_usage_errors(s):
    e = err(s, "%foo 1")
    assert (e["ename"], e["evalue"]) == ("UsageError", "Line magic function `%foo` not found.")
    e = err(s, "%%foo\n1")
    assert e["evalue"] == "Cell magic `%%foo` not found."


def test_lsmagic_and_help(s):
    from myia_kernel.magics import CELL_MAGICS, LINE_MAGICS

    text = ok(s, "%lsmagic").text()
    for name in LINE_MAGICS:
        assert f"%{name}" in text
    assert "%%python" in text
    text = ok(s, "%help").text()
    assert "%grad f [argnums]" in text and "%%python" in text
    assert ok(s, "%help timeit").text().startswith("%timeit")
    for name, fn in {**LINE_MAGICS, **CELL_MAGICS}.items():
        assert fn.__doc__, name


def test_magics_and_code_mix_in_a_cell(s):
    r = ok(s, "def f(x):\n    return x * x\n%ir f\nf(2.0)")
    assert r.value == 4.0
    assert len(r.displays()) == 1


def test_grad_magic(s):
    ok(s, "def f(x):\n    return x * x + 2.0 * x")
    r = ok(s, "%grad f --view optimized")
    primal, adjoint = r.displays()
    for d in (primal, adjoint):
        assert "<svg" in d["data"]["image/svg+xml"]
    assert "graph @f" in primal["data"]["text/plain"]
    m = re.search(r"adjoint/primal operations: (\d+)/(\d+) = ([\d.]+)x", r.text())
    assert m and int(m.group(2)) == 3
    r = ok(s, "def g(x, y):\n    return x * y\n%grad g (0, 1) --view optimized")
    assert "argnums=(0, 1)" in r.text()


def test_grad_and_ir_of_a_lambda_written_in_place(s):
    r = ok(s, "%grad lambda x: x ** 3 2.0 --view values")
    assert "grad(lambda x: x ** 3)" in r.text() and "= 12.0" in r.text()
    (d,) = r.displays()
    assert ">= 8<" in d["data"]["image/svg+xml"]  # x ** 3 at 2
    import math

    r = ok(s, "%grad lambda x, w: np.tanh(x * w) 1 0.5 2.0 --view values")
    dw = 0.5 * (1 - math.tanh(1.0) ** 2)
    assert "argnums=1" in r.text() and f"= {dw!r}" in r.text(), r.text()
    r = ok(s, "%ir lambda x: x * 2.0")
    assert r.displays()
    e = err(s, "%grad lambda x: x +")  # the lambda's own syntax error, at its line
    assert e["ename"] == "SyntaxError" and "lambda x: x +" in "\n".join(e["traceback"])


def test_the_values_view_text_shows_the_values(s):
    # (what a terminal shows beside the picture's file: the REPL, jupyter console)
    ok(s, "def f(x):\n    y = x * x\n    return np.sin(y) * x")
    r = ok(s, "%grad f 1.5 --view values")
    (d,) = r.displays()
    text = d["data"]["text/plain"]
    assert re.search(r"%y = mul\(%x\S*, %x\S*\)  → 2\.25 ", text), text
    assert re.search(r"%∂x = gadd\(.*\)  → -2\.049", text), text  # the gradient
    plain = ok(s, "%grad f").displays()[0]["data"]["text/plain"]
    assert "→" not in plain  # the transform view has no values


def test_grad_views(s):
    """The transform (the default for a small program), the values, the optimized
    program, and all three."""
    ok(s, "def f(x, w):\n    y = x * w\n    return np.tanh(y) * w")
    r = ok(s, "%grad f")
    assert "grad(f): the transform" in r.text()
    (d,) = r.displays()
    svg = d["data"]["image/svg+xml"]
    assert "▶f" in svg and "◀f" in svg
    assert "◀ y = x * w (line 2)" in svg  # the backward steps of y = x * w, boxed
    assert "∂x" in svg and "∂y" in svg  # sensitivities named after the user's variables
    assert embedded_svg(d["data"]["text/html"]) == svg
    r = ok(s, "%grad f (0, 1) 2.0 3.0 --view values")
    import math

    dx = 3.0 * 3.0 * (1 - math.tanh(6.0) ** 2)
    assert f"= ({dx!r}, " in r.text()  # grad(f)(2.0, 3.0) = (dx, dw)
    (d,) = r.displays()
    assert ">= 6<" in d["data"]["image/svg+xml"]  # y = x * w at (2, 3)
    r = ok(s, "%grad f 0 2.0 3.0 --view all")
    assert len(r.displays()) == 4  # transform, values, primal and adjoint optimized
    assert "adjoint/primal operations" in r.text()
    assert err(s, "%grad f --view values")["ename"] == "UsageError"  # needs arguments
    r = ok(s, "%grad f --view all")  # (all there is without them, and a word on values)
    assert len(r.displays()) == 3 and "give example arguments to see it" in r.text()
    assert err(s, "%grad f --view nosuch")["ename"] == "UsageError"


def test_ir_magic_stages_and_passes(s):
    ok(s, "def f(x):\n    return x * 1.0 + 0.0")
    r = ok(s, "%ir f")
    assert "f: 2 primitive operations (parsed)" in r.text()
    r = ok(s, "%ir f parsed 2.0")
    assert len(r.displays()) == 1
    for stage in ("typed", "optimized", "native"):
        r = s.execute(f"%ir f {stage} 2.0")
        assert r.status == "ok"
        assert f"({stage})" in r.text()
        e = err(s, f"%ir f {stage}")
        assert "give example arguments" in e["evalue"]
    native = ok(s, "%ir grad(f) native 2.0").text()  # f' = 1.0: the code stores 1.0
    assert "define internal" in native and "_entry" not in native
    assert "store double 1.000000e+00" in native
    r = ok(s, "%ir f --passes 2.0")
    assert len(r.displays()) == 2
    e = err(s, "%ir f assembly 2.0")
    assert e["ename"] == "UsageError" and "`assembly` is not a stage (parsed, typed" in e["evalue"]


def test_ir_magic_shows_every_stage_with_its_time(s):
    ok(s, "def f(x):\n    return np.sum(np.tanh(x) * x)")
    text = ok(s, "%ir grad(f) --stages np.ones(3)").text()
    rows = text.splitlines()[1:]
    assert [r.split()[0] for r in rows] == ["parsed", "typed", "optimized", "native"]
    for row in rows:
        ms = float(row.split()[1])
        assert row.split()[2] == "ms" and 0.0 < ms < 60e3, row
    assert "primitive operations" in rows[2] and "lines of LLVM IR" in rows[3]
    assert "give example arguments" in err(s, "%ir f --stages")["evalue"]


def test_a_session_starts_on_the_default_backend(monkeypatch):
    monkeypatch.delenv("MYIA_BACKEND", raising=False)
    assert Session().backend == "llvm"
    monkeypatch.setenv("MYIA_BACKEND", "vm")
    assert Session().backend == "vm"


def test_backend_magic(s, backend):
    from myia.backend import backend_problem

    text = ok(s, "%backend").text()
    assert f"* {backend}" in text
    e = err(s, "%backend tpu")
    assert e["ename"] == "MyiaBackendError" and "no backend 'tpu'" in e["evalue"]
    why = backend_problem("cupy")
    if why is not None:
        e = err(s, "%backend cupy")
        assert why in e["evalue"]
        assert s.backend == backend
    ok(s, "%backend vm")
    assert s.backend == "vm"
    ok(s, "%backend llvm")
    assert s.backend == "llvm"


def test_time_and_timeit_formats(s):
    ok(s, "def f(x):\n    return x * 2.0")
    r = ok(s, "%time f(2.0)")
    assert r.value == 4.0
    assert re.match(r"CPU times: user .+, sys: .+, total: .+\nWall time: [\d.]+ (s|ms|µs|ns)\n",
                    r.text())
    text = ok(s, "%timeit -n 3 -r 2 f(2.0)").text()
    unit = r"[\d.]+ (s|ms|µs|ns)"
    assert re.fullmatch(unit + " ± " + unit + r" per loop \(mean ± std\. dev\. of 2 runs, "
                        r"3 loops each\)\n", text), text


def test_format_time_like_ipython():
    from myia_kernel.magics import format_time

    assert format_time(1.234e-6) == "1.23 µs"
    assert format_time(45.6e-9) == "45.6 ns"
    assert format_time(0.5) == "500 ms"
    assert format_time(61.5) == "1min 1s"


def test_type_magic(s):
    text = ok(s, "%type np.ones(3) * 2.0").text()
    assert "3" in text and "(the type of the value" not in text  # the inferred type
    ok(s, "def sq(x):\n    return x * x")
    text = ok(s, "%type jvp(sq, (1.0,), (1.0,))").text()  # runs in Python: the value's
    assert text.startswith("tuple(float, float)") and "(the type of the value)" in text


def test_magic_argument_errors_point_at_the_argument(s):
    e = err(s, "%time nope(1.0)")
    assert e["ename"] == "MyiaNameError"
    assert e["traceback"][1:4] == ["  In the magic's argument, column 1", "    nope(1.0)",
                                   "    ^^^^"]


def test_who(s):
    assert ok(s, "%who").text() == "Interactive namespace is empty.\n"
    ok(s, "def f(x):\n    return x\ny = 2.0")
    text = ok(s, "%who").text()
    assert "functions: f" in text and "y: float" in text


def test_plot(s):
    ok(s, "def f(x):\n    return x * x * x")
    r = ok(s, "%plot f grad(f) grad(grad(f)) -2 2")
    (d,) = r.displays()
    import base64

    assert base64.b64decode(d["data"]["image/png"])[:4] == b"\x89PNG"
    assert "grad(grad(f))" in d["data"]["text/plain"]
    assert err(s, "%plot f 2 1")["ename"] == "UsageError"


def test_help_on_a_name_is_a_page(s):
    ok(s, "def f(x, y=1.0):\n    'Adds.'\n    return x + y")
    r = ok(s, "f?")
    (page,) = r.payload
    text = page["data"]["text/plain"]
    assert "Signature: f(x, y=1.0)" in text and "Adds." in text and "return x + y" in text


# ---- completion, inspection, is_complete ---------------------------------------------


def test_vjp_in_a_cell_shows_what_its_function_is(s):
    # issue 37: not an object's repr with an address
    ok(s, "def f(x):\n    return x * x")
    r = ok(s, "vjp(f, 3.0)")
    assert result_text(r) == "(9.0, <vjp_fn at 1 primal: call it with a cotangent like " \
                             "the output>)"
    assert ok(s, "vjp(f, 3.0)[1](1.0)").value == (6.0,)


def test_completion(s):
    ok(s, "def square(x):\n    return x * x")
    assert s.complete("%gr") == (["%grad"], 0, 3)
    assert "%%python" in s.complete("%")[0]
    matches, start, end = s.complete("y = squ")
    assert matches == ["square"] and (start, end) == (4, 7)
    matches, start, _ = s.complete("np.tan")
    assert "np.tanh" in matches and start == 0
    assert s.complete("%backend l")[0] == ["llvm"]
    assert "optimized" in s.complete("%ir square o")[0]
    # a magic's options and their values (issue 37: `--v` offered value_and_grad)
    assert s.complete("%grad square --v") == (["--view"], 13, 16)
    assert s.complete("%grad square 2.0 --")[0] == ["--view", "--order"]
    assert s.complete("%grad square 2.0 --view v") == (["values"], 24, 25)


def test_inspection(s):
    ok(s, "def square(x):\n    return x * x")
    text = s.inspect("square(", 6)
    assert text.startswith("Signature: square(x)")
    assert "primitive operations" in text
    assert "Signature:" in s.inspect("np.tanh")
    assert s.inspect("nothing_here") is None


@pytest.mark.parametrize("code, status", [
    ("", "complete"),
    ("f(2.0)", "complete"),
    ("%grad f", "complete"),
    ("def f(x):", "incomplete"),
    ("def f(x):\n    return x", "incomplete"),
    ("def f(x):\n    return x\n", "complete"),
    ("def f(x):\n    return x\n    ", "complete"),
    ("f(1.0,", "incomplete"),
    ("f(1.0,\n\n", "incomplete"),
    ("x = )", "invalid"),
    ("%%python\nx = 1", "incomplete"),
    ("%%python\nx = 1\n", "complete"),
    ("f?", "complete"),
])
def test_is_complete(code, status):
    assert is_complete(code)[0] == status


def test_history_is_recorded(s):
    ok(s, "1.0 + 1.0")
    s.execute("undefined_thing")
    assert [(n, code) for n, code, _ in s.history] == [(1, "1.0 + 1.0"), (2, "undefined_thing")]
    assert s.history[0][2] == "2.0"


def test_passes_and_grad_with_the_optimizer_stage(s):
    """%grad shows the optimized adjoint and `%ir --passes` the pass log and
    before/after pictures."""
    ok(s, "def f(x):\n    return x * x * 3.0")
    r = ok(s, "%ir f --passes 2.0")  # nothing to optimize: drawn once
    assert "no pass changed the program" in r.text() and len(r.displays()) == 1
    assert err(s, "%ir f --passes")["ename"] == "UsageError"  # needs example arguments
    ok(s, "def g(x, y):\n    a = x * y - 0.0\n    b = x * y\n    return np.sin(a) * b * 1.0")
    r = ok(s, "%ir g --passes 2.0 3.0")
    passes = re.findall(r"^(\S.*?): (\d+) -> (\d+) operations \(\d", r.text(), re.M)
    assert passes[:2] == [("simplify #1", "6", "4"), ("cse #1", "4", "3")]
    for (_, _, end), (_, start, _) in zip(passes, passes[1:]):
        assert start == end  # each pass starts where the previous one ended
    # a before/after pair per pass that changed the program: what simplify removed
    # (x - 0.0, b * 1.0) in red, then what CSE merged (the second x * y)
    svgs = [d["data"]["image/svg+xml"] for d in r.displays()]
    assert len(svgs) == 4
    removed = [svg.count(f'fill="{MARKS["removed"][0]}"') for svg in svgs]
    assert removed == [2 + 1, 0, 1 + 1, 0]  # the nodes, and the legend
    assert "removed by the pass" in svgs[0] and "before simplify #1" in svgs[0]
    assert "after cse #1" in svgs[3]
    r = ok(s, "%grad f 0 2.0 --view optimized")
    assert "adjoint grad(f): 2 primitive operations (optimized)" in r.text()
    r = ok(s, "%grad f --view optimized")  # without arguments: for float arguments
    assert "optimized for float arguments (1.0,)" in r.text()
    assert "adjoint grad(f): 2 primitive operations (optimized)" in r.text()
    ok(s, "def first(t):\n    return t[0] * 2.0")
    r = ok(s, "%grad first --view optimized")  # not a float function: the parsed program
    assert "give example arguments to see the optimized program" in r.text()


def test_exit_asks_the_front_end_to_close(s):
    r = ok(s, "exit")
    assert r.payload == [{"source": "ask_exit", "keepkernel": False}]


def test_statements_sharing_a_line(s):
    assert ok(s, "a = 2.0; a * 3.0").value == 6.0
    e = err(s, "y = 1.0; y + (1.0, 2.0)")
    assert e["traceback"][1:4] == ["  Cell [2], line 1, column 10", "    y = 1.0; y + (1.0, 2.0)",
                                   "             ^^^^^^^^^^^^^^"]


def test_plot_of_derivatives_by_taylor_mode(s):
    ok(s, "def f(x):\n    return np.sin(x) * np.exp(x)")
    r = ok(s, "%plot f --derivatives 4 -1 1")
    (d,) = r.displays()
    import base64

    assert base64.b64decode(d["data"]["image/png"])[:4] == b"\x89PNG"
    assert d["data"]["text/plain"] == "<plot of f(x), f′(x), f″(x), f‴(x), f⁽⁴⁾(x) over [-1, 1]>"
    for bad in ("%plot f --derivatives x -1 1", "%plot f --derivatives 2 1 -1",
                "%plot f g --derivatives 2 -1 1", "%plot f --derivatives 99 -1 1",
                "%plot f --wrong 2 -1 1"):
        assert err(s, bad)["ename"] == "UsageError", bad


def test_grad_order_draws_the_kth_derivative(s):
    ok(s, "def p(x):\n    return x * x * x + 2.0 * x")
    text = ok(s, "%grad p --order 3").text()
    # the third derivative of x^3 + 2x is the constant 6: no operation is left
    assert "adjoint grad(grad(grad(p))): 0 primitive operations (optimized)" in text
    assert "--order 2" not in text
    assert err(s, "%grad p --order 0")["ename"] == "UsageError"
    assert err(s, "%grad p (0, 1) --order 2")["ename"] == "UsageError"


def test_a_long_compile_reports_its_stage(s, monkeypatch):
    import myia_kernel.session as session_module

    # a compile "long" after no time at all, checked every 10 ms
    monkeypatch.setattr(session_module, "STATUS_AFTER", 0.0)
    monkeypatch.setattr(session_module, "STATUS_EVERY", 0.01)
    seen = []
    s.on_output = seen.append
    ok(s, "def q(x, n):\n    i = 0\n    while i < n:\n        x = np.sin(x) * 1.1\n"
          "        i = i + 1\n    return x")
    r = ok(s, "grad(grad(grad(q)))(0.3, 4)")
    statuses = [o for o in seen if o["output_type"] == "status"]
    assert statuses, "no status line during a compile"
    stages = {o["text"].split(": ")[-1] for o in statuses[:-1]}
    assert stages & {"inferring types", "optimizing", "generating machine code",
                     "differentiating"}, stages
    assert statuses[-1]["text"] is None  # the line goes when the cell is done
    assert all(o["output_type"] != "status" for o in r.outputs)  # not a cell output


def test_jet_in_a_cell(s):
    ok(s, "def f(x):\n    return np.sin(x) * np.exp(x)")
    r = ok(s, "jet(f, order=2)(0.0)")
    assert r.value == pytest.approx((0.0, 1.0, 2.0))  # sin e^x: 0, 1, 2 at 0
    ok(s, "j = jet(f, order=3)")
    assert ok(s, "j(0.0)").value == pytest.approx((0.0, 1.0, 2.0, 2.0))


def test_magic_help_with_a_question_mark(s):
    """`%grad?`, `%ir??` and `%%python?` page the magic's usage, as IPython does."""
    from myia_kernel.magics import magic_help

    for cell, name in (("%grad?", "grad"), ("%ir??", "ir"), ("%%python?", "python")):
        (page,) = ok(s, cell).payload
        assert page["data"]["text/plain"] == magic_help(name)
    assert ok(s, "%help grad").text().strip() == magic_help("grad").strip()
    assert err(s, "%nosuch?")["ename"] == "UsageError"


def test_a_gradient_with_respect_to_an_integer_is_a_located_error(s):
    """Issue 31: a cell `grad(half)(3)` returned 0; it is the MyiaGradError that
    Python's myia.grad raises, pointing at the cell's parameter, and the session lives on."""
    ok(s, "def half(x):\n    return x * 0.5")
    for cell in ("grad(half)(3)", "jet(half, 2)(3)", "value_and_grad(half)(True)"):
        e = err(s, cell)
        assert e["ename"] == "MyiaGradError", e
        text = "\n".join(e["traceback"])
        assert "cannot differentiate with respect to argument 0 ('x')" in text
        assert "def half(x):" in text  # the source line, with a caret under x
    assert ok(s, "grad(half)(3.0)").value == 0.5


def test_jvp_vjp_hessian_and_jet_inside_a_def_of_a_cell(s):
    """Issue 33: inside a def, the session's jvp, vjp, hessian and jet are part of the
    subset, as grad is (in an expression cell they run from Python)."""
    ok(s, "def cube(x):\n    return x * x * x")
    ok(s, "def d_f(f, x):\n    return jvp(f, (x,), (1.0,))[1]")
    ok(s, "def all_of_them(x):\n"
          "    out, back = vjp(cube, x)\n"
          "    return (d_f(lambda u: d_f(cube, u), x), back(1.0)[0],\n"
          "            hessian(cube)(x), jet(cube, 3)(x)[3])")
    assert ok(s, "all_of_them(2.0)").value == (12.0, 12.0, 12.0, 6.0)
    assert ok(s, "grad(lambda x: d_f(cube, x))(2.0)").value == 12.0


def test_jacobians_in_a_cell_and_inside_a_def(s):
    """Issue 36: jacfwd, jacrev (jacobian) and hessian with tuple argnums, JAX's shapes,
    from an expression cell and inside a def."""
    ok(s, "def f(x, y):\n    return np.sin(x) * y")
    x = "np.array([0.1, 0.2])"
    r = ok(s, f"jacfwd(f, (0, 1))({x}, 2.0)")
    np.testing.assert_allclose(r.value[0], np.diag(2.0 * np.cos([0.1, 0.2])), rtol=1e-15)
    np.testing.assert_allclose(r.value[1], np.sin([0.1, 0.2]), rtol=1e-15)
    np.testing.assert_allclose(ok(s, f"jacobian(f)({x}, 2.0)").value, r.value[0], rtol=1e-15)
    ok(s, "def rosen(x, y):\n    return (1.0 - x) ** 2 + 100.0 * (y - x * x) ** 2")
    assert ok(s, "hessian(rosen, (0, 1))(1.0, 1.0)").value == ((802.0, -400.0),
                                                                (-400.0, 200.0))
    ok(s, "def trace_of(x):\n    return np.trace(jacrev(lambda z: f(z, 3.0))(x))")
    assert ok(s, f"trace_of({x})").value == pytest.approx(3.0 * np.sum(np.cos([0.1, 0.2])))


def test_stop_gradient_in_a_cell_and_inside_a_def(s):
    """Issue 36: stop_gradient holds a value constant for every derivative."""
    ok(s, "def f(x):\n    return x * stop_gradient(x)")
    assert ok(s, "grad(f)(3.0)").value == 3.0
    assert ok(s, "hessian(f)(3.0)").value == 0.0
    assert ok(s, "stop_gradient(2.0) * grad(f)(2.0)").value == 4.0


def test_custom_vjp_in_a_cell_drawn_by_grad(s):
    """Issue 36: a derivative rule of the user's (custom_vjp, in a cell's explicit form),
    used by grad at every order and drawn in %grad; redefining the rule remakes it."""
    ok(s, "def sp0(x):\n    return np.log(1.0 + np.exp(x))\n\n"
          "def sp_fwd(x):\n    return sp0(x), x\n\n"
          "def sp_bwd(x, g):\n    return (g / (1.0 + np.exp(-x)),)\n\n"
          "softplus = custom_vjp(sp0, fwd=sp_fwd, bwd=sp_bwd)")
    assert ok(s, "grad(softplus)(800.0)").value == 1.0
    ok(s, "def loss(x):\n    return 2.0 * softplus(x)")
    sig = 1.0 / (1.0 + np.exp(-1.0))
    assert ok(s, "grad(grad(loss))(1.0)").value == pytest.approx(2.0 * sig * (1.0 - sig))
    r = ok(s, "%grad softplus 1.0")
    overview = r.displays()[0]["data"]["image/svg+xml"]
    assert "sp_fwd" in overview and "sp_bwd" in overview  # the rule is what J wrote
    values = ok(s, "%grad loss 1.0 --view values").displays()[0]["data"]["image/svg+xml"]
    assert "◀custom_vjp(sp0)" in values
    ok(s, "def sp_bwd(x, g):\n    return (3.0 * g,)")
    assert ok(s, "grad(loss)(1.0)").value == 6.0
    e = err(s, "jvp(softplus, (1.0,), (1.0,))")
    assert e["ename"] == "MyiaGradError" and "custom_vjp rule" in e["evalue"]
    assert "custom_vjp" in "".join(o.get("text", "") for o in ok(s, "%help").outputs)


def test_custom_jvp_in_a_cell_used_by_both_modes(s):
    """Issue 36: a forward-mode rule of the user's (custom_jvp, a cell's explicit
    form): jvp applies it, grad transposes it, hessian differentiates it."""
    ok(s, "def sp0(x):\n    return np.log(1.0 + np.exp(x))\n\n"
          "def sp_jvp(primals, tangents):\n"
          "    (x,), (t,) = primals, tangents\n"
          "    return sp0(x), 2.0 * t / (1.0 + np.exp(-x))\n\n"  # twice the derivative
          "softplus = custom_jvp(sp0, jvp=sp_jvp)")
    sig = 1.0 / (1.0 + np.exp(-1.0))
    assert ok(s, "jvp(softplus, (1.0,), (1.0,))[1]").value == pytest.approx(2.0 * sig)
    assert ok(s, "grad(softplus)(1.0)").value == pytest.approx(2.0 * sig)
    assert ok(s, "hessian(softplus)(1.0)").value == pytest.approx(2.0 * sig * (1.0 - sig))
    e = err(s, "jet(softplus, order=2)(1.0)")
    assert e["ename"] == "MyiaGradError" and "custom_jvp rule" in e["evalue"]
    assert ok(s, "softplus(1.0)").value == pytest.approx(np.log1p(np.e))  # still there


def test_checkpoint_in_a_cell_gives_the_same_derivatives(s):
    """Issue 36: checkpoint(f0) in a cell; its derivatives are f0's; %grad draws its
    forward and backward passes (J of it is the checkpoint's, not the body's)."""
    ok(s, "def steps(x):\n    for i in range(3):\n        x = np.sin(x) * 1.5\n    return x\n\n"
          "ck = checkpoint(steps)\n\n"
          "def twice(x):\n    return ck(ck(x))\n\n"
          "def twice0(x):\n    return steps(steps(x))")
    for expr in ("grad(twice)(0.3)", "hessian(twice)(0.3)", "jvp(twice, (0.3,), (1.0,))[1]"):
        assert ok(s, expr).value == pytest.approx(ok(s, expr.replace("twice", "twice0")).value,
                                                  rel=1e-14)
    for view in ("", " --view values"):  # (the values view runs the program as parsed)
        svg = ok(s, "%grad twice 0.3" + view).displays()[0]["data"]["image/svg+xml"]
        assert "▶checkpoint(steps)" in svg and "◀checkpoint(steps)" in svg


def test_an_int_from_a_cell_decides_a_shape_without_static_argnums(s):
    # a cell's expression is compiled as a program whose values from the cell and the
    # namespace are constants: `n` decides np.arange's length (myia.compile needs
    # static_argnums for that from Python)
    ok(s, "def f(n, x):\n    return np.sum(np.arange(n) * x)")
    assert result_text(ok(s, "f(4, 2.0)")) == "12.0"
    ok(s, "n = 5")
    assert result_text(ok(s, "f(n, 2.0)")) == "20.0"
    assert result_text(ok(s, "grad(f, 1)(n, 2.0)")) == "10.0"


# ---- drawings in a notebook opened untrusted ------------------------------------------
# JupyterLab shows text/html before image/svg+xml; in an untrusted notebook (a handed-out
# one) it sanitizes the HTML: scripts go with their text, inline <svg> tags go but leave
# their text, and an <img> keeps its data URI (its src is not checked)


def embedded_svg(html_text):
    """The SVG of the drawing's <img> (its base64 data URI), decoded."""
    m = re.search(r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', html_text)
    assert m, html_text[:300]
    return base64.b64decode(m.group(1)).decode("utf-8")


class _Untrusted(HTMLParser):
    """What a sanitizer leaves of HTML: text outside scripts, and the tags."""

    def __init__(self):
        super().__init__()
        self.text, self.tags, self._in_script = [], [], False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._in_script = self._in_script or tag == "script"

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if not self._in_script and data.strip():
            self.text.append(data.strip())


def test_a_drawing_shows_in_a_notebook_opened_untrusted(s):
    ok(s, "def loop(x, n):\n    i = 0\n    while i < n:\n        x = np.sin(x)\n"
          "        i = i + 1\n    return x")
    r = ok(s, "%grad loop")  # an overview, then a picture per graph: each with a caption
    displays = r.displays()
    assert len(displays) > 1
    for d in displays:
        html_text = d["data"]["text/html"]
        untrusted = _Untrusted()
        untrusted.feed(html_text)
        assert "svg" not in untrusted.tags and "img" in untrusted.tags
        # no labels or tooltips spilled as text: only the picture's caption
        assert len(untrusted.text) == 1 and untrusted.text[0] in html_text, untrusted.text
        assert embedded_svg(html_text) == d["data"]["image/svg+xml"]
        # trusted, a script puts that SVG inline (its tooltips show on hover)
        assert "<script>" in html_text and "replaceWith(svg)" in html_text
