"""Forgetting events per example, for the data-map plots."""


def compute_forgetfulness(correctness_trend) -> int:
    """How often one example slipped from right to wrong between consecutive epochs.

    `correctness_trend` holds its per-epoch correctness. An example the model never got right
    scores 1000, as if it were forgotten without end.
    """
    flags = [bool(c) for c in correctness_trend]
    if True not in flags:
        return 1000
    return sum(1 for before, after in zip(flags, flags[1:]) if before and not after)
