"""``simdplan compile`` and ``simdplan cache``: build robots' specialized kernels ahead, list or clear them."""

from __future__ import annotations

import json
import time

from simdplan.cli.output import UserError, print_summary


def cmd_compile(args) -> int:
    from simdplan.cli.inputs import robot_from_arg

    robot, _ = robot_from_arg(args.robot, args.srdf, "ROBOT")
    t0 = time.perf_counter()
    info = robot.compile(wait=True)
    info["seconds"] = round(time.perf_counter() - t0, 3)
    if args.json:
        print(json.dumps(info, indent=1))
    else:
        rows = [("robot", robot.name), ("kernel", info["kernel"]), ("isa", info["isa"] or "-"),
                ("built in", f"{info['compile_seconds']:.2f} s" if info["compile_seconds"] is not None else
                 "(was cached)" if info["kernel"] == "specialized" else "-"),
                ("file", info["file"] or "-")]
        if info["reason"]:
            rows.append(("why generic", info["reason"]))
        print_summary("simdplan compile", rows)
    return 0 if info["kernel"] == "specialized" else 1


def cmd_cache(args) -> int:
    from simdplan.specialize import cache

    try:
        if args.action == "clear":
            n = cache.clear()
            print(f"removed {n} kernel{'s' if n != 1 else ''} from {cache.cache_dir(create=False)}")
            return 0
        entries = cache.entries()
    except cache.UnsafeCacheError as exc:
        raise UserError(str(exc)) from exc
    if args.json:
        print(json.dumps(entries, indent=1))
        return 0
    print(f"{cache.cache_dir(create=False)}: {len(entries)} kernel{'s' if len(entries) != 1 else ''}")
    for e in entries:
        built = f"{e['compile_seconds']:.1f} s" if "compile_seconds" in e else "?"
        print(f"  {e['key']}  {e.get('robot', '?'):<24} {e.get('isa', '?'):<7} {e['bytes'] / 1024:7.0f} KiB  "
              f"built in {built}")
    return 0
