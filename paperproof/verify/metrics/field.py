"""Metrics of the wider field on a training run, and the label-noise rules that go with them:
learning time and second-split forgetting (Maini et al.), TDDS (Zhang et al.), Confident
Learning's thresholds and confident-joint issues (Northcutt et al.), and AUM's threshold samples
(Pleiss et al.).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

import torch
from torch import Tensor

from paperproof.verify.metrics.chunks import _chunked, _gold, _load_classes_first
from paperproof.verify.metrics.inputs import (
    ArrayLike,
    Inputs,
    _as_tensor,
    _check_inputs,
    _dynamics,
    _labels,
    _real_tensor,
    _setup,
)

LearningRule = Literal["stays_correct", "first_correct"]


def _epoch_index(mask: Tensor) -> Tensor:
    """[E, n] int64 epoch indices 0..E−1 on the device of ``mask``."""
    return torch.arange(mask.shape[0], device=mask.device).unsqueeze(1).expand_as(mask)


def _last_true(mask: Tensor) -> Tensor:
    """Index of the last True along epochs of a [E, n] mask, −1 where there is none."""
    return torch.where(mask, _epoch_index(mask), -1).amax(0)


def _first_true(mask: Tensor) -> Tensor:
    """Index of the first True along epochs of a [E, n] mask, E where there is none."""
    return torch.where(mask, _epoch_index(mask), mask.shape[0]).amin(0)


def _hits_metric(
    logits: ArrayLike,
    labels: ArrayLike,
    reduce: Callable[[Tensor], Tensor],
    *,
    inputs: Inputs,
    dtype: torch.dtype,
    device: torch.device | str | None,
    batch_size: int | None,
) -> Tensor:
    """Shared driver for int64 metrics of the argmax hits c_e = [argmax Z_e = y], [E, n]."""
    _check_inputs(inputs)
    z, y = _dynamics(logits, labels)
    dev = _setup(device)

    def compute(sl: slice) -> dict[str, Tensor]:
        _, hit = _gold(_load_classes_first(z, sl, dtype, dev), y[sl].to(dev), inputs, log=False, hits=True)
        assert hit is not None
        return {"v": reduce(hit)}

    per_sample = z.shape[0] * z.shape[2]
    return _chunked(z.shape[1], batch_size, per_sample, dev, compute, {"v": torch.int64})["v"]


def learning_time(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    rule: LearningRule = "stays_correct",
    one_based: bool = True,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """First-split learning time (Maini, Garg, Lipton, Kolter, NeurIPS 2022): the first epoch
    (1-based, the number of epochs trained) after which the sample is classified correctly
    (argmax, first maximum on ties) at every remaining recorded epoch; a sample wrong at the
    last epoch was never learned and scores E + 1.

    Options for the variants: ``one_based=False`` counts from 0 (never learned scores E);
    ``rule="first_correct"`` takes the first epoch the sample is ever correct instead (never
    correct scores E + 1, or E when 0-based). int64.

    Direction: high = hard (learned late or never).
    """
    if rule not in ("stays_correct", "first_correct"):
        raise ValueError(f'rule must be "stays_correct" or "first_correct", got {rule!r}')
    shift = 1 if one_based else 0

    def reduce(hit: Tensor) -> Tensor:
        if rule == "stays_correct":
            return _last_true(~hit) + 1 + shift
        return _first_true(hit) + shift

    return _hits_metric(logits, labels, reduce, inputs=inputs, dtype=dtype, device=device, batch_size=batch_size)


def second_split_forgetting(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Second-split forgetting time (SSFT, Maini et al., NeurIPS 2022). ``logits`` [E2, N, C] are
    the predictions on split A's samples during the second-split training (the model trained on
    A, then trained on B only), ``labels`` A's labels: the first epoch (1-based) after which the
    sample is misclassified at every remaining epoch; a sample still correct at the last epoch
    was never forgotten and scores E2 + 1. int64.

    Direction: low = hard (the paper reads fast-forgotten samples as mislabelled or rare).
    """

    def reduce(hit: Tensor) -> Tensor:
        return _last_true(hit) + 2

    return _hits_metric(logits, labels, reduce, inputs=inputs, dtype=dtype, device=device, batch_size=batch_size)


def tdds(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    window: int = 10,
    decay: float = 0.9,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Temporal Dual-Depth Scoring (Zhang, Du, Li, Xie, Zhou, CVPR 2024, "Spanning Training
    Progress"), the plainest reading of its two depths:

    1. first depth, the sample's contribution to the loss change between epochs t and t+1:
       the paper projects its gradient on the accumulated gradient and approximates that by
       the KL divergence between its predictions at consecutive epochs,
       d_t = KL(P_{t+1} ‖ P_t) = Σ_c P_{t+1,c} log(P_{t+1,c} / P_{t,c}), t = 0..E−2;
    2. second depth, the variability of d_t over a sliding window of J = ``window`` recorded
       epochs (J − 1 consecutive contributions), v_k = mean_t (d_t − d̄_k)² for windows
       k = 0..K−1, K = E − J + 1, combined with the exponential-moving-average weights
       β(1 − β)^(K−1−k) (β = ``decay``), R = Σ_k β(1 − β)^(K−1−k) v_k (the latest window
       weighs most; weights are not renormalised).

    Not confirmed against the paper's text here (only its abstract and summaries could be
    read): the direction of the KL (later epoch first is taken), that the window statistic is
    the population variance (rather than, say, the root of the summed squared deviations) and
    the exact EMA indexing. Defaults J = 10, β = 0.9 follow the authors' released defaults; J is
    capped at E. The labels are validated but not used: the score needs none. NaN for E = 1.

    Direction: high = hard (informative: the paper keeps the highest-scoring samples).
    """
    _check_inputs(inputs)
    if isinstance(window, bool) or not isinstance(window, int) or window < 2:
        raise ValueError(f"window must be an int ≥ 2, got {window!r}")
    if not 0 < decay <= 1:
        raise ValueError(f"decay must lie in (0, 1], got {decay!r}")
    z, _ = _dynamics(logits, labels)
    dev = _setup(device)
    n_epochs, n = z.shape[0], z.shape[1]
    if n_epochs < 2:
        return torch.full((n,), math.nan, dtype=torch.float64)
    span = min(window, n_epochs)
    n_windows = n_epochs - span + 1
    weights = torch.tensor(
        [decay * (1 - decay) ** (n_windows - 1 - k) for k in range(n_windows)], dtype=dtype, device=dev
    )

    def compute(sl: slice) -> dict[str, Tensor]:
        zt = _load_classes_first(z, sl, dtype, dev)
        logp = zt.log_softmax(0) if inputs == "logits" else zt.log()
        later = logp[:, 1:].exp()
        terms = later * (logp[:, 1:] - logp[:, :-1])
        contrib = torch.where(later > 0, terms, torch.zeros_like(terms)).sum(0)  # [E−1, n]
        win = contrib.unfold(0, span - 1, 1)  # [K, n, J−1]
        var = (win - win.mean(-1, keepdim=True)).square().mean(-1)  # [K, n]
        return {"v": (weights.unsqueeze(1) * var).sum(0)}

    per_sample = n_epochs * z.shape[2]
    return _chunked(n, batch_size, per_sample, dev, compute, {"v": torch.float64})["v"]


def per_class_thresholds(probs: ArrayLike, labels: ArrayLike) -> Tensor:
    """Confident Learning's per-class thresholds (Northcutt, Jiang, Chuang, JAIR 2021):
    t_j = mean of p̂_j over the samples labelled j, i.e. their mean self-confidence. ``probs``
    [N, C] should be out-of-sample (cross-validated) probabilities, as the paper requires. A
    class no sample carries gets NaN (it is never above threshold). [C] float64.

    Direction: not a score; one threshold per class.
    """
    p = _real_tensor(probs, 2, "probs [N, C]").to(torch.float64)
    n, n_classes = p.shape
    y = _labels(labels, n, n_classes)
    sums = torch.zeros(n_classes, dtype=torch.float64).index_add_(0, y, p[torch.arange(n), y])
    counts = torch.bincount(y, minlength=n_classes).to(torch.float64)
    return sums / counts


def confident_learning_issues(probs: ArrayLike, labels: ArrayLike) -> Tensor:
    """Samples in the off-diagonal of Confident Learning's confident joint C_{ỹ,y*} (Northcutt
    et al., JAIR 2021): among the classes j with p̂_j ≥ t_j (``per_class_thresholds``), the
    sample counts towards the class of largest p̂_j (first on ties), and is an issue when that
    class is not its given label; a sample above no threshold is not counted. A bool mask [N].
    The paper's per-sample label-quality score is ``self_confidence`` p̂_ỹ on out-of-sample
    probabilities; in-sample probabilities are a departure.

    Direction: True = likely mislabelled (hard).
    """
    p = _real_tensor(probs, 2, "probs [N, C]").to(torch.float64)
    y = _labels(labels, p.shape[0], p.shape[1])
    above = p >= per_class_thresholds(p, y)
    best = torch.where(above, p, torch.full_like(p, -math.inf)).argmax(1)
    return above.any(1) & (best != y)


def aum_threshold(aum_of_threshold_samples: ArrayLike, percentile: float = 99.0) -> float:
    """The AUM threshold α of Pleiss et al. (NeurIPS 2020): the ``percentile``-th percentile
    (linear interpolation, as ``numpy.percentile``) of the AUM of the threshold samples. The
    threshold samples are N/(C + 1) training samples relabelled to a fake extra class C + 1, so
    their margins show how a surely mislabelled sample behaves; the paper takes the 99th.

    Direction: not a score; samples with AUM below it are flagged (low = hard).
    """
    a = _as_tensor(aum_of_threshold_samples).to(torch.float64).reshape(-1)
    if a.numel() == 0:
        raise ValueError("need the AUM of at least one threshold sample")
    if not 0 <= percentile <= 100:
        raise ValueError(f"percentile must lie in [0, 100], got {percentile!r}")
    return float(torch.quantile(a, percentile / 100.0))


def aum_mislabelled(aum_values: ArrayLike, threshold: float) -> Tensor:
    """Pleiss et al.'s mislabelled set: the samples whose AUM is strictly below the threshold
    from ``aum_threshold``. A bool mask [N].

    Direction: True = likely mislabelled (low AUM = hard).
    """
    return _as_tensor(aum_values).to(torch.float64).reshape(-1) < threshold
