"""Data valuation, exactly: semivalues by enumeration, KNN-Shapley by its recursion, leave-one-out.

A valuation method gives each training point a value from a utility U(S): the performance of a model
trained on the subset S. The papers' estimators (truncated Monte Carlo, sampled Banzhaf, bootstrap) are
approximations of sums over subsets; on N ≤ `MAX_ENUMERATED` points those sums are computed here in full,
so an entry's output is compared with the definition itself and a verdict is a fact, not a tolerance.

* **Semivalues** (every subset S of the others, weighted by its size k = |S|):
  φ_i = Σ_{S ⊆ D∖{i}} c(k) · [U(S ∪ {i}) − U(S)], with
  - Data Shapley (Ghorbani & Zou 2019): c(k) = 1 / (n · C(n−1, k)), the average over orderings;
  - Data Banzhaf (Wang & Jia 2023): c(k) = 1 / 2^(n−1), every subset alike;
  - Beta(α, β) Shapley (Kwon & Zou 2022): c(k) = B(k + β, n − k − 1 + α) / B(α, β), from the paper's
    w^(j) = n ∫ t^(j−1) (1−t)^(n−j) Beta(t; β, α) dt with j = k + 1 and φ_i = (1/n) Σ_j C(n−1, j−1) w^(j) Δ_j.
    Beta(1, 1) is Shapley; the paper recommends Beta(16, 1), which weights small subsets most. The order of
    α and β in that name follows the paper as we read it; libraries differ on it (pyDVL's documentation
    names α = 1, β = 16 for the same emphasis), which a page states as a convention, not a departure.
* **Leave-one-out**: U(D) − U(D ∖ {i}).
* **KNN-Shapley** (Jia et al. 2019, "Efficient Task-Specific Data Valuation for Nearest Neighbor
  Algorithms", Theorem 1): for one test point, with the training points sorted by distance, nearest first
  (α_1 … α_N), and the utility of the K-nearest-neighbour classifier's likelihood of the right label,
  U(S) = (1/K) Σ_{k ≤ min(K, |S|)} 1[y_{α_k(S)} = y_test]:
  s_{α_N} = 1[y_{α_N} = y_test] / N, and
  s_{α_i} = s_{α_{i+1}} + (1[y_{α_i} = y_test] − 1[y_{α_{i+1}} = y_test]) / K · min(K, i) / i.
  The value of a test set is the mean over its points. Equal distances are ordered by index (a stable sort),
  which the paper leaves open. The base case as written holds for N ≥ K; with fewer points than K the farthest
  point always counts, and its value is 1[y_{α_N} = y_test] / K (the enumeration agrees with both).

Values come back as float64 numpy arrays, one per training point, in the points' own order. Low values are
the harmful points: a mislabelled point lowers every utility it joins.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np

MAX_ENUMERATED = 16  # 2^16 utilities: the exact sums stay under a second for a cheap utility
Utility = Callable[[tuple[int, ...]], float]
Coefficient = Callable[[int, int], float]  # (n, |S|) -> the weight of one subset of that size


def shapley_coefficient(n: int, k: int) -> float:
    """Ghorbani & Zou's Data Shapley: each size of subset equally likely, each subset of it alike."""
    return 1.0 / (n * math.comb(n - 1, k))


def banzhaf_coefficient(n: int, k: int) -> float:
    """Wang & Jia's Data Banzhaf: every subset of the others alike."""
    return 1.0 / 2 ** (n - 1)


def beta_coefficient(alpha: float, beta: float) -> Coefficient:
    """Kwon & Zou's Beta(α, β) Shapley weights one subset of size k by B(k + β, n − k − 1 + α) / B(α, β)."""

    def coefficient(n: int, k: int) -> float:
        return math.exp(_log_beta(k + beta, n - k - 1 + alpha) - _log_beta(alpha, beta))

    return coefficient


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def utilities(n: int, utility: Utility) -> np.ndarray:
    """U of every subset of n points, indexed by its bit mask (bit i set: point i is in)."""
    if n > MAX_ENUMERATED:
        raise ValueError(f"exact valuation enumerates 2^n subsets: n must be at most {MAX_ENUMERATED}, got {n}")
    table = np.empty(1 << n, dtype=np.float64)
    for mask in range(1 << n):
        table[mask] = float(utility(tuple(i for i in range(n) if mask >> i & 1)))
    return table


def semivalue(n: int, utility: Utility | np.ndarray, coefficient: Coefficient) -> np.ndarray:
    """φ_i = Σ_{S ⊆ D∖{i}} c(n, |S|) [U(S ∪ {i}) − U(S)] for each of the n points, every subset enumerated."""
    table = utility if isinstance(utility, np.ndarray) else utilities(n, utility)
    masks = np.arange(1 << n)
    sizes = np.array([bin(m).count("1") for m in range(1 << n)])
    weights = np.array([coefficient(n, k) for k in range(n)])
    values = np.empty(n, dtype=np.float64)
    for i in range(n):
        without = masks[(masks >> i & 1) == 0]
        values[i] = float(np.sum(weights[sizes[without]] * (table[without | (1 << i)] - table[without])))
    return values


def data_shapley(n: int, utility: Utility | np.ndarray) -> np.ndarray:
    return semivalue(n, utility, shapley_coefficient)


def data_banzhaf(n: int, utility: Utility | np.ndarray) -> np.ndarray:
    return semivalue(n, utility, banzhaf_coefficient)


def beta_shapley(n: int, utility: Utility | np.ndarray, alpha: float = 16.0, beta: float = 1.0) -> np.ndarray:
    return semivalue(n, utility, beta_coefficient(alpha, beta))


def leave_one_out(n: int, utility: Utility | np.ndarray) -> np.ndarray:
    """U(D) − U(D ∖ {i}): n + 1 utilities, so no limit on n beyond the utility's cost."""
    if isinstance(utility, np.ndarray):
        full = (1 << n) - 1
        return np.array([utility[full] - utility[full & ~(1 << i)] for i in range(n)], dtype=np.float64)
    everyone = tuple(range(n))
    whole = float(utility(everyone))
    return np.array([whole - float(utility(everyone[:i] + everyone[i + 1:])) for i in range(n)], dtype=np.float64)


Distance = Literal["euclidean", "cosine"]


def _neighbours(x_train: np.ndarray, x_test: np.ndarray, distance: Distance = "euclidean") -> np.ndarray:
    """[M, N] training indices per test point, nearest first (ties by index): by Euclidean distance, or by cosine
    similarity, highest first (a zero vector is nearest to nothing)."""
    if distance == "cosine":
        norms = np.linalg.norm(x_train, axis=1) * np.linalg.norm(x_test, axis=1)[:, None]
        similarity = np.where(norms > 0, x_test @ x_train.T / np.where(norms > 0, norms, 1.0), -np.inf)
        return np.argsort(-similarity, axis=1, kind="stable")
    distances = np.linalg.norm(x_test[:, None, :] - x_train[None, :, :], axis=-1)
    return np.argsort(distances, axis=1, kind="stable")


def _points(x_train: Sequence | np.ndarray, y_train, x_test, y_test) -> tuple[np.ndarray, ...]:
    xt, xs = np.asarray(x_train, dtype=np.float64), np.asarray(x_test, dtype=np.float64)
    yt, ys = np.asarray(y_train).reshape(-1), np.asarray(y_test).reshape(-1)
    xt, xs = xt.reshape(len(xt), -1), xs.reshape(len(xs), -1)
    if len(xt) != len(yt) or len(xs) != len(ys):
        raise ValueError(f"features and labels differ in length: train {len(xt)} and {len(yt)}, "
                         f"test {len(xs)} and {len(ys)}")
    if xt.shape[1] != xs.shape[1]:
        raise ValueError(f"train and test features differ in width: {xt.shape[1]} and {xs.shape[1]}")
    return xt, yt, xs, ys


def knn_utility(x_train, y_train, x_test, y_test, k: int, distance: Distance = "euclidean") -> Utility:
    """The K-nearest-neighbour classifier's likelihood of the right label on the test set, trained on S."""
    xt, yt, xs, ys = _points(x_train, y_train, x_test, y_test)
    order = _neighbours(xt, xs, distance)

    def utility(subset: tuple[int, ...]) -> float:
        if not subset:
            return 0.0
        inside = np.zeros(len(yt), dtype=bool)
        inside[list(subset)] = True
        total = 0.0
        for row, label in zip(order, ys):
            nearest = row[inside[row]][:k]
            total += float(np.sum(yt[nearest] == label)) / k
        return total / len(ys)

    return utility


def knn_shapley(x_train, y_train, x_test, y_test, k: int, distance: Distance = "euclidean") -> np.ndarray:
    """Jia et al.'s exact KNN-Shapley by its recursion, O(M N log N), averaged over the M test points; the nearest
    by `distance` (the paper's theorem holds for any; Euclidean and cosine are the ones code uses)."""
    if k < 1:
        raise ValueError(f"K must be at least 1, got {k}")
    xt, yt, xs, ys = _points(x_train, y_train, x_test, y_test)
    n = len(yt)
    values = np.zeros(n, dtype=np.float64)
    for row, label in zip(_neighbours(xt, xs, distance), ys):
        hit = (yt[row] == label).astype(np.float64)
        s = np.empty(n, dtype=np.float64)
        s[n - 1] = hit[n - 1] / n * min(k, n) / k  # the paper's 1/N where N ≥ K
        for i in range(n - 2, -1, -1):  # position i holds α_{i+1} in the paper's 1-based numbering
            s[i] = s[i + 1] + (hit[i] - hit[i + 1]) / k * min(k, i + 1) / (i + 1)
        values[row] += s
    return values / len(ys)


def knn_marginals(x_train, y_train, x_test, y_test, k: int, permutations: np.ndarray,
                  distance: Distance = "euclidean") -> np.ndarray:
    """Each training point's marginal contribution to the KNN utility (`knn_utility`) in each ordering: [P, N]
    for the P rows of `permutations`. Their mean over every ordering is KNN-Shapley; over P random orderings it is
    the permutation-sampling estimate (Castro, Gómez, Tejada 2009; Ghorbani & Zou's TMC-Shapley without its
    truncation), and their spread is that estimator's error at a budget.

    Point j joins a prefix S: for a test point, it enters the K nearest of S ∪ {j} when fewer than K of S are
    nearer, adding its hit / K, and pushes out the K-th nearest of S when S already fills K places.
    """
    if k < 1:
        raise ValueError(f"K must be at least 1, got {k}")
    xt, yt, xs, ys = _points(x_train, y_train, x_test, y_test)
    n, m = len(yt), len(ys)
    order = np.asarray(permutations, dtype=np.int64).reshape(-1, n)
    ranks = np.empty((m, n), dtype=np.int64)  # ranks[t, j]: j's place among the training points, nearest 0
    neighbours = _neighbours(xt, xs, distance)
    ranks[np.arange(m)[:, None], neighbours] = np.arange(n)[None, :]
    # the hit of the point at each place, and a place n that stands for an empty slot (no hit to lose)
    hit_at = np.zeros((m, n + 1), dtype=np.float64)
    hit_at[:, :n] = yt[neighbours] == ys[:, None]
    kept = np.full((len(order), m, k), n, dtype=np.int64)  # the places of the K nearest joined so far
    out = np.empty(order.shape, dtype=np.float64)
    tests = np.arange(m)[None, :]
    for step in range(n):
        joining = order[:, step]
        place = ranks[:, joining].T  # [P, M]
        enters = (kept < place[..., None]).sum(-1) < k
        farthest = kept.argmax(-1)
        pushed = np.take_along_axis(kept, farthest[..., None], -1)[..., 0]
        gain = np.where(enters, hit_at[tests, place] - hit_at[tests, pushed], 0.0) / k
        out[np.arange(len(order)), joining] = gain.mean(1)
        np.put_along_axis(kept, farthest[..., None], np.where(enters, place, pushed)[..., None], -1)
    return out
