"""`paperproof verify` keeps its results by what decides them: an unchanged rerun starts no sandbox process, and a
change to anything that decides a result (the entry's code, a module it imports, a file of the checkout, the
limits) runs it again in the sandbox. Real runs in the real sandbox, on a checkout written here."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from paperproof.verify.checkout import Verified, verify_checkout

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox is Linux namespaces")

SCORES = '''import numpy as np

from helpers import clip


def margin(probs: np.ndarray) -> np.ndarray:
    """Per-sample margin between the two largest predicted probabilities.

    Args:
        probs: predicted probabilities, shape (N, K)
    """
    top = np.sort(probs, axis=1)
    return clip(top[:, -1] - top[:, -2])
'''
HELPERS = "def clip(values):\n    return values.clip(0.0, 1.0)\n"
OTHER = "def unused(values):\n    return values\n"


def _checkout(root: Path) -> Path:
    root.mkdir()
    (root / "scores.py").write_text(SCORES)
    (root / "helpers.py").write_text(HELPERS)
    (root / "other.py").write_text(OTHER)
    (root / "classes.csv").write_text("cat,dog\n")
    return root


def _verify(repo: Path, cache: Path | None, limits: dict | None = None) -> Verified:
    return verify_checkout(repo, entries=["margin"], workers=1, planted=False, cache=cache, limits=limits)


def _rerun(first: Verified, again: Verified) -> None:
    """`again` ran its entry in the sandbox: nothing of it was answered by the cache."""
    assert again.ran >= 1 and again.from_cache == 0, (again.ran, again.from_cache)
    assert [s.entry for s in again.samples] == [s.entry for s in first.samples]


def test_an_unchanged_rerun_runs_nothing_and_every_change_to_what_decides_a_result_runs_it_again(tmp_path):
    repo = _checkout(tmp_path / "repo")
    cache = tmp_path / "cache"
    first = _verify(repo, cache)
    assert first.ran >= 1 and first.from_cache == 0
    assert first.samples[0].status == "ran", first.samples[0].reason

    again = _verify(repo, cache)  # unchanged: answered whole, the same samples
    assert (again.ran, again.from_cache) == (0, first.ran)
    assert [s.model_dump(mode="json") for s in again.samples] == [s.model_dump(mode="json") for s in first.samples]
    assert len(list((cache / "verified").rglob("*.json"))) == 1

    (repo / "other.py").write_text(OTHER + "\n\ndef more(values):\n    return values\n")  # not imported by `margin`
    unrelated = _verify(repo, cache)
    assert (unrelated.ran, unrelated.from_cache) == (0, first.ran)  # its runs are the same runs

    (repo / "scores.py").write_text(SCORES.replace("top[:, -1] - top[:, -2]", "(top[:, -1] - top[:, -2]) / 2"))
    edited = _verify(repo, cache)
    _rerun(first, edited)
    assert edited.samples[0].code_sha256 != first.samples[0].code_sha256

    (repo / "helpers.py").write_text(HELPERS.replace("1.0", "0.5"))
    _rerun(first, _verify(repo, cache))

    _rerun(first, _verify(repo, cache, limits={"wall_seconds": 30}))

    (repo / "classes.csv").write_text("cat,dog,bird\n")  # a file the code may open
    _rerun(first, _verify(repo, cache, limits={"wall_seconds": 30}))

    _rerun(first, _verify(repo, None))  # no cache: every run made, nothing read back


# Runs `paperproof verify` with an audit hook that writes the arguments of every process it starts.
STARTS = textwrap.dedent("""
    import json, sys
    log = sys.argv[1]
    def watch(event, args):
        if event == "subprocess.Popen":
            with open(log, "a") as out:
                out.write(json.dumps([str(a) for a in args[1]]) + "\\n")
    sys.addaudithook(watch)
    from paperproof.cli import main
    raise SystemExit(main(sys.argv[2:]))
""")


def _cli(tmp_path: Path, *argv: str) -> tuple[subprocess.CompletedProcess, list[list[str]]]:
    log = tmp_path / "started.jsonl"
    log.unlink(missing_ok=True)
    done = subprocess.run([sys.executable, "-c", STARTS, str(log), "verify", *argv], capture_output=True, text=True,
                          timeout=900)
    started = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return done, started


def _zygotes(started: list[list[str]]) -> int:
    return sum(1 for argv in started if "paperproof.runner.zygote" in argv)


def test_the_cli_says_what_came_from_the_cache_and_starts_no_sandbox_for_an_unchanged_checkout(tmp_path):
    repo = _checkout(tmp_path / "repo")
    cache = tmp_path / "cache"
    argv = [str(repo), "--entry", "margin", "--no-install", "--workers", "1", "--cache", str(cache)]
    done, started = _cli(tmp_path, *argv)
    assert done.returncode == 0, done.stderr[-3000:]
    ran = next(line for line in done.stdout.splitlines() if line.startswith("sandbox runs: "))
    runs = int(ran.removeprefix("sandbox runs: ").split(",")[0])
    assert runs >= 1 and ran.endswith(", from cache: 0")
    assert _zygotes(started) == 1
    assert (cache / "CACHEDIR.TAG").is_file()  # tagged as paperproof's

    again, started = _cli(tmp_path, *argv)
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"sandbox runs: 0, from cache: {runs}" in again.stdout.splitlines()
    assert _zygotes(started) == 0  # no sandbox process was started
    assert [line for line in again.stdout.splitlines() if not line.startswith("sandbox runs")] == \
        [line for line in done.stdout.splitlines() if not line.startswith("sandbox runs")]

    bypassed, started = _cli(tmp_path, *argv, "--no-cache")
    assert bypassed.returncode == 0, bypassed.stderr[-3000:]
    assert f"sandbox runs: {runs}, from cache: 0 (--no-cache)" in bypassed.stdout.splitlines()
    assert _zygotes(started) == 1


def test_the_cli_refuses_a_cache_inside_the_checkout_or_one_that_is_not_paperproofs(tmp_path):
    repo = _checkout(tmp_path / "repo")
    inside, started = _cli(tmp_path, str(repo), "--cache", str(repo / ".results"))
    assert inside.returncode == 2 and inside.stdout == ""
    assert "lies inside the checkout" in inside.stderr and "--no-cache" in inside.stderr
    assert not (repo / ".results").exists() and started == []

    foreign = tmp_path / "papers"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("\\documentclass{article}\n")
    refused, started = _cli(tmp_path, str(repo), "--cache", str(foreign))
    assert refused.returncode == 2 and "not a paperproof cache's (thesis.tex)" in refused.stderr
    assert sorted(p.name for p in foreign.iterdir()) == ["thesis.tex"] and started == []


def test_a_result_the_machines_load_cut_is_not_kept_and_says_so(tmp_path):
    """`cut_by_load` and runner errors are the machine's, not the sample's: never kept, and counted, so that a verify
    holding one keeps no samples either (`Judged.final`)."""
    from paperproof.catalogue.run_result import RunResult
    from paperproof.runner.executor import ResultCache

    cache = ResultCache(tmp_path / "runs")
    made = {"code_sha256": "c" * 64, "fixture_digest": "f" * 16, "runner_version": "7"}
    cache.put("a" * 64, RunResult(**made, end="cut_by_load", reason="cut by load"))
    cache.put("b" * 64, RunResult(**made, end="runner_error", reason="the sandbox zygote died"))
    cache.put("d" * 64, RunResult(**made, end="completed"))
    assert cache.unkept == 2
    assert cache.get("a" * 64) is None and cache.get("b" * 64) is None
    assert cache.get("d" * 64) is not None and cache.hits == 1
