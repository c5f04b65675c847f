"""A dump that cannot be read to its end: where the damage is, and the last row read before it.

The streaming parser says only that a file broke, somewhere in its last buffer. A download cut short,
or bytes gone astray, must not pass for a shorter archive, so the build stops, and the message has
to send the reader to the place: `locate` reads the file again with the standard library's decoder,
one row at a time, and counts bytes, which finds the offset exactly. It runs only once a file has
failed, so the normal path pays nothing for it.
"""

from __future__ import annotations

import codecs
import json
import zlib
from pathlib import Path
from typing import Any

from pydantic import BaseModel

BLOCK = 1 << 20
_SLACK = 16  # a parse error this near the end of the text read so far may only mean the row goes on
_TOO_LONG = 64 << 20  # no row of the archive is near this long: an unended row here is damage


def record_id(raw: Any) -> str | None:
    """What names a row to a reader: its paper URL, repository URL, URL or task."""
    if not isinstance(raw, dict):
        return None
    value = raw.get("paper_url") or raw.get("repo_url") or raw.get("url") or raw.get("task")
    return str(value)[:200] if value else None


class Damage(BaseModel):
    """Where a file stopped being readable. `offset` counts bytes of the JSON text (decompressed, for a
    `.gz` file, whose own size is `compressed_size`); `rows` good rows came before it, the last of them
    `last_good`, ending at byte `last_good_end`."""

    file: str
    reason: str
    offset: int | None = None
    rows: int = 0
    last_good: str | None = None
    last_good_end: int | None = None
    compressed_size: int | None = None
    gzip: str | None = None  # what the gzip layer says, when it broke too
    after_rows: bool = False  # the damage follows the array's closing bracket, not inside a row


    def message(self, short: bool = False) -> str:
        """The whole story; `short` names the file without its folder (for a published page)."""
        name = Path(self.file).name if short else self.file
        where = f" at byte {self.offset:,}" if self.offset is not None else ""
        if self.compressed_size is not None and self.offset is not None:
            gz = f"; {self.gzip}" if self.gzip else ""
            where += f" of its decompressed JSON (the .gz file is {self.compressed_size:,} bytes{gz})"
        text = f"{name}: cannot be read to its end: {self.reason}{where}; "
        if self.after_rows:
            text += f"after all {self.rows} rows, "
        else:
            text += f"row #{self.rows} (0-based; row {self.rows + 1} counting from 1) is damaged, "
        if self.rows == 0:
            return text + "and no row before it could be read"
        end = f", ending at byte {self.last_good_end:,}" if self.last_good_end is not None else ""
        return text + f"the last good row is #{self.rows - 1} ({self.last_good or 'unnamed'}){end}"


class ArchiveDamaged(Exception):
    """An input could not be read to its end; the build stops before publishing anything."""

    def __init__(self, damage: Damage) -> None:
        super().__init__(damage.message())
        self.damage = damage


class _Inflate:
    """A gzip file's decompressed bytes, block by block, kept up to the byte where it breaks (`broken` then
    says how: cut short, or corrupt at a byte of the file). `gzip.GzipFile` loses the last block's output
    when it raises, and with it the place of the damage."""

    def __init__(self, path: Path) -> None:
        self.file = open(path, "rb")
        self.z = zlib.decompressobj(31)
        self.fed = False  # the current member has been given data
        self.at = 0  # bytes of the file read
        self.done = False
        self.broken: str | None = None

    def read(self) -> bytes:
        if self.done:
            return b""
        data = self.file.read(1 << 16)
        start, self.at = self.at, self.at + len(data)
        if not data:
            self.done = True
            if self.fed and not self.z.eof:
                self.broken = "the gzip stream ends early: the file was cut short"
            return b""
        out = []
        while data:
            before = self.z.copy()
            try:
                out.append(self.z.decompress(data))
            except zlib.error as exc:
                out.append(self._salvage(before, data, start, exc))
                return b"".join(out)
            self.fed = True
            if not self.z.eof:
                break
            data, self.z, self.fed = self.z.unused_data, zlib.decompressobj(31), False  # the next member
            start = self.at - len(data)
        return b"".join(out)

    def _salvage(self, z: Any, data: bytes, start: int, exc: zlib.error) -> bytes:
        """The output of `data` up to the byte zlib refuses, fed one byte at a time (only once, at the damage)."""
        out = []
        for n in range(len(data)):
            try:
                out.append(z.decompress(data[n:n + 1]))
            except zlib.error:
                self.broken = f"the gzip data is corrupt at byte {start + n:,} of the .gz file: {exc}"
                break
        self.done = True
        return b"".join(out)

    def close(self) -> None:
        self.file.close()


class _Text:
    """The JSON text of a dump read block by block, with byte offsets of positions in it. Bytes that are not
    UTF-8 become surrogates (`surrogateescape`), one per byte, so counting bytes stays exact."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if path.suffix == ".gz":
            self.inflate: _Inflate | None = _Inflate(path)
            self.handle: Any = self.inflate
        else:
            self.inflate = None
            self.handle = open(path, "rb")
        self.decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
        self.text = ""
        self.base = 0  # byte offset of text[0]
        self._mark = (0, 0)  # a position in text and its byte offset: offsets are counted on from the last one
        self.eof = False

    @property
    def broken(self) -> str | None:
        return self.inflate.broken if self.inflate is not None else None

    def more(self) -> None:
        block = self.handle.read() if self.inflate is not None else self.handle.read(BLOCK)
        self.text += self.decoder.decode(block, final=not block)
        self.eof = not block

    def byte(self, index: int) -> int:
        at, offset = self._mark if index >= self._mark[0] else (0, self.base)
        offset += len(self.text[at:index].encode("utf-8", "surrogateescape"))
        self._mark = (index, offset)
        return offset

    def drop(self, index: int) -> int:
        """Forget the text before `index`; returns where `index` now is (0)."""
        self.base = self.byte(index)
        self.text = self.text[index:]
        self._mark = (0, self.base)
        return 0

    def close(self) -> None:
        self.handle.close()


def locate(path: Path, fallback: str) -> Damage:
    """Read the top-level JSON array of `path` row by row until it breaks; the damage found, or, should the
    file read to its end here (it broke only for the streaming parser), one that says `fallback`."""
    decoder = json.JSONDecoder()
    source = _Text(path)
    rows, last, last_end = 0, None, None
    size = path.stat().st_size if path.suffix == ".gz" else None

    def damage(reason: str, index: int, after_rows: bool = False) -> Damage:
        return Damage(file=str(path), reason=reason, offset=source.byte(index), rows=rows,
                      last_good=last, last_good_end=last_end, compressed_size=size, gzip=source.broken,
                      after_rows=after_rows)

    try:
        i = 0
        expect = "["
        while True:
            while True:  # skip whitespace, reading on as needed
                while i < len(source.text) and source.text[i] in " \t\r\n":
                    i += 1
                if i < len(source.text) or source.eof:
                    break
                source.more()
            if i >= len(source.text):
                if expect == "end" and source.broken:
                    return damage("the JSON array is complete but the gzip file is not", i, after_rows=True)
                if expect == "end":
                    return Damage(file=str(path), reason=fallback, rows=rows, last_good=last, last_good_end=last_end,
                                  compressed_size=size)
                return damage("premature end of the data" + (" inside the row" if expect != "[" else ""), i)
            char = source.text[i]
            if expect == "[":
                if char != "[":
                    return damage(f"the file is not a JSON array (it starts with {char!r})", i)
                i, expect = i + 1, "first"
                continue
            if expect == "end":
                return damage(f"text after the closing ']' ({char!r})", i, after_rows=True)
            if expect in ("first", "next") and char == "]":
                i, expect = i + 1, "end"
                continue
            if expect == "next":
                if char != ",":
                    return damage(f"expected ',' or ']' after a row, found {char!r}", i)
                i, expect = i + 1, "row"
                continue
            try:
                value, end = decoder.raw_decode(source.text, i)
            except json.JSONDecodeError as exc:
                near_end = exc.pos >= len(source.text) - _SLACK or exc.msg.startswith("Unterminated string")
                if not source.eof and near_end and len(source.text) - i < _TOO_LONG:
                    source.more()
                    continue
                if source.eof and near_end:
                    return damage("premature end of the data inside the row", len(source.text))
                return damage(f"invalid JSON ({exc.msg})", exc.pos)
            rows += 1
            last, last_end = record_id(value), source.byte(end)
            i, expect = end, "next"
            if i > BLOCK:
                i = source.drop(i)
    finally:
        source.close()


__all__ = ["ArchiveDamaged", "Damage", "locate", "record_id"]
