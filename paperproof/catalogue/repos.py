"""Repository records from local sources: a directory of checkouts or tarballs (`--repos`).

A checkout is `owner+name/` or `owner/name/`, a tarball `owner+name.tar.gz` (unpacked with the
standard library's `data` filter, which refuses absolute paths, `..`, links leaving the root and
device files). Every code link gets a record; links without a local source say so.
"""

from __future__ import annotations

import hashlib
import tarfile
from pathlib import Path
from typing import Protocol

from paperproof.catalogue import licence
from paperproof.catalogue.repo_record import RepoRecord, SourceKind
from paperproof.catalogue.repo_url import RepoKey

README_NAMES = ("README.md", "README.rst", "README.txt", "README", "SKILL.md", "readme.md")


def find_readme(root: Path) -> str | None:
    for name in README_NAMES:
        if (root / name).is_file():
            return name
    return None


def git_head(root: Path) -> str | None:
    """The commit a checkout is at, read from `.git` without running git (no hooks, no config)."""
    head = root / ".git" / "HEAD"
    try:
        text = head.read_text().strip()
    except OSError:
        return None
    if text.startswith("ref: "):
        ref = text[5:]
        ref_file = root / ".git" / ref
        if ref_file.is_file():
            return ref_file.read_text().strip()
        packed = root / ".git" / "packed-refs"
        if packed.is_file():
            for line in packed.read_text().splitlines():
                if line.endswith(" " + ref):
                    return line.split()[0]
        return None
    return text or None


def record_from_checkout(key: RepoKey, root: Path, source: SourceKind, *, specimen: bool = False,
                         commit: str | None = None, note: str | None = None) -> RepoRecord:
    spdx, licence_file = licence.detect(root)
    return RepoRecord(
        url=key.url, repo=key.repo, host=key.host, source=source, reach=None,
        licence=spdx, licence_file=licence_file, commit=commit or git_head(root),
        snapshot=str(root.resolve()), readme=find_readme(root), note=note, specimen=specimen,
    )


class RepoSource(Protocol):
    """Where the build gets repository records: `LocalRepos` (`--repos`), `StoreRepos` (`--store`), or none."""

    def record_for(self, key: RepoKey) -> RepoRecord: ...


def record_without_source(key: RepoKey, note: str) -> RepoRecord:
    return RepoRecord(url=key.url, repo=key.repo, host=key.host, source="none", note=note)


class LocalRepos:
    """Checkouts and tarballs under one directory, looked up by repository key."""

    def __init__(self, directory: Path, *, unpack_dir: Path | None = None, specimen: bool = False,
                 missing_note: str = "no checkout of this repository under --repos") -> None:
        if not directory.is_dir():
            raise FileNotFoundError(f"--repos {directory}: not a directory")
        self.directory = directory
        self.unpack_dir = unpack_dir or directory / ".unpacked"
        self.specimen = specimen
        self.missing_note = missing_note
        self._index: dict[str, Path] = {}
        for child in sorted(directory.iterdir()):
            name = child.name
            if child.is_dir() and "+" in name:
                self._index[name.lower()] = child
            elif child.is_dir() and not name.startswith("."):
                for repo_dir in sorted(p for p in child.iterdir() if p.is_dir()):
                    self._index.setdefault(f"{name}+{repo_dir.name}".lower(), repo_dir)
            elif child.is_file() and name.endswith((".tar.gz", ".tgz")):
                stem = name.removesuffix(".tar.gz").removesuffix(".tgz")
                self._index.setdefault(stem.lower(), child)

    def record_for(self, key: RepoKey) -> RepoRecord:
        found = self._index.get(key.dirname.lower())
        if found is None:
            return record_without_source(key, self.missing_note)
        if found.is_dir():
            return record_from_checkout(key, found, "checkout", specimen=self.specimen)
        try:
            root = self._unpack(found)
        except (tarfile.TarError, OSError) as exc:
            return record_without_source(key, f"tarball {found.name} refused: {exc}")
        return record_from_checkout(key, root, "tarball", specimen=self.specimen)

    def _unpack(self, tarball: Path) -> Path:
        """Unpack once into a directory named by the tarball's content hash; return the repository root."""
        digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
        target = self.unpack_dir / digest
        if not target.is_dir():
            staging = self.unpack_dir / f".{digest}.partial"
            staging.mkdir(parents=True, exist_ok=True)
            with tarfile.open(tarball, "r:*") as archive:
                archive.extractall(staging, filter="data")
            staging.rename(target)
        children = [p for p in target.iterdir()]
        return children[0] if len(children) == 1 and children[0].is_dir() else target
