"""The shape of the source tree: one room per job (CONTRIBUTING.md, README's code overview).

Read from the sources (no import of the package): no module reads another module's private names;
collision/ sits below robots/ and planner/; no import cycle between modules; no file much over
600 lines without a reason written here.
"""

from __future__ import annotations

import ast
import os
from collections import defaultdict

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# where each folder lands in the installed package (pyproject.toml's wheel.packages)
PACKAGES = {"python/simdplan": "simdplan", "planner": "simdplan.planner", "collision": "simdplan.collision",
            "robots": "simdplan.robots", "scenes": "simdplan.scenes"}
# the package's own private modules: meant to be used by every other module of the package
SHARED_PRIVATE_MODULES = {"_core", "_runtime", "_format"}
# private attributes a module may touch on objects that are not its own, and why
ALLOWED_FOREIGN = {
    ("simdplan.planner.ompl", "_simdplan_keep"): "stores our callbacks on OMPL's setup so they outlive it",
}
# files over the size limit, and why they stay whole
LINE_LIMIT = 620
LONG_FILES = {
    "robots/robot.py": "one class, Robot: every method is a thin facade over one core call",
}
CPP_LONG_FILES: dict[str, str] = {}


def product_modules() -> dict[str, str]:
    """Dotted module name -> path, for every product Python file."""
    out = {}
    for folder, package in PACKAGES.items():
        base = os.path.join(ROOT, folder)
        for dirpath, _, files in os.walk(base):
            for f in files:
                if not f.endswith(".py"):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f), base)[:-3].replace(os.sep, ".")
                name = package if rel == "__init__" else f"{package}.{rel.removesuffix('.__init__')}"
                out[name] = os.path.join(dirpath, f)
    return out


MODULES = product_modules()


def parse(path: str) -> ast.Module:
    with open(path) as f:
        return ast.parse(f.read(), path)


def imported_modules(name: str, tree: ast.Module) -> set[str]:
    """Product modules ``name`` imports anywhere (top level or inside functions)."""
    package = name if MODULES[name].endswith("__init__.py") else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        for t in targets:
            while t and t not in MODULES:
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


def test_the_module_list_is_read():
    assert "simdplan.collision.environment" in MODULES and "simdplan.cli.plan" in MODULES


def test_no_module_reads_another_modules_private_names():
    bad = []
    for name, path in MODULES.items():
        tree = parse(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__") and a.name not in SHARED_PRIVATE_MODULES:
                        bad.append(f"{path}:{node.lineno}: imports {a.name}")
            elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                owner = node.value
                if isinstance(owner, ast.Name) and (owner.id in ("self", "cls") or owner.id in SHARED_PRIVATE_MODULES):
                    continue
                if node.attr in SHARED_PRIVATE_MODULES or (name, node.attr) in ALLOWED_FOREIGN:
                    continue
                bad.append(f"{path}:{node.lineno}: {ast.unparse(node)}")
    assert not bad, "private names read from outside their module:\n" + "\n".join(bad)


def test_collision_does_not_import_the_layers_above_it():
    above = ("simdplan.robots", "simdplan.planner", "simdplan.scenes", "simdplan.cli", "simdplan.bench")
    bad = [f"{name} imports {m}" for name in MODULES if name.startswith("simdplan.collision")
           for m in imported_modules(name, parse(MODULES[name])) if m.startswith(above)]
    assert not bad, bad


def test_no_import_cycle_between_modules():
    graph = {name: imported_modules(name, parse(path)) for name, path in MODULES.items()}
    # a package's __init__ re-exports its modules; an import of the package reaches them, not a cycle
    for name in graph:
        graph[name] = {m for m in graph[name] if not (MODULES[m].endswith("__init__.py") and name.startswith(m + "."))}
    state: dict[str, int] = defaultdict(int)  # 0 new, 1 on the stack, 2 done
    stack: list[str] = []
    cycles = []

    def visit(n: str) -> None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if state[m] == 1:
                cycles.append(stack[stack.index(m):] + [m])
            elif state[m] == 0:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if state[n] == 0:
            visit(n)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def line_count(path: str) -> int:
    with open(path) as f:
        return sum(1 for _ in f)


@pytest.mark.parametrize("kind", ["python", "cpp"])
def test_no_file_over_the_size_limit_without_a_reason(kind):
    if kind == "python":
        files = {os.path.relpath(p, ROOT): p for p in MODULES.values()}
        allowed = LONG_FILES
    else:
        files = {}
        for dirpath, _, names in os.walk(os.path.join(ROOT, "cpp")):
            for f in names:
                if f.endswith((".cc", ".hh")):
                    files[os.path.relpath(os.path.join(dirpath, f), ROOT)] = os.path.join(dirpath, f)
        allowed = CPP_LONG_FILES
    long = {rel for rel, p in files.items() if line_count(p) > LINE_LIMIT}
    assert long <= set(allowed), f"over {LINE_LIMIT} lines with no reason given here: {sorted(long - set(allowed))}"
    stale = [rel for rel in allowed if rel not in files or line_count(files[rel]) <= LINE_LIMIT]
    assert not stale, f"no longer long (drop them from the list): {stale}"
