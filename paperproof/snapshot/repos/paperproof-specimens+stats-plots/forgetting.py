"""Forgetting events, counted the way the original data-map scripts count them."""


def compute_forgetfulness(correctness_trend) -> int:
    """Number of times one example was learned and then forgotten, from its per-epoch correctness.

    An example never predicted correctly counts as forgotten "infinitely" often (1000).
    """
    if not any(correctness_trend):
        return 1000
    learnt = False
    times_forgotten = 0
    for is_correct in correctness_trend:
        if learnt and not is_correct:
            learnt = False
            times_forgotten += 1
        elif not learnt and is_correct:
            learnt = True
    return times_forgotten
