"""The repository's own classes, found with `ast` as its imports name them: the bases a class inherits its
methods from (`fit()` defined once on a plugin base class), and the class an argument's annotation names
(`handler: DataHandler`), with the constructor that builds it.

Research code is often a family of classes on one base of the repository: the entry defines its score, and the
base the way it is called. Reading the entry alone misses how it is run. Nothing here imports or runs the
repository: a name is followed through the `import` statements of the file that uses it, to the file that
defines it, over the folders the repository imports itself from (`Entry.sys_path`). Each file's imports and
definitions, each module's file and each class's bases are read once and kept (a chain of thousands of classes
is asked about over and over).
"""

from __future__ import annotations

import ast
import posixpath
import textwrap
from collections import deque
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from paperproof.catalogue import checkout
from paperproof.catalogue.entry import Entry
from paperproof.catalogue.extract import MAX_FILE_BYTES, extract_module, python_files
from paperproof.catalogue.imports import import_name

MAX_DEPTH = 4  # bases followed above a class, and re-exports followed from a package to its definition
HOSTILE = (SyntaxError, ValueError, RecursionError, MemoryError, UnicodeError)


@dataclass(frozen=True)
class Found:
    """A class of the repository: its entry (constructor parameters, public methods) and how to import it."""

    entry: Entry
    import_name: str  # the dotted module the sandbox imports it from

    @property
    def where(self) -> str:
        return f"{self.entry.path}:{self.entry.lineno}"


@dataclass(frozen=True)
class Inherited:
    """A class entry with the public methods of its repository bases merged in (its own first), and where each
    inherited method and an inherited constructor came from."""

    entry: Entry
    origins: dict[str, str]  # method (or "__init__") -> "Base (path:line)"
    files: tuple[str, ...] = ()  # the files of the bases followed, nearest first (their annotations resolve there)


class RepoClasses:
    """Reads the repository's files on demand and resolves class names the way its imports do."""

    def __init__(self, root: Path, sys_path: list[str] | tuple[str, ...] = ("",), repo: str = "") -> None:
        self.root = Path(root)
        self.roots = list(dict.fromkeys([*sys_path, ""]))
        self.repo = repo
        self._trees: dict[str, ast.Module | None] = {}
        self._entries: dict[str, list[Entry]] = {}
        self._defined: dict[str, dict[tuple[str, str], Entry]] = {}  # rel -> (kind, name) -> its first entry
        self._imported: dict[str, dict[str, tuple[str, str | None]]] = {}
        self._files_of: dict[str, str | None] = {}
        self._facts: dict[tuple[str, int, str], tuple[list[str], bool]] = {}

    @cached_property
    def _files(self) -> set[str]:
        return set(python_files(self.root))

    def _tree(self, rel: str) -> ast.Module | None:
        if rel not in self._trees:
            try:
                text = checkout.read_text(self.root, rel, MAX_FILE_BYTES)
                self._trees[rel] = ast.parse(text, filename=rel)
                self._entries[rel] = extract_module(text, repo=self.repo, path=rel, tree=self._trees[rel])
            except (checkout.Refused, OSError, *HOSTILE):
                self._trees[rel], self._entries[rel] = None, []
        return self._trees[rel]

    def _file_of(self, module: str) -> str | None:
        if module not in self._files_of:
            self._files_of[module] = self._find_file(module)
        return self._files_of[module]

    def _find_file(self, module: str) -> str | None:
        parts = module.split(".")
        for root in self.roots:
            for candidate in ("/".join(parts) + ".py", "/".join([*parts, "__init__.py"])):
                rel = posixpath.join(root, candidate) if root else candidate
                if rel in self._files:
                    return rel
        return None

    def _own(self, rel: str, kind: str, name: str) -> Entry | None:
        """The first entry of the file `rel` of that kind and name."""
        defined = self._defined.get(rel)
        if defined is None:
            defined = self._defined[rel] = {}
            for e in self._entries.get(rel, []):
                defined.setdefault((e.kind, e.name), e)
        return defined.get((kind, name))

    def _module_of(self, rel: str) -> str:
        return import_name(rel, self._files)

    def _imports(self, rel: str) -> dict[str, tuple[str, str | None]]:
        """Local name -> (module, attribute) for `from m import a as b`, (module, None) for `import m as b`."""
        if rel not in self._imported:
            self._imported[rel] = self._read_imports(rel)
        return self._imported[rel]

    def _read_imports(self, rel: str) -> dict[str, tuple[str, str | None]]:
        tree = self._tree(rel)
        if tree is None:
            return {}
        here = self._module_of(rel)
        package = here.split(".") if rel.endswith("__init__.py") else here.split(".")[:-1]
        table: dict[str, tuple[str, str | None]] = {}
        for node in tree.body:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    table[alias.asname or alias.name.split(".")[0]] = (alias.name if alias.asname else
                                                                      alias.name.split(".")[0], None)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[:len(package) - node.level + 1] if node.level <= len(package) + 1 else []
                    module = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    module = node.module or ""
                for alias in node.names:
                    if alias.name != "*":
                        table[alias.asname or alias.name] = (module, alias.name)
        return table

    def find(self, name: str, rel: str, depth: int = 0, kind: str = "class") -> Found | None:
        """The repository class `name` (`DataHandler`, `core.Plugin`) means in the file `rel`, or None when it is
        not one of the repository's (a library's, a builtin, or not found); with `kind="function"`, the function
        (`softmax` imported from a sibling module)."""
        name = name.strip().strip("'\"")
        if depth > MAX_DEPTH or not name or self._tree(rel) is None:
            return None
        head, _, rest = name.partition(".")
        if not rest:
            own = self._own(rel, kind, head)
            if own is not None:
                return Found(own, self._module_of(rel))
        imported = self._imports(rel).get(head)
        if imported is None:
            return None
        module, attribute = imported
        if attribute is not None:  # `from m import A`: A is a class of m, or a submodule m.A
            target = self._file_of(module)
            if target is not None and not rest:
                found = self.find(attribute, target, depth + 1, kind)
                if found is not None:
                    return found
            sub = self._file_of(f"{module}.{attribute}")
            return self.find(rest, sub, depth + 1, kind) if sub is not None and rest else None
        path = rest.rpartition(".")
        target = self._file_of(".".join(filter(None, [module, path[0]])))
        return self.find(path[2], target, depth + 1, kind) if target is not None and path[2] else None

    def with_bases(self, entry: Entry) -> Inherited:
        """`entry` with its repository bases' public methods and parameters (its own win), and its base's
        constructor where it defines none of its own."""
        methods, params = list(entry.methods), dict(entry.method_params)
        constructor = list(entry.params)
        own_init = self._class_facts(entry)[1]
        origins: dict[str, str] = {}
        files: list[str] = []
        seen = {(entry.path, entry.name)}
        pending = deque((b, entry.path, 0) for b in self._class_facts(entry)[0])
        while pending:
            base, rel, depth = pending.popleft()
            found = self.find(base, rel)
            if found is None or depth >= MAX_DEPTH or (found.entry.path, found.entry.name) in seen:
                continue
            seen.add((found.entry.path, found.entry.name))
            files.append(found.entry.path)
            where = f"{found.entry.name} ({found.where})"
            for method in found.entry.methods:
                if method not in params:
                    methods.append(method)
                    params[method] = found.entry.method_params.get(method, [])
                    origins[method] = where
            if not own_init and "__init__" not in origins and self._class_facts(found.entry)[1]:
                constructor = list(found.entry.params)
                origins["__init__"] = where
            pending.extend((b, found.entry.path, depth + 1) for b in self._class_facts(found.entry)[0])
        if not origins:
            return Inherited(entry, {}, tuple(files))
        return Inherited(entry.model_copy(update={"methods": methods, "method_params": params,
                                                  "params": constructor}), origins, tuple(files))

    def _class_facts(self, entry: Entry) -> tuple[list[str], bool]:
        """The base names a class entry's source gives and whether it defines `__init__`, parsed once."""
        key = (entry.path, entry.lineno, entry.code_sha256)
        if key not in self._facts:
            self._facts[key] = (_base_names(entry), _defines_init(entry))
        return self._facts[key]

    def names(self, rel: str) -> list[str]:
        """The names the file `rel` imports or defines as classes, in a stable order."""
        self._tree(rel)
        defined = [e.name for e in self._entries.get(rel, []) if e.kind == "class"]
        return sorted({*defined, *self._imports(rel)})


def _node(entry: Entry) -> ast.ClassDef | None:
    try:
        tree = ast.parse(textwrap.dedent(entry.source))
    except HOSTILE:
        return None
    return next((n for n in tree.body if isinstance(n, ast.ClassDef)), None)


def _base_names(entry: Entry) -> list[str]:
    node = _node(entry) if entry.kind == "class" else None
    return [ast.unparse(b) for b in node.bases] if node is not None else []


def _defines_init(entry: Entry) -> bool:
    node = _node(entry)
    return node is not None and any(isinstance(n, ast.FunctionDef) and n.name == "__init__" for n in node.body)
