"""Each page's record is assembled in one place: a sample shown on a paper, a repository and a status page
says what the sample's own record says, in every field the shapes share with it."""

from __future__ import annotations

from paperproof.build.pages import SampleListing, SampleRef, TwinSample
from tests.sitecheck import load_json


def _shared(shape: type) -> set[str]:
    return set(shape.model_fields) - {"url", "json_url", "repo_kind", "code"}


def test_a_sample_reads_the_same_on_every_page_that_lists_it(bundled_site):
    samples = {p.stem: load_json(p) for p in sorted((bundled_site / "sample").glob("*.json"))}
    assert len(samples) > 10
    shown: dict[str, list[str]] = {}

    def same(listed: dict, sample_id: str, shape: type, where: str) -> None:
        record = samples[sample_id]
        expected = {k: record[k] for k in _shared(shape) if k in record}
        expected |= {k: record["code_sha256"][:16] for k in _shared(shape) if k == "code_sha256_prefix"}
        assert {k: listed[k] for k in expected} == expected, where
        assert listed["url"] == f"/sample/{sample_id}/", where
        shown.setdefault(sample_id, []).append(where)

    for path in sorted((bundled_site / "paper").glob("*.json")):
        for listed in load_json(path)["verification"]["samples"]:
            sample_id = listed["code"]["url"].removeprefix("/sample/").removesuffix(".json")
            assert listed["code"]["code_sha256"] == samples[sample_id]["code_sha256"]
            same(listed, sample_id, TwinSample, f"paper {path.stem}")
    for path in sorted((bundled_site / "repo").glob("*.json")):
        for listed in load_json(path)["samples"]:
            same(listed, listed["sample_id"], SampleRef, f"repository {path.stem}")
            assert listed["json_url"] == f"/sample/{listed['sample_id']}.json"
    for path in sorted((bundled_site / "status").glob("*.json")):
        for listed in load_json(path)["samples"]:
            same(listed, listed["sample_id"], SampleListing, f"status {path.stem}")
    # every sample is on its repository's page and its status page, and some on a paper's
    assert all(len({w.split()[0] for w in where}) >= 2 for where in shown.values())
    assert set(shown) == set(samples)
    assert any(w.startswith("paper") for where in shown.values() for w in where)
