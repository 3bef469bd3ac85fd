"""Run-time slices `x[i:i + n]` (n known when compiling) and index arrays `x[idx]`
(issue 22, part 1): values against NumPy on both backends, gradients against autograd
(first and second order) and finite differences (cases: cases_dynamic.py); the bounds
errors (what they name, the line); a whole training epoch compiled as one program,
against the VM and a NumPy loop; the CuPy kernels, built without a device and run on
the CPU emulator."""

import inspect
import shutil
import subprocess

import numpy as np
import pytest

import myia
from myia.errors import (MyiaBackendError, MyiaIndexError, MyiaSliceBoundsError,
                         MyiaTypeError, MyiaValueError)

from . import cases_dynamic
from .harness import BACKENDS, autograd_twin, check_fd, check_grad, check_value

CASES = cases_dynamic.CASES
GRAD = [c for c in CASES if c.order >= 1]
SECOND = [c for c in CASES if c.order >= 2]


@pytest.fixture(scope="module")
def twin():
    return autograd_twin(cases_dynamic)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_value(case, backend):
    check_value(case, backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", GRAD, ids=str)
def test_grad(case, backend, twin):
    check_grad(case, backend, twin, order=1)


@pytest.mark.parametrize("case", GRAD, ids=str)
def test_grad_finite_differences(case):
    check_fd(case, "vm")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", SECOND, ids=str)
def test_second_order(case, backend, twin):
    check_grad(case, backend, twin, order=2)


def test_what_indexing_becomes():
    """The program says what happens: dynamic_slice and gather, and in the gradient
    their transposes (nothing of NumPy's shortening or clipping)."""

    def f(x, i, idx):
        return np.sum(np.sin(x[i:i + 2, 1:]) ) + np.sum(x[idx] * 2.0)

    x, idx = cases_dynamic.X, np.array([1, 1])
    text = str(myia.ir(f, x, 2, idx, stage="optimized"))
    assert "dynamic_slice(%x, %i, 0, 2) : f64[2,4]" in text
    assert "gather(%x, %idx, 0) : f64[2,4]" in text
    grad = str(myia.ir(myia.grad(f), x, 2, idx, stage="optimized"))
    assert "dynamic_update_slice(" in grad and "scatter_add(" in grad


def _both(x, i, idx):
    return np.sum(np.sin(x[i:i + 2]) * x[idx[0]]) + np.sum(np.sin(x[idx]) * 2.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_forward_mode_jet_and_hessian(backend, monkeypatch):
    """jvp, the Taylor jet and the Hessian (forward over reverse) see the same static
    shapes: the slice's length is an input of its own that every transform keeps."""
    monkeypatch.setenv("MYIA_BACKEND", backend)
    x, idx = cases_dynamic.X, np.array([1, 1, -1])
    t = np.random.default_rng(3).standard_normal(x.shape)
    eps = 1e-6
    fd = (_both(x + eps * t, 2, idx) - _both(x - eps * t, 2, idx)) / (2 * eps)
    _, tangent = myia.jvp(_both, (x, 2, idx), (t, 0, np.zeros(3, np.int64)))
    np.testing.assert_allclose(tangent, fd, rtol=1e-7)
    h = myia.hessian(_both)(x, 2, idx)
    assert h.shape == x.shape * 2
    g = myia.compile(myia.grad(_both), backend="vm")
    np.testing.assert_allclose(np.tensordot(h, t, 2), (g(x + eps * t, 2, idx) -
                                                       g(x - eps * t, 2, idx)) / (2 * eps),
                               rtol=1e-6, atol=1e-8)


def test_scatter_add_accumulates_repeated_indices():
    def f(x, idx):
        return np.sum(x[idx] * np.array([[1.0], [2.0], [4.0]]))

    x = np.zeros((3, 2))
    for backend in BACKENDS:
        g = myia.compile(myia.grad(f), backend=backend)(x, np.array([1, 1, -2]))
        np.testing.assert_array_equal(g, [[0, 0], [7, 7], [0, 0]])  # as np.add.at


# ---- bounds errors ---------------------------------------------------------------------------


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def batch_sum(x, i):
    return np.sum(x[i:i + 4])


def pick(x, idx):
    return np.sum(x[idx])


def row(x, i):
    return x[i]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("start", [7, -3, -11, 10])
def test_slice_past_the_end_is_a_located_error(backend, start):
    """NumPy would give fewer than 4 rows (x[7:11], x[-3:1] is empty): an error that
    names the start, the length and the size, at the line, with what to do."""
    x = np.ones((10, 3))
    with pytest.raises(MyiaSliceBoundsError) as e:
        myia.compile(batch_sum, backend=backend)(x, start)
    err = e.value
    assert isinstance(err, MyiaIndexError) and isinstance(err, IndexError)
    assert isinstance(err, MyiaValueError)
    assert err.message == (f"slice start {start} with length 4 is out of bounds for axis 0 "
                           f"with size 10 (NumPy would return fewer elements)")
    assert err.loc.line == _line_of(batch_sum, "x[i:i + 4]")
    assert "x[i:i + 4]" in str(err)  # the source line, with its caret
    assert "range(0, n - n % bs, bs)" in err.hint


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("start", [0, 6, -10, -5])
def test_slice_inside_matches_numpy(backend, start):
    x = np.arange(30.0).reshape(10, 3)
    assert myia.compile(batch_sum, backend=backend)(x, start) == np.sum(x[start:start + 4])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("bad", [5, -6])
def test_index_array_out_of_bounds_is_a_located_error(backend, bad):
    with pytest.raises(MyiaIndexError) as e:
        myia.compile(pick, backend=backend)(np.ones((5, 2)), np.array([0, bad, 1]))
    assert e.value.message == f"index {bad} is out of bounds for axis 0 with size 5"
    assert e.value.loc.line == _line_of(pick, "x[idx]")


@pytest.mark.parametrize("backend", BACKENDS)
def test_index_array_out_of_bounds_in_the_gradient(backend):
    with pytest.raises(MyiaIndexError, match="index 9 is out of bounds for axis 0 with size 5"):
        myia.compile(myia.grad(pick), backend=backend)(np.ones((5, 2)), np.array([9]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_run_time_int_index_out_of_bounds(backend):
    """x[i] with i known at run time (it worked before): the index, the size, the line."""
    with pytest.raises(MyiaValueError) as e:
        myia.compile(row, backend=backend)(np.ones((4, 2)), 4)
    assert "index 4 is out of bounds for axis 0 with size 4" in e.value.message
    assert e.value.loc.line == _line_of(row, "x[i]")


def test_slice_longer_than_the_axis_is_refused_when_compiling():
    with pytest.raises(MyiaSliceBoundsError, match="a slice of length 4 cannot fit inside "
                                                  "axis 0 of size 3") as e:
        myia.compile(batch_sum, backend="vm")(np.ones((3, 2)), 0)
    assert e.value.loc.line == _line_of(batch_sum, "x[i:i + 4]")


def unrelated_bounds(x, i, j):
    return x[i:j]


def mask(x):
    return x[x > 0.0]


def arrays_apart(x, idx):
    return x[idx, :, idx]


def test_what_stays_refused():
    x = np.ones((4, 3))
    # a length that depends on the values: the VM runs it, the LLVM backend says why not
    np.testing.assert_array_equal(myia.compile(unrelated_bounds, backend="vm")(x, 1, 3), x[1:3])
    with pytest.raises(MyiaBackendError, match="computed at run time") as e:
        myia.compile(unrelated_bounds, backend="llvm")(x, 1, 3)
    assert "x[i:i + n]" in e.value.hint
    with pytest.raises(MyiaTypeError, match="boolean mask") as e:
        myia.compile(mask, backend="vm")(x)
    assert "np.where" in e.value.hint
    # NumPy moves the axes of index arrays that are not next to each other to the front
    with pytest.raises(MyiaTypeError, match="index arrays go next to each other"):
        myia.compile(arrays_apart, backend="vm")(np.ones((2, 3, 4)), np.array([0, 1]))


# ---- a whole epoch, compiled as one program ------------------------------------------------


def loss(W, b, X, Y):
    out = np.tanh(X @ W + b)
    return np.mean((out - Y) ** 2)


def epoch(W, b, X, Y, perm, lr):
    n = X.shape[0]
    total = 0.0
    for i in range(0, n, 32):
        idx = perm[i:i + 32]
        xb = X[idx]
        yb = Y[idx]
        gW, gb = myia.grad(loss, argnums=(0, 1))(W, b, xb, yb)
        W = W - lr * gW
        b = b - lr * gb
        total = total + loss(W, b, xb, yb)
    return W, b, total


def epoch_full_batches(W, b, X, Y, perm, lr):
    n = X.shape[0]
    total = 0.0
    for i in range(0, n - n % 32, 32):  # the last partial batch dropped
        xb = X[perm[i:i + 32]]
        yb = Y[perm[i:i + 32]]
        gW, gb = myia.grad(loss, argnums=(0, 1))(W, b, xb, yb)
        W = W - lr * gW
        b = b - lr * gb
        total = total + loss(W, b, xb, yb)
    return W, b, total


def numpy_epoch(W, b, X, Y, perm, lr, bs=32):
    """The same epoch, by hand in NumPy (the gradient written out)."""
    total = 0.0
    n = X.shape[0]
    for i in range(0, n - n % bs, bs):
        xb, yb = X[perm[i:i + bs]], Y[perm[i:i + bs]]
        out = np.tanh(xb @ W + b)
        dz = 2.0 * (out - yb) / out.size * (1.0 - out ** 2)
        W, b = W - lr * (xb.T @ dz), b - lr * dz.sum(axis=0)
        total += np.mean((np.tanh(xb @ W + b) - yb) ** 2)
    return W, b, total


def _data(n):
    rng = np.random.default_rng(5)
    return (rng.standard_normal((6, 3)) * 0.3, np.zeros(3), rng.standard_normal((n, 6)),
            rng.standard_normal((n, 3)), rng.permutation(n), 0.5)


def test_epoch_on_both_backends_against_the_vm_and_numpy():
    args = _data(128)
    want = numpy_epoch(*args)
    vm = myia.compile(epoch, backend="vm")(*args)
    llvm = myia.compile(epoch, backend="llvm")(*args)
    for k in range(3):
        np.testing.assert_allclose(vm[k], want[k], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(llvm[k], vm[k], rtol=1e-12, atol=1e-14)
    assert want[2] > 0 and not np.allclose(want[0], args[0])  # it trained


@pytest.mark.parametrize("backend", BACKENDS)
def test_epoch_with_a_partial_last_batch(backend):
    """range(0, n, 32) with n = 100: the last batch would be 4 rows, not 32; the error
    says so and how to drop it; with range(0, n - n % 32, 32) the epoch runs."""
    args = _data(100)
    with pytest.raises(MyiaSliceBoundsError) as e:
        myia.compile(epoch, backend=backend)(*args)
    assert "slice start 96 with length 32" in e.value.message
    assert "with size 100" in e.value.message
    assert e.value.loc.line == _line_of(epoch, "perm[i:i + 32]")
    assert "range(0, n - n % bs, bs)" in e.value.hint
    got = myia.compile(epoch_full_batches, backend=backend)(*args)
    want = numpy_epoch(*args)
    for k in range(3):
        np.testing.assert_allclose(got[k], want[k], rtol=1e-12, atol=1e-14)


# ---- CuPy: kernels built without a device, run on the CPU emulator ----------------------------


def _cupy_sources():
    from myia.backend.cupy.dynamic import kernel_sources

    return {name: src for dt in ("float64", "float32", "int64")
            for name, src in kernel_sources(dt).items()}


def test_cupy_constructs_the_kernels():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed (pip install myia[test])")
    from myia.backend.cupy.dynamic import BAD_INDICES

    for name, (ins, outs, op) in _cupy_sources().items():
        k = cupy.ElementwiseKernel(ins, outs, op, name)
        assert isinstance(k, cupy.ElementwiseKernel) and k.name == name
    k = cupy.ReductionKernel(*BAD_INDICES, reduce_type="int")
    assert isinstance(k, cupy.ReductionKernel)


_CT = {"float64": "double", "float32": "float", "int64": "long long", "int32": "int"}


def test_nvcc_compiles_the_kernels(tmp_path):
    """Each kernel body as CuPy would launch it (one thread per element, raw arrays as
    pointers, `i` the element's index), compiled for a GPU (no device needed)."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("the CUDA toolkit's nvcc is not installed")
    units = []
    for k, (name, (ins, outs, op)) in enumerate(_cupy_sources().items()):
        params, loads = [], []
        for text, out in ((ins, False), (outs, True)):
            for p in text.split(","):
                words = p.split()
                raw = words[0] == "raw"
                t, n = words[-2:]
                const = "" if out else "const "
                params.append(f"{const}{_CT[t]}* {'' if raw else '_p_'}{n}")
                if not raw:
                    loads.append(f"{_CT[t]} {'&' if out else ''}{n} = _p_{n}[i];")
        units.append(f'extern "C" __global__ void {name}_{k}({", ".join(params)}, long long _n)'
                     f" {{\n long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
                     f" if (i >= _n) return;\n {' '.join(loads)}\n{op}}}\n")
    path = tmp_path / "dynamic.cu"
    path.write_text("\n".join(units))
    r = subprocess.run([nvcc, "-arch=sm_80", "-ptx", "-o", str(tmp_path / "k.ptx"), str(path)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]


def _gather_sum(x, idx, i):
    return np.sum(np.sin(x[idx]) * x[i:i + 2].sum())


def test_cupy_backend_on_the_emulator():
    from myia.backend.cupy import CupyBackend
    from myia.backend.cupy.emulator import Emulator, compiler
    from myia.pipeline import optimized_program

    if compiler() is None:
        pytest.fail("the emulator needs a C++ compiler (g++): apt-get install g++")
    b = CupyBackend(optimized_program, xp=Emulator())
    x, idx = cases_dynamic.X, np.array([[1, 3], [1, -1]])
    for fn in (_gather_sum, myia.grad(_gather_sum)):
        before = b.stats["host_fallback"]
        got = b.run(fn, (x, idx, 2), to_numpy=True)
        want = myia.compile(fn, backend="vm")(x, idx, 2)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
        assert b.stats["host_fallback"] == before  # gather and scatter_add ran as kernels
    with pytest.raises(MyiaIndexError, match="index 7 is out of bounds for axis 0 with size 7"):
        b.run(_gather_sum, (x, np.array([7]), 2))
    with pytest.raises(MyiaSliceBoundsError, match="slice start 6 with length 2"):
        b.run(_gather_sum, (x, idx, 6))


def _rows(x, idx):
    return x[idx]


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "every_other_column",
                                    "float32", "int64", "3d"])
def test_gathered_rows_on_llvm_are_numpy_s(layout):
    """Rows of x[idx] are copied whole where x's rows are contiguous, element by
    element where x is a view that they are not: both give NumPy's values."""
    base = np.arange(60.0).reshape(6, 10)
    x = {"contiguous": base, "transposed": base.T[:6], "every_other_column": base[:, ::2],
         "float32": base.astype(np.float32), "int64": base.astype(np.int64),
         "3d": base.reshape(6, 5, 2)}[layout]
    idx = np.array([5, 0, -1, 2, 2])
    got = myia.compile(_rows, backend="llvm")(x, idx)
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, x[idx])
