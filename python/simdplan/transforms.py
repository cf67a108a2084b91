"""Small rigid-transform helpers with validation (NumPy, float64).

Conventions (all of simdplan): metres and radians; quaternions are ``[x, y, z, w]`` (as scipy,
ROS and pybullet); Euler angles "xyz" are extrinsic rotations about the fixed x, then y, then z
axes, i.e. ``R = Rz @ Ry @ Rx`` (the URDF ``rpy`` convention).
"""

from __future__ import annotations

import math

import numpy as np

from simdplan.validation import as_finite

# A quaternion whose norm is this far from 1 is refused rather than silently normalised.
QUAT_NORM_TOLERANCE = 1e-3


def quat_to_matrix(quat, name: str = "quat") -> np.ndarray:
    """Rotation matrix (3, 3) of a unit quaternion ``[x, y, z, w]``."""
    q = as_finite(quat, (4,), name)
    norm = math.hypot(*q)  # no overflow for huge finite entries (np.linalg.norm warns and gives inf)
    if abs(norm - 1.0) > QUAT_NORM_TOLERANCE:
        raise ValueError(f"{name} {q.tolist()} has norm {norm:.6g}; expected a unit quaternion [x, y, z, w]")
    x, y, z, w = q / norm
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def matrix_to_quat(rot) -> np.ndarray:
    """Unit quaternion ``[x, y, z, w]`` (w >= 0) of a rotation matrix (3, 3)."""
    m = np.asarray(rot, dtype=np.float64)
    # Shepperd's method: pivot on the largest of w, x, y, z for accuracy.
    tr = np.trace(m)
    cands = [tr, m[0, 0], m[1, 1], m[2, 2]]
    k = int(np.argmax(cands))
    if k == 0:
        s = 2.0 * np.sqrt(1.0 + tr)
        q = [(m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s, 0.25 * s]
    elif k == 1:
        s = 2.0 * np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        q = [0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s, (m[2, 1] - m[1, 2]) / s]
    elif k == 2:
        s = 2.0 * np.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        q = [(m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s, (m[0, 2] - m[2, 0]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        q = [(m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s, (m[1, 0] - m[0, 1]) / s]
    q = np.array(q)
    q /= np.linalg.norm(q)
    return -q if q[3] < 0 else q


def euler_xyz_to_matrix(euler, name: str = "euler") -> np.ndarray:
    """Rotation matrix (3, 3) of extrinsic x-y-z angles ``[rx, ry, rz]``: ``Rz @ Ry @ Rx``."""
    rx, ry, rz = as_finite(euler, (3,), name)
    cx, sx, cy, sy, cz, sz = np.cos(rx), np.sin(rx), np.cos(ry), np.sin(ry), np.cos(rz), np.sin(rz)
    rot_x = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    rot_y = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    rot_z = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    return rot_z @ rot_y @ rot_x


def check_pose_matrix(pose, name: str = "pose", tol: float = 1e-5) -> np.ndarray:
    """``pose`` as a validated (4, 4) rigid transform: orthonormal rotation, last row [0, 0, 0, 1]."""
    m = as_finite(pose, (4, 4), name)
    rot = m[:3, :3]
    if not np.allclose(rot @ rot.T, np.eye(3), atol=tol) or np.linalg.det(rot) < 0:
        raise ValueError(f"{name} rotation block is not a proper rotation (orthonormal, det +1)")
    if not np.allclose(m[3], [0, 0, 0, 1], atol=tol):
        raise ValueError(f"{name} last row must be [0, 0, 0, 1], got {m[3].tolist()}")
    return m


def resolve_pose(position, quat=None, euler=None, name: str = "obstacle") -> tuple[np.ndarray, np.ndarray]:
    """(position (3,), rotation (3, 3)) from a position with a quaternion or Euler angles, or a 4x4."""
    arr = np.asarray(position) if position is not None else None
    if arr is not None and arr.shape == (4, 4):
        if quat is not None or euler is not None:
            raise ValueError(f"{name}: give a 4x4 pose or position + quat/euler, not both")
        m = check_pose_matrix(arr, f"{name} pose")
        return m[:3, 3].copy(), m[:3, :3].copy()
    pos = as_finite(position, (3,), f"{name} position")
    if quat is not None and euler is not None:
        raise ValueError(f"{name}: give quat or euler, not both")
    if euler is not None:
        return pos, euler_xyz_to_matrix(euler, f"{name} euler")
    if quat is None:
        return pos, np.eye(3)
    q = np.asarray(quat)
    if q.shape == (3, 3):
        return pos, check_pose_matrix(np.block([[q, np.zeros((3, 1))], [np.zeros((1, 3)), np.ones((1, 1))]]),
                                      f"{name} rotation")[:3, :3]
    return pos, quat_to_matrix(quat, f"{name} quat")
