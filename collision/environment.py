"""The obstacle set a robot is checked against.

Frames and units: every obstacle is given in the world frame (the robot's base frame unless the
robot was given a base pose), metres and radians. A shape's pose is its centre. Semantics shared
by every check: a robot sphere collides with an obstacle iff its centre is *strictly* closer to the
obstacle than its radius (plus any padding); touching is free.

Shapes:
- sphere: centre and radius.
- capsule: the segment of total length ``length`` along the local z axis, swept by ``radius``
  (its round caps reach ``radius`` beyond the segment's ends).
- cylinder: solid, flat caps, axis along local z, total height ``length``. Exact, not a capsule.
- box: oriented, ``half_extents`` along its local x, y, z.
- plane: the half-space ``{p : normal . p <= offset}``; ``normal`` points into free space.

The builder validates every number on entry and compiles to the C++ core lazily: the compiled form
is built on first use after a change and then reused by every check.
"""

from __future__ import annotations

import dataclasses
from typing import Iterator

import numpy as np

from simdplan import _core
from simdplan.transforms import as_finite, matrix_to_quat, resolve_pose

KINDS = ("sphere", "capsule", "cylinder", "box", "plane")
# Order of the C++ core's obstacle kinds in contact reports.
_CORE_KIND_INDEX = {"sphere": 0, "capsule": 1, "cylinder": 2, "box": 3, "plane": 4}


@dataclasses.dataclass(frozen=True)
class Obstacle:
    """One obstacle as given: ``kind`` is one of KINDS; ``params`` holds its validated numbers."""

    id: int
    kind: str
    name: str
    params: dict

    def record(self) -> np.ndarray:
        """The flat float record the C++ core reads (layouts in cpp/include/simdplan/geom/)."""
        p = self.params
        if self.kind == "sphere":
            return np.r_[p["center"], p["radius"]]
        if self.kind in ("capsule", "cylinder"):
            axis = p["rotation"][:, 2]
            return np.r_[p["position"], axis, 0.5 * p["length"], p["radius"]]
        if self.kind == "box":
            rot = p["rotation"]
            return np.r_[p["position"], rot[:, 0], rot[:, 1], rot[:, 2], p["half_extents"], 0.0]
        return np.r_[p["normal"], p["offset"]]


def _positive(value, name: str, allow_zero: bool = False) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not np.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'} and finite, got {value!r}")
    return v


class Environment:
    """A set of obstacles in the world frame; see the module docstring for shapes and semantics.

    Every ``add_*`` returns an integer id, unique within this environment, for ``remove``.
    Orientation may be given as a quaternion ``quat=[x, y, z, w]``, a (3, 3) rotation as ``quat``,
    Euler angles ``euler=[rx, ry, rz]`` (extrinsic xyz, as URDF rpy), or by passing a (4, 4) pose
    as ``position``. With none of these, the shape is axis-aligned.
    """

    def __init__(self) -> None:
        self._obstacles: dict[int, Obstacle] = {}
        self._next_id = 0
        self._compiled = None
        self._index: dict[str, list[int]] = {}

    # ----- building -----
    def _add(self, kind: str, name: str | None, params: dict) -> int:
        oid = self._next_id
        self._next_id += 1
        self._obstacles[oid] = Obstacle(oid, kind, name if name is not None else f"{kind}{oid}", params)
        self._compiled = None
        return oid

    def add_sphere(self, center, radius, *, name: str | None = None) -> int:
        """Sphere with ``center`` (3,) and ``radius`` > 0, metres."""
        c = as_finite(center, (3,), "sphere center")
        return self._add("sphere", name, {"center": c, "radius": _positive(radius, "sphere radius")})

    def add_capsule(self, position, quat=None, radius=None, length=None, *, euler=None, name: str | None = None) -> int:
        """Capsule: segment of ``length`` (>= 0) along local z through ``position``, swept by ``radius``."""
        pos, rot = resolve_pose(position, quat, euler, "capsule")
        return self._add("capsule", name, {"position": pos, "rotation": rot,
                                           "radius": _positive(radius, "capsule radius"),
                                           "length": _positive(length, "capsule length", allow_zero=True)})

    def add_cylinder(self, position, quat=None, radius=None, length=None, *, euler=None, name: str | None = None) -> int:
        """Solid flat-capped cylinder, axis local z, total height ``length``, centred at ``position``."""
        pos, rot = resolve_pose(position, quat, euler, "cylinder")
        return self._add("cylinder", name, {"position": pos, "rotation": rot,
                                            "radius": _positive(radius, "cylinder radius"),
                                            "length": _positive(length, "cylinder length")})

    def add_box(self, position, quat=None, half_extents=None, *, euler=None, name: str | None = None) -> int:
        """Oriented box centred at ``position`` with ``half_extents`` (3,) along its local axes."""
        pos, rot = resolve_pose(position, quat, euler, "box")
        if half_extents is None:
            raise ValueError("box half_extents is required")
        he = as_finite(half_extents, (3,), "box half_extents")
        if np.any(he <= 0):
            raise ValueError(f"box half_extents must all be > 0, got {he.tolist()}")
        return self._add("box", name, {"position": pos, "rotation": rot, "half_extents": he})

    def add_plane(self, normal, offset=0.0, *, name: str | None = None) -> int:
        """Half-space ``{p : normal . p <= offset}`` (normal normalised; it points into free space)."""
        n = as_finite(normal, (3,), "plane normal")
        norm = float(np.linalg.norm(n))
        if norm < 1e-9:
            raise ValueError("plane normal must be non-zero")
        off = float(as_finite(offset, (), "plane offset"))
        return self._add("plane", name, {"normal": n / norm, "offset": off / norm})

    def remove(self, obstacle_id: int) -> None:
        """Remove the obstacle with this id (KeyError if there is none)."""
        if obstacle_id not in self._obstacles:
            raise KeyError(f"no obstacle with id {obstacle_id} in this environment")
        del self._obstacles[obstacle_id]
        self._compiled = None

    def clear(self) -> None:
        """Remove every obstacle."""
        self._obstacles.clear()
        self._compiled = None

    # ----- reading -----
    def __len__(self) -> int:
        return len(self._obstacles)

    def __iter__(self) -> Iterator[Obstacle]:
        return iter(list(self._obstacles.values()))

    def __getitem__(self, obstacle_id: int) -> Obstacle:
        return self._obstacles[obstacle_id]

    def __repr__(self) -> str:
        counts = {k: 0 for k in KINDS}
        for o in self._obstacles.values():
            counts[o.kind] += 1
        plural = {"sphere": "spheres", "capsule": "capsules", "cylinder": "cylinders", "box": "boxes", "plane": "planes"}
        parts = ", ".join(f"{v} {k if v == 1 else plural[k]}" for k, v in counts.items() if v)
        return f"Environment({parts or 'empty'})"

    def to_dicts(self) -> list[dict]:
        """Obstacles as plain dicts (position + quaternion [x, y, z, w]), e.g. for scene files."""
        out = []
        for o in self._obstacles.values():
            p = o.params
            d = {"type": o.kind, "name": o.name}
            if o.kind == "sphere":
                d.update(position=p["center"].tolist(), radius=p["radius"])
            elif o.kind == "plane":
                d.update(normal=p["normal"].tolist(), offset=p["offset"])
            else:
                d.update(position=p["position"].tolist(), quat=matrix_to_quat(p["rotation"]).tolist())
                if o.kind == "box":
                    d["half_extents"] = p["half_extents"].tolist()
                else:
                    d.update(radius=p["radius"], length=p["length"])
            out.append(d)
        return out

    # ----- compiled form -----
    def _model(self):
        """The C++ EnvironmentModel for the current obstacles (built once per change)."""
        if self._compiled is None:
            groups: dict[str, list] = {k: [] for k in KINDS}
            index: dict[str, list[int]] = {k: [] for k in KINDS}
            for o in self._obstacles.values():
                groups[o.kind].append(o.record())
                index[o.kind].append(o.id)
            sizes = {"sphere": 4, "capsule": 8, "cylinder": 8, "box": 16, "plane": 4}
            arrays = [np.asarray(groups[k], dtype=np.float32).reshape(-1, sizes[k]) for k in KINDS]
            self._compiled = _core.EnvironmentModel(*arrays)
            self._index = index
        return self._compiled

    def _obstacle_for(self, core_kind: int, record: int) -> Obstacle:
        """The obstacle behind a C++ contact report (kind index, record index)."""
        self._model()
        kind = KINDS[core_kind]
        return self._obstacles[self._index[kind][record]]
