"""What verify's result cache saves: `paperproof verify` of one specimen repository twice, side by side in one run,
first with an empty cache, then unchanged, each as a user runs it (a fresh process, its imports included).

The checkout is a copy of a bundled specimen (by default dynamics-maps: eight samples, fourteen sandbox runs),
verified with a cache and environments folder made for this run, so nothing of an earlier run is read. Prints both
wall times, the sandbox runs each made, and the ratio; exits 1 when the second is not at least 10x faster. A third
verify, after a module no entry imports was added, shows what the runs' own keys save when the whole verify's
key misses: every run from the cache, every sample judged again.

    .venv/bin/python bench/bench_verify_cache.py [--repo NAME] [--workers 2]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPECIMENS = ROOT / "paperproof" / "snapshot" / "repos"
TARGET = 10.0


def verify(repo: Path, cache: Path, envs: Path, workers: int) -> tuple[float, str]:
    """Wall seconds of one `paperproof verify`, and its line saying what ran in the sandbox."""
    command = [sys.executable, "-m", "paperproof", "verify", str(repo), "--cache", str(cache), "--environments",
               str(envs), "--workers", str(workers)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"verify failed ({done.returncode}): {done.stderr[-2000:]}")
    return seconds, next(line for line in done.stdout.splitlines() if line.startswith("sandbox runs: "))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", default="paperproof-specimens+dynamics-maps", help="a folder of bundled specimens")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-verify-cache-") as scratch:
        repo = Path(scratch) / args.repo.split("+")[-1]
        shutil.copytree(SPECIMENS / args.repo, repo)
        cache, envs = Path(scratch) / "cache", Path(scratch) / "envs"
        first, first_runs = verify(repo, cache, envs, args.workers)
        second, second_runs = verify(repo, cache, envs, args.workers)
        (repo / "notes.py").write_text('NOTE = "a module that no entry imports, and that holds no entry"\n')
        third, third_runs = verify(repo, cache, envs, args.workers)
    ratio = first / second
    print(f"{args.repo}, {args.workers} workers")
    print(f"{'first verify (empty cache):':36} {first:7.1f} s   {first_runs}")
    print(f"{'second verify (unchanged):':36} {second:7.1f} s   {second_runs}")
    print(f"ratio: {ratio:.1f}x (target: at least {TARGET:.0f}x)")
    print(f"{'third (a module nothing imports):':36} {third:7.1f} s   {third_runs}; {first / third:.1f}x")
    return 0 if ratio >= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
