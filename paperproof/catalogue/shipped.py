"""Verification records shipped as data: what paperproof found in a repository's code, without the code.

A build that has no source for a repository can still show what a run of paperproof made of it at a pinned
commit: the repository's record (commit, licence), its samples (entry, path, line range, code sha256, status,
contract, fidelity, fixtures and outputs) and the environment they ran in. The samples are the typed
`Sample` records, serialised as they are, less every field that holds the repository's text (its code,
docstring and signature: only the code's sha256 is kept). `made_by` names the paperproof version and the
fingerprint of the code that produced the verdicts (`code_fingerprint`), so that a build whose fixture,
runner or verify code differs says the records are stale.

Layout of a results folder (the bundled one is `paperproof/snapshot/results/`):

    <host>/<owner+name>.json    one `ShippedRepo`, deterministic JSON
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from paperproof.catalogue.repo_record import RepoRecord
from paperproof.catalogue.repo_url import RepoKey
from paperproof.catalogue.sample import Sample

FORMAT: Literal[1] = 1
# What decides a verdict: the fixtures a sample is given, how it is run, how its run is judged.
VERDICT_CODE = ("fixtures", "runner", "verify")
# Sample fields that hold the repository's own text: never shipped.
SOURCE_TEXT_FIELDS = ("source", "docstring", "signature")
RESULTS_MAX_BYTES = 16 << 20


class MadeBy(BaseModel):
    """What produced a set of shipped records: the paperproof version and the fingerprint of its verdict code."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    paperproof: str
    code: str  # `code_fingerprint()` when the records were made
    command: str  # how they were made, with the checkouts folder as DIR


class RunEnvironment(BaseModel):
    """Where the samples ran: the interpreter, the platform, the runner's packages, and what was installed
    for this repository (`runner.environment`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    python: str
    platform: str
    packages: dict[str, str] = Field(default_factory=dict)
    installed: list[str] = Field(default_factory=list)
    not_installed: dict[str, str] = Field(default_factory=dict)


class ShippedRepo(BaseModel):
    """One repository's shipped verification records."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: Literal[1] = FORMAT
    made_by: MadeBy
    environment: RunEnvironment
    record: RepoRecord
    samples: list[Sample] = Field(default_factory=list)


class NotShippable(ValueError):
    """A shipped record that holds source text, or a record that cannot be shipped; names the record."""


def code_fingerprint(package: Path | None = None) -> str:
    """sha256 over every file of paperproof's fixture, runner and verify packages (path and bytes, in path
    order; caches left out): what changes when a verdict could change."""
    root = package if package is not None else Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for folder in VERDICT_CODE:
        base = root / folder
        files = sorted(p for p in base.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                       and p.suffix not in (".pyc", ".pyo"))
        for path in files:
            data = path.read_bytes()
            h.update(f"{path.relative_to(root).as_posix()}\0{len(data)}\0".encode())
            h.update(data)
    return h.hexdigest()


def without_source(sample: Sample) -> Sample:
    """The sample as it may be shipped: its code, docstring and signature removed (the sha256 stays)."""
    return sample.model_copy(update={"source": None, "docstring": None, "signature": ""})


def check_no_source(shipped: ShippedRepo, name: str) -> None:
    for sample in shipped.samples:
        held = [f for f in SOURCE_TEXT_FIELDS if getattr(sample, f)]
        if held:
            raise NotShippable(f"{name}: sample {sample.sample_id} ({sample.path}::{sample.qualname}) holds the "
                               f"repository's text in {', '.join(held)}; shipped records keep only its sha256")
    if shipped.record.snapshot is not None:
        raise NotShippable(f"{name}: the record names a snapshot ({shipped.record.snapshot}); shipped records "
                           "carry no source")


def dump(shipped: ShippedRepo) -> str:
    """Deterministic JSON (fields in model order), refused when it would hold source text."""
    check_no_source(shipped, shipped.record.repo)
    return shipped.model_dump_json(indent=1) + "\n"


def record_key(record: RepoRecord) -> RepoKey:
    owner, _, name = record.repo.partition("/")
    return RepoKey(host=record.host, owner=owner, name=name)


def path_for(folder: Path, key: RepoKey) -> Path:
    return folder / key.host.lower() / f"{key.dirname.lower()}.json"


class ShippedResults:
    """A results folder, looked up by repository key. A file that is not a valid, source-free record is
    reported (`problems`) and left out; the rest are used."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.problems: list[tuple[str, str]] = []  # (file, reason)
        self._by_key: dict[str, ShippedRepo] = {}
        if not folder.is_dir():
            return
        for path in sorted(folder.glob("*/*.json")):
            name = path.relative_to(folder).as_posix()
            try:
                if path.is_symlink() or path.stat().st_size > RESULTS_MAX_BYTES:
                    raise NotShippable(f"{name}: a link, or over {RESULTS_MAX_BYTES} bytes: not read")
                shipped = ShippedRepo.model_validate_json(path.read_bytes())
                check_no_source(shipped, name)
            except (OSError, ValidationError, NotShippable) as exc:
                self.problems.append((name, str(exc).splitlines()[0][:300]))
                continue
            self._by_key[f"{shipped.record.host.lower()}/{shipped.record.repo.lower()}"] = shipped

    def get(self, key: RepoKey) -> ShippedRepo | None:
        return self._by_key.get(f"{key.host.lower()}/{key.repo.lower()}")

    def __iter__(self) -> Iterator[ShippedRepo]:
        return iter(self._by_key[k] for k in sorted(self._by_key))

    def __len__(self) -> int:
        return len(self._by_key)
