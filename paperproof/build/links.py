"""Code links, joined to papers on disk rather than in memory.

The links dump is not sorted by paper, so the join needs either every link in memory or an index on
disk. `LinkTable` is the latter: one pass over the dump writes each distinct (paper, repository) link
as a small row of an SQLite table indexed by paper slug (in the build's state directory, so a later
build with the same dump reuses it), and the build then asks for one paper's links at a time.

A link is a `Link` tuple, not a pydantic row: at 300,161 links the difference is hundreds of MB. It
carries the attributes the build reads from `CodeLinkRow` (`paper_slug`, `repo_url`, `is_official`,
`mentioned_in_paper`, `mentioned_in_github`, `framework`) under the same names.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple, Protocol

from paperproof.catalogue.archive import Archive
from paperproof.catalogue.repo_url import safe_key
from paperproof.plumbing.progress import bar

SCHEMA_VERSION = "1"
_SELECT = "SELECT slug, url, official, in_paper, in_github, framework FROM links"  # the columns of a `Link`


class Link(NamedTuple):
    paper_slug: str
    repo_url: str
    is_official: bool | None
    mentioned_in_paper: bool | None
    mentioned_in_github: bool | None
    framework: str | None


class LinkFacts(Protocol):
    """What the kind and order of a code link are read from: a `CodeLinkRow`, or a `Link`."""

    @property
    def repo_url(self) -> str: ...
    @property
    def is_official(self) -> bool | None: ...
    @property
    def mentioned_in_paper(self) -> bool | None: ...
    @property
    def mentioned_in_github(self) -> bool | None: ...


def repo_kind(link: LinkFacts) -> str:
    """What the archive says of a link: official, named in the paper, or only listed."""
    if link.is_official:
        return "official"
    if link.mentioned_in_paper:
        return "named_in_paper"
    return "listed"


def link_order(link: LinkFacts) -> tuple:
    """Official, then mentioned in the paper, then mentioned on GitHub; then URL, case-insensitively."""
    return (not link.is_official, not link.mentioned_in_paper, not link.mentioned_in_github, link.repo_url.lower())


def _flag(value: int | None) -> bool | None:
    return None if value is None else bool(value)


def _row(row: tuple) -> Link:
    return Link(row[0], row[1], _flag(row[2]), _flag(row[3]), _flag(row[4]), row[5])


class LinkTable:
    """Links grouped by paper slug, read-only, with the mapping methods the build uses (`get`, `items`,
    `values`, `keys`, `len`, `in`). Papers come in slug order, each paper's links in dump order."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self._papers: int | None = None

    def get(self, slug: str, default: list[Link] | None = None) -> list[Link]:
        return self.get_many([slug]).get(slug, [] if default is None else default)

    def get_many(self, slugs: list[str]) -> dict[str, list[Link]]:
        """The links of each of `slugs` that has any, in one query: the build asks for a block of papers at a
        time, since a query per paper cost more in statement overhead than in the lookup (22 µs a paper)."""
        found: dict[str, list[Link]] = {}
        marks = ",".join("?" * len(slugs))
        for row in self.db.execute(f"{_SELECT} WHERE slug IN ({marks}) ORDER BY slug, seq", slugs):
            found.setdefault(row[0], []).append(_row(row))
        return found

    def __getitem__(self, slug: str) -> list[Link]:
        links = self.get(slug)
        if not links:
            raise KeyError(slug)
        return links

    def __contains__(self, slug: object) -> bool:
        return self.db.execute("SELECT 1 FROM links WHERE slug = ? LIMIT 1", (slug,)).fetchone() is not None

    def items(self) -> Iterator[tuple[str, list[Link]]]:
        cursor = self.db.execute(f"{_SELECT} ORDER BY slug, seq")
        current: str | None = None
        group: list[Link] = []
        for row in cursor:
            if row[0] != current:
                if current is not None:
                    yield current, group
                current, group = row[0], []
            group.append(_row(row))
        if current is not None:
            yield current, group

    def values(self) -> Iterator[list[Link]]:
        for _, links in self.items():
            yield links

    def keys(self) -> Iterator[str]:
        for (slug,) in self.db.execute("SELECT DISTINCT slug FROM links ORDER BY slug"):
            yield slug

    __iter__ = keys

    def __len__(self) -> int:
        if self._papers is None:
            self._papers = self.db.execute("SELECT COUNT(DISTINCT slug) FROM links").fetchone()[0]
        return self._papers

    def count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM links").fetchone()[0]

    def close(self) -> None:
        self.db.close()


def read_link_table(archive: Archive, path: Path | None = None, fingerprint: str | None = None) -> LinkTable:
    """Every distinct (paper, repository) link of the archive in a table at `path` (in memory when None).

    With a `fingerprint` of the links dump, a table already built from the same dump is reused as it is
    (its rejects are replayed from the table, so the build reports them every time).
    """
    if path is not None and fingerprint is not None and path.exists():
        db = sqlite3.connect(path)
        try:
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError:
            meta = {}
        if meta.get("fingerprint") == fingerprint and meta.get("version") == SCHEMA_VERSION and meta.get("complete") == "1":
            _replay_rejects(db, archive)
            _prefetch(path)
            return LinkTable(db)
        db.close()
    if path is not None:
        for stale in (path, path.with_name(path.name + "-journal")):
            stale.unlink(missing_ok=True)
    db = sqlite3.connect(":memory:" if path is None else path)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    db.execute("CREATE TABLE links (slug TEXT NOT NULL, seq INTEGER NOT NULL, url TEXT NOT NULL, "
               "official INTEGER, in_paper INTEGER, in_github INTEGER, framework TEXT)")
    db.execute("CREATE TABLE rejects (file TEXT, position INTEGER, record TEXT, reason TEXT)")
    before = len(archive.rejects)
    seen: set[bytes] = set()
    batch: list[tuple] = []
    for seq, (link, _) in enumerate(bar(archive.links(), "links", unit="link")):
        slug = link.paper_slug
        key = safe_key(link.repo_url)
        pair = f"{slug}\n{key.key if key else link.repo_url}"
        mark = hashlib.blake2b(pair.encode(), digest_size=12).digest()  # one per (paper, repository)
        if mark in seen:
            continue
        seen.add(mark)
        batch.append((slug, seq, link.repo_url, _int(link.is_official), _int(link.mentioned_in_paper),
                      _int(link.mentioned_in_github), link.framework))
        if len(batch) >= 10_000:
            db.executemany("INSERT INTO links VALUES (?, ?, ?, ?, ?, ?, ?)", batch)
            batch.clear()
    if batch:
        db.executemany("INSERT INTO links VALUES (?, ?, ?, ?, ?, ?, ?)", batch)
    del seen
    db.execute("CREATE INDEX links_by_slug ON links (slug, seq)")
    db.executemany("INSERT INTO rejects VALUES (?, ?, ?, ?)",
                   [(r.file, r.position, r.record, r.reason) for r in archive.rejects[before:]])
    db.executemany("INSERT INTO meta VALUES (?, ?)", [("fingerprint", fingerprint or ""), ("version", SCHEMA_VERSION),
                                                       ("complete", "0" if archive.damaged else "1")])
    db.commit()
    return LinkTable(db)


def _prefetch(path: Path) -> None:
    """Ask the kernel to read the whole table into the page cache now: the build looks up each paper's links
    in slug order while it reads papers in archive order, and on a slow disk each lookup that missed the
    cache waited milliseconds for a page, holding up the thread that feeds the render processes."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
    except (AttributeError, OSError):  # no fadvise here: the reads are only slower
        pass
    finally:
        os.close(fd)


def _replay_rejects(db: sqlite3.Connection, archive: Archive) -> None:
    from paperproof.catalogue.archive import Reject

    for file, position, record, reason in db.execute("SELECT file, position, record, reason FROM rejects ORDER BY rowid"):
        archive.rejects.append(Reject(file=file, position=position, record=record, reason=reason))


def _int(value: bool | None) -> int | None:
    return None if value is None else int(bool(value))
