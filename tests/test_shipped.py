"""Shipped verification records: facts only, no source text, and a fingerprint that says when they are stale."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import paperproof
from paperproof.build.shipped import bundled_results, stale_reason
from paperproof.catalogue.sample import Sample
from paperproof.catalogue.shipped import (
    SOURCE_TEXT_FIELDS,
    NotShippable,
    ShippedRepo,
    ShippedResults,
    code_fingerprint,
    dump,
)

PACKAGE = Path(paperproof.__file__).resolve().parent
REPO_ROOT = PACKAGE.parent


def shipped_files() -> list[Path]:
    return sorted(bundled_results().glob("*/*.json"))


def test_the_bundled_records_are_there_and_parse():
    files = shipped_files()
    assert len(files) >= 6
    results = ShippedResults(bundled_results())
    assert results.problems == [] and len(results) == len(files)


def test_shipped_json_has_no_source_text_only_the_code_sha256():
    for path in shipped_files():
        raw = json.loads(path.read_text(encoding="utf-8"))
        assert raw["record"]["snapshot"] is None and raw["record"]["source"] == "shipped", path.name
        assert raw["record"]["readme"] is None, path.name
        for sample in raw["samples"]:
            assert sample["source"] is None and sample["docstring"] is None and sample["signature"] == "", path.name
            assert len(sample["code_sha256"]) == 64 and int(sample["code_sha256"], 16) >= 0
            # the file link is at the pinned commit on GitHub, with the line range
            commit = raw["record"]["commit"]
            assert sample["file_url"] == (f"{raw['record']['url']}/blob/{commit}/{sample['path']}"
                                          f"#L{sample['lineno']}-L{sample['end_lineno']}")
            # no local path of the machine that made them
            text = json.dumps(sample)
            # (a path the repository's own code names, `/home/<author>/data.tsv` in its exception, is its own)
            assert not any(leak in text for leak in ("/tmp/", "/work/", "/root/", f"{Path.home()}/")), path.name
        # nor in the record (its drivers' errors quote paths too)
        text = json.dumps(raw["record"])
        assert not any(leak in text for leak in ("/tmp/", "/work/", "/root/", f"{Path.home()}/")), path.name


def test_the_committed_tree_holds_no_third_party_tree_under_the_snapshot():
    """Everything committed under the snapshot's results is JSON records; no checkout came along."""
    listed = subprocess.run(["git", "ls-files", "paperproof/snapshot/results"], cwd=REPO_ROOT, capture_output=True,
                            text=True, check=True).stdout.split()
    assert listed and all(name.endswith(".json") for name in listed)
    # the bundled checkouts are our specimens only
    repos = subprocess.run(["git", "ls-files", "paperproof/snapshot/repos"], cwd=REPO_ROOT, capture_output=True,
                           text=True, check=True).stdout.split()
    assert {name.split("/")[3].split("+")[0] for name in repos} == {"paperproof-specimens"}


def _one_record() -> ShippedRepo:
    return ShippedRepo.model_validate_json(shipped_files()[0].read_bytes())


def test_a_record_holding_source_is_refused_by_name_and_the_rest_are_read(tmp_path):
    folder = tmp_path / "results"
    shutil.copytree(bundled_results(), folder)
    victim = sorted(folder.glob("*/*.json"))[0]
    raw = json.loads(victim.read_text())
    raw["samples"][0]["source"] = "def f(x):\n    return x\n"
    victim.write_text(json.dumps(raw))
    (folder / "github.com" / "broken+json.json").write_text("{not json")
    results = ShippedResults(folder)
    names = dict(results.problems)
    assert set(names) == {victim.relative_to(folder).as_posix(), "github.com/broken+json.json"}
    assert "holds the repository's text in source" in names[victim.relative_to(folder).as_posix()]
    assert len(results) == len(shipped_files()) - 1


def test_dump_refuses_source_and_is_deterministic():
    record = _one_record()
    assert dump(record) == dump(ShippedRepo.model_validate_json(dump(record)))
    sample = record.samples[0]
    for name in SOURCE_TEXT_FIELDS:
        held = sample.model_copy(update={name: "x = 1"})
        with pytest.raises(NotShippable, match=name):
            dump(record.model_copy(update={"samples": [held]}))


def test_every_sample_field_is_serialised():
    """The shipped sample is the typed record itself: every field of `Sample` is in the JSON."""
    for path in shipped_files():
        for sample in json.loads(path.read_text())["samples"]:
            assert set(sample) == set(Sample.model_fields)


def test_the_fingerprint_changes_with_fixture_runner_or_verify_code(tmp_path):
    copy = tmp_path / "paperproof"
    for folder in ("fixtures", "runner", "verify"):
        shutil.copytree(PACKAGE / folder, copy / folder, ignore=shutil.ignore_patterns("__pycache__"))
    before = code_fingerprint(copy)
    assert before == code_fingerprint(PACKAGE)
    target = copy / "fixtures" / "values.py"
    target.write_text(target.read_text() + "\n# one more line\n")
    changed = code_fingerprint(copy)
    assert changed != before
    (copy / "build").mkdir()
    (copy / "build" / "pages.py").write_text("# not verdict code\n")
    assert code_fingerprint(copy) == changed
    record = _one_record()
    assert stale_reason(record, record.made_by.code) is None
    reason = stale_reason(record, changed)
    assert reason is not None and record.made_by.code[:12] in reason and changed[:12] in reason
