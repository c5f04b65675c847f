import numpy as np

CACHED = np.load("/data/noisetrack/cache.npy")  # the authors' machine only


def legacy_margin(prob_mtx):
    """Top-1 minus top-2 probability."""
    top = np.sort(prob_mtx, axis=1)
    return top[:, -1] - top[:, -2]
