"""Nearest-neighbour data valuation: how much each training point helps a KNN classifier."""
import numpy as np


def _accumulate(x_train, y_train, x_test, y_test, K):
    n = x_train.shape[0]
    total = np.zeros(n)
    for x, y in zip(x_test, y_test):
        dist = np.sqrt(((x_train - x) ** 2).sum(axis=1))
        order = np.argsort(dist, kind="stable")
        hit = (y_train[order] == y).astype(float)
        phi = np.zeros(n)
        phi[n - 1] = hit[n - 1] / n
        for j in range(n - 2, -1, -1):
            phi[j] = phi[j + 1] + (hit[j] - hit[j + 1]) / K * min(K, j + 1) / (j + 1)
        total[order] += phi
    return total


def knn_values(x_train, y_train, x_test, y_test, K=5):
    """Exact KNN-Shapley value of every training point, averaged over the test set."""
    return _accumulate(x_train, y_train, x_test, y_test, K) / len(y_test)


def knn_values_total(x_train, y_train, x_test, y_test, K=3):
    """KNN-Shapley of every training point, accumulated over the test points."""
    return _accumulate(x_train, y_train, x_test, y_test, K)
