"""What verifying the published files costs (issue 48): `build --check` reads every file of the site against the
digests in the manifest, and every build compares each file's size and mtime with the record before it decides
there is nothing to do. Side by side in one run, on one built site: the file pass of `--check` (every byte read
and hashed), the file pass of a build (a stat a file), then the whole `build --check` and the whole no-op build
as a user runs them, each in a process of its own, best of `--repeat`.

    .venv/bin/python bench/bench_check.py --site site --cache .paperproof-cache    # a built site: the bundled one
    .venv/bin/python bench/bench_check.py --papers 5000 [--work DIR]               # a synthetic archive, built first

The site's files are in the page cache (it was just built or read): a site read cold from disk costs what its
bytes cost to read.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synth_archive import LINKS, PAPERS, generate  # noqa: E402

from paperproof.build.manifest import Manifest, state_directory  # noqa: E402
from paperproof.build.site_files import inspect, walk  # noqa: E402


def paperproof(*args: str) -> tuple[float, int, str]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "paperproof", *args], capture_output=True, text=True, check=False)
    return time.perf_counter() - started, done.returncode, done.stdout + done.stderr


def best(repeat: int, run):
    results = [run() for _ in range(repeat)]
    return min(results, key=lambda r: r[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--site", type=Path, help="a site a build wrote (default: build one from --papers)")
    parser.add_argument("--cache", type=Path, default=Path(".paperproof-cache"), help="that build's --cache")
    parser.add_argument("--archive", help="that build's --archive (default: the bundled snapshot)")
    parser.add_argument("--papers", type=int, default=5000, help="papers of the synthetic archive built without --site")
    parser.add_argument("--work", type=Path, help="where the synthetic archive and its site go (default: a temporary folder)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    if args.site is None:
        work = args.work or Path(tempfile.mkdtemp(prefix="bench-check-"))
        source = work / "archive"
        if not source.is_dir():
            generate(source, papers=args.papers, links=max(1, LINKS * args.papers // PAPERS))
        args.site, args.cache, args.archive = work / "site", work / "cache", str(source)
        seconds, code, out = paperproof("build", "--archive", args.archive, "--out", str(args.site),
                                        "--cache", str(args.cache))
        if code != 0:
            print(out, file=sys.stderr)
            return 1
        print(f"built {args.site} from {args.papers:,} synthetic papers in {seconds:.1f} s")
    command = ["build", "--out", str(args.site), "--cache", str(args.cache)]
    if args.archive:
        command += ["--archive", args.archive]

    manifest = Manifest(state_directory(args.cache, args.site) / "manifest.sqlite", readonly=True)
    count = size = 0
    for _, found in walk(args.site):
        count, size = count + 1, size + found.st_size

    def pass_of(by_content: bool):
        started = time.perf_counter()
        damage = inspect(args.site, manifest.site_files(), by_content=by_content)
        return time.perf_counter() - started, len(damage)

    read, read_damage = best(args.repeat, lambda: pass_of(True))
    stat, stat_damage = best(args.repeat, lambda: pass_of(False))
    check = best(args.repeat, lambda: paperproof(*command, "--check"))
    noop = best(args.repeat, lambda: paperproof(*command))
    if read_damage or stat_damage or check[1] != 0 or "nothing to do" not in noop[2]:
        print(f"the site is not what its manifest records (damage {read_damage}/{stat_damage}, check exit "
              f"{check[1]}): rebuild it first\n{check[2]}{noop[2]}", file=sys.stderr)
        return 1
    print(f"site: {count:,} files, {size / 1e6:,.1f} MB; {os.cpu_count()} cores; best of {args.repeat}")
    print(f"{'what':<44} {'seconds':>8} {'µs a file':>10}")
    for what, seconds in (("--check's file pass (read and hash each file)", read),
                          ("a build's file pass (stat each file)", stat),
                          ("paperproof build --check, whole", check[0]),
                          ("paperproof build, no-op, whole", noop[0])):
        print(f"{what:<44} {seconds:>8.2f} {seconds / max(count, 1) * 1e6:>10.1f}")
    print(f"the file pass is {read / check[0]:.1%} of --check and {stat / noop[0]:.1%} of a no-op build")
    return 0


if __name__ == "__main__":
    sys.exit(main())
