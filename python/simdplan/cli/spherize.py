"""``simdplan spherize``: a URDF's collision geometry replaced by spheres, with a per-link table."""

from __future__ import annotations

import math
import os

from simdplan.cli.output import UserError, check_output, print_table


def cmd_spherize(args) -> int:
    """Replace a URDF's collision geometry by spheres (simdplan.robots.spherize); a per-link table."""
    src, out = args.urdf, args.out
    if not os.path.exists(src):
        raise UserError(f"{src}: no such file")
    if os.path.isdir(src):
        raise UserError(f"{src}: is a directory, not a URDF file")
    if args.max_spheres_per_link < 1:
        raise UserError(f"--max-spheres-per-link must be >= 1, got {args.max_spheres_per_link}")
    if not (math.isfinite(args.tolerance) and args.tolerance > 0):
        raise UserError(f"--tolerance must be > 0 (metres), got {args.tolerance}")
    check_output("-o", out)
    if os.path.exists(out) and os.path.samefile(src, out):
        raise UserError(f"-o {out}: is the input URDF; write the spherized copy elsewhere")
    from simdplan.robots.spherize_urdf import spherize_urdf  # lazy: trimesh is slow to import

    try:
        reports = spherize_urdf(src, out, max_spheres_per_link=args.max_spheres_per_link, tolerance=args.tolerance)
    except (FileNotFoundError, ValueError) as exc:
        raise UserError(str(exc)) from exc
    except OSError as exc:
        raise UserError(f"-o {out}: {exc.strerror or exc}") from exc
    header = [("link", "left"), ("spheres", "right"), ("max protrusion mm", "right"), ("bound mm", "right"),
              ("volume overhead", "right"), ("coverage", "right"), ("inside of", "left"), ("time s", "right")]
    rows = [[name, str(r["n_spheres"]), f"{r['max_protrusion'] * 1000:.1f}", f"{r['protrusion_bound'] * 1000:.1f}",
             "-" if r["volume_overhead"] is None else f"{r['volume_overhead']:.2f}x", f"{r['coverage']:.3f}",
             r["proxy"].replace("convex_hull", "hull (open mesh)"), f"{r['seconds']:.2f}"]
            for name, r in reports.items()]
    print_table(f"{out}: collision spheres for {len(rows)} links (tolerance {args.tolerance * 1000:g} mm, "
                 f"at most {args.max_spheres_per_link} spheres per link)", header, rows, set())
    total = sum(r["n_spheres"] for r in reports.values())
    print(f"{total} spheres. Protrusion: measured on the sphere surfaces, and its certified bound; volume "
          f"overhead: union of the spheres / link volume, a Monte Carlo estimate; coverage: mesh vertices and "
          f"surface samples inside the spheres; inside of: what protrusion and volume are measured against.")
    return 0
