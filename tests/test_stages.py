"""`myia.ir` at each stage of the pipeline, from source to the code LLVM compiles."""

import numpy as np
import pytest

import myia
from myia.errors import MyiaError
from myia.pipeline import STAGES


def cubic(x):
    return x * x * 3.0


def test_the_stages_in_order():
    assert tuple(STAGES) == ("parsed", "typed", "optimized", "native")
    assert all(stage.what for stage in STAGES.values())


def test_each_stage_says_how_long_it_took():
    def quartic(x):
        return np.sum(np.tanh(x) * x * x)

    g = myia.grad(quartic)
    views = [myia.ir(g, np.ones(3), stage=name) for name in STAGES]
    assert [v.stage for v in views] == list(STAGES)
    for v in views:
        assert isinstance(v.seconds, float) and 0.0 < v.seconds < 60.0, (v.stage, v.seconds)
    # asked again, a stage shows the time it took when it was made, not a cache lookup
    assert myia.ir(g, np.ones(3), stage="typed").seconds == views[1].seconds


def test_a_derivative_from_source_to_native_code():
    # grad(3x^2) = 6x: the optimizer leaves 3x + 3x (or 6x), and LLVM's code computes
    # it with one multiplication and one addition, no call
    g = myia.grad(cubic)
    assert myia.ir(g, stage="parsed").op_count() > myia.ir(g, 2.0, stage="optimized").op_count()
    native = myia.ir(g, 2.0, stage="native")
    program = native.program()
    assert "fmul double" in program and "call " not in program
    assert [f for f in native.functions() if f.endswith("_entry")], "the entry is compiled too"
    assert "_entry" not in program  # program() leaves out the conversion of Python values
    assert "define" in native.before  # the IR before LLVM's optimizer is kept


def test_native_arrays_call_no_interpreter():
    def f(x):
        return np.sum(np.tanh(x) * 2.0)

    program = myia.ir(myia.grad(f), np.ones(4), stage="native").program()
    assert "tanh" in program  # the libm function, called from the compiled loop
    assert "PyObject" not in program and "Py_" not in program


@pytest.mark.parametrize("stage", ["typed", "optimized", "native"])
def test_specialized_stages_need_example_arguments(stage):
    with pytest.raises(MyiaError) as e:
        myia.ir(cubic, stage=stage)
    assert f"the {stage} stage needs example arguments" in str(e.value)


def test_an_unknown_stage_is_refused():
    with pytest.raises(MyiaError) as e:
        myia.ir(cubic, 2.0, stage="assembly")
    assert "unknown stage 'assembly'" in str(e.value) and "native" in str(e.value)
