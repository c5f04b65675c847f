"""Planted hardness: how well a per-sample score finds the samples we made hard, as H-CAT scores its HCMs.

A score is judged by AUROC and AUPRC against the planted indices of one kind of hardness. Its orientation
(does a high score mean hard?) is fixed beforehand, from the recognised metric or the entry's declaration,
never picked afterwards as whichever direction scores better: a score used backwards shows as an AUROC
below one half, which is a finding, not something to hide. The random floor is what seeded random scores
reach on the same planted set, so a page can say how far above chance an implementation is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

Orientation = Literal["high_is_hard", "low_is_hard"]
FLOOR_SEED = 20240521  # random scores for the floor: fixed, so every build prints the same floor


@dataclass(frozen=True)
class Detection:
    """How well one score finds one planted kind: AUROC and AUPRC, with the orientation used."""

    auroc: float
    auprc: float
    orientation: Orientation
    positives: int
    samples: int


def _oriented(scores: np.ndarray, orientation: Orientation) -> np.ndarray:
    values = np.asarray(scores, dtype=np.float64).reshape(-1)
    return values if orientation == "high_is_hard" else -values


def auroc(scores: np.ndarray, planted: np.ndarray) -> float:
    """The chance that a planted sample outscores an unplanted one (ties count one half): Mann–Whitney U,
    from average ranks, so it is exact with ties and O(n log n)."""
    positive = np.asarray(planted, dtype=bool).reshape(-1)
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    if n_pos == 0 or n_neg == 0:
        raise ValueError(f"AUROC needs planted and unplanted samples; got {n_pos} planted of {positive.size}")
    order = np.argsort(scores, kind="stable")
    ranked = scores[order]
    ranks = np.empty(scores.size, dtype=np.float64)
    # Average rank within each run of equal scores.
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])
    ends = np.r_[starts[1:], scores.size]
    average = (starts + ends + 1) / 2.0  # ranks are 1-based: a run [s, e) holds ranks s+1 … e
    ranks[order] = np.repeat(average, ends - starts)
    u = ranks[positive].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


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


def detect(scores: np.ndarray, planted: np.ndarray, orientation: Orientation) -> Detection:
    """AUROC and AUPRC of `scores` (one per sample) for the samples marked in `planted`."""
    values = _oriented(scores, orientation)
    positive = np.asarray(planted, dtype=bool).reshape(-1)
    if values.size != positive.size:
        raise ValueError(f"{values.size} scores for {positive.size} samples: a planted-hardness score needs one "
                         "value per training sample")
    if not np.isfinite(values).all():
        raise ValueError(f"{int((~np.isfinite(values)).sum())} of {values.size} scores are not finite")
    return Detection(round(auroc(values, positive), 4), round(auprc(values, positive), 4), orientation,
                     int(positive.sum()), int(positive.size))


def floor(planted: np.ndarray, draws: int = 16) -> Detection:
    """What random scores reach on this planted set: the mean over seeded draws (AUROC near 0.5, AUPRC near
    the planted fraction)."""
    positive = np.asarray(planted, dtype=bool).reshape(-1)
    rng = np.random.default_rng(FLOOR_SEED)
    found = [detect(rng.random(positive.size), positive, "high_is_hard") for _ in range(draws)]
    return Detection(round(float(np.mean([d.auroc for d in found])), 4),
                     round(float(np.mean([d.auprc for d in found])), 4), "high_is_hard",
                     int(positive.sum()), int(positive.size))
