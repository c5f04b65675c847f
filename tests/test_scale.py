"""What the build does differently at archive scale gives the same output as the plain way of doing it:
Markdown's prose shortcut, the link table on disk, list pages assembled without validation, shard planning."""

from __future__ import annotations

import json

import markdown
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperproof.build import search
from paperproof.build.links import read_link_table
from paperproof.build.pages import Paging, PaperList, PaperListing
from paperproof.build.paper_verdict import paper_verdict
from paperproof.build.records import about
from paperproof.build.render import markdown_html, plain_text, prose_html
from paperproof.build.renderer import ListJob, Renderer
from paperproof.build.urls import SiteUrls
from paperproof.catalogue.archive import open_archive
from paperproof.catalogue.repo_url import safe_key
from tests.test_archive import LINK, PAPER, write_dump

ALPHABET = "ab Z9é\u00a0\u2028\u3000\n\n\t\r.-():/$^{}=+!\"',%;?@&<>\\_~#*`[]|x"


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=40))
def test_the_prose_shortcut_gives_what_markdown_gives(text):
    fast = prose_html(text)
    if fast is not None:
        assert fast == markdown.markdown(text, extensions=["fenced_code", "tables"], output_format="html")
        assert fast == markdown.markdown(text)


def test_prose_takes_the_shortcut_and_markup_does_not():
    assert prose_html("We show a > b & c < d, with $\\mathcal{O}(n^2)$ cost on CIFAR_10.") is not None
    for text in ("*em*", "a_b_", "# Title", "- item", "1. item", "<b>x</b>", "a &amp; b", "\\*", "[x](y)", "  indented"):
        assert prose_html(text) is None, text
    # and the public functions give the same either way
    assert str(markdown_html("p < 0.05 & more")) == "<p>p &lt; 0.05 &amp; more</p>"
    assert plain_text("p < 0.05 & more") == "p < 0.05 & more"


def test_the_link_table_groups_and_deduplicates_as_the_dump_says(tmp_path):
    other = {**LINK, "paper_url": "https://paperswithcode.com/paper/another", "repo_url": "https://github.com/c/d"}
    rows = [LINK, other, {**LINK, "repo_url": "https://github.com/A/B/"}, {**LINK, "repo_url": "https://gitlab.com/x/y"},
            {**LINK, "repo_url": 7}]
    write_dump(tmp_path, "papers-with-abstracts", [PAPER])
    write_dump(tmp_path, "links-between-papers-and-code", rows)
    archive = open_archive(str(tmp_path))
    table = read_link_table(archive, tmp_path / "links.sqlite", "digest")
    assert len(archive.rejects) == 1  # the link whose repo_url is not a URL
    good = table.get("a-good-paper")
    assert [link.repo_url for link in good] == ["https://github.com/a/b", "https://gitlab.com/x/y"]  # dump order
    assert good[0].is_official is True and good[0].framework == "pytorch" and good[0].paper_slug == "a-good-paper"
    assert [slug for slug, _ in table.items()] == ["a-good-paper", "another"] and len(table) == 2
    assert "another" in table and table.get("missing") == []
    assert table.get_many(["another", "missing", "a-good-paper"]) == {"a-good-paper": good, "another": table.get("another")}
    assert {safe_key(link.repo_url).key for links in table.values() for link in links} == {
        "github.com/a/b", "github.com/c/d", "gitlab.com/x/y"}
    # built again from the same dump: the table is reused, and its rejects reported again
    again = open_archive(str(tmp_path))
    reused = read_link_table(again, tmp_path / "links.sqlite", "digest")
    assert reused.count() == 3 and len(again.rejects) == 1


def test_list_pages_assembled_without_validation_serialise_as_validated_records(tmp_path):
    urls = SiteUrls()
    renderer = Renderer(urls, "2025-07-28T00:00:00+00:00", tmp_path, False)
    listings = [PaperListing(slug=f"p{i}", title=f"T <{i}> é", date=None if i else "2020-01-01", authors=["A"],
                             tasks=["X"], specimen=False, samples=0, statuses={}, verdict=paper_verdict([]),
                             url=urls.paper(f"p{i}"),
                             json_url=urls.paper_json(f"p{i}")) for i in range(3)]
    paging = Paging(page=1, pages=1, page_size=1000, total=3, page_url="/papers/", json_url="/api/papers.json",
                    prev=None, next=None, prev_page_url=None, next_page_url=None)
    renderer.list_page(ListJob("papers", paging.model_dump_json(), [x.model_dump_json() for x in listings]))
    validated = PaperList(about=about(urls), schema_url=urls.schema("paper-list"), paging=paging, papers=listings)
    assert (tmp_path / "api" / "papers.json").read_text() == validated.model_dump_json()


def test_shards_pack_buckets_and_cut_the_large_ones():
    counts = [("aa", 2), ("ab", 1), ("ba", 7), ("zz", 1)]  # papers 0-1, 2, 3-9, 10 in bucket-then-slug order
    assert search.plan_counts(counts, size=3) == [(0, 2), (3, 5), (6, 8), (9, 10)]  # the last: a slice and "zz"
    assert search.plan_counts([("aa", 3), ("ab", 3)], size=3) == [(0, 2), (3, 5)]
    assert search.plan_counts([], size=3) == []


def test_a_search_record_carries_the_four_fields_as_content_and_metadata():
    line = search.record("/paper/p/", "A <b> title", ["A. One", "B. Two"], [], "An abstract.", None)
    fields = json.loads(line)
    assert "\n" not in line and fields["url"] == "/paper/p/"
    assert fields["meta"] == {"title": "A <b> title", "authors": "A. One, B. Two"}  # no tasks, no date: absent
    assert fields["content"] == "A <b> title.\nA. One, B. Two.\nAn abstract."  # each field ends a sentence


def test_pagefind_indexes_records_streamed_to_its_service(tmp_path):
    if search.binary() is None:
        pytest.skip("no Pagefind binary")
    lines = [search.record(f"/paper/p{i}/", f"Paper {i}", ["Ann"], ["Task"], f"word{i} " * 50, "2020-01-01")
             for i in range(300)]  # more than one pipe buffer of records in flight
    (tmp_path / "r.jsonl").write_text("\n".join(lines) + "\n")
    written = search.index_shards([(2, tmp_path / "r.jsonl", tmp_path / "out")], concurrency=2)
    on_disk = sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert written == {2: on_disk}  # the build lists a shard's files from this, without walking the folder
    entry = json.loads((tmp_path / "out" / "pagefind-entry.json").read_text())
    assert entry["languages"]["en"]["page_count"] == 300
    assert not (tmp_path / "out" / "pagefind-ui.js").exists()  # shard 2: the UI lives in the first shard only
    # pipelined (the default window, five windows of records) or one record at a time: the same index
    one_by_one = search.Indexer(search.binary(), window=1).index(lines, tmp_path / "one", search.unused(2))
    assert one_by_one == written[2]
    assert all((tmp_path / "one" / name).read_bytes() == (tmp_path / "out" / name).read_bytes() for name in one_by_one)
    (tmp_path / "bad.jsonl").write_text('{"url": "/x/", "content": "x", "meta": {"title": 3}}\n')
    with pytest.raises(search.PagefindError):
        search.index_shards([(1, tmp_path / "bad.jsonl", tmp_path / "bad")])


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=40))
def test_the_plain_text_of_prose_is_its_words(text):
    from html import unescape

    import nh3

    if prose_html(text) is not None:
        assert plain_text(text, 10_000) == " ".join(unescape(nh3.clean(markdown.markdown(text), tags=set())).split())


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=40))
def test_prose_needs_no_sanitising(text):
    from paperproof.build.render import sanitise

    if text and prose_html(text) is not None:
        assert markdown_html(text) == sanitise(prose_html(text))
