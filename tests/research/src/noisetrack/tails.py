"""How much of a score distribution sits above a cut (written against NumPy 1.x, whose aliases it uses)."""

import numpy as np

CEILING = np.Inf


def tail_share(scores, threshold=0.5):
    """Share of finite scores above `threshold`."""
    vals = np.asarray(scores, dtype=np.float)
    kept = vals[(vals > threshold) & (vals < CEILING)]
    return np.product([kept.size / max(vals.size, 1), 1.0])
