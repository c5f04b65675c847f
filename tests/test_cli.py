"""The command layer, run as a real process: exit codes, what goes to stdout and stderr, and what a build
refuses to touch."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from paperproof.catalogue.archive import bundled_root
from tests.test_archive import LINK, PAPER, write_dump


def paperproof(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "paperproof", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


def test_verify_json_reports_every_selected_entry_with_a_reason(tmp_path):
    repo = tmp_path / "perturb-kit"
    shutil.copytree(bundled_root() / "repos" / "paperproof-specimens+perturb-kit", repo)
    done = paperproof("verify", str(repo), "--json")
    assert done.returncode == 1, done.stderr  # str2bool violates its own annotation
    records = json.loads(done.stdout)  # stdout is the JSON array and nothing else
    by_entry = {r["entry"]: r for r in records}
    assert by_entry["str2bool"]["status"] == "ran_violates" and by_entry["str2bool"]["reason"]
    assert by_entry["run_name"]["status"] == "ran"  # its `args.hardness` given by a probe run
    assert all(r["reason"] for r in records)
    # the summary went to stderr: counts by status, then each violation by name
    assert f"verified {len(records)} sample(s) of {repo}: " in done.stderr
    violating = sorted(f"{r['path']}::{r['entry']}" for r in records if r["status"] == "ran_violates")
    assert "perturb/cli.py::str2bool" in violating
    assert f"ran_violates {len(violating)}" in done.stderr
    assert f"violations: {len(violating)}\n" + "".join(f"  {v}\n" for v in violating) in done.stderr


def test_verify_one_entry_in_text(tmp_path):
    repo = tmp_path / "perturb-kit"
    shutil.copytree(bundled_root() / "repos" / "paperproof-specimens+perturb-kit", repo)
    done = paperproof("verify", str(repo), "--entry", "perturb/labels.py::flip_labels_uniform")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("ran ") and "flip_labels_uniform" in lines[0]
    assert lines[2:] == [f"verified 1 sample(s) of {repo}: ran 1", "violations: 0", "departures: 0", "blocked: 0"]


def test_verify_exits_1_for_a_violation_and_2_for_an_entry_that_matches_nothing(tmp_path):
    repo = tmp_path / "perturb-kit"
    shutil.copytree(bundled_root() / "repos" / "paperproof-specimens+perturb-kit", repo)
    done = paperproof("verify", str(repo), "--entry", "perturb/cli.py::str2bool")
    assert done.returncode == 1 and "violations: 1" in done.stdout
    done = paperproof("verify", str(repo), "--entry", "nope.py::x", "--json")
    assert done.returncode == 2 and done.stdout == ""
    assert "--entry nope.py::x: no entry of" in done.stderr and "PATH::NAME" in done.stderr


def test_build_prints_a_summary_and_errors_say_what_to_do(tmp_path):
    done = paperproof("build", "--archive", str(tmp_path / "missing" / "dir"), "--out", str(tmp_path / "site"))
    assert done.returncode == 2 and "no such directory" in done.stderr
    done = paperproof("verify", str(tmp_path / "nothing"))
    assert done.returncode == 2 and "give the path of a checkout" in done.stderr


def test_verify_exits_1_for_a_departure_from_the_papers_definition(tmp_path):
    repo = tmp_path / "dynamics-maps"
    shutil.copytree(bundled_root() / "repos" / "paperproof-specimens+dynamics-maps", repo)
    done = paperproof("verify", str(repo), "--entry", "dynamics_maps/metrics.py::correctness_counts",
                      "--entry", "dynamics_maps/metrics.py::confidence_scores", "--json")
    assert done.returncode == 1, done.stderr
    records = {r["entry"]: r for r in json.loads(done.stdout)}
    assert records["confidence_scores"]["status"] == "ran" and not records["confidence_scores"]["fidelity"][0]["departures"]
    assert records["correctness_counts"]["fidelity"][0]["departures"]
    assert "\ndepartures: 1\n  dynamics_maps/metrics.py::correctness_counts (correctness: " in done.stderr


def test_help_names_defaults_exit_codes_environment_and_examples():
    for command, wanted in (("build", ["(default: site)", "exit status:", "SOURCE_DATE_EPOCH", "examples:",
                                       "--allow-partial", "python3 -m http.server"]),
                            ("verify", ["exit status:", "  1  a contract violation", "examples:"]),
                            ("harvest", ["GITHUB_TOKEN", "(default: .paperproof-store)", "75", "examples:"])):
        done = paperproof(command, "--help")
        assert done.returncode == 0
        missing = [w for w in wanted if w not in done.stdout]
        assert missing == [], command


# --- a build never publishes a damaged archive, nor writes over what is not its own ---


def tree(root: Path) -> dict[str, bytes]:
    """Every file under `root` (dotfiles included) and its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


ROWS = [{**PAPER, "paper_url": f"https://paperswithcode.com/paper/p{i}", "title": f"Paper {i}"} for i in range(6)]


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> Path:
    """A small archive (no repositories: nothing to run) built into site/ with a cache."""
    root = tmp_path_factory.mktemp("published")
    write_dump(root / "archive", "papers-with-abstracts", ROWS)
    write_dump(root / "archive", "links-between-papers-and-code", [LINK])
    done = paperproof("build", "--archive", "archive", "--out", "site", "--cache", "cache", cwd=root)
    assert done.returncode == 0, done.stderr
    return root


def _damage(kind: str, data: bytes) -> tuple[str, bytes]:
    if kind == "cut":
        return "papers-with-abstracts.json", data[: len(data) // 2]
    if kind == "inserted":
        return "papers-with-abstracts.json", data[:500] + b"\x00\x1b[0m" + data[500:]
    packed = gzip.compress(data)
    if kind == "gzip-cut":
        return "papers-with-abstracts.json.gz", packed[: len(packed) // 2]
    corrupt = bytearray(packed)
    corrupt[len(corrupt) // 2] ^= 0x55
    return "papers-with-abstracts.json.gz", bytes(corrupt)


@pytest.mark.parametrize("kind", ["cut", "inserted", "gzip-cut", "gzip-corrupt"])
def test_a_damaged_dump_leaves_the_published_site_byte_identical(published, tmp_path, kind):
    root = tmp_path / "work"
    shutil.copytree(published, root, symlinks=True)
    before = tree(root / "site")
    data = (root / "archive" / "papers-with-abstracts.json").read_bytes()
    (root / "archive" / "papers-with-abstracts.json").unlink()
    name, damaged = _damage(kind, data)
    (root / "archive" / name).write_bytes(damaged)
    done = paperproof("build", "--archive", "archive", "--out", "site", "--cache", "cache", cwd=root)
    assert done.returncode == 3, done.stdout + done.stderr
    assert f"archive/{name}: cannot be read to its end" in done.stderr
    assert " at byte " in done.stderr and "row #" in done.stderr and "--allow-partial" in done.stderr
    assert tree(root / "site") == before
    # --allow-partial builds from the rows before the damage, and the summary and the front page say so
    done = paperproof("build", "--archive", "archive", "--out", "site", "--cache", "cache", "--allow-partial", cwd=root)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("PARTIAL (--allow-partial): archive/" + name)
    index = json.loads((root / "site" / "index.json").read_text())
    assert len(index["partial"]) == 1 and index["partial"][0].startswith(name + ": cannot be read")
    assert index["papers_total"] < len(ROWS)
    assert "Partial catalogue." in (root / "site" / "index.html").read_text()
    # and the next build without it reads the damaged file again, and refuses it
    done = paperproof("build", "--archive", "archive", "--out", "site", "--cache", "cache", cwd=root)
    assert done.returncode == 3


def test_out_or_cache_that_is_not_paperproofs_is_refused_and_left_alone(published, tmp_path):
    archive = str(published / "archive")
    afile = tmp_path / "afile"
    afile.write_text("hello\n")
    done = paperproof("build", "--archive", archive, "--out", str(afile), "--cache", str(tmp_path / "c1"))
    assert done.returncode == 2 and "is a file, not a folder" in done.stderr
    assert afile.read_text() == "hello\n"
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    done = paperproof("build", "--archive", archive, "--out", str(folder), "--cache", str(tmp_path / "c2"))
    assert done.returncode == 2 and "no .paperproof-build marker" in done.stderr
    assert os.listdir(folder) == ["notes.txt"] and not (tmp_path / ".mine.staging").exists()
    done = paperproof("build", "--archive", archive, "--out", str(tmp_path / "site"), "--cache", str(afile))
    assert done.returncode == 2 and "--cache" in done.stderr and afile.read_text() == "hello\n"
    done = paperproof("build", "--archive", archive, "--out", str(tmp_path / "site"), "--cache", str(folder))
    assert done.returncode == 2 and "notes.txt" in done.stderr and os.listdir(folder) == ["notes.txt"]
    # a new folder, or a site and cache paperproof made, are fine
    done = paperproof("build", "--archive", archive, "--out", str(tmp_path / "site"), "--cache", str(tmp_path / "c3"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "c3" / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    done = paperproof("build", "--archive", archive, "--out", str(tmp_path / "site"), "--cache", str(tmp_path / "c3"))
    assert done.returncode == 0, done.stderr
