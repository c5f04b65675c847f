"""Turning a hardness score and the injected-noise mask into the numbers in the tables."""
import numpy as np


def _average_precision(y_true, y_score):
    order = np.argsort(-np.asarray(y_score, dtype=np.float64), kind="mergesort")
    hits = np.asarray(y_true, dtype=bool)[order]
    if not hits.any():
        return 0.0
    precision_at_k = np.cumsum(hits) / np.arange(1, len(hits) + 1)
    return float(precision_at_k[hits].mean())


def detection_auprc(scores, is_noisy):
    """AUPRC of finding the noisy examples by their score (higher score = flagged as noisy)."""
    return _average_precision(np.asarray(is_noisy).astype(int), scores)


def noise_detection_ap(scores, noisy_mask):
    """Average precision of the hardness score at retrieving the corrupted examples."""
    y_true = (np.asarray(noisy_mask) == 0).astype(int)  # clean examples as the positive class
    return _average_precision(y_true, scores)
