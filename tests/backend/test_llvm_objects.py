"""The helper process that runs LLVM's pass pipelines (issue 32): a process that
compiles many programs does not keep llvmlite's per-pipeline leak; a crash or an
interrupt in the helper costs one compilation, not the session."""

import gc
import importlib.util
import os

import pytest

import myia
from myia.backend.llvm import objects, runtime
from myia.backend.llvm.objcache import ObjectCache


def _rss():
    with open(f"/proc/{os.getpid()}/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _load(path, k):
    path.write_text("import numpy as np\n\n\ndef f(x):\n"
                    f"    return x * {k}.25 + np.sin(x)\n")
    spec = importlib.util.spec_from_file_location(f"_objects_{k}", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m.f


@pytest.fixture
def fresh_engine(monkeypatch):
    """No object cached, on disk or in memory: every program is compiled."""
    e = runtime.engine()
    monkeypatch.setattr(e, "disk", ObjectCache(None))
    monkeypatch.setattr(e, "_memory_cache", {})
    return e


@pytest.fixture
def process(fresh_engine, monkeypatch):
    """An ObjectProcess of the test's own, that makes every module in a child, as the
    engine's (closed after the test)."""
    made = objects.ObjectProcess(fresh_engine.triple, fresh_engine.cpu,
                                 fresh_engine.features)
    monkeypatch.setattr(fresh_engine, "objects", made)
    yield made
    made.close()


def _compile_new(tmp_path, k):
    f = _load(tmp_path / f"f{k}.py", k)
    c = myia.compile(f, backend="llvm")
    assert c(0.5) == pytest.approx(f(0.5), rel=1e-12)


def test_the_first_modules_are_made_here_the_others_in_a_helper_process(
        fresh_engine, tmp_path, monkeypatch):
    process = objects.ObjectProcess(fresh_engine.triple, fresh_engine.cpu,
                                    fresh_engine.features, in_process_first=2,
                                    maker=fresh_engine.maker)
    monkeypatch.setattr(fresh_engine, "objects", process)
    try:
        _compile_new(tmp_path, 1)
        _compile_new(tmp_path, 2)
        assert process.child is None and process.total == 2
        _compile_new(tmp_path, 3)
        assert process.child.poll() is None and process.total == 3
    finally:
        process.close()


def test_the_engine_uses_a_helper_process_after_its_first_modules():
    e = runtime.engine()
    if os.environ.get("MYIA_LLVM_OBJECTS", "").lower() == "inprocess":
        assert e.objects is e.maker
    else:
        assert isinstance(e.objects, objects.ObjectProcess) and e.objects.maker is e.maker
        assert e.objects.local_left <= objects.IN_PROCESS_FIRST


@pytest.mark.timeout(600)
@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads /proc (Linux)")
def test_compiling_many_programs_keeps_no_memory_per_program(fresh_engine, tmp_path):
    """300 programs compiled (each through the O3 pipeline) and dropped: this process
    keeps under 20 KB for each; in process, llvmlite's pipelines kept ~60 KB each.
    (The warm-up passes the modules that a process makes itself.)"""
    for k in range(objects.IN_PROCESS_FIRST + 10):
        _compile_new(tmp_path, k)
    gc.collect()
    before = _rss()
    for k in range(1000, 1300):
        _compile_new(tmp_path, k)
    gc.collect()
    per_program = (_rss() - before) / 300
    assert per_program < 20 << 10, f"{per_program / 1024:.1f} KB kept per program"


def test_a_child_is_replaced_after_recycle_after_modules(process, tmp_path, monkeypatch):
    monkeypatch.setattr(objects, "RECYCLE_AFTER", 2)
    for k in range(5):
        _compile_new(tmp_path, 2000 + k)
    assert process.started == 3  # modules 1-2, 3-4, 5
    first = process.child
    _compile_new(tmp_path, 2005)
    assert first.poll() is None and process.child is first


def test_a_crashed_child_is_an_error_and_the_next_compile_works(process, fresh_engine,
                                                                 tmp_path):
    """A child that dies before it answers (as on an LLVM abort): one compilation
    fails with an error that says so; the next starts a new child."""
    process.args = ("no-such-triple", "", "")  # the child dies at its start
    with pytest.raises(objects.ObjectProcessError, match="LLVM crashed"):
        _compile_new(tmp_path, 3000)
    assert process.child is None
    process.args = (fresh_engine.triple, fresh_engine.cpu, fresh_engine.features)
    _compile_new(tmp_path, 3001)


def test_an_interrupt_while_the_child_works_stops_it(process, tmp_path, monkeypatch):
    real_receive = objects._receive

    def interrupted(stream):
        raise KeyboardInterrupt

    process.start()
    child = process.child
    monkeypatch.setattr(objects, "_receive", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _compile_new(tmp_path, 4000)
    assert child.poll() is not None, "the child was stopped"
    assert process.child is None
    monkeypatch.setattr(objects, "_receive", real_receive)
    _compile_new(tmp_path, 4001)


def test_an_llvm_error_in_the_child_is_raised_here(process):
    with pytest.raises(RuntimeError, match="expected"):
        process.make([("define i32 @f( {", "optimized")], 3)
    assert process.child.poll() is None  # (a rejected module is no crash)
    assert process.make([("define i32 @f() {\n  ret i32 1\n}\n", "optimized")], 3)[0]


def test_an_interrupt_of_the_session_does_not_stop_the_child(process, tmp_path):
    """A kernel's interrupt goes to its process group, a terminal's Ctrl-C to the
    foreground one: the child has its own session and ignores SIGINT; a child that
    dies while idle (killed) is replaced without an error."""
    import signal

    _compile_new(tmp_path, 5000)
    child = process.child
    assert os.getpgid(child.pid) != os.getpgid(0)
    os.kill(child.pid, signal.SIGINT)
    _compile_new(tmp_path, 5001)
    assert process.child is child and child.poll() is None
    child.kill()
    child.wait()
    _compile_new(tmp_path, 5002)
    assert process.child is not child
