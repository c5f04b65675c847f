"""The repository's own code that calls its entries: its drivers, found with `ast` and ranked by how directly
they reach the entries a build wants to observe.

A repository shows how its code is called: its tests (with their pytest fixtures), its examples and scripts, its
notebooks and the code blocks of its README. Each is a *driver*: something that can be run as a whole (a pytest
node id, a script, a notebook, a README block) and that calls entries, directly or through the repository's own
functions. Running drivers in the sandbox and recording their calls is how entries are observed rather than guessed
(`docs/research-code.md`); this module only finds them and says what each reaches, so that the cheapest driver
that reaches a wanted entry runs first and one budget covers all of a repository's drivers.

Reach is read from names, as the call-site scan reads them: a call `f(...)` or `mod.f(...)` may mean any
function or class of the repository named `f` (import aliases undone), `obj.m(...)` any method named `m`, and a class's name
its constructor. Entries are functions and classes: a class is reached where it is constructed, or where one of
its methods is called on what a fixture or helper built. Each repository function's own calls are read once, and what a name reaches is computed once
per name, to at most `MAX_HOPS` calls deep and `MAX_REACH` names wide, so the cost stays near-linear in the
repository however its tests and helpers call one another. The files are read through `callsites.read_units`
(the checkout guard, its caps and the analysis budget).
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from paperproof.catalogue.budget import Budget
from paperproof.catalogue.callsites import Unit, read_units
from paperproof.catalogue.entry import Entry

MAX_HOPS = 3  # calls from a driver to an entry: a test calling a helper calling a helper calling the entry
MAX_REACH = 256  # names one name's reach may hold
MAX_DRIVERS = 2000  # per repository, in the order the files were read
MAX_SETUP = 16  # earlier README blocks run before one
EXAMPLE_FOLDERS = frozenset({"examples", "example", "demo", "demos", "tutorial", "tutorials", "notebooks"})

DriverKind = Literal["test", "example", "script", "notebook", "readme"]
KIND_ORDER: dict[str, int] = {"test": 0, "example": 1, "readme": 2, "notebook": 3, "script": 4}


class Driver(BaseModel):
    """One runnable piece of the repository's own code, and the entries it reaches."""

    kind: DriverKind
    target: str  # what runs: `tests/test_x.py::TestY::test_z`, `examples/run.py`, `demo.ipynb`, `README.md#block-2`
    path: str  # its file
    line: int  # where it starts in that file (a notebook's or a README block's: 1)
    cost: int  # statements it runs directly, its fixtures' included: a proxy for its time before it is measured
    fixtures: list[str] = Field(default_factory=list)  # a test's pytest fixtures, by name
    reaches: dict[str, int] = Field(default_factory=dict)  # `path::qualname` of an entry -> calls deep (1: direct)
    code: str | None = None  # a notebook's code cells joined, or a README block: what runs (a file runs as it is)
    # A README block's earlier blocks, run before it in the same namespace as a reader pastes them one after another
    # (each one's failure passed over: READMEs hold shell lines and sketches): what defines the names it uses.
    setup: list[str] = Field(default_factory=list, max_length=MAX_SETUP)

    def nearest(self, wanted: Iterable[str]) -> int | None:
        """Calls deep to the nearest of `wanted` (entry keys) this driver reaches, or None."""
        hops = [self.reaches[key] for key in wanted if key in self.reaches]
        return min(hops) if hops else None


def find_drivers(root: Path, entries: Sequence[Entry], wanted: Iterable[str] | None = None,
                 skipped: list[tuple[str, str]] | None = None, budget: Budget | None = None) -> list[Driver]:
    """The drivers of the checkout at `root` that reach any of `entries`, ranked for `wanted` (entry keys
    `path::qualname`; every entry when None): those reaching a wanted entry first, the nearest and the cheapest
    first, then the rest. Files that cannot be read go to `skipped` as (path, reason)."""
    skipped = skipped if skipped is not None else []
    budget = Budget() if budget is None else budget
    units = read_units(root, {e.path for e in entries}, skipped, budget)
    graph = _Graph(entries)
    fixtures: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for unit in units:
        graph.add(unit)
        if unit.source == "test":
            fixtures.update(_fixtures(unit.tree))
    found: list[Driver] = []
    blocks: dict[str, list[str]] = {}  # a README's blocks read so far, in order
    for unit in units:
        earlier = blocks.setdefault(unit.file, []) if unit.source == "readme" else []
        if budget.over(unit.file):
            skipped.append((unit.file, "drivers not read: the repository's analysis budget was spent"))
            continue
        for draft in _drafts(unit, fixtures):
            if len(found) >= MAX_DRIVERS:
                skipped.append((unit.file, f"drivers past the first {MAX_DRIVERS} not kept"))
                break
            reaches = graph.reach(draft.calls)
            if reaches:
                found.append(Driver(kind=draft.kind, target=draft.target, path=unit.file, line=draft.line,
                                    cost=draft.cost, fixtures=draft.fixtures, reaches=reaches,
                                    code=unit.text if draft.kind in ("notebook", "readme") else None,
                                    setup=earlier[-MAX_SETUP:]))
        if unit.source == "readme":
            earlier.append(unit.text)
    keys = [f"{e.path}::{e.qualname}" for e in entries] if wanted is None else list(wanted)
    return sorted(found, key=lambda d: _rank(d, keys))


def _rank(driver: Driver, wanted: list[str]) -> tuple[int, int, int, int, str]:
    nearest = driver.nearest(wanted)
    reached = sum(1 for key in wanted if key in driver.reaches)
    return (MAX_HOPS + 1 if nearest is None else nearest, driver.cost // max(reached, 1),
            KIND_ORDER[driver.kind], -reached, driver.target)


@dataclass
class _Draft:
    kind: DriverKind
    target: str
    line: int
    cost: int
    calls: set[str] = field(default_factory=set)
    fixtures: list[str] = field(default_factory=list)


def _drafts(unit: Unit, fixtures: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]) -> list[_Draft]:
    """The drivers a unit holds: a test file's test functions and methods, a script's or example's top level, a
    notebook, a README block. A module of entries is no driver."""
    aliases = _aliases(unit.tree)
    if unit.source == "test":
        if unit.file.rpartition("/")[2] == "conftest.py":
            return []
        return [_test(unit, node, owner, aliases, fixtures) for node, owner in _tests(unit.tree)]
    if unit.source == "notebook":
        return [_whole(unit, "notebook", unit.file, aliases)]
    if unit.source == "readme":
        return [_whole(unit, "readme", unit.where(1)[0], aliases)]
    if unit.source == "script":
        folders = set(unit.file.split("/")[:-1])
        return [_whole(unit, "example" if folders & EXAMPLE_FOLDERS else "script", unit.file, aliases)]
    return []


def _tests(tree: ast.Module) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.ClassDef | None]]:
    """pytest's default collection: `test*` functions, and `test*` methods of `Test*` classes without `__init__`."""
    out: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.ClassDef | None]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
            out.append((node, None))
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test") and not any(
                isinstance(n, ast.FunctionDef) and n.name == "__init__" for n in node.body):
            out.extend((n, node) for n in node.body
                       if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test"))
    return out


def _test(unit: Unit, node: ast.FunctionDef | ast.AsyncFunctionDef, owner: ast.ClassDef | None,
          aliases: dict[str, str], fixtures: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]) -> _Draft:
    target = f"{unit.file}::{owner.name}::{node.name}" if owner else f"{unit.file}::{node.name}"
    local = {**fixtures, **_fixtures(unit.tree)}  # the file's own fixtures shadow conftest's
    used: list[str] = []
    pending = [a.arg for a in node.args.args + node.args.kwonlyargs if a.arg != "self"]
    bodies: list[ast.AST] = [node]
    while pending:  # fixtures ask for fixtures
        name = pending.pop(0)
        if name in used or name not in local:
            continue
        used.append(name)
        bodies.append(local[name])
        pending.extend(a.arg for a in local[name].args.args if a.arg not in used)
    draft = _Draft("test", target, node.lineno, 0, fixtures=used)
    for body in bodies:
        _read_calls(body, aliases, draft)
    return draft


def _whole(unit: Unit, kind: DriverKind, target: str, aliases: dict[str, str]) -> _Draft:
    """A unit run top to bottom: its top-level statements (a `__main__` block included), not its definitions,
    whose calls count when the top level calls them."""
    draft = _Draft(kind, target, 1, 0)
    for stmt in unit.tree.body:
        if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Import | ast.ImportFrom):
            _read_calls(stmt, aliases, draft)
    return draft


def _read_calls(node: ast.AST, aliases: dict[str, str], draft: _Draft) -> None:
    for child in ast.walk(node):
        if isinstance(child, ast.stmt):
            draft.cost += 1
        elif isinstance(child, ast.Call):
            draft.calls.update(_reached(child, aliases))


def _reached(call: ast.Call, aliases: dict[str, str]) -> set[str]:
    """The names a call may run: what it calls, and the functions and classes it hands over to be called
    (`Problem(InfluenceModule, ...)`, `map(score, xs)`, `fit(callbacks=[DataMap])`): a driver that passes an entry
    along reaches it as surely as one that calls it."""
    names = {_called(call.func, aliases)}
    for value in [*call.args, *(k.value for k in call.keywords)]:
        for item in value.elts if isinstance(value, ast.List | ast.Tuple) else [value]:
            if isinstance(item, ast.Name | ast.Attribute):
                names.add(_called(item, aliases))
    return {name for name in names if name}


def _called(func: ast.expr, aliases: dict[str, str]) -> str | None:
    """The name a call may mean: `f()`, `mod.f()` and `obj.f()` -> f; an import alias is undone
    (`from m import name as g; g()` -> name)."""
    if isinstance(func, ast.Name):
        return aliases.get(func.id, func.id)
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _aliases(tree: ast.Module) -> dict[str, str]:
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            out.update({a.asname: a.name for a in node.names if a.asname})
    return out


def _fixtures(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """The pytest fixtures a file defines at its top level, by the name tests ask for them by."""
    out: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for deco in node.decorator_list:
            call = deco if isinstance(deco, ast.Call) else None
            func = call.func if call else deco
            if (isinstance(func, ast.Attribute) and func.attr == "fixture") or (
                    isinstance(func, ast.Name) and func.id == "fixture"):
                named = next((k.value.value for k in call.keywords if k.arg == "name"
                              and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)), None) \
                    if call else None
                out[named or node.name] = node
    return out


class _Graph:
    """The repository's functions, classes and methods by name, each with the names it calls; and what a name
    reaches. A class's name stands for its constructor (`__init__`), a method by its bare name (`obj.fit()` may
    mean the `fit` of any class), as the call-site scan reads names."""

    def __init__(self, entries: Sequence[Entry]) -> None:
        self.entries: dict[str, list[str]] = {}  # a function's or class's name -> entry keys
        for e in entries:
            if e.kind != "method":
                self.entries.setdefault(e.name, []).append(f"{e.path}::{e.qualname}")
        self.calls: dict[str, set[str]] = {}  # a name -> the names its definitions call
        self._reach: dict[str, dict[str, int]] = {}

    def add(self, unit: Unit) -> None:
        aliases = _aliases(unit.tree)
        for node in unit.tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self._calls(node.name, node, aliases)
            elif isinstance(node, ast.ClassDef):
                self.calls.setdefault(node.name, set())
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        self._calls(node.name if item.name == "__init__" else item.name, item, aliases)

    def _calls(self, name: str, node: ast.AST, aliases: dict[str, str]) -> None:
        calls = self.calls.setdefault(name, set())
        for child in ast.walk(node):
            if isinstance(child, ast.Call):
                calls.update(_reached(child, aliases) - {name})

    def reach(self, calls: set[str]) -> dict[str, int]:
        """Entry key -> calls deep, for a driver calling `calls` by name."""
        names: dict[str, int] = {}
        for name in sorted(calls):
            names[name] = 1
            for far, hops in self._names(name).items():
                if hops + 1 <= MAX_HOPS and names.get(far, MAX_HOPS + 1) > hops + 1:
                    names[far] = hops + 1
        return {key: hops for name, hops in sorted(names.items()) for key in self.entries.get(name, ())}

    def _names(self, start: str) -> dict[str, int]:
        """The names `start` calls, and theirs, to `MAX_HOPS - 1` deep and `MAX_REACH` wide; once per name."""
        known = self._reach.get(start)
        if known is not None:
            return known
        seen: dict[str, int] = {}
        queue = deque([(start, 0)])
        while queue and len(seen) < MAX_REACH:
            name, depth = queue.popleft()
            if depth >= MAX_HOPS - 1:
                continue
            for called in sorted(self.calls.get(name, ())):
                if called not in seen and called != start:
                    seen[called] = depth + 1
                    queue.append((called, depth + 1))
        self._reach[start] = seen
        return seen
