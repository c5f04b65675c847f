"""The build manifest: what each file of the site was made from, so a build redoes only what changed.

A site is a set of *units*: a paper (its page and twin), a repository (its page, twin and its samples'
pages), a list page, a sitemap, a search shard, a static file. Each unit has the digest of everything
its files are made from (its archive row and code links, the records and samples of the repositories
it shows, the code and templates of paperproof, the build settings) and the list of its files. The
manifest is an SQLite database in the build's state directory (under `--cache`):

- `site_units`: the units of the published site, as they were when it was swapped in (clustered by
  unit, and small: a unit's digest and file list);
- `stage_units`: the units of the staging tree being built. The staging tree starts as hard links of
  the published one and `stage_units` as a copy of `site_units`; a unit is re-rendered only when its
  digest differs. (When other code made the published site, both start empty, and a unit is linked
  from the site when `site_units` holds it at the same digest.) Before a new unit's files are written
  its row is committed with no digest (so the files of a build killed there are known, and removed or
  rewritten by the next build), and the digest is committed after the files are written. A killed
  build therefore leaves a staging tree that the next build resumes: units already written with the
  right digest are kept.
- `unit_data`: what the rest of the build needs of a unit it does not render again (a paper's listing,
  feed entry and search record), under the unit and the digest it was made at, so it is valid for
  whichever table holds that digest. Kept apart, the units tables stay small enough to copy, walk and
  compare at archive scale.
- `meta`: the published tree's id (also in the site's `.paperproof-build`, which is how a build
  knows the site on disk is the one the manifest describes), the digest of all inputs it was built from
  (equal digests: nothing to do), and the state of the staging tree.
- `files`: content digests of input files by (path, size, mtime, inode), so an unchanged input is not
  read again to learn that it did not change.
- `site_files`: every file of the published site (but its marker), with the unit that lists it, its size,
  mtime and content digest (`stage_files`: the same of the staging tree, recorded as it is finished, see
  `build.site_files`). `build --check` hashes every file against it; a build compares sizes and mtimes,
  and hashes only the files whose size or mtime changed, to find what to repair.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator
from importlib import metadata
from pathlib import Path

MARKER = ".paperproof-build"
_LIBRARIES = ("jinja2", "markupsafe", "markdown", "nh3", "pygments", "pydantic", "pydantic-core", "pagefind", "torch",
              "numpy")
_LINK_TABLES = ("links-between-papers-and-code", "links-between-paper-and-code")


class Digest:
    """An incremental digest of length-prefixed parts (so `("ab", "c")` and `("a", "bc")` differ)."""

    def __init__(self, *parts: bytes | str | None) -> None:
        self._h = hashlib.blake2b(digest_size=16)
        self.add(*parts)

    def add(self, *parts: bytes | str | None) -> Digest:
        for part in parts:
            if part is None:
                self._h.update(b"\xff")
                continue
            data = part.encode("utf-8") if isinstance(part, str) else part
            self._h.update(len(data).to_bytes(8, "little"))
            self._h.update(data)
        return self

    def digest(self) -> bytes:
        return self._h.digest()

    def hex(self) -> str:
        return self._h.hexdigest()


def digest(*parts: bytes | str | None) -> bytes:
    return Digest(*parts).digest()


def code_version(settings: dict[str, object]) -> str:
    """paperproof's code, templates and curated list, the versions of the libraries that shape its output,
    and the build's settings: a change to any of them changes every page's digest."""
    import paperproof

    root = Path(paperproof.__file__).resolve().parent
    h = Digest(getattr(paperproof, "__version__", ""))
    files = sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                   and "snapshot" not in p.relative_to(root).parts[:1]
                   and p.suffix in (".py", ".html", ".css", ".js", ".svg", ".json"))
    files.append(root / "snapshot" / "community.json")
    for path in files:
        if path.is_file():
            h.add(path.relative_to(root).as_posix(), path.read_bytes())
    for name in _LIBRARIES:
        try:
            h.add(name, metadata.version(name))
        except metadata.PackageNotFoundError:
            h.add(name, None)
    h.add(json.dumps(settings, sort_keys=True, default=str))
    return h.hex()


def _connect(path: Path | str, readonly: bool = False) -> sqlite3.Connection:
    if readonly:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    else:
        db = sqlite3.connect(path)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        # A checkpoint (copy the log into the database, two fdatasyncs) every 64 MB of log, not every 4 MB: a
        # page changed by many commits is copied once, and the build's main thread waits on fewer syncs.
        db.execute("PRAGMA wal_autocheckpoint=16384")
    return db


_UNITS = "(unit TEXT PRIMARY KEY, hash BLOB, files TEXT NOT NULL) WITHOUT ROWID"
_FILES = "(path TEXT PRIMARY KEY, unit TEXT NOT NULL, size INTEGER NOT NULL, mtime INTEGER NOT NULL, " \
         "digest BLOB NOT NULL) WITHOUT ROWID"
FORMAT = "4"  # of the tables: a manifest in another format is started again (its site is rebuilt)


class Manifest:
    """The manifest database of one site (see the module's docstring). `readonly` for `build --check`."""

    def __init__(self, path: Path, readonly: bool = False) -> None:
        self.path = path
        self.readonly = readonly
        self.db: sqlite3.Connection
        db = _connect(path, readonly) if path.exists() or not readonly else None
        if db is not None:
            self.db = db
            if self._format() != FORMAT:
                if readonly:  # a manifest in another format describes nothing this build can use
                    db.close()
                    db = None
                else:
                    for table in ("meta", "site_units", "stage_units", "unit_data", "changed", "files", "site_files",
                                  "stage_files"):
                        db.execute(f"DROP TABLE IF EXISTS {table}")
        if db is None:
            self.db = sqlite3.connect(":memory:")
        elif readonly:
            return
        self.db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        self.db.execute(f"CREATE TABLE IF NOT EXISTS site_units {_UNITS}")
        self.db.execute(f"CREATE TABLE IF NOT EXISTS site_files {_FILES}")
        self.db.execute("CREATE TABLE IF NOT EXISTS unit_data (unit TEXT PRIMARY KEY, hash BLOB NOT NULL, "
                        "data TEXT NOT NULL)")  # rows of kilobytes: appended, not kept in key order
        self.db.execute("CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, size INTEGER, mtime INTEGER, "
                        "inode INTEGER, digest TEXT)")
        self.set("format", FORMAT)
        self.db.commit()

    def _format(self) -> str | None:
        try:
            return self.get("format")
        except sqlite3.OperationalError:  # no meta table: a new database
            return None

    def close(self) -> None:
        self.db.close()

    # --- meta ---

    def get(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set(self, key: str, value: str | None) -> None:
        if value is None:
            self.db.execute("DELETE FROM meta WHERE key = ?", (key,))
        else:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def commit(self) -> None:
        self.db.commit()

    # --- input files ---

    def file_digest(self, path: Path) -> str:
        """The content digest of an input file, read again only when its size, mtime or inode changed."""
        st = path.stat()
        key = str(path.resolve())
        row = self.db.execute("SELECT size, mtime, inode, digest FROM files WHERE path = ?", (key,)).fetchone()
        if row and tuple(row[:3]) == (st.st_size, st.st_mtime_ns, st.st_ino):
            return row[3]
        h = hashlib.blake2b(digest_size=16)
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                h.update(block)
        value = h.hexdigest()
        if not self.readonly:
            self.db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)",
                            (key, st.st_size, st.st_mtime_ns, st.st_ino, value))
            self.db.commit()
        return value

    def tree_digest(self, paths: list[Path]) -> str:
        """One digest of several input files (their paths relative to the folder they share, and contents)."""
        h = Digest()
        if not paths:
            return h.hex()
        root = Path(os.path.commonpath([str(p.parent) for p in paths]))
        for path in sorted(paths):
            h.add(path.relative_to(root).as_posix(), self.file_digest(path))
        return h.hex()

    # --- units ---

    def _has(self, table: str) -> bool:
        return self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone() is not None

    def has_stage(self) -> bool:
        return self._has("stage_units")

    def new_stage(self, from_site: bool) -> None:
        """`stage_units` as a copy of `site_units` (the staging tree is a hard-linked copy of the site), or empty.
        Units of an earlier, abandoned stage that differ from the site are carried over without a digest, so
        whatever that stage wrote outside the staging tree (search documents) is written again."""
        previous = self.has_stage()
        if previous:
            self.db.execute("ALTER TABLE stage_units RENAME TO stage_old")
        self.db.execute(f"CREATE TABLE stage_units {_UNITS}")
        if from_site:
            self.db.execute("INSERT INTO stage_units SELECT * FROM site_units")
        if previous:
            self.db.execute("INSERT OR REPLACE INTO stage_units (unit, hash, files) "
                            "SELECT o.unit, NULL, o.files FROM stage_old o LEFT JOIN stage_units s "
                            "ON s.unit = o.unit WHERE s.hash IS NULL OR s.hash != o.hash OR o.hash IS NULL")
            self.db.execute("DROP TABLE stage_old")
        self.db.commit()

    def drop_stage(self) -> None:
        self.db.execute("DROP TABLE IF EXISTS stage_units")
        self.db.execute("DROP TABLE IF EXISTS stage_files")
        for key in ("stage_base", "stage_ready", "stage_linked"):
            self.set(key, None)
        self.db.commit()

    def promote(self) -> None:
        """The staging tree is now the published one: its units become the site's."""
        self.db.execute("DROP TABLE site_units")
        self.db.execute("ALTER TABLE stage_units RENAME TO site_units")
        self.db.execute("DROP TABLE site_files")
        if self._has("stage_files"):
            self.db.execute("ALTER TABLE stage_files RENAME TO site_files")
        else:  # a stage finished by an earlier format's code: its files are unknown, so found again by hashing
            self.db.execute(f"CREATE TABLE site_files {_FILES}")
        for key in ("stage_base", "stage_ready", "stage_linked", "pending_tree", "pending_inputs", "pending_summary"):
            self.set(key, None)

    def lookup(self, table: str, units: list[str]) -> dict[str, tuple[bytes | None, str | None]]:
        """The digest of each of `units` that `table` holds, with the unit's data when it was made at that digest."""
        marks = ",".join("?" * len(units))
        rows = self.db.execute(f"SELECT u.unit, u.hash, d.data FROM {table} u LEFT JOIN unit_data d "
                               f"ON d.unit = u.unit AND d.hash = u.hash WHERE u.unit IN ({marks})", units)
        return {unit: (h, data) for unit, h, data in rows}

    def files_at(self, table: str, unit: str, value: bytes) -> list[str] | None:
        """The files of `unit` in `table` when it holds the unit at digest `value`, else None."""
        row = self.db.execute(f"SELECT files FROM {table} WHERE unit = ? AND hash = ?", (unit, value)).fetchone()
        return None if row is None else [name for name in row[0].split("\n") if name]

    def mark_pending(self, rows: Iterable[tuple[str, list[str]]]) -> None:
        """Before writing: these units' files are about to change (kept listed, digest cleared)."""
        self.db.executemany("INSERT INTO stage_units (unit, hash, files) VALUES (?, NULL, ?) "
                            "ON CONFLICT(unit) DO UPDATE SET hash = NULL, "
                            "files = CASE WHEN stage_units.files = excluded.files THEN stage_units.files "
                            "ELSE stage_units.files || char(10) || excluded.files END",
                            [(unit, "\n".join(files)) for unit, files in rows])
        self.db.commit()

    def mark_done(self, rows: Iterable[tuple[str, bytes | None, list[str], str | None]]) -> None:
        """After writing: each unit's digest (None: written but failed), files, and data (None: none). Committed
        with the next `mark_pending` (or the end of the build): a build killed before then finds these units
        pending, and writes them again."""
        rows = list(rows)
        self.db.executemany("INSERT OR REPLACE INTO stage_units VALUES (?, ?, ?)",
                            [(unit, h, "\n".join(files)) for unit, h, files, _ in rows])
        self.db.executemany("INSERT OR REPLACE INTO unit_data VALUES (?, ?, ?)",
                            [(unit, h, data) for unit, h, _, data in rows if h is not None and data is not None])

    def absent(self, table: str, seen: Path) -> list[tuple[str, list[str]]]:
        """The units of `table`, with their files, that are not in table `seen` (one column, `unit`) of the SQLite
        database at `seen`: one anti-join, in unit order."""
        self.db.commit()  # no database can be attached or detached inside a transaction
        self.db.execute("ATTACH DATABASE ? AS other", (str(seen),))
        try:
            rows = self.db.execute(f"SELECT unit, files FROM {table} u WHERE NOT EXISTS "
                                   "(SELECT 1 FROM other.seen s WHERE s.unit = u.unit) ORDER BY unit").fetchall()
        finally:
            self.db.execute("DETACH DATABASE other")
        return [(unit, [f for f in files.split("\n") if f]) for unit, files in rows]

    def remove(self, units: Iterable[str]) -> None:
        rows = [(u,) for u in units]
        self.db.executemany("DELETE FROM stage_units WHERE unit = ?", rows)
        self.db.executemany("DELETE FROM unit_data WHERE unit = ?", rows)
        self.db.commit()

    def record_changes(self) -> None:
        """Table `changed`: every file that differs between the published tree (`site_units`) and the staging
        tree (`stage_units`): the files, old and new, of each unit added, removed, or with another digest."""
        self.db.execute("DROP TABLE IF EXISTS changed")
        self.db.execute("CREATE TABLE changed (path TEXT PRIMARY KEY)")
        rows = self.db.execute(
            "SELECT s.files, o.files FROM stage_units s LEFT JOIN site_units o ON o.unit = s.unit "
            "WHERE o.unit IS NULL OR s.hash IS NULL OR o.hash IS NOT s.hash "
            "UNION ALL SELECT o.files, NULL FROM site_units o WHERE NOT EXISTS "
            "(SELECT 1 FROM stage_units s WHERE s.unit = o.unit)")
        self.db.executemany("INSERT OR IGNORE INTO changed VALUES (?)",
                            ((name,) for new, old in rows for files in (new, old) if files
                             for name in files.split("\n") if name))
        self.db.execute("INSERT OR IGNORE INTO changed VALUES (?)", (MARKER,))

    def also_changed(self, paths: Iterable[str]) -> None:
        """Files of the replaced tree the staging tree lacks though no unit changed (set aside: `build.site_files`)."""
        self.db.executemany("INSERT OR IGNORE INTO changed VALUES (?)", ((path,) for path in paths))

    def changed(self) -> Iterator[str]:
        for (name,) in self.db.execute("SELECT path FROM changed ORDER BY path"):
            yield name

    # --- the published files (`build.site_files`) ---

    def site_files(self) -> Iterator[tuple[str, int, int, bytes]]:
        """Every file of the published site as recorded: (path, size, mtime in ns, digest), in path order."""
        yield from self.db.execute("SELECT path, size, mtime, digest FROM site_files ORDER BY path")

    def refresh(self, rows: Iterable[tuple[str, int, int]]) -> None:
        """Files of the site touched but not changed (same digest): their (path, size, mtime) as they are now."""
        self.db.executemany("UPDATE site_files SET size = ?, mtime = ? WHERE path = ?",
                            [(size, mtime, path) for path, size, mtime in rows])
        self.db.commit()

    def forget(self, paths: Iterable[str]) -> list[str]:
        """The units listing the files `paths` (damaged on disk) lose their digest in the site's and the staging
        tree's tables, so the build renders them again. Returns those units, in order."""
        self.db.execute("CREATE TEMP TABLE IF NOT EXISTS damaged (path TEXT PRIMARY KEY)")
        self.db.execute("DELETE FROM temp.damaged")
        self.db.executemany("INSERT OR IGNORE INTO temp.damaged VALUES (?)", ((p,) for p in paths))
        units = [u for (u,) in self.db.execute("SELECT DISTINCT unit FROM site_files WHERE path IN "
                                               "(SELECT path FROM temp.damaged) ORDER BY unit")]
        for table in ("site_units", "stage_units") if self.has_stage() else ("site_units",):
            self.db.executemany(f"UPDATE {table} SET hash = NULL WHERE unit = ?", [(u,) for u in units])
        self.db.commit()
        return units

    def listed(self) -> Iterator[tuple[str, str, int | None, int | None, bytes | None]]:
        """Every file the staging tree's units list, in path order: (path, unit, and the size, mtime and digest
        the published site's record holds of that path, or Nones)."""
        self.db.execute("DROP TABLE IF EXISTS temp.listed")
        self.db.execute("CREATE TEMP TABLE listed (path TEXT PRIMARY KEY, unit TEXT NOT NULL) WITHOUT ROWID")
        self.db.executemany("INSERT OR IGNORE INTO temp.listed VALUES (?, ?)",
                            ((name, unit) for unit, files in self.db.execute("SELECT unit, files FROM stage_units")
                             for name in files.split("\n") if name))
        yield from self.db.execute("SELECT l.path, l.unit, f.size, f.mtime, f.digest FROM temp.listed l "
                                   "LEFT JOIN site_files f ON f.path = l.path ORDER BY l.path")

    def record_files(self, rows: Iterable[tuple[str, str, int, int, bytes]]) -> None:
        """`stage_files`: the staging tree's files, (path, unit, size, mtime, digest), as it is published."""
        self.db.execute("DROP TABLE IF EXISTS stage_files")
        self.db.execute(f"CREATE TABLE stage_files {_FILES}")
        self.db.executemany("INSERT INTO stage_files VALUES (?, ?, ?, ?, ?)", rows)
        self.db.execute("DROP TABLE IF EXISTS temp.listed")

    def tree_id(self, table: str = "stage_units") -> str:
        h = Digest()
        for unit, value in self.db.execute(f"SELECT unit, hash FROM {table} ORDER BY unit"):
            h.add(unit, value)
        return h.hex()


def input_files(location: str | None) -> dict[str, list[Path]] | None:
    """The files an archive is read from (`all`) and those of its code links (`links`); None when the archive
    is not local files (a Hugging Face id), so nothing can tell that it did not change."""
    from paperproof.catalogue.archive import archive_folders

    folders = archive_folders(location)
    if folders is None:
        return None
    found: dict[str, list[Path]] = {"all": [], "links": []}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                found["all"].append(path)
                if path.relative_to(folder).parts[0].startswith(_LINK_TABLES):
                    found["links"].append(path)
    return found


def read_marker(site: Path) -> dict:
    try:
        return json.loads((site / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def state_directory(cache: Path, out: Path) -> Path:
    """Where the manifest of the site at `out` lives in the cache (one per site directory)."""
    return cache / "sites" / Digest(str(out.resolve())).hex()[:16]


__all__ = ["Digest", "Manifest", "MARKER", "code_version", "digest", "input_files", "read_marker", "state_directory"]
