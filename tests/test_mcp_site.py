"""What the MCP tools read of a built site (`serve.mcp_site`): arXiv ids in every spelling, slugs, code by hash
or prefix (an ambiguous one is an error), search, and a site built under a `--base-url`. The sites are real
builds of papers whose code comes from the bundled shipped records (nothing is run)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from paperproof.build.pipeline import BuildConfig, build
from paperproof.serve.mcp_site import HEAD_BYTES, NotInSite, SiteReader, arxiv_key
from tests.test_archive import LINK, PAPER, write_dump
from tests.test_code_pages import SHIPPED, shipped_samples

LONG = {**PAPER, "paper_url": "https://paperswithcode.com/paper/long-one", "arxiv_id": "2303.01234",
        "title": "A " + "very " * (HEAD_BYTES // 4) + "long title"}
TRICK = {**PAPER, "paper_url": "https://paperswithcode.com/paper/trick", "arxiv_id": "2404.00404",
         "title": 'Trick ","arxiv_id":"1111.11111" in a title'}


def built(root: Path, base_url: str = "") -> Path:
    papers = [PAPER, LONG, TRICK]
    write_dump(root / "archive", "papers-with-abstracts", papers)
    write_dump(root / "archive", "links-between-papers-and-code",
               [{**LINK, "paper_url": p["paper_url"], "paper_title": p["title"], "repo_url": SHIPPED} for p in papers])
    build(BuildConfig(archive=str(root / "archive"), out=root / "site", cache=None, jobs=1, base_url=base_url))
    return root / "site"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built(tmp_path_factory.mktemp("reader"))


@pytest.mark.parametrize("text, key", [
    ("2403.04551", "2403.04551"), ("arXiv:2403.04551v2", "2403.04551"), ("https://arxiv.org/abs/2403.04551v1", "2403.04551"),
    ("http://www.arxiv.org/pdf/2403.04551v3.pdf", "2403.04551"), (" 1706.0376 ", "1706.0376"),
    ("hep-th/9901001v2", "hep-th/9901001"), ("a-good-paper", None), ("2403.04551/../x", None),
])
def test_arxiv_ids_in_every_spelling(text, key):
    assert arxiv_key(text) == key


def test_papers_by_arxiv_id_and_slug_even_where_a_title_is_long_or_quotes_a_key(site):
    reader = SiteReader(site)
    assert reader.paper("arXiv:2101.00001v9")["title"] == PAPER["title"]
    assert reader.paper("a-good-paper")["title"] == PAPER["title"]
    assert reader.paper("2303.01234")["title"] == LONG["title"]  # past the head read: the whole twin is read
    assert reader.paper("2404.00404")["title"] == TRICK["title"]
    with pytest.raises(NotInSite, match="no paper with arXiv id 1111.11111"):
        reader.paper("1111.11111")  # the escaped quote in the title is not a key
    with pytest.raises(NotInSite, match="neither an arXiv id"):
        reader.paper("../index")
    with pytest.raises(NotInSite, match="no paper with slug 'no-such-paper'"):
        reader.paper("no-such-paper")
    samples = reader.paper_samples("2101.00001")
    assert samples["arxiv_id"] == "2101.00001" and {s["repo"] for s in samples["samples"]} == {"eliorc/tavolo"}


def test_code_by_hash_or_prefix_and_an_ambiguous_prefix_says_so(site, tmp_path):
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    reader = SiteReader(copy)
    names = sorted(p.stem for p in (copy / "code").iterdir())
    assert len(names) == shipped_samples()
    sha = names[0]
    assert reader.code(sha) == reader.code(sha[:16]) == reader.code(sha[:16].upper()) == json.loads(
        (copy / "code" / f"{sha}.json").read_text())
    for bad, said in (("xyz", "is not a code sha256"), (sha[:15], "is not a code sha256"), (sha + "0", "is not")):
        with pytest.raises(NotInSite, match=said):
            reader.code(bad)
    # a second code that shares the first 16 digits (made here: sha256 collisions are not to be had)
    twin = sha[:16] + ("0" if sha[16] != "0" else "1") * 48
    shutil.copy(copy / "code" / f"{sha}.json", copy / "code" / f"{twin}.json")
    (copy / ".paperproof-build").write_text('{"tree":"changed"}\n')
    with pytest.raises(NotInSite, match=rf"sha256 prefix {sha[:16]} is ambiguous: 2 codes begin with it"):
        reader.code(sha[:16])
    assert reader.code(sha[:17])["code_sha256"] == sha  # one more digit tells them apart


def test_search_finds_titles_authors_tasks_and_entries_best_first(site):
    reader = SiteReader(site)
    found = reader.search("long title")
    assert [r["slug"] for r in found["results"]] == ["long-one"] and found["total"] == 1
    every = reader.search("a. author")  # an author of every paper
    assert every["total"] == 3 and {r["kind"] for r in every["results"]} == {"paper"}
    callbacks = reader.search("DataMapCallback", limit=1)
    assert callbacks["total"] == 1 and len(callbacks["results"]) == 1
    assert callbacks["results"][0]["kind"] == "sample" and callbacks["results"][0]["repo"] == "eliorc/tavolo"
    assert reader.search("Callback", limit=1)["total"] >= 1
    assert reader.search("nothing-like-this")["total"] == 0
    with pytest.raises(NotInSite, match="limit 0"):
        reader.search("a", limit=0)


def test_a_site_under_a_base_url_is_read_through_its_urls(tmp_path):
    site = built(tmp_path, base_url="https://example.org/catalogue")
    reader = SiteReader(site)
    found = reader.search("trick")
    assert found["results"][0]["json_url"] == "https://example.org/catalogue/paper/trick.json"
    assert reader.search("DataMapCallback")["total"] == 1  # read through the status pages' absolute URLs
    assert reader.paper("2404.00404")["title"] == TRICK["title"]


def test_a_folder_that_is_no_site_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a site paperproof built"):
        SiteReader(tmp_path)
