"""Spherizing a URDF: every link's collision geometry (meshes and primitives) replaced by spheres
from simdplan.robots.spherize.spherize_mesh, written as a new URDF (mesh paths rewritten), and a
disk cache of spherized URDFs keyed by the URDF text, the mesh bytes and the parameters."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
import xml.etree.ElementTree as ET

import numpy as np

from simdplan.robots.description import read_urdf, resolve_mesh_path
from simdplan.robots.spherize import (ALGORITHM_VERSION, DEFAULT_MAX_SPHERES, DEFAULT_SAMPLES, DEFAULT_TOLERANCE,
                                     spherize_mesh, union_volume)


# ----------------------------------------------------------------------------- URDF
def _origin(elem) -> np.ndarray:
    """The (4, 4) pose of an element's <origin> (identity if absent). URDF rpy: fixed-axis roll,
    pitch, yaw, i.e. R = Rz(yaw) Ry(pitch) Rx(roll)."""
    from scipy.spatial.transform import Rotation

    T = np.eye(4)
    o = elem.find("origin")
    if o is not None:
        xyz = [float(x) for x in (o.get("xyz") or "0 0 0").split()]
        rpy = [float(x) for x in (o.get("rpy") or "0 0 0").split()]
        if len(xyz) != 3 or len(rpy) != 3 or not np.all(np.isfinite(xyz + rpy)):
            raise ValueError(f"bad <origin xyz={o.get('xyz')!r} rpy={o.get('rpy')!r}>")
        T[:3, :3] = Rotation.from_euler("xyz", rpy).as_matrix()
        T[:3, 3] = xyz
    return T


def _floats(text, counts: tuple, what: str) -> list:
    """Positive finite numbers from an attribute; a single value stands for all when 1 is allowed."""
    try:
        vals = [float(x) for x in (text or "").split()]
    except ValueError:
        vals = []
    if len(vals) not in counts or not np.all(np.isfinite(vals)) or min(vals) <= 0:
        raise ValueError(f"bad {what} {text!r} (expected {' or '.join(map(str, counts))} positive numbers)")
    return vals * max(counts) if len(vals) == 1 else vals


def _collision_mesh(geom, urdf_dir: str):
    """The trimesh of one <collision>'s <geometry> in the collision element's frame, None for a
    sphere (kept exact), or ValueError."""
    import trimesh

    kids = [k for k in geom if isinstance(k.tag, str)]
    if not kids:
        raise ValueError("empty <geometry>")
    g = kids[0]
    if g.tag == "sphere":
        return None
    if g.tag == "box":
        return trimesh.creation.box(extents=_floats(g.get("size"), (3,), "box size"))
    if g.tag == "cylinder":
        r = _floats(g.get("radius"), (1,), "cylinder radius")[0]
        length = _floats(g.get("length"), (1,), "cylinder length")[0]
        return trimesh.creation.cylinder(radius=r, height=length, sections=32)
    if g.tag == "capsule":
        r = _floats(g.get("radius"), (1,), "capsule radius")[0]
        length = _floats(g.get("length"), (1,), "capsule length")[0]
        return trimesh.creation.capsule(height=length, radius=r, count=[16, 16])
    if g.tag == "mesh":
        filename = g.get("filename")
        if not filename:
            raise ValueError("<mesh> without a filename")
        path = resolve_mesh_path(filename, urdf_dir)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"collision mesh {filename!r} not found (looked for {path})")
        try:
            m = trimesh.load(path, force="mesh")
        except Exception as exc:  # trimesh raises assorted types on unreadable files
            raise ValueError(f"cannot read collision mesh {path}: {exc}") from None
        if not isinstance(m, trimesh.Trimesh) or len(m.vertices) == 0:
            raise ValueError(f"collision mesh {path} has no geometry")
        if g.get("scale") is not None:
            m.apply_scale(_floats(g.get("scale"), (1, 3), "mesh scale"))
        return m
    raise ValueError(f"unsupported collision geometry <{g.tag}>")


def _sphere_of(geom) -> float:
    s = next(k for k in geom if isinstance(k.tag, str))
    return _floats(s.get("radius"), (1,), "sphere radius")[0]


def _rewrite_mesh_paths(root, src_dir: str, out_dir: str, absolute: bool) -> None:
    """Point every <mesh filename> (visuals) at the same file from the new URDF's folder."""
    for m in root.iter("mesh"):
        name = m.get("filename")
        if not name:
            continue
        path = resolve_mesh_path(name, src_dir)
        # NOTE: relative only when both live under one folder below the root (a URDF copied with
        # its meshes keeps working); /tmp/x.urdf -> ../../work/... would break on any move.
        if not absolute and os.path.dirname(os.path.commonpath([path, out_dir])) not in ("", os.sep):
            try:
                path = os.path.relpath(path, out_dir)
            except ValueError:  # another drive (Windows): only an absolute path works
                pass
        m.set("filename", path)


def _fmt(x: float) -> str:
    return f"{x:.6f}".rstrip("0").rstrip(".") if x != 0 else "0"


def spherize_urdf(urdf_path, out_path, max_spheres_per_link: int = DEFAULT_MAX_SPHERES,
                  tolerance: float = DEFAULT_TOLERANCE, samples: int = DEFAULT_SAMPLES,
                  absolute_mesh_paths: bool = False) -> dict:
    """Write ``out_path``: ``urdf_path`` with every link's collision geometry replaced by spheres.

    Mesh, box, cylinder and capsule collisions are covered with ``spherize_mesh`` (in the link
    frame: the element's <origin> and mesh ``scale`` applied); sphere collisions are kept as they
    are. A link with several collision elements shares ``max_spheres_per_link`` among them by
    surface area (at least one each). Everything else (visuals, inertials, joints, limits, mimic
    tags, comments) is kept; visual mesh paths are rewritten so they still resolve from the new
    file's folder (relative, or absolute with ``absolute_mesh_paths``). The result loads with
    ``simdplan.robots.Robot.from_urdf``.

    Returns {link name: report dict} for the links that had collision geometry: ``n_spheres``,
    ``max_protrusion`` and ``protrusion_bound`` (metres, worst element), ``volume_overhead`` (union
    of the link's spheres / sum of its elements' volumes, Monte Carlo; None without volume),
    ``coverage``, ``tolerance_used``, ``budget_exceeded``, ``seconds``, ``elements``.
    Raises FileNotFoundError (URDF or mesh missing), ValueError (malformed URDF or geometry, no
    collision geometry at all), OSError (output not writable).
    """
    urdf_path, out_path = os.fspath(urdf_path), os.fspath(out_path)
    read_urdf(urdf_path)  # validation: well-formed, one tree, supported joints
    src_dir = os.path.dirname(os.path.abspath(urdf_path))
    out_dir = os.path.dirname(os.path.abspath(out_path))
    tree = ET.parse(urdf_path, parser=ET.XMLParser(target=ET.TreeBuilder(insert_comments=True)))
    root = tree.getroot()
    reports: dict = {}
    for link in root.findall("link"):
        name = link.get("name")
        cols = link.findall("collision")
        if not cols:
            continue
        t0 = time.perf_counter()
        kept, meshes = [], []
        for col in cols:
            geom = col.find("geometry")
            if geom is None:
                continue
            try:
                T = _origin(col)
                m = _collision_mesh(geom, src_dir)
                if m is None:
                    kept.append([*T[:3, 3], _sphere_of(geom)])
                else:
                    meshes.append((m, T))
            except (ValueError, FileNotFoundError) as exc:
                raise type(exc)(f"{urdf_path}: link {name!r}: {exc}") from None
        spheres = [np.asarray(kept, dtype=float).reshape(-1, 4)]
        areas = np.array([max(float(m.area), 1e-12) for m, _ in meshes])
        budgets = np.maximum(1, np.floor(max_spheres_per_link * areas / areas.sum()).astype(int)) if len(meshes) else []
        sets = []
        for (m, T), k in zip(meshes, budgets):
            res = spherize_mesh(m, max_spheres=int(k), tolerance=tolerance, samples=samples)
            sets.append(res)
            c = res.spheres[:, :3] @ T[:3, :3].T + T[:3, 3]
            spheres.append(np.column_stack([c, res.spheres[:, 3]]))
        link_spheres = np.concatenate(spheres)
        volume = sum(s.proxy_volume for s in sets) + sum(4 / 3 * np.pi * r ** 3 for *_, r in kept)
        overhead = None
        if volume > 0 and len(link_spheres):
            overhead = union_volume(link_spheres)[0] / volume
        reports[name] = {
            "n_spheres": int(len(link_spheres)),
            "max_protrusion": max((s.max_protrusion for s in sets), default=0.0),
            "protrusion_bound": max((s.protrusion_bound for s in sets), default=0.0),
            "volume_overhead": overhead,
            "coverage": min((s.coverage for s in sets), default=1.0),
            "tolerance_used": max((s.tolerance_used for s in sets), default=tolerance),
            "budget_exceeded": any(s.budget_exceeded for s in sets),
            "proxy": ",".join(sorted({s.proxy for s in sets})) or "spheres",
            "elements": len(meshes) + len(kept),
            "seconds": time.perf_counter() - t0,
        }
        at = list(link).index(cols[0])
        for col in cols:
            link.remove(col)
        for i, (x, y, z, r) in enumerate(link_spheres):
            col = ET.Element("collision", {"name": f"{name}_sphere_{i}"})
            ET.SubElement(col, "origin", {"xyz": f"{_fmt(x)} {_fmt(y)} {_fmt(z)}", "rpy": "0 0 0"})
            ET.SubElement(ET.SubElement(col, "geometry"), "sphere", {"radius": _fmt(r)})
            link.insert(at + i, col)
    if not reports:
        raise ValueError(f"{urdf_path}: no link has collision geometry; nothing to spherize")
    _rewrite_mesh_paths(root, src_dir, out_dir, absolute_mesh_paths)
    root.insert(0, ET.Comment(f" collision spheres by simdplan spherize from {os.path.basename(urdf_path)}: "
                              f"max_spheres_per_link={max_spheres_per_link}, tolerance={tolerance} m "))
    ET.indent(tree, space="  ")
    # Write beside the target and rename, so a failure never leaves half a file.
    fd, tmp = tempfile.mkstemp(suffix=".urdf.tmp", dir=out_dir or ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            tree.write(fh, encoding="utf-8", xml_declaration=True)
        os.replace(tmp, out_path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return reports


def _cache_dir() -> str:
    return os.environ.get("SIMDPLAN_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "simdplan",
                                                                  "spherized")


def cached_spherized_urdf(urdf_path, **params) -> str:
    """The path of a spherized copy of ``urdf_path`` (parameters as for ``spherize_urdf``), made
    once and kept in ``$SIMDPLAN_CACHE_DIR`` or ``~/.cache/simdplan/spherized``. The key is the
    sha256 of the URDF's text and absolute folder, every mesh file it names, the parameters and
    the algorithm version, so editing any of them makes a new copy. Mesh paths in the copy are
    absolute. The reports are stored beside it as ``<key>.json``."""
    urdf_path = os.path.abspath(os.fspath(urdf_path))
    if not os.path.isfile(urdf_path):
        raise FileNotFoundError(f"URDF file not found: {urdf_path}")
    params.pop("absolute_mesh_paths", None)
    key = hashlib.sha256()
    key.update(json.dumps({"version": ALGORITHM_VERSION, "dir": os.path.dirname(urdf_path),
                           "params": sorted(params.items())}, default=str).encode())
    with open(urdf_path, "rb") as fh:
        text = fh.read()
    key.update(text)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ValueError(f"{urdf_path}: not well-formed XML ({exc})") from None
    for name in sorted({m.get("filename") for m in root.iter("mesh") if m.get("filename")}):
        path = resolve_mesh_path(name, os.path.dirname(urdf_path))
        key.update(path.encode())
        if os.path.isfile(path):
            with open(path, "rb") as fh:
                key.update(hashlib.sha256(fh.read()).digest())
    folder = _cache_dir()
    os.makedirs(folder, exist_ok=True)
    out = os.path.join(folder, key.hexdigest()[:32] + ".urdf")
    if not os.path.isfile(out):
        reports = spherize_urdf(urdf_path, out, absolute_mesh_paths=True, **params)
        with open(out[:-5] + ".json", "w") as fh:
            json.dump(reports, fh, indent=1)
    return out
