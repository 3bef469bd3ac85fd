"""The GradBench evals this tool serves compute what their specs define.

GradBench validates most evals against its C++ "manual" tool (and gmm's objective,
optionally, against a naive NumPy transcription of the definition), with its
tolerance: |a - b| / max(1, |a| + |b|) <= 1e-4 on every number.  Here each eval's
functions, as the tool runs them (prepare, compiled program, post), are compared
with a small reference of our own: the definition in plain NumPy, a closed form, or
autograd on the definition; particle and saddle with the values their run.py expects.
"""

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad as autograd_grad
from scipy.special import multigammaln

import myia

from benchmarks.gradbench.evals import load

def evaluate(module, function, input):
    """What the tool answers for `function` of `module` at `input` (one run), on the
    default backend (each test takes the `backend` fixture: vm, then llvm)."""
    spec = load(module)[function]
    compiled = myia.compile(spec.program, static_argnums=spec.static or None)
    return spec.post(compiled(*spec.prepare(input)))


def mismatches(expected, actual, tolerance=1e-4, path="output"):
    """GradBench's comparison (comparison.py), restated: the places where `actual`
    differs from `expected` in structure, or by more than `tolerance` relatively."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or set(actual) != set(expected):
            return [f"{path}: keys {actual!r}"]
        return [m for k in expected
                for m in mismatches(expected[k], actual[k], tolerance, f"{path}.{k}")]
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{path}: {actual!r} is not a list of {len(expected)}"]
        return [m for i, (e, a) in enumerate(zip(expected, actual))
                for m in mismatches(e, a, tolerance, f"{path}[{i}]")]
    if not isinstance(actual, float):
        return [f"{path}: {actual!r} is not a float"]
    if abs(actual - expected) / max(1.0, abs(actual) + abs(expected)) > tolerance:
        return [f"{path}: expected {expected}, got {actual}"]
    return []


def runs(input):
    return input | {"min_runs": 1, "min_seconds": 0}


# ---- det ----------------------------------------------------------------------------


@pytest.mark.parametrize("ell", [1, 2, 4, 5])
def test_det(backend, ell):
    A = np.random.RandomState(31337 + ell).rand(ell * ell)
    input = {"A": A.tolist(), "ell": ell}
    M = A.reshape(ell, ell)
    assert evaluate("det", "primal", input) == pytest.approx(np.linalg.det(M), rel=1e-10)
    want = (np.linalg.det(M) * np.linalg.inv(M).T).reshape(-1)
    assert not mismatches(want.tolist(), evaluate("det", "gradient", input), tolerance=1e-9)


# ---- ht -----------------------------------------------------------------------------


def hand_input(npts, complicated, seed=5):
    """A small random hand of GradBench's shape (22 bones, 26 angles), as the eval's
    JSON input: 8 vertices, 5 triangles, `npts` observed points."""
    rng = np.random.default_rng(seed)
    nb, nv = 22, 8
    model = {"bone_count": nb, "bone_names": [f"b{i}" for i in range(nb)],
             "parents": [-1] + [int(rng.integers(0, i)) for i in range(1, nb)],
             "base_relatives": rng.normal(size=(nb, 4, 4)).tolist(),
             "inverse_base_absolutes": rng.normal(size=(nb, 4, 4)).tolist(),
             "base_positions": np.hstack([rng.normal(size=(nv, 3)), np.ones((nv, 1))]).tolist(),
             "weights": rng.random((nv, nb)).tolist(),
             "triangles": rng.integers(0, nv, (5, 3)).tolist(), "is_mirrored": False}
    return runs({"theta": rng.normal(size=26).tolist(),
                 "data": {"model": model,
                          "correspondences": rng.integers(0, 5, npts).tolist(),
                          "points": rng.normal(size=(npts, 3)).tolist()},
                 "us": rng.random((npts, 2)).tolist() if complicated else []})


@pytest.mark.parametrize("complicated", [False, True], ids=["simple", "complicated"])
def test_ht_objective(backend, complicated):
    from benchmarks.gradbench.evals import ht

    input = hand_input(4, complicated)
    # the module's upper part is plain NumPy: run by NumPy, it is the reference
    want = np.ravel(ht.objective(*ht.arguments(input)))
    assert len(want) == 12
    assert not mismatches(want.tolist(), evaluate("ht", "objective", input), tolerance=1e-12)


def hand_jacobian_by_differences(input, complicated, eps=1e-6):
    """The Jacobian the PyTorch tool reports, by central differences of the module's
    NumPy code: d err / d theta, and for the complicated variant first each row's
    derivatives along its own point's u (two columns)."""
    from benchmarks.gradbench.evals import ht

    theta, us, *rest = ht.arguments(input)

    def err(theta, us):
        return np.ravel(ht.objective(theta, us, *rest))

    def along(dtheta, dus):
        return (err(theta + eps * dtheta, us + eps * dus)
                - err(theta - eps * dtheta, us - eps * dus)) / (2 * eps)

    columns = [along(e, np.zeros_like(us)) for e in np.eye(theta.size)]
    if complicated:
        columns = [along(np.zeros_like(theta), np.outer(np.ones(len(us)), e))
                   for e in np.eye(2)] + columns
    return np.stack(columns, axis=1)


# llvm only, the tool's default (compiling the 26 jvps takes about 8 s)
@pytest.mark.parametrize("complicated", [False, True], ids=["simple", "complicated"])
def test_ht_jacobian(monkeypatch, complicated):
    monkeypatch.setenv("MYIA_BACKEND", "llvm")
    input = hand_input(3, complicated)
    want = hand_jacobian_by_differences(input, complicated)
    assert want.shape == (9, 28 if complicated else 26)
    got = evaluate("ht", "jacobian", input)
    assert not mismatches(want.tolist(), got, tolerance=1e-7)


# ---- llsq ---------------------------------------------------------------------------

@pytest.mark.parametrize("n,m", [(16, 5), (33, 8)])
def test_llsq(backend, n, m):
    x = np.random.default_rng(n).random(m)
    t = -1.0 + np.arange(n) * 2.0 / (n - 1)
    A = t[:, None] ** np.arange(m)[None, :]  # A[i, j] = t_i^j
    r = np.sign(t) - A @ x
    input = runs({"x": x.tolist(), "n": n})
    assert evaluate("llsq", "primal", input) == pytest.approx(0.5 * r @ r, rel=1e-12)
    np.testing.assert_allclose(evaluate("llsq", "gradient", input), -A.T @ r,
                               rtol=1e-10, atol=1e-12)


# ---- ode ----------------------------------------------------------------------------

def ode_reference(x, s):
    """Runge-Kutta as in the spec's C++ reference, in autograd's NumPy."""
    def f(y):
        return anp.concatenate((x[:1], x[1:] * y[:-1]))

    h = 2.0 / s
    y = anp.zeros(len(x))
    for _ in range(s):
        k1 = f(y)
        k2 = f(y + h * k1 / 2)
        k3 = f(y + h * k2 / 2)
        k4 = f(y + h * k3)
        y = y + h * (k1 + 2 * k2 + 2 * k3 + k4) / 6
    return y


@pytest.mark.parametrize("n,s", [(4, 1), (7, 10)])
def test_ode(backend, n, s):
    x = np.random.default_rng(n).random(n)
    input = runs({"x": x.tolist(), "s": s})
    np.testing.assert_allclose(evaluate("ode", "primal", input), ode_reference(x, s),
                               rtol=1e-12)
    gradient = autograd_grad(lambda x: ode_reference(x, s)[-1])(x)
    np.testing.assert_allclose(evaluate("ode", "gradient", input), gradient,
                               rtol=1e-10, atol=1e-14)


# ---- kmeans -------------------------------------------------------------------------

@pytest.mark.parametrize("k,n,d", [(2, 10, 2), (5, 30, 3)])
def test_kmeans(backend, k, n, d):
    points = np.random.default_rng(k * n).random((n, d))
    centroids = points[-k:]  # as run.py: every cluster has a point
    input = runs({"points": points.tolist(), "centroids": centroids.tolist()})
    squared = np.sum((points[:, None, :] - centroids[None, :, :]) ** 2, axis=2)
    assert evaluate("kmeans", "cost", input) == pytest.approx(np.sum(squared.min(1)),
                                                              rel=1e-10)
    # closed form: J_j = 2 sum over the points closest to j of (C_j - P_i), and the
    # Hessian's diagonal is 2 * (their number), for every coordinate of C_j
    closest = squared.argmin(1)
    J = np.array([2 * np.sum(centroids[j] - points[closest == j], axis=0)
                  for j in range(k)])
    H = np.array([2.0 * np.sum(closest == j) for j in range(k)])[:, None]
    np.testing.assert_allclose(evaluate("kmeans", "dir", input), J / H,
                               rtol=1e-10, atol=1e-12)


# ---- gmm ----------------------------------------------------------------------------

def gmm_naive(alpha, mu, q, l, x, m, gamma):
    """The log posterior straight from the definition (Gaussian densities with
    det and inverse, Wishart densities), no simplification: GradBench's naive
    validator, in autograd's NumPy, logs of the factors summed."""
    n, d = x.shape
    k = len(alpha)
    phi = anp.exp(alpha) / anp.sum(anp.exp(alpha))
    precisions = []
    for j in range(k):
        Q = anp.diag(anp.exp(q[j]))
        index = 0
        for c in range(d):
            for r in range(c + 1, d):
                place = np.zeros((d, d))
                place[r, c] = 1.0
                Q = Q + l[j, index] * place
                index += 1
        precisions.append(anp.dot(Q.T, Q))
    log_likelihood = 0.0
    for i in range(n):
        density = 0.0
        for j in range(k):
            dx = x[i] - mu[j]
            density = density + phi[j] * anp.exp(
                -0.5 * anp.dot(dx, anp.dot(precisions[j], dx))) / anp.sqrt(
                (2 * np.pi) ** d / anp.linalg.det(precisions[j]))
        log_likelihood = log_likelihood + anp.log(density)
    dof = d + m + 1
    log_det_V = -2 * d * np.log(gamma)  # V = I / gamma^2
    log_prior = 0.0
    for P in precisions:
        log_prior = log_prior + (
            (dof - d - 1) / 2 * anp.log(anp.linalg.det(P))
            - gamma ** 2 * anp.trace(P) / 2
            - dof * d / 2 * np.log(2) - dof / 2 * log_det_V
            - multigammaln(dof / 2, d))
    return log_likelihood + log_prior


# with d = 1, l is empty: autograd warns that its gradient does not depend on it
@pytest.mark.filterwarnings("ignore:Output seems independent of input")
@pytest.mark.parametrize("d,k,n,m", [(1, 2, 5, 0), (3, 4, 10, 2)])
def test_gmm(backend, d, k, n, m):
    rng = np.random.default_rng(31337 + d)
    gamma = 1.3
    independent = {"alpha": rng.normal(size=k), "mu": rng.uniform(size=(k, d)),
                   "q": rng.normal(size=(k, d)) * 0.3,
                   "l": rng.normal(size=(k, d * (d - 1) // 2))}
    x = rng.normal(size=(n, d))
    input = runs({"d": d, "k": k, "n": n, "x": x.tolist(), "m": m, "gamma": gamma}
                 | {name: v.tolist() for name, v in independent.items()})
    args = tuple(independent[name] for name in ("alpha", "mu", "q", "l"))
    expected = gmm_naive(*args, x, m, gamma)
    assert evaluate("gmm", "objective", input) == pytest.approx(expected, rel=1e-10)
    got = evaluate("gmm", "jacobian", input)
    assert set(got) == {"alpha", "mu", "q", "l"}
    for i, name in enumerate(("alpha", "mu", "q", "l")):
        want = autograd_grad(gmm_naive, i)(*args, x, m, gamma)
        np.testing.assert_allclose(np.reshape(got[name], want.shape), want,
                                   rtol=1e-8, atol=1e-10, err_msg=name)


# ---- lstm ---------------------------------------------------------------------------


def test_lstm(backend):
    # GradBench's input layout (l = 2 layers, b = 7 bits per character, c = 4 steps,
    # so that compiling stays short: the time loop is unrolled); the objective run by
    # Python and NumPy is the reference, its gradient by central differences
    from benchmarks.gradbench.evals.lstm import lstm_objective

    rng = np.random.default_rng(31337)
    l, b, c = 2, 7, 4
    arrays = {"main_params": rng.normal(size=(2 * l, 4 * b)) * 0.5,
              "extra_params": rng.normal(size=(3, b)) * 0.5,
              "state": rng.normal(size=(2 * l, b)) * 0.5,
              "sequence": rng.integers(0, 2, size=(c, b)).astype(float)}
    input = runs({name: v.tolist() for name, v in arrays.items()})
    args = tuple(arrays.values())
    expected = lstm_objective(*args)
    assert evaluate("lstm", "objective", input) == pytest.approx(expected, rel=1e-12)
    got = np.array(evaluate("lstm", "jacobian", input))
    h = 1e-6
    want = []
    for k in (0, 1):  # main_params, then extra_params, each row after row
        for index in np.ndindex(args[k].shape):
            up, down = [a.copy() for a in args], [a.copy() for a in args]
            up[k][index] += h
            down[k][index] -= h
            want.append((lstm_objective(*up) - lstm_objective(*down)) / (2 * h))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


# ---- particle and saddle: nested AD, values from their run.py ----------------------

EXPECTED = {
    "particle": ({"w": 0.0}, 0.2071918746486116),
    "saddle": ({"start": [1.0, 1.0]}, [8.246324826140356e-06] * 4),
}


# llvm only, the tool's default: on the VM each variant takes a minute or more.  Two
# of the eight here, the two that compile in a few seconds (saddle's take 5-15 s):
# forward over reverse in a loop kept at run time, and reverse over forward through a
# closure that captured the inner derivative; `make bench` runs all eight through the
# tool and checks each (tests/ad/test_nested_ad.py has every nesting on small programs)
@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("module,variant", [("particle", "fr"), ("particle", "rf")])
def test_nested(monkeypatch, module, variant):
    monkeypatch.setenv("MYIA_BACKEND", "llvm")
    input, expected = EXPECTED[module]
    got = evaluate(module, variant, runs(input))
    assert mismatches(expected, got) == []
    # tighter than GradBench: the same algorithm, the same numbers
    np.testing.assert_allclose(got, expected, rtol=1e-9)


def test_the_comparison_is_gradbench_s():
    assert mismatches([1.0, 2.0], [1.0, 2.0001]) == []
    assert mismatches([1.0, 2.0], [1.0, 2.01]) != []
    assert mismatches({"a": [1.0]}, {"a": [1.0], "b": 2.0}) != []
    assert mismatches(1e-9, 2e-9) == []  # below 1 the difference is absolute
