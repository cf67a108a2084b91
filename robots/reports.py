"""What a robot's checks report: why a configuration is invalid (Violation), a certified Link's
verdict (MotionCertificate), and clearances with witness points (Proximity, DistanceReport).
Units: metres; points in the world frame."""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class Violation:
    """One reason a configuration is invalid.

    kind: "joint_limit" (joint, value, limits), "environment" (link, sphere, obstacle) or
    "self" (link, sphere, other_link, other_sphere). depth: penetration in metres.
    """

    kind: str
    link: str | None = None
    sphere: int | None = None
    other_link: str | None = None
    other_sphere: int | None = None
    obstacle_id: int | None = None
    obstacle_name: str | None = None
    obstacle_kind: str | None = None
    depth: float = 0.0
    joint: str | None = None
    value: float | None = None
    limits: tuple | None = None

    def __str__(self) -> str:
        if self.kind == "joint_limit":
            lo, hi = self.limits
            by = lo - self.value if self.value < lo else self.value - hi
            # NOTE: repr (shortest round trip) so a value just past a limit never prints equal to it
            return f"joint {self.joint} = {self.value!r} is outside its limits [{lo!r}, {hi!r}] by {by:.3g}"
        if self.kind == "environment":
            return (f"link {self.link} (sphere {self.sphere}) penetrates {self.obstacle_kind} "
                    f"{self.obstacle_name!r} (id {self.obstacle_id}) by {self.depth * 1000:.3g} mm")
        return (f"link {self.link} (sphere {self.sphere}) penetrates link {self.other_link} "
                f"(sphere {self.other_sphere}) by {self.depth * 1000:.3g} mm")


@dataclasses.dataclass(frozen=True)
class MotionCertificate:
    """Outcome of a certified Link check (``Robot.certify_motion``).

    status: "free" (the whole segment is proven collision-free), "collision" (a configuration on
    it collides, or an end is outside the joint limits) or "undecided" (a stretch shorter than
    min_step could not be certified: in collision or too close to call). samples: configurations
    whose clearance was evaluated. t: where on the segment (0..1) the collision or the undecided
    stretch was found (1 when free).
    """

    status: str
    samples: int
    t: float

    @property
    def free(self) -> bool:
        return self.status == "free"


CERT_STATUS = {0: "free", 1: "collision", 2: "undecided"}


@dataclasses.dataclass(frozen=True)
class Proximity:
    """The closest approach of one robot link to an obstacle (or to another link).

    clearance: signed distance in metres between the sphere (radius + padding) and the obstacle
    (negative: penetration depth). on_robot: the sphere's point nearest the obstacle (deepest into
    it when penetrating); on_other: the obstacle's surface point nearest the sphere centre (or the
    other sphere's point). World frame, (3,) float64 (computed from float32 geometry).
    """

    link: str
    sphere: int
    clearance: float
    on_robot: np.ndarray
    on_other: np.ndarray
    obstacle_id: int | None = None
    obstacle_name: str | None = None
    obstacle_kind: str | None = None
    other_link: str | None = None
    other_sphere: int | None = None

    def swapped(self) -> "Proximity":
        """The same self-collision approach seen from the other link."""
        return dataclasses.replace(self, link=self.other_link, sphere=self.other_sphere, on_robot=self.on_other,
                                   on_other=self.on_robot, other_link=self.link, other_sphere=self.sphere)

    def __str__(self) -> str:
        what = (f"{self.obstacle_kind} {self.obstacle_name!r}" if self.other_link is None
                else f"link {self.other_link}")
        return f"link {self.link} (sphere {self.sphere}) to {what}: {self.clearance * 1000:.3f} mm"


@dataclasses.dataclass(frozen=True)
class DistanceReport:
    """``Robot.distance_report``: ``closest`` (the overall closest approach, None if nothing to
    measure), ``environment`` (link -> its closest obstacle) and ``self_collision`` (link -> its
    closest link among the checked self-collision pairs)."""

    closest: Proximity | None
    environment: dict
    self_collision: dict

    @property
    def clearance(self) -> float:
        return self.closest.clearance if self.closest is not None else float("inf")
