"""The command layer, run as a real process."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from paperproof.catalogue.archive import bundled_root


def paperproof(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "paperproof", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


def test_verify_json_reports_every_selected_entry_with_a_reason(tmp_path):
    repo = tmp_path / "perturb-kit"
    shutil.copytree(bundled_root() / "repos" / "paperproof-specimens+perturb-kit", repo)
    done = paperproof("verify", str(repo), "--json")
    assert done.returncode == 0, done.stderr
    records = json.loads(done.stdout)
    by_entry = {r["entry"]: r for r in records}
    assert by_entry["str2bool"]["status"] == "ran_violates" and by_entry["str2bool"]["reason"]
    assert by_entry["run_name"]["status"] == "ran_fixture"
    assert all(r["reason"] for r in records)


def test_verify_one_entry_in_text(tmp_path):
    repo = tmp_path / "perturb-kit"
    shutil.copytree(bundled_root() / "repos" / "paperproof-specimens+perturb-kit", repo)
    done = paperproof("verify", str(repo), "--entry", "perturb/labels.py::flip_labels_uniform")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ran ") and "flip_labels_uniform" in done.stdout and done.stdout.count("\n") == 2


def test_build_prints_a_summary_and_errors_say_what_to_do(tmp_path):
    done = paperproof("build", "--archive", str(tmp_path / "missing" / "dir"), "--out", str(tmp_path / "site"))
    assert done.returncode == 2 and "no such directory" in done.stderr
    done = paperproof("verify", str(tmp_path / "nothing"))
    assert done.returncode == 2 and "give the path of a checkout" in done.stderr
