"""Products (issue 18): dot, matmul and `@`, inner, outer, vdot, tensordot, einsum, kron,
cross; cases for tests/numpy/test_linalg.py.

Everything above `# ---- cases` is machinery; below, subset code written with `np.`
(re-executed with autograd.numpy for the reference gradients).
"""

import numpy as np

from .harness import collector

CASES, case = collector()
_rng = np.random.default_rng(0)


def rand(*shape):
    return _rng.standard_normal(shape)


def f32(*shape):
    return rand(*shape).astype(np.float32)


def ints(*shape):
    return _rng.integers(-5, 6, shape)


# float32 products round at each step: compared with NumPy's own float32 result
F32 = dict(rtol=1e-5, grad_rtol=1e-4, fd=False)

# `autograd=False`: derivatives against finite differences only, where autograd has no
# rule (vdot, 2-vectors in cross), or one that fails on the case (`x.dot`, an n-d
# operand of outer, repeated einsum subscripts, broadcast operands of cross)

# ---- cases


# np.dot: every case NumPy has


@case("dot", 1.5, rand(3, 4))
def dot_scalar_array(a, b):
    return np.dot(a, b)


@case("dot", rand(3, 4), -0.5)
def dot_array_scalar(a, b):
    return np.dot(a, b)


@case("dot", rand(4), rand(4))
def dot_1d_1d(a, b):
    return np.dot(a, b)


@case("dot", rand(3, 4), rand(4))
def dot_2d_1d(a, b):
    return np.dot(a, b)


@case("dot", rand(4), rand(4, 3))
def dot_1d_2d(a, b):
    return np.dot(a, b)


@case("dot", rand(3, 4), rand(4, 2))
def dot_2d_2d(a, b):
    return np.dot(a, b)


@case("dot", rand(2, 3, 4), rand(4))
def dot_3d_1d(a, b):
    return np.dot(a, b)


@case("dot", rand(4), rand(2, 4, 3))
def dot_1d_3d(a, b):
    return np.dot(a, b)


@case("dot", rand(2, 3, 4), rand(5, 4, 2))
def dot_3d_3d(a, b):
    return np.dot(a, b)


@case("dot", rand(3, 4), rand(2, 4, 3))
def dot_2d_3d(a, b):
    return np.dot(a, b)


@case("dot", f32(3, 4), f32(4, 2), **F32)
def dot_float32(a, b):
    return np.dot(a, b)


@case("dot", ints(3, 4), ints(4, 2), order=0)
def dot_int(a, b):
    return np.dot(a, b)


@case("dot", ints(2, 3, 4), rand(4), argnums=(1,))
def dot_int_float(a, b):
    return np.dot(a, b)


@case("dot", rand(3, 4), rand(4, 2), autograd=False)
def dot_method(a, b):
    return a.dot(b)


# np.matmul and `@`


@case("matmul", rand(3, 4), rand(4, 2))
def matmul_2d_2d(a, b):
    return np.matmul(a, b)


@case("matmul", rand(4), rand(4))
def matmul_1d_1d(a, b):
    return a @ b


@case("matmul", rand(2, 3, 4), rand(2, 4, 5))
def matmul_batch(a, b):
    return a @ b


@case("matmul", rand(2, 1, 3, 4), rand(5, 4, 2))
def matmul_broadcast_batch(a, b):
    return np.matmul(a, b)


@case("matmul", rand(2, 3, 4), rand(4, 5))
def matmul_3d_2d(a, b):
    return a @ b


@case("matmul", rand(3, 4), rand(2, 4, 5))
def matmul_2d_3d(a, b):
    return a @ b


@case("matmul", rand(4), rand(2, 4, 3))
def matmul_1d_3d(a, b):
    return np.matmul(a, b)


@case("matmul", rand(2, 3, 4), rand(4))
def matmul_3d_1d(a, b):
    return np.matmul(a, b)


@case("matmul", rand(2, 3, 4), rand(2, 5, 4))
def matmul_transposed_batch(a, b):
    return a @ np.transpose(b, (0, 2, 1))


@case("matmul", rand(3, 2, 4), rand(2, 4, 5))
def matmul_strided_batch(a, b):
    return np.transpose(a, (1, 0, 2)) @ b


@case("matmul", f32(2, 3, 4), f32(2, 4, 5), **F32)
def matmul_float32(a, b):
    return a @ b


@case("matmul", ints(2, 3, 4), ints(2, 4, 5), order=0)
def matmul_int(a, b):
    return a @ b


# np.inner, np.outer, np.vdot


@case("inner", rand(4), rand(4))
def inner_1d(a, b):
    return np.inner(a, b)


@case("inner", rand(2, 3, 4), rand(5, 4))
def inner_nd(a, b):
    return np.inner(a, b)


@case("inner", rand(3, 4), rand(4))
def inner_2d_1d(a, b):
    return np.inner(a, b)


@case("inner", 0.7, rand(3, 4))
def inner_scalar(a, b):
    return np.inner(a, b)


@case("outer", rand(3), rand(4))
def outer_1d(a, b):
    return np.outer(a, b)


@case("outer", rand(2, 3), rand(4), autograd=False)
def outer_nd(a, b):
    return np.outer(a, b)


@case("vdot", rand(4), rand(4), autograd=False)
def vdot_1d(a, b):
    return np.vdot(a, b)


@case("vdot", rand(2, 3), rand(3, 2), autograd=False)
def vdot_2d(a, b):
    return np.vdot(a, b)


# np.tensordot


@case("tensordot", rand(2, 3, 4), rand(3, 4, 5))
def tensordot_default(a, b):
    return np.tensordot(a, b)


@case("tensordot", rand(2, 3, 4), rand(4, 5))
def tensordot_1(a, b):
    return np.tensordot(a, b, 1)


@case("tensordot", rand(2, 3), rand(4))
def tensordot_0(a, b):
    return np.tensordot(a, b, axes=0)


@case("tensordot", rand(2, 3, 4), rand(4, 5, 2))
def tensordot_pairs(a, b):
    return np.tensordot(a, b, axes=((0, 2), (2, 0)))


@case("tensordot", rand(3, 4), rand(4, 3))
def tensordot_negative_axes(a, b):
    return np.tensordot(a, b, axes=((-1, 0), (0, -1)))


@case("tensordot", rand(3, 4), rand(2, 3))
def tensordot_single_axes(a, b):
    return np.tensordot(a, b, axes=(0, 1))


# np.einsum


@case("einsum", rand(2, 3), rand(3, 4))
def einsum_matrix_product(a, b):
    return np.einsum("ij,jk->ik", a, b)


@case("einsum", rand(2, 3), rand(3, 4))
def einsum_implicit(a, b):
    return np.einsum("ij,jk", a, b)


@case("einsum", rand(5, 2, 3), rand(5, 3, 4))
def einsum_batch_product(a, b):
    return np.einsum("bij,bjk->bik", a, b)


@case("einsum", rand(5, 2, 3), rand(5, 3, 4))
def einsum_batch_summed(a, b):
    return np.einsum("bij,bjk->ik", a, b)


@case("einsum", rand(4, 4), autograd=False)
def einsum_trace(a):
    return np.einsum("ii", a)


@case("einsum", rand(4, 4), autograd=False)
def einsum_diagonal(a):
    return np.einsum("ii->i", a)


@case("einsum", rand(3, 2, 3), autograd=False)
def einsum_diagonal_of_axes_apart(a):
    return np.einsum("iji->ji", a)


@case("einsum", rand(3, 3, 3), autograd=False)
def einsum_diagonal_of_three(a):
    return np.einsum("iii->i", a)


@case("einsum", rand(3, 3, 2, 2), autograd=False)
def einsum_two_diagonals(a):
    return np.einsum("iijj->ij", a)


@case("einsum", rand(3), rand(4))
def einsum_outer(a, b):
    return np.einsum("i,j->ij", a, b)


@case("einsum", rand(3, 4))
def einsum_transpose(a):
    return np.einsum("ij->ji", a)


@case("einsum", rand(3, 4))
def einsum_sum_over_an_axis(a):
    return np.einsum("ij->j", a)


@case("einsum", rand(3, 4))
def einsum_sum_all(a):
    return np.einsum("ij->", a)


@case("einsum", rand(2, 3), rand(3, 4), rand(4, 5))
def einsum_three_operands(a, b, c):
    return np.einsum("ij,jk,kl->il", a, b, c)


@case("einsum", rand(3), rand(3, 4), rand(4))
def einsum_bilinear_form(a, b, c):
    return np.einsum("i,ij,j", a, b, c)


@case("einsum", rand(4), rand(4))
def einsum_dot(a, b):
    return np.einsum("i,i", a, b)


@case("einsum", rand(5, 4), rand(5, 4))
def einsum_rowwise_dot(a, b):
    return np.einsum("bi,bi->b", a, b)


@case("einsum", rand(3, 4), rand(3, 4))
def einsum_elementwise(a, b):
    return np.einsum("ij,ij->ij", a, b)


@case("einsum", rand(3, 1), rand(3, 4))
def einsum_broadcast_one(a, b):
    return np.einsum("ij,ij->ij", a, b)


@case("einsum", rand(5, 2, 3), rand(3, 4))
def einsum_ellipsis(a, b):
    return np.einsum("...ij,...jk->...ik", a, b)


@case("einsum", rand(2, 5, 3), rand(5, 3))
def einsum_ellipsis_broadcast(a, b):
    return np.einsum("...j,...j", a, b)


@case("einsum", rand(2, 3, 4), rand(4, 3, 5))
def einsum_contraction(a, b):
    return np.einsum("ijk,kjl->il", a, b)


@case("einsum", f32(2, 3), f32(3, 4), **F32)
def einsum_float32(a, b):
    return np.einsum("ij,jk->ik", a, b)


@case("einsum", ints(2, 3), ints(3, 4), order=0)
def einsum_int(a, b):
    return np.einsum("ij,jk->ki", a, b)


@case("einsum", ints(3, 3), order=0)
def einsum_int_trace(a):
    return np.einsum("ii", a)


# np.kron, np.cross


@case("kron", rand(2, 3), rand(4, 2))
def kron_2d(a, b):
    return np.kron(a, b)


@case("kron", rand(3), rand(2, 2))
def kron_1d_2d(a, b):
    return np.kron(a, b)


@case("kron", rand(3), rand(4))
def kron_1d(a, b):
    return np.kron(a, b)


@case("cross", rand(3), rand(3))
def cross_3(a, b):
    return np.cross(a, b)


@case("cross", rand(4, 3), rand(3), autograd=False)
def cross_broadcast(a, b):
    return np.cross(a, b)


@case("cross", rand(3, 4), rand(4, 3))
def cross_axes(a, b):
    return np.cross(a, b, axisa=0, axisb=1, axisc=0)


@case("cross", rand(2, 3, 4), rand(2, 3, 4))
def cross_axis(a, b):
    return np.cross(a, b, axis=1)


@case("cross", rand(4, 2), rand(4, 2), autograd=False)
def cross_2(a, b):
    return np.cross(a, b)


@case("cross", rand(4, 2), rand(3), autograd=False)
def cross_2_3(a, b):
    return np.cross(a, b)


@case("cross", rand(4, 3), rand(1, 2), autograd=False)
def cross_3_2(a, b):
    return np.cross(a, b)


@case("linalg.norm", rand(5), autograd=False)  # autograd: no rule for ord=1
def norm_vector(x):
    return np.linalg.norm(x) + np.linalg.norm(x, 1) + np.linalg.norm(x, np.inf) + \
        np.linalg.norm(x, 3)


@case("linalg.norm", rand(3, 4), autograd=False)  # autograd: no rule for ord=1
def norm_matrix(x):
    return np.linalg.norm(x) + np.linalg.norm(x, "fro") + np.linalg.norm(x, 1) + \
        np.linalg.norm(x, np.inf)


@case("linalg.norm", rand(3, 4), autograd=False)  # autograd: keepdims gives (1, 3, 4)
def norm_axis(x):
    return np.linalg.norm(x, axis=1) + np.linalg.norm(x, axis=0, keepdims=True)[0, :3]
