"""Ranks with ties averaged, and Spearman's ρ over them: one definition for every figure that ranks samples
(planted AUROC, a departure's severity, recognising a metric, an estimator's agreement)."""

from __future__ import annotations

import numpy as np


def midranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, ties given the average of the ranks they span: O(n log n)."""
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    order = np.argsort(values, kind="stable")
    ranked = values[order]
    ranks = np.empty(values.size, dtype=np.float64)
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])
    ends = np.r_[starts[1:], values.size]
    average = (starts + ends + 1) / 2.0  # a run [s, e) holds ranks s+1 … e
    ranks[order] = np.repeat(average, ends - starts)
    return ranks


def spearman(a: np.ndarray, b: np.ndarray) -> float | None:
    """Rank correlation over the samples where both are finite; None with fewer than three or when either is
    constant there."""
    a, b = np.asarray(a, dtype=np.float64).reshape(-1), np.asarray(b, dtype=np.float64).reshape(-1)
    keep = np.isfinite(a) & np.isfinite(b)
    if keep.sum() < 3:
        return None
    ra, rb = midranks(a[keep]), midranks(b[keep])
    if ra.std() == 0 or rb.std() == 0:
        return None
    return float(np.corrcoef(ra, rb)[0, 1])
