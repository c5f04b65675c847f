"""Benchmark: what running TensorFlow and JAX for real costs a repository, in the sandbox and beside it.

For each framework a checkout of one entry that imports it gets its environment (`runner.environment.prepare`
into ENVS: the first run resolves, downloads and installs; a later one finds it cached), then the entry runs in
the sandbox as `verify` runs it (`Executor.run_one`, every isolation layer, no result cache): one process per
fixture case, each importing the framework afresh (the zygote warms only numpy, pandas and torch). Each case
reports the import's wall-clock and CPU seconds, its process's peak resident memory and peak address space. Beside
it, the same code in a plain interpreter outside the sandbox with the same environment on `sys.path`, and numpy
(already imported in the zygote) as the baseline. The sandbox's per-case limits are printed with them.
`--download` also installs the environment's packages once more into a scratch folder with an empty uv cache, and
prints the download sizes uv reports and the time it took (it fetches everything again).

    .venv/bin/python bench/bench_frameworks.py [--envs DIR] [--download]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from paperproof.catalogue.extract import extract_module  # noqa: E402
from paperproof.fixtures.synth import synthesize  # noqa: E402
from paperproof.plumbing import host_process  # noqa: E402
from paperproof.runner import environment  # noqa: E402
from paperproof.runner.executor import Executor, RunRequest  # noqa: E402
from paperproof.runner.sandbox import Limits  # noqa: E402

# The framework's import and one small computation, by import line.
FRAMEWORKS = {
    "numpy (baseline)": ("import numpy as np", "float(np.ones(n).sum())"),
    "tensorflow": ("import tensorflow as tf", "float(tf.reduce_sum(tf.ones([n])).numpy())"),
    "jax": ("import jax.numpy as jnp", "float(jnp.ones(n).sum())"),
}
ENTRY = '''import resource
import time


def framework_import(n):
    start, cpu = time.perf_counter(), time.process_time()
    {line}
    seconds, spent = time.perf_counter() - start, time.process_time() - cpu
    value = {use}
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with open("/proc/self/status") as handle:
        peak = int([row.split()[1] for row in handle if row.startswith("VmPeak:")][0]) / 1024
    return " ".join(str(v) for v in (seconds, spent, rss, peak, value))
'''
OUTSIDE = "import sys\nsys.path.append(sys.argv[1])\n{entry}\nprint(framework_import(3))\n"


def _env(name: str, line: str, envs: Path, work: Path) -> tuple[str | None, list[str], float]:
    checkout = work / name.split()[0]
    checkout.mkdir(parents=True, exist_ok=True)
    (checkout / "entry.py").write_text(ENTRY.format(line=line, use="0"))
    start = time.perf_counter()
    env = environment.prepare(checkout, envs)
    return env.path, env.installed, time.perf_counter() - start


def _size(folder: str | None) -> float:
    if folder is None:
        return 0.0
    total = 0
    for base, _, files in os.walk(folder):
        total += sum(os.lstat(os.path.join(base, f)).st_size for f in files)
    return total / 1024**2


def _sandboxed(executor: Executor, name: str, line: str, use: str, env: str | None, work: Path) -> list[list[float]]:
    checkout = work / ("run-" + name.split()[0])
    checkout.mkdir(parents=True, exist_ok=True)
    code = ENTRY.format(line=line, use=use)
    (checkout / "entry.py").write_text(code)
    (entry,) = extract_module(code, repo="bench/frameworks", path="entry.py")
    result = executor.run_one(RunRequest(entry, synthesize(entry), str(checkout), None, environment=env))
    rows = [[float(v) for v in c.value.repr.strip("'").split()] for c in result.cases
            if c.value is not None and c.value.repr is not None]
    if not rows:
        raise SystemExit(f"{name}: no case returned ({result.end}: {result.reason})\n{result.stderr_tail[-2000:]}")
    return rows


def _outside(line: str, use: str, env: str | None) -> list[float]:
    code = OUTSIDE.format(entry=ENTRY.format(line=line, use=use))
    done = subprocess.run([sys.executable, "-c", code, env or "/nonexistent"], capture_output=True, text=True,
                          timeout=600)
    return [float(v) for v in done.stdout.strip().splitlines()[-1].split()]


def _download(pins: list[str]) -> tuple[list[str], float]:
    uv = environment.uv_binary()
    assert uv is not None, "uv is not installed"
    with tempfile.TemporaryDirectory() as cold, host_process.scratch() as scratch:
        start = time.perf_counter()
        done = host_process.run([uv, "pip", "install", *environment.UV_ISOLATED, "--target", str(scratch / "t"),
                                 "--no-deps", "--only-binary", ":all:", "--cache-dir", cold, *pins], scratch,
                                timeout=1800, extra={"UV_NO_CONFIG": "1"})
        seconds = time.perf_counter() - start
    return re.findall(r"Downloading (\S+ \([\d.]+\w+\))", done.stdout + done.stderr), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=Path, default=Path.home() / ".cache" / "paperproof" / "envs")
    parser.add_argument("--download", action="store_true")
    args = parser.parse_args()
    limits = Limits()
    print(f"sandbox per case: CPU budget {limits.cpu_seconds:.0f} s, backstop {limits.wall_seconds:.0f} s, address "
          f"space {limits.address_space / 1024**3:.0f} GiB over the zygote's, memory {limits.memory_bytes / 1024**3:.0f} "
          f"GiB; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    rows = []
    with tempfile.TemporaryDirectory() as tmp, Executor(workers=1) as executor:
        work = Path(tmp)
        for name, (line, use) in FRAMEWORKS.items():
            path, pins, prepared = _env(name, line, args.envs, work) if "baseline" not in name else (None, [], 0.0)
            cases = _sandboxed(executor, name, line, use, path, work)
            plain = _outside(line, use, path)
            got = [p for p in pins if p.split("==")[0] in ("tensorflow-cpu", "keras", "jax", "jaxlib")]
            rows.append((name, prepared, _size(path), len(pins), cases, plain, got))
            if args.download and pins:
                sizes, seconds = _download(pins)
                print(f"{name}: downloaded with an empty uv cache in {seconds:.1f} s: {', '.join(sizes)}")
    print()
    print("| framework | wheels | environment (prepare s, MB, packages) | in the sandbox: import wall s, CPU s, peak RSS MB, "
          "peak address space MB (median of cases) | outside: wall s, CPU s, RSS MB |")
    print("|---|---|---|---|---|")
    for name, prepared, size, count, cases, plain, got in rows:
        med = [statistics.median(c[i] for c in cases) for i in range(4)]
        print(f"| {name} | {', '.join(got) or 'the runner'} | {prepared:.1f} s, {size:.0f} MB, {count} | "
              f"{med[0]:.2f}, {med[1]:.2f}, {med[2]:.0f}, {med[3]:.0f} ({len(cases)} cases; CPU max "
              f"{max(c[1] for c in cases):.2f}) | {plain[0]:.2f}, {plain[1]:.2f}, {plain[2]:.0f} |")


if __name__ == "__main__":
    main()
