"""What planted-hardness scoring adds to verifying a repository: the verify time of each checkout with and
without it, side by side in one run, on the same workers (2 by default, this machine's cores).

Each repository is verified twice with no run cache, without planted scoring and with it, alternating which
goes first, and the added seconds and the ratio are printed per repository, then their median and total.
The folder holds checkouts (`owner+name/`); by default the bundled specimens.

    .venv/bin/python bench/bench_planted.py [FOLDER] [--workers 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paperproof.verify.checkout import verify_path  # noqa: E402

SPECIMENS = Path(__file__).resolve().parents[1] / "paperproof" / "snapshot" / "repos"


def timed(repo: Path, workers: int, planted: bool) -> tuple[float, int]:
    start = time.perf_counter()
    samples = verify_path(repo, workers=workers, planted=planted)
    return time.perf_counter() - start, sum(1 for s in samples if s.planted and s.planted.scores)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, nargs="?", default=SPECIMENS)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    repos = sorted(p for p in args.folder.iterdir() if p.is_dir())
    added, base_all, with_all = [], 0.0, 0.0
    print(f"{'repository':44} {'without':>8} {'with':>8} {'added':>7} {'ratio':>6} scored")
    for i, repo in enumerate(repos):
        if i % 2:
            (on, scored), (off, _) = timed(repo, args.workers, True), timed(repo, args.workers, False)
        else:
            (off, _), (on, scored) = timed(repo, args.workers, False), timed(repo, args.workers, True)
        added.append(on - off)
        base_all, with_all = base_all + off, with_all + on
        print(f"{repo.name:44} {off:7.1f}s {on:7.1f}s {on - off:+6.1f}s {on / off:5.2f}x {scored}")
    print(f"{'total':44} {base_all:7.1f}s {with_all:7.1f}s {with_all - base_all:+6.1f}s {with_all / base_all:5.2f}x")
    print(f"added per repository: median {statistics.median(added):+.1f} s, max {max(added):+.1f} s "
          f"({len(repos)} repositories, {args.workers} workers)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
