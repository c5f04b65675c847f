"""Benchmark: per-case overhead of the sandboxed runner, before and after a change, side by side,
and against a fresh interpreter per sample.

Every path runs the same trivial entry (`def one(n): return 1`). A runner path goes through
`Executor.run_one` with the cache off: every isolation layer (namespaces, private root, uid drop,
rlimits, seccomp), the entry defined, every fixture case run and its result parsed. `before` is
the runner at `--before` (default: the commit before each case got a process of its own under a
trusted harness), exported from git into a temporary directory; `after` is this tree. They run
in alternating rounds, each in a process of its own, so both see the same machine; the first runs
of each round are a warm-up (a zygote's start-up is paid once per worker, not per sample). The
fresh path starts `python -c` per sample that imports numpy, pandas and torch, as a runner
without a zygote must, then calls the entry once, unsandboxed.

    .venv/bin/python bench/bench_zygote.py [--runs 60 --rounds 2 --fresh-runs 5 --before REV]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "6b2ab53"  # the runner before the harness: one process for every case of a sample
ENTRY = "def one(n):\n    return 1\n"
FRESH = "import numpy, pandas, torch\n" + ENTRY + "one(3)\n"

# Run in a process of its own with the tree to measure first on sys.path; its zygotes import
# that tree too (the executor starts them isolated, so the command names the tree itself).
MEASURE = r'''
import json, subprocess, sys, time, types
tree, runs, snapshot = sys.argv[1], int(sys.argv[2]), sys.argv[3]
sys.path.insert(0, tree)
import paperproof.runner.executor as executor
from paperproof.catalogue.extract import extract_module
from paperproof.fixtures.synth import synthesize
assert executor.__file__.startswith(tree), executor.__file__
popen = subprocess.Popen
def zygote_of_tree(command, *args, **kwargs):
    if command[1:4] == ["-I", "-m", "paperproof.runner.zygote"]:
        boot = f"import sys; sys.path.insert(0, {tree!r}); from paperproof.runner.zygote import main; main()"
        command = [command[0], "-I", "-c", boot, *command[4:]]
    return popen(command, *args, **kwargs)
executor.subprocess = types.SimpleNamespace(**{**vars(subprocess), "Popen": zygote_of_tree})
code = open(snapshot + "/trivial.py").read()
(entry,) = extract_module(code, repo="bench/trivial", path="trivial.py")
request = executor.RunRequest(entry, synthesize(entry), snapshot)
times = []
with executor.Executor(workers=1, cache=executor.ResultCache(None)) as pool:
    for _ in range(3):
        assert pool.run_one(request).end == "completed"
    for _ in range(runs):
        began = time.perf_counter()
        result = pool.run_one(request)
        times.append((time.perf_counter() - began) * 1000)
        assert result.end == "completed", result.reason
print(json.dumps({"times": times, "cases": len(request.fixtures.cases)}))
'''


def export(rev: str, into: Path) -> Path:
    """The `paperproof` package at `rev`, unpacked into `into`."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "paperproof"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def measure(tree: Path, runs: int, snapshot: Path) -> tuple[list[float], int]:
    done = subprocess.run([sys.executable, "-c", MEASURE, str(tree), str(runs), str(snapshot)],
                          check=True, capture_output=True, text=True)
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    return answer["times"], answer["cases"]


def fresh_ms(runs: int) -> list[float]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", FRESH], check=True, env=env)
        times.append((time.perf_counter() - began) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60, help="samples run per round and path")
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds of before and after")
    parser.add_argument("--fresh-runs", type=int, default=5)
    parser.add_argument("--before", default=BEFORE, help="git revision of the runner to compare with")
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, uid {os.getuid()}, "
          f"load {os.getloadavg()[0]:.1f}")
    times: dict[str, list[float]] = {"before": [], "after": []}
    cases = {}
    with tempfile.TemporaryDirectory(prefix="bench-zygote-") as tmp:
        snapshot = Path(tmp) / "snapshot"
        snapshot.mkdir()
        (snapshot / "trivial.py").write_text(ENTRY)
        trees = {"before": export(args.before, Path(tmp)), "after": ROOT}
        for _ in range(args.rounds):
            for name in ("before", "after"):
                got, cases[name] = measure(trees[name], args.runs, snapshot)
                times[name].extend(got)
    cold = fresh_ms(args.fresh_runs)
    labels = {"before": f"before ({args.before})", "after": "after (this tree)"}
    print(f"{'path':<34}{'runs':>6}{'cases':>7}{'median ms':>11}{'p95 ms':>9}{'ms/case':>9}")
    for name in ("before", "after"):
        ordered = sorted(times[name])
        median = statistics.median(ordered)
        print(f"{labels[name]:<34}{len(ordered):>6}{cases[name]:>7}{median:>11.1f}"
              f"{ordered[max(0, int(len(ordered) * 0.95) - 1)]:>9.1f}{median / cases[name]:>9.2f}")
    print(f"{'fresh interpreter (1 call)':<34}{len(cold):>6}{1:>7}{statistics.median(cold):>11.1f}")
    before, after = (statistics.median(times[n]) / cases[n] for n in ("before", "after"))
    print(f"per-case overhead: {before:.2f} ms before, {after:.2f} ms after: the separation costs "
          f"{after - before:+.2f} ms per case ({after / before:.2f}x); a sample of {cases['after']} cases takes "
          f"{statistics.median(times['after']):.0f} ms against {statistics.median(cold):.0f} ms for a fresh interpreter")


if __name__ == "__main__":
    main()
