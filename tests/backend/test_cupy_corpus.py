"""Every program of the corpus, and the gradients of the differentiable ones, on the
CuPy backend, compared with the VM.

Two devices:

- "gpu": CuPy on a CUDA device (`backend="cupy"`), marked `gpu`, skipped with the
  reason "no CUDA device" where `cupy.cuda.is_available()` is false;
- "emulator": the same backend on the CPU emulator (`myia.backend.cupy.emulator`),
  which compiles the generated CUDA C with the host's C++ compiler: fusion, kernel
  bodies, launches and device scalars are all exercised, on every machine.

Plus what a user sees: the error without a GPU, results left on the device, CuPy
arrays accepted as arguments.
"""

import sys

import numpy as np
import pytest

import myia
from myia.backend.cupy import CupyBackend, device_problem, to_numpy
from myia.backend.cupy.emulator import Emulator, compiler
from myia.errors import MyiaBackendError
from myia.pipeline import optimized_program
from tests.compare import assert_same
from tests.corpus import CASES

RTOL, ATOL = 1e-7, 1e-10


def _gpu_problem():
    try:
        import cupy
    except ImportError:
        return "no CUDA device (CuPy is not installed)"
    problem = device_problem(cupy)
    return None if problem is None else f"no CUDA device ({problem})"


GPU_PROBLEM = _gpu_problem()
gpu = [pytest.mark.gpu, pytest.mark.skipif(GPU_PROBLEM is not None,
                                           reason=GPU_PROBLEM or "")]

_backends = {}


def backend(device):
    """One backend per device for the whole module (kernels compile once)."""
    b = _backends.get(device)
    if b is None:
        if device == "gpu":
            b = CupyBackend(optimized_program)
        else:
            if compiler() is None:
                pytest.fail("the emulator needs a C++ compiler (g++): apt-get install g++")
            b = CupyBackend(optimized_program, xp=Emulator())
        b = _backends[device] = b
    return b


DEVICES = [pytest.param("gpu", marks=gpu), "emulator"]
DIFFERENTIABLE = [c for c in CASES if "differentiable" in c.tags]


def run_on(device, fn, args):
    """`fn(*args)` on the CuPy backend, as NumPy values.

    The backend runs the pipeline's optimized program (as the LLVM backend does), which
    the VM's reference run does not use.  Where that same optimized program also fails
    on the plain VM, the fault is the optimizer's, and the test fails saying so."""
    from myia.backend.vm import VM, Closure
    from myia.pipeline import optimized_for

    problems = []

    def optimized(fn, signature):
        try:
            typed = optimized_for(fn, signature)[0]
        except Exception as e:
            problems.append(f"the optimizer raised {type(e).__name__}: {e}")
            raise
        try:  # before the backend's own passes change it
            VM().call(Closure(typed, None), list(args))
        except Exception as e:  # noqa: BLE001
            problems.append(f"{type(e).__name__}: {str(e)[:200]}")
        return typed

    b = CupyBackend(optimized, xp=backend(device).xp)
    try:
        b.program(fn, args)
        return b.run(fn, args, to_numpy=True)
    except Exception:
        if problems:  # say where the fault is, and fail
            pytest.fail(f"the optimized program fails on the VM too: {problems[0]}")
        raise


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus(case, device):
    want = myia.compile(case.fn, backend="vm")(*case.args)
    got = run_on(device, case.fn, case.args)
    assert_same(got, want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", DIFFERENTIABLE, ids=[c.name for c in DIFFERENTIABLE])
def test_corpus_gradient(case, device):
    g = myia.grad(case.fn)
    want = myia.compile(g, backend="vm")(*case.args)
    got = run_on(device, g, case.args)
    assert_same(got, want, rtol=RTOL, atol=ATOL)


# ---- the MLP step: values, gradients, kernels ----------------------------------------------


def mlp_loss(W1, b1, W2, b2, X, Y):
    H = np.tanh(X @ W1 + b1)
    out = H @ W2 + b2
    return np.sum((out - Y) ** 2)


def _mlp_args(batch):
    rng = np.random.default_rng(0)
    return tuple(rng.standard_normal(s) * 0.1 for s in
                 [(784, 256), (256,), (256, 10), (10,), (batch, 784), (batch, 10)])


@pytest.mark.parametrize("device", DEVICES)
def test_mlp_value_and_grad_launches_six_kernels(device):
    b = CupyBackend(optimized_program, xp=backend(device).xp)
    vg = myia.value_and_grad(mlp_loss, argnums=(0, 1, 2, 3))
    args = _mlp_args(16)
    want = myia.compile(vg, backend="vm")(*args)
    calls = []
    for prim, impl in list(b.table.device.items()):  # count the unfused device operations
        b.table.device[prim] = (lambda *a, _i=impl, _n=prim.name: calls.append(_n) or _i(*a))
    before = (b.stats["launches"], b.stats["host_fallback"])
    got = b.run(vg, args)
    after = (b.stats["launches"], b.stats["host_fallback"])
    assert after[0] - before[0] == 6  # 3 fused elementwise kernels, 3 fused reductions
    assert sorted(set(calls)) == ["dot", "transpose"]  # 5 matmuls, and views
    assert calls.count("dot") == 5
    assert after[1] == before[1]  # nothing ran on the host
    assert isinstance(got[0], np.floating)  # the loss comes back as a number
    assert all(isinstance(g, b.xp.ndarray) for g in got[1])  # the gradients stay on the device
    assert_same(to_numpy(got), want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("device", DEVICES)
def test_device_arrays_as_arguments_and_results(device):
    b = backend(device)
    xp = b.xp
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    y = b.run(_affine, (x, 2.0))
    assert isinstance(y, xp.ndarray)
    z = b.run(_affine, (y, 0.5))  # a result fed back, never leaving the device
    assert_same(z.get(), (np.arange(6.0).reshape(2, 3) * 2.0 + 1.0) * 0.5 + 1.0)


def _affine(x, a):
    return x * a + 1.0


@pytest.mark.gpu
@pytest.mark.skipif(GPU_PROBLEM is not None, reason=GPU_PROBLEM or "")
def test_compile_with_backend_cupy_on_a_gpu():
    import cupy

    f = myia.compile(_affine, backend="cupy")
    y = f(np.ones((3,)), 2.0)
    assert isinstance(y, cupy.ndarray)
    assert_same(cupy.asnumpy(y), np.full((3,), 3.0))


# ---- without a GPU -----------------------------------------------------------------------


def test_no_device_is_a_clear_error(monkeypatch):
    class NoDevice:
        class cuda:
            @staticmethod
            def is_available():
                return False

    monkeypatch.setitem(sys.modules, "cupy", NoDevice)
    with pytest.raises(MyiaBackendError, match="needs a CUDA device") as e:
        myia.compile(_affine, backend="cupy")
    assert "CuPy finds no CUDA device" in str(e.value)


def test_missing_cupy_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # `import cupy` raises ImportError
    with pytest.raises(MyiaBackendError, match="not installed") as e:
        myia.compile(_affine, backend="cupy")
    assert "pip install myia[gpu]" in str(e.value)


def test_broken_driver_is_a_clear_error(monkeypatch):
    class Broken:
        class cuda:
            @staticmethod
            def is_available():
                raise RuntimeError("cudaErrorInsufficientDriver")

    monkeypatch.setitem(sys.modules, "cupy", Broken)
    with pytest.raises(MyiaBackendError, match="cudaErrorInsufficientDriver"):
        myia.compile(_affine, backend="cupy")


# ---- dtypes and IEEE corners ---------------------------------------------------------------


def _f32_layer(x, y):
    return np.tanh(x * 0.5 + y) - y / 3.0


def _int_arith(a, b):
    return (a * 2 + b, a // 2, np.where(a > b, a, b), np.maximum(a, 3))


def _nan_max(x, y):
    return (np.maximum(x, y), np.minimum(x, y), np.max(x, axis=0), np.sum(x * y, axis=1))


def _mixed(x, n):
    return np.exp(x * n) + n


def _shared(x, b):
    m = b * b
    v = x * m
    return (v, np.sum(v + m, axis=0))


def _f32(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


_NAN = np.array([[1.0, np.nan, -2.0], [0.5, 3.0, np.nan]])

DTYPE_CASES = [
    ("float32", _f32_layer, (_f32(3, 4), _f32(4, seed=1)), 1e-5),
    ("int64", _int_arith, (np.arange(12).reshape(3, 4) - 5, np.arange(4) * 2), 0),
    ("nan", _nan_max, (_NAN, np.ones((2, 3))), 0),
    ("int_scalar", _mixed, (np.linspace(-1.0, 1.0, 5), 3), RTOL),
    ("shared_with_reduction", _shared, (np.linspace(-1.0, 1.0, 12).reshape(3, 4),
                                        np.arange(4.0)), RTOL),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,fn,args,rtol", DTYPE_CASES, ids=[c[0] for c in DTYPE_CASES])
def test_dtypes_and_ieee(name, fn, args, rtol, device):
    want = myia.compile(fn, backend="vm")(*args)
    got = run_on(device, fn, args)
    assert_same(got, want, rtol=rtol, atol=ATOL)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert np.asarray(g).dtype == np.asarray(w).dtype


# ---- the derivatives of issue 31, on the CuPy backend too ----------------------------------


def _issue_31_cases():
    from tests.ad import test_transforms_agree as T

    a = np.ones(3)
    gg = lambda f: myia.grad(myia.grad(f))  # noqa: E731
    return [
        pytest.param(gg(T.closure_called_twice_after_a_kept_loop), (0.45, a), id="closure-loop"),
        pytest.param(gg(T.closure_called_twice), (0.45, a), id="closure-twice"),
        pytest.param(gg(T.loop_over_a_tuple_of_functions), (0.6875, a), id="tuple-of-fns"),
        pytest.param(gg(T.where_of_a_broadcast), (0.7, 1.0), id="where-broadcast"),
        pytest.param(myia.grad(T.unused_argument_of_a_chosen_function), (0.5,),
                     id="symbolic-zero"),
        pytest.param(gg(T.two_ifs_on_the_same_value), (0.0,), id="two-ifs"),
    ]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fn, args", _issue_31_cases())
def test_the_derivatives_of_issue_31_equal_the_vms(fn, args, device):
    want = myia.compile(fn, backend="vm")(*args)
    got = run_on(device, fn, args)
    assert_same(got, want, rtol=RTOL, atol=ATOL)


# ---- the program CuPy runs is the one every backend runs -------------------------------


def _wavy(x):
    return np.tanh(x) * x * np.sin(x)


def test_cupy_runs_the_optimized_derivative():
    # grad of a transform differentiates the optimized program of its function; CuPy
    # once differentiated the parsed one (77 operations for the third derivative, 49
    # on vm and llvm)
    from myia.pipeline import IRView

    g3 = myia.grad(myia.grad(myia.grad(_wavy)))
    b = CupyBackend(optimized_program, xp=backend("emulator").xp, fuse=False)
    ops = IRView(b.program(g3, (0.7,)).graph, "optimized").op_count()
    assert ops == myia.ir(g3, 0.7, stage="optimized").op_count()
    assert b.run(g3, (0.7,)) == pytest.approx(myia.compile(g3, backend="llvm")(0.7), rel=1e-12)
