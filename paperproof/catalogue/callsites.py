"""How a repository itself calls its entries, read with `ast` only: nothing of it is executed.

What a repository passes to its own code (a DataLoader, `args` from argparse, a model, an array of
a known rank) is the best hint of the fixtures a sample needs, and the methods it calls on an
instance of its own class, and when (per batch, per epoch, once after training), say how a class
is meant to be driven. Scripts, tests, notebooks (code cells) and the python blocks of the root's
Markdown files are read through `checkout`, under caps; a file that cannot be read or parsed is
reported in `skipped` and the rest goes on.

Sites are ordered script, notebook, readme, test, module (the entry's own package last: a call
there is mostly plumbing, a script shows real data), then by file and line; `MAX_SITES` per entry.

The scan costs time near-linear in what it reads: the repository's classes, names and imports are
indexed once, and each file's assignments, loops and the kinds of its expressions once per file, so no
call rescans a file or the repository. It stops where the repository's analysis budget runs out
(`catalogue.budget`), keeping the sites found.
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple, cast

from pydantic import BaseModel, ConfigDict, Field

from paperproof.catalogue import checkout
from paperproof.catalogue.budget import Budget
from paperproof.catalogue.entry import Entry, Param
from paperproof.catalogue.extract import HOSTILE_TEXT, MAX_FILE_BYTES, module_name

MAX_SITES = 5  # per entry
MAX_HOOKS = 32  # per site
MAX_FILES = 5000
MAX_TOTAL_CHARS = 48 * 1024**2
MAX_NOTEBOOK_BYTES = 8 * 1024**2  # notebooks carry their outputs
MAX_TEXT = 160
MAX_HOPS = 4
SKIP_DIRS = frozenset({"venv", "env", "site-packages", "node_modules", "__pycache__", "build", "dist"})
SOURCE_ORDER = {"script": 0, "notebook": 1, "readme": 2, "test": 3, "module": 4}

ArgKind = Literal["literal", "namespace", "loader", "dataset", "model", "optimizer", "loss", "device", "array",
                  "tensor", "dataframe", "mapping", "sequence", "path", "callable", "probs", "logits", "labels",
                  "counter", "record"]  # counter: the variable of the `for i in range(start, ...)` around a hook; value:
# start. record: a dict built at the call with string keys (`{"features": h, "labels": y}`); value: key -> its kind
Cadence = Literal["per_batch", "per_epoch", "chosen_epochs", "once_before_loop", "once_after_loop", "once"]
Source = Literal["script", "test", "notebook", "readme", "module"]


class ArgEvidence(BaseModel):
    """One argument passed at a call site, bound to the entry's parameter and traced to its origin."""

    model_config = ConfigDict(frozen=True)

    param: str
    expression: str
    origin: str
    origin_line: int | None = None  # within its cell/block for notebooks and READMEs
    kind: ArgKind | None = None
    value: Any = None  # literal: the constant; namespace: dest -> default; mapping: the dict when literal
    rank: int | None = None


class HookCall(BaseModel):
    """A method called on an instance of a class entry, with how often the surrounding loops call it."""

    model_config = ConfigDict(frozen=True)

    method: str
    line: int
    cadence: Cadence
    args: list[ArgEvidence] = Field(default_factory=list)


class CallSite(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str  # "nb.ipynb#cell-3" (cells counted from 1, markdown included), "README.md#block-2"
    line: int
    source: Source
    args: list[ArgEvidence] = Field(default_factory=list)
    hooks: list[HookCall] = Field(default_factory=list)


_Kind = tuple[str | None, Any, int | None]
_NONE: _Kind = (None, None, None)
_MISSING = object()
_POSITIONAL = ("positional_only", "positional_or_keyword")
_CHAIN = frozenset({"to", "cuda", "cpu", "float", "double", "half", "eval", "train", "detach", "contiguous", "clone"})
_ALIASES = {"np": "numpy", "pd": "pandas", "F": "torch.nn.functional", "nn": "torch.nn", "optim": "torch.optim"}
_CALLS = [(kind, re.compile(pattern)) for kind, pattern in (  # canonical dotted name of a call -> what it returns
    ("loader", r"(.+\.)?DataLoader"),
    ("dataset", r"(.+\.)?(TensorDataset|load_dataset)|(.+\.)?datasets\..+"),
    ("model", r"(.+\.)?models\..+|timm\.create_model"),
    ("optimizer", r"torch\.optim\.(?!lr_scheduler).+"),
    ("loss", r"torch\.nn\.(\w+Loss|functional\.\w*(_loss|cross_entropy|with_logits|kl_div))"),
    ("device", r"torch\.device"),
    ("probs", r"(torch(\.nn\.functional)?|scipy\.special|numpy)\.(softmax|sigmoid|expit)"),
    ("labels", r"(torch|numpy)\.argmax"),
    ("array", r"numpy\.(random\..+|load|array|asarray|zeros|ones|empty|full|arange|linspace|eye|stack|concatenate|"
              r"[vh]stack|loadtxt|genfromtxt|\w+_like)"),
    ("tensor", r"torch\.(tensor|as_tensor|zeros|ones|empty|full|randn?|randint|arange|linspace|from_numpy|stack|cat|"
               r"eye|\w*Tensor|\w+_like)"),
    ("dataframe", r"pandas\.(read_\w+|DataFrame)"),
    ("mapping", r"json\.loads?|yaml\.(safe_)?load|dict|vars|(collections\.)?OrderedDict"),
    ("sequence", r"range|list|tuple|sorted"),
    ("path", r"os\.path\.(join|abspath|expanduser)|(pathlib\.)?Path"),
    ("callable", r"functools\.partial"),
)]
_DEVICES = frozenset({"cuda", "cpu", "mps", "cuda:0"})
_BATCHY = re.compile(r"loader|batch|\bdl\b|data_iter")
_FENCE = re.compile(r"^([ \t]*)```[ \t]*(?:python3?|py)[ \t]*\n(.*?)^[ \t]*```", re.M | re.S)


@dataclass
class Unit:
    """One parsed text: a file, a README block, or a notebook's code cells joined in order."""

    file: str
    source: Source
    text: str
    tree: ast.Module
    module: str | None = None
    package: bool = False
    block: int = 0
    cells: list[tuple[int, int]] = field(default_factory=list)  # (first line in the joined text, cell number)

    def where(self, line: int) -> tuple[str, int]:
        if self.block:
            return f"{self.file}#block-{self.block}", line
        at = bisect_right(self.cells, (line, float("inf")))  # the last cell starting at or before `line`
        if at:
            first, number = self.cells[at - 1]
            return f"{self.file}#cell-{number}", line - first + 1
        return self.file, line


class _Ctx(NamedTuple):
    scope: ast.AST
    loops: tuple[ast.stmt, ...] = ()
    ifs: tuple[tuple[ast.If, int], ...] = ()  # each with the number of loops around it


class _Assign(NamedTuple):
    line: int
    value: ast.expr
    path: tuple[int, ...]  # element of a tuple target
    loop: bool  # bound by a `for` over `value`


@dataclass
class _Repo:
    by_name: dict[str, list[Entry]]
    methods: dict[tuple[str, str], list[Entry]]
    models: set[str]
    datasets: set[str]
    functions: set[str]
    defined: set[str]  # top-level functions and every class of the repository
    names: _Names = field(init=False)

    def __post_init__(self) -> None:
        self.names = _Names(self.by_name)


class _Names:
    """The entries a call's name may mean, indexed once: by name and file, by name and the tails of their module's
    dotted name (an import names the module or a package on its way), and by name and each part of it. Scoring every
    entry of a name per call was quadratic in a repository of many modules defining the same names."""

    def __init__(self, by_name: dict[str, list[Entry]]) -> None:
        self.by_name = by_name
        self._in_file: dict[tuple[str, str], list[Entry]] = {}
        self._tails: dict[tuple[str, int], list[int]] = {}  # (name, hash of a tail of module parts) -> positions
        self._parts: dict[tuple[str, str], list[int]] = {}  # (name, a module part) -> positions
        self._modules: dict[str, list[list[str]]] = {}  # name -> each candidate's module parts
        for name, entries in by_name.items():
            modules = self._modules[name] = []
            for position, entry in enumerate(entries):
                self._in_file.setdefault((name, entry.path), []).append(entry)
                parts = entry.module.split(".")
                modules.append(parts)
                for k in range(len(parts)):
                    self._tails.setdefault((name, hash(tuple(parts[k:]))), []).append(position)
                for part in dict.fromkeys(parts):
                    self._parts.setdefault((name, part), []).append(position)
        self._imported: dict[tuple[str, str], list[Entry]] = {}

    def in_file(self, name: str, path: str) -> list[Entry]:
        return self._in_file.get((name, path), [])

    def imported(self, name: str, module: str) -> list[Entry]:
        """The entries named `name` that an import of `module` means, the best by `_score` (none when none scores):
        those whose module ends with it, else those whose module holds it on the way."""
        key = (name, module)
        found = self._imported.get(key)
        if found is None:
            found = self._imported[key] = self._best(name, module)
        return found

    def _best(self, name: str, module: str) -> list[Entry]:
        if not module:
            return []
        wanted, entries, modules = module.split("."), self.by_name[name], self._modules[name]
        ending = [p for p in self._tails.get((name, hash(tuple(wanted))), []) if modules[p][-len(wanted):] == wanted]
        if ending:
            return [entries[p] for p in ending]
        return [entries[p] for p in self._parts.get((name, wanted[0]), []) if _score(module, entries[p].module)]

    def starred(self, name: str, stars: list[str]) -> list[Entry]:
        """The entries named `name` whose module any of the star imports `stars` names, in their order."""
        entries = self.by_name[name]
        found = {p for m in stars if m for p in self._parts.get((name, m.split(".")[0]), [])
                 if _score(m, entries[p].module)}
        return [entries[p] for p in sorted(found)]


@dataclass
class _Site:
    entry: Entry
    order: tuple[Any, ...]
    path: str
    line: int
    source: Source
    args: list[ArgEvidence]
    hooks: list[HookCall] = field(default_factory=list)
    loops: list[tuple[ast.stmt, ...]] = field(default_factory=list)  # the loops around each hook call, in order

    def driven(self, batchy: dict[int, bool] | None = None) -> list[HookCall]:
        """The hooks, with a call made in a loop before another loop of training that calls the instance again
        (`scorer.init()` in a loop over seeds, before its loop over epochs) read as once before training, and one
        made after it in the same outer loop (`scorer.scores()`) as once after. `batchy` keeps what each loop was
        read as (`_BATCHY_LOOP`), across the sites of a scan."""
        batchy = {} if batchy is None else batchy

        def over_batches(loop: ast.stmt) -> bool:
            if id(loop) not in batchy:
                batchy[id(loop)] = _BATCHY_LOOP(loop)
            return batchy[id(loop)]

        out = []
        for hook, loops in zip(self.hooks, self.loops):
            deeper = [(other.line, extra) for other, extra in ((o, lo[len(loops):]) for o, lo in zip(self.hooks, self.loops)
                                                               if lo[:len(loops)] == loops and len(lo) > len(loops))]
            training = [line for line, extra in deeper if any(not over_batches(loop) for loop in extra)]
            if loops and any(line > hook.line for line in training):
                hook = hook.model_copy(update={"cadence": "once_before_loop"})
            elif loops and training and all(line < hook.line for line in training):
                hook = hook.model_copy(update={"cadence": "once_after_loop"})  # after its training loop, in a repeat
            out.append(hook)
        return out


def _BATCHY_LOOP(loop: ast.stmt) -> bool:  # noqa: N802 - read as a predicate on a loop
    """A loop over batches by its text (`for x, y in loader`), as `_Scan._batchy` reads it without tracing."""
    if not isinstance(loop, ast.For | ast.AsyncFor):
        return False
    return bool(_BATCHY.search(f"{ast.unparse(loop.iter)} {ast.unparse(loop.target)}".lower()))


@dataclass
class _Bound:
    site: _Site
    line: int
    ctx: _Ctx


def find_call_sites(root: Path, entries: Sequence[Entry], skipped: list[tuple[str, str]] | None = None,
                    budget: Budget | None = None) -> dict[str, list[CallSite]]:
    """`f"{path}::{qualname}"` of every entry -> where the repository calls it (maybe none), in the
    order of the module docstring; unreadable files go to `skipped` as (path, reason). Past the
    repository's analysis `budget` (a fresh one when none is given: `budget.cut` says where), the
    sites found so far."""
    skipped = skipped if skipped is not None else []
    budget = Budget() if budget is None else budget
    found: dict[str, list[_Site]] = {f"{e.path}::{e.qualname}": [] for e in entries}
    units = read_units(root, {e.path for e in entries}, skipped, budget)
    repo = _repo(units, entries)
    for unit in units:
        where = unit.where(1)[0] if unit.block else unit.file
        if budget.over(where):
            skipped.append((where, "call sites not read: the repository's analysis budget was spent"))
            continue
        try:
            sites = _Scan(unit, repo).run(budget)
        except HOSTILE_TEXT as exc:
            skipped.append((where, f"call sites not read: {_why(exc)}"))
            continue
        for site in sites:
            found[f"{site.entry.path}::{site.entry.qualname}"].append(site)
    batchy: dict[int, bool] = {}
    return {key: [CallSite(path=s.path, line=s.line, source=s.source, args=s.args, hooks=s.driven(batchy))
                  for s in sorted(sites, key=lambda s: s.order)[:MAX_SITES]] for key, sites in found.items()}


def _why(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return f"does not parse: {exc.msg} (line {exc.lineno})"
    return f"{type(exc).__name__}: {str(exc)[:200]}"


def _parse(text: str) -> ast.Module:
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT  # notebooks may `await` at the top
    return cast(ast.Module, compile(text, "<callsites>", "exec", flags, dont_inherit=True))


def _normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_units(root: Path, entry_paths: set[str], skipped: list[tuple[str, str]], budget: Budget) -> list[Unit]:
    units: list[Unit] = []
    left, files = MAX_TOTAL_CHARS, 0
    for rel in checkout.walk(root, checkout.Walk(skipped), skip_dir=lambda n: n in SKIP_DIRS or n.startswith(".")):
        kind = rel.rpartition(".")[2]
        if kind not in ("py", "ipynb") and not (kind == "md" and "/" not in rel):
            continue
        files += 1
        if files > MAX_FILES or left <= 0:
            skipped.append((rel, "not read for call sites: past the scan's caps on files and bytes"))
            continue
        if budget.over(rel):
            skipped.append((rel, "not read for call sites: the repository's analysis budget was spent"))
            continue
        try:
            text = _normalise(checkout.read_text(root, rel, MAX_NOTEBOOK_BYTES if kind == "ipynb" else MAX_FILE_BYTES))
            left -= len(text)
            if kind == "py":
                units.append(_py_unit(rel, text, entry_paths))
            elif kind == "ipynb":
                units.extend(_notebook_units(rel, text, skipped))
            else:
                units.extend(_markdown_units(rel, text, skipped))
        except checkout.Refused as exc:
            skipped.append((rel, exc.reason))
        except HOSTILE_TEXT as exc:
            skipped.append((rel, _why(exc)))
    return units


def _py_unit(rel: str, text: str, entry_paths: set[str]) -> Unit:
    tree = _parse(text)
    folders, name = set(rel.split("/")[:-1]), rel.rpartition("/")[2]
    main = any(isinstance(s, ast.If) and isinstance(s.test, ast.Compare) and any(
        isinstance(c, ast.Constant) and c.value == "__main__" for c in s.test.comparators) for s in tree.body)
    source: Source
    if folders & {"tests", "test", "testing"} or name.startswith("test_") or name.endswith("_test.py") \
            or name == "conftest.py":
        source = "test"
    elif main or rel not in entry_paths or folders & {"scripts", "examples"}:
        source = "script"
    else:
        source = "module"
    return Unit(rel, source, text, tree, module=module_name(Path(rel)), package=name == "__init__.py")


def _notebook_units(rel: str, text: str, skipped: list[tuple[str, str]]) -> list[Unit]:
    """The code cells joined into one module (a notebook shares one namespace), magics blanked."""
    doc = json.loads(text)
    cells = doc.get("cells") if isinstance(doc, dict) else None
    if not isinstance(cells, list):
        raise ValueError("not a notebook: no list of cells")
    chunks: list[str] = []
    starts: list[tuple[int, int]] = []
    line = 1
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        raw = cell.get("source", "")
        raw = "".join(s for s in raw if isinstance(s, str)) if isinstance(raw, list) else raw
        if not isinstance(raw, str):
            continue
        code = "\n".join("" if s.lstrip().startswith(("%", "!")) else s for s in _normalise(raw).split("\n"))
        try:
            _parse(code)
        except HOSTILE_TEXT as exc:
            skipped.append((f"{rel}#cell-{number}", _why(exc)))
            continue
        chunks.append(code)
        starts.append((line, number))
        line += code.count("\n") + 1
    joined = "\n".join(chunks)
    return [Unit(rel, "notebook", joined, _parse(joined), cells=starts)] if chunks else []


def _markdown_units(rel: str, text: str, skipped: list[tuple[str, str]]) -> list[Unit]:
    units = []
    for number, match in enumerate(_FENCE.finditer(text), 1):
        code = textwrap.dedent(match.group(2))
        lines = code.split("\n")
        if any(s.startswith(">>>") for s in lines):  # a doctest: keep the prompts, drop the output
            code = "\n".join(s[4:] if s.startswith((">>> ", "... ")) else "" for s in lines)
        try:
            units.append(Unit(rel, "readme", code, _parse(code), block=number))
        except HOSTILE_TEXT as exc:
            skipped.append((f"{rel}#block-{number}", _why(exc)))
    return units


def _repo(units: list[Unit], entries: Sequence[Entry]) -> _Repo:
    by_name: dict[str, list[Entry]] = {}
    methods: dict[tuple[str, str], list[Entry]] = {}
    for e in entries:
        if e.kind == "method" and "." in e.qualname:
            owner, _, method = e.qualname.rpartition(".")
            methods.setdefault((owner.rpartition(".")[2], method), []).append(e)
        elif e.kind != "method":
            by_name.setdefault(e.name, []).append(e)
    bases: dict[str, set[str]] = {}
    below: dict[str, set[str]] = {}  # a base's name -> the classes naming it among their bases
    functions: set[str] = set()
    for unit in units:
        functions.update(n.name for n in unit.tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
        for node in ast.walk(unit.tree):
            if isinstance(node, ast.ClassDef):
                named = {(_dotted(b) or "").rpartition(".")[2] for b in node.bases}
                bases.setdefault(node.name, set()).update(named)
                for base in named:
                    below.setdefault(base, set()).add(node.name)

    def subclasses(seeds: set[str]) -> set[str]:
        """The classes with a seed or one of these classes among their bases, at any depth: each class and each
        base visited once (the fixed point over every class, grown a class a round, was cubic in a chain)."""
        found: set[str] = set()
        pending = list(seeds)
        visited = set(seeds)
        while pending:
            for name in below.get(pending.pop(), ()):
                found.add(name)
                if name not in visited:
                    visited.add(name)
                    pending.append(name)
        return found

    return _Repo(by_name, methods, subclasses({"Module", "LightningModule", "PreTrainedModel"}),
                 subclasses({"Dataset", "IterableDataset"}), functions, functions | set(bases))


def _named(full: str | None) -> str | None:
    return next((kind for kind, pattern in _CALLS if pattern.fullmatch(full)), None) if full else None


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


def _literal(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant | ast.UnaryOp | ast.List | ast.Tuple | ast.Dict):
        try:
            value = ast.literal_eval(node)
        except (*HOSTILE_TEXT, AttributeError):
            return _MISSING
        if _plain(value) and len(repr(value)) <= 4000:
            return value
    return _MISSING


def _plain(v: Any) -> bool:
    if isinstance(v, list | tuple):
        return all(_plain(x) for x in v)
    if isinstance(v, dict):
        return all(isinstance(k, str) and _plain(x) for k, x in v.items())
    return v is None or isinstance(v, int | float | str | bool)


def _score(module: str, target: str) -> int:
    """How well an imported module names an entry's: 2 as its tail (src layouts), 1 as a package on the way."""
    m, t = module.split("."), target.split(".")
    if not module:
        return 0
    if t[-len(m):] == m:
        return 2
    return 1 if any(t[i:i + len(m)] == m for i in range(len(t))) else 0


def _rank(call: ast.Call, full: str, last: str) -> int | None:
    if last in ("arange", "linspace"):
        return 1
    if last == "eye":
        return 2
    if last in ("array", "asarray", "tensor", "as_tensor") and call.args:
        depth, node = 0, call.args[0]
        while isinstance(node, ast.List | ast.Tuple) and node.elts:
            depth, node = depth + 1, node.elts[0]
        return depth or None
    size = next((k.value for k in call.keywords if k.arg in ("size", "shape")), None)
    args = call.args
    if size is None and args:
        if (full.startswith("torch.") or last in ("rand", "randn")) and last not in ("randint", "full") \
                and len(args) > 1 and not any(isinstance(a, ast.Tuple | ast.List) for a in args):
            return len(args)
        if last in ("zeros", "ones", "empty", "full", "random", "rand", "randn", "random_sample"):
            size = args[0]
        elif last == "randint" or (last in ("normal", "uniform") and len(args) >= 3):
            size = args[-1] if isinstance(args[-1], ast.Tuple | ast.List) or len(args) >= 3 else None
    if isinstance(size, ast.Tuple | ast.List):
        return len(size.elts)
    return 1 if isinstance(size, ast.Constant) and isinstance(size.value, int) else None


def _argparse_defaults(tree: ast.Module) -> dict[str, Any]:
    """dest -> default as argparse would fill it, from the file's `add_argument`/`set_defaults` calls."""
    calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    and n.func.attr in ("add_argument", "set_defaults")), key=lambda n: (n.lineno, n.col_offset))
    out: dict[str, Any] = {}
    later: dict[str, Any] = {}
    for call in calls:
        kws = {k.arg: k.value for k in call.keywords if k.arg}
        if cast(ast.Attribute, call.func).attr == "set_defaults":
            later.update({k: _value(v) for k, v in kws.items()})
            continue
        names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        dest = _value(kws["dest"]) if "dest" in kws else next((n[2:] for n in names if n.startswith("--")), None)
        dest = dest or next((n.lstrip("-") for n in names), None)
        if not isinstance(dest, str) or not dest:
            continue
        action = _value(kws["action"]) if "action" in kws else None
        default = _value(kws["default"]) if "default" in kws else {"store_true": False, "store_false": True}.get(
            action) if isinstance(action, str) else None
        kind = kws.get("type")
        if isinstance(default, str) and isinstance(kind, ast.Name) and kind.id in ("int", "float"):
            try:
                default = int(default) if kind.id == "int" else float(default)
            except ValueError:
                pass
        out[dest.replace("-", "_")] = default
    return {**out, **later}


def _value(node: ast.AST) -> Any:
    value = _literal(node)
    return None if value is _MISSING else value


class _Scan:
    """One unit's calls, with the scopes, loops and assignments around them."""

    def __init__(self, unit: Unit, repo: _Repo) -> None:
        self.unit, self.repo = unit, repo
        self.lines = unit.text.split("\n")
        self.imports, self.stars = self._import_table()
        self.defs = {n.name: n for n in unit.tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
        self.assigns: dict[ast.AST, dict[str, list[_Assign]]] = {}
        self.loops: dict[ast.AST, list[ast.stmt]] = {}
        self.binds: dict[ast.Call, tuple[str, int]] = {}  # a constructor call -> the name (or self.attr) it is bound to
        self.calls: list[tuple[ast.Call, _Ctx]] = []
        self.defaults = _argparse_defaults(unit.tree)
        for stmt in unit.tree.body:
            self._visit(stmt, _Ctx(unit.tree))
        # Read once per unit, asked per call: each would otherwise rescan the file or a scope.
        self._kinds: dict[tuple[ast.AST, ast.AST, int, int], _Kind] = {}
        self._lines_of: dict[tuple[ast.AST, str], list[int] | None] = {}
        self._encoded: dict[int, bytes] = {}
        self._params: dict[ast.AST, frozenset[str]] = {}
        self._returns: dict[ast.AST, list[ast.Return]] = {}
        self._targets: dict[str, list[Entry]] = {}
        self._after: dict[ast.AST, tuple[list[int], list[int]]] = {}

    def _import_table(self) -> tuple[dict[str, str], list[str]]:
        table: dict[str, str] = {}
        stars: list[str] = []
        mod = self.unit.module
        package = (mod.split(".") if self.unit.package else mod.split(".")[:-1]) if mod else None
        for node in ast.walk(self.unit.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    table[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                if node.level and (package is None or node.level > len(package) + 1):
                    continue
                base = ".".join([*package[:len(package) - node.level + 1], *([node.module] if node.module else [])]) \
                    if node.level and package is not None else node.module or ""
                for a in node.names:
                    if a.name == "*":
                        stars.append(base)
                    else:
                        table[a.asname or a.name] = f"{base}.{a.name}" if base else a.name
        return table, stars

    def _visit(self, node: ast.AST, ctx: _Ctx) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            inner = _Ctx(node)
            for child in [node.body] if isinstance(node, ast.Lambda) else node.body:
                self._visit(child, inner)
            return
        if isinstance(node, ast.For | ast.AsyncFor | ast.While):
            self.loops.setdefault(ctx.scope, []).append(node)
            self._visit(node.test if isinstance(node, ast.While) else node.iter, ctx)
            if not isinstance(node, ast.While):
                self._bind(node.target, ctx.scope, node.lineno, node.iter, True)
            for child in node.body:
                self._visit(child, ctx._replace(loops=(*ctx.loops, node)))
            for child in node.orelse:
                self._visit(child, ctx)
            return
        if isinstance(node, ast.If):
            self._visit(node.test, ctx)
            for child in node.body + node.orelse:
                self._visit(child, ctx._replace(ifs=(*ctx.ifs, (node, len(ctx.loops)))))
            return
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                self._bind(target, ctx.scope, node.lineno, node.value)
            core = _unchain(node.value)
            key = _dotted(targets[0]) if len(targets) == 1 else None
            if isinstance(core, ast.Call) and key and (key.count(".") == 0 or key.startswith("self.")
                                                       and key.count(".") == 1):
                self.binds[core] = (key, node.lineno)
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                if item.optional_vars is not None:
                    self._bind(item.optional_vars, ctx.scope, node.lineno, item.context_expr)
        elif isinstance(node, ast.Call):
            self.calls.append((node, ctx))
        for sub in ast.iter_child_nodes(node):
            self._visit(sub, ctx)

    def _bind(self, target: ast.AST, scope: ast.AST, line: int, value: ast.expr, loop: bool = False,
              path: tuple[int, ...] = ()) -> None:
        if isinstance(target, ast.Name):
            self.assigns.setdefault(scope, {}).setdefault(target.id, []).append(_Assign(line, value, path, loop))
        elif isinstance(target, ast.Tuple | ast.List):
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Starred):
                    break
                self._bind(elt, scope, line, value, loop, (*path, i))

    def _last(self, name: str, scope: ast.AST, line: int) -> _Assign | None:
        """The last assignment of `name` in `scope` on a line before `line` (else a global's last)."""
        found = None
        assigned = self.assigns.get(scope, {}).get(name, [])
        if assigned:
            key = (scope, name)
            if key not in self._lines_of:  # assignments are recorded in source order; bisect them when they are
                lines = [a.line for a in assigned]
                self._lines_of[key] = lines if all(a <= b for a, b in zip(lines, lines[1:])) else None
            lines_of = self._lines_of[key]
            if lines_of is None:
                found = next((a for a in reversed(assigned) if a.line < line), None)
            elif (at := bisect_left(lines_of, line)) > 0:
                found = assigned[at - 1]
        if found is None and scope is not self.unit.tree:  # a global, set before the function runs
            found = next(reversed(self.assigns.get(self.unit.tree, {}).get(name, [])), None)
        return found

    def _row(self, index: int) -> bytes:
        row = self._encoded.get(index)
        if row is None:
            row = self._encoded[index] = self.lines[index].encode("utf-8") if index < len(self.lines) else b""
        return row

    def text(self, node: ast.expr) -> str:
        """The node's source (13 lines at most, `MAX_TEXT` characters), read from lines encoded once and from no
        more of them than it shows: a long line is not copied per call made on it."""
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        rows: list[bytes | memoryview] = [memoryview(self._row(i)) for i in range(first, min(last, first + 12) + 1)
                                          if i < len(self.lines)]
        if not rows:
            return ""
        if last < first + 12:
            rows[-1] = rows[-1][:node.end_col_offset]
        rows[0] = rows[0][node.col_offset:]
        enough = 4 * MAX_TEXT + 4  # bytes: more than MAX_TEXT characters of UTF-8, whatever they are
        taken, size = [], 0
        for row in rows:
            taken.append(row[:enough - size])
            size += len(taken[-1]) + 1
            if size >= enough:
                break
        out = b"\n".join(taken).decode("utf-8", "replace")
        return out if len(out) <= MAX_TEXT else out[:MAX_TEXT - 1] + "\u2026"

    def _full(self, node: ast.AST) -> str | None:
        dotted = _dotted(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        head = self.imports.get(head) or _ALIASES.get(head, head)
        return f"{head}.{rest}" if rest else head

    def trace(self, node: ast.expr, scope: ast.AST, line: int,
              depth: int = 0) -> tuple[ast.expr, int | None, _Kind | None]:
        """The expression a name was last assigned from, a few hops back; a kind when it is one
        element of an unpacking whose element kinds are known (`for x, y in loader`)."""
        origin_line = None
        for _ in range(MAX_HOPS):
            found = self._last(node.id, scope, line) if isinstance(node, ast.Name) else None
            if found is None:
                break
            origin_line = line = found.line
            value: ast.expr = found.value
            path = list(found.path)
            if found.loop:
                if isinstance(value, ast.Call) and _dotted(value.func) == "enumerate" and value.args and path:
                    if path.pop(0) == 0:
                        return found.value, origin_line, _NONE
                    value = value.args[0]
                batches = self.kind(value, scope, line, depth + 1)[0] in ("loader", "dataset")
                kind = ("tensor", "labels")[path[0]] if batches and len(path) == 1 and path[0] < 2 else None
                return found.value, origin_line, (kind, None, None)
            while path and isinstance(value, ast.Tuple | ast.List) and path[0] < len(value.elts):
                value = value.elts[path.pop(0)]
            if path:
                known = path == [0] and isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                    and value.func.attr == "parse_known_args"
                return value, origin_line, ("namespace", dict(self.defaults), None) if known else _NONE
            node = value
        return node, origin_line, None

    def kind(self, node: ast.expr, scope: ast.AST, line: int, depth: int = 0) -> _Kind:
        """What the expression holds, read a few hops back. Asked again for the same node, scope, line and depth
        (16 keys of a dict each naming the same variable, at each of 4 depths), it is answered from what was read."""
        key = (node, scope, line, depth)
        found = self._kinds.get(key)
        if found is None:
            found = self._kinds[key] = self._kind(node, scope, line, depth)
        kind, value, rank = found
        if isinstance(value, dict | list):  # each answer its own container, as when it was read anew
            return kind, type(value)(value), rank
        return found

    def _kind(self, node: ast.expr, scope: ast.AST, line: int, depth: int) -> _Kind:
        if depth > 4:
            return _NONE
        if isinstance(node, ast.Name):
            origin, origin_line, fixed = self.trace(node, scope, line, depth)
            if fixed is not None:
                return fixed
            if origin is not node:
                return self.kind(origin, scope, origin_line or line, depth + 1)
            if node.id in self._parameters(scope):
                return _NONE  # a parameter: what its callers pass is another call site
            if node.id in self.repo.functions or node.id in self.defs:
                return ("callable", None, None)
            return ("loss", None, None) if _named(self._full(node)) == "loss" else _NONE
        value = _literal(node)
        if value is not _MISSING:
            return ("mapping", value, None) if isinstance(node, ast.Dict) else ("literal", value, None)
        if isinstance(node, ast.Dict) and node.keys and len(node.keys) <= 16 and all(
                isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys):
            return ("record", {k.value: self.kind(v, scope, line, depth + 1)[0]  # type: ignore[union-attr]
                               for k, v in zip(node.keys, node.values)}, None)
        if isinstance(node, ast.Dict | ast.DictComp):
            return ("mapping", None, None)
        if isinstance(node, ast.List | ast.Tuple | ast.Set | ast.ListComp | ast.SetComp | ast.GeneratorExp):
            return ("sequence", None, None)
        if isinstance(node, ast.Lambda):
            return ("callable", None, None)
        if isinstance(node, ast.JoinedStr):
            tail = node.values[-1] if node.values else None
            ext = isinstance(tail, ast.Constant) and re.search(r"\.[A-Za-z0-9]{1,6}$", str(tail.value))
            return ("path", None, None) if ext else _NONE
        if isinstance(node, ast.IfExp):
            if all(isinstance(b, ast.Constant) and b.value in _DEVICES for b in (node.body, node.orelse)):
                return ("device", None, None)
            return self.kind(node.body, scope, line, depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return ("path", None, None) if self.kind(node.left, scope, line, depth + 1)[0] == "path" else _NONE
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Call) \
                and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "parse_known_args":
            return ("namespace", dict(self.defaults), None)
        if isinstance(node, ast.Attribute):
            if node.attr in ("logits", "device"):
                return (node.attr, None, None)
            if _named(self._full(node)) == "loss":  # `criterion=F.cross_entropy`
                return ("loss", None, None)
            if isinstance(node.value, ast.Name) and self.kind(node.value, scope, line, depth + 1)[0] == "namespace":
                default = self.defaults.get(node.attr)
                return ("literal", default, None) if default is not None else _NONE
            return _NONE
        return self._call_kind(node, scope, line, depth) if isinstance(node, ast.Call) else _NONE

    def _call_kind(self, call: ast.Call, scope: ast.AST, line: int, depth: int) -> _Kind:
        func = call.func
        if isinstance(func, ast.Attribute):
            if func.attr == "parse_args":
                return ("namespace", dict(self.defaults), None)
            if func.attr in _CHAIN or func.attr == "numpy":
                kind, _, rank = self.kind(func.value, scope, line, depth + 1)
                if func.attr == "numpy" and kind in ("tensor", "probs", "logits", "labels"):
                    return ("array" if kind == "tensor" else kind, None, rank)
                return (kind, None, rank) if kind in ("model", "tensor", "array", "probs", "logits", "labels") else _NONE
            namespace = (self._full(func) or "").startswith(("torch.", "numpy.", "scipy.", "jax."))
            if func.attr in ("softmax", "sigmoid", "argmax") and not namespace:
                return ("labels" if func.attr == "argmax" else "probs", None, None)
            if func.attr == "from_pretrained" and not re.search(r"Token|Process|Config|Feature", self.text(func)):
                return ("model", None, None)
        full = self._full(func) or ""
        last = full.rpartition(".")[2]
        if not full:
            return _NONE
        found = _named(full)
        if last in self.repo.defined:  # the repository's own `models.build` or `MyDataLoader` is read from its code
            found = "dataset" if last in self.repo.datasets else "model" if last in self.repo.models else \
                found if found not in ("loader", "dataset", "model") else None
        if found:
            return (found, None, _rank(call, full, last) if found in ("array", "tensor") else None)
        if last == "Namespace":
            given = {k.arg: _value(k.value) for k in call.keywords if k.arg}
            return ("namespace", {**self.defaults, **given}, None)
        if isinstance(func, ast.Name):
            defined = self.defs.get(func.id)
            if isinstance(defined, ast.FunctionDef):  # a helper of this file: what does it return?
                returns = self._returns.get(defined)
                if returns is None:
                    returns = self._returns[defined] = [n for n in ast.walk(defined)
                                                        if isinstance(n, ast.Return) and n.value is not None][:3]
                for ret in returns[:3]:
                    returned = self.kind(cast(ast.expr, ret.value), defined, ret.lineno, depth + 1)
                    if returned[0] is not None:
                        return returned
            if self.kind(func, scope, line, depth + 1)[0] == "model":
                return ("logits", None, None)
        return _NONE

    def _parameters(self, scope: ast.AST) -> frozenset[str]:
        found = self._params.get(scope)
        if found is None:
            params = scope.args if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef) else None
            found = self._params[scope] = frozenset(a.arg for a in (*params.posonlyargs, *params.args,
                                                                    *params.kwonlyargs)) if params else frozenset()
        return found

    def evidence(self, param: str, arg: ast.expr, scope: ast.AST, line: int) -> ArgEvidence:
        origin, origin_line, fixed = self.trace(arg, scope, line)
        kind, value, rank = fixed if fixed is not None else self.kind(origin, scope, origin_line or line)
        return ArgEvidence(param=param, expression=self.text(arg), origin=self.text(origin),
                           origin_line=self.unit.where(origin_line)[1] if origin_line else None,
                           kind=cast(ArgKind | None, kind), value=value, rank=rank)

    def bind_args(self, call: ast.Call, params: list[Param] | None, scope: ast.AST) -> list[ArgEvidence]:
        """Arguments by the parameter they bind to; with no known signature, keywords by their names."""
        positional = [p.name for p in params or [] if p.kind in _POSITIONAL]
        pairs = []
        for i, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                break
            if i < len(positional):
                pairs.append((positional[i], arg))
        named = None if params is None else {p.name for p in params
                                             if p.kind in ("positional_or_keyword", "keyword_only")}
        pairs += [(k.arg, k.value) for k in call.keywords if k.arg and (named is None or k.arg in named)]
        return [self.evidence(name, value, scope, call.lineno) for name, value in pairs]

    def targets(self, func: ast.expr) -> list[Entry]:
        """Entries a call's function names: imported, defined here, star-imported, or unique by name. Found once
        per name in a unit (`run` drops those that can take no more sites)."""
        dotted = _dotted(func)
        if dotted is None:
            return []
        found = self._targets.get(dotted)
        if found is None:
            found = self._targets[dotted] = self._find(dotted)
        return found

    def _find(self, dotted: str) -> list[Entry]:
        head, _, rest = dotted.partition(".")
        name = dotted.rpartition(".")[2]
        candidates = self.repo.by_name.get(name, [])
        if not candidates:
            return []
        if head in self.imports:
            full = self.imports[head] + (f".{rest}" if rest else "")
            return self.repo.names.imported(name, full.rpartition(".")[0])
        if rest:
            return []
        if head in self.defs:
            return self.repo.names.in_file(name, self.unit.file)
        starred = self.repo.names.starred(name, self.stars) if self.stars else []
        return starred or (candidates if len(candidates) == 1 else [])

    def site(self, entry: Entry, call: ast.Call, params: list[Param] | None, scope: ast.AST) -> _Site:
        path, line = self.unit.where(call.lineno)
        return _Site(entry, (SOURCE_ORDER[self.unit.source], self.unit.file, self.unit.block, call.lineno,
                             call.col_offset), path, line, self.unit.source, self.bind_args(call, params, scope))

    def run(self, budget: Budget | None = None) -> list[_Site]:
        """The unit's sites, in the order of its calls; past the `budget`, those found so far."""
        out: list[_Site] = []
        bound: dict[tuple[ast.AST | None, str], _Bound] = {}
        count: dict[str, int] = {}

        def full(entry: Entry) -> bool:
            count[entry.qualname] = count.get(entry.qualname, 0) + 1
            return count[entry.qualname] > MAX_SITES

        for number, (call, ctx) in enumerate(sorted(self.calls, key=lambda c: (c[0].lineno, c[0].col_offset))):
            if budget is not None and number % 256 == 0 and budget.over(f"{self.unit.where(call.lineno)[0]}"):
                break
            if self._hook(call, ctx, bound, out, full):
                continue
            found = self.targets(call.func)
            spent = False
            for entry in found:
                inside = self.unit.file == entry.path and entry.lineno <= call.lineno <= entry.end_lineno
                if inside or full(entry):
                    spent = spent or count.get(entry.qualname, 0) > MAX_SITES
                    continue
                params = (entry.params or None) if entry.kind == "class" else _drop_self(entry)
                out.append(site := self.site(entry, call, params, ctx.scope))
                key, line = self.binds.get(call, ("", 0))
                if entry.kind == "class" and key:
                    bound[(None if key.startswith("self.") else ctx.scope, key)] = _Bound(site, line, ctx)
            if spent:  # an entry past MAX_SITES stays there (its count only grows): later calls need not look at it
                dotted = cast(str, _dotted(call.func))
                self._targets[dotted] = [e for e in found if count.get(e.qualname, 0) <= MAX_SITES]
        return out

    def _hook(self, call: ast.Call, ctx: _Ctx, bound: dict[tuple[ast.AST | None, str], _Bound],
              out: list[_Site], full: Any) -> bool:
        func = call.func
        receiver, method = (func.value, func.attr) if isinstance(func, ast.Attribute) else (func, "__call__")
        key = _dotted(receiver)
        if not key or (method.startswith("_") and method != "__call__"):
            return False
        b = bound.get((None, key)) if key.startswith("self.") else \
            bound.get((ctx.scope, key)) or bound.get((self.unit.tree, key))
        if b is None:
            return False
        if isinstance(receiver, ast.Name):  # rebound to something else since?
            last = self._last(receiver.id, b.ctx.scope, call.lineno)
            core = _unchain(last.value) if last is not None else None
            chained = isinstance(core, ast.Name) and core.id == receiver.id
            if last is not None and last.line != b.line and not chained:
                return False
        entry = b.site.entry
        params = entry.method_params.get("forward" if method == "__call__" else method)
        if len(b.site.hooks) < MAX_HOOKS:
            b.site.hooks.append(HookCall(method=method, line=self.unit.where(call.lineno)[1],
                                         cadence=self._cadence(call, ctx, b),
                                         args=[_counted(a, ctx.loops) for a in self.bind_args(call, params, ctx.scope)]))
            b.site.loops.append(ctx.loops)
        for m in self.repo.methods.get((entry.name, method), []):
            if m.path == entry.path and not full(m):
                out.append(self.site(m, call, _drop_self(m), ctx.scope))
        return True

    def _cadence(self, call: ast.Call, ctx: _Ctx, b: _Bound) -> Cadence:
        same = b.ctx.scope is ctx.scope
        loops = [loop for loop in ctx.loops if not (same and any(loop is o for o in b.ctx.loops))]
        if loops:
            if any(self._batchy(loop, ctx.scope) for loop in loops):  # a loop over seeds or folds is no batch loop
                return "per_batch"
            outer = len(ctx.loops) - len(loops)
            target = loops[0].target if isinstance(loops[0], ast.For | ast.AsyncFor) else None
            names = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)} if target else set()
            for test in (i.test for i, d in ctx.ifs if d > outer):
                if any(isinstance(n, ast.Name) and (n.id in names or "epoch" in n.id.lower()) for n in ast.walk(test)):
                    return "chosen_epochs"
            return "per_epoch"
        ends, starts = self._loops_ended(ctx.scope)
        before = bisect_left(ends, call.lineno)  # the loops of the scope that end before the call
        after = before > 0 and (not same or starts[before - 1] > b.line)  # one of them begins after the binding
        return "once_after_loop" if after else "once"

    def _loops_ended(self, scope: ast.AST) -> tuple[list[int], list[int]]:
        """The scope's loops by the line they end on: those lines, sorted, and the latest line any of the first k
        begins on, for each k."""
        found = self._after.get(scope)
        if found is None:
            spans = sorted(((loop.end_lineno or loop.lineno), loop.lineno) for loop in self.loops.get(scope, []))
            starts, latest = [], 0
            for _, start in spans:
                latest = max(latest, start)
                starts.append(latest)
            found = self._after[scope] = ([end for end, _ in spans], starts)
        return found

    def _batchy(self, loop: ast.stmt, scope: ast.AST) -> bool:
        if not isinstance(loop, ast.For | ast.AsyncFor):
            return False
        over = loop.iter
        while isinstance(over, ast.Call) and _dotted(over.func) in ("enumerate", "tqdm", "tqdm.tqdm", "iter") \
                and over.args:
            over = over.args[0]
        if _BATCHY.search(f"{self.text(over)} {self.text(loop.target)}".lower()):
            return True
        return self.kind(over, scope, loop.lineno)[0] in ("loader", "dataset")


def _counted(arg: ArgEvidence, loops: Sequence[ast.stmt]) -> ArgEvidence:
    """A hook's argument that is the counter of a loop around it (`iteration=i` in `for i in range(1, nest)`): the
    loop's progress, with the number it starts from."""
    for loop in loops:
        if not isinstance(loop, ast.For | ast.AsyncFor):
            continue
        over = loop.iter
        if isinstance(over, ast.Call) and _dotted(over.func) == "range" and over.args and not over.keywords \
                and isinstance(loop.target, ast.Name) and loop.target.id == arg.expression:
            start = _literal(over.args[0]) if len(over.args) > 1 else 0
            if isinstance(start, int) and not isinstance(start, bool):
                return arg.model_copy(update={"kind": "counter", "value": start, "origin": ast.unparse(over)})
    return arg


def _unchain(value: ast.expr) -> ast.expr | None:
    """The constructor call under `.to(device).eval()`-style chains, or the name such a chain rebinds."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _CHAIN:
        value = value.func.value
    return value if isinstance(value, ast.Call | ast.Name) else None


def _drop_self(entry: Entry) -> list[Param]:
    params = list(entry.params)
    if entry.kind == "method" and params and params[0].name in ("self", "cls"):
        params = params[1:]
    return params
