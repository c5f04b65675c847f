import numpy as np

from noisetrack.registry import NORMS


def error_norm(prob_mtx, gold_idx, norm="l2"):
    """Distance of each sample's predicted distribution from its one-hot label (EL2N-style)."""
    onehot = np.eye(prob_mtx.shape[1])[gold_idx]
    return np.linalg.norm(prob_mtx - onehot, ord=NORMS[norm], axis=1)
