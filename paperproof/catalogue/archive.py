"""Reading the Papers with Code archive: raw JSON dumps, Hugging Face parquet, and the bundled slice.

Rows stream (ijson over the dumps, `datasets` streaming over parquet); nothing holds the archive
as one table. A row that does not validate becomes a `Reject` naming its file, position and every
invalid field, and reading goes on. A file that cannot be read to its end (cut short, corrupt) is
not a shorter archive: it raises `ArchiveDamaged`, naming the byte offset and the last good row
(`catalogue.damage`), unless the archive was opened with `allow_partial`, which records the damage
(`damages`) and goes on with the rows before it. Every part of an archive carries its provenance, which the twin's `source`
block repeats, so specimen rows can never pass for archive material.
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import ijson
from pydantic import BaseModel, ValidationError

from paperproof.catalogue.archive_rows import CodeLinkRow, PaperRow, Source
from paperproof.catalogue.damage import ArchiveDamaged, Damage, locate, record_id
from paperproof.catalogue.readahead import ReadAhead

ARCHIVE_LICENCE_URL = "https://creativecommons.org/licenses/by-sa/4.0/legalcode"
ARCHIVE_NAME = "pwc-archive (Hugging Face), CC BY-SA 4.0"
LAST_SNAPSHOT = "2025-07-28"  # the archive is frozen: Papers with Code shut down in July 2025
HUB_ORG = "pwc-archive"

# Table name -> (dump file stem, Hugging Face dataset name); `Archive.rows` is given each table's row model.
TABLES: dict[str, tuple[str, str]] = {
    "papers": ("papers-with-abstracts", "papers-with-abstracts"),
    "links": ("links-between-papers-and-code", "links-between-paper-and-code"),
    "methods": ("methods", "methods"),
    "datasets": ("datasets", "datasets"),
    "evaluation_tables": ("evaluation-tables", "evaluation-tables"),
}

Row = TypeVar("Row", bound=BaseModel)


class Reject(BaseModel):
    """A row (or a whole file) that could not be read, and why; the build reports these."""

    file: str
    position: int  # 0-based; -1 for a whole file
    record: str | None
    reason: str  # every invalid field of the row, "; "-separated

    def where(self) -> str:
        if self.position < 0:
            return self.file
        return f"{self.file} row #{self.position} (0-based; row {self.position + 1} counting from 1)"


@dataclass
class ArchivePart:
    """One set of tables with one provenance: the archive itself, or our specimens."""

    source: Source
    opener: Callable[[str], Iterator[tuple[int, Any]] | None]
    label: str


@dataclass
class Archive:
    """The papers and links of one or more parts, read lazily; `rejects` fills as rows are read."""

    parts: list[ArchivePart]
    rejects: list[Reject] = field(default_factory=list)
    allow_partial: bool = False  # a damaged file: record it and go on with the rows before the damage
    damages: list[Damage] = field(default_factory=list)

    @property
    def damaged(self) -> bool:
        return bool(self.damages)

    def rows(self, table: str, model: type[Row]) -> Iterator[tuple[Row, Source]]:
        """The table's rows that validate as `model`, in order, with the source of each; the rest are rejects."""
        for part in self.parts:
            stream = part.opener(table)
            if stream is None:
                continue
            where = f"{part.label}:{TABLES[table][0]}"
            count, last = 0, None
            try:
                for position, raw in stream:
                    count, last = position + 1, raw
                    row = self._validate(model, raw, where, position)
                    if row is not None:
                        yield row, part.source
            except ArchiveDamaged as exc:
                self._damage(exc.damage)
            except (ijson.JSONError, OSError, EOFError, ValueError, zlib.error) as exc:
                self._damage(Damage(file=where, reason=str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
                                    rows=count, last_good=record_id(last)))

    def _damage(self, damage: Damage) -> None:
        """Stop (`ArchiveDamaged`), or with `allow_partial` record the damage once per file and go on."""
        if not self.allow_partial:
            raise ArchiveDamaged(damage)
        if all(d.file != damage.file for d in self.damages):
            self.damages.append(damage)
            self.rejects.append(Reject(file=damage.file, position=-1, record=damage.last_good,
                                       reason=f"partial: {damage.message()}"))

    def papers(self) -> Iterator[tuple[PaperRow, Source]]:
        return self.rows("papers", PaperRow)

    def links(self) -> Iterator[tuple[CodeLinkRow, Source]]:
        return self.rows("links", CodeLinkRow)

    def _validate(self, model: type[Row], raw: Any, where: str, position: int) -> Row | None:
        if not isinstance(raw, dict):
            self.rejects.append(Reject(file=where, position=position, record=None,
                                       reason=f"row is a {type(raw).__name__}, not an object"))
            return None
        try:
            return model.model_validate(raw)
        except ValidationError as exc:
            problems = [f"{'.'.join(str(p) for p in e['loc']) or 'row'}: {e['msg']}" for e in exc.errors()]
            self.rejects.append(Reject(file=where, position=position, record=record_id(raw),
                                       reason="; ".join(problems)))
            return None


def archive_source(snapshot: str = LAST_SNAPSHOT) -> Source:
    return Source(archive=ARCHIVE_NAME, snapshot=snapshot, licence_url=ARCHIVE_LICENCE_URL, row_kind="abstracts")


def specimen_source() -> Source:
    return Source(
        archive="paperproof specimens (written for paperproof; not archive material)",
        snapshot="bundled",
        licence_url="https://www.apache.org/licenses/LICENSE-2.0",
        row_kind="specimen",
    )


# --- raw JSON dumps -------------------------------------------------------------------------


def _dump_stream(path: Path) -> Iterator[tuple[int, Any]]:
    """Items of a top-level JSON array, one at a time (the dumps are single arrays), read ahead by a thread.
    Where the file breaks, `ArchiveDamaged` says where (`damage.locate` reads it again to find the byte)."""
    try:
        with io.BufferedReader(ReadAhead(path)) as raw:
            handle = gzip.GzipFile(fileobj=raw, mode="rb") if path.suffix == ".gz" else raw
            yield from enumerate(ijson.items(handle, "item", use_float=True))
    except (ijson.JSONError, EOFError, gzip.BadGzipFile, zlib.error, ValueError) as exc:
        raise ArchiveDamaged(locate(path, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)) from None


def _find_dump(directory: Path, stem: str) -> Path | None:
    for name in (f"{stem}.json", f"{stem}.json.gz"):
        if (directory / name).is_file():
            return directory / name
    return None


def dump_part(directory: Path, source: Source, label: str | None = None) -> ArchivePart | None:
    """A part reading `<stem>.json[.gz]` dump files in `directory`, or None when there are none."""
    found = {table: _find_dump(directory, stem) for table, (stem, _) in TABLES.items()}
    if not any(found.values()):
        return None

    def opener(table: str) -> Iterator[tuple[int, Any]] | None:
        path = found[table]
        return _dump_stream(path) if path else None

    return ArchivePart(source=source, opener=opener, label=label or str(directory))


# --- Hugging Face parquet -------------------------------------------------------------------


def _parquet_stream(data_files: list[str] | None, hub_id: str | None) -> Iterator[tuple[int, Any]]:
    import datasets  # imported lazily: only the parquet path needs it

    if hub_id is not None:
        stream = datasets.load_dataset(hub_id, split="train", streaming=True)
    else:
        stream = datasets.load_dataset("parquet", data_files={"train": data_files}, split="train", streaming=True)
    for position, row in enumerate(stream):
        yield position, _plain(row)


def _plain(value: Any) -> Any:
    """Parquet gives numpy scalars and arrays for nested columns; the row models want plain JSON."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist"):
        return _plain(value.tolist())
    return value


def parquet_part(directory: Path, source: Source) -> ArchivePart | None:
    """A part over `<dataset-name>/**/*.parquet` folders (a local copy of the hub datasets)."""
    found: dict[str, list[str]] = {}
    for table, (stem, hub_name) in TABLES.items():
        for name in dict.fromkeys((hub_name, stem)):
            files = sorted(str(p) for p in (directory / name).rglob("*.parquet")) if (directory / name).is_dir() else []
            if files:
                found[table] = files
                break
    if not found:
        return None

    def opener(table: str) -> Iterator[tuple[int, Any]] | None:
        return _parquet_stream(found[table], None) if table in found else None

    return ArchivePart(source=source, opener=opener, label=str(directory))


def hub_part(org: str, source: Source) -> ArchivePart:
    """A part streaming the datasets of a Hugging Face organisation (needs the network)."""

    def opener(table: str) -> Iterator[tuple[int, Any]] | None:
        return _parquet_stream(None, f"{org}/{TABLES[table][1]}")

    return ArchivePart(source=source, opener=opener, label=f"hf://{org}")


# --- entry points ---------------------------------------------------------------------------


def bundled_root() -> Path:
    """The snapshot shipped inside the package (archive slice and specimen repositories)."""
    return Path(str(resources.files("paperproof") / "snapshot"))


def _bundled_parts() -> list[tuple[Path, Source, str]]:
    """The bundled slice's dump folders, each with its rows' source and label: the archive's, the specimens'."""
    root = bundled_root()
    return [(root / "archive", archive_source(), "bundled/archive"),
            (root / "specimens", specimen_source(), "bundled/specimens")]


def bundled_archive() -> Archive:
    parts = [dump_part(folder, source, label=label) for folder, source, label in _bundled_parts()]
    return Archive([p for p in parts if p is not None])


def archive_folders(location: str | None) -> list[Path] | None:
    """The local folders the archive at `location` (as `open_archive` takes it) is read from: the bundled
    slice's when none is given, the directory itself, or None when it is not local files (a hub id)."""
    if location is None:
        return [folder for folder, _, _ in _bundled_parts()]
    return [Path(location)] if Path(location).is_dir() else None


def open_archive(location: str | None, allow_partial: bool = False) -> Archive:
    """The bundled snapshot (None), a directory of dumps or parquet folders, or a hub organisation id.

    A directory may hold `snapshot.json` (`{"snapshot": "YYYY-MM-DD"}`) to date its rows.
    """
    archive = _open(location)
    archive.allow_partial = allow_partial
    return archive


def _open(location: str | None) -> Archive:
    if location is None:
        return bundled_archive()
    path = Path(location)
    if path.is_dir():
        snapshot = LAST_SNAPSHOT
        manifest = path / "snapshot.json"
        if manifest.is_file():
            snapshot = str(json.loads(manifest.read_text())["snapshot"])
        source = archive_source(snapshot)
        part = dump_part(path, source) or parquet_part(path, source)
        if part is None:
            raise FileNotFoundError(
                f"{location}: no archive here; expected papers-with-abstracts.json[.gz] and "
                "links-between-papers-and-code.json[.gz], or folders of parquet files named after the datasets"
            )
        return Archive([part])
    if path.exists():
        raise NotADirectoryError(f"{location}: --archive takes a directory or a Hugging Face organisation id")
    if "/" in location or location.startswith((".", "~")):  # a path; an organisation id has no slash
        raise FileNotFoundError(f"{location}: no such directory")
    return Archive([hub_part(location.removeprefix("hf://"), archive_source())])
