"""`/code/<sha256>.json`: every sample's code, shown where a licence of a repository holding it allows and
pointed at otherwise, with its attribution; from a real build of two checkouts (one MIT, one with no licence,
sharing a function) and a repository shown from the bundled shipped records (MIT, no source shipped)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sqlite3
from pathlib import Path

import jsonschema
import pytest

from paperproof.build.code_pages import code_record, refusal
from paperproof.build.manifest import state_directory
from paperproof.build.pipeline import BuildConfig, build
from paperproof.build.shipped import bundled_results
from paperproof.build.urls import SiteUrls
from paperproof.catalogue.repo_record import RepoRecord
from paperproof.catalogue.sample import Sample
from tests.sitecheck import check_site
from tests.test_archive import LINK, PAPER, write_dump
from tests.test_hostile_build import GOOD

MIT = ("MIT License\n\nCopyright (c) 2024 Lab\n\nPermission is hereby granted, free of charge, to any person obtaining "
       "a copy of this software, to deal in the Software without restriction\n")
SHIPPED = "https://github.com/eliorc/tavolo"  # in the bundled shipped records: MIT, no source


def shipped_samples() -> int:
    """How many samples the bundled records hold of the shipped repository (a regeneration may change it)."""
    return len(json.loads((bundled_results() / "github.com" / "eliorc+tavolo.json").read_text())["samples"])
# the paper the shipped samples name (`papers`), so that their pages link to a paper of this site
OTHER_SLUG = "dataset-cartography-mapping-and-diagnosing"
OTHER = {**PAPER, "paper_url": f"https://paperswithcode.com/paper/{OTHER_SLUG}", "title": "Closed One",
         "arxiv_id": "2202.00002", "url_abs": "https://arxiv.org/abs/2202.00002v3"}


def corpus(root: Path, checkouts: bool) -> tuple[Path, Path | None]:
    """An archive of two papers: the first links lab/open (MIT) and, with `checkouts`, the second lab/closed (no
    licence file), both holding the same function; the second also links the shipped repository."""
    links = [{**LINK, "paper_url": OTHER["paper_url"], "paper_title": OTHER["title"], "repo_url": SHIPPED}]
    repos = None
    if checkouts:
        repos = root / "repos"
        for name, licence in (("open", MIT), ("closed", None)):
            checkout = repos / f"lab+{name}"
            checkout.mkdir(parents=True)
            (checkout / "margins.py").write_text(GOOD)
            if licence:
                (checkout / "LICENSE").write_text(licence)
        links += [{**LINK, "repo_url": "https://github.com/lab/open"},
                  {**LINK, "paper_url": OTHER["paper_url"], "paper_title": OTHER["title"],
                   "repo_url": "https://github.com/lab/closed"}]
    write_dump(root / "archive", "papers-with-abstracts", [PAPER, OTHER])
    write_dump(root / "archive", "links-between-papers-and-code", links)
    return root / "archive", repos


def small_site(root: Path, checkouts: bool, out: str = "site") -> Path:
    """Build the corpus (`checkouts`: run the two checkouts in the sandbox; else only shipped records, no run)."""
    archive = root / "archive"
    repos = root / "repos" if checkouts else None
    if not archive.exists():
        archive, repos = corpus(root, checkouts)
    build(BuildConfig(archive=str(archive), repos=repos, out=root / out, cache=root / "cache", workers=1, jobs=1))
    return root / out


def sample_twins(site: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((site / "sample").glob("*.json"))]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_site(tmp_path_factory.mktemp("code"), checkouts=True)


def test_every_sample_has_its_code_record_and_nothing_else_is_published(site):
    samples = sample_twins(site)
    assert len(samples) == 2 + shipped_samples()  # mean_margin in each checkout, and the shipped ones
    hashes = {s["code_sha256"] for s in samples}
    assert sorted(p.name for p in (site / "code").iterdir()) == sorted(f"{h}.json" for h in hashes)
    schema = json.loads((site / "schema" / "code.json").read_text())
    for h in hashes:
        record = json.loads((site / "code" / f"{h}.json").read_text())
        jsonschema.validate(record, schema)
        assert record["code_sha256"] == h and record["code_sha256_prefix"] == h[:16]
        assert record["json_url"] == f"/code/{h}.json" and record["schema_url"] == "/schema/code.json"
        held = [s for s in samples if s["code_sha256"] == h]
        assert sorted(p["sample"] for p in record["places"]) == sorted(f"/sample/{s['sample_id']}.json" for s in held)
        assert (record["code"] is None) == (record["attribution"] is None) != (record["pointer_only"] is None)


def test_code_is_shown_under_the_licence_that_allows_it_and_every_place_is_pointed_at(site):
    open_sample = next(s for s in sample_twins(site) if s["repo"] == "lab/open")
    closed = next(s for s in sample_twins(site) if s["repo"] == "lab/closed")
    assert open_sample["code_sha256"] == closed["code_sha256"] and closed["source"] is None
    record = json.loads((site / "code" / f"{open_sample['code_sha256']}.json").read_text())
    assert record["code"] == open_sample["source"]
    assert hashlib.sha256(record["code"].encode()).hexdigest() == record["code_sha256"]
    assert record["code"].startswith("def mean_margin(probs: np.ndarray) -> float:")
    attribution = record["attribution"]
    assert (attribution["licence"], attribution["licence_file"], attribution["repo"], attribution["path"]) == (
        "MIT", "LICENSE", "lab/open", "margins.py")
    assert "licensed under MIT" in attribution["notice"] and "https://github.com/lab/open" in attribution["notice"]
    # both places, in repository order; the one without a licence is pointed at, never the reason to show it
    assert [(p["repo"], p["licence"], p["inline_ok"]) for p in record["places"]] == [
        ("lab/closed", "NONE", False), ("lab/open", "MIT", True)]
    place = record["places"][0]
    assert (place["path"], place["line_start"], place["line_end"], place["qualname"]) == ("margins.py", 4, 11, "mean_margin")
    assert place["url"] == closed["file_url"] == "https://github.com/lab/closed/blob/HEAD/margins.py#L4-L11"
    assert place["commit"] is None  # a checkout with no .git: no pinned commit, and the link says HEAD


def test_shipped_records_are_pointers_to_the_pinned_source(site):
    shipped = [s for s in sample_twins(site) if s["repo"] == "eliorc/tavolo"]
    assert len(shipped) == shipped_samples() >= 1
    for sample in shipped:
        record = json.loads((site / "code" / f"{sample['code_sha256']}.json").read_text())
        assert sample["inline_ok"] and record["code"] is None and record["attribution"] is None
        assert record["pointer_only"].startswith("shipped records hold no source")
        [place] = record["places"]
        assert place["commit"] == "19447e94ae2311022f815362170f6f9e5dcd9335" and place["licence"] == "MIT"
        assert place["url"] == sample["file_url"]
        assert re.fullmatch(rf"{SHIPPED}/blob/{place['commit']}/{re.escape(place['path'])}"
                            rf"#L{place['line_start']}-L{place['line_end']}", place["url"])


def test_code_records_are_units_of_the_manifest_and_byte_identical_across_builds(site):
    root = site.parent
    db = sqlite3.connect(state_directory(root / "cache", site) / "manifest.sqlite")
    try:
        units = {unit: files for unit, files in db.execute("SELECT unit, files FROM site_units WHERE unit LIKE 'code/%' "
                                                           "OR unit = 'schema/code.json'")}
    finally:
        db.close()
    published = {f"code/{p.name}" for p in (site / "code").iterdir()} | {"schema/code.json"}
    assert units == {name: name for name in published}
    again = small_site(root, checkouts=True, out="again")  # the runs come from the cache: same samples
    assert {p.name: p.read_bytes() for p in (again / "code").iterdir()} == {
        p.name: p.read_bytes() for p in (site / "code").iterdir()}
    assert (again / "schema" / "code.json").read_bytes() == (site / "schema" / "code.json").read_bytes()


def test_a_shipped_record_with_a_bad_hash_is_reported_by_name_and_publishes_no_file(tmp_path):
    results = tmp_path / "results" / "github.com"
    results.mkdir(parents=True)
    record = json.loads((bundled_results() / "github.com" / "eliorc+tavolo.json").read_text())
    record["samples"][0]["code_sha256"] = "../../index"
    (results / "eliorc+tavolo.json").write_text(json.dumps(record))
    archive, _ = corpus(tmp_path, checkouts=False)
    summary = build(BuildConfig(archive=str(archive), out=tmp_path / "site", cache=None, jobs=1,
                                shipped=tmp_path / "results"))
    bad = [r for r in summary.rejects if "code_sha256" in r.reason]
    assert len(bad) == 1 and record["samples"][0]["sample_id"] in bad[0].file
    assert bad[0].reason.startswith("bad code_sha256: '../../index' is not 64 lowercase hex digits")
    code = tmp_path / "site" / "code"
    assert len(list(code.iterdir()) if code.exists() else []) == shipped_samples() - 1  # the other samples' code
    assert not (tmp_path / "index.json").exists()  # where code/../../index.json would have gone


# --- the record, from samples made here ---


def sample(repo: str, licence: str, inline_ok: bool, source: str | None, code_sha256: str, sample_id: str) -> Sample:
    return Sample(sample_id=sample_id, entry="score", qualname="score", kind="function", repo=repo,
                  repo_url=f"https://github.com/{repo}", path="m.py", lineno=3, end_lineno=4,
                  file_url=f"https://github.com/{repo}/blob/abc/m.py#L3-L4", link_basis="metric_vocabulary",
                  status="ran", reason="returned", verification_level=1, licence=licence, inline_ok=inline_ok,
                  code_sha256=code_sha256, signature="def score(x)", source=source, reproduce="")


def record_of(repo: str, licence: str | None) -> RepoRecord:
    return RepoRecord(url=f"https://github.com/{repo}", repo=repo, host="github.com", source="checkout",
                      licence=licence, licence_file="LICENSE" if licence not in (None, "NONE") else None, commit="abc")


CODE = "def score(x):\n    return x\n"
SHA = hashlib.sha256(CODE.encode()).hexdigest()


def test_with_no_licence_that_allows_it_the_record_says_which_licences_held_it():
    held = [(sample("b/two", "NOASSERTION", False, None, SHA, "2"), record_of("b/two", "NOASSERTION")),
            (sample("a/one", "NONE", False, None, SHA, "1"), record_of("a/one", "NONE"))]
    record = code_record(SHA, held, SiteUrls())
    assert record.code is None and record.attribution is None
    assert record.pointer_only is not None and "(NOASSERTION, NONE)" in record.pointer_only
    assert [p.repo for p in record.places] == ["a/one", "b/two"] and record.places[0].commit == "abc"


def test_a_source_that_does_not_hash_to_its_sha256_is_never_shown():
    wrong = sample("a/one", "MIT", True, CODE + "# changed\n", SHA, "1")
    right = sample("b/two", "Apache-2.0", True, CODE, SHA, "2")
    record = code_record(SHA, [(wrong, record_of("a/one", "MIT")), (right, record_of("b/two", "Apache-2.0"))],
                         SiteUrls("https://example.org/cat"))
    assert record.code == CODE and record.attribution is not None and record.attribution.repo == "b/two"
    assert record.json_url == f"https://example.org/cat/code/{SHA}.json"
    alone = code_record(SHA, [(wrong, record_of("a/one", "MIT"))], SiteUrls())
    assert alone.code is None and alone.pointer_only is not None
    said = refusal(wrong)  # and the build reports it, by sample
    assert said is not None and said.file == "sample 1 (a/one, m.py::score)" and said.record == wrong.file_url
    assert said.reason.startswith("source not of its code_sha256")
    assert refusal(right) is None and refusal(sample("a/one", "NONE", False, None, SHA, "3")) is None


def test_the_same_samples_in_any_order_give_the_same_bytes():
    held = [(sample(r, "MIT", True, CODE, SHA, r), record_of(r, "MIT")) for r in ("c/3", "a/1", "b/2")]
    first = code_record(SHA, held, SiteUrls()).model_dump_json()
    assert code_record(SHA, list(reversed(held)), SiteUrls()).model_dump_json() == first
    assert json.loads(first)["attribution"]["repo"] == "a/1"


def test_the_schema_is_listed_in_the_programs_doc():
    doc = (Path(__file__).resolve().parents[1] / "docs" / "programs.md").read_text()
    assert "`/code/<sha256>.json`" in doc and "`schema/code.json`" in doc and "paperproof mcp --site" in doc


def test_the_site_check_holds_each_code_record_to_its_schema_and_its_name(site, tmp_path):
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    problems, _ = check_site(copy)
    assert problems == []
    first = sorted((copy / "code").iterdir())[0]
    record = json.loads(first.read_text())
    (copy / "code" / f"{'f' * 64}.json").write_text(json.dumps(record))
    first.write_text(json.dumps({**record, "places": "nowhere"}))
    problems, _ = check_site(copy)
    assert problems == [f"code/{first.name} against schema/code.json: places: 'nowhere' is not of type 'array'",
                        f"code/{'f' * 64}.json: not named for the sha256 it holds"]
