"""What every ``simdplan`` command shares for its output: UserError, the one-line messages on
stderr, number formats, summaries and tables (rich on a terminal, plain text otherwise), the
progress bar and the checks of files a command will write."""

from __future__ import annotations

import json
import math
import os
import sys

import numpy as np



class UserError(Exception):
    """A problem with the user's input: one line on stderr, exit code ``code``, no traceback."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.message = one_line(message)
        self.code = code


def one_line(text) -> str:
    parts = [p.strip() for p in str(text).splitlines() if p.strip()]
    return "; ".join(parts) if parts else str(text)


def err(message: str) -> None:
    print(f"simdplan: {message}", file=sys.stderr, flush=True)


def _stdout_is_tty() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def _stderr_is_tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _have_rich() -> bool:
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def _use_rich() -> bool:
    return _stdout_is_tty() and _have_rich()


def _jsonable(v):
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.ndarray):
        return _jsonable(v.tolist())
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


# ----------------------------------------------------------------------------- files a command writes
def check_output(flag: str, out: str, extensions: tuple[str, ...] = ()) -> None:
    """A file a command will write, checked before any work: one of ``extensions`` (if given), in a
    folder that exists, and not a folder itself."""
    if extensions and os.path.splitext(out)[1].lower() not in extensions:
        raise UserError(f"{flag} {out}: use a {' or '.join(extensions)} file name")
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        raise UserError(f"{flag} {out}: directory {parent} does not exist")
    if os.path.isdir(out):
        raise UserError(f"{flag} {out}: is a directory")


def write_json(path: str, doc: dict) -> None:
    """A benchmark's --json file (records and summary), or a UserError naming the path."""
    try:
        with open(path, "w") as f:
            json.dump(_jsonable(doc), f, indent=1)
    except OSError as exc:
        raise UserError(f"--json {path}: {exc.strerror or exc}") from exc
    print(f"records: {path}")


# ----------------------------------------------------------------------------- summaries and tables
def print_summary(title: str, rows: list[tuple[str, str]]) -> None:
    if _use_rich():
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        t = Table(title=title, title_justify="left", show_header=False, box=None, padding=(0, 2))
        t.add_column(style="bold")
        t.add_column()
        for k, v in rows:
            style = ""
            if k == "success":
                style = "green" if v == "yes" else "red"
            elif k == "verified" and not v.startswith("yes"):
                style = "red"
            t.add_row(escape(k), f"[{style}]{escape(v)}[/{style}]" if style else escape(v))
        Console(file=sys.stdout).print(t)
    else:
        width = max(len(k) for k, _ in rows)
        for k, v in rows:
            print(f"{k + ':':<{width + 1}} {v}")
        sys.stdout.flush()


def print_table(title: str, header: list[tuple[str, str]], rows: list[list[str]], sections: set[int]) -> None:
    """rows[i] for i in sections start a new section (a rule above them). header: (name, justify); a
    newline splits a name over lines in the rich table."""
    if _use_rich():
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        from rich import box

        t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
        for k, (name, justify) in enumerate(header):
            t.add_column(escape(name), justify=justify, no_wrap=k < 2)
        for i, row in enumerate(rows):
            if i in sections:
                t.add_section()
            t.add_row(*(escape(c) for c in row), style="red" if len(row) > 2 and "FAIL" in row[2] else None)
        Console(file=sys.stdout).print(t)
        return
    header = [(" ".join(h.split()).replace("/ ", "/"), j) for h, j in header]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, (h, _) in enumerate(header)]

    def line(cells):
        return "  ".join(c.ljust(w) if j == "left" else c.rjust(w) for c, w, (_, j) in zip(cells, widths, header))

    print(title)
    print(line([h for h, _ in header]))
    rule = "  ".join("-" * w for w in widths)
    print(rule)
    for i, row in enumerate(rows):
        if i in sections:
            print(rule)
        print(line(row))
    sys.stdout.flush()


def print_report(blocks) -> None:
    """A benchmark report (simdplan.bench): its tables printed as tables, its notes as lines."""
    for block in blocks:
        if isinstance(block, str):
            print(block)
        else:
            print_table(block.title, block.header, block.rows, block.sections)
    sys.stdout.flush()


class Progress:
    """A rich progress bar on stderr when it is a terminal; nothing otherwise."""

    def __init__(self, total: int):
        self.bar = None
        if _stderr_is_tty() and _have_rich():
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn)

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), TimeRemainingColumn(), console=Console(file=sys.stderr),
                                transient=True)
            self.task = self.bar.add_task("planning", total=total)

    def __enter__(self):
        if self.bar:
            self.bar.start()
        return self

    def advance(self, description: str) -> None:
        if self.bar:
            self.bar.update(self.task, advance=1, description=description)

    def __exit__(self, *exc):
        if self.bar:
            self.bar.stop()
