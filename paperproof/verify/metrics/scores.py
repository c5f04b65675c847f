"""Per-epoch and per-sample scores on a training run: threshold closeness, Data-IQ's aleatoric
uncertainty and entropy, loss, cleanlab's self-confidence, AUM and EL2N.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from torch import Tensor

from paperproof.verify.metrics.chunks import _chunked, _gold_index, _gold_metric, _load_classes_first
from paperproof.verify.metrics.inputs import ArrayLike, Inputs, _check_inputs, _dynamics, _setup

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
