"""Reading a robot description: URDF (through yourdfpy) and SRDF (disabled collision pairs).

The result is a plain, validated description (links with their collision spheres, joints with
origins, axes, limits and mimic relations) that simdplan.robots.kinematics compiles for the core.
Collision geometry must be spheres (the "spherized URDF" convention); a URDF whose links collide
through meshes or other shapes is refused with a message saying how to get spheres.
"""

from __future__ import annotations

import dataclasses
import math
import os
import warnings
import xml.etree.ElementTree as ET

import numpy as np

MOVABLE = ("revolute", "continuous", "prismatic")
SUPPORTED = MOVABLE + ("fixed",)
# Largest joint limit magnitude accepted (radians or metres). Joint values are float32 in the core,
# whose spacing at 1e4 is 1 mm / 1 mrad; limits far beyond (1e20 written for "unbounded") overflow
# the joint-space norms the defaults are derived from. An unbounded revolute joint is "continuous".
MAX_JOINT_LIMIT = 1e4


def limits_error(joint: str, jtype: str, lower: float, upper: float) -> str | None:
    """Why ``[lower, upper]`` cannot be the limits of a ``jtype`` joint, or None if it can."""
    if not (np.isfinite(lower) and np.isfinite(upper)) or lower > upper:
        return f"joint {joint!r} has invalid limits [{lower}, {upper}]: they must be finite with lower <= upper"
    if max(abs(lower), abs(upper)) > MAX_JOINT_LIMIT:
        hint = ("; a joint that turns without limit is type continuous" if jtype == "revolute" else
                "; give the real travel of the joint")
        return (f"joint {joint!r} has limits [{lower:g}, {upper:g}] beyond +-{MAX_JOINT_LIMIT:g} "
                f"({'rad' if jtype == 'revolute' else 'm'}), the largest supported{hint}")
    return None


def velocity_error(joint: str, velocity: float) -> str | None:
    """Why ``velocity`` (rad/s or m/s) cannot be a joint's velocity limit, or None if it can."""
    if not (np.isfinite(velocity) and velocity > 0):
        return f"joint {joint!r}: velocity must be finite and > 0, got {velocity!r}"
    return None


@dataclasses.dataclass
class Mimic:
    joint: str
    multiplier: float
    offset: float


@dataclasses.dataclass
class JointDesc:
    name: str
    type: str  # revolute, continuous, prismatic, fixed
    parent: str
    child: str
    origin: np.ndarray  # (4, 4) child joint frame in the parent link frame
    axis: np.ndarray  # (3,) unit, in the joint frame
    lower: float
    upper: float
    mimic: Mimic | None
    # the URDF's <limit velocity=...> (rad/s or m/s); None where the file gives none
    velocity: float | None = None


@dataclasses.dataclass
class MeshRef:
    """A mesh named by the URDF: resolved file path, pose in the link frame (4, 4), scale (3,)."""

    path: str
    origin: np.ndarray
    scale: np.ndarray


@dataclasses.dataclass
class PrimitiveRef:
    """A URDF collision primitive other than a sphere: ``kind`` "box" (params ``half_extents`` (3,))
    or "cylinder" (``radius``, ``length``: total, along local z); pose in the link frame (4, 4)."""

    kind: str
    origin: np.ndarray
    params: dict


@dataclasses.dataclass
class LinkDesc:
    name: str
    spheres: np.ndarray  # (k, 4): centre in the link frame, radius; metres
    other_geometry: list[str]  # collision geometry that is not a sphere (kind names)
    visual_meshes: list[MeshRef] = dataclasses.field(default_factory=list)
    collision_meshes: list[MeshRef] = dataclasses.field(default_factory=list)
    collision_primitives: list[PrimitiveRef] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class RobotDescription:
    name: str
    links: dict[str, LinkDesc]
    joints: list[JointDesc]
    root: str
    urdf_path: str | None = None


def _fail(path: str, what: str) -> ValueError:
    return ValueError(f"{path}: {what}")


def resolve_mesh_path(filename: str, urdf_dir: str) -> str:
    """A URDF mesh filename as a local path: ``package://`` and ``file://`` prefixes are stripped and
    relative paths are taken from the URDF's folder. (ROS package lookup is not attempted: the
    robots shipped here keep their meshes beside the URDF.)"""
    for prefix in ("package://", "file://"):
        if filename.startswith(prefix):
            filename = filename[len(prefix):]
    return os.path.normpath(filename if os.path.isabs(filename) else os.path.join(urdf_dir, filename))


def _mesh_refs(elements, urdf_dir: str) -> list[MeshRef]:
    out = []
    for e in elements:
        mesh = e.geometry.mesh if e.geometry is not None else None
        if mesh is None or not mesh.filename:
            continue
        origin = np.eye(4) if e.origin is None else np.asarray(e.origin, dtype=float)
        scale = np.ones(3) if mesh.scale is None else np.broadcast_to(np.asarray(mesh.scale, dtype=float), (3,)).copy()
        out.append(MeshRef(resolve_mesh_path(mesh.filename, urdf_dir), origin, scale))
    return out


def _primitive(path: str, link: str, kind: str, shape, origin: np.ndarray) -> PrimitiveRef:
    """A validated box or cylinder collision element (sizes finite and > 0)."""
    if kind == "box":
        size = np.asarray(shape.size, dtype=float).reshape(-1)
        if size.shape != (3,) or not np.all(np.isfinite(size)) or np.any(size <= 0):
            raise _fail(path, f"link {link!r} has a collision box of size {size.tolist()}: 3 sizes > 0 needed")
        return PrimitiveRef("box", origin, {"half_extents": 0.5 * size})
    r, length = float(shape.radius), float(shape.length)
    if not (np.isfinite(r) and np.isfinite(length) and r > 0 and length > 0):
        raise _fail(path, f"link {link!r} has a collision cylinder of radius {r}, length {length}: both must be > 0")
    return PrimitiveRef("cylinder", origin, {"radius": r, "length": length})


def read_urdf(path: str | os.PathLike) -> RobotDescription:
    """Parse and validate a URDF file (FileNotFoundError if missing, ValueError if malformed)."""
    import yourdfpy

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"URDF file not found: {path}")
    try:
        ET.parse(path)
    except ET.ParseError as exc:
        raise _fail(path, f"not well-formed XML ({exc})") from None
    try:
        urdf = yourdfpy.URDF.load(path, build_scene_graph=False, build_collision_scene_graph=False,
                                  load_meshes=False, load_collision_meshes=False)
    except Exception as exc:  # yourdfpy raises assorted types on malformed content
        raise _fail(path, f"could not be read as URDF ({type(exc).__name__}: {exc})") from None
    model = urdf.robot
    if model is None or not model.links:
        raise _fail(path, "has no links")

    links: dict[str, LinkDesc] = {}
    for link in model.links:
        if link.name in links:
            raise _fail(path, f"link {link.name!r} is defined twice")
        spheres, other, primitives = [], [], []
        for col in link.collisions:
            geom = col.geometry
            origin = np.eye(4) if col.origin is None else np.asarray(col.origin, dtype=float)
            if geom is not None and geom.sphere is not None:
                r = float(geom.sphere.radius)
                if not np.isfinite(r) or r <= 0:
                    raise _fail(path, f"link {link.name!r} has a sphere of radius {r}: radii must be > 0")
                spheres.append([*origin[:3, 3], r])
            else:
                kind = next((k for k in ("box", "cylinder", "mesh", "capsule")
                             if geom is not None and getattr(geom, k, None) is not None), "unknown")
                other.append(kind)
                if kind in ("box", "cylinder"):
                    primitives.append(_primitive(path, link.name, kind, getattr(geom, kind), origin))
        arr = np.asarray(spheres, dtype=float).reshape(-1, 4)
        if not np.all(np.isfinite(arr)):
            raise _fail(path, f"link {link.name!r} has a non-finite sphere origin")
        urdf_dir = os.path.dirname(os.path.abspath(path))
        links[link.name] = LinkDesc(link.name, arr, other, _mesh_refs(link.visuals, urdf_dir),
                                    _mesh_refs(link.collisions, urdf_dir), primitives)

    joints: list[JointDesc] = []
    seen_child: dict[str, str] = {}
    for j in model.joints:
        if j.type not in SUPPORTED:
            raise _fail(path, f"joint {j.name!r} has type {j.type!r}; supported: {', '.join(SUPPORTED)}")
        for end in (j.parent, j.child):
            if end not in links:
                raise _fail(path, f"joint {j.name!r} refers to unknown link {end!r}")
        if j.child in seen_child:
            raise _fail(path, f"link {j.child!r} is the child of two joints ({seen_child[j.child]!r}, {j.name!r})")
        seen_child[j.child] = j.name
        origin = np.eye(4) if j.origin is None else np.asarray(j.origin, dtype=float)
        axis = np.array([1.0, 0.0, 0.0]) if j.axis is None else np.asarray(j.axis, dtype=float)
        lower, upper = -np.inf, np.inf
        if j.type in MOVABLE:
            n = math.hypot(*axis.ravel())  # np.linalg.norm overflows to inf for huge entries
            if not np.isfinite(n) or n < 1e-9:
                raise _fail(path, f"joint {j.name!r} has a zero or non-finite axis {axis.tolist()}")
            axis = axis / n
        if j.type in ("revolute", "prismatic"):
            if j.limit is None or j.limit.lower is None or j.limit.upper is None:
                raise _fail(path, f"joint {j.name!r} ({j.type}) needs <limit lower=... upper=...>")
            lower, upper = float(j.limit.lower), float(j.limit.upper)
            problem = limits_error(j.name, j.type, lower, upper)
            if problem:
                raise _fail(path, problem)
        velocity = None
        if j.type in MOVABLE and j.limit is not None and j.limit.velocity is not None:
            velocity = float(j.limit.velocity)
            problem = velocity_error(j.name, velocity)
            if problem:
                raise _fail(path, problem)
        mimic = None
        if j.mimic is not None:
            mimic = Mimic(j.mimic.joint, float(j.mimic.multiplier if j.mimic.multiplier is not None else 1.0),
                          float(j.mimic.offset if j.mimic.offset is not None else 0.0))
        if not np.all(np.isfinite(origin)):
            raise _fail(path, f"joint {j.name!r} has a non-finite origin")
        joints.append(JointDesc(j.name, j.type, j.parent, j.child, origin, axis, lower, upper, mimic, velocity))

    names = {j.name for j in joints}
    for j in joints:
        if j.mimic is not None and j.mimic.joint not in names:
            raise _fail(path, f"joint {j.name!r} mimics unknown joint {j.mimic.joint!r}")
    roots = [name for name in links if name not in seen_child]
    if len(roots) != 1:
        raise _fail(path, f"the links must form one tree; found roots {roots}" if roots else
                    "the joints form a cycle (no root link)")
    desc = RobotDescription(model.name or os.path.basename(path), links, joints, roots[0], path)
    _check_reachable(desc, path)
    return desc


def _check_reachable(desc: RobotDescription, path: str) -> None:
    children: dict[str, list[str]] = {}
    for j in desc.joints:
        children.setdefault(j.parent, []).append(j.child)
    seen, stack = set(), [desc.root]
    while stack:
        link = stack.pop()
        if link in seen:
            raise _fail(path, f"link {link!r} is reached twice (cycle)")
        seen.add(link)
        stack.extend(children.get(link, []))
    if len(seen) != len(desc.links):
        raise _fail(path, f"links not connected to the root {desc.root!r}: {sorted(set(desc.links) - seen)}")


def require_spheres(desc: RobotDescription) -> None:
    """Refuse collision geometry other than spheres, saying how to get spheres."""
    bad = {name: link.other_geometry for name, link in desc.links.items() if link.other_geometry}
    if bad:
        listing = ", ".join(f"{k} ({', '.join(sorted(set(v)))})" for k, v in sorted(bad.items()))
        raise ValueError(
            f"{desc.urdf_path or desc.name}: collision geometry must be spheres, but these links collide through "
            f"other shapes: {listing}. Use a spherized URDF (every <collision> a <sphere>), e.g. the ones shipped "
            f"with simdplan.robots.load(), or let Robot.from_urdf(..., spherize=True) cover them with spheres "
            f"(or run `simdplan spherize`).")


def read_srdf(path: str | os.PathLike, link_names) -> set[frozenset]:
    """The link pairs an SRDF's ``<disable_collisions>`` switch off (unknown links are warned about)."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"SRDF file not found: {path}")
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise _fail(path, f"not well-formed XML ({exc})") from None
    if root.tag != "robot":
        raise _fail(path, f"root element is <{root.tag}>, expected <robot>")
    pairs: set[frozenset] = set()
    unknown: set[str] = set()
    for e in root.iter("disable_collisions"):
        a, b = e.get("link1"), e.get("link2")
        if not a or not b:
            raise _fail(path, "<disable_collisions> needs link1 and link2 attributes")
        for name in (a, b):
            if name not in link_names:
                unknown.add(name)
        pairs.add(frozenset((a, b)))
    if unknown:
        warnings.warn(f"{path}: disable_collisions names links not in the URDF (ignored): {sorted(unknown)}",
                      stacklevel=3)
    return pairs
