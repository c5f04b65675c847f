"""Where a repository's code imports itself from, read with `ast`: the folders its packages hang from
(a `src/` layout, flat packages, nested code folders) and the `sys.path` its scripts set.

The sandbox puts these folders on `sys.path` and imports an entry's module by the name Python would give
it there (`src/pkg/mod.py` is `pkg.mod`), so `from pkg.util import x` and relative imports resolve as
they do when the repository runs its own scripts. Nothing here executes repository code: a `sys.path`
expression is evaluated only over the few path functions scripts use (`os.path.join`, `dirname`,
`Path(__file__).parent`, …), and a folder outside the checkout is dropped.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Iterable

# Functions of one path a script's sys.path expression may wrap around `__file__` or a folder.
_SAME = frozenset({"abspath", "realpath", "normpath", "expanduser", "str", "resolve", "absolute", "fspath"})


def package_root(rel: str, files: set[str]) -> str:
    """The folder the module at `rel` is imported from: its nearest ancestor that is not a package."""
    parts = rel.split("/")[:-1]
    while parts and "/".join([*parts, "__init__.py"]) in files:
        parts.pop()
    return "/".join(parts)


def import_name(rel: str, files: set[str]) -> str:
    """The dotted name Python gives the module at `rel` with its package root on `sys.path`."""
    root = package_root(rel, files)
    inner = rel[len(root) + 1:] if root else rel
    parts = inner[:-3].split("/") if inner.endswith(".py") else inner.split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) or posixpath.basename(posixpath.dirname(rel))


def import_roots(files: Iterable[str], script_paths: Iterable[str] = ()) -> list[str]:
    """Folders to put on `sys.path`, checkout-relative ("" is the checkout): the root, `src/`, every folder a
    package hangs from, then the folders the repository's scripts add themselves. Stable order."""
    present = set(files)
    roots: dict[str, None] = {"": None}
    if any(f.startswith("src/") for f in present):
        roots["src"] = None
    for rel in sorted(present):
        if rel.endswith("/__init__.py"):
            roots.setdefault(package_root(rel, present), None)
    for folder in script_paths:
        roots.setdefault(folder, None)
    return list(roots)


def script_sys_paths(tree: ast.Module, rel: str) -> list[str]:
    """Checkout-relative folders a module adds to `sys.path` (`sys.path.append(os.path.join(
    os.path.dirname(__file__), '..'))`, `sys.path.insert(0, 'src')`): a relative string is taken from the
    script's folder and from the checkout's root (scripts run from either), `__file__` as the file itself."""
    here = posixpath.dirname(rel)
    found: list[str] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("append", "insert") and _is_sys_path(node.func.value) and node.args):
            continue
        value = node.args[-1]
        for cwd in dict.fromkeys([here, ""]):
            folder = _evaluate(value, rel, cwd)
            if folder is not None:
                folder = posixpath.normpath(folder)
                folder = "" if folder == "." else folder
                if not folder.startswith("..") and not folder.startswith("/") and folder not in found:
                    found.append(folder)
    return found


def _is_sys_path(node: ast.expr) -> bool:
    """`sys.path`, read from the tree: unparsing the receiver of every `.append` was quadratic in a chain of them."""
    return isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name) \
        and node.value.id == "sys"


def _evaluate(node: ast.expr, rel: str, cwd: str, depth: int = 0) -> str | None:
    """The checkout-relative path `node` names when `rel` runs from `cwd`, or None when it is not plainly a path."""
    if depth > 12:
        return None
    again = lambda n: _evaluate(n, rel, cwd, depth + 1)  # noqa: E731
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return posixpath.join(cwd, node.value) if not node.value.startswith("/") else None
    if isinstance(node, ast.Name) and node.id == "__file__":
        return rel
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Add)):
        left = again(node.left)
        if left is None:
            return None
        if isinstance(node.right, ast.Constant) and isinstance(node.right.value, str):
            tail = node.right.value
            return posixpath.join(left, tail.lstrip("/")) if isinstance(node.op, ast.Div) or tail.startswith("/") \
                else left + tail
        return None
    if isinstance(node, ast.Attribute):
        base = again(node.value)
        if base is None:
            return None
        if node.attr == "parent":
            return posixpath.dirname(posixpath.normpath(base))
        return base if node.attr in _SAME else None
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents":
        base = again(node.value.value)
        if base is None or not isinstance(node.slice, ast.Constant) or not isinstance(node.slice.value, int):
            return None
        for _ in range(node.slice.value + 1):
            base = posixpath.dirname(posixpath.normpath(base))
        return base
    if isinstance(node, ast.Call):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name == "getcwd" and not node.args:
            return cwd
        if isinstance(node.func, ast.Attribute) and name in _SAME and not node.args:  # Path(...).resolve()
            return again(node.func.value)
        if name in ("join", "joinpath"):
            head = again(node.func.value) if name == "joinpath" and isinstance(node.func, ast.Attribute) else None
            parts = [head] if head is not None else []
            for arg in node.args:
                part = again(arg) if not parts else (arg.value if isinstance(arg, ast.Constant)
                                                     and isinstance(arg.value, str) else again(arg))
                if part is None:
                    return None
                parts.append(part)
            return posixpath.join(*parts) if parts else None
        if len(node.args) != 1:
            return None
        inner = again(node.args[0])
        if inner is None:
            return None
        if name == "dirname":
            return posixpath.dirname(posixpath.normpath(inner))
        if name in _SAME or name in ("Path", "PurePath"):
            return inner
    return None
