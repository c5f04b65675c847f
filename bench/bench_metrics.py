"""Benchmark: the vectorised metric core against a per-sample loop of the public kind.

Both compute confidence, variability, correctness and forgetfulness from the same random
training dynamics (logits [E, N, C], float32 as models emit them). The loop follows the public
cartography implementations: per sample and epoch, a float32 torch tensor from a Python list,
softmax, gather of the gold probability, np.argmax and the forgetting state machine, then the
statistics from Python lists. The core's throughput is set beside the machine's memory bandwidth
measured in the same run, to show how far it is from being bound by memory.

    .venv/bin/python bench/bench_metrics.py [--n 100000 --epochs 10 --classes 10]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paperproof.verify.metrics import training_dynamics  # noqa: E402

NEVER_LEARNED = 1000


def random_dynamics(
    seed: int, n_epochs: int, n: int, n_classes: int
) -> tuple[np.ndarray, np.ndarray]:
    """Logits that drift towards the label at a per-sample rate, so every metric varies."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    z = rng.normal(0.0, 1.5, (n_epochs, n, n_classes)).astype(np.float32)
    drift = np.linspace(-1.0, 3.0, n_epochs)[:, None] * rng.normal(0.5, 1.0, n)[None, :]
    z[:, np.arange(n), y] += drift.astype(np.float32)
    return z, y


def best_of(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def per_sample_loop(
    rows: list[list[list[float]]], labels: list[int]
) -> tuple[list[float], list[float], list[float], list[int]]:
    """The public per-guid loop: one small tensor per sample-epoch, statistics from lists."""
    confidence, variability, correctness, forgetfulness = [], [], [], []
    for sample_rows, gold in zip(rows, labels):
        gold_probs: list[float] = []
        hits: list[bool] = []
        learned, previous, forgotten = False, False, 0
        for row in sample_rows:
            probs = torch.softmax(torch.tensor(row, dtype=torch.float32), dim=-1)
            gold_probs.append(float(probs[gold]))
            hit = bool(np.argmax(row) == gold)
            if previous and not hit:
                forgotten += 1
            learned = learned or hit
            previous = hit
            hits.append(hit)
        confidence.append(float(np.mean(gold_probs)))
        variability.append(float(np.std(gold_probs)))
        correctness.append(sum(hits) / len(hits))
        forgetfulness.append(forgotten if learned else NEVER_LEARNED)
    return confidence, variability, correctness, forgetfulness


def memory_bandwidth(n_bytes: int, repeats: int) -> float:
    """Bytes read plus written per second for a large numpy copy (one core's view of DRAM)."""
    src = np.ones(n_bytes // 8, dtype=np.float64)
    dst = np.empty_like(src)
    seconds = best_of(lambda: np.copyto(dst, src), repeats)
    return 2 * src.nbytes / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="samples")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--loop-n", type=int, default=10_000,
                        help="samples the loop runs on; its time is scaled linearly to --n")
    parser.add_argument("--repeats", type=int, default=3, help="best-of repeats for the core")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: all cores)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    threads = args.threads or (torch.get_num_threads())
    torch.set_num_threads(threads)
    z, y = random_dynamics(args.seed, args.epochs, args.n, args.classes)
    device = "cpu"  # the comparison is a CPU one; the loop has no GPU path

    training_dynamics(z, y, device=device)  # warm-up: allocator, thread pool
    core_s = best_of(lambda: training_dynamics(z, y, device=device), args.repeats)
    core = training_dynamics(z, y, device=device)

    loop_n = min(args.loop_n, args.n)
    rows = z[:, :loop_n].transpose(1, 0, 2).tolist()  # per-sample Python lists, as read from JSONL
    labels = [int(v) for v in y[:loop_n]]
    start = time.perf_counter()
    loop = per_sample_loop(rows, labels)
    loop_sub_s = time.perf_counter() - start
    loop_s = loop_sub_s * args.n / loop_n

    # The two must agree before their times mean anything.
    keys = ("confidence", "variability", "correctness", "forgetfulness")
    worst = max(
        float(np.max(np.abs(np.asarray(ref, dtype=np.float64) - core[key][:loop_n].numpy())))
        for key, ref in zip(keys, loop)
    )

    input_bytes = z.nbytes
    bandwidth = memory_bandwidth(512 * 2**20, 3)
    core_rate = input_bytes / core_s
    sample_epochs = args.n * args.epochs

    scaled = loop_n < args.n
    print(f"hardness-metric core vs per-sample loop  (N={args.n:,}, E={args.epochs}, "
          f"C={args.classes}, logits float32, core float64)")
    print(f"machine: {platform.processor() or platform.machine()}, torch {torch.__version__}, "
          f"{threads} torch threads, device {device}")
    print()
    print(f"| {'what':<44} | {'value':>16} |")
    print(f"|{'-' * 46}|{'-' * 18}|")
    rows_out = [
        (f"core: conf+var+corr+forget (best of {args.repeats})", f"{core_s * 1e3:,.1f} ms"),
        ("core per sample-epoch", f"{core_s / sample_epochs * 1e9:,.1f} ns"),
        (f"loop on {loop_n:,} samples (measured)", f"{loop_sub_s:,.2f} s"),
        (f"loop for N={args.n:,}" + (" (scaled linearly)" if scaled else ""), f"{loop_s:,.2f} s"),
        ("loop per sample-epoch", f"{loop_sub_s / (loop_n * args.epochs) * 1e6:,.2f} µs"),
        ("ratio loop / core", f"{loop_s / core_s:,.0f}x"),
        ("input logits read by the core", f"{input_bytes / 1e6:,.1f} MB"),
        ("core effective rate (input bytes / time)", f"{core_rate / 1e9:,.2f} GB/s"),
        ("memory bandwidth (512 MiB numpy copy, r+w)", f"{bandwidth / 1e9:,.2f} GB/s"),
        ("core rate / memory bandwidth", f"{core_rate / bandwidth:,.1%}"),
        (f"max |core - loop| on the {loop_n:,} samples", f"{worst:.1e}"),
    ]
    for what, value in rows_out:
        print(f"| {what:<44} | {value:>16} |")
    if scaled:
        print(f"\nThe loop ran on the first {loop_n:,} samples; its N={args.n:,} time is that "
              f"time x {args.n / loop_n:g}.")


if __name__ == "__main__":
    main()
