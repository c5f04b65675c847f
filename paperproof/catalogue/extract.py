"""Extracting entries from a repository with `ast`: nothing from a repository is imported here.

Each entry carries a closure: the module-level imports, constants and helpers its code refers to
(transitively), in source order, so the sandbox can define it without executing the rest of a
module that does not import (a framework we lack at the top, a script body, a broken helper). It is
made when first read, from an index of its module built once (`catalogue.closure`). The whole
extraction costs time linear in the repository's size, within the repository's analysis budget
(`catalogue.budget`).
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from paperproof.catalogue import checkout
from paperproof.catalogue.budget import Budget
from paperproof.catalogue.closure import Closure, ModuleFacts, ModuleIndex, RepoModules, segment
from paperproof.catalogue.entry import Entry, EntryKind, Param, ParamKind
from paperproof.catalogue.evidence import LIBRARIES, gather
from paperproof.catalogue.imports import import_name, import_roots, script_sys_paths

MAX_FILE_BYTES = 512 * 1024
MAX_HASH_BYTES = 16 * 1024**2  # a module too large to parse is still hashed for the cache key, up to this
MAX_REPO_BYTES = 64 * 1024**2  # Python read from one repository; the rest is skipped and reported
SKIP_DIRS = frozenset({
    ".git", "__pycache__", "node_modules", "venv", ".venv", "env", "site-packages", "build", "dist",
    "tests", "test", "testing", "docs", "doc", "examples", ".github", ".tox", ".eggs",
})
SKIP_FILES = frozenset({"setup.py", "conftest.py", "noxfile.py", "fabfile.py"})
# What repository text can make the parser or the walks over its tree raise: a record, never a crash.
HOSTILE_TEXT = (SyntaxError, ValueError, RecursionError, MemoryError, UnicodeError, TypeError)


@dataclass
class ExtractReport:
    """What extraction found in one repository, including files it could not read, and why it stopped early
    when its analysis budget was spent (`cut`, the note for the repository's record)."""

    entries: list[Entry] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    cut: str | None = None


def python_files(root: Path, skipped: list[tuple[str, str]] | None = None) -> list[str]:
    """The repository's Python sources (relative paths) in a stable order, skipping tests, docs and
    vendored trees and never following a link (`checkout.walk`, with its caps)."""
    walked = checkout.Walk(skipped if skipped is not None else [])
    out = []
    for rel in checkout.walk(root, walked, skip_dir=lambda name: name in SKIP_DIRS or name.startswith(".")):
        name = rel.rpartition("/")[2]
        if not name.endswith(".py") or name in SKIP_FILES or name.startswith("test_") or name.endswith("_test.py"):
            continue
        out.append(rel)
    return out


def module_name(rel: Path) -> str:
    parts = list(rel.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) or rel.stem


def extract_repo(root: Path, repo: str, budget: Budget | None = None) -> ExtractReport:
    """Every entry of the repository's modules, each with the content hashes of the repository's
    modules it may import (`Entry.closure_modules`, for the run cache's key). A file that cannot be
    read or parsed, whatever it holds, is reported with the reason and the rest goes on. Past the
    `budget` (a fresh one when none is given), the entries found so far are kept, the files not read
    are reported, and `cut` says so."""
    budget = Budget() if budget is None else budget
    report = ExtractReport()
    modules: dict[str, ModuleFacts] = {}
    found: list[tuple[str, list[Entry]]] = []
    script_paths: list[str] = []
    left = MAX_REPO_BYTES
    files = python_files(root, report.skipped)
    for rel in files:
        if budget.over(rel):
            report.skipped.append((rel, "not read: the repository's analysis budget was spent"))
            continue
        if left <= 0:
            report.skipped.append((rel, f"not read: the repository's Python passed {MAX_REPO_BYTES} bytes"))
            continue
        try:
            data = checkout.read_bytes(root, rel, MAX_FILE_BYTES)
        except checkout.Refused as exc:
            report.skipped.append((rel, exc.reason))
            if "cap" in exc.reason:
                modules[rel] = ModuleFacts(_hash_only(root, rel))
            continue
        left -= len(data)
        module = modules[rel] = ModuleFacts(hashlib.sha256(data).hexdigest())
        text = data.decode("utf-8", errors="replace")
        try:
            tree = ast.parse(text, filename=rel)
            module.imports = _imports(tree, module_name(Path(rel)), rel.endswith("__init__.py"))
            script_paths.extend(script_sys_paths(tree, rel))
            found.append((rel, extract_module(text, repo=repo, path=rel, tree=tree, budget=budget)))
        except SyntaxError as exc:
            report.skipped.append((rel, f"does not parse: {exc.msg} (line {exc.lineno})"))
        except RecursionError:
            report.skipped.append((rel, "nested too deeply to parse"))
        except MemoryError:
            report.skipped.append((rel, "too large to parse in memory"))
        except HOSTILE_TEXT as exc:
            report.skipped.append((rel, f"does not parse: {type(exc).__name__}: {str(exc)[:200]}"))
    present = set(files)
    roots = import_roots(present, script_paths)
    graph = RepoModules(modules, roots)
    for rel, entries in found:
        loads = {"import_name": import_name(rel, present), "sys_path": roots}
        for e in entries:
            moved = e.model_copy(update=loads)
            moved._closure = e.closure_source.in_repo(graph, rel)
            report.entries.append(moved)
    if budget.cut is not None:
        report.cut = budget.note()
    return report


def _hash_only(root: Path, rel: str) -> str:
    try:
        return hashlib.sha256(checkout.read_bytes(root, rel, MAX_HASH_BYTES)).hexdigest()
    except checkout.Refused as exc:
        return f"unread: {exc.reason}"


def _imports(tree: ast.Module, module: str, is_package: bool) -> list[str]:
    """Every module name the tree may import, anywhere in it (relative imports made absolute)."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1] if node.level <= len(package) + 1 else []
                head = ".".join([*base, *([node.module] if node.module else [])])
            else:
                head = node.module or ""
            if head:
                names.add(head)
            names.update(f"{head}.{a.name}" if head else a.name for a in node.names if a.name != "*")
    return sorted(names)


def closure_modules(rel: str, modules: dict[str, ModuleFacts], roots: list[str] | tuple[str, ...] = ()) -> dict[str, str]:
    """path -> sha256 of the repository's modules that run when an entry of `rel` is loaded (`RepoModules.closure`;
    build one `RepoModules` to ask for several modules of a repository)."""
    return RepoModules(modules, roots).closure(rel)


def extract_module(text: str, *, repo: str, path: str, tree: ast.Module | None = None,
                   budget: Budget | None = None) -> list[Entry]:
    """The module's public top-level functions and classes, each with a closure made when first read. Past the
    `budget`, the entries made so far."""
    tree = ast.parse(text, filename=path) if tree is None else tree
    lines = text.splitlines(keepends=True)
    index = ModuleIndex(tree, lines)
    module = module_name(Path(path))
    entries: list[Entry] = []
    for own, node in enumerate(tree.body):
        if not isinstance(node, ast.FunctionDef | ast.ClassDef) or node.name.startswith("_"):
            continue
        if budget is not None and budget.over(f"{path}::{node.name}"):
            break
        kind: EntryKind = "function" if isinstance(node, ast.FunctionDef) else "class"
        entry = _entry(node, kind, lines, index.libraries(own, LIBRARIES), repo=repo, path=path, module=module)
        entry._closure = Closure(index, own, node.name)
        entries.append(entry)
    return entries


def _entry(node: ast.FunctionDef | ast.ClassDef, kind: EntryKind, lines: list[str], libraries: list[str], *,
           repo: str, path: str, module: str) -> Entry:
    """The entry `node` defines; `libraries`: the hardness libraries its closure imports (its evidence names them)."""
    start, end, source = segment(node, lines)
    if isinstance(node, ast.ClassDef):
        init = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
        params = _params(init.args, drop_first=True) if init else _generated_init(node)
        if init is not None:  # its parameters documented on the constructor, where the class's own docstring is silent
            params = _attach_param_docs(params, ast.get_docstring(init))
        returns = None
        public = [
            n for n in node.body
            if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")
            and not any(_decorator_name(d) in NOT_METHODS for d in n.decorator_list)
        ]
        methods = [n.name for n in public]
        method_params = {n.name: _attach_param_docs(_params(n.args, drop_first=True), ast.get_docstring(n))
                         for n in public}
    else:
        params = _params(node.args, drop_first=False)
        returns = ast.unparse(node.returns) if node.returns else None
        methods, method_params = [], {}
    docstring = ast.get_docstring(node)
    params = _attach_param_docs(params, docstring)
    return Entry(
        repo=repo, path=path, module=module, name=node.name, qualname=node.name, kind=kind,
        lineno=start, end_lineno=end, source=source,
        code_sha256=hashlib.sha256(source.encode("utf-8")).hexdigest(),
        params=params, returns=returns, docstring=docstring, returns_doc=returns_section(docstring),
        decorators=[ast.unparse(d) for d in node.decorator_list],
        methods=methods, method_params=method_params, evidence=gather(node, libraries),
    )


# Decorators that make a function something other than a method to call on an instance: an attribute's getter,
# setter or deleter (`@issues.setter` reads as an attribute, so calling it calls what it holds), or one called on the class.
NOT_METHODS = frozenset({"property", "cached_property", "setter", "getter", "deleter", "staticmethod", "classmethod"})
GENERATED_INIT = frozenset({"dataclass", "define", "frozen", "mutable", "attrs"})  # dataclasses', attrs' decorators


def _generated_init(node: ast.ClassDef) -> list[Param]:
    """The constructor a decorator or base writes from the class's annotated fields (`@dataclass`, attrs,
    `NamedTuple`): one parameter per field, in order, optional where the field has a default; none otherwise."""
    generated = any(_decorator_name(d) in GENERATED_INIT for d in node.decorator_list) or \
        any(ast.unparse(b).rpartition(".")[2] == "NamedTuple" for b in node.bases)
    if not generated:
        return []
    out = []
    for stmt in node.body:
        if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
            continue
        annotation = ast.unparse(stmt.annotation)
        value = stmt.value
        not_init = isinstance(value, ast.Call) and any(k.arg == "init" and isinstance(k.value, ast.Constant)
                                                       and k.value.value is False for k in value.keywords)
        if annotation.startswith(("ClassVar", "typing.ClassVar")) or not_init:
            continue
        out.append(Param(name=stmt.target.id, kind="positional_or_keyword", annotation=annotation,
                         default=ast.unparse(value) if value is not None else None))
    return out


def _decorator_name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    return target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")


_KINDS: dict[str, ParamKind] = {
    "posonlyargs": "positional_only", "args": "positional_or_keyword", "kwonlyargs": "keyword_only",
}


def _params(args: ast.arguments, drop_first: bool) -> list[Param]:
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    out: list[Param] = []
    for index, arg in enumerate(positional):
        kind: ParamKind = "positional_only" if index < len(args.posonlyargs) else "positional_or_keyword"
        out.append(_param(arg, kind, defaults[index]))
    if args.vararg:
        out.append(_param(args.vararg, "var_positional", None))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        out.append(_param(arg, "keyword_only", default))
    if args.kwarg:
        out.append(_param(args.kwarg, "var_keyword", None))
    if drop_first and out and out[0].kind in ("positional_only", "positional_or_keyword"):
        out = out[1:]
    return out


def _param(arg: ast.arg, kind: ParamKind, default: ast.expr | None) -> Param:
    span = None
    if default is not None and not _is_literal(default):
        span = (default.lineno, default.col_offset, default.end_lineno or default.lineno,
                default.end_col_offset or default.col_offset)
    return Param(
        name=arg.arg, kind=kind,
        annotation=ast.unparse(arg.annotation) if arg.annotation else None,
        default=ast.unparse(default) if default is not None else None,
        default_span=span,
    )


def _is_literal(node: ast.expr) -> bool:
    """Defaults that cannot do anything when evaluated: constants, containers of them, bare names, arithmetic of
    numbers, a library's object built from literals."""
    if isinstance(node, (ast.Name, ast.Attribute)):
        return True  # a module constant or np.float32: evaluated, but harmless
    if isinstance(node, ast.Call) and _library_constructor(node):
        return True
    if isinstance(node, ast.BinOp | ast.UnaryOp) and all(  # `1 - 1e-05`, `-1 / 3`: arithmetic of numbers (no powers)
            isinstance(n, ast.BinOp | ast.UnaryOp | ast.operator | ast.unaryop) and not isinstance(n, ast.Pow)
            or isinstance(n, ast.Constant) and type(n.value) in (int, float) for n in ast.walk(node)):
        return True
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


# What a default call must not do to be kept: read, load, fetch or connect (`torch.load(...)`, `x.from_pretrained(...)`).
_FETCHES = re.compile(r"load|open|read|fetch|download|pretrained|connect|url|request|get$|session|client", re.IGNORECASE)


def _library_constructor(call: ast.Call) -> bool:
    """`nn.CrossEntropyLoss(reduction="none")`, `np.linspace(0, 1, 5)`: a library's object built from literals, as
    harmless as a literal and often the very thing the code needs (a loss that keeps one value per sample)."""
    if not isinstance(call.func, ast.Attribute) or _FETCHES.search(call.func.attr):
        return False
    root: ast.expr = call.func
    while isinstance(root, ast.Attribute):
        root = root.value
    return isinstance(root, ast.Name) and all(_is_literal(a) and not isinstance(a, ast.Name | ast.Attribute)
                                              for a in [*call.args, *(k.value for k in call.keywords)])


def without_defaults(closure: str, params: list[Param]) -> str:
    """The closure with the evaluated defaults of `params` replaced by `None`, line numbers kept.

    Used when a fixture supplies those arguments: a default that reads a file or loads a model
    need not run for a call that never uses it.
    """
    lines = [line.encode("utf-8") for line in closure.split("\n")]
    for line, col, end_line, end_col in sorted((p.default_span for p in params if p.default_span), reverse=True):
        head, tail = lines[line - 1][:col], lines[end_line - 1][end_col:]
        lines[line - 1] = head + b"None" + tail
        for index in range(line, end_line):
            lines[index] = b""
    return "\n".join(line.decode("utf-8") for line in lines)


# --- docstrings -----------------------------------------------------------------------------

# Docstrings are repository text: every pattern here matches in time linear in the line or text it reads. A run of
# white space between two `\s*` (a heading line "Returns" then 10,000 spaces and a letter) is taken whole (`*+`),
# where the backtracking engine tried every split of it.
_RETURNS_HEAD = re.compile(r"^\s*+(Returns?|Yields?)\s*+:?\s*+$", re.IGNORECASE)
_RST_RTYPE = re.compile(r":rtype:\s*(.+)")
_RST_RETURNS = re.compile(r":returns?:\s*(.+)")


def returns_section(docstring: str | None) -> str | None:
    """The text of a docstring's Returns section (Google, NumPy or reST style), or None."""
    if not docstring:
        return None
    rtype = _RST_RTYPE.search(docstring)
    if rtype:
        return rtype.group(1).strip()
    doc_lines = docstring.splitlines()
    for index, line in enumerate(doc_lines):
        if _RETURNS_HEAD.match(line):
            body: list[str] = []
            for follow in doc_lines[index + 1:]:
                if re.match(r"^\s*-{3,}\s*$", follow):
                    continue
                if not follow.strip():
                    if body:
                        break
                    continue
                if re.match(r"^\s*[A-Z][A-Za-z ]+:\s*$", follow) or re.match(r"^[A-Z][A-Za-z ]+$", follow.strip()) and body and not follow.startswith((" ", "\t")):
                    break
                body.append(follow.strip())
            return " ".join(body) or None
    returns = _RST_RETURNS.search(docstring)
    return returns.group(1).strip() if returns else None


_ARGS_HEAD = re.compile(r"^\s*+(Args|Arguments|Parameters|Params)\s*+:?\s*+$", re.IGNORECASE)
_PARAM_HEAD = re.compile(r"^\s*+\*{0,2}(\w+)\s*+(\(([^)]*)\))?\s*+:\s*(.*)$")  # `name (type): text`
_TYPE_CHARS = frozenset("[], .")  # besides word characters, what the type of a `:param type name:` is written with


def _attach_param_docs(params: list[Param], docstring: str | None) -> list[Param]:
    """Copy each parameter's line from an Args/Parameters section (or `:param x:`) onto the Param. A section ends
    where the next one of those headings begins (that one is read in turn)."""
    if not docstring:
        return params
    docs: dict[str, list[str]] = {name: [text] for name, text in _rst_params(docstring)}
    names = {p.name for p in params}
    doc_lines = docstring.splitlines()
    heads = [index for index, line in enumerate(doc_lines) if _ARGS_HEAD.match(line)]
    for index, end in zip(heads, [*heads[1:], len(doc_lines)]):
        current: str | None = None
        for follow in doc_lines[index + 1:end]:
            if re.match(r"^\s*-{3,}\s*$", follow):
                continue
            if _RETURNS_HEAD.match(follow) or (follow.strip() and not follow[:1].isspace() and current and ":" not in follow):
                break
            head = _PARAM_HEAD.match(follow)
            if head and head.group(1) in names:
                current = head.group(1)
                docs[current] = [" ".join(filter(None, [head.group(3), head.group(4)])).strip()]
            elif current and follow.strip():
                docs[current].append(follow.strip())
    return [p.model_copy(update={"doc": " ".join(filter(None, docs[p.name]))}) if p.name in docs else p for p in params]


def _rst_params(docstring: str) -> list[tuple[str, str]]:
    """(name, text) of each `:param [type] name: text`, as `re.finditer(r":param\\s+(?:[\\w\\[\\], .]+\\s+)?(\\w+):\\s*(.+)")`
    reads them (text stripped), in linear time: that pattern took cubic time on `:param` and 2,000 spaces. Nothing in
    it matches a colon, so the name ends at the first colon after `:param`; what comes before the name must be white
    space, or white space, a type and white space."""
    found: list[tuple[str, str]] = []
    at = 0
    while (start := docstring.find(":param", at)) >= 0:
        colon = docstring.find(":", start + 6)
        read = _rst_param(docstring, start + 6, colon) if colon >= 0 else None
        if read is None:
            at = start + 1
            continue
        name, text, at = read
        found.append((name, text))
    return found


def _rst_param(doc: str, start: int, colon: int) -> tuple[str, str, int] | None:
    """(name, text, where the match ends) of the `:param` whose name ends at `colon`, or None when it is no match."""
    before = doc[start:colon]
    if not before or not before[0].isspace():
        return None
    cut = len(before)
    while cut and (before[cut - 1].isalnum() or before[cut - 1] == "_"):
        cut -= 1
    if cut == len(before) or not before[cut - 1].isspace():
        return None
    if not all(c.isalnum() or c == "_" or c in _TYPE_CHARS for c in before[:cut].strip()):
        return None
    rest = colon + 1
    while rest < len(doc) and doc[rest].isspace():
        rest += 1
    if rest == len(doc):  # only white space after the colon: the text is its last character that is not a newline
        rest = len(doc) - 1
        while rest > colon and doc[rest] == "\n":
            rest -= 1
        return (before[cut:], "", rest + 1) if rest > colon else None
    end = doc.find("\n", rest)
    end = len(doc) if end < 0 else end
    return before[cut:], doc[rest:end].strip(), end
