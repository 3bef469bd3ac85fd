"""The CuPy backend: typed programs with their arrays on an NVIDIA GPU.

    codegen    CUDA C templates of the elementwise primitives; kernel sources as data
    fusion     the fusion pass: groups of elementwise nodes (and the reductions they
               feed) -> one kernel each; `fusion_plan` (data) and `fuse` (rewrite)
    kernels    `FusedKernel`: a group as a callable value; CuPy kernel objects, cached
               per source and signature
    impls      every primitive on device arrays (cuBLAS for dot), device scalars
    executor   `CupyBackend`: the pipeline's optimized program, fused, run on the VM
               (control flow and scalars on the host), cached per argument types
    device     finding CuPy and a CUDA device; the errors when there is none
    emulator   a CPU stand-in for CuPy that runs the generated CUDA C compiled by the
               host's C++ compiler (tests and debugging without a GPU)

    import myia
    f = myia.compile(fn, backend="cupy")     # MyiaBackendError without CuPy or a GPU
    y = f(x)                                 # CuPy arrays; myia.backend.cupy.to_numpy(y)

    from myia.backend.cupy import plan_for
    print(plan_for(fn, x))                   # the groups and their CUDA source (no GPU)
"""

from ...infer import signature_of
from ...ir import clone_many, manage
from .device import check_available, device_problem, is_available, load_cupy
from .executor import CupyBackend, to_numpy
from .fusion import FusionPlan, Group, fusion_plan, remove_aliases


def plan_for(fn, *args, fuse=True):
    """The fusion plan of `fn` (a subset function or a transformed one, e.g.
    `myia.value_and_grad(f)`) specialized for `args`: pure data, no GPU needed."""
    # import here: the pipeline is a layer above backend (see tests/test_layering.py)
    from ...pipeline import optimized_for

    typed = optimized_for(fn, signature_of(args))[0]
    typed = clone_many(manage(typed).graphs)[typed]  # the pipeline's is shared
    remove_aliases(typed)
    return fusion_plan(typed)


__all__ = ["CupyBackend", "FusionPlan", "Group", "check_available", "device_problem",
           "fusion_plan", "is_available", "load_cupy", "plan_for", "to_numpy"]
