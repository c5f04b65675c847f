"""Odds and ends used by the notebooks."""
import numpy as np


def _times_right(hits):
    return hits.sum(0)


def stat_a(logits, targets):
    # TODO: give this a proper name before the camera-ready
    hits = np.asarray(logits).argmax(-1) == np.asarray(targets)
    return _times_right(hits)


def compute_forgetfulness(correctness_trend):
    """Forgetting events of one example from its per-epoch correctness (True/False per epoch)."""
    ever_right, slips, before = False, 0, False
    for now in map(bool, correctness_trend):
        ever_right = ever_right or now
        slips += int(before and not now)
        before = now
    return slips if ever_right else 1000  # never learned: forgotten "infinitely" often
