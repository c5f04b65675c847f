"""The published site's files and their digests: what `build --check` verifies and what a build repairs.

Every file a build publishes is recorded in the manifest (`site_files`) with the unit that lists it, its
size, its mtime and the digest of its content, as the staging tree is finished (`record`). A file of the
staging tree that no unit lists (a leftover of a killed build, a file planted in the kept tree) is removed
then, so a published site is exactly its record. Against that record:

- `build --check` reads every file of the site (`inspect(by_content=True)`), and names each file missing,
  changed (another digest) or extra (not in the record);
- a build compares each file's size and mtime with the record and reads only the files whose size or mtime
  differ (`inspect(by_content=False)`): a stat a file keeps a no-op build of the full archive cheap. It
  renders again the units of missing and changed files (`Manifest.forget`). An extra file was written by no
  build, so it is someone else's: the build sets it aside beside the site (`publish.set_aside`) instead of
  publishing it or deleting it, and its summary says where.

A file rewritten in place with its size and mtime put back (`touch -r`) passes a build's comparison; only
`--check`, which reads every byte, finds it. Deleting the file makes the next build write it again.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict

from paperproof.build.manifest import MARKER
from paperproof.plumbing.files import remove_file

DAMAGE_SHOWN = 50  # paths named in a summary; the rest are counted


class SiteDamage(BaseModel):
    """What differs between a published site and its record, as paths relative to the site."""

    model_config = ConfigDict(frozen=True)

    missing: list[str] = []
    changed: list[str] = []
    extra: list[str] = []

    def __len__(self) -> int:
        return len(self.missing) + len(self.changed) + len(self.extra)

    def __bool__(self) -> bool:
        return len(self) > 0

    @property
    def damaged(self) -> list[str]:
        """The files a build writes again (the extra ones are set aside instead)."""
        return sorted(self.missing + self.changed)

    def lines(self, shown: int = DAMAGE_SHOWN) -> list[str]:
        """One line a file, in path order: `missing: PATH`, `changed: PATH`, `extra: PATH`."""
        kinds = [(path, "missing") for path in self.missing] + [(path, "changed") for path in self.changed]
        kinds += [(path, "extra") for path in self.extra]
        out = [f"{kind}: {path}" for path, kind in sorted(kinds)[:shown]]
        if len(kinds) > shown:
            out.append(f"… and {len(kinds) - shown} more")
        return out


def walk(root: Path) -> Iterator[tuple[str, os.stat_result]]:
    """Every file under `root` (links are not followed, and count as files) with its `lstat`, by relative path
    in the order SQLite sorts paths, so that a walk merges with a table read `ORDER BY path`. A folder sorts
    as its name and a slash: "a.json" < "a/…" < "a0", as the full paths do."""
    yield from _walk(os.fspath(root), "")


def _walk(folder: str, prefix: str) -> Iterator[tuple[str, os.stat_result]]:
    with os.scandir(folder) as entries:
        keyed = sorted((entry.name + "/" if entry.is_dir(follow_symlinks=False) else entry.name, entry.path)
                       for entry in entries)
    for key, path in keyed:
        if key.endswith("/"):
            yield from _walk(path, prefix + key)
            continue
        try:
            yield prefix + key, os.lstat(path)
        except FileNotFoundError:  # removed since the folder was listed
            continue


def content_digest(path: Path | str) -> bytes | None:
    """The digest of a regular file's bytes; None for anything else (a link is never a file a build wrote). Read
    with bare descriptors: most site files are a few kilobytes, and a file object a file costs more than its
    bytes do (`bench/bench_check.py`)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        h = hashlib.blake2b(digest_size=16)
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
        return h.digest()
    finally:
        os.close(fd)


A = TypeVar("A")
R = TypeVar("R", bound=tuple)


def merge(left: Iterable[tuple[str, A]], right: Iterable[R]) -> Iterator[tuple[str, A | None, R | None]]:
    """Join two sequences sorted by path: `left` of (path, value), `right` of rows whose first item is the path.
    Yields (path, left's value or None, right's row or None) for each path of either."""
    lefts, rights = iter(left), iter(right)
    a, b = next(lefts, None), next(rights, None)
    while a is not None or b is not None:
        if b is None or (a is not None and a[0] < b[0]):
            assert a is not None
            yield a[0], a[1], None
            a = next(lefts, None)
        elif a is None or b[0] < a[0]:
            yield b[0], None, b
            b = next(rights, None)
        else:
            yield a[0], a[1], b
            a, b = next(lefts, None), next(rights, None)


def inspect(site: Path, records: Iterable[tuple[str, int, int, bytes]], *, by_content: bool,
            touched: list[tuple[str, int, int]] | None = None) -> SiteDamage:
    """Compare the site at `site` with its record, rows of (path, size, mtime, digest) in path order. With
    `by_content`, every file is read; else only those whose size or mtime differ from the record's. A file read
    whose bytes are the recorded ones after all goes to `touched` as (path, size, mtime) now."""
    missing: list[str] = []
    changed: list[str] = []
    extra: list[str] = []
    for path, found, known in merge(walk(site), records):
        if path == MARKER:  # the site's marker is checked by the build itself (`SiteWriter.is_published`)
            continue
        if known is None:
            extra.append(path)
            continue
        if found is None:
            missing.append(path)
            continue
        _, size, mtime, value = known
        same_stat = stat.S_ISREG(found.st_mode) and (found.st_size, found.st_mtime_ns) == (size, mtime)
        if same_stat and not by_content:
            continue
        if content_digest(site / path) != value:
            changed.append(path)
        elif not same_stat and touched is not None:
            touched.append((path, found.st_size, found.st_mtime_ns))
    return SiteDamage(missing=missing, changed=changed, extra=extra)


def record(staging: Path, listed: Iterable[tuple[str, str, int | None, int | None, bytes | None]],
           removed: list[str]) -> Iterator[tuple[str, str, int, int, bytes]]:
    """The rows of `stage_files` for the finished staging tree: (path, unit, size, mtime, digest) of each file a
    unit lists. `listed` gives, in path order, each listed file with the published site's record of it; a file
    whose size and mtime are the recorded ones (a hard link of the site's) keeps its digest, any other is read.
    A file no unit lists is removed from the tree, and its path added to `removed`."""
    for path, found, known in merge(walk(staging), listed):
        if path == MARKER:
            continue
        if known is None or (found is not None and not stat.S_ISREG(found.st_mode)):
            remove_file(staging / path, staging)
            removed.append(path)
            continue
        if found is None:  # listed, but not written: a unit whose rendering failed
            continue
        _, unit, size, mtime, value = known
        if value is None or (found.st_size, found.st_mtime_ns) != (size, mtime):
            value = content_digest(staging / path)
            if value is None:  # replaced by something else since it was listed
                remove_file(staging / path, staging)
                removed.append(path)
                continue
        yield path, unit, found.st_size, found.st_mtime_ns, value


__all__ = ["SiteDamage", "content_digest", "inspect", "merge", "record", "walk"]
