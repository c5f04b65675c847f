"""Planted hardness: how well a per-sample score finds the samples we made hard, as H-CAT scores its HCMs.

A score is judged by AUROC and AUPRC against the planted indices of one kind of hardness, with a 95%
interval on the AUROC (DeLong's standard error: no resampling, so the same inputs give the same interval
in every build). The negatives are the clean samples only: when one kind is scored, the samples made hard
in another way are left out (`negatives`), so a score that finds every kind is not charged for ranking
another kind's samples high. Its orientation (does a high score mean hard?) is fixed beforehand, from the
recognised metric or the entry's declaration, never picked afterwards as whichever direction scores
better: a score used backwards shows as an AUROC below one half, which is a finding, not something to
hide. The random floor is what seeded random scores reach on the same planted set, so a page can say how
far above chance an implementation is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np

from paperproof.verify.rank_correlation import midranks

Orientation = Literal["high_is_hard", "low_is_hard"]
FLOOR_SEED = 20240521  # random scores for the floor: fixed, so every build prints the same floor
Z95 = 1.959963984540054  # the standard normal's 97.5% quantile: a two-sided 95% interval


@dataclass(frozen=True)
class Detection:
    """How well one score finds one planted kind: AUROC with its 95% interval, AUPRC, the orientation used."""

    auroc: float
    auprc: float
    orientation: Orientation
    positives: int
    samples: int
    auroc_low: float = 0.0
    auroc_high: float = 1.0

    @property
    def beats_random(self) -> bool:
        """The whole 95% interval of the AUROC lies above one half."""
        return self.auroc_low > 0.5


def _oriented(scores: np.ndarray, orientation: Orientation) -> np.ndarray:
    values = np.asarray(scores, dtype=np.float64).reshape(-1)
    return values if orientation == "high_is_hard" else -values


def _counts(positive: np.ndarray) -> tuple[int, int]:
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    if n_pos == 0 or n_neg == 0:
        raise ValueError(f"AUROC needs planted and unplanted samples; got {n_pos} planted of {positive.size}")
    return n_pos, n_neg


def auroc(scores: np.ndarray, planted: np.ndarray) -> float:
    """The chance that a planted sample outscores an unplanted one (ties count one half): Mann–Whitney U,
    from average ranks, so it is exact with ties and O(n log n)."""
    positive = np.asarray(planted, dtype=bool).reshape(-1)
    n_pos, n_neg = _counts(positive)
    u = midranks(np.asarray(scores, dtype=np.float64).reshape(-1))[positive].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


def auroc_interval(scores: np.ndarray, planted: np.ndarray, z: float = Z95) -> tuple[float, float, float]:
    """AUROC and its interval, AUROC ± z·SE clipped to [0, 1], with DeLong's standard error.

    DeLong's structural components: for each planted sample, the share of unplanted ones it outscores
    (V10); for each unplanted sample, the share of planted ones that outscore it (V01), ties counting one
    half; their means are the AUROC and Var = s²(V10)/m + s²(V01)/n (sample variances). Computed from
    midranks (Sun and Xu's fast form), O(n log n). A score that separates perfectly has SE 0: [1, 1].
    """
    values = np.asarray(scores, dtype=np.float64).reshape(-1)
    positive = np.asarray(planted, dtype=bool).reshape(-1)
    m, n = _counts(positive)
    overall = midranks(values)
    pos_ranks, neg_ranks = overall[positive], overall[~positive]
    v10 = (pos_ranks - midranks(values[positive])) / n  # unplanted samples each planted one outscores
    v01 = 1.0 - (neg_ranks - midranks(values[~positive])) / m  # planted samples outscoring each unplanted one
    area = float(v10.mean())
    variance = (v10.var(ddof=1) / m if m > 1 else 0.0) + (v01.var(ddof=1) / n if n > 1 else 0.0)
    half = z * float(np.sqrt(max(variance, 0.0)))
    return area, max(0.0, area - half), min(1.0, area + half)


def auprc(scores: np.ndarray, planted: np.ndarray) -> float:
    """Average precision: precision at each distinct threshold, weighted by the recall it adds (ties form one
    threshold, as scikit-learn's `average_precision_score` does)."""
    positive = np.asarray(planted, dtype=bool).reshape(-1)
    n_pos = int(positive.sum())
    if n_pos == 0:
        raise ValueError(f"AUPRC needs planted samples; got none of {positive.size}")
    order = np.argsort(-scores, kind="stable")
    ranked, hits = scores[order], positive[order]
    last_of_run = np.r_[ranked[1:] != ranked[:-1], True]
    tp = np.cumsum(hits)[last_of_run].astype(np.float64)
    seen = (np.flatnonzero(last_of_run) + 1).astype(np.float64)
    precision = tp / seen
    recall_step = np.diff(np.r_[0.0, tp]) / n_pos
    return float((precision * recall_step).sum())


def negatives(kind: str, masks: Mapping[str, np.ndarray]) -> np.ndarray:
    """The samples kind `kind` is scored on: its own planted samples and the clean ones, never the samples
    made hard in another way (they are neither what is looked for nor easy)."""
    mine = np.asarray(masks[kind], dtype=bool).reshape(-1)
    other = np.zeros(mine.size, dtype=bool)
    for name, mask in masks.items():
        if name != kind:
            other |= np.asarray(mask, dtype=bool).reshape(-1)
    return mine | ~other


def detect(scores: np.ndarray, planted: np.ndarray, orientation: Orientation,
           keep: np.ndarray | None = None) -> Detection:
    """AUROC (with its 95% interval) and AUPRC of `scores` (one per sample) for the samples marked in
    `planted`, over the samples in `keep` (all when None: `negatives` says which to keep)."""
    values = _oriented(scores, orientation)
    positive = np.asarray(planted, dtype=bool).reshape(-1)
    if values.size != positive.size:
        raise ValueError(f"{values.size} scores for {positive.size} samples: a planted-hardness score needs one "
                         "value per training sample")
    if not np.isfinite(values).all():
        raise ValueError(f"{int((~np.isfinite(values)).sum())} of {values.size} scores are not finite")
    if keep is not None:
        kept = np.asarray(keep, dtype=bool).reshape(-1)
        values, positive = values[kept], positive[kept]
    area, low, high = auroc_interval(values, positive)
    return Detection(round(area, 4), round(auprc(values, positive), 4), orientation,
                     int(positive.sum()), int(positive.size), round(low, 4), round(high, 4))


def floor(planted: np.ndarray, draws: int = 16, keep: np.ndarray | None = None) -> Detection:
    """What random scores reach on this planted set: the mean over seeded draws (AUROC near 0.5, AUPRC near
    the planted fraction), over the samples in `keep` (all when None)."""
    positive = np.asarray(planted, dtype=bool).reshape(-1)
    if keep is not None:
        positive = positive[np.asarray(keep, dtype=bool).reshape(-1)]
    rng = np.random.default_rng(FLOOR_SEED)
    found = [detect(rng.random(positive.size), positive, "high_is_hard") for _ in range(draws)]
    return Detection(round(float(np.mean([d.auroc for d in found])), 4),
                     round(float(np.mean([d.auprc for d in found])), 4), "high_is_hard",
                     int(positive.sum()), int(positive.size),
                     round(float(np.mean([d.auroc_low for d in found])), 4),
                     round(float(np.mean([d.auroc_high for d in found])), 4))
