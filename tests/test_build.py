"""The bundled build end to end: twins agree with the seeds and with their own samples; builds are reproducible."""

from __future__ import annotations

import filecmp
import json
from collections import Counter

import pytest

from paperproof.build.pages import SEED_RENAMES
from paperproof.build.pipeline import BuildConfig, build
from paperproof.build.site_paths import SitePaths
from tests.conftest import SEEDS
from tests.test_archive import LINK, PAPER, write_dump

SEED_SLUGS = {
    "000_eb28b49f672fab13": "dissecting-sample-hardness-a-fine-grained",
    "001_8c25ddf31cc3e39e": "dataset-cartography-mapping-and-diagnosing",
}


def twins(site):
    return {p.stem: json.loads(p.read_text()) for p in sorted((site / "paper").glob("*.json"))}


def test_every_bundled_paper_has_a_page_and_a_twin(bundled_site):
    from paperproof.catalogue.archive import bundled_archive

    slugs = {p.slug for p, _ in bundled_archive().papers()}
    assert set(twins(bundled_site)) == slugs
    for slug in slugs:
        page = (bundled_site / "paper" / slug / "index.html").read_text()
        assert f'<link rel="alternate" type="application/json" href="/paper/{slug}.json">' in page
    assert (bundled_site / "index.html").is_file() and (bundled_site / "attribution" / "index.html").is_file()
    schema = json.loads((bundled_site / "schema" / "paper.json").read_text())
    assert "verification" in schema["properties"]


@pytest.mark.parametrize("seed", sorted(SEED_SLUGS))
def test_seed_papers_match_the_seeds(bundled_site, seed):
    expected = json.loads((SEEDS / f"{seed}.txt").read_text())
    twin = twins(bundled_site)[SEED_SLUGS[seed]]
    seed_keys = [SEED_RENAMES.get(k, k) for k in expected]
    assert list(twin) == [*seed_keys[:3], "verdict", *seed_keys[3:]]  # the answer first, beside the title
    assert twin["verdict"]["grade"] in ("faithful", "departs_rescales", "departs_ranking", "not_checked")
    for field in ("title", "authors", "abstract", "date", "proceeding", "url_abs", "url_pdf", "arxiv_id", "tasks"):
        assert twin[field] == expected[field], field
    strip = lambda links: [{k: v for k, v in link.items() if k != "reach"} for link in links]  # noqa: E731
    assert strip(twin["code_links"]) == strip(expected["code_links"])
    # Their repositories' source is not bundled: their samples come from shipped records (`test_shipped_build`),
    # made from checkouts, so reach is honestly "not probed".
    assert twin["verification"]["samples"] and all(link["reach"] is None for link in twin["code_links"])


def test_summaries_agree_with_samples(bundled_site):
    for slug, twin in twins(bundled_site).items():
        v = twin["verification"]
        counts = Counter(s["status"] for s in v["samples"])
        assert v["summary"] == {k: n for k, n in counts.items() if n}, slug
        assert list(v["summary"]) == [k for k in v["status_vocabulary"] if k in counts]
        for kind, block in v["by_repo_kind"].items():
            mine = [s for s in v["samples"] if s["repo_kind"] == kind]
            assert block == {"samples": len(mine), "ran": sum(s["status"].startswith("ran") for s in mine),
                             "repositories": len({s["repo"] for s in mine})}
        assert sum(b["samples"] for b in v["by_repo_kind"].values()) == len(v["samples"])
        assert v["n_pointer_only_for_licence"] == sum(not s["inline_ok"] for s in v["samples"])
        levels = [(s["repo_kind"] != "official", -s["verification_level"], s["entry"]) for s in v["samples"]]
        assert levels == sorted(levels)  # the official repository's first, then what ran, then by name


def test_specimen_twins_are_marked(bundled_site):
    for slug, twin in twins(bundled_site).items():
        assert (twin["source"]["row_kind"] == "specimen") == slug.startswith("specimen-")


def test_every_sample_says_why_it_was_chosen_on_its_page_and_in_its_twin(bundled_site):
    from markupsafe import escape

    bases = Counter()
    for twin in sorted((bundled_site / "sample").glob("*.json")):
        record = json.loads(twin.read_text())
        assert record["why_chosen"], twin.name
        page = (bundled_site / "sample" / twin.stem / "index.html").read_text()
        assert f"Why chosen: {escape(record['why_chosen'])}." in page, twin.name
        bases[record["link_basis"]] += 1
    assert bases["behaviour"] >= 5 and bases["hardness_evidence"] >= 1  # the specimens' metrics run and are known


def test_two_builds_are_byte_identical(bundled_site, tmp_path):
    build(BuildConfig(out=tmp_path / "site", cache=tmp_path / "cache"))  # a fresh cache: everything runs again
    comparison = filecmp.dircmp(bundled_site, tmp_path / "site")
    differing = []

    def walk(cmp):
        differing.extend(cmp.left_only + cmp.right_only + cmp.diff_files + cmp.funny_files)
        for sub in cmp.subdirs.values():
            walk(sub)

    walk(comparison)
    assert differing == []
    assert sum(1 for p in bundled_site.rglob("*") if p.is_file()) > 50


def test_bad_rows_are_reported_and_the_rest_is_built(tmp_path):
    archive = tmp_path / "archive"
    write_dump(archive, "papers-with-abstracts", [PAPER, {**PAPER, "title": None}, {**PAPER}])
    write_dump(archive, "links-between-papers-and-code", [LINK, {**LINK, "repo_url": 7}])
    summary = build(BuildConfig(archive=str(archive), out=tmp_path / "site", cache=None))
    assert summary.papers == 1
    reasons = [r.reason for r in summary.rejects]
    assert any(r.startswith("title:") for r in reasons)
    assert any(r.startswith("repo_url:") for r in reasons)
    assert any(r.startswith("duplicate slug") for r in reasons)
    twin = json.loads((tmp_path / "site" / "paper" / "a-good-paper.json").read_text())
    assert twin["code_links"][0]["reach"] is None and twin["verification"]["samples"] == []
    assert "rows rejected: 3" in "\n".join(summary.lines())


def test_a_failed_build_leaves_the_previous_site(tmp_path, monkeypatch):
    archive = tmp_path / "archive"
    write_dump(archive, "papers-with-abstracts", [PAPER])
    write_dump(archive, "links-between-papers-and-code", [LINK])
    out = tmp_path / "site"
    build(BuildConfig(archive=str(archive), out=out, cache=None))
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    from paperproof.build import pipeline as pipeline_module

    def explode(site, papers, repositories):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(pipeline_module, "write_indexes", explode)
    with pytest.raises(RuntimeError):
        build(BuildConfig(archive=str(archive), out=out, cache=None))
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert not SitePaths(out).staging.exists()


def test_the_site_is_dated_by_its_inputs_or_source_date_epoch(monkeypatch):
    from paperproof.build.pipeline import read_at
    from paperproof.catalogue.archive import open_archive

    archive = open_archive(None)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    snapshots = [p.source.snapshot for p in archive.parts]
    assert "2025-07-28" in snapshots  # the date of the archive slice; the specimens have no date
    assert read_at(archive) == "2025-07-28T00:00:00+00:00"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert read_at(archive) == "2023-11-14T22:13:20+00:00"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(ValueError, match="SOURCE_DATE_EPOCH='yesterday' is not a count of seconds"):
        read_at(archive)


def test_repos_adds_checkouts_to_the_bundled_specimens_own_sources(tmp_path):
    from paperproof.build.pipeline import repository_source
    from paperproof.catalogue.repo_url import safe_key

    checkout = tmp_path / "repos" / "someone+extra"
    checkout.mkdir(parents=True)
    (checkout / "README.md").write_text("# extra\n")
    source = repository_source(BuildConfig(repos=tmp_path / "repos", cache=tmp_path / "cache"))
    specimen = source.record_for(safe_key("https://github.com/paperproof-specimens/perturb-kit"))
    assert specimen.has_source and specimen.specimen  # the bundled specimen keeps its source
    extra = source.record_for(safe_key("https://github.com/someone/extra"))
    assert extra.has_source and not extra.specimen and extra.readme == "README.md"
    missing = source.record_for(safe_key("https://github.com/someone/absent"))
    assert not missing.has_source and "under --repos" in missing.note
    # given an archive of its own, --repos is the only source
    only = repository_source(BuildConfig(archive=str(tmp_path), repos=tmp_path / "repos", cache=tmp_path / "cache"))
    assert not only.record_for(safe_key("https://github.com/paperproof-specimens/perturb-kit")).has_source
