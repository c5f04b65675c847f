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


def soft_knn_utility(x_train, y_train, x_test, y_test, k: int, distance: Distance = "euclidean") -> Utility:
    """The soft-label K-nearest-neighbour classifier's probability of the right label on the test set, trained on
    S: the share of the min(K, |S|) nearest in S with the test point's label; 1/C on the empty set (a guess among
    the C classes the training labels name)."""
    xt, yt, xs, ys = _points(x_train, y_train, x_test, y_test)
    order, classes = _neighbours(xt, xs, distance), int(yt.max()) + 1

    def utility(subset: tuple[int, ...]) -> float:
        if not subset:
            return 1.0 / classes
        inside = np.zeros(len(yt), dtype=bool)
        inside[list(subset)] = True
        return float(np.mean([np.mean(yt[row[inside[row]][:k]] == label) for row, label in zip(order, ys)]))

    return utility


MAX_SOFT = 200  # the subset counts below stay finite in float64 to about this many points


def soft_knn_shapley(x_train, y_train, x_test, y_test, k: int, distance: Distance = "euclidean") -> np.ndarray:
    """Soft-label KNN-Shapley (Wang & Jia 2023, "A Note on 'Efficient Task-Specific Data Valuation for Nearest
    Neighbor Algorithms'"): the exact Shapley value under `soft_knn_utility`, averaged over the test points.

    The empty set's utility, 1/C, is the note's as we read it (a guess among C classes); the rest is its utility.
    Computed here in closed form from the definition, O(M N² K), not by the note's recursion: for the point at
    place r of a test point's ordering (A = r − 1 nearer, L = N − r farther) and a coalition S of size s, its
    marginal is h_r − 1/C when s = 0; h_r/(s+1) − H_S/(s(s+1)) when 0 < s < K (it always joins the nearest); and,
    when s ≥ K, (h_r − h_pushed)/K if fewer than K of S are nearer (the pushed one is the K-th nearest of S),
    else 0. Summing over coalitions, Vandermonde's identity leaves Σ_q h_q C(q−2, K−1) F(N−q) for the pushed
    points (q > r, F(u) = Σ_j w_{K+j} C(u, j)), w_s = 1 / (N C(N−1, s)) the Shapley weight of a coalition of
    size s. The tests hold it equal to enumerating every coalition.
    """
    if k < 1:
        raise ValueError(f"K must be at least 1, got {k}")
    xt, yt, xs, ys = _points(x_train, y_train, x_test, y_test)
    n = len(yt)
    if n > MAX_SOFT:
        raise ValueError(f"soft-label KNN-Shapley is computed here for at most {MAX_SOFT} points, got {n}")
    classes = int(yt.max()) + 1
    size = n + k + 1
    comb = np.array([[math.comb(i, j) for j in range(size)] for i in range(size)], dtype=np.float64)
    weight = 1.0 / (n * comb[n - 1, :n])  # w_s, s = 0 … N−1
    # F(u) = Σ_j w_{K+j} C(u, j), for u = 0 … N−1 (the terms with K + j > N − 1 are no coalition: zero)
    spill = np.zeros(n)
    for u in range(n):
        j = np.arange(u + 1)
        inside = k + j <= n - 1
        spill[u] = float(np.sum(weight[(k + j)[inside]] * comb[u, j[inside]]))
    places = np.arange(1, n + 1)  # 1-based places, nearest first
    pushed_weight = np.where(places >= 2, comb[np.maximum(places - 2, 0), k - 1], 0.0) * spill[n - places] / k
    # Σ_{s ≥ K} w_s · #{S of size s with fewer than K nearer}, for the point at each place: no test point's labels
    joins = np.zeros(n)
    for r in range(1, n + 1):
        nearer, farther = r - 1, n - r
        for a in range(min(k - 1, nearer) + 1):
            b = np.arange(k - a, farther + 1)  # the farther members, at least K − a so that S has K or more
            joins[r - 1] += comb[nearer, a] * float(np.sum(weight[a + b] * comb[farther, b]))
    values = np.zeros(n, dtype=np.float64)
    for row, label in zip(_neighbours(xt, xs, distance), ys):
        hit = (yt[row] == label).astype(np.float64)
        total = hit.sum()
        phi = weight[0] * (hit - 1.0 / classes)
        for s in range(1, min(k, n)):  # 0 < s < K: it always joins the nearest
            phi += weight[s] * (comb[n - 1, s] * hit / (s + 1) - comb[n - 2, s - 1] * (total - hit) / (s * (s + 1)))
        pushed = hit * pushed_weight  # each farther point q > r, pushed out by the point at place r
        behind = np.concatenate([np.cumsum(pushed[::-1])[::-1][1:], [0.0]])
        values[row] += phi + hit * joins / k - behind
    return values / len(ys)
