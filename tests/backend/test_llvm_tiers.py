"""The LLVM backend's compile-time machinery: outlined kernels, the folding builder,
the partition of a module into optimized, kernel and cold parts (see
myia.backend.llvm.tiers), and their cache.  Results only: speed is measured in
benchmarks/, never asserted here."""

import llvmlite.binding as llvm_binding
import llvmlite.ir as ir
import numpy as np
import pytest

import myia
from myia.backend.llvm.objcache import ObjectCache
from myia.backend.llvm import cg, dispatch, runtime, tiers
from myia.backend.llvm.runtime import I1, I64


def mlp_loss(W1, b1, W2, b2, X, Y):
    H = np.tanh(X @ W1 + b1)
    out = H @ W2 + b2
    return np.sum((out - Y) ** 2) / X.shape[0]


def mlp_args(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((12, 16)) * 0.3, rng.standard_normal(16),
            rng.standard_normal((16, 3)) * 0.3, np.zeros(3),
            rng.standard_normal((5, 12)), rng.standard_normal((5, 3)))


def reference(*args):
    vm = myia.compile(myia.value_and_grad(mlp_loss, argnums=(0, 1, 2, 3)), backend="vm")
    return vm(*args)


def assert_close(got, want):
    assert np.allclose(got[0], want[0], rtol=1e-12)
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


@pytest.fixture
def split_everything(monkeypatch, tmp_path):
    """Every module in parts (the default keeps small ones whole), an empty cache."""
    e = runtime.engine()
    monkeypatch.setattr(tiers, "COLD_MIN_INSTRUCTIONS", 0)
    monkeypatch.setattr(e, "disk", ObjectCache(str(tmp_path)))
    monkeypatch.setattr(e, "_memory_cache", {})
    return e


def test_a_split_program_computes_what_the_vm_does(split_everything):
    args = mlp_args()
    f = myia.compile(myia.value_and_grad(mlp_loss, argnums=(0, 1, 2, 3)), backend="llvm")
    assert_close(f(*args), reference(*args))
    assert split_everything.last_parts >= 2


def test_a_split_program_is_loaded_from_the_cache(split_everything, tmp_path):
    args = mlp_args(1)
    vg = myia.value_and_grad(mlp_loss, argnums=(0, 1, 2, 3))
    first = myia.compile(vg, backend="llvm")(*args)
    assert list(tmp_path.glob("*.o")), "the object files are written to the cache"
    split_everything._memory_cache.clear()  # as in a new process
    hits = split_everything.cache_hits
    second = myia.compile(vg, backend="llvm")(*args)
    assert split_everything.cache_hits == hits + 1
    assert_close(second, first)


def test_non_contiguous_arguments_take_the_general_paths(split_everything):
    W1, b1, W2, b2, X, Y = mlp_args(2)
    X2 = np.asfortranarray(X)
    b1s = np.repeat(b1, 2)[::2]  # a stride of 2
    f = myia.compile(myia.value_and_grad(mlp_loss, argnums=(0, 1, 2, 3)), backend="llvm")
    assert_close(f(W1, b1s, W2, b2, X2, Y), reference(W1, b1, W2, b2, X, Y))


def loop_and_arrays(x, n):
    i = 0
    while i < n:
        x = np.tanh(x) + 0.5 * x
        i = i + 1
    return np.sum(x * x)


def test_loops_recursion_and_kernels_in_parts(split_everything):
    x = np.linspace(-1.0, 1.0, 37)
    f = myia.compile(loop_and_arrays, backend="llvm")
    g = myia.compile(myia.grad(loop_and_arrays), backend="llvm")
    vm = myia.compile(loop_and_arrays, backend="vm")
    vg = myia.compile(myia.grad(loop_and_arrays), backend="vm")
    assert np.isclose(f(x, 5), vm(x, 5), rtol=1e-12)
    np.testing.assert_allclose(g(x, 5), vg(x, 5), rtol=1e-11)


# ---- the folding builder ---------------------------------------------------------------------


def builder():
    m = ir.Module()
    f = ir.Function(m, ir.FunctionType(I64, [I64]), "f")
    return cg.Builder(f.append_basic_block()), f


def test_the_builder_folds_constants_and_known_fields():
    b, f = builder()
    x = f.args[0]
    assert cg._known_int(b.mul(cg.i64(6), cg.i64(7))) == 42
    assert b.add(x, cg.i64(0)) is x
    assert b.mul(cg.i64(1), x) is x
    assert cg._known_int(b.icmp_signed("<", cg.i64(-1), cg.i64(0))) == 1
    assert cg._known_int(b.icmp_unsigned("<", cg.i64(-1), cg.i64(0))) == 0
    assert b.select(ir.Constant(I1, 1), x, cg.i64(3)) is x
    agg = ir.Constant(ir.LiteralStructType([I64, ir.ArrayType(I64, 2)]), ir.Undefined)
    agg = b.insert_value(agg, x, 0)
    agg = b.insert_value(agg, cg.i64(5), [1, 1])
    assert b.extract_value(agg, 0) is x
    assert cg._known_int(b.extract_value(agg, [1, 1])) == 5
    assert not f.blocks[0].instructions[2:]  # only the two insertvalues were emitted
    assert cg._known_int(b.trunc(cg.i64(-1), ir.IntType(32))) == -1
    assert cg._known_int(b.zext(ir.Constant(I1, 1), I64)) == 1
    assert cg._known_int(b.sext(ir.Constant(I1, 1), I64)) == -1


# ---- partition ----------------------------------------------------------------------------


def test_partition_of_a_module(monkeypatch):
    monkeypatch.setattr(tiers, "COLD_MIN_INSTRUCTIONS", 0)
    m = ir.Module()
    kernel = ir.Function(m, ir.FunctionType(ir.VoidType(), [I64]), runtime.PREFIX + "_k1_loop")
    b = ir.IRBuilder(kernel.append_basic_block())
    with cg.for_range(b, 0, kernel.args[0]):
        pass
    b.ret_void()
    glue = ir.Function(m, ir.FunctionType(I64, [I64]), runtime.PREFIX + "_entry")
    b = ir.IRBuilder(glue.append_basic_block())
    b.call(kernel, [glue.args[0]])
    b.ret(glue.args[0])
    assert tiers.has_loop(kernel) and not tiers.has_loop(glue)
    parts, exported = tiers.partition(m)
    assert [(how, [f.name for f in fs]) for fs, how in parts] == [
        (tiers.KERNELS, [kernel.name]), (tiers.COLD, [glue.name])]
    assert exported == [kernel]
    for text in tiers.texts(m, parts, exported):
        mod = llvm_binding.parse_assembly(text.replace(runtime.PREFIX, "mtest"))
        mod.verify()


def test_a_region_that_returns_is_emitted_inline(monkeypatch):
    """The fallback of cg.outlined: blocks that cannot be a kernel move back."""
    def never(module, region, name):
        raise cg._NotAKernel(name)

    monkeypatch.setattr(cg, "_extract", never)
    monkeypatch.setattr(runtime.engine(), "_memory_cache", {})
    args = mlp_args(3)
    typed = myia.compile(myia.value_and_grad(mlp_loss, argnums=(0, 1, 2, 3)),
                         backend="llvm").pipeline.optimized(
        myia.value_and_grad(mlp_loss, argnums=(0, 1, 2, 3)), args)[0]
    compiled = dispatch.compile_program(typed)
    assert_close(compiled(*args), reference(*args))


def scalar_module(with_loop):
    m = ir.Module()
    f = ir.Function(m, ir.FunctionType(I64, [I64]), runtime.PREFIX + "_f")
    b = ir.IRBuilder(f.append_basic_block())
    if with_loop:
        with cg.for_range(b, 0, f.args[0]):
            pass
    b.ret(b.mul(f.args[0], f.args[0]))
    return m, f


def test_scalar_straight_line_code_is_compiled_whole_and_fast():
    m, f = scalar_module(with_loop=False)
    assert tiers.partition(m) == ([([f], tiers.STRAIGHT)], [])
    m, f = scalar_module(with_loop=True)  # a loop is worth optimizing: not straight
    assert tiers.partition(m) is None


def poly(x):
    return 0.5 * x ** 6 - 2.0 * x ** 5 + x ** 4 / 3.0 + x ** 3 - 3.0 * x + 1.0


def test_a_straight_derivative_computes_what_the_vm_does(tmp_path, monkeypatch):
    e = runtime.engine()
    monkeypatch.setattr(e, "disk", ObjectCache(str(tmp_path)))
    monkeypatch.setattr(e, "_memory_cache", {})
    g = poly
    for k in range(1, 5):
        g = myia.grad(g)
        got = myia.compile(g, backend="llvm")(0.7)
        assert e.last_parts == 1
        assert got == pytest.approx(myia.compile(g, backend="vm")(0.7), rel=1e-12), k
