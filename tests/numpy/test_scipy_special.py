"""scipy.special in compiled code: expit, logit, softmax, log_softmax, logsumexp, xlogy,
erf, erfc, gammaln, digamma (psi).

Values on both backends against SciPy itself (cases_scipy_special.py), gradients of the
first and second order against autograd (autograd.scipy.special, completed below where
it lacks a function) and against finite differences; jvp, jet and hessian against grad
and the closed forms (polygamma); the three ways of importing; the refusal of a
function Myia does not have; the CuPy backend on its CPU emulator."""

import math
import subprocess
import sys

import numpy as np
import pytest
import scipy.special
from scipy import special
from scipy.special import expit, logsumexp

import myia
from myia import MyiaSourceError

from ..helpers import check_grads
from . import cases_scipy_special as cases
from .harness import BACKENDS, autograd_twin, check_fd, check_grad, check_value

CASES = cases.CASES
GRAD = [c for c in CASES if c.order >= 1]
SECOND = [c for c in CASES if c.order >= 2]


class _AutogradSpecial:
    """autograd.scipy.special, with what it lacks written over autograd.numpy."""

    def __getattr__(self, name):
        import autograd.scipy.special as asp

        return getattr(asp, name)

    @staticmethod
    def softmax(x, axis=None):
        import autograd.numpy as anp
        import autograd.scipy.special as asp

        return anp.exp(x - asp.logsumexp(x, axis=axis, keepdims=True))

    @staticmethod
    def log_softmax(x, axis=None):
        import autograd.scipy.special as asp

        return x - asp.logsumexp(x, axis=axis, keepdims=True)

    @staticmethod
    def xlogy(x, y):
        import autograd.numpy as anp

        return x * anp.log(y)  # (the differentiated cases have y > 0)


@pytest.fixture(scope="module")
def twin():
    fns = autograd_twin(cases)
    sys.modules[cases.__name__ + "_with_autograd"].special = _AutogradSpecial()
    return fns


# ---- the cases: values, gradients, second order -------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_value(case, backend):
    with np.errstate(all="ignore"):  # (SciPy's reference warns at its infinities)
        check_value(case, backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", GRAD, ids=str)
def test_grad(case, backend, twin):
    check_grad(case, backend, twin, order=1)


@pytest.mark.parametrize("case", [c for c in GRAD if c.fd], ids=str)
def test_grad_finite_differences(case):
    check_fd(case, "vm")


@pytest.mark.filterwarnings("ignore:Output seems independent of input")  # (xlogy's in x)
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", SECOND, ids=str)
def test_second_order(case, backend, twin):
    check_grad(case, backend, twin, order=2)


# ---- values where precision matters ---------------------------------------------------------


def _erfc(x):
    return special.erfc(x)


def _gammaln(x):
    return special.gammaln(x)


def _expit(x):
    return special.expit(x)


def _logsumexp(x):
    return special.logsumexp(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_relative_precision_in_the_tails(backend):
    x = np.array([5.0, 10.0, 26.0])
    np.testing.assert_allclose(myia.compile(_erfc, backend=backend)(x), special.erfc(x),
                               rtol=1e-13, atol=0)
    x = np.array([-700.0, -40.0, -1.0])
    np.testing.assert_allclose(myia.compile(_expit, backend=backend)(x), special.expit(x),
                               rtol=1e-14, atol=0)
    x = np.array([0.5, 1.0, 2.0, 10.0, 1e3, 1e10])
    got = myia.compile(_gammaln, backend=backend)(x)
    np.testing.assert_allclose(got, special.gammaln(x), rtol=1e-14, atol=1e-15)
    assert got[1] == 0.0 and got[2] == 0.0  # lgamma(1) and lgamma(2) are exactly 0
    x = np.array([1000.0, 1000.5, 999.0, -np.inf])
    assert myia.compile(_logsumexp, backend=backend)(x) == pytest.approx(
        special.logsumexp(x), rel=1e-15)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_at_the_extremes_are_finite(backend):
    # expit's from e^-|x| (never e^800); xlogy's at x = 0 from log 1, not 0 * log 0
    def expit_sum(x):
        return np.sum(special.expit(x))

    def xlogy_sum(x, y):
        return np.sum(special.xlogy(x, y))

    g = myia.compile(myia.grad(expit_sum), backend=backend)(np.array([-800.0, 0.0, 800.0]))
    np.testing.assert_array_equal(g, [0.0, 0.25, 0.0])
    gx, gy = myia.compile(myia.grad(xlogy_sum, (0, 1)), backend=backend)(
        np.array([0.0, 0.0, 2.0]), np.array([0.0, 3.0, 3.0]))
    np.testing.assert_allclose(gx, [0.0, math.log(3.0), math.log(3.0)], rtol=1e-15)
    np.testing.assert_allclose(gy, [0.0, 0.0, 2.0 / 3.0], rtol=1e-15)


# ---- jvp, jet and hessian agree with grad ---------------------------------------------------


def s_expit(x):
    return special.expit(x)


def s_logit(x):
    return special.logit(x)


def s_erf(x):
    return special.erf(x)


def s_erfc(x):
    return special.erfc(x)


def s_gammaln(x):
    return special.gammaln(x)


def s_digamma(x):
    return special.digamma(x)


def s_xlogy(x):
    return special.xlogy(x, 2.5) + special.xlogy(1.5, x)


V = np.array([0.3, -1.2, 2.0, 0.7])


def s_logsumexp(t):
    return special.logsumexp(V * t + np.array([1.0, 0.0, -1.0, 0.5]))


def s_log_softmax(t):
    return np.sum(special.log_softmax(V * t) * np.array([1.0, 2.0, 0.5, -1.0]))


def _autograd(name):
    import autograd.numpy as anp
    import autograd.scipy.special as asp

    w = anp.array([1.0, 2.0, 0.5, -1.0])
    return {
        "s_expit": asp.expit, "s_logit": asp.logit, "s_erf": asp.erf, "s_erfc": asp.erfc,
        "s_gammaln": asp.gammaln, "s_digamma": asp.digamma,
        "s_xlogy": lambda x: x * anp.log(2.5) + 1.5 * anp.log(x),
        "s_logsumexp": lambda t: asp.logsumexp(V * t + anp.array([1.0, 0.0, -1.0, 0.5])),
        "s_log_softmax": lambda t: anp.sum((V * t - asp.logsumexp(V * t)) * w),
    }[name]


SCALAR_FUNCTIONS = [(s_expit, 0.4), (s_expit, -3.0), (s_logit, 0.2), (s_logit, 0.45),
                    (s_erf, 0.6), (s_erfc, 1.7), (s_gammaln, 0.5), (s_gammaln, 3.7),
                    (s_gammaln, -1.5), (s_digamma, 2.2), (s_digamma, -0.6), (s_xlogy, 0.8),
                    (s_logsumexp, 0.9), (s_log_softmax, -0.4)]


def _derivatives(afn, x, order):
    import autograd

    out, g = [afn(x)], afn
    for _ in range(order):
        g = autograd.grad(g)
        out.append(g(x))
    return np.array(out, dtype=float)


@pytest.mark.parametrize("fn, x", SCALAR_FUNCTIONS,
                         ids=[f"{f.__name__}({x})" for f, x in SCALAR_FUNCTIONS])
def test_jvp_jet_and_hessian_agree_with_grad(fn, x, backend):
    g1 = myia.compile(myia.grad(fn), backend=backend)(x)
    g2 = myia.compile(myia.grad(myia.grad(fn)), backend=backend)(x)
    value, tangent = myia.jvp(fn, (x,), (1.0,))
    assert tangent == pytest.approx(g1, rel=1e-13, abs=1e-15)
    coefficients = myia.jet(fn, order=4)(x)  # f, f', f'', f''', f'''' (derivatives)
    assert coefficients[0] == pytest.approx(value, rel=1e-15)
    assert coefficients[1] == pytest.approx(g1, rel=1e-12, abs=1e-15)
    assert coefficients[2] == pytest.approx(g2, rel=1e-11, abs=1e-14)
    assert myia.hessian(fn)(x) == pytest.approx(g2, rel=1e-11, abs=1e-14)
    want = _derivatives(_autograd(fn.__name__), x, 4)
    np.testing.assert_allclose(np.array(coefficients, dtype=float), want, rtol=1e-9,
                               atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_jet_of_gammaln_is_polygamma(backend):
    # gammaln's Taylor rule takes the jet of digamma's subset code: to order 8, along
    # an array whose elements move together
    x = np.array([0.3, 1.0, 2.5, 7.0, -1.5])
    got = myia.compile(myia.jet(s_gammaln, order=8), backend=backend)(x)
    want = [special.gammaln(x)] + [special.polygamma(k, x) for k in range(8)]
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-9 * 10 ** (k // 3), err_msg=f"order {k}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_of_logsumexp(backend):
    x = np.array([0.3, -1.0, 2.0, 0.5])
    h = myia.compile(myia.hessian(_logsumexp), backend=backend)(x)
    p = special.softmax(x)
    np.testing.assert_allclose(h, np.diag(p) - np.outer(p, p), rtol=1e-12, atol=1e-15)


def softmax_rows(x):
    return special.softmax(x, axis=1)


def log_softmax_cols(x):
    return special.log_softmax(x, axis=0)


def lse_cols(x):
    return special.logsumexp(x, axis=0)


def xlogy_pair(x, y):
    return special.xlogy(x, y)


@pytest.mark.parametrize("fn, args", [
    (softmax_rows, (np.array([[0.1, 1.2, -0.3], [2.0, 0.5, 0.4]]),)),
    (log_softmax_cols, (np.array([[0.1, 1.2, -0.3], [2.0, 0.5, 0.4]]),)),
    (lse_cols, (np.array([[0.1, 1.2, -0.3], [2.0, 0.5, 0.4]]),)),
    (xlogy_pair, (np.array([0.5, 0.0, 2.0]), np.array([1.5, 0.7, 3.0]))),
], ids=["softmax", "log_softmax", "logsumexp", "xlogy"])
def test_forward_and_reverse_modes_to_the_second_order(fn, args, backend):
    check_grads(fn, args, order=2)


# ---- how user code names them ---------------------------------------------------------------


def with_module(x):
    return scipy.special.expit(x) + scipy.special.logsumexp(x)


def with_special(x):
    return special.erf(x) + special.gammaln(x + 2.0)


def with_imported_names(x):
    return expit(x) * logsumexp(x)


def test_the_ways_of_importing(backend):
    x = np.array([0.5, -1.0, 2.0])
    assert myia.compile(with_module)(x) == pytest.approx(
        scipy.special.expit(x) + scipy.special.logsumexp(x), rel=1e-14)
    assert myia.compile(with_special)(x) == pytest.approx(
        special.erf(x) + special.gammaln(x + 2.0), rel=1e-14)
    assert myia.compile(with_imported_names)(x) == pytest.approx(
        special.expit(x) * special.logsumexp(x), rel=1e-14)


def test_from_import_in_a_module(tmp_path, monkeypatch):
    # `from scipy.special import ...` at the top of the user's module
    (tmp_path / "user_special.py").write_text(
        "import numpy as np\n"
        "from scipy.special import logsumexp, expit\n"
        "from scipy import special\n\n"
        "def f(x):\n"
        "    return logsumexp(x, axis=0) + np.sum(expit(x)) + np.sum(special.xlogy(x, x))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import user_special

    x = np.array([0.5, 1.5, 2.0])
    want = special.logsumexp(x) + np.sum(special.expit(x)) + np.sum(special.xlogy(x, x))
    for backend in BACKENDS:
        assert myia.compile(user_special.f, backend=backend)(x) == pytest.approx(want, rel=1e-14)
    g = myia.grad(user_special.f)(x)
    assert g == pytest.approx(special.softmax(x) + special.expit(x) * (1 - special.expit(x))
                              + np.log(x) + 1.0, rel=1e-12)


def test_a_library_function_passed_directly(backend):
    # as myia.grad(np.sin): the ufunc itself
    assert myia.grad(special.erf)(0.5) == pytest.approx(
        2.0 / math.sqrt(math.pi) * math.exp(-0.25), rel=1e-15)
    assert myia.grad(special.gammaln)(3.0) == pytest.approx(special.digamma(3.0), rel=1e-14)


def with_bessel(x):
    return special.jv(1.0, x)


def with_log_expit(x):
    return special.log_expit(x)


def test_a_function_myia_does_not_have_is_refused():
    with pytest.raises(MyiaSourceError, match="special.jv.*Myia has no equivalent"):
        myia.compile(with_bessel)(1.0)
    with pytest.raises(MyiaSourceError, match="Myia has no equivalent") as info:
        myia.compile(with_log_expit)(1.0)
    assert "scipy.special.expit" in str(info.value)  # the nearest supported


def test_importing_myia_does_not_import_scipy_special():
    # (150-200 ms): the table is merged once the user's code has imported it
    out = subprocess.run([sys.executable, "-c",
                          "import sys, myia; print('scipy.special' in sys.modules)"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


# ---- the CuPy backend, on its CPU emulator ---------------------------------------------------


def on_the_device(x, y):
    return (special.erf(x) * special.erfc(y) + special.gammaln(y) + special.expit(x)
            + special.logsumexp(x, axis=0) + special.xlogy(y, y) + special.digamma(y))


def one_erf(x):
    return special.erf(x)


def test_on_the_cupy_emulator_without_leaving_the_device():
    from myia.backend.cupy import CupyBackend
    from myia.backend.cupy.emulator import Emulator, compiler
    from myia.pipeline import optimized_program

    if compiler() is None:
        pytest.fail("the emulator needs a C++ compiler (g++): apt-get install g++")
    b = CupyBackend(optimized_program, xp=Emulator())
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((3, 4)), rng.uniform(0.5, 3.0, (3, 4))
    got = b.run(on_the_device, (x, y), to_numpy=True)
    np.testing.assert_allclose(got, on_the_device(x, y), rtol=1e-12)
    got = b.run(one_erf, (x.astype(np.float32),), to_numpy=True)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, special.erf(x.astype(np.float32)), rtol=1e-6)
    assert b.stats["host_fallback"] == 0


def test_the_unfused_device_implementation():
    # the ImplTable's own kernel for a C function NumPy has no name for
    from myia.backend.cupy.emulator import Emulator
    from myia.backend.cupy.impls import ImplTable
    from myia.prim import ops as P

    table = ImplTable(Emulator())
    x = np.array([0.5, 1.0, 3.0])
    for prim, ref in ((P.erf, special.erf), (P.erfc, special.erfc), (P.gammaln, special.gammaln)):
        got = table.to_host(table.device[prim](table.to_device(x)))
        np.testing.assert_allclose(got, ref(x), rtol=1e-14)
        got = table.to_host(table.device[prim](table.to_device(np.array([1, 2]))))
        assert got.dtype == np.float64
