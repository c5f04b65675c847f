"""The Data Maps four (confidence, variability, correctness, forgetfulness) in one pass over the logits.

``dynamics.training_dynamics`` is the readable reference: float64, several passes over copies
the size of the input. This computes the same from float32 logits read once: per sample and
epoch a stable softmax of the row gives the gold probability p = exp(z_y − max) / Σ exp(z − max)
and the argmax hit, and running statistics (Welford's mean and M2 in float64, correct count,
forgetting events) are updated epoch by epoch. No [E, N, C] copy is made.

Precision. The softmax runs in float32 and the statistics in float64, so confidence and
variability differ from the float64 reference by at most a few float32 ulps of p: ``ATOL`` =
1e-6, the tolerance the reference notes give for float32 implementations, and a tenth of the
fidelity checks' 1e-5, so a finding never depends on which path computed the reference.
Argmax hits are taken on the input's own float32 values with the first maximum winning, as the
reference does, so correctness and forgetfulness are exact.

On the CPU the pass is a numba kernel (compiled on first use, cached on disk), since torch's
reductions over a short trailing class dimension make several passes; elsewhere (CUDA) it is the
same arithmetic in torch ops, one epoch at a time. Logits that are not float32 go to the
reference unchanged.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import torch
from torch import Tensor

from paperproof.verify.metrics.dynamics import training_dynamics
from paperproof.verify.metrics.inputs import (
    ArrayLike,
    CorrectnessMode,
    NeverLearned,
    _check_correctness,
    _check_ddof,
    _check_never_learned,
    _dynamics,
    _setup,
)

ATOL = 1e-6
# Samples per block of the CPU kernel: its working set (the block transposed classes-first and
# the exponents 2^k, [C, B] 4-byte values each) stays in L1/L2 for C up to ~100; 128 and 512
# measured slower.
_BLOCK = 256


def training_dynamics_onepass(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    include_ci: bool = False,
    ddof: int = 0,
    correctness_mode: CorrectnessMode = "fraction",
    never_learned: NeverLearned = 1000,
    normalise: bool = False,
    device: torch.device | str | None = None,
) -> dict[str, Tensor]:
    """``training_dynamics`` with the argmax correctness rule, from one pass over the logits.

    Same keys, options and result dtypes as the reference; results come back on the CPU.

    Direction: per key, ``confidence`` low = hard, ``variability`` high = ambiguous,
    ``correctness`` low = hard, ``forgetfulness`` high = hard.
    """
    _check_correctness(correctness_mode, "argmax")
    _check_never_learned(never_learned)
    _check_ddof(ddof)
    z, y = _dynamics(logits, labels)
    dev = _setup(device)
    options: dict[str, Any] = {
        "include_ci": include_ci, "ddof": ddof, "correctness_mode": correctness_mode,
        "never_learned": never_learned, "normalise": normalise,
    }
    if z.dtype != torch.float32:
        return training_dynamics(z, y, device=dev, **options)
    if dev.type == "cpu":
        stats = _cpu_pass(z, y)
    else:
        stats = _torch_pass(z, y, dev)
    return _finish(*stats, n_epochs=z.shape[0], **options)


def _finish(
    mean: Tensor, m2: Tensor, count: Tensor, events: Tensor, learned: Tensor, *, n_epochs: int,
    include_ci: bool, ddof: int, correctness_mode: CorrectnessMode, never_learned: NeverLearned,
    normalise: bool,
) -> dict[str, Tensor]:
    """The four metrics from the per-sample running statistics, with the reference's options."""
    if n_epochs - ddof <= 0 or (include_ci and n_epochs == 1):
        variability = torch.full_like(mean, math.nan)
    else:
        var = m2 / (n_epochs - ddof)
        variability = (var + var.square() / (n_epochs - 1) if include_ci else var).sqrt()
    correct = count if correctness_mode == "count" else count.to(torch.float64) / n_epochs
    sentinel = n_epochs if never_learned == "E" else int(never_learned)
    forgotten = torch.where(learned, events, torch.full_like(events, sentinel))
    if normalise:
        forgotten = forgotten.to(torch.float64) / n_epochs
    return {
        "confidence": mean,
        "variability": variability,
        "correctness": correct,
        "forgetfulness": forgotten,
    }


def _torch_pass(z: Tensor, y: Tensor, dev: torch.device) -> tuple[Tensor, ...]:
    """The running statistics in torch ops on ``dev``, one epoch [N, C] at a time."""
    n = z.shape[1]
    gold = y.to(dev).view(-1, 1)
    mean = torch.zeros(n, dtype=torch.float64, device=dev)
    m2 = torch.zeros_like(mean)
    count = torch.zeros(n, dtype=torch.int64, device=dev)
    events = torch.zeros_like(count)
    previous = torch.zeros(n, dtype=torch.bool, device=dev)
    learned = torch.zeros_like(previous)
    for e in range(z.shape[0]):
        ze = z[e].to(dev, non_blocking=True)
        top = ze.amax(1, keepdim=True)
        total = (ze - top).exp_().sum(1)
        p = ((ze.gather(1, gold) - top).squeeze(1).exp_() / total).double()
        hit = ze.argmax(1) == gold.squeeze(1)  # first maximum on ties, as np.argmax
        delta = p - mean
        mean += delta / (e + 1)
        m2 += delta * (p - mean)
        count += hit
        events += previous & ~hit
        previous, learned = hit, learned | hit
    return tuple(t.cpu() for t in (mean, m2, count, events, learned))


def _cpu_pass(z: Tensor, y: Tensor) -> tuple[Tensor, ...]:
    """The running statistics from the numba kernel, on numba's threads (as many as torch's)."""
    import numba

    kernel = _kernel()
    numba.set_num_threads(min(torch.get_num_threads(), numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
    zn = z.cpu().contiguous().numpy()
    yn = y.cpu().contiguous().numpy()
    out = kernel(zn, yn, _BLOCK)
    return tuple(torch.from_numpy(a) for a in out)


@lru_cache(maxsize=1)
def _kernel() -> Any:
    """Compile (or load from numba's cache) the CPU kernel; numba is imported only here."""
    from paperproof.verify.metrics.onepass_kernel import running_statistics

    return running_statistics
