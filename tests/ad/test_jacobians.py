"""jacfwd, jacrev (jacobian) and hessian with JAX's shapes: o + s for an output of
shape o and an argument of shape s; a tuple of blocks for a tuple of argnums (for
hessian, block [i][j] = d/d(arg j) of the gradient along arg i).  Values against
autograd, and against each other (jacfwd equals jacrev, hessian equals jacfwd of
grad); from Python, inside subset code, and differentiated again; on vm and llvm
(the `backend` fixture)."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import myia
from myia.errors import MyiaGradError

pytestmark = pytest.mark.usefixtures("backend")

X = np.array([0.3, -0.5, 0.7])
Y = np.array([[1.0, 2.0], [-3.0, 0.5]])


def mixed(x, y):
    """(3,), (2, 2) -> (2, 3): every block of the Jacobian is dense."""
    return np.outer(np.sum(y, axis=1), np.sin(x)) + np.sum(x * x) * y[:, :1]


def mixed_ag(x, y):
    return anp.outer(anp.sum(y, axis=1), anp.sin(x)) + anp.sum(x * x) * y[:, :1]


def rosenbrock(x, y):
    return (1.0 - x) ** 2 + 100.0 * (y - x * x) ** 2


def energy(x, y):
    return np.sum(np.sin(x) ** 2) * np.sum(y ** 3) + np.sum(np.outer(x, x[:2]) * y[0])


def energy_ag(x, y):
    return anp.sum(anp.sin(x) ** 2) * anp.sum(y ** 3) + anp.sum(anp.outer(x, x[:2]) * y[0])


def scalar_in(t, x):
    return np.cos(t) * x + t * t


@pytest.mark.parametrize("kind", ["jacfwd", "jacrev", "jacobian"])
def test_jacobians_match_autograd_with_jaxs_shapes(kind):
    jac = getattr(myia, kind)
    J = jac(mixed)(X, Y)
    assert J.shape == (2, 3, 3)
    np.testing.assert_allclose(J, autograd.jacobian(mixed_ag)(X, Y), rtol=1e-12, atol=1e-14)
    Jx, Jy = jac(mixed, (0, 1))(X, Y)
    assert Jy.shape == (2, 3, 2, 2)
    np.testing.assert_allclose(Jx, J, rtol=1e-14)
    np.testing.assert_allclose(Jy, autograd.jacobian(mixed_ag, 1)(X, Y), rtol=1e-12,
                               atol=1e-14)
    # a number in, an array out; an array in, a number out
    np.testing.assert_allclose(jac(scalar_in)(0.4, X), -np.sin(0.4) * X + 0.8, rtol=1e-13)
    np.testing.assert_allclose(jac(scalar_in, 1)(0.4, X), np.cos(0.4) * np.eye(3), rtol=1e-14)
    np.testing.assert_allclose(jac(energy)(X, Y), autograd.grad(energy_ag)(X, Y), rtol=1e-12)


def test_jacfwd_and_jacrev_agree_where_autograd_is_not_asked():
    def f(x):
        return np.cumsum(np.tanh(x) * x[::-1]) / (1.0 + np.sum(x * x))

    x = np.linspace(-1.0, 1.5, 5)
    np.testing.assert_allclose(myia.jacfwd(f)(x), myia.jacrev(f)(x), rtol=1e-12, atol=1e-15)


def test_hessian_of_several_arguments_gives_the_blocks():
    H = myia.hessian(rosenbrock, (0, 1))(1.0, 1.0)
    assert H == ((802.0, -400.0), (-400.0, 200.0))
    assert myia.hessian(rosenbrock)(1.0, 1.0) == 802.0  # d2/dx2 only
    Hxx, Hxy = myia.hessian(energy, (0, 1))(X, Y)[0]
    Hyx, Hyy = myia.hessian(energy, (0, 1))(X, Y)[1]
    assert Hxy.shape == (3, 2, 2) and Hyx.shape == (2, 2, 3)
    for (i, j), block in {(0, 0): Hxx, (0, 1): Hxy, (1, 0): Hyx, (1, 1): Hyy}.items():
        want = autograd.jacobian(autograd.grad(energy_ag, i), j)(X, Y)
        np.testing.assert_allclose(block, want, rtol=1e-11, atol=1e-13)
    # hessian = jacfwd of grad = jacrev of grad
    np.testing.assert_allclose(Hxx, myia.jacfwd(myia.grad(energy))(X, Y), rtol=1e-13)
    np.testing.assert_allclose(Hxx, myia.jacrev(myia.grad(energy))(X, Y), rtol=1e-12,
                               atol=1e-14)


def frobenius_of_jacobians(x, y):
    return np.sum(myia.jacfwd(mixed)(x, y) * myia.jacrev(mixed, 0)(x, y))


def test_inside_subset_code_and_differentiated_again():
    want = np.sum(autograd.jacobian(mixed_ag)(X, Y) ** 2)
    assert myia.compile(frobenius_of_jacobians)(X, Y) == pytest.approx(want, rel=1e-13)
    d_want = autograd.grad(lambda x, y: anp.sum(autograd.jacobian(mixed_ag)(x, y) ** 2))(X, Y)
    np.testing.assert_allclose(myia.grad(frobenius_of_jacobians)(X, Y), d_want, rtol=1e-11)
    # the same through a compiled Jacobian of a Jacobian (third derivatives of mixed)
    J2 = myia.compile(myia.jacfwd(myia.jacrev(mixed)))(X, Y)
    np.testing.assert_allclose(J2, autograd.jacobian(autograd.jacobian(mixed_ag))(X, Y),
                               rtol=1e-11, atol=1e-13)


def test_a_closure_passed_to_jacobian_inside_subset_code():
    def jacobian_of_scaled(x, a):
        return myia.jacrev(lambda z: np.sin(z) * a)(x)

    np.testing.assert_allclose(myia.compile(jacobian_of_scaled)(X, 2.0),
                               np.diag(2.0 * np.cos(X)), rtol=1e-14)


def test_wrong_argnums_and_integers_are_refused():
    with pytest.raises(MyiaGradError, match="argnums 2 is out of range"):
        myia.jacfwd(mixed, 2)(X, Y)
    with pytest.raises(MyiaGradError, match="argnums must be an int or a tuple of ints"):
        myia.jacrev(mixed, "x")
    with pytest.raises(MyiaGradError, match="argument 0 .'n'. of <lambda>: it is an integer"):
        myia.jacfwd(lambda n, x: x * n)(3, X)


# ---- programs as people write them (GradBench's hand tracking) ----------------------


def rows_of(x, n):
    # a comprehension over range(n), n static: under jvp, n is the value of a
    # (value, tangent) pair, and must stay known where the comprehension unrolls
    return np.stack([x * (i + 1.0) for i in range(n)])


def rows_of_ag(x, n):
    return anp.stack([x * (i + 1.0) for i in range(n)])


@pytest.mark.parametrize("kind", ["jacfwd", "jacrev"])
def test_a_static_int_that_decides_a_comprehension_stays_known(kind):
    J = getattr(myia, kind)
    want = autograd.jacobian(rows_of_ag)(X, 4)
    np.testing.assert_allclose(myia.compile(J(rows_of), static_argnums=(1,))(X, 4), want,
                               rtol=1e-14)

    def inside(x, n):  # the Jacobian of a closure over the static int
        return J(lambda z: rows_of(z, n))(x)

    np.testing.assert_allclose(myia.compile(inside, static_argnums=(1,))(X, 4), want,
                               rtol=1e-14)


def rotation(a):
    # updates of fresh arrays, as ADBench's hand model writes its Euler rotations
    R = np.eye(3)
    R[1, 1] = np.cos(a[0])
    R[2, 1] = np.sin(a[0])
    R[1, 2] = -R[2, 1]
    R[2, 2] = R[1, 1]
    S = np.eye(3)
    S[0, 0] = np.cos(a[1])
    S[2, 0] = np.sin(a[1])
    S[0, 2] = -S[2, 0]
    S[2, 2] = S[0, 0]
    U = np.eye(3)
    U[0, 0] = np.cos(a[2])
    U[1, 0] = np.sin(a[2])
    U[0, 1] = -U[1, 0]
    U[1, 1] = U[0, 0]
    return (U @ S) @ R


def placed(a):
    T = np.eye(4)
    T[:3, :3] = rotation(a)
    return T


def posed(theta):
    p = np.reshape(theta, (3, 3))
    return np.ravel(np.stack([placed(p[i]) for i in range(3)]))


def two_directions(theta, t):
    return myia.jvp(posed, (theta,), (t,))[1] + myia.jvp(posed, (theta,), (2.0 * t,))[1]


def rotation_ag(a):
    c0, s0, c1, s1, c2, s2 = (f(a[i]) for i in range(3) for f in (anp.cos, anp.sin))
    R = anp.array([[1.0, 0.0, 0.0], [0.0, c0, -s0], [0.0, s0, c0]])
    S = anp.array([[c1, 0.0, -s1], [0.0, 1.0, 0.0], [s1, 0.0, c1]])
    U = anp.array([[c2, -s2, 0.0], [s2, c2, 0.0], [0.0, 0.0, 1.0]])
    top = anp.concatenate([(U @ S) @ R, anp.zeros((3, 1))], axis=1)
    return anp.concatenate([top, anp.array([[0.0, 0.0, 0.0, 1.0]])], axis=0)


def posed_ag(theta):
    p = anp.reshape(theta, (3, 3))
    return anp.ravel(anp.stack([rotation_ag(p[i]) for i in range(3)]))


def test_jvps_of_a_program_of_many_updates_in_a_comprehension():
    # the program that holds two jvps of one function also holds a copy of that
    # function that nothing calls (only T of it is): the native backend must not
    # compile it, nor the library code it calls as parsed
    theta = np.linspace(-0.8, 0.9, 9)
    t = np.cos(np.arange(9.0))
    J = autograd.jacobian(posed_ag)(theta)
    np.testing.assert_allclose(myia.compile(two_directions)(theta, t), 3.0 * J @ t,
                               rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(myia.compile(myia.jacfwd(posed))(theta), J, rtol=1e-13,
                               atol=1e-14)


def picked(x, as_matrix):
    if as_matrix:  # a static flag: for a vector of 4, only the other branch is a program
        return np.reshape(x, (2, 3)) * 2.0
    return x * x


def jvp_of_closure_over_the_flag(x, as_matrix):
    return myia.jvp(lambda z: picked(z, as_matrix), (x,), (np.ones_like(x),))[1]


def test_a_static_flag_that_picks_a_branch_stays_known():
    # the transform of a closure over the flag is built for the flag's value (as for a
    # static int that decides a shape), not for any bool: the branch it does not
    # take cannot be typed for these shapes
    x = np.array([0.5, -1.0, 2.0, 3.0])
    compiled = myia.compile(jvp_of_closure_over_the_flag, static_argnums=(1,))
    np.testing.assert_allclose(compiled(x, False), 2.0 * x, rtol=1e-15)
    np.testing.assert_allclose(myia.compile(myia.jacfwd(picked), static_argnums=(1,))(x, False),
                               np.diag(2.0 * x), rtol=1e-15)
    np.testing.assert_allclose(compiled(np.arange(6.0), True), np.full((2, 3), 2.0))


# ---- pytrees: tuples, lists and dicts in and out (issue 36, item 2) ---------------------


def layer(p):
    """A dict of parameters in, a (2,) array out."""
    return np.tanh(p["W"] @ p["x"]) * p["s"]


def layer_flat(v):
    W, x, s = anp.reshape(v[:6], (2, 3)), v[6:9], v[9]
    return anp.tanh(anp.dot(W, x)) * s


P0 = {"W": np.arange(6.0).reshape(2, 3) * 0.1, "x": np.array([1.0, -1.0, 0.5]), "s": 2.0}


def several(x):
    """An array in, a tuple of an array, a number and a list out."""
    return np.sin(x), np.sum(x * x), [x[0] * 3.0]


def test_a_dict_argument_gives_a_dict_of_blocks_as_jax_does():
    full = autograd.jacobian(layer_flat)(np.concatenate([P0["W"].ravel(), P0["x"], [P0["s"]]]))
    for jac in (myia.jacfwd, myia.jacrev):
        J = jac(layer)(P0)
        assert isinstance(J, dict) and list(J) == ["W", "x", "s"]
        np.testing.assert_allclose(J["W"], np.reshape(full[:, :6], (2, 2, 3)), rtol=1e-14)
        np.testing.assert_allclose(J["x"], full[:, 6:9], rtol=1e-14)
        np.testing.assert_allclose(J["s"], full[:, 9], rtol=1e-14)


def test_a_tuple_output_gives_a_tuple_of_jacobians():
    x = np.array([0.3, 0.7])
    for jac in (myia.jacfwd, myia.jacrev):
        a, b, c = jac(several)(x)
        np.testing.assert_allclose(a, np.diag(np.cos(x)), rtol=1e-15)
        np.testing.assert_allclose(b, 2.0 * x, rtol=1e-15)
        assert isinstance(c, list) and len(c) == 1
        np.testing.assert_allclose(c[0], [3.0, 0.0])


def test_the_hessian_of_a_tuple_argument_is_a_tuple_of_tuples_of_blocks():
    def f(t):
        return np.sum(t[0] * t[1]) ** 2

    def f_ag(v):
        return anp.sum(v[:2] * v[2:]) ** 2

    t = (np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    full = autograd.hessian(f_ag)(np.concatenate(t))
    H = myia.hessian(f)(t)
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(H[i][j], full[2 * i:2 * i + 2, 2 * j:2 * j + 2],
                                       rtol=1e-14)
    # (jacfwd of the gradient, a tuple, agrees with jacrev of it)
    R = myia.jacrev(myia.grad(f))(t)
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(R[i][j], H[i][j], rtol=1e-14)


def trees_inside(p):
    return myia.jacrev(layer)(p)["s"] + myia.jacfwd(several)(p["x"])[1][:2]


def test_trees_inside_subset_code():
    expect = np.tanh(P0["W"] @ P0["x"]) + 2.0 * P0["x"][:2]
    np.testing.assert_allclose(myia.compile(trees_inside)(P0), expect, rtol=1e-14)
