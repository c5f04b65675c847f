"""`paperproof harvest --from-checkouts DIR --results-only`: same checkouts, byte-identical records, no source."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from paperproof.build.regenerate import regenerate
from paperproof.catalogue.archive import bundled_root
from paperproof.catalogue.shipped import ShippedResults, code_fingerprint
from paperproof.verify.stage import RunSettings

SPECIMEN = "paperproof-specimens+dynamics-maps"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def checkouts(tmp: Path, commit: str | None = COMMIT) -> Path:
    folder = tmp / "checkouts"
    shutil.copytree(bundled_root() / "repos" / SPECIMEN, folder / SPECIMEN)
    if commit:
        (folder / SPECIMEN / ".git").mkdir()
        (folder / SPECIMEN / ".git" / "HEAD").write_text(commit + "\n")
    return folder


def test_same_checkouts_give_byte_identical_records_without_source(tmp_path):
    folder = checkouts(tmp_path)
    first = regenerate(folder, tmp_path / "a", settings=RunSettings(workers=2))
    regenerate(folder, tmp_path / "b", settings=RunSettings(workers=2))
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.json"))
    assert [f.as_posix() for f in files] == [f"github.com/{SPECIMEN}.json"]
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files)
    text = (tmp_path / "a" / files[0]).read_text()
    record = json.loads(text)
    assert record["made_by"]["code"] == code_fingerprint() and record["record"]["commit"] == COMMIT
    assert record["samples"] and first.written and not first.refused
    # not one line of the checkout's code (ours: the specimens are written for paperproof) is in the record
    for source in (folder / SPECIMEN).rglob("*.py"):
        for line in source.read_text().splitlines():
            if len(line.strip()) >= 24:
                assert line.strip() not in text, line
    assert str(folder) not in text and str(tmp_path) not in text
    # a second run over the same folder leaves the file as it was
    again = regenerate(folder, tmp_path / "a", settings=RunSettings(workers=2))
    assert again.unchanged == 1
    assert len(ShippedResults(tmp_path / "a")) == 1


def test_a_checkout_without_a_commit_is_refused_and_nothing_is_written(tmp_path):
    folder = checkouts(tmp_path, commit=None)
    done = subprocess.run([sys.executable, "-m", "paperproof", "harvest", "--from-checkouts", str(folder),
                           "--results-only", "--into", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 2
    assert f"refused {SPECIMEN.replace('+', '/')}: its checkout names no commit" in done.stdout
    assert not (tmp_path / "out").exists()


def test_results_only_needs_from_checkouts(tmp_path):
    done = subprocess.run([sys.executable, "-m", "paperproof", "harvest", "--results-only"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2 and "--from-checkouts DIR and --results-only go together" in done.stderr
