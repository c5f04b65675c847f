"""Benchmark: how long a usage error takes to answer, beside what it would wait for if it were told by the stages.

Each usage error is a real `paperproof` process (a missing `--archive`, `--repos`, `--store` or checkout, an
`--out` that is a file, a bad flag), timed from start to exit, median of `--runs`; beside them, in the same run,
a process that only imports the build's and verify's stages (torch among them): the cost every usage error
paid before the CLI checked paths first. Prints seconds and the exit status of each.

    .venv/bin/python bench/bench_usage.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES = [
    ["build", "--archive", "/nonexistent"],
    ["build", "--repos", "missing"],
    ["build", "--store", "missing"],
    ["build", "--out", "afile"],
    ["verify", "missing"],
    ["harvest", "--from-checkouts", "missing", "--results-only"],
    ["build", "--bogus"],
]
STAGES = "import paperproof.build.pipeline, paperproof.verify.checkout"


def timed(argv: list[str], cwd: Path, runs: int) -> tuple[float, int]:
    """The median wall-clock seconds of `runs` runs of `argv`, and its exit status."""
    seconds, status = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        status = subprocess.run(argv, cwd=cwd, capture_output=True, timeout=600).returncode
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        (cwd / "afile").write_text("not a folder\n")
        print(f"{'command':<58} {'seconds':>8} {'exit':>5}")
        for case in CASES:
            seconds, status = timed([sys.executable, "-m", "paperproof", *case], cwd, runs)
            print(f"{'paperproof ' + ' '.join(case):<58} {seconds:>8.2f} {status:>5}")
        seconds, status = timed([sys.executable, "-c", STAGES], cwd, runs)
        print(f"{'importing the stages (what a usage error used to wait for)':<58} {seconds:>8.2f} {status:>5}")


if __name__ == "__main__":
    main()
