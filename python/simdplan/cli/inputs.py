"""The user's inputs every command shares: SCENE (a file or a shipped example), planner settings
given as flags over the scene's own, and where many plans run (--workers, --ray)."""

from __future__ import annotations

import dataclasses
import os

from simdplan.cli.output import UserError, err


def _settings_fields(settings) -> dict:
    if settings is None:
        from simdplan.planner.settings import PlannerSettings

        settings = PlannerSettings()
    if dataclasses.is_dataclass(settings):
        return dataclasses.asdict(settings)
    return dict(settings)


def apply_overrides(settings, overrides: dict):
    """The scene's settings with the flags given (None = not given); validated, or UserError."""
    from simdplan.planner.settings import PlannerSettings

    fields = _settings_fields(settings)
    fields.update({k: v for k, v in overrides.items() if v is not None})
    known = {f.name for f in dataclasses.fields(PlannerSettings)}
    try:
        s = PlannerSettings(**{k: v for k, v in fields.items() if k in known})
        checked = s.validated()
    except ValueError as exc:
        raise UserError(f"invalid planner settings: {exc}") from exc
    return s, checked


def resolve_scene(arg: str) -> str:
    """The scene file SCENE names: an existing file, else a shipped example (by name or file name)."""
    from simdplan import scenes

    if os.path.isfile(arg):
        return arg
    if os.path.isdir(arg):
        raise UserError(f"{arg}: is a directory, not a scene file")
    looks_like_path = os.path.sep in arg or (os.path.altsep and os.path.altsep in arg)
    if not looks_like_path:
        try:
            return scenes.example(arg)
        except ValueError:
            pass
    if looks_like_path or os.path.splitext(arg)[1]:
        raise UserError(f"{arg}: no such file")
    names = ", ".join(scenes.examples()) or "none"
    raise UserError(f"{arg}: no such file or shipped example scene (examples: {names})")


def load_scene(path: str):
    """simdplan.scenes.load(path), with user errors as UserError."""
    from simdplan import scenes

    try:
        return scenes.load(path)
    except OSError as exc:
        what = exc.strerror or str(exc)
        raise UserError(f"{exc.filename or path}: {what}") from exc
    except (ValueError, KeyError, TypeError) as exc:
        # ValueError: the loader's validation (names the file and key); KeyError/TypeError: a
        # malformed document the loader did not catch itself.
        msg = str(exc) if not isinstance(exc, KeyError) else f"missing key {exc}"
        if isinstance(exc, TypeError):
            msg = f"malformed scene ({exc})"
        raise UserError(msg if path in msg or os.path.basename(path) in msg else f"{path}: {msg}") from exc
    except Exception as exc:  # a parser's own error class (e.g. yaml.YAMLError) is a user error too
        if type(exc).__module__.split(".")[0] in ("yaml", "json"):
            raise UserError(f"{path}: cannot parse: {exc}") from exc
        raise


def plan_many_for(args, tasks: list, interrupted, **kwargs) -> list:
    """simdplan.plan_many(tasks, **kwargs) on the threads or Ray cluster ``args.workers`` and
    ``args.ray`` ask for ("local": a Ray instance started here). ``interrupted()`` words what a
    Ctrl-C leaves behind (printed before the interrupt propagates)."""
    import simdplan

    ray = {} if args.ray is None else {"backend": "ray", "address": None if args.ray == "local" else args.ray}
    try:
        return simdplan.plan_many(tasks, workers=args.workers, **ray, **kwargs)
    except ImportError as exc:  # --ray without Ray installed
        raise UserError(f"--ray: {exc}") from exc
    except simdplan.planner.PlanManyInterrupted:
        err(interrupted())
        raise


def robot_from_arg(spec: str, srdf: str | None, flag: str = "--robot"):
    """(Robot, its entry in scene records) from a benchmark robot name or a URDF path; UserError if
    neither, or if ``srdf`` (--srdf) is not a file or comes with a robot name (which brings its own)."""
    from simdplan import Robot
    from simdplan.bench import robots as bench_robots

    if srdf is not None and not os.path.isfile(srdf):
        raise UserError(f"--srdf {srdf}: no such file")
    if spec in bench_robots.NAMES:
        if srdf is not None:
            raise UserError(f"--srdf goes with a URDF file; the robot {spec} brings its own")
        try:
            return bench_robots.load(spec), spec
        except ImportError as exc:  # the iiwa comes from pybullet_data
            raise UserError(f"{flag} {spec}: {exc}") from exc
    if not os.path.isfile(spec):
        raise UserError(f"{flag} {spec}: not a robot name ({', '.join(bench_robots.NAMES)}) nor a URDF file")
    try:
        robot = Robot.from_urdf(spec, srdf)
    except (OSError, ValueError) as exc:
        raise UserError(f"{flag} {spec}: {exc}") from exc
    entry = {"urdf": os.path.abspath(spec)} | ({"srdf": os.path.abspath(srdf)} if srdf else {})
    return robot, entry
