"""What decides `paperproof verify`'s results beyond each run's request, for its two cache keys.

A run's cache key (`runner.executor.RunRequest.cache_key`, the build's) holds the entry's code, its closure, the
content of every module of the checkout the closure may import, the fixtures, the limits and the repository's
environment. A checkout on an author's disk changes under it between two runs in ways a harvested snapshot does
not, so `verify` folds in the rest of what a run depends on (`run_digest`):

- paperproof's verdict code (`catalogue.shipped.code_fingerprint`): a result made by other runner, fixture or
  verify code is not this code's;
- the interpreter and every package installed beside the runner (the sandbox imports them all);
- the checkout's files that are not Python modules (data, checkpoints, configuration the code may open), by path,
  size and modification time: hashing a checkpoint of gigabytes on every run would cost what the cache saves.
  Modules count through the imports of each entry's closure, so editing one module reruns only the entries that
  import it. Version control and tool caches (`.git`, `__pycache__`, …) are left out: the code never reads them.

Judging a run costs seconds of its own (the planted training run is trained on the host), so an unchanged checkout
is answered whole, from the samples of the last verify with the same arguments (`verify_digest`): that key holds
every file of the checkout, modules too (call sites, scripts and notebooks decide the fixtures), its commit, all of
paperproof's code (extraction and selection decide which entries run), the environment and the arguments. Any
change falls through to the runs' keys, which rerun only what the change reaches.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from importlib import metadata
from pathlib import Path

import paperproof
from paperproof.catalogue import checkout
from paperproof.catalogue.shipped import code_fingerprint

# Folders written by version control and tools beside the code, never read by it.
NOT_READ = frozenset({".git", ".hg", ".svn", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox",
                      ".nox", ".ipynb_checkpoints"})
# Of paperproof's own folders, those verify never runs (data, and the site's templates).
NOT_CODE = frozenset({"snapshot", "templates", "__pycache__"})


def runner_inputs() -> list[str]:
    """The verdict code's fingerprint, the interpreter, and every distribution installed for it."""
    installed = sorted({f"{(d.metadata['Name'] or '').lower()}=={d.version}" for d in metadata.distributions()})
    return [f"verdict code {code_fingerprint()}", f"python {sys.version} {platform.machine()}", *installed]


def checkout_files(root: Path, modules: bool = False) -> list[str]:
    """`path size mtime_ns` of every regular file of the checkout (its Python modules only with `modules`), in path
    order, walked without following links as every reader of a checkout is."""
    found = []
    for rel in checkout.walk(root, checkout.Walk(skipped=[]), skip_dir=lambda name: name in NOT_READ):
        if rel.endswith(".py") and not modules:
            continue
        try:
            info = os.lstat(os.path.join(root, rel))
        except OSError:
            continue
        found.append(f"{rel} {info.st_size} {info.st_mtime_ns}")
    return found


def package_code() -> str:
    """sha256 over paperproof's own Python files (path and bytes, in path order)."""
    package = Path(paperproof.__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package)
        if NOT_CODE.intersection(rel.parts):
            continue
        data = path.read_bytes()
        h.update(f"{rel.as_posix()}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def _sha256(parts: list[str]) -> str:
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def run_digest(root: Path, runner: list[str]) -> str:
    """What else decides each run of the checkout at `root` (`runner`: `runner_inputs()`): part of each of its
    runs' cache keys."""
    return _sha256([*runner, *checkout_files(root)])


def verify_digest(root: Path, runner: list[str], commit: str | None, arguments: dict) -> str:
    """What decides every sample a verify of the checkout at `root` gives: its files (modules too) and commit,
    paperproof's code, the interpreter and its packages, and `arguments` (the selection, the limits, the
    environment the checkout's imports were installed into), JSON-encoded."""
    return _sha256([f"paperproof {package_code()}", *runner, f"commit {commit}",
                    json.dumps(arguments, sort_keys=True, default=str), *checkout_files(root, modules=True)])
