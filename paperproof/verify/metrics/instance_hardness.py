"""Instance hardness measured on the data alone (Smith, Martinez, Giraud-Carrier 2014).

Smith, Martinez and Giraud-Carrier, "An instance level analysis of data complexity", Machine Learning 95
(2014), define hardness measures of one instance from the training set without a model. The one that most
tools compute is **k-Disagreeing Neighbors**:

    kDN(x) = |{y : y ∈ kNN(x) ∧ t(y) ≠ t(x)}| / k

the share of x's k nearest neighbours (Euclidean, among the *other* training instances) whose label differs
from x's. The paper's experiments use k = 5, as we read it; a caller picks its own k. Taking the k nearest of
the whole set, x itself among them at distance 0 (what a nearest-neighbour index queried with the training set
returns first), is a departure: x never disagrees with itself, so every score shrinks by up to 1/k, unevenly.
Equal distances are ordered by index (a stable sort), which the paper leaves open.

Values come back as float64 numpy arrays, one per instance, in their own order. High is hard: a mislabelled
instance sits among neighbours of another class.
"""

from __future__ import annotations

import numpy as np


def neighbours(features, k: int, include_self: bool = False) -> np.ndarray:
    """[N, k] the indices of each instance's k nearest other instances, nearest first (Euclidean; ties by index;
    `include_self`: the instance first among them, even where another point coincides)."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    x = np.asarray(features, dtype=np.float64)
    x = x.reshape(len(x), -1)
    distances = np.linalg.norm(x[:, None, :] - x[None, :, :], axis=-1)
    np.fill_diagonal(distances, -1.0 if include_self else np.inf)
    return np.argsort(distances, axis=1, kind="stable")[:, :k]


def kdn(features, labels, k: int, include_self: bool = False) -> np.ndarray:
    """kDN of every instance: the share of its k nearest other instances with another label (`include_self`:
    of the k nearest counting itself, the departure)."""
    y = np.asarray(labels).reshape(-1)
    if len(features) != len(y):
        raise ValueError(f"features and labels differ in length: {len(features)} and {len(y)}")
    return (y[neighbours(features, k, include_self)] != y[:, None]).sum(axis=1) / k
