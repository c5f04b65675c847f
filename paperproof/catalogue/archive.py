"""Reading the Papers with Code archive: raw JSON dumps, Hugging Face parquet, and the bundled slice.

Rows stream (ijson over the dumps, `datasets` streaming over parquet); nothing holds the archive
as one table. A row that does not validate becomes a `Reject` naming its file, position and reason,
and reading goes on. Every part of an archive carries its provenance, which the twin's `source`
block repeats, so specimen rows can never pass for archive material.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import ijson
from pydantic import BaseModel, ValidationError

from paperproof.catalogue.archive_rows import (
    CodeLinkRow,
    DatasetRow,
    EvaluationTask,
    MethodRow,
    PaperRow,
    Source,
)
from paperproof.catalogue.readahead import ReadAhead

ARCHIVE_LICENCE_URL = "https://creativecommons.org/licenses/by-sa/4.0/legalcode"
ARCHIVE_NAME = "pwc-archive (Hugging Face), CC BY-SA 4.0"
LAST_SNAPSHOT = "2025-07-28"  # the archive is frozen: Papers with Code shut down in July 2025
HUB_ORG = "pwc-archive"

# Table name -> (dump file stem, Hugging Face dataset name, row model).
TABLES: dict[str, tuple[str, str, type[BaseModel]]] = {
    "papers": ("papers-with-abstracts", "papers-with-abstracts", PaperRow),
    "links": ("links-between-papers-and-code", "links-between-paper-and-code", CodeLinkRow),
    "methods": ("methods", "methods", MethodRow),
    "datasets": ("datasets", "datasets", DatasetRow),
    "evaluation_tables": ("evaluation-tables", "evaluation-tables", EvaluationTask),
}

Row = TypeVar("Row", bound=BaseModel)


class Reject(BaseModel):
    """A row (or a whole file) that could not be read, and why; the build reports these."""

    file: str
    position: int
    record: str | None
    reason: str


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

    def rows(self, table: str) -> Iterator[tuple[Row, Source]]:
        _, _, model = TABLES[table]
        for part in self.parts:
            stream = part.opener(table)
            if stream is None:
                continue
            where = f"{part.label}:{TABLES[table][0]}"
            try:
                for position, raw in stream:
                    row = self._validate(model, raw, where, position)
                    if row is not None:
                        yield row, part.source
            except (ijson.JSONError, OSError, EOFError, ValueError) as exc:
                self.rejects.append(Reject(file=where, position=-1, record=None,
                                           reason=f"file unreadable past this point: {exc}"))

    def papers(self) -> Iterator[tuple[PaperRow, Source]]:
        return self.rows("papers")

    def links(self) -> Iterator[tuple[CodeLinkRow, Source]]:
        return self.rows("links")

    def _validate(self, model: type[Row], raw: Any, where: str, position: int) -> Row | None:
        if not isinstance(raw, dict):
            self.rejects.append(Reject(file=where, position=position, record=None,
                                       reason=f"row is a {type(raw).__name__}, not an object"))
            return None
        try:
            return model.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"]) or "row"
            record = raw.get("paper_url") or raw.get("repo_url") or raw.get("url") or raw.get("task")
            self.rejects.append(Reject(file=where, position=position,
                                       record=str(record)[:200] if record else None,
                                       reason=f"{loc}: {first['msg']}"))
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
    """Items of a top-level JSON array, one at a time (the dumps are single arrays), read ahead by a thread."""
    with io.BufferedReader(ReadAhead(path)) as raw:
        handle = gzip.GzipFile(fileobj=raw, mode="rb") if path.suffix == ".gz" else raw
        yield from enumerate(ijson.items(handle, "item", use_float=True))


def _find_dump(directory: Path, stem: str) -> Path | None:
    for name in (f"{stem}.json", f"{stem}.json.gz"):
        if (directory / name).is_file():
            return directory / name
    return None


def dump_part(directory: Path, source: Source, label: str | None = None) -> ArchivePart | None:
    """A part reading `<stem>.json[.gz]` dump files in `directory`, or None when there are none."""
    found = {table: _find_dump(directory, stem) for table, (stem, _, _) in TABLES.items()}
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
    for table, (stem, hub_name, _) in TABLES.items():
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


def bundled_archive() -> Archive:
    root = bundled_root()
    parts = [
        dump_part(root / "archive", archive_source(), label="bundled/archive"),
        dump_part(root / "specimens", specimen_source(), label="bundled/specimens"),
    ]
    return Archive([p for p in parts if p is not None])


def open_archive(location: str | None) -> Archive:
    """The bundled snapshot (None), a directory of dumps or parquet folders, or a hub organisation id.

    A directory may hold `snapshot.json` (`{"snapshot": "YYYY-MM-DD"}`) to date its rows.
    """
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
    if "/" in location.strip("/") or location.startswith((".", "~")):
        raise FileNotFoundError(f"{location}: no such directory")
    return Archive([hub_part(location.removeprefix("hf://"), archive_source())])
