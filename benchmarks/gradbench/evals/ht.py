"""ht: hand tracking (ADBench's "hand"): the distances between observed points and a
skinned hand model posed by 26 angles theta, and their Jacobian (GradBench's
evals/ht/README.md), written as GradBench's PyTorch tool writes it
(python/gradbench/gradbench/tools/pytorch/ht_objective.py, from ADBench), in NumPy:
`np` for `torch`, `np.transpose(x, (1, 0))` for `torch.transpose(x, 0, 1)`,
`.swapaxes` for `.transpose(i, j)`; index assignment, nested functions, the list of
absolute transforms grown with `append` and indexed by `parents[i]`, as there.

Two arguments are static (`static_argnums`, as JAX would need them): the bone count,
which decides shapes, and `parents`, passed as a tuple: `absolutes[parents[i]]`
indexes a Python list, whose index must be known when compiling (in JAX too).

"jacobian" is what the PyTorch tool computes with torch's jacobian, in forward mode:
`myia.jacfwd` over the 26 angles theta (one jvp per angle), and for the complicated
variant the two columns of the us part as the tool reports them (point i's error
depends on its own u_i only, so the Jacobian's us part is block diagonal, and the
tool keeps only each row's block: 3 x 2 per point): two jvps, along all u_i0 and all
u_i1 at once.

Cost: the lists over the points (`err` is a stack of one row per point) unroll at
compile time: 100 points compile in about 5 s (the Jacobian in 12 to 15 s), so
GradBench's smallest inputs (100 to 200 points) are in reach, its largest (up to
100,000 points) are not.
"""

import numpy as np
from myia import jacfwd, jvp

from . import Function, to_list


def to_pose_params(theta, nbones):
    pose_params = np.zeros((nbones + 3, 3))

    pose_params[0, :] = theta[0:3]
    pose_params[1, :] = np.ones((3,))
    pose_params[2, :] = theta[3:6]

    i_theta = 6
    i_pose_params = 5
    n_fingers = 5
    for i_finger in range(n_fingers):
        for i in [1, 2, 3]:
            pose_params[i_pose_params, 0] = theta[i_theta]
            i_theta += 1
            if i == 1:
                pose_params[i_pose_params, 1] = theta[i_theta]
                i_theta += 1
            i_pose_params += 1
        i_pose_params += 1

    return pose_params


def euler_angles_to_rotation_matrix(xzy):
    tx = xzy[0]
    ty = xzy[2]
    tz = xzy[1]

    Rx = np.eye(3)
    Rx[1, 1] = np.cos(tx)
    Rx[2, 1] = np.sin(tx)
    Rx[1, 2] = -Rx[2, 1]
    Rx[2, 2] = Rx[1, 1]

    Ry = np.eye(3)
    Ry[0, 0] = np.cos(ty)
    Ry[2, 0] = np.sin(ty)
    Ry[0, 2] = -Ry[2, 0]
    Ry[2, 2] = Ry[0, 0]

    Rz = np.eye(3)
    Rz[0, 0] = np.cos(tz)
    Rz[1, 0] = np.sin(tz)
    Rz[0, 1] = -Rz[1, 0]
    Rz[1, 1] = Rz[0, 0]

    return (Rz @ Ry) @ Rx


def get_posed_relatives(pose_params, base_relatives):
    def inner(rot_param, base_relative):
        tr = np.eye(4)
        R = euler_angles_to_rotation_matrix(rot_param)
        tr[:3, :3] = R
        return base_relative @ tr

    relatives = np.stack(
        [
            inner(pose_params[3:][i], base_relatives[i])
            for i in range(len(pose_params[3:]))
        ]
    )

    return relatives


def relatives_to_absolutes(relatives, parents):
    absolutes = []
    for i in range(relatives.shape[0]):
        if parents[i] == -1:
            absolutes.append(relatives[i])
        else:
            absolutes.append(absolutes[parents[i]] @ relatives[i])

    return np.stack(absolutes)


def angle_axis_to_rotation_matrix(angle_axis):
    n = np.sqrt(np.sum(angle_axis**2))

    def aa2R():
        angle_axis_normalized = angle_axis / n
        x = angle_axis_normalized[0]
        y = angle_axis_normalized[1]
        z = angle_axis_normalized[2]
        s, c = np.sin(n), np.cos(n)
        R = np.zeros((3, 3))
        R[0, 0] = x * x + (1 - x * x) * c
        R[0, 1] = x * y * (1 - c) - z * s
        R[0, 2] = x * z * (1 - c) + y * s

        R[1, 0] = x * y * (1 - c) + z * s
        R[1, 1] = y * y + (1 - y * y) * c
        R[1, 2] = y * z * (1 - c) - x * s

        R[2, 0] = x * z * (1 - c) - y * s
        R[2, 1] = z * y * (1 - c) + x * s
        R[2, 2] = z * z + (1 - z * z) * c
        return R

    if n < 0.0001:
        return np.eye(3)
    else:
        return aa2R()


def apply_global_transform(pose_params, positions):
    R = angle_axis_to_rotation_matrix(pose_params[0])
    s = pose_params[1]
    R *= s
    t = pose_params[2]
    return np.transpose(R @ np.transpose(positions, (1, 0)), (1, 0)) + t


def get_skinned_vertex_positions(pose_params, base_relatives, parents,
                                 inverse_base_absolutes, base_positions, weights,
                                 mirror_factor):
    relatives = get_posed_relatives(pose_params, base_relatives)

    absolutes = relatives_to_absolutes(relatives, parents)

    transforms = np.stack(
        [(absolutes[i] @ inverse_base_absolutes[i]) for i in range(len(absolutes))]
    )

    positions = (
        np.stack(
            [
                transforms[i, :, :] @ base_positions.T
                for i in range(transforms.shape[0])
            ]
        )
        .swapaxes(0, 2)
        .swapaxes(1, 2)
    )

    positions2 = np.sum(positions * weights.reshape((*weights.shape, 1)), 1)[:, :3]

    positions3 = apply_global_transform(pose_params, positions2)

    return positions3


def hand_objective(params, nbones, parents, base_relatives, inverse_base_absolutes,
                   base_positions, weights, mirror_factor, points, correspondences):
    pose_params = to_pose_params(params, nbones)
    vertex_positions = get_skinned_vertex_positions(
        pose_params, base_relatives, parents, inverse_base_absolutes,
        base_positions, weights, mirror_factor)

    err = np.stack(
        [
            points[i] - vertex_positions[int(correspondences[i])]
            for i in range(points.shape[0])
        ]
    )

    return err


def hand_objective_complicated(all_params, nbones, parents, base_relatives,
                               inverse_base_absolutes, base_positions, weights,
                               mirror_factor, points, correspondences, triangles):
    npts = points.shape[0]
    us = all_params[: 2 * npts].reshape((npts, 2))
    theta = all_params[2 * npts:]
    pose_params = to_pose_params(theta, nbones)
    vertex_positions = get_skinned_vertex_positions(
        pose_params, base_relatives, parents, inverse_base_absolutes,
        base_positions, weights, mirror_factor)

    def get_hand_pt(u, triangle):
        return (
            u[0] * vertex_positions[int(triangle[0])]
            + u[1] * vertex_positions[int(triangle[1])]
            + (1.0 - u[0] - u[1]) * vertex_positions[int(triangle[2])]
        )

    err = np.stack(
        [
            points[i] - get_hand_pt(us[i], triangles[int(correspondences[i])])
            for i in range(points.shape[0])
        ]
    )

    return err


# ---- the protocol's side ------------------------------------------------------------
# (subset code too: the two variants in one program, `complicated` a static bool)


def objective(theta, us, nbones, parents, model, points, correspondences, triangles,
              complicated):
    relatives, inverse_absolutes, positions, weights, mirrored = model
    if complicated:
        all_params = np.concatenate((np.ravel(us), theta))
        return hand_objective_complicated(all_params, nbones, parents, relatives,
                                          inverse_absolutes, positions, weights, mirrored,
                                          points, correspondences, triangles)
    return hand_objective(theta, nbones, parents, relatives, inverse_absolutes, positions,
                          weights, mirrored, points, correspondences)


def jacobian(theta, us, nbones, parents, model, points, correspondences, triangles,
             complicated):
    def errors(theta, us):
        return np.ravel(objective(theta, us, nbones, parents, model, points,
                                  correspondences, triangles, complicated))

    by_theta = jacfwd(errors)(theta, us)
    if complicated:
        along_u0 = np.where(np.arange(2) == 0, 1.0, 0.0) * np.ones_like(us)
        no_theta = np.zeros_like(theta)
        d_u0 = jvp(errors, (theta, us), (no_theta, along_u0))[1]
        d_u1 = jvp(errors, (theta, us), (no_theta, 1.0 - along_u0))[1]
        return np.concatenate((np.stack((d_u0, d_u1), axis=1), by_theta), axis=1)
    return by_theta


def arguments(input):
    data, model = input["data"], input["data"]["model"]
    floats = lambda x: np.asarray(x, dtype=np.float64)  # noqa: E731
    us = floats(input.get("us") or [])
    complicated = us.size > 0
    return (floats(input["theta"]), us.reshape(-1, 2), int(model["bone_count"]),
            tuple(int(p) for p in model["parents"]),
            (floats(model["base_relatives"]), floats(model["inverse_base_absolutes"]),
             floats(model["base_positions"]), floats(model["weights"]),
             bool(model["is_mirrored"])),
            floats(data["points"]), np.asarray(data["correspondences"], dtype=np.int64),
            np.asarray(model["triangles"], dtype=np.int64).reshape(-1, 3), complicated)


def flattened(err):
    return np.ravel(err).tolist()


STATIC = (2, 3, 8)

FUNCTIONS = {
    "objective": Function(objective, prepare=arguments, post=flattened, static=STATIC),
    "jacobian": Function(jacobian, prepare=arguments, post=to_list, static=STATIC),
}
