"""A dump that breaks is located to the byte: cut short, bytes inserted, gzip cut short or corrupt."""

from __future__ import annotations

import gzip
import json

import pytest

from paperproof.catalogue.archive import open_archive
from paperproof.catalogue.damage import ArchiveDamaged, locate
from tests.test_archive import PAPER

ROWS = [{**PAPER, "paper_url": f"https://paperswithcode.com/paper/p{i}", "title": f"Pé {i}",
         "abstract": "ü" * (i * 700)} for i in range(20)]
TEXT = json.dumps(ROWS, ensure_ascii=False).encode()


def row_end(i: int) -> int:
    """The byte offset just past row `i` of TEXT (each row's JSON is found in the text as written)."""
    encoded = [json.dumps(r, ensure_ascii=False).encode() for r in ROWS]
    return 1 + sum(len(e) for e in encoded[:i + 1]) + 2 * i


def test_a_dump_cut_short_names_the_byte_and_the_last_good_row(tmp_path):
    cut = row_end(11) + 40
    path = tmp_path / "papers-with-abstracts.json"
    path.write_bytes(TEXT[:cut])
    damage = locate(path, "unused")
    assert (damage.offset, damage.rows, damage.last_good, damage.last_good_end) == (
        cut, 12, "https://paperswithcode.com/paper/p11", row_end(11))
    assert "premature end" in damage.reason
    message = damage.message()
    assert str(path) in message and f"byte {cut:,}" in message
    assert "row #12 (0-based; row 13 counting from 1)" in message and "p11" in message


def test_inserted_bytes_are_found_where_they_are(tmp_path):
    at = row_end(4) + 2  # just after the comma and space following row 4
    path = tmp_path / "papers-with-abstracts.json"
    path.write_bytes(TEXT[:at] + b"\x00\xffjunk" + TEXT[at:])
    with pytest.raises(ArchiveDamaged) as raised:
        list(open_archive(str(tmp_path)).papers())
    damage = raised.value.damage
    assert (damage.offset, damage.rows, damage.last_good) == (at, 5, "https://paperswithcode.com/paper/p4")
    assert damage.reason.startswith("invalid JSON")


def test_a_gzip_dump_cut_short(tmp_path):
    packed = gzip.compress(TEXT)
    path = tmp_path / "papers-with-abstracts.json.gz"
    path.write_bytes(packed[: len(packed) // 2])
    with pytest.raises(ArchiveDamaged) as raised:
        list(open_archive(str(tmp_path)).papers())
    damage = raised.value.damage
    assert damage.compressed_size == len(packed) // 2 and "cut short" in damage.gzip
    # every byte the truncated stream holds is read: the damage is at its end, inside the row after the last good
    with gzip.open(path, "rb") as handle:
        salvaged = b""
        try:
            while chunk := handle.read1(1):
                salvaged += chunk
        except EOFError:
            pass
    assert damage.offset == len(salvaged)
    assert damage.last_good_end == max(row_end(i) for i in range(len(ROWS)) if row_end(i) <= damage.offset)


def test_a_corrupt_gzip_dump_says_where_the_gzip_data_breaks(tmp_path):
    packed = bytearray(gzip.compress(TEXT))
    packed[len(packed) // 2] ^= 0xFF
    path = tmp_path / "papers-with-abstracts.json.gz"
    path.write_bytes(bytes(packed))
    with pytest.raises(ArchiveDamaged) as raised:
        list(open_archive(str(tmp_path)).papers())
    damage = raised.value.damage
    assert damage.gzip and "corrupt at byte" in damage.gzip
    assert damage.rows < len(ROWS) and str(path) in str(raised.value)


def test_text_after_the_array_is_damage_after_every_row(tmp_path):
    path = tmp_path / "papers-with-abstracts.json"
    path.write_bytes(TEXT + b" trailing")
    damage = locate(path, "unused")
    assert (damage.offset, damage.rows, damage.after_rows) == (len(TEXT) + 1, len(ROWS), True)
    assert "after all 20 rows" in damage.message()


def test_allow_partial_keeps_the_rows_before_the_damage_once(tmp_path):
    path = tmp_path / "papers-with-abstracts.json"
    path.write_bytes(TEXT[: row_end(2) + 5])
    archive = open_archive(str(tmp_path), allow_partial=True)
    assert [p.slug for p, _ in archive.papers()] == ["p0", "p1", "p2"]
    assert [p.slug for p, _ in archive.papers()] == ["p0", "p1", "p2"]  # read again: reported once
    assert len(archive.damages) == 1 and archive.damages[0].rows == 3
    assert [r.reason.startswith("partial: ") for r in archive.rejects] == [True]
