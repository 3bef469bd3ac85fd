"""The LLVM backend's runtime: the native entry, errors, interrupts, deep recursion,
memory, dispatch.  (Speed is measured in benchmarks/, never asserted here.)"""

import gc
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import myia
from myia.backend.llvm.objcache import ObjectCache
from myia.backend.llvm import request_interrupt, runtime
from myia.errors import MyiaRecursionError, MyiaShapeError, MyiaValueError


def llvm(fn):
    return myia.compile(fn, backend="llvm")


# ---- the engine -------------------------------------------------------------------------


def test_engine_targets_the_host_and_binds_blas():
    e = runtime.engine()
    assert e.cpu
    for name in ("PyFloat_FromDouble", "PyArray_NewFromDescr"):
        assert e.symbols.get(name), name
    e.bind_blas()  # (done when a program first calls BLAS)
    for name in ("dgemm", "sgemm", "dgemv", "ddot"):
        assert e.symbols.get(name), name


PRODUCT_IN_A_FRESH_PROCESS = """
import sys
import numpy as np
import myia

def f(a, b):
    return a @ b

a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
assert np.array_equal(myia.compile(f, backend="llvm")(a, b), a @ b)
print("scipy.linalg" in sys.modules)
"""


def test_blas_is_bound_without_importing_scipy_linalg(tmp_path):
    # its __init__ takes 100-200 ms of imports that the BLAS capsules do not need
    script = tmp_path / "product.py"
    script.write_text(PRODUCT_IN_A_FRESH_PROCESS)
    env = dict(os.environ, MYIA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_libmvec_is_detected_or_absent():
    runtime.engine()
    # where present (glibc on x86-64 with AVX2), exp/log/tanh are there at 4 doubles
    for (fn, dtype), (sym, lanes) in runtime.MVEC.items():
        assert lanes == (4 if dtype == "float64" else 8)
        assert sym.startswith("_ZGV")


# ---- values in and out -------------------------------------------------------------------


def swap_scale(t, k):
    (a, (b, c)) = t
    return (c * k, (a, b > 0.0))


def test_tuples_in_and_out():
    assert llvm(swap_scale)((1.0, (2.0, 3.0)), 2) == (6.0, (1.0, True))


def identity(x):
    return x


def test_an_argument_returned_is_a_copy_of_it():
    x = np.arange(6.0).reshape(2, 3)[:, ::2]
    y = llvm(identity)(x)
    np.testing.assert_array_equal(y, x)
    assert not np.shares_memory(x, y)  # a result is a new array (tests/backend/test_fresh_results.py)


def affine(x, a):
    return x * a + 1.0


def test_strided_and_new_arrays():
    f = llvm(affine)
    x = np.arange(12.0).reshape(3, 4)
    for arg in (x, x.T, x[::2, 1::2], x[:, ::-1]):
        np.testing.assert_allclose(f(arg, 2.0), arg * 2.0 + 1.0)
        assert f(arg, 2.0).flags.c_contiguous
    big = np.ones((100, 100))
    out = f(big, 2.0)
    # a large result keeps the compiled code's buffer (its base frees it), no copy
    assert out.flags.owndata is False and out.base is not None
    del out
    gc.collect()


def scale_by_default(x, k=2.0):
    return x * k


def test_defaults_of_missing_arguments():
    assert llvm(scale_by_default)(1.5) == 3.0
    assert llvm(scale_by_default)(1.5, 3.0) == 4.5
    assert myia.compile(myia.grad(scale_by_default), backend="llvm")(1.5) == 2.0
    with pytest.raises(myia.MyiaError, match=r"takes 2 arguments \(x, k\) but 0 were given"):
        llvm(scale_by_default)()


def index_in_loop(xs, n):
    s = xs[0] * 0.0
    for i in range(n):
        s = s + xs[i] * xs[i - 1]
    return s


def test_a_tuple_indexed_at_run_time():
    """`xs[i]` with i known only at run time, for a tuple whose elements have one type
    (inference allows it): what the VM computes, with its error out of range."""
    xs = (1.0, 2.0, 3.0)
    for n in range(4):
        assert llvm(index_in_loop)(xs, n) == index_in_loop(xs, n)
    arrays = tuple(np.arange(3.0) + k for k in range(3))
    np.testing.assert_allclose(llvm(index_in_loop)(arrays, 3), index_in_loop(arrays, 3))
    vm_grad = myia.compile(myia.grad(index_in_loop), backend="vm")(xs, 3)
    assert myia.compile(myia.grad(index_in_loop), backend="llvm")(xs, 3) == vm_grad
    with pytest.raises(MyiaValueError, match="tuple index 3 out of range for a tuple of length 3"):
        llvm(index_in_loop)(xs, 4)  # xs[3]
    with pytest.raises(MyiaValueError, match="tuple index -4 out of range"):
        llvm(lambda t, i: t[i])(xs, -4)


def mixes_0d(x, u):
    return np.where(x > 0.0, x * u, u) + x * u


def test_numbers_and_0d_arrays():
    """NumPy: a number times a 0-d array is a number; the VM gives the same."""
    for x in (-0.5, 2.0):
        want = myia.compile(mixes_0d, backend="vm")(x, np.array(0.3))
        got = llvm(mixes_0d)(x, np.array(0.3))
        np.testing.assert_allclose(got, want)


def int_affine(x, a):
    return x * a + 1


def test_signature_change_specializes_again():
    f = llvm(int_affine)
    assert f(2.0, 3.0) == 7.0
    assert f(2, 3) == 7 and isinstance(f(2, 3), int)
    np.testing.assert_allclose(f(np.ones(3, dtype=np.float32), np.float32(2.0)),
                               np.full(3, 3.0, dtype=np.float32))
    assert f(2.0, 3.0) == 7.0


def test_rss_is_stable_over_100000_calls():
    def rss():
        with open(f"/proc/{os.getpid()}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    f = llvm(affine)
    g = myia.compile(myia.grad(lambda x: x * x), backend="llvm")
    x = np.ones((50, 50))
    for _ in range(2000):  # warm up: compile, allocator pools
        f(x, 2.0), g(3.0), f((1.0), 2.0)
    before = rss()
    for _ in range(100_000):
        f(x, 2.0)
        g(3.0)
    gc.collect()
    after = rss()
    assert after - before < 8 << 20, f"RSS grew by {(after - before) >> 20} MiB"
    # a loop's gradient: its passes are loops over stacks and records in the arena,
    # 3000 iterations deep (more than one chunk of the stack)
    h = myia.compile(myia.grad(loop), backend="llvm")
    for _ in range(200):
        h(0.5, 3000)
    before = rss()
    for _ in range(20_000):
        h(0.5, 3000)
    after = rss()
    assert after - before < 8 << 20, f"RSS grew by {(after - before) >> 20} MiB"


# ---- errors ------------------------------------------------------------------------------


def divide(a, b):
    return a // b


def test_integer_division_by_zero_names_the_line():
    with pytest.raises(MyiaValueError) as e:
        llvm(divide)(7, 0)
    assert "integer division by zero" in str(e.value)
    assert "return a // b" in str(e.value)
    assert llvm(divide)(-7, 2) == -4 and llvm(divide)(7.5, 0.0) == float("inf")


def take(x, i):
    return x[i] * 2.0


def test_index_out_of_range():
    f = llvm(take)
    assert f(np.arange(4.0), -1) == 6.0
    with pytest.raises(MyiaValueError) as e:
        f(np.arange(4.0), 4)
    assert "index 4 is out of bounds for axis 0 with size 4" in str(e.value)
    assert "x[i]" in str(e.value)


def add_arrays(x, y):
    return x + y


def test_shape_mismatch_at_run_time():
    f = llvm(add_arrays)
    with pytest.raises((MyiaShapeError, myia.MyiaTypeError)):
        f(np.ones(3), np.ones(4))


def check_positive(x):
    assert x > 0.0, "x must be positive"
    return x


def test_failed_assert_in_the_backend():
    # the typed program, not optimized: the assert reaches the backend as written
    from myia.backend.llvm import LLVMBackend
    from myia.pipeline import specialized_for

    backend = LLVMBackend(specialized_for)
    assert backend.run(check_positive, (2.0,)) == 2.0
    with pytest.raises(MyiaValueError) as e:
        backend.run(check_positive, (-1.0,))
    assert "x must be positive" in str(e.value)
    assert "assert x > 0.0" in str(e.value)


def test_failed_assert():
    with pytest.raises(MyiaValueError) as e:
        llvm(check_positive)(-1.0)
    assert "x must be positive" in str(e.value)


# ---- recursion -------------------------------------------------------------------------------


def depth(n):
    if n == 0:
        return 0
    return 1 + depth(n - 1)


def test_deep_recursion_runs_on_a_large_stack():
    f = llvm(depth)
    assert f(10) == 10
    assert f(1_000_000) == 1_000_000  # far past the caller's stack: rerun on a big one


def runaway(n):
    if n < 0:
        return 0
    return 1 + runaway(n + 1)


def test_runaway_recursion_is_an_error_not_a_crash():
    # one recursive call: a loop over an explicit stack, bounded like the native stack
    with pytest.raises(MyiaRecursionError) as e:
        llvm(runaway)(0)
    assert "recursion too deep" in str(e.value)
    assert e.value.loc is not None and "runaway(n + 1)" in str(e.value)  # the call


def runaway_pair(n):
    if n < 0:
        return 0
    return runaway_pair(n + 1) + runaway_pair(n + 2) + n  # two calls: native recursion


@pytest.mark.slow
def test_runaway_native_recursion_is_an_error_not_a_crash():
    with pytest.raises(MyiaRecursionError) as e:
        llvm(runaway_pair)(0)
    assert "recursion too deep" in str(e.value)
    assert e.value.loc is not None and e.value.loc.line == runaway_pair.__code__.co_firstlineno


def sum_of_sines_times(x, n):
    s = 0.0
    i = 0
    while i < n:  # (s does not depend on x: the loop is no recursion of the user's)
        s = s + np.sin(i * 1.0)
        i = i + 1
    return s * x


def test_a_loop_whose_state_does_not_depend_on_x_keeps_nothing_per_step():
    # issue 38: 10^8 steps used the whole native stack ("check the base case of the
    # recursion"); its backpropagators only handed the final s back
    n = 10**8
    want = sum(float(np.sum(np.sin(np.arange(k, min(k + 10**7, n), dtype=np.float64))))
               for k in range(0, n, 10**7))
    assert llvm(myia.grad(sum_of_sines_times))(0.5, n) == pytest.approx(want, abs=1e-6)


def halving_sums(x, n):
    s = 0.0
    i = 0
    while i < n:  # (an if in the body: its derivative keeps a frame per iteration)
        if s > 1.0:
            s = s * 0.5
        else:
            s = s + np.sin(i * 1.0) * x
        i = i + 1
    return s * x


def test_a_loop_derivative_past_the_native_stack_names_the_loop():
    # issue 38: the forward pass of a loop's derivative keeps a frame per iteration;
    # the frames are those of the `if` in its body, and the error still names the loop
    with pytest.raises(MyiaRecursionError, match="the derivative of this loop keeps a "
                                                 "native stack frame per iteration") as e:
        llvm(myia.grad(halving_sums))(0.5, 10**8)
    assert e.value.loc.line == halving_sums.__code__.co_firstlineno + 3
    assert "myia.checkpoint" in str(e.value) and "base case" not in str(e.value)


def loop(x, n):
    i = 0
    while i < n:
        x = x * 0.999 + 0.001
        i = i + 1
    return x


def test_gradient_of_a_million_iteration_loop():
    g = myia.compile(myia.grad(loop), backend="llvm")
    assert g(0.5, 10) == pytest.approx(0.999 ** 10)
    assert g(0.5, 1_000_000) == pytest.approx(0.0, abs=1e-300)


# ---- interrupts ----------------------------------------------------------------------------


def forever(x):
    while x > 0.0:
        x = x + 1.0
    return x


def test_interrupt_flag_stops_a_loop():
    f = llvm(forever)
    assert f(-1.0) == -1.0
    timer = threading.Timer(0.2, request_interrupt)  # runs when the loop yields the GIL
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        f(1.0)
    timer.join()
    assert f(-2.0) == -2.0  # the flag was reset


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigint_stops_a_loop(sigint_raises):
    f = llvm(forever)
    f(-1.0)
    killer = subprocess.Popen(["sh", "-c", f"sleep 0.3; kill -INT {os.getpid()}"])
    try:
        with pytest.raises(KeyboardInterrupt):
            f(1.0)
    finally:
        killer.wait()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_an_ignored_sigint_stays_ignored_and_the_flag_still_stops():
    # A process started with SIGINT ignored (nohup, a script's background job) asked
    # not to be stopped by it: compiled code keeps that, as Python code does.
    f = llvm(forever)
    f(-1.0)
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    killer = subprocess.Popen(["sh", "-c", f"sleep 0.2; kill -INT {os.getpid()}"])
    timer = threading.Timer(1.0, request_interrupt)
    timer.start()
    start = time.perf_counter()
    try:
        with pytest.raises(KeyboardInterrupt):
            f(1.0)
        assert time.perf_counter() - start >= 0.9  # SIGINT did not stop it; the flag did
    finally:
        killer.wait()
        timer.join()
        signal.signal(signal.SIGINT, old)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_signal_handler_can_set_the_flag():
    f = llvm(forever)
    f(-1.0)
    old = signal.signal(signal.SIGUSR1, lambda *a: request_interrupt())
    killer = subprocess.Popen(["sh", "-c", f"sleep 0.3; kill -USR1 {os.getpid()}"])
    try:
        with pytest.raises(KeyboardInterrupt):
            f(1.0)
    finally:
        killer.wait()
        signal.signal(signal.SIGUSR1, old)


def deep_forever(n):
    if n < 0:
        return 0.0
    return 1.0 + deep_forever(n + 1) * 0.5


# ---- what cannot be compiled ------------------------------------------------------------------


def returns_closure(a):
    return lambda x: x + a


def test_a_function_result_is_refused_with_a_clear_error():
    with pytest.raises(myia.errors.MyiaBackendError) as e:
        llvm(returns_closure)(1.0)
    assert "cannot compile" in str(e.value)


# ---- the code cache -----------------------------------------------------------------------


def cubic(x):
    return x * x * x - 2.0 * x


def test_compiled_code_is_cached_by_content(tmp_path, monkeypatch):
    from myia.backend.llvm import dispatch
    from myia.backend.llvm import LLVMBackend
    from myia.pipeline import optimized_program

    e = runtime.engine()
    monkeypatch.setattr(e, "disk", ObjectCache(str(tmp_path)))
    monkeypatch.setattr(e, "_memory_cache", {})
    typed = LLVMBackend(optimized_program).typed_program(cubic, (2.0,))
    hits = e.cache_hits
    first = dispatch.compile_program(typed)
    assert first(2.0) == 4.0
    assert list(tmp_path.glob("*.o")), "the object file is written to the cache"
    e._memory_cache.clear()  # as in a new process: the object file is loaded
    second = dispatch.compile_program(LLVMBackend(optimized_program).typed_program(cubic, (2.0,)))
    assert e.cache_hits == hits + 1
    assert second(3.0) == 21.0
