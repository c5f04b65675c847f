"""The sandbox shows the checkout's own files, read-only, where its code looks for them, and follows none of its links.

`paperproof verify` runs as a real subprocess on a copy of `tests/shipped_files`, a repository whose entries open
a class prior saved beside their module (through `__file__`) and a temperature at the repository's root (relative
to the working folder), try to write over both, open a name relative to their own folder, a checkpoint nothing
ships, and two links the test adds: one to `/etc/passwd`, one to a file of the builder's own installation, both of
which the sandbox's root holds.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import paperproof

SPECIMEN = Path(__file__).resolve().parent / "shipped_files"
LIMITS = ["--limit=wall_seconds=30", "--limit=cpu_seconds=10"]
BUILDER_FILE = Path(paperproof.__file__).resolve()  # visible in the sandbox: the runner's own package is bound there


def _tree(root: Path) -> dict[str, str]:
    """Every entry of the checkout: a file's sha256, a link's target (never followed)."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def _verify(checkout: Path, *options: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "paperproof", "verify", str(checkout), "--json", "--no-cache", "--no-install",
               "--workers", "1", *LIMITS, *options]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("shipped") / "shipped_files"
    shutil.copytree(SPECIMEN, root, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "scoring" / "linked.txt").symlink_to("/etc/passwd")
    (root / "scoring" / "settings.toml").symlink_to(BUILDER_FILE)
    return root


@pytest.fixture(scope="module")
def verified(checkout: Path) -> dict:
    before = _tree(checkout)
    done = _verify(checkout, "--all")
    return {"done": done, "records": {r["entry"]: r for r in json.loads(done.stdout)} if done.returncode in (0, 1) else {},
            "before": before, "after": _tree(checkout)}


def _output_bounds(record: dict) -> dict[str, tuple[float, float]]:
    """Each case's output range, from the record's `ndarray float64 [...] in [lo, hi]`."""
    bounds = {}
    for case in record["cases"]:
        assert case["outcome"] == "returned", case
        low, high = case["output"].rsplit(" in [", 1)[1].rstrip("]").split(", ")
        bounds[case["case_id"]] = (float(low), float(high))
    return bounds


def test_verify_passes_entries_that_open_what_their_repository_ships(checkout: Path) -> None:
    done = _verify(checkout, "--entry", "scoring/prior.py::prior_weighted", "--entry", "scoring/prior.py::calibrated")
    assert done.returncode == 0, done.stderr[-3000:]
    records = {r["entry"]: r for r in json.loads(done.stdout)}
    assert {name: r["status"] for name, r in records.items()} == {"prior_weighted": "ran", "calibrated": "ran"}
    assert all(r["blocked"] == [] for r in records.values())
    # the same logits, times the shipped prior's mass (1.5) and divided by the shipped temperature (2.0): the values
    # read from the two files, one found beside the module, the other from the repository's root
    weighted, calibrated = _output_bounds(records["prior_weighted"]), _output_bounds(records["calibrated"])
    assert weighted.keys() == calibrated.keys() and len(weighted) >= 4
    for case, (low, high) in weighted.items():
        assert low == pytest.approx(3 * calibrated[case][0], rel=2e-3, abs=2e-3), case
        assert high == pytest.approx(3 * calibrated[case][1], rel=2e-3, abs=2e-3), case


def test_writing_into_the_checkout_fails_and_leaves_it_unchanged(verified: dict) -> None:
    records = verified["records"]
    assert verified["done"].returncode == 1, verified["done"].stderr[-3000:]
    refit, recalibrate = records["refit_prior"], records["recalibrate"]
    prior = Path(verified["done"].args[4]) / "scoring" / "prior.npy"
    assert (refit["status"], recalibrate["status"]) == ("unverified", "unverified")
    assert refit["blocked"] == [f"tried to write {prior}, which is read-only (blocked)"]  # through __file__
    assert recalibrate["blocked"] == ["tried to write calibration.csv, which is read-only (blocked)"]  # from the root
    assert {c["outcome"] for r in (refit, recalibrate) for c in r["cases"]} == {"blocked"}
    assert verified["after"] == verified["before"]
    assert prior.read_bytes() == (SPECIMEN / "scoring" / "prior.npy").read_bytes()


def test_a_link_in_the_checkout_to_a_host_file_is_not_followed(verified: dict) -> None:
    records = verified["records"]
    for entry, link in (("read_linked", "scoring/linked.txt"), ("read_settings", "scoring/settings.toml")):
        record = records[entry]
        assert record["status"] == "unverified", record["reason"]
        assert {c["outcome"] for c in record["cases"]} == {"blocked"}
        assert record["blocked"] == [f"tried to open {link}, a link of the repository, which the sandbox does not "
                                     "follow (blocked)"]
        assert record["isolation"]["filesystem"] == "read_only" and record["isolation"]["fallbacks"] == []
    printed = verified["done"].stdout + verified["done"].stderr
    assert "root:x:0:0" not in printed
    assert BUILDER_FILE.read_text().splitlines()[0] not in printed


def test_the_sandbox_does_not_hold_only_what_the_repository_does_not_ship(verified: dict) -> None:
    records = verified["records"]
    assert records["resume_from_checkpoint"]["blocked"] == [
        "tried to open checkpoints/epoch_3.npy, which the sandbox does not hold (blocked)"]
    assert records["prior_from_here"]["blocked"] == [
        "tried to open prior.npy, which the repository ships as scoring/prior.npy, from the repository's root, where "
        "the run works (blocked)"]
    assert {name for name, r in records.items() if any("does not hold" in line for line in r["blocked"])} == {
        "resume_from_checkpoint"}
