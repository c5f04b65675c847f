"""Benchmark: the one-pass metric core against the reference core and a per-sample loop.

All compute confidence, variability, correctness and forgetfulness from the same random training
dynamics (logits [E, N, C], float32 as models emit them), side by side in one run:

* **loop**: the public cartography implementations' shape; per sample and epoch a float32 torch
  tensor from a Python list, softmax, gather of the gold probability, np.argmax and the
  forgetting state machine, then the statistics from Python lists (run on ``--loop-n`` samples
  and scaled linearly to N);
* **reference**: ``training_dynamics``, the readable float64 core that the tests use as oracle;
* **one-pass (numba)**: ``training_dynamics_onepass`` on the CPU;
* **one-pass (torch ops)**: the same arithmetic in torch ops, as ``training_dynamics_onepass``
  runs it on a GPU; on the CPU it shows why the CPU path is a numba kernel.

Each core's rate is the input's bytes over its time, set beside the memory bandwidth measured
in the same run: a 512 MiB torch copy on the same device, bytes read plus written per second.
With ``--device cuda`` the device rows run on the GPU with the logits already there (the
bandwidth row is then HBM's), and their results are compared with the CPU reference.

Output: two header lines (sizes; machine, torch, threads, device), then a Markdown table of
``| what | value |`` rows: times (best of ``--repeats``, ms), per-sample-epoch costs, the CPU
cores' process CPU time over all threads (best; on a shared machine steadier than wall time), the loop's
measured and scaled times, ratios loop / core and reference / one-pass, the input size, each
core's effective rate (GB/s), the bandwidth, each core's share of it (%), and the largest
differences from the reference (``max |x - reference|``, against ``ATOL`` = 1e-6 for the
float32 paths). The run fails (exit 1) if a result differs from the reference by more than that.

    .venv/bin/python bench/bench_metrics.py [--device cpu|cuda] [--n 100000 --epochs 10 --classes 10]
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
from paperproof.verify.metrics.onepass import (  # noqa: E402
    ATOL,
    _finish,
    _torch_pass,
    training_dynamics_onepass,
)

NEVER_LEARNED = 1000
KEYS = ("confidence", "variability", "correctness", "forgetfulness")


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


CPU_TIMES: dict[str, float] = {}  # best process CPU time (all threads) of each timed core


def best_of(fn: Callable[[], object], repeats: int, device: torch.device, name: str = "") -> float:
    """Best wall time; the best CPU time goes to ``CPU_TIMES[name]`` (steadier on a shared machine)."""
    times, cpu_times = [], []
    for _ in range(repeats):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start, cpu_start = time.perf_counter(), time.process_time()
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        times.append(time.perf_counter() - start)
        cpu_times.append(time.process_time() - cpu_start)
    if name:
        CPU_TIMES[name] = min(cpu_times)
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


def memory_bandwidth(device: torch.device, repeats: int) -> float:
    """Bytes read plus written per second for a 512 MiB torch copy on ``device``."""
    src = torch.ones(2**27, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    seconds = best_of(lambda: dst.copy_(src), repeats, device)
    return 2 * src.numel() * src.element_size() / seconds


def torch_ops(z: torch.Tensor, y: torch.Tensor, device: torch.device) -> dict[str, torch.Tensor]:
    """The one-pass arithmetic in torch ops on ``device``, whatever the device."""
    stats = _torch_pass(z, y, device)
    return _finish(*stats, n_epochs=z.shape[0], include_ci=False, ddof=0,
                   correctness_mode="fraction", never_learned=NEVER_LEARNED, normalise=False)


def worst(result: dict[str, torch.Tensor], reference: dict[str, torch.Tensor]) -> float:
    return max(float((result[k].double() - reference[k].double()).abs().max()) for k in KEYS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="where the one-pass rows run (the loop and reference stay on the CPU)")
    parser.add_argument("--n", type=int, default=100_000, help="samples")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--loop-n", type=int, default=10_000,
                        help="samples the loop runs on; its time is scaled linearly to --n")
    parser.add_argument("--repeats", type=int, default=15, help="best-of repeats for the cores")
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: torch's default)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    threads = args.threads or torch.get_num_threads()
    torch.set_num_threads(threads)
    cpu = torch.device("cpu")
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no CUDA device here")
    z_np, y_np = random_dynamics(args.seed, args.epochs, args.n, args.classes)
    z, y = torch.from_numpy(z_np), torch.from_numpy(y_np)
    input_bytes = z.nbytes
    sample_epochs = args.n * args.epochs

    # The reference first: numba's threads then have not yet run beside torch's.
    training_dynamics(z, y, device=cpu)  # warm-up: allocator, thread pool
    reference_s = best_of(lambda: training_dynamics(z, y, device=cpu), max(3, args.repeats // 5), cpu,
                          "reference")
    reference = training_dynamics(z, y, device=cpu)

    start = time.perf_counter()
    training_dynamics_onepass(z[:, :1], y[:1], device=cpu)  # compiles, or loads numba's cache
    first_call_s = time.perf_counter() - start
    numba_s = best_of(lambda: training_dynamics_onepass(z, y, device=cpu), args.repeats, cpu, "numba")
    numba_out = training_dynamics_onepass(z, y, device=cpu)

    z_dev, y_dev = z.to(device), y.to(device)
    torch_ops(z_dev, y_dev, device)  # warm-up (CUDA context, kernels)
    torch_s = best_of(lambda: torch_ops(z_dev, y_dev, device), args.repeats, device)
    torch_out = torch_ops(z_dev, y_dev, device)
    if device.type == "cuda":
        device_s = best_of(lambda: training_dynamics_onepass(z_dev, y_dev, device=device),
                           args.repeats, device)
        device_out = training_dynamics_onepass(z_dev, y_dev, device=device)
    bandwidth_cpu = memory_bandwidth(cpu, 5)
    bandwidth_dev = memory_bandwidth(device, 5) if device.type == "cuda" else bandwidth_cpu

    loop_n = min(args.loop_n, args.n)
    rows = z_np[:, :loop_n].transpose(1, 0, 2).tolist()  # per-sample Python lists, as from JSONL
    labels = [int(v) for v in y_np[:loop_n]]
    start = time.perf_counter()
    loop = per_sample_loop(rows, labels)
    loop_sub_s = time.perf_counter() - start
    loop_s = loop_sub_s * args.n / loop_n
    loop_worst = max(
        float(np.max(np.abs(np.asarray(ref, dtype=np.float64) - reference[key][:loop_n].numpy())))
        for key, ref in zip(KEYS, loop)
    )
    numba_worst, torch_worst = worst(numba_out, reference), worst(torch_out, reference)

    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(f"hardness-metric cores vs per-sample loop  (N={args.n:,}, E={args.epochs}, "
          f"C={args.classes}, logits float32; reference float64, one-pass float32 softmax "
          f"with float64 statistics)")
    print(f"machine: {platform.processor() or platform.machine()}, torch {torch.__version__}, "
          f"{threads} CPU threads, device {args.device} ({name})")
    print()
    ms, share = (lambda s: f"{s * 1e3:,.2f} ms"), (lambda s: f"{input_bytes / s / bandwidth_cpu:.1%}")
    on = f"torch ops on {args.device}"
    out = [
        (f"reference core (best of {max(3, args.repeats // 5)})", ms(reference_s)),
        (f"one-pass, numba (best of {args.repeats})", ms(numba_s)),
        (f"one-pass, {on} (best of {args.repeats})", ms(torch_s)),
        ("one-pass numba, first call (compile or cache)", f"{first_call_s:,.2f} s"),
        ("reference per sample-epoch", f"{reference_s / sample_epochs * 1e9:,.1f} ns"),
        ("one-pass numba per sample-epoch", f"{numba_s / sample_epochs * 1e9:,.1f} ns"),
        ("reference CPU time, all threads (best)", ms(CPU_TIMES["reference"])),
        ("one-pass numba CPU time, all threads (best)", ms(CPU_TIMES["numba"])),
        (f"loop on {loop_n:,} samples (measured)", f"{loop_sub_s:,.2f} s"),
        (f"loop for N={args.n:,}" + (" (scaled)" if loop_n < args.n else ""), f"{loop_s:,.2f} s"),
        ("loop per sample-epoch", f"{loop_sub_s / (loop_n * args.epochs) * 1e6:,.2f} µs"),
        ("ratio loop / reference", f"{loop_s / reference_s:,.0f}x"),
        ("ratio loop / one-pass numba", f"{loop_s / numba_s:,.0f}x"),
        ("ratio reference / one-pass numba", f"{reference_s / numba_s:,.1f}x"),
        ("input logits", f"{input_bytes / 1e6:,.1f} MB"),
        ("reference rate (input bytes / time)", f"{input_bytes / reference_s / 1e9:,.2f} GB/s"),
        ("one-pass numba rate", f"{input_bytes / numba_s / 1e9:,.2f} GB/s"),
        (f"one-pass {on} rate", f"{input_bytes / torch_s / 1e9:,.2f} GB/s"),
        ("CPU memory bandwidth (512 MiB torch copy, r+w)", f"{bandwidth_cpu / 1e9:,.2f} GB/s"),
        ("reference / CPU bandwidth", share(reference_s)),
        ("one-pass numba / CPU bandwidth", share(numba_s)),
    ]
    if device.type == "cuda":
        out += [
            (f"one-pass on cuda, onepass API (best of {args.repeats})", ms(device_s)),
            ("HBM bandwidth (512 MiB torch copy, r+w)", f"{bandwidth_dev / 1e9:,.2f} GB/s"),
            ("one-pass cuda / HBM bandwidth", f"{input_bytes / device_s / bandwidth_dev:.1%}"),
            ("max |one-pass cuda - reference|", f"{worst(device_out, reference):.1e}"),
        ]
    else:
        out.append((f"one-pass {on} / CPU bandwidth", share(torch_s)))
    out += [
        ("max |one-pass numba - reference|", f"{numba_worst:.1e}"),
        (f"max |one-pass {on} - reference|", f"{torch_worst:.1e}"),
        (f"max |loop - reference| on {loop_n:,} samples", f"{loop_worst:.1e}"),
        ("tolerance (ATOL) for the float32 paths", f"{ATOL:.0e}"),
    ]
    print(f"| {'what':<50} | {'value':>14} |")
    print(f"|{'-' * 52}|{'-' * 16}|")
    for what, value in out:
        print(f"| {what:<50} | {value:>14} |")
    agreed = [numba_worst, torch_worst, loop_worst] + (
        [worst(device_out, reference)] if device.type == "cuda" else [])
    if max(agreed) > ATOL:
        print(f"\nFAIL: a result differs from the reference by more than {ATOL:.0e}")
        sys.exit(1)


if __name__ == "__main__":
    main()
