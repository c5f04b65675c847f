"""Benchmark: per-sample overhead of the warm zygote against a fresh interpreter per sample.

Both run the same trivial entry (`def one(n): return 1`). The zygote path goes through
`Executor.run_one` with the cache off: every isolation layer (namespaces, private root,
uid drop, rlimits, seccomp), the entry defined from its closure, every fixture case run and
reported, the answer parsed. The fresh path starts `python -c` per sample that imports numpy,
pandas and torch, as a runner without a zygote must, then calls the entry once, unsandboxed.
The first zygote runs are a warm-up (its start-up is paid once per worker, not per sample).

    .venv/bin/python bench/bench_zygote.py [--zygote-runs 200 --fresh-runs 10]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paperproof.catalogue.extract import extract_module  # noqa: E402
from paperproof.fixtures.synth import synthesize  # noqa: E402
from paperproof.runner.executor import Executor, ResultCache, RunRequest  # noqa: E402

ENTRY = "def one(n):\n    return 1\n"
FRESH = "import numpy, pandas, torch\n" + ENTRY + "one(3)\n"


def zygote_ms(runs: int, snapshot: Path) -> tuple[float, list[float], int]:
    (snapshot / "trivial.py").write_text(ENTRY)
    (entry,) = extract_module(ENTRY, repo="bench/trivial", path="trivial.py")
    request = RunRequest(entry, synthesize(entry), str(snapshot))
    times = []
    with Executor(workers=1, cache=ResultCache(None)) as executor:
        started = time.perf_counter()
        for _ in range(3):
            assert executor.run_one(request).end == "completed"
        startup = time.perf_counter() - started
        for _ in range(runs):
            began = time.perf_counter()
            result = executor.run_one(request)
            times.append(time.perf_counter() - began)
            assert result.end == "completed", result.reason
    return startup * 1000, [t * 1000 for t in times], len(request.fixtures.cases)


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
    parser.add_argument("--zygote-runs", type=int, default=200)
    parser.add_argument("--fresh-runs", type=int, default=10)
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, uid {os.getuid()}")
    with tempfile.TemporaryDirectory(prefix="bench-zygote-") as tmp:
        startup, warm, cases = zygote_ms(args.zygote_runs, Path(tmp))
    cold = fresh_ms(args.fresh_runs)
    rows = [("zygote (sandboxed, all cases)", warm), ("fresh interpreter (1 call)", cold)]
    print(f"zygote warm-up: {startup:.0f} ms for its first 3 runs (start-up, paid once per worker)")
    print(f"{'path':<32}{'runs':>6}{'median ms':>12}{'mean ms':>10}{'p95 ms':>10}")
    for name, times in rows:
        p95 = sorted(times)[max(0, int(len(times) * 0.95) - 1)]
        print(f"{name:<32}{len(times):>6}{statistics.median(times):>12.1f}{statistics.fmean(times):>10.1f}{p95:>10.1f}")
    ratio = statistics.median(cold) / statistics.median(warm)
    print(f"per-sample overhead: zygote {statistics.median(warm):.1f} ms ({cases} fixture cases each) vs "
          f"fresh interpreter {statistics.median(cold):.1f} ms: the zygote is {ratio:.1f}x cheaper (target >= 20x)")


if __name__ == "__main__":
    main()
