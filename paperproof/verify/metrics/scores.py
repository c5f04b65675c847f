"""Per-epoch and per-sample scores on a training run: threshold closeness, Data-IQ's aleatoric
and epistemic uncertainty and entropy, loss, cleanlab's self-confidence, AUM, EL2N (one run, or
averaged over runs at Paul et al.'s early epoch) and pointwise V-information.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import torch
from torch import Tensor

from paperproof.verify.metrics.chunks import _chunked, _gold_index, _gold_metric, _load_classes_first
from paperproof.verify.metrics.inputs import (
    ArrayLike,
    Inputs,
    _as_tensor,
    _check_ddof,
    _check_inputs,
    _dynamics,
    _real_tensor,
    _setup,
)

# Data-IQ's entropy adds this inside the log so that p = 0 contributes 0 rather than NaN.
ENTROPY_EPS = 1e-12


def threshold_closeness(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """μ(1 − μ) of the *mean* gold probability μ (AC's threshold closeness).

    Direction: high = ambiguous.
    """

    def reduce(p: Tensor) -> Tensor:
        mu = p.mean(0)
        return mu * (1 - mu)

    return _gold_metric(
        logits, labels, reduce,
        inputs=inputs, log=False, dtype=dtype, device=device, batch_size=batch_size,
    )


def aleatoric(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Data-IQ aleatoric uncertainty, mean_e p_e (1 − p_e) = μ(1−μ) − σ² (σ with ddof 0).

    Direction: high = ambiguous.
    """
    return _gold_metric(
        logits, labels, lambda p: (p * (1 - p)).mean(0),
        inputs=inputs, log=False, dtype=dtype, device=device, batch_size=batch_size,
    )


def entropy(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Data-IQ's entropy, Σ_e −p_e log(p_e + 1e−12), taken over epochs of the gold probability
    (not over classes).

    Direction: high = ambiguous.
    """
    return _gold_metric(
        logits, labels, lambda p: -(p * (p + ENTROPY_EPS).log()).sum(0),
        inputs=inputs, log=False, dtype=dtype, device=device, batch_size=batch_size,
    )


def loss(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Mean over epochs of the cross-entropy, −mean_e log softmax(Z_e)[y] (H-CAT's "loss").

    With ``inputs="probs"`` it is −mean_e log P_e[y], +inf where P_e[y] = 0.

    Direction: high = hard.
    """
    return _gold_metric(
        logits, labels, lambda lp: -lp.mean(0),
        inputs=inputs, log=True, dtype=dtype, device=device, batch_size=batch_size,
    )


def self_confidence(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Cleanlab's default label-quality score: the last epoch's gold probability P[E−1, i, y_i].

    Direction: low = hard.
    """
    return _gold_metric(
        logits, labels, lambda p: p[0],
        inputs=inputs, log=False, dtype=dtype, device=device, batch_size=batch_size,
        last_epoch_only=True,
    )


def aum(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Area under the margin, mean_e (Z_e[y] − max_{c≠y} Z_e[c]), on logits (Pleiss et al.).

    With a single class there is no competitor; the result is −inf, as the reference table
    specifies.

    Direction: low = hard (mislabelled).
    """
    z, y = _dynamics(logits, labels)
    dev = _setup(device)
    n_epochs, n, n_classes = z.shape
    if n_classes == 1:
        return torch.full((n,), -math.inf, dtype=torch.float64)

    def compute(sl: slice) -> dict[str, Tensor]:
        zt = _load_classes_first(z, sl, dtype, dev)
        idx = _gold_index(y[sl].to(dev), n_epochs)
        gold = zt.gather(0, idx).squeeze(0)
        other = zt.scatter_(0, idx, -math.inf).amax(0)
        return {"v": (gold - other).mean(0)}

    return _chunked(n, batch_size, n_epochs * n_classes, dev, compute, {"v": torch.float64})["v"]


def el2n(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    epoch: int | Literal["mean"] = -1,
    squared: bool = False,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Error L2 norm, ‖P_e − onehot(y)‖₂ at one epoch (``epoch`` an index, default the last)
    or averaged over epochs (``epoch="mean"``). ``squared=True`` returns ‖·‖₂² as HCAT does
    (for ``"mean"``, the mean of the squares). Paul et al. and DD take the norm.

    Direction: high = hard.
    """
    _check_inputs(inputs)
    z, y = _dynamics(logits, labels)
    dev = _setup(device)
    n_epochs = z.shape[0]
    if epoch == "mean":
        epochs = slice(0, n_epochs)
    elif isinstance(epoch, int) and not isinstance(epoch, bool) and -n_epochs <= epoch < n_epochs:
        e = epoch % n_epochs
        epochs = slice(e, e + 1)
    else:
        raise ValueError(f'epoch must be "mean" or an index into {n_epochs} epochs, got {epoch!r}')

    def compute(sl: slice) -> dict[str, Tensor]:
        zt = _load_classes_first(z, sl, dtype, dev, epochs)
        if inputs == "logits":
            zt.sub_(zt.amax(0)).exp_()
            zt.div_(zt.sum(0))
        idx = _gold_index(y[sl].to(dev), zt.shape[1])
        zt.scatter_add_(0, idx, torch.full(idx.shape, -1.0, dtype=dtype, device=dev))
        sq = zt.square_().sum(0)
        return {"v": (sq if squared else sq.sqrt()).mean(0)}

    per_sample = z.shape[2] * (epochs.stop - epochs.start)
    return _chunked(z.shape[1], batch_size, per_sample, dev, compute, {"v": torch.float64})["v"]


def epistemic(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    ddof: int = 0,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Data-IQ's epistemic uncertainty, the variance over epochs of the gold probability,
    Σ_e (p_e − μ)² / (E − ddof) (Seedat et al., NeurIPS 2022; ``ddof=0`` is the paper's, so it
    equals ``variability`` squared). NaN where E ≤ ddof.

    Direction: high = uncertain (hard).
    """
    _check_ddof(ddof)

    def reduce(p: Tensor) -> Tensor:
        n_epochs = p.shape[0]
        if n_epochs - ddof <= 0:
            return torch.full(p.shape[1:], math.nan, dtype=p.dtype, device=p.device)
        return (p - p.mean(0)).square_().sum(0) / (n_epochs - ddof)

    return _gold_metric(
        logits, labels, reduce,
        inputs=inputs, log=False, dtype=dtype, device=device, batch_size=batch_size,
    )


def early_epoch(n_epochs: int) -> int:
    """The recorded epoch index at which Paul et al. score EL2N: they score at epoch 20 of 200,
    10% of training, so this is the first recorded epoch at or after 10% of ``n_epochs``
    (1-based epoch ⌈E/10⌉, index ⌈E/10⌉ − 1; index 0 for E ≤ 10, 19 for E = 200).

    Direction: not a score; an epoch index.
    """
    if isinstance(n_epochs, bool) or not isinstance(n_epochs, int) or n_epochs < 1:
        raise ValueError(f"n_epochs must be a positive int, got {n_epochs!r}")
    return (n_epochs + 9) // 10 - 1


def el2n_runs(
    logits_runs: ArrayLike | Sequence[ArrayLike],
    labels: ArrayLike,
    *,
    epoch: int | None = None,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """EL2N as Paul et al. define it (NeurIPS 2021): E_w ‖P_e − onehot(y)‖₂ early in training,
    averaged over independent initialisations. ``logits_runs`` is [R, E, N, C] or a list of R
    runs [E, N, C]; ``epoch`` is the recorded epoch index scored in every run (default
    ``early_epoch(E)`` of each run, the paper's 10% of training).

    Direction: high = hard.
    """
    if isinstance(logits_runs, (list, tuple)):
        runs = list(logits_runs)
    else:
        t = _as_tensor(logits_runs)
        if t.ndim != 4:
            raise ValueError(f"logits_runs must be [R, E, N, C] or a list of runs, got shape {tuple(t.shape)}")
        runs = list(t.unbind(0))
    if not runs:
        raise ValueError("logits_runs holds no run")
    total: Tensor | None = None
    for run in runs:
        z = _as_tensor(run)
        at = early_epoch(z.shape[0]) if epoch is None else epoch
        v = el2n(z, labels, epoch=at, inputs=inputs, dtype=dtype, device=device, batch_size=batch_size)
        total = v if total is None else total + v
    assert total is not None
    return total / len(runs)


def pvi(
    logits: ArrayLike,
    labels: ArrayLike,
    null_logits: ArrayLike | None = None,
    *,
    base: float = 2.0,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Pointwise V-information (Ethayarajh, Choi, Swayamdipta, ICML 2022),
    PVI(x → y) = −log₂ g′[∅](y) + log₂ g[x](y), in bits (``base=math.e`` gives nats).

    ``logits`` [N, C] are the model given x ([E, N, C] is accepted and its last epoch used);
    ``null_logits`` [N, C] or [C] are the null-input model g′; without them g′ is the label
    marginal of ``labels`` (count(y) / N), which is what a model that sees no input converges
    to. ``inputs="probs"`` reads both as probabilities.

    Direction: low = hard (negative: the input makes the label less likely).
    """
    _check_inputs(inputs)
    if not (base > 0 and base != 1):
        raise ValueError(f"base must be positive and not 1, got {base!r}")
    z = _as_tensor(logits)
    if z.ndim == 2:
        z = z.unsqueeze(0)
    z, y = _dynamics(z, labels)
    n, n_classes = z.shape[1], z.shape[2]
    log_px = _gold_metric(
        z, y, lambda lp: lp[0],
        inputs=inputs, log=True, dtype=dtype, device=device, batch_size=batch_size,
        last_epoch_only=True,
    )
    if null_logits is None:
        counts = torch.bincount(y, minlength=n_classes).to(torch.float64)
        log_null = (counts / max(n, 1)).log()[y]
    else:
        g = _as_tensor(null_logits)
        if g.ndim == 1:
            g = g.unsqueeze(0).expand(n, -1)
        g = _real_tensor(g, 2, "null_logits [N, C] or [C]")
        if tuple(g.shape) != (n, n_classes):
            raise ValueError(f"null_logits {tuple(g.shape)} does not match logits [{n}, {n_classes}]")
        log_null = _gold_metric(
            g.unsqueeze(0), y, lambda lp: lp[0],
            inputs=inputs, log=True, dtype=dtype, device=device, batch_size=batch_size,
        )
    return (log_px - log_null) / math.log(base)
