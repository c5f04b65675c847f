"""The archive reader streams dumps, parquet folders and the bundled slice, and reports bad rows."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from paperproof.catalogue.archive import LAST_SNAPSHOT, archive_folders, bundled_archive, bundled_root, open_archive
from paperproof.catalogue.damage import ArchiveDamaged

PAPER = {
    "paper_url": "https://paperswithcode.com/paper/a-good-paper", "arxiv_id": "2101.00001", "nips_id": None,
    "openreview_id": None, "title": "A Good Paper", "abstract": "We study things.", "short_abstract": None,
    "url_abs": "https://arxiv.org/abs/2101.00001v1", "url_pdf": "https://arxiv.org/pdf/2101.00001v1.pdf",
    "proceeding": None, "authors": ["A. Author"], "tasks": ["Image Classification"], "date": "2021-01-01",
    "conference_url_abs": None, "conference_url_pdf": None, "conference": None, "reproduces_paper": None,
    "methods": [{"name": "Adam", "full_name": "Adam", "description": "", "introduced_year": 2014,
                 "source_url": None, "source_title": None, "code_snippet_url": None,
                 "main_collection": {"name": "Optimizers", "description": "", "parent": None, "area": "General"}}],
}
LINK = {
    "paper_url": PAPER["paper_url"], "paper_title": PAPER["title"], "paper_arxiv_id": "2101.00001",
    "paper_url_abs": None, "paper_url_pdf": None, "repo_url": "https://github.com/a/b",
    "is_official": True, "mentioned_in_paper": False, "mentioned_in_github": True, "framework": "pytorch",
}


def write_dump(directory: Path, stem: str, rows: list, gz: bool = False) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    data = json.dumps(rows).encode()
    if gz:
        (directory / f"{stem}.json.gz").write_bytes(gzip.compress(data))
    else:
        (directory / f"{stem}.json").write_bytes(data)


@pytest.mark.parametrize("gz", [False, True])
def test_dumps_stream_papers_and_links(tmp_path, gz):
    write_dump(tmp_path, "papers-with-abstracts", [PAPER], gz)
    write_dump(tmp_path, "links-between-papers-and-code", [LINK], gz)
    archive = open_archive(str(tmp_path))
    papers = list(archive.papers())
    links = list(archive.links())
    assert [p.slug for p, _ in papers] == ["a-good-paper"]
    assert papers[0][0].methods[0].main_collection.area == "General"
    assert papers[0][1].snapshot == LAST_SNAPSHOT and papers[0][1].row_kind == "abstracts"
    assert links[0][0].repo_url == "https://github.com/a/b" and links[0][0].is_official is True
    assert archive.rejects == []


def test_bad_rows_are_reported_with_position_and_reason_and_skipped(tmp_path):
    bad_url = {**PAPER, "paper_url": "https://example.org/nothing-here"}
    no_title = {k: v for k, v in PAPER.items() if k != "title"}
    second = {**PAPER, "paper_url": "https://paperswithcode.com/paper/second"}
    write_dump(tmp_path, "papers-with-abstracts", [bad_url, PAPER, no_title, "not an object", second])
    write_dump(tmp_path, "links-between-papers-and-code", [{**LINK, "repo_url": "not a url"}, LINK])
    archive = open_archive(str(tmp_path))
    assert [p.slug for p, _ in archive.papers()] == ["a-good-paper", "second"]
    assert len(list(archive.links())) == 1
    rejects = {(r.position, r.file.rsplit(":", 1)[-1]): r for r in archive.rejects}
    assert "does not end in /paper/<slug>" in rejects[0, "papers-with-abstracts"].reason
    assert rejects[0, "papers-with-abstracts"].record == "https://example.org/nothing-here"
    assert rejects[2, "papers-with-abstracts"].reason.startswith("title:")
    assert "not an object" in rejects[3, "papers-with-abstracts"].reason
    assert "not an http(s) URL" in rejects[0, "links-between-papers-and-code"].reason


def test_a_truncated_dump_is_an_error_not_a_shorter_archive(tmp_path):
    text = json.dumps([PAPER, {**PAPER, "paper_url": "https://paperswithcode.com/paper/two"}])
    tmp_path.joinpath("papers-with-abstracts.json").write_text(text[: len(text) - 40])
    with pytest.raises(ArchiveDamaged, match=r"papers-with-abstracts.json: cannot be read to its end.*"
                                             r"the last good row is #0 \(https://paperswithcode.com/paper/a-good-paper\)"):
        list(open_archive(str(tmp_path)).papers())
    partial = open_archive(str(tmp_path), allow_partial=True)
    assert [p.slug for p, _ in partial.papers()] == ["a-good-paper"]
    assert partial.damaged and partial.rejects[-1].reason.startswith("partial: ")


def test_a_bad_row_reports_every_invalid_field_and_both_positions(tmp_path):
    no_url = {k: v for k, v in LINK.items() if k not in ("repo_url", "is_official")}
    write_dump(tmp_path, "links-between-papers-and-code", [LINK, {**no_url, "paper_url": "nowhere", "framework": 3}])
    write_dump(tmp_path, "papers-with-abstracts", [PAPER])
    archive = open_archive(str(tmp_path))
    assert len(list(archive.links())) == 1
    (reject,) = archive.rejects
    assert reject.position == 1
    fields = [part.split(":")[0] for part in reject.reason.split("; ")]
    assert fields == ["paper_url", "repo_url", "framework"]
    assert reject.where().endswith("links-between-papers-and-code row #1 (0-based; row 2 counting from 1)")


def test_older_dumps_without_is_official_and_framework(tmp_path):
    old = {k: v for k, v in LINK.items() if k not in ("is_official", "framework")}
    write_dump(tmp_path, "links-between-papers-and-code", [old])
    write_dump(tmp_path, "papers-with-abstracts", [PAPER])
    (link, _), = open_archive(str(tmp_path)).links()
    assert link.is_official is None and link.framework is None


def test_parquet_folders_named_after_the_hub_datasets(tmp_path):
    papers_dir = tmp_path / "papers-with-abstracts" / "data"
    links_dir = tmp_path / "links-between-paper-and-code" / "data"
    papers_dir.mkdir(parents=True)
    links_dir.mkdir(parents=True)
    pd.DataFrame([PAPER, {**PAPER, "paper_url": "https://paperswithcode.com/paper/two", "title": "Two"}]).to_parquet(
        papers_dir / "train-00000-of-00001.parquet")
    pd.DataFrame([LINK]).to_parquet(links_dir / "train-00000-of-00001.parquet")
    (tmp_path / "snapshot.json").write_text('{"snapshot": "2025-07-01"}')
    archive = open_archive(str(tmp_path))
    papers = list(archive.papers())
    assert [p.slug for p, _ in papers] == ["a-good-paper", "two"]
    assert papers[0][0].authors == ["A. Author"] and papers[0][0].methods[0].name == "Adam"
    assert papers[0][1].snapshot == "2025-07-01"
    assert [link.repo_url for link, _ in archive.links()] == ["https://github.com/a/b"]


def test_bundled_slice_has_the_two_real_papers_and_marked_specimens():
    archive = bundled_archive()
    kinds = {p.slug: s.row_kind for p, s in archive.papers()}
    assert kinds["dissecting-sample-hardness-a-fine-grained"] == "abstracts"
    assert kinds["dataset-cartography-mapping-and-diagnosing"] == "abstracts"
    specimens = [slug for slug, kind in kinds.items() if kind == "specimen"]
    assert specimens and all(slug.startswith("specimen-") for slug in specimens)
    assert archive.rejects == []


def test_missing_directory_and_empty_directory_say_what_to_do(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such directory"):
        open_archive(str(tmp_path / "nope" / "x"))
    with pytest.raises(FileNotFoundError, match="expected papers-with-abstracts"):
        open_archive(str(tmp_path))


def test_archive_folders_are_the_bundled_slices_without_a_location_the_directory_or_none_for_a_hub_id(tmp_path):
    assert archive_folders(None) == [bundled_root() / "archive", bundled_root() / "specimens"]
    assert [part.label for part in bundled_archive().parts] == ["bundled/archive", "bundled/specimens"]
    assert archive_folders(str(tmp_path)) == [tmp_path]
    assert archive_folders("pwc-archive") is None
