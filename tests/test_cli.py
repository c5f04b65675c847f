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
    # each violation once, at its entry's line: `path:line entry: reason`
    lines = {f"{r['path']}:{r['lineno']} {r['entry']}: violates its contract: {r['reason']}" for r in records
             if r["status"] == "ran_violates" and not any(f["departures"] for f in r["fidelity"])}
    assert "  perturb/cli.py:5 str2bool: violates its contract: " in done.stderr
    assert all(done.stderr.count(f"  {line}\n") == 1 for line in lines)
    assert "--limit" not in done.stderr  # no sample was cut short by its budget


def test_verify_one_entry_in_text(tmp_path):
    repo = tmp_path / "perturb-kit"
    shutil.copytree(bundled_root() / "repos" / "paperproof-specimens+perturb-kit", repo)
    done = paperproof("verify", str(repo), "--entry", "perturb/labels.py::flip_labels_uniform")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("ran ") and "flip_labels_uniform" in lines[0]
    assert lines[2] == f"verified 1 sample(s) of {repo}: ran 1"
    assert lines[-1] == "findings: 0 (violations 0, departures 0, blocked 0)"


def test_verify_exits_1_for_a_violation_and_2_for_an_entry_that_matches_nothing(tmp_path):
    repo = tmp_path / "perturb-kit"
    shutil.copytree(bundled_root() / "repos" / "paperproof-specimens+perturb-kit", repo)
    done = paperproof("verify", str(repo), "--entry", "perturb/cli.py::str2bool")
    assert done.returncode == 1, done.stderr
    assert "findings: 1 (violations 1, departures 0, blocked 0)\n  perturb/cli.py:5 str2bool: " in done.stdout
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
    # said once, as a departure at the line of the departing expression, not again as a violation
    line = records["correctness_counts"]["fidelity"][0]["worked"]["lines"][0]
    assert line == 48  # `return (predictions == ...).sum(axis=0)`: a count where the paper averages
    assert ("\nfindings: 1 (violations 0, departures 1, blocked 0)\n  dynamics_maps/metrics.py:48 correctness_counts: "
            "departs from the paper's correctness (return value): ") in done.stderr
    assert done.stderr.count("correctness_counts") == 1


def test_help_names_defaults_exit_codes_environment_and_examples():
    for command, wanted in (("build", ["(default: site)", "exit status:", "SOURCE_DATE_EPOCH", "examples:",
                                       "--allow-partial", "python3 -m http.server", "  130 interrupted (Ctrl-C"]),
                            ("verify", ["exit status:", "  1  a contract violation", "examples:", "  130 interrupted",
                                        "path:line entry: reason"]),
                            ("harvest", ["GITHUB_TOKEN", "(default: .paperproof-store)", "75", "examples:",
                                         "  130 interrupted"])):
        done = paperproof(command, "--help")
        assert done.returncode == 0
        missing = [w for w in wanted if w not in done.stdout]
        assert missing == [], command


# --- usage errors answer at once, before the stages (and torch) are imported ---

HEAVY = ("torch", "pandas", "pydantic", "numpy")
IN_PROCESS = """import json, sys
from paperproof.cli import main
try:
    status = main(sys.argv[1:])
except SystemExit as exc:  # argparse's own usage errors
    status = exc.code
print(json.dumps({"status": status, "imported": [m for m in HEAVY if m in sys.modules]}))
""".replace("HEAVY", repr(HEAVY))


def usage_error(*args: str, cwd: Path) -> tuple[int, list[str], str]:
    """The exit status, which heavy modules were imported when it was given, and stderr."""
    done = subprocess.run([sys.executable, "-c", IN_PROCESS, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)
    answer = json.loads(done.stdout.splitlines()[-1])
    return answer["status"], answer["imported"], done.stderr


def test_usage_errors_exit_2_naming_the_path_before_anything_heavy_is_imported(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("not a folder\n")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    for args, said in [
        (["build", "--archive", "/nonexistent"], "paperproof: --archive /nonexistent: no such directory"),
        (["build", "--archive", str(afile)], f"paperproof: --archive {afile}: not a folder"),
        (["build", "--repos", "missing"], "paperproof: --repos missing: not a directory"),
        (["build", "--store", "missing"], "paperproof: --store missing: no harvest store here"),
        (["build", "--out", str(afile)], f"paperproof: --out {afile}: is a file, not a folder"),
        (["build", "--cache", str(afile)], f"paperproof: --cache {afile}: is a file, not a folder"),
        (["harvest", "--archive", "./missing"], "paperproof: --archive ./missing: no such directory"),
        (["harvest", "--from-checkouts", "missing", "--results-only"], "--from-checkouts missing: not a directory"),
        (["verify", "missing"], "paperproof: missing is not a directory; give the path of a checkout"),
        (["verify", str(checkout), "--environments", str(checkout / "envs")], f"--environments {checkout / 'envs'} "
                                                                              "lies inside the checkout"),
        (["verify", str(checkout), "--limit", "seconds=5"], "unknown limit 'seconds'"),
        (["build", "--bogus"], "unrecognized arguments: --bogus"),
    ]:
        status, imported, stderr = usage_error(*args, cwd=tmp_path)
        assert (status, imported) == (2, []), (args, stderr)
        assert said in stderr, (args, stderr)
    assert sorted(tmp_path.iterdir()) == [afile, checkout] and list(checkout.iterdir()) == []  # nothing written


def test_verify_suggests_a_larger_limit_when_most_samples_were_cut_short(tmp_path):
    repo = tmp_path / "tracin-lite"
    (repo / "tracin").mkdir(parents=True)
    (repo / "tracin" / "__init__.py").write_text("")
    (repo / "tracin" / "influence.py").write_text('''"""Self-influence of training samples, after TracIn."""
import numpy as np


def self_influence(gradients: np.ndarray) -> np.ndarray:
    """Self-influence of each sample, summed over checkpoints until the sum converges."""
    total = np.zeros(len(gradients))
    while True:  # the sum is refined until it stops changing, which it never does
        total += (gradients ** 2).sum(axis=-1)
    return total


def checkpoint_influence(gradients: np.ndarray, learning_rate: float = 0.1) -> np.ndarray:
    """Influence of each sample at one checkpoint, refined over every pair of samples."""
    scores = np.zeros(len(gradients))
    while scores.sum() >= 0:  # scores only grow: the refinement never ends
        scores += learning_rate * np.abs(gradients @ gradients.T).sum(axis=-1) + 1
    return scores


def gradient_magnitudes(gradients: np.ndarray) -> np.ndarray:
    """The magnitude of each gradient entry."""
    return np.abs(np.asarray(gradients, dtype=float))
''')
    done = subprocess.run([sys.executable, "-m", "paperproof", "verify", str(repo), "--no-install", "--limit",
                           "cpu_seconds=0.5"], capture_output=True, text=True, cwd=tmp_path, timeout=600,
                          env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")})
    assert done.returncode == 0, done.stdout + done.stderr  # a sample cut short is not a finding
    assert done.stdout.splitlines()[-1] == (
        "most samples were cut short by their budget (2 of 3 had a case reach the CPU time limit of 0.5 s): give "
        "them more with --limit cpu_seconds=1.5")


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
