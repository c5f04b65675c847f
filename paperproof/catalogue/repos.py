"""Repository records from local sources: a directory of checkouts or tarballs (`--repos`).

A checkout is `owner+name/` or `owner/name/`, a tarball `owner+name.tar.gz`, unpacked by `tarsafe`
with the harvest store's caps (absolute paths, `..`, links leaving the root, devices, hard links to
nothing, and sizes over the caps are refused, and the record says why). What the builder reads of a
checkout (README, licence, `.git`) it reads through `checkout`, never through a link leaving it.
Every code link gets a record; links without a local source say so.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Protocol

from paperproof.catalogue import checkout, licence, tarsafe
from paperproof.catalogue.repo_record import RepoRecord, SourceKind
from paperproof.catalogue.repo_url import RepoKey

README_NAMES = ("README.md", "README.rst", "README.txt", "README", "SKILL.md", "readme.md")


README_BYTES = 1 << 20


def find_readme(root: Path) -> str | None:
    for name in README_NAMES:
        if checkout.is_file(root, name):
            return name
    return None


def read_readme(root: Path, name: str | None) -> str:
    """The README's text, or "" when there is none or it may not be read (a link out, over 1 MiB)."""
    if not name:
        return ""
    try:
        return checkout.read_text(root, name, README_BYTES)
    except checkout.Refused:
        return ""


def readme_text(record: RepoRecord) -> str:
    """The README of a record's checkout, as every stage reads it (selection, `verify`, the repository's page):
    "" when the record has no source or no README, or the README may not be read."""
    if record.snapshot is None:
        return ""
    return read_readme(Path(record.snapshot), record.readme)


def git_head(root: Path) -> str | None:
    """The commit a checkout is at (`checkout.head_commit`), None when `.git` does not say or is refused."""
    return checkout.head_commit(root).commit


def record_from_checkout(key: RepoKey, root: Path, source: SourceKind, *, specimen: bool = False,
                         commit: str | None = None, note: str | None = None) -> RepoRecord:
    spdx, licence_file = licence.detect(root)
    head = checkout.head_commit(root)
    notes = [n for n in (note, head.refused) if n]
    return RepoRecord(
        url=key.url, repo=key.repo, host=key.host, source=source, reach=None,
        licence=spdx, licence_file=licence_file, commit=commit or head.commit,
        snapshot=str(root.resolve()), readme=find_readme(root), note="; ".join(notes) or None, specimen=specimen,
    )


class RepoSource(Protocol):
    """Where the build gets repository records: `LocalRepos` (`--repos`), `StoreRepos` (`--store`), or none."""

    def record_for(self, key: RepoKey) -> RepoRecord: ...


def record_without_source(key: RepoKey, note: str) -> RepoRecord:
    return RepoRecord(url=key.url, repo=key.repo, host=key.host, source="none", note=note)


class LocalRepos:
    """Checkouts and tarballs under one directory, looked up by repository key."""

    def __init__(self, directory: Path, *, unpack_dir: Path | None = None, specimen: bool = False,
                 missing_note: str = "no checkout of this repository under --repos",
                 limits: tarsafe.Limits | None = None) -> None:
        if not directory.is_dir():
            raise FileNotFoundError(f"--repos {directory}: not a directory")
        self.directory = directory
        self.unpack_dir = unpack_dir or directory / ".unpacked"
        self.specimen = specimen
        self.missing_note = missing_note
        self.limits = limits or tarsafe.Limits()  # the harvest store's caps
        self._index: dict[str, Path] = {}
        for child in sorted(directory.iterdir()):
            name = child.name
            if child.is_symlink():  # it may point anywhere on the host, `/` included: said, never followed
                stem = name.removesuffix(".tar.gz").removesuffix(".tgz")
                self._index.setdefault(stem.lower(), child)
            elif child.is_dir() and "+" in name:
                self._index[name.lower()] = child
            elif child.is_dir() and not name.startswith("."):
                for repo_dir in sorted(p for p in child.iterdir() if p.is_dir() or p.is_symlink()):
                    self._index.setdefault(f"{name}+{repo_dir.name}".lower(), repo_dir)
            elif child.is_file() and name.endswith((".tar.gz", ".tgz")):
                stem = name.removesuffix(".tar.gz").removesuffix(".tgz")
                self._index.setdefault(stem.lower(), child)

    def record_for(self, key: RepoKey) -> RepoRecord:
        found = self._index.get(key.dirname.lower())
        if found is None:
            return record_without_source(key, self.missing_note)
        if found.is_symlink():
            return record_without_source(key, f"{found.name} under --repos is a link: not followed")
        if found.is_dir():
            return record_from_checkout(key, found, "checkout", specimen=self.specimen)
        try:
            root = self._unpack(found)
        except tarsafe.Refused as exc:
            return record_without_source(key, f"tarball {found.name} refused: {exc}")
        except OSError as exc:
            return record_without_source(key, f"tarball {found.name} not read: {exc.strerror or exc}")
        return record_from_checkout(key, root, "tarball", specimen=self.specimen)

    def _unpack(self, tarball: Path) -> Path:
        """Unpack once (`tarsafe`, with the store's caps) into a directory named by the tarball's content
        hash; return the repository root."""
        digest = hashlib.sha256()
        with tarball.open("rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
        target = self.unpack_dir / digest.hexdigest()
        if not target.is_dir():
            staging = self.unpack_dir / f".{digest.hexdigest()}.partial"
            shutil.rmtree(staging, ignore_errors=True)
            staging.parent.mkdir(parents=True, exist_ok=True)
            tarsafe.unpack(tarball, staging, self.limits)
            staging.rename(target)
        return tarsafe.single_root(target)
