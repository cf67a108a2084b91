"""``simdplan info``: the SIMD level in use and the build (simdplan.info())."""

from __future__ import annotations

import json

from simdplan.cli.output import print_summary


def cmd_info(args) -> int:
    import simdplan
    from simdplan._runtime import cpu_model

    info = simdplan.info()
    if args.json:
        print(json.dumps({**info, "cpu_model": cpu_model()}, indent=1))
        return 0
    rows = [(k, ", ".join(map(str, v)) if isinstance(v, list) else str(v)) for k, v in info.items()]
    print_summary("simdplan.info()", rows)
    return 0
