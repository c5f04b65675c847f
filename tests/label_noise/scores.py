"""Instance-level label-noise scores: neighbourhood disagreement and prediction uncertainty."""
import numpy as np


def kdn(X, y, k=5):
    """k-Disagreeing Neighbors: fraction of the k nearest other points with a different label."""
    X = np.asarray(X, dtype=float)
    d = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    nn = np.argsort(d, axis=1, kind="stable")[:, :k]
    return (y[nn] != y[:, None]).mean(axis=1)


def kdn_index(X, y, k=5):
    """kDN from a nearest-neighbour query of the training set on itself."""
    X = np.asarray(X, dtype=float)
    d = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    nn = np.argsort(d, axis=1, kind="stable")[:, :k]
    return (y[nn] != y[:, None]).mean(axis=1)


def cw_entropy(labels, pred_probs):
    """Confidence-weighted entropy: normalised entropy over the probability of the given label."""
    p = np.asarray(pred_probs, dtype=float)
    ent = -(p * np.log(np.clip(p, 1e-300, None))).sum(1) / np.log(p.shape[1])
    return ent / np.clip(p[np.arange(len(labels)), labels], 1e-6, None)


def label_quality(labels, pred_probs):
    """Label quality in (0, 1]: lower means more likely mislabelled."""
    r = cw_entropy(labels, pred_probs)
    return np.log(r + 1) / np.clip(r, 1e-6, None)


def entropy_ratio(labels, pred_probs):
    """Prediction entropy per unit of confidence in the given label."""
    p = np.asarray(pred_probs, dtype=float)
    ent = -(p * np.log(np.clip(p, 1e-300, None))).sum(1)
    return ent / np.clip(p[np.arange(len(labels)), labels], 1e-6, None)
