"""Benchmark: what showing the checkout in the sandbox costs each run, side by side with the private root without it.

Each run's harness builds its private root once (`runner.sandbox.private_root`). Since the checkout became
readable where its code looks (its top-level entries bound read-only, following no link, in the working folder),
that costs one bind and one remount per top-level entry. This measures `private_root` itself, in a forked child
that enters a mount namespace of its own as the harness does, for a checkout of 1, 50 and 512 top-level entries
(half folders, half files) and without a checkout (the root as it was built before), in alternating rounds so
every variant sees the same machine. Needs root (the harness's namespaces).

    .venv/bin/python bench/bench_checkout_view.py [--runs 40 --rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from paperproof.runner import sandbox  # noqa: E402

SIZES = (1, 50, 512)


def _checkout(parent: Path, entries: int) -> str:
    root = parent / f"checkout-{entries}"
    root.mkdir()
    for index in range(entries):
        if index % 2:
            (root / f"file_{index:04d}.csv").write_text("1,2,3\n")
        else:
            (root / f"folder_{index:04d}").mkdir()
            (root / f"folder_{index:04d}" / "data.npy").write_bytes(b"\0" * 128)
    return str(root)


def _one(checkout: str | None, scratch: Path) -> float:
    """Seconds `private_root` took in a fresh child with its own mount namespace."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            sandbox.unshare(sandbox.CLONE_NEWNS)
            new_root = tempfile.mkdtemp(dir=scratch)
            report = sandbox.IsolationReport()
            started = time.perf_counter()
            sandbox.private_root([], new_root, report, None, 8 * 1024**2, proc=False, checkout=checkout)
            took = time.perf_counter() - started
            ok = report.filesystem == "read_only" and not report.fallbacks
            os.write(write, f"{took if ok else -1.0}\n".encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as handle:
        line = handle.read()
    os.waitpid(pid, 0)
    took = float(line or -1)
    if took < 0:
        raise SystemExit("the private root was not built whole: run as root, on Linux 5.10 or later")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=40, help="runs of each variant per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if os.getuid() != 0:
        raise SystemExit("needs root: the harness's mount namespace")
    with tempfile.TemporaryDirectory() as folder:
        parent = Path(folder)
        scratch = parent / "roots"
        scratch.mkdir()
        variants: dict[str, str | None] = {"no checkout (before)": None}
        variants.update({f"checkout, {n} top-level entries": _checkout(parent, n) for n in SIZES})
        times: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(args.rounds):
            for name, checkout in variants.items():
                _one(checkout, scratch)  # warm-up: page cache, dentries
                times[name].extend(_one(checkout, scratch) for _ in range(args.runs))
    print(f"private_root per run, median of {args.runs * args.rounds} (load {os.getloadavg()[0]:.1f}, "
          f"{os.cpu_count()} cores):")
    base = statistics.median(times["no checkout (before)"])
    for name, found in times.items():
        median = statistics.median(found)
        print(f"  {name:<34} {median * 1000:7.2f} ms   +{(median - base) * 1000:6.2f} ms")


if __name__ == "__main__":
    main()
