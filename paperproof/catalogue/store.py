"""The harvest store: content-addressed tarballs, their unpacked trees, and one record per repository.

Layout under the store directory:

    tarballs/<aa>/<sha256>.tar.gz    every tarball downloaded, named by the SHA-256 of its bytes
    trees/<sha256>/<top>/...         the tarball unpacked (by `tarsafe`), named by the same hash
    refs/<host>/<owner+name>/<commit>  the sha256 of the tarball fetched for that commit
    records/<host>/<owner+name>.json the repository's `RepoRecord`; `snapshot` is relative to the store
    state.json                       the last harvest run: running, stopped (and when to resume) or complete
    journal.txt                      keys the current, unfinished run has settled (one per line)
    tmp/                             partial downloads and unpacks; emptied when a harvest starts

Everything is written atomically (temporary file, fsync, rename), and nothing is ever deleted by a
refresh: a record is replaced only by a newer answer, a tree only ever added. `StoreRepos` gives the
build the same `record_for(key)` as `LocalRepos`.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import uuid
from contextlib import AbstractContextManager
from pathlib import Path

from pydantic import BaseModel, ValidationError

from paperproof.catalogue import tarsafe
from paperproof.catalogue.repo_record import RepoRecord
from paperproof.catalogue.repo_url import RepoKey
from paperproof.catalogue.repos import record_without_source
from paperproof.plumbing.files import write_atomic
from paperproof.plumbing.locks import hold

_SAFE = re.compile(r"^[a-z0-9_][a-z0-9_.+-]*$")
_HEX = re.compile(r"^[0-9a-f]{64}$")
_COMMIT = re.compile(r"^[0-9a-fA-F]{7,64}$")


class HarvestState(BaseModel):
    """Where the last harvest run stands; `resume_after` is an ISO time in UTC when the API asked us to wait."""

    status: str  # running | stopped | complete
    reason: str | None = None
    resume_after: str | None = None
    keys: int = 0
    settled: int = 0


class Store:
    """One harvest store directory (created on first use)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    # --- paths ----------------------------------------------------------------------------

    def _stem(self, key: RepoKey) -> tuple[str, str]:
        """(host folder, file stem) for a key: readable when safe, else a hash of the key."""
        host = key.host.lower()
        stem = key.dirname.lower()
        if not _SAFE.match(host):
            host = "_" + hashlib.sha256(host.encode()).hexdigest()[:16]
        if not _SAFE.match(stem) or ".." in stem:
            stem = "_" + hashlib.sha256(key.key.encode()).hexdigest()[:32]
        return host, stem

    def record_path(self, key: RepoKey) -> Path:
        host, stem = self._stem(key)
        return self.root / "records" / host / f"{stem}.json"

    def tarball_path(self, sha256: str) -> Path:
        if not _HEX.match(sha256):
            raise ValueError(f"not a sha256: {sha256!r}")
        return self.root / "tarballs" / sha256[:2] / f"{sha256}.tar.gz"

    def tree_path(self, sha256: str) -> Path:
        if not _HEX.match(sha256):
            raise ValueError(f"not a sha256: {sha256!r}")
        return self.root / "trees" / sha256

    def _ref_path(self, key: RepoKey, commit: str) -> Path:
        if not _COMMIT.match(commit):
            raise ValueError(f"{key.repo}: not a commit id: {commit!r}")
        host, stem = self._stem(key)
        return self.root / "refs" / host / stem / commit.lower()

    # --- records --------------------------------------------------------------------------

    def read_record(self, key: RepoKey) -> RepoRecord | None:
        """The stored record (snapshot relative to the store), or None when there is none or it is unreadable."""
        try:
            return RepoRecord.model_validate_json(self.record_path(key).read_text(encoding="utf-8"))
        except (OSError, ValidationError, ValueError):
            return None

    def write_record(self, key: RepoKey, record: RepoRecord) -> bool:
        """Write the record atomically unless the stored one is identical; True when written."""
        if self.read_record(key) == record:
            return False
        write_atomic(self.record_path(key), record.model_dump_json(indent=1) + "\n")
        return True

    def absolute(self, record: RepoRecord) -> RepoRecord:
        """The record as the build reads it: its snapshot an absolute path, checked to be in the store."""
        if record.snapshot is None:
            return record
        root = (self.root / record.snapshot).resolve()
        if not root.is_dir() or not root.is_relative_to(self.root.resolve()):
            return record.model_copy(update={
                "snapshot": None, "source": "none",
                "note": f"the store lacks the snapshot this record names ({record.snapshot}); harvest again"})
        return record.model_copy(update={"snapshot": str(root)})

    # --- tarballs and trees ---------------------------------------------------------------

    def tmp_file(self, suffix: str = "") -> Path:
        folder = self.root / "tmp"
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{uuid.uuid4().hex}{suffix}"

    def put_tarball(self, downloaded: Path, sha256: str) -> Path:
        """Move a downloaded file to its content address (keeping an existing copy)."""
        target = self.tarball_path(sha256)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_file():
            downloaded.unlink(missing_ok=True)
        else:
            os.replace(downloaded, target)
        return target

    def tarball_for(self, key: RepoKey, commit: str) -> str | None:
        """The sha256 of the tarball already fetched for this repository's commit, if it is still here."""
        try:
            sha256 = self._ref_path(key, commit).read_text().strip()
        except (OSError, ValueError):
            return None
        return sha256 if _HEX.match(sha256) and self.tarball_path(sha256).is_file() else None

    def remember_tarball(self, key: RepoKey, commit: str, sha256: str) -> None:
        write_atomic(self._ref_path(key, commit), sha256 + "\n")

    def has_tree(self, sha256: str | None) -> bool:
        return sha256 is not None and self.tree_path(sha256).is_dir()

    def unpack(self, sha256: str, limits: tarsafe.Limits) -> str:
        """Unpack a stored tarball (once) and return the repository root relative to the store.

        Raises `tarsafe.Refused` with the member and reason when the tarball is hostile or over a cap.
        """
        tree = self.tree_path(sha256)
        if not tree.is_dir():
            staging = self.tmp_file(".unpack")
            tarsafe.unpack(self.tarball_path(sha256), staging, limits)
            tree.parent.mkdir(parents=True, exist_ok=True)
            try:
                staging.rename(tree)
            except OSError:
                shutil.rmtree(staging, ignore_errors=True)
                if not tree.is_dir():
                    raise
        return tarsafe.single_root(tree).relative_to(self.root).as_posix()

    # --- runs: lock, state, journal ---------------------------------------------------------

    def lock(self) -> AbstractContextManager[int]:
        """Hold the store for one harvest; a second harvest on the same store is refused, not interleaved."""
        return hold(self.root / ".lock", f"{self.root}: another harvest is using this store")

    def clear_tmp(self) -> None:
        shutil.rmtree(self.root / "tmp", ignore_errors=True)

    def read_state(self) -> HarvestState | None:
        try:
            return HarvestState.model_validate_json((self.root / "state.json").read_text(encoding="utf-8"))
        except (OSError, ValidationError, ValueError):
            return None

    def write_state(self, state: HarvestState) -> None:
        write_atomic(self.root / "state.json", state.model_dump_json(indent=1) + "\n")

    @property
    def journal_path(self) -> Path:
        return self.root / "journal.txt"

    def settled(self) -> set[str]:
        """Keys the unfinished run settled; a torn last line (a kill mid-write) is ignored."""
        try:
            text = self.journal_path.read_text(encoding="utf-8")
        except OSError:
            return set()
        lines = text.split("\n")
        return {line for line in lines[:-1] if line}  # the part after the last newline is torn or empty

    def settle(self, key: RepoKey) -> None:
        with self.journal_path.open("a", encoding="utf-8") as handle:
            handle.write(key.key + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def reset_journal(self) -> None:
        self.journal_path.unlink(missing_ok=True)


class StoreRepos:
    """Harvested records, looked up by repository key: the build's `--store` source."""

    def __init__(self, directory: Path) -> None:
        if not (directory / "records").is_dir():
            raise FileNotFoundError(f"--store {directory}: no harvest store here (run paperproof harvest --store {directory})")
        self.store = Store(directory)

    def record_for(self, key: RepoKey) -> RepoRecord:
        record = self.store.read_record(key)
        if record is None:
            return record_without_source(key, "not harvested: the store has no record of this repository")
        return self.store.absolute(record)
