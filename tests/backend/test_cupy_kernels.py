"""The CuPy backend's fusion decisions and generated CUDA sources, on the CPU.

Three levels, none needing a GPU:

- the plan (which nodes form which kernel, with which inputs and outputs) and the
  source text: always run;
- the sources given to CuPy's `ElementwiseKernel` / `ReductionKernel` constructors
  (CuPy builds kernel objects without a device; it compiles at the first launch):
  run where CuPy is installed (the [test] extra installs it);
- the sources compiled for a GPU by `nvcc -ptx` (no device needed): run where the
  CUDA toolkit is installed (it is on this project's machines).

Running the kernels on the CPU is `test_cupy_corpus.py` (the emulator).
"""

import shutil
import subprocess

import numpy as np
import pytest

import myia
from myia.backend.cupy import plan_for
from myia.backend.cupy.codegen import ElementwiseSource, literal
from tests.corpus import CASES


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def elementwise(plan):
    return [g for g in plan if g.kind == "elementwise"]


def reductions(plan):
    return [g for g in plan if g.kind == "reduction"]


# ---- subset programs ---------------------------------------------------------------------


def dense(x, W, b):
    return np.tanh(x @ W + b)


def mlp_loss(W1, b1, W2, b2, X, Y):
    H = np.tanh(X @ W1 + b1)
    out = H @ W2 + b2
    return np.sum((out - Y) ** 2)


def exp_times(x, y):
    return np.exp(x) * y


def across_matmul(x, W):
    return np.tanh(np.exp(x) @ W)


def shared_value(x, W):
    y = np.exp(x)
    return (y @ W, y * 2.0)


def cycle(x, W):
    a = x * 2.0
    b = a @ W
    return a + b


def broadcast_inner(x, b):
    return x + b * b


def sum_of_squares(x):
    return np.sum(x * x, axis=0)


def row_max(x):
    return np.max(np.exp(x), axis=1)


def shared_with_reduction(x, b):
    m = b * b
    v = x * m
    return (v, np.sum(v + m, axis=0))


def f32_scale(x):
    return x * 0.5 + 1.0


MLP_ARGS = (rand(784, 256), rand(256), rand(256, 10), rand(10), rand(64, 784), rand(64, 10))


# ---- decisions -------------------------------------------------------------------------


def test_dense_add_and_tanh_fused_into_one_kernel():
    plan = plan_for(dense, rand(8, 5), rand(5, 3), rand(3))
    (g,) = plan.groups
    assert g.kind == "elementwise"
    assert g.prims == ["add", "tanh"]
    assert len(g.outputs) == 1 and g.shape == (8, 3)
    # the matmul's result and b come in; the matmul is not in the kernel
    assert [n.abstract.shape for n in g.inputs] == [(8, 3), (3,)]
    assert "tanh(t0)" in g.source.operation


def test_exact_source_of_a_small_group():
    plan = plan_for(exp_times, rand(3, 4), rand(4))
    (g,) = plan.groups
    src = g.source
    assert isinstance(src, ElementwiseSource)
    assert src.in_params == "float64 in0, float64 in1"
    assert src.out_params == "float64 out0"
    assert src.operation == (
        "const double t0 = exp(in0);  // exp\n"
        "const double t1 = (t0 * in1);  // mul\n"
        "out0 = t1;")
    assert src.name.startswith("myia_exp_mul_")


def test_no_fusion_across_a_matmul():
    plan = plan_for(across_matmul, rand(4, 5), rand(5, 6))
    assert [g.prims for g in plan] == [["exp"], ["tanh"]]


def test_value_used_outside_is_an_output():
    plan = plan_for(shared_value, rand(4, 5), rand(5, 6))
    (g,) = elementwise(plan)
    assert g.prims == ["exp", "mul"]
    assert [_prim(o) for o in g.outputs] == ["exp", "mul"]
    assert g.source.out_params == "float64 out0, float64 out1"


def test_no_group_that_would_wait_for_itself():
    # a + (a @ W): a feeds the matmul whose result comes back: a stays outside
    plan = plan_for(cycle, rand(4, 4), rand(4, 4))
    assert [g.prims for g in plan] == [["mul"], ["add"]]


def test_smaller_intermediate_broadcast_inside_the_kernel():
    plan = plan_for(broadcast_inner, rand(3, 4), rand(4))
    (g,) = plan.groups
    assert g.prims == ["mul", "add"]
    assert g.shape == (3, 4)
    assert [n.abstract.shape for n in g.inputs] == [(4,), (3, 4)]


def test_reduction_with_its_elementwise_map():
    plan = plan_for(sum_of_squares, rand(5, 3))
    (g,) = plan.groups
    assert g.kind == "reduction"
    assert g.prims == ["mul", "reduce_sum"]
    assert g.reduce == ("sum", (0,), (3,))
    assert g.source.reduce_expr == "a + b" and g.source.identity == "0"
    assert "(in0 * in0)" in g.source.preamble


def test_reduction_recomputes_what_it_shares_with_a_group():
    # v + m is only summed: the reduction computes it (and m, v) itself; the
    # elementwise group keeps v (returned) and m stays internal to it
    plan = plan_for(shared_with_reduction, rand(3, 4), rand(4))
    ew, red = plan.groups
    assert ew.kind == "elementwise" and [_prim(o) for o in ew.outputs] == ["mul"]
    assert ew.outputs[0].abstract.shape == (3, 4)
    assert red.kind == "reduction" and red.prims == ["mul", "mul", "add", "reduce_sum"]
    assert [n.abstract.shape for n in red.inputs] == [(4,), (3, 4)]


def test_max_reduction_propagates_nan_from_minus_infinity():
    (g,) = plan_for(row_max, rand(5, 3)).groups
    assert g.prims == ["exp", "reduce_max"]
    assert g.source.identity == "-MYIA_INF"
    assert g.source.reduce_expr == "((a != a || a >= b) ? a : b)"


def test_float32_literals():
    (g,) = plan_for(f32_scale, rand(3).astype(np.float32)).groups
    assert g.source.in_params == "float32 in0"
    assert "0.5f" in g.source.operation and "1.0f" in g.source.operation


def test_literals():
    assert literal(2, "float64") == "2.0"
    assert literal(1e-20, "float64") == "1e-20"
    assert literal(3, "int64") == "3LL"
    assert literal(True, "bool") == "true"
    assert literal(float("inf"), "float64") is None  # passed as a parameter


def test_mlp_value_and_grad_plan():
    vg = myia.value_and_grad(mlp_loss, argnums=(0, 1, 2, 3))
    plan = plan_for(vg, *MLP_ARGS)
    prims = [g.prims for g in plan]
    assert all("dot" not in p for p in prims)
    # forward: add+tanh; the loss: one reduction computing (out - Y) ** 2 on the fly
    assert ["add", "tanh"] in prims
    (loss,) = [g for g in reductions(plan) if g.source.out_params == "float64 out0"
               and g.reduce[2] == ()]
    assert len(loss.prims) == 2 and loss.prims[1] == "reduce_sum"  # pow or mul
    assert "(in0 * in0)" in loss.source.preamble
    # backward: dout * (1 - H * H) in one kernel; the output layer's error in one
    assert ["mul", "sub", "mul"] in prims
    (err,) = [g for g in elementwise(plan) if "add" in g.prims and "sub" in g.prims]
    assert len(err.outputs) == 2  # out - Y (for the loss) and its sensitivity
    # the bias gradients: sums over the batch axis
    bias = [g for g in reductions(plan) if g.reduce[1] == (0,)]
    assert sorted(g.reduce[2] for g in bias) == [(10,), (256,)]
    # 3 elementwise kernels and 3 reductions for the whole step (and 5 matmuls)
    assert (len(elementwise(plan)), len(reductions(plan))) == (3, 3)


def test_plan_prints_groups_and_sources():
    text = str(plan_for(dense, rand(8, 5), rand(5, 3), rand(3)))
    assert "elementwise group add+tanh" in text
    assert "ElementwiseKernel myia_add_tanh_" in text


def _prim(node):
    return node.inputs[0].value.name


# ---- all sources of the corpus -----------------------------------------------------------

ARRAY_CASES = [c for c in CASES if "array" in c.tags]


def corpus_sources():
    """Every kernel source of the array programs of the corpus and their gradients."""
    sources = {}
    for c in ARRAY_CASES:
        fns = [c.fn] + ([myia.grad(c.fn)] if "differentiable" in c.tags else [])
        for fn in fns:
            for g in plan_for(fn, *c.args):
                sources[g.source.key] = g.source
    return list(sources.values())


@pytest.fixture(scope="module")
def all_sources():
    return corpus_sources()


def test_corpus_has_kernels_of_both_kinds(all_sources):
    kinds = {s.kind for s in all_sources}
    assert kinds == {"elementwise", "reduction"}
    assert len(all_sources) > 30


def test_cupy_constructs_every_kernel(all_sources):
    try:
        import cupy
    except ImportError:
        pytest.skip("CuPy is not installed (pip install myia[test] or myia[gpu])")
    from myia.backend.cupy.kernels import build_kernel

    for src in all_sources:
        k = build_kernel(cupy, src)
        assert k.name == src.name
        kind = cupy.ElementwiseKernel if src.kind == "elementwise" else cupy.ReductionKernel
        assert isinstance(k, kind)


def test_kernels_cached_per_source(all_sources):
    from myia.backend.cupy.emulator import Emulator
    from myia.backend.cupy.kernels import kernel_for

    xp = Emulator()
    src = all_sources[0]
    assert kernel_for(xp, src) is kernel_for(xp, src)


# ---- compiled for a GPU by nvcc (no device needed) -------------------------------------------

_CTYPES = {"float64": "double", "float32": "float", "int64": "long long", "int32": "int",
           "bool": "bool"}


def _cuda_unit(i, src):
    """`src` as CuPy would launch it, roughly: one thread per element, inputs read into
    local values, outputs written through references."""

    def params(text):
        return [p.split() for p in text.split(",") if p.strip()]

    ins, outs = params(src.in_params), params(src.out_params)
    sig = ", ".join([f"const {_CTYPES[t]}* _p_{n}" for t, n in ins]
                    + [f"{_CTYPES[t]}* _p_{n}" for t, n in outs] + ["long long _n"])
    loads = "\n".join(f"  const {_CTYPES[t]} {n} = _p_{n}[_i];" for t, n in ins)
    if src.kind == "elementwise":
        stores = "\n".join(f"  {_CTYPES[t]} &{n} = _p_{n}[_i];" for t, n in outs)
        body = f"{loads}\n{stores}\n  {{\n{src.operation}\n  }}"
    else:
        (t, n), = outs
        rt = src.reduce_type
        body = (f"{loads}\n  {rt} _s = {rt}({src.identity});\n"
                f"  {rt} _a = static_cast<{rt}>({src.map_expr});\n"
                f"  _s = REDUCE(_s, _a);\n  {_CTYPES[t]} &{n} = _p_{n}[_i];\n"
                f"  {{ {rt} a = _s; {src.post_map_expr}; }}")
    reduce_def = (f"#undef REDUCE\n#define REDUCE(a, b) ({src.reduce_expr})\n"
                  if src.kind == "reduction" else "")
    return (f"namespace k{i} {{\n{src.preamble}\n{reduce_def}"
            f"extern \"C\" __global__ void {src.name}_{i}({sig}) {{\n"
            f"  long long _i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
            f"  if (_i >= _n) return;\n{body}\n}}\n}}\n")


def test_nvcc_compiles_every_kernel(all_sources, tmp_path):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("the CUDA toolkit's nvcc is not installed")
    unit = "\n".join(_cuda_unit(i, s) for i, s in enumerate(all_sources))
    path = tmp_path / "kernels.cu"
    path.write_text(unit)
    r = subprocess.run([nvcc, "-arch=sm_80", "-ptx", "-o", str(tmp_path / "k.ptx"), str(path)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-4000:]
