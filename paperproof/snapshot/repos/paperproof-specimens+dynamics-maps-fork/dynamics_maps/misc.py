"""Odds and ends used by the notebooks."""
import numpy as np


def stat_a(logits, targets):
    # TODO: give this a proper name before the camera-ready
    hits = np.asarray(logits).argmax(-1) == np.asarray(targets)
    return hits.sum(0)


def compute_forgetfulness(correctness_trend):
    """Forgetting events of one example from its per-epoch correctness (True/False per epoch)."""
    if not any(correctness_trend):
        return 1000  # never learned: forgotten "infinitely" often
    learnt = False
    times_forgotten = 0
    for is_correct in correctness_trend:
        if (not learnt and not is_correct) or (learnt and is_correct):
            continue
        elif learnt and not is_correct:
            learnt = False
            times_forgotten += 1
        elif not learnt and is_correct:
            learnt = True
    return times_forgotten
