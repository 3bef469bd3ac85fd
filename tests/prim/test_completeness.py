"""Every primitive has every rule it needs, and its traits agree with its rules.

A primitive is one definition in `myia/prim/` with its traits (elementwise arity,
commutative, foldable, effect, libm); its rules live in tables keyed by the primitive
object.  This file lists, for each primitive, what it lacks among: an inference rule,
a bprop, a jvp and a jet rule (unless it is `nondiff`), a batching rule (vmap), an
LLVM lowering and a CuPy implementation.  A missing rule fails naming the primitive and the rule, unless it is a
known gap below, with its reason; a known gap that is closed fails too, so the list
only shrinks.
"""

import math

import numpy as np
import pytest

import myia  # noqa: F401  (registers the library's primitives)
from myia.ad.batching import STRUCTURAL as BATCHED_BY_THE_TRANSFORM
from myia.ad.batching_rules import rule_of
from myia.backend.cupy.codegen import EW_OPS
from myia.backend.cupy.emulator import Emulator
from myia.backend.cupy.impls import HOST_ARGS, STRUCTURAL, ImplTable
from myia.backend.llvm.registry import RULES as LLVM_RULES
from myia.backend.llvm.ops_elementwise import EW_ALL, LIBM_NAMES
from myia.infer.rules import RULES as INFER_RULES
from myia.prim import all_primitives
from myia.prim.grad_ops import EnvInstance

_BY_AD = "built by the AD transform itself (ad.reverse / ad.forward), not by a rule"
_AT_RUN_TIME = "J, Jinv and T left for run time are run by the VM, never lowered"
_FOLDED = "inference always answers it with a constant: it never reaches a backend"
_HOST = "runs on the host on CuPy (counted in ImplTable.stats['host_fallback'])"
_STATIC = ("vmap: its inputs are known when compiling (shapes, axes, slices, kinds), "
           "so they never carry a batch axis")
_RESOLVED = "vmap batches optimized programs, where J and T are resolved"

#: (primitive, rule) -> why it is missing
KNOWN_GAPS = {
    ("make_tuple", "bprop"): _BY_AD,
    ("make_tuple", "jvp"): _BY_AD,
    ("T", "bprop"): "T (forward mode of a closure) is transposed by ad.forward, not by J",
    ("J", "jvp"): _BY_AD,
    ("J", "jet"): _BY_AD,
    ("Jinv", "jvp"): _BY_AD,
    ("Jinv", "jet"): _BY_AD,
    ("T", "jvp"): _BY_AD,
    ("T", "jet"): _BY_AD,
    ("J", "cupy"): _AT_RUN_TIME,
    ("Jinv", "cupy"): _AT_RUN_TIME,
    ("T", "cupy"): _AT_RUN_TIME,
    ("env_new", "jet"): "the empty environment has no Taylor coefficients to carry",
    ("concat_bounds", "llvm"): _FOLDED,
    ("concat_bounds", "cupy"): _FOLDED,
    ("is_none", "llvm"): _FOLDED,
    ("index_kind", "llvm"): _FOLDED,
    ("index_kind", "cupy"): _FOLDED,
    ("is_none", "cupy"): _FOLDED,
    ("python_number", "llvm"): _FOLDED,
    ("python_number", "cupy"): _FOLDED,
    ("range_bound", "llvm"): "opt.rules.drop_markers removes it once inference checked n",
    ("range_bound", "cupy"): "opt.rules.drop_markers removes it once inference checked n",
    ("differentiable", "llvm"): "opt.rules.drop_markers removes it after AD",
    ("differentiable", "cupy"): "opt.rules.drop_markers removes it after AD",
    ("stop_gradient", "llvm"): "opt.rules.stop_gradient_done removes it after AD",
    ("stop_gradient", "cupy"): "opt.rules.stop_gradient_done removes it after AD",
    ("slice_start", "llvm"): "opt.rules.slice_start_of_make_slice removes it",
    ("closure_bound", "cupy"): "closure records are host objects on CuPy",
    ("make_closure", "cupy"): "closure records are host objects on CuPy",
    ("kind_of", "cupy"): "a container kind is a host value",
    ("tuple_as", "cupy"): "a container conversion: its elements pass through",
    ("structure_like", "cupy"): "a container conversion: its elements pass through",
    ("argsort", "cupy"): _HOST,
    ("linear_recurrence", "cupy"): _HOST,
    ("take_along_axis", "cupy"): _HOST,
    ("take_along_axis_grad", "cupy"): _HOST,
    ("J", "batch"): _RESOLVED,
    ("Jinv", "batch"): _RESOLVED,
    ("T", "batch"): _RESOLVED,
    ("closure_bound", "batch"): "closure records are made by the backends, after vmap",
    ("make_closure", "batch"): "closure records are made by the backends, after vmap",
    ("concat_bounds", "batch"): _STATIC,
    ("index_kind", "batch"): _STATIC,
    ("inverse_axes", "batch"): _STATIC,
    ("is_none", "batch"): _STATIC,
    ("kind_of", "batch"): _STATIC,
    ("make_dslice", "batch"): _STATIC,
    ("make_slice", "batch"): _STATIC,
    ("python_number", "batch"): _STATIC,
    ("reduced_shape", "batch"): _STATIC,
    ("reduced_size", "batch"): _STATIC,
    ("slice_start", "batch"): _STATIC,
}

PRIMITIVES = sorted((p for p in all_primitives().values() if "compile_time" not in p.rules),
                    key=lambda p: p.name)
_CUPY = ImplTable(Emulator())


def missing_rules(p):
    """The rules primitive `p` lacks."""
    missing = []
    if p not in INFER_RULES:
        missing.append("infer")
    if not p.nondiff:
        missing += [k for k in ("bprop", "jvp", "jet") if k not in p.rules]
    if p not in BATCHED_BY_THE_TRANSFORM and rule_of(p) is None:
        missing.append("batch")
    if p not in LLVM_RULES:
        missing.append("llvm")
    if p not in _CUPY.device and p not in STRUCTURAL and p not in HOST_ARGS:
        missing.append("cupy")
    return missing


@pytest.mark.parametrize("p", PRIMITIVES, ids=lambda p: p.name)
def test_primitive_has_its_rules(p):
    unexplained = [k for k in missing_rules(p) if (p.name, k) not in KNOWN_GAPS]
    assert not unexplained, (
        f"primitive {p.name!r} has no {' and no '.join(unexplained)} rule; define it next to "
        f"the primitive (myia/prim/) or in the backend's table, or add the gap to "
        f"KNOWN_GAPS with the reason")


def test_known_gaps_are_still_gaps():
    by_name = {p.name: p for p in PRIMITIVES}
    closed = [(name, k) for name, k in KNOWN_GAPS
              if name not in by_name or k not in missing_rules(by_name[name])]
    assert not closed, f"these gaps are closed (or the primitive is gone): remove them: {closed}"


def test_compile_time_primitives_are_nondiff():
    # they run during inference on constants: nothing to differentiate or lower
    ct = [p.name for p in all_primitives().values() if "compile_time" in p.rules]
    assert ct, "the library registers compile-time helpers"
    assert all(all_primitives()[n].nondiff for n in ct)


ELEMENTWISE = [p for p in PRIMITIVES if p.elementwise]


@pytest.mark.parametrize("p", ELEMENTWISE, ids=lambda p: p.name)
def test_elementwise_trait_reaches_every_backend(p):
    # the trait alone makes the LLVM backend fuse it into array loops; CuPy fuses the
    # primitives that have a C template, and runs floordiv and mod (Python's floor
    # semantics) through CuPy's own ufuncs
    assert p.name in EW_ALL
    assert p in EW_OPS or p.name in ("floordiv", "mod"), f"{p.name}: no CuPy template"
    assert p in INFER_RULES and p in LLVM_RULES


def _samples(p):
    if p.name == "env_add":
        e1 = EnvInstance({"a": 1.0, "b": 2.0})
        return [(e1, EnvInstance({"b": 0.5, "c": -1.0})), (e1, EnvInstance())]
    if p.name.startswith("bitwise") or p.name == "invert":
        return [(5, 3), (-2, 7)]
    if p.name in ("floordiv", "mod"):
        return [(7.5, 2.0), (-3, 2)]
    return [(0.5, 0.25), (1.5, -0.75), (-0.0, 0.0), (2, 3)]


@pytest.mark.parametrize("p", [p for p in PRIMITIVES if p.commutative], ids=lambda p: p.name)
def test_commutative_trait_holds(p):
    # CSE and the opt rules treat f(a, b) and f(b, a) as one value: they must be
    for a, b in _samples(p):
        x, y = p.impl(a, b), p.impl(b, a)
        if isinstance(x, EnvInstance):
            assert x.contents == y.contents, (p.name, a, b)
        else:
            assert x == y and math.copysign(1, x) == math.copysign(1, y), (p.name, a, b)


@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
def test_min_max_are_not_commutative(name):
    # maximum(-0.0, 0.0) is -0.0 and maximum(0.0, -0.0) is 0.0 in NumPy: CSE must not
    # merge them
    p = all_primitives()[name]
    assert not p.commutative
    assert math.copysign(1, p.impl(-0.0, 0.0)) != math.copysign(1, p.impl(0.0, -0.0))


def test_effects_are_not_folded():
    effects = [p for p in PRIMITIVES if p.effect]
    assert [p.name for p in effects] == ["assert"]
    assert not any(p.foldable for p in effects)


@pytest.mark.parametrize("p", [p for p in PRIMITIVES if p.libm], ids=lambda p: p.name)
def test_libm_primitives_compute_their_c_function(p):
    # `libm` names the C function the backends call; NumPy's ufunc of the same name
    # is the reference (SciPy's where NumPy has none: erf, erfc, gammaln)
    import scipy.special

    assert p.name in LIBM_NAMES
    args = [1.3 if p.name == "arccosh" else 0.3, 0.7][:p.elementwise]
    reference = getattr(np, p.name, None) or getattr(scipy.special, p.name)
    expected = reference(*args)
    assert p.impl(*args) == pytest.approx(expected, rel=1e-15)
    cfun = getattr(math, p.libm, None)
    if cfun is not None:
        assert cfun(*args) == pytest.approx(expected, rel=1e-12)
