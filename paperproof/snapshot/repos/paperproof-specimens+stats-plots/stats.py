import numpy as np
from typing import Tuple


def bootstrap_ci(values: np.ndarray, n_boot: int = 1000, alpha: float = 0.05, seed: int = 0) -> Tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean."""
    rng = np.random.default_rng(seed)
    values = np.asarray(values, dtype=float)
    means = np.array([rng.choice(values, size=len(values)).mean() for _ in range(n_boot)])
    return float(np.quantile(means, alpha / 2)), float(np.quantile(means, 1 - alpha / 2))


def benjamini_hochberg(p_values: np.ndarray, alpha: float = 0.05) -> np.ndarray:
    """Which hypotheses are rejected at false discovery rate alpha."""
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p)
    ranked = p[order] * len(p) / (np.arange(len(p)) + 1)
    passed = ranked <= alpha
    keep = np.zeros(len(p), dtype=bool)
    if passed.any():
        keep[order[: np.max(np.nonzero(passed)) + 1]] = True
    return keep


def rank_hardest(scores, k=10):
    """The k examples with the lowest confidence.

    Returns:
        list of the indices of the k hardest examples, hardest first
    """
    return np.argsort(scores)[:k]
