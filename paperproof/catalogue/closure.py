"""An entry's closure, made when it is first read, from an index of its module built once.

The closure of one entry can be most of its module (a chain of helpers each calling the next), and its text keeps
the module's line numbers (blank lines stand for what was left out), so making every entry's closure at extraction
costs the module's size once per entry: quadratic, and 10 minutes on a module of 27,000 one-line functions. Only
the entries selected to run (a few per repository) need theirs; the rest never ask. So extraction indexes each
module once (`ModuleIndex`: what each top-level statement binds and reads, where it lies, what it imports) and
gives each entry a `Closure` that walks that index when asked, and only then. Selection reads one thing of every
closure, the hardness libraries it imports (`ModuleIndex.libraries`), and gets it for all entries in one pass.

The module hashes a closure may import (for the run cache's key) are found the same way, per repository
(`RepoModules`), when a selected entry's key is made.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

MAX_MODULE_PARTS = 34  # a module path below 32 folders of a checkout (`checkout.walk`'s cap) has no more parts


def segment(node: ast.stmt, lines: list[str]) -> tuple[int, int, str]:
    """The statement's first line (its first decorator's), last line and text."""
    decorators = getattr(node, "decorator_list", [])
    start = min([node.lineno, *(d.lineno for d in decorators)])
    end = node.end_lineno or node.lineno
    return start, end, "".join(lines[start - 1:end])


def bound_names(stmt: ast.stmt) -> set[str]:
    """Module-level names a top-level statement binds."""
    names: set[str] = set()
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        names.add(stmt.name)
    elif isinstance(stmt, ast.Import):
        names.update((a.asname or a.name.split(".")[0]) for a in stmt.names)
    elif isinstance(stmt, ast.ImportFrom):
        names.update((a.asname or a.name) for a in stmt.names)
    elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    elif isinstance(stmt, (ast.Try, ast.If, ast.With)) and not _is_main_guard(stmt):
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.stmt):
                names |= bound_names(child)
        for handler in getattr(stmt, "handlers", []):
            for child in handler.body:
                names |= bound_names(child)
    return names


def _is_main_guard(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.If) and "__main__" in ast.unparse(stmt.test)


def _receiver(func: ast.expr) -> str | None:
    """The module-level name a method call is made on (`parser` of `parser.add_argument`), or None."""
    if not isinstance(func, ast.Attribute):
        return None
    while isinstance(func, ast.Attribute):
        func = func.value
    return func.id if isinstance(func, ast.Name) else None


def imported_module(stmt: ast.Import | ast.ImportFrom, alias: ast.alias) -> str:
    """The module an import names, as a closure lists it: its root, or a relative name as written."""
    if isinstance(stmt, ast.Import):
        return alias.name.split(".")[0]
    if stmt.level:
        return "." * stmt.level + (stmt.module or "")
    return (stmt.module or "").split(".")[0]


class ModuleIndex:
    """One module's top-level statements, read once: what each binds and reads, the lines it spans and what it
    imports; and the statements that bind each name, or change an object the module built by calling a method of it
    (`parser.add_argument(...)` after `parser = argparse.ArgumentParser()`): a closure that takes the object takes
    how it was built. Holds no tree, so it can outlive extraction for the entries that keep it."""

    def __init__(self, tree: ast.Module, lines: list[str]) -> None:
        self.lines = lines
        body = tree.body
        self.binds = [frozenset(bound_names(stmt)) for stmt in body]
        self.reads = [frozenset(n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
                      for stmt in body]  # over-approximated: local names that shadow globals are harmless
        self.spans = [_span(stmt) for stmt in body]
        self.imports = [tuple(imported_module(stmt, a) for a in stmt.names)
                        if isinstance(stmt, (ast.Import, ast.ImportFrom)) else () for stmt in body]
        self.stars = [i for i, s in enumerate(body) if isinstance(s, ast.ImportFrom) and any(a.name == "*" for a in s.names)]
        self.bindings: dict[str, list[int]] = {}
        self._keys: list[list[str]] = [[] for _ in body]  # the names each statement is found under in `bindings`
        assigned: set[str] = set()
        for index, stmt in enumerate(body):
            for name in self.binds[index]:
                self.bindings.setdefault(name, []).append(index)
                self._keys[index].append(name)
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                assigned |= self.binds[index]
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                    and (root := _receiver(stmt.value.func)) in assigned:
                self.bindings.setdefault(root, []).append(index)
                self._keys[index].append(root)
        self._libraries: dict[frozenset[str], list[frozenset[str]]] = {}

    def taken(self, own: int) -> list[int]:
        """The statements the closure of statement `own` takes besides itself, in source order: every star import,
        and whatever binds a name read by `own` or by what was taken, transitively."""
        wanted = set(self.stars)
        pending = [own, *self.stars]
        seen: set[str] = set()
        while pending:
            for name in self.reads[pending.pop()]:
                if name in seen:
                    continue
                seen.add(name)
                for index in self.bindings.get(name, ()):
                    if index != own and index not in wanted:
                        wanted.add(index)
                        pending.append(index)
        return sorted(wanted)

    def closure(self, own: int, name: str) -> tuple[list[str], list[str], str]:
        """(names taken besides `name`, modules imported, text) of the closure of statement `own` defining `name`.
        Lines not taken are blanked rather than removed, so tracebacks keep the file's line numbers."""
        taken = self.taken(own)
        names = sorted({n for i in taken for n in self.binds[i]} - {name})
        imports = sorted({m for i in taken for m in self.imports[i]})
        parts: list[str] = []
        upto = 0  # the last line written
        for start, end in sorted(self.spans[i] for i in [*taken, own]):
            if end <= upto:
                continue
            first = max(start, upto + 1)
            parts.append("\n" * (first - upto - 1))
            parts.append("".join(self.lines[first - 1:end]))
            upto = end
        return names, imports, "".join(parts).rstrip("\n") + "\n"

    def libraries(self, own: int, wanted: frozenset[str]) -> list[str]:
        """The roots in `wanted` of the modules the closure of `own` imports, sorted: what `closure(own)[1]` holds of
        them, for every statement in one pass over the module (each statement's set grows at most len(wanted)
        times), where asking each closure would walk most of the module per entry."""
        reach = self._libraries.get(wanted)
        if reach is None:
            reach = self._libraries[wanted] = self._reach(wanted)
        found = reach[own].union(*(reach[i] for i in self.stars))
        return sorted(found)

    def _reach(self, wanted: frozenset[str]) -> list[frozenset[str]]:
        readers: dict[str, list[int]] = {}  # name -> the statements that read it
        for index, names in enumerate(self.reads):
            for name in names:
                if name in self.bindings:
                    readers.setdefault(name, []).append(index)
        empty: frozenset[str] = frozenset()
        reach = [frozenset(m.split(".")[0] for m in imports) & wanted or empty for imports in self.imports]
        by_name: dict[str, frozenset[str]] = {}  # what the statements binding a name reach, together
        pending = [index for index, found in enumerate(reach) if found]
        while pending:  # a statement's set (and a name's) grows at most len(wanted) times: linear
            index = pending.pop()
            have = reach[index]
            for name in self._keys[index]:
                if have <= by_name.get(name, empty):
                    continue
                grown = by_name[name] = by_name.get(name, empty) | have
                for reader in readers.get(name, ()):
                    if not grown <= reach[reader]:
                        reach[reader] = reach[reader] | grown
                        pending.append(reader)
        return reach


def _span(stmt: ast.stmt) -> tuple[int, int]:
    decorators = getattr(stmt, "decorator_list", [])
    return min([stmt.lineno, *(d.lineno for d in decorators)]), stmt.end_lineno or stmt.lineno


class Closure:
    """What an entry needs besides itself to run alone, made from its module's index the first time it is read:
    `names` taken besides the entry, `imports` (modules, roots or relative names as written), `text` (the module with
    everything else blanked), and `modules` (path -> sha256 of the repository modules it may import)."""

    __slots__ = ("_index", "_own", "_name", "_made", "_repo", "_rel", "_modules")

    def __init__(self, index: ModuleIndex | None = None, own: int = 0, name: str = "",
                 repo: RepoModules | None = None, rel: str = "") -> None:
        self._index, self._own, self._name = index, own, name
        self._made: tuple[list[str], list[str], str] | None = None if index is not None else ([], [], "")
        self._repo, self._rel = repo, rel
        self._modules: dict[str, str] | None = None if repo is not None else {}

    @classmethod
    def fixed(cls, names: list[str], imports: list[str], text: str, modules: dict[str, str]) -> Closure:
        """A closure already made (what a pickle carries: never the module's index)."""
        made = cls()
        made._made, made._modules = (names, imports, text), modules
        return made

    def in_repo(self, repo: RepoModules, rel: str) -> Closure:
        """The same closure, with the repository's modules to find what it may import (made when asked)."""
        moved = Closure(self._index, self._own, self._name, repo, rel)
        moved._made = self._made
        return moved

    def _make(self) -> tuple[list[str], list[str], str]:
        made = self._made
        if made is None:
            index = self._index
            if index is None:  # made by another thread meanwhile
                assert self._made is not None
                return self._made
            made = self._made = index.closure(self._own, self._name)
            self._index = None
        return made

    @property
    def names(self) -> list[str]:
        return self._make()[0]

    @property
    def imports(self) -> list[str]:
        return self._make()[1]

    @property
    def text(self) -> str:
        return self._make()[2]

    @property
    def modules(self) -> dict[str, str]:
        found = self._modules
        if found is None:
            repo = self._repo
            if repo is None:
                assert self._modules is not None
                return self._modules
            found = self._modules = repo.closure(self._rel)
            self._repo = None
        return found

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Closure):
            return NotImplemented
        return self is other or (self._make(), self.modules) == (other._make(), other.modules)

    def __hash__(self) -> int:
        return hash(self.text)

    def __reduce__(self) -> tuple[object, tuple[list[str], list[str], str, dict[str, str]]]:
        return Closure.fixed, (self.names, self.imports, self.text, self.modules)

    def __copy__(self) -> Closure:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Closure:
        return self


@dataclass
class ModuleFacts:
    """What extraction keeps of one module of the repository for the run cache's key."""

    sha256: str
    imports: list[str] = field(default_factory=list)  # dotted names, relative ones resolved


class RepoModules:
    """The repository's modules and the folders it imports from (`catalogue.imports`), indexed once by the paths
    they are found at below each folder, so a name is looked up in one step, not once per folder."""

    def __init__(self, modules: dict[str, ModuleFacts], roots: list[str] | tuple[str, ...] = ()) -> None:
        self.modules = modules
        self._roots = set(["", *roots])
        self._below: dict[str, list[str]] = {}  # a path below one of the roots -> the modules found there
        for rel in modules:
            parts = rel.split("/")
            folder = ""
            for k in range(len(parts)):
                if folder in self._roots:
                    self._below.setdefault("/".join(parts[k:]), []).append(rel)
                folder = f"{folder}/{parts[k]}" if folder else parts[k]
        self._parts = max((rel.count("/") + 1 for rel in modules), default=1)
        self._made: dict[str, dict[str, str]] = {}

    def closure(self, rel: str) -> dict[str, str]:
        """path -> sha256 of the repository's modules that run when an entry of `rel` is loaded: its own module and
        the `__init__.py` of its packages (the sandbox imports it for real), and the names they import, transitively,
        looked up as the sandbox's `sys.path` would (the checkout's root, the import roots, then the module's
        folder), with every package `__init__.py` on the way. Made once per module."""
        found = self._made.get(rel)
        if found is None:
            found = self._made[rel] = self._closure(rel)
        return found

    def _closure(self, rel: str) -> dict[str, str]:
        modules = self.modules
        folder = rel.rpartition("/")[0]
        out: dict[str, str] = {rel: modules[rel].sha256}
        parts = folder.split("/") if folder else []
        while parts and (init := "/".join([*parts, "__init__.py"])) in modules:
            out[init] = modules[init].sha256
            parts.pop()
        own = folder if folder and folder not in self._roots else None  # the one folder the roots do not cover
        pending = [name for path in out for name in modules[path].imports]
        seen: set[str] = set()
        while pending:
            name = pending.pop()
            if name in seen:
                continue
            seen.add(name)
            names = name.split(".")
            for end in range(1, min(len(names), self._parts) + 1):  # no module lies deeper than the deepest
                path = "/".join(names[:end])
                for candidate in (f"{path}.py", f"{path}/__init__.py"):
                    hits = self._below.get(candidate, [])
                    if own is not None and f"{own}/{candidate}" in modules:
                        hits = [*hits, f"{own}/{candidate}"]
                    for hit in hits:
                        if hit not in out:
                            out[hit] = modules[hit].sha256
                            pending.extend(modules[hit].imports)
        return dict(sorted(out.items()))
