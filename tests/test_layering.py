"""The package's imports run one way, catalogue ← fixtures ← runner ← verify ← build ← serve ← cli, with the
plumbing at the bottom, and no module imports itself back through a circle."""

from __future__ import annotations

import ast
from pathlib import Path

import paperproof

PACKAGE = Path(paperproof.__file__).parent
# Lower stages first: a module may import its own stage and any stage before it in this list.
STAGES = ["plumbing", "catalogue", "fixtures", "runner", "verify", "build", "serve", "cli"]


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _stage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in STAGES else None


def _imports(path: Path) -> set[str]:
    """Every paperproof module named in an import, at any depth (lazy imports in functions count)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("paperproof"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("paperproof"):
            # `from paperproof.fixtures import training` imports the module fixtures.training, not only the package
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _graph() -> dict[str, set[str]]:
    sources = [p for p in PACKAGE.rglob("*.py") if "snapshot" not in p.relative_to(PACKAGE).parts]
    modules = {_module_name(p): p for p in sources}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for target in _imports(path):
            # ``from paperproof.x import y`` may name module x.y or a name in x: keep the deepest module.
            while target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in modules and target != name:
                targets.add(target)
        graph[name] = targets
    return graph


def test_every_module_sits_in_a_stage():
    loose = [m for m in _graph() if m not in ("paperproof", "paperproof.__main__") and _stage(m) is None]
    assert loose == []


def test_imports_never_run_from_a_lower_stage_to_a_higher_one():
    backwards = []
    for module, targets in _graph().items():
        here = _stage(module)
        for target in targets:
            there = _stage(target)
            if here and there and STAGES.index(there) > STAGES.index(here):
                backwards.append(f"{module} → {target}")
    assert backwards == []


def test_there_are_no_import_circles():
    graph = _graph()
    circles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: finished

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                circles.append(path[path.index(target):] + [target] if target in path else [node, target])
            elif target not in state:
                visit(target, path + [target])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert circles == []


def test_the_walk_sees_the_core():
    graph = _graph()
    assert "paperproof.build.pipeline" in graph and graph["paperproof.build.pipeline"]
