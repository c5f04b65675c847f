"""Nearest-neighbour data valuation: how much each training point helps a KNN classifier."""
import numpy as np


def _by_distance(x_train, x):
    return np.argsort(np.sqrt(((x_train - x) ** 2).sum(axis=1)), kind="stable")


def _by_cosine(x_train, x):
    unit = x_train / np.linalg.norm(x_train, axis=1, keepdims=True)
    return np.argsort(-(unit @ (x / np.linalg.norm(x))), kind="stable")


def _accumulate(x_train, y_train, x_test, y_test, K, rank=_by_distance):
    n = x_train.shape[0]
    total = np.zeros(n)
    for x, y in zip(x_test, y_test):
        order = rank(x_train, x)
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


def _sampled(x_train, y_train, x_test, y_test, K, n_perms, seed):
    """Sum over n_perms random orderings of each point's gain in KNN likelihood when it joins."""
    n = x_train.shape[0]
    dist = np.sqrt(((x_test[:, None, :] - x_train[None, :, :]) ** 2).sum(axis=2))
    place = np.argsort(np.argsort(dist, axis=1, kind="stable"), axis=1)  # place[m, j]: j's rank for test m
    hit = np.zeros((len(y_test), n + 1))  # hit[m, r]: is the r-th nearest right for test m (r = n: nobody)
    hit[:, :n] = np.take_along_axis(y_train[None, :] == y_test[:, None], np.argsort(dist, axis=1, kind="stable"), 1)
    rows = np.arange(len(y_test))
    rng = np.random.default_rng(seed)
    total = np.zeros(n)
    for _ in range(n_perms):
        best = np.full((len(y_test), K), n)
        for j in rng.permutation(n):
            r = place[:, j]
            slot = best.argmax(axis=1)
            worst = best[rows, slot]
            joins = r < worst
            total[j] += np.where(joins, hit[rows, r] - hit[rows, worst], 0.0).mean() / K
            best[rows, slot] = np.where(joins, r, worst)
    return total


def knn_values_sampled(x_train, y_train, x_test, y_test, K=5, n_perms=50, seed=0):
    """Monte Carlo KNN-Shapley: the mean gain of each point over random orderings, averaged over the test set."""
    return _sampled(x_train, y_train, x_test, y_test, K, n_perms, seed) / n_perms


def knn_values_sampled_total(x_train, y_train, x_test, y_test, K=3, n_perms=50, seed=0):
    """Monte Carlo KNN-Shapley, accumulated over the test points."""
    return _sampled(x_train, y_train, x_test, y_test, K, n_perms, seed) / n_perms * len(y_test)


def knn_values_cosine(x_train, y_train, x_val, y_val, K=5):
    """KNN-Shapley on embeddings, neighbours ranked by cosine similarity, accumulated over the validation set."""
    return _accumulate(x_train, y_train, x_val, y_val, K, rank=_by_cosine)
