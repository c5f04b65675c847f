"""References for entries handed features and labels: data valuation and instance hardness.

An entry that values training points (KNN-Shapley and its kin) or scores instances by their neighbours (kDN) is
handed features and labels, not a training run: a case's `embeddings` and `labels` arguments are the training set,
and those of the held-out split (`x_test`, `y_val`: recipes with `split`) the test set; without them, the training
set again. On those same arrays, cast as the entry saw them, the exact definitions (`metrics.valuation`,
`metrics.instance_hardness`) are computed for every K a caller commonly picks, so an output that equals one of them
says which K it used; the published departures are computed beside them.

`feature_variants(case)` gives them keyed (metric, variant name), one value per training point;
`FEATURE_VARIANTS` says which is the paper's and how each other one departs. Every variant's name ends in its
K (`_k5`), and the paper's variant beside a departing one is the paper's at the same K (`paper_of`).

An output that equals none of them may estimate one: the papers' own estimators sample orderings of the training
points (permutation sampling; TMC-Shapley without its truncation). `estimated(case, values)` reads an output as
such an estimate. Point i's estimate is a mean of T independent marginal contributions, so by the central limit
theorem its error is normal with variance σ_i²/T, σ_i the spread of those contributions over random orderings
(measured on `SPREAD_ORDERINGS` seeded orderings of the case). The budget T that makes the output's errors most
likely is T̂ = N / Σ (d_i/σ_i)²; the variant under which the output is likeliest is the one it estimates (a sum
over the test points spreads M times as wide, which the likelihood weighs). The output is such an estimate when
every error lies within z·σ_i/√T̂, z the two-sided normal quantile for `ALPHA` shared over the N points
(Bonferroni: a faithful estimate meets it everywhere with probability at least 1 − `ALPHA`), and T̂ is at least
`FLOOR` orderings, below which an estimate is too coarse to be told from another valuation.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

import numpy as np

from paperproof.catalogue.fixture_case import FixtureCase
from paperproof.fixtures.values import HELD_OUT, materialize
from paperproof.verify.metrics import instance_hardness, valuation
from paperproof.verify.rank_correlation import spearman
from paperproof.verify.run_references import ModelVariant

ALPHA = 0.01  # the chance a faithful estimate misses its bound at some point
FLOOR = 30  # the fewest orderings an estimate is judged at
SPREAD_ORDERINGS = 2000  # orderings sampled to measure each point's spread of marginal contributions
ESTIMATOR = ("permutation sampling (Castro, Gómez, Tejada 2009; Ghorbani & Zou 2019's TMC-Shapley without its "
             "truncation) on the same utility")
NEIGHBOURS = tuple(range(1, 11))  # the K of a nearest-neighbour utility callers pick (the papers use 1 to 10)
_JIA = "KNN-Shapley paper (Jia et al. 2019)"
_SMITH = "kDN (Smith, Martinez, Giraud-Carrier 2014)"
_WANG = "soft-label KNN-Shapley (Wang & Jia 2023)"


_COSINE = "cosine_"  # the prefix of a variant whose neighbours are the most similar by cosine, not the nearest
_SUM = ("sums each training point's value over the test points where the paper averages them (the ranking is the "
        "paper's; the values grow with the test set)")


def _knn_shapley(metric: str, paper: str, prefix: str, words: str) -> tuple[ModelVariant, ...]:
    return (*(ModelVariant(metric, f"{prefix}mean_k{k}", f"{paper}, K = {k}{words}", True) for k in NEIGHBOURS),
            *(ModelVariant(metric, f"{prefix}sum_k{k}", f"{paper}, K = {k}{words}, summed over the test points",
                           False, _SUM) for k in NEIGHBOURS))


_BY_COSINE = ", neighbours by cosine similarity"
FEATURE_VARIANTS: dict[str, tuple[ModelVariant, ...]] = {
    # The theorem holds for any distance: the nearest by Euclidean distance, or the most similar by cosine (what
    # code that embeds with a network often ranks by), are both the paper's.
    "knn_shapley": (*_knn_shapley("knn_shapley", _JIA, "", ""), *_knn_shapley("knn_shapley", _JIA, _COSINE, _BY_COSINE)),
    "soft_knn_shapley": (*_knn_shapley("soft_knn_shapley", _WANG, "", ""),
                         *_knn_shapley("soft_knn_shapley", _WANG, _COSINE, _BY_COSINE)),
    "kdn": (
        *(ModelVariant("kdn", f"others_k{k}", f"{_SMITH}, k = {k}", True) for k in NEIGHBOURS),
        *(ModelVariant("kdn", f"with_self_k{k}", f"{_SMITH}, k = {k}, the instance among its own neighbours", False,
                       "counts the instance among its own k nearest neighbours (a nearest-neighbour index queried "
                       "with the training set returns it first), so it has k − 1 neighbours that can disagree where "
                       "the paper takes k others") for k in NEIGHBOURS),
    ),
}
# A departing variant's way -> the paper's way at the same K and distance.
_PAPER_WAY = {"sum": "mean", "cosine_sum": "cosine_mean", "with_self": "others"}


def _arrays(case: FixtureCase, kind: str, held_out: bool) -> list[np.ndarray]:
    """The case's arguments of one recipe kind and split, materialised as the entry got them (dtype included)."""
    found = []
    for arg in case.args:
        if arg.spec.kind != kind or arg.spec.params.get("one_hot") or arg.spec.params.get("layout") == "NM":
            continue
        if (arg.spec.params.get("split") == HELD_OUT) != held_out:
            continue
        value = materialize(arg.spec.model_dump(mode="json"), case.model_dump(mode="json"))
        found.append(np.asarray(value.detach().cpu() if hasattr(value, "detach") else value))
    return found


def feature_variants(case: FixtureCase) -> dict[tuple[str, str], np.ndarray]:
    """Every variant on the features and labels the case gave the entry; empty without both."""
    if case.protocol or case.per_sample or not any(a.spec.kind == "embeddings" for a in case.args):
        return {}  # asked of every case of every entry: only one handed features is serialised and computed
    return dict(_computed(case.model_dump_json()))


def points(case: FixtureCase) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """(x_train, y_train, x_test, y_test) as the case gave them; None where it gave no features and labels."""
    features, labels = _arrays(case, "embeddings", False), _arrays(case, "labels", False)
    if not features or not labels or len(features[0]) != len(labels[0]):
        return None
    x_train, y_train = features[0], labels[0]
    tests, test_labels = _arrays(case, "embeddings", True), _arrays(case, "labels", True)
    x_test, y_test = (tests[0], test_labels[0]) if tests and test_labels else (x_train, y_train)
    return (x_train, y_train, x_test, y_test) if len(x_test) == len(y_test) else None


def paper_of(metric: str, variant: str) -> str | None:
    """The paper's variant beside one that departs from it, at the same K and distance."""
    way, _, k = variant.rpartition("_k")
    name = f"{_PAPER_WAY.get(way, way)}_k{k}"
    return name if any(v.name == name and v.paper for v in FEATURE_VARIANTS.get(metric, ())) else None


def formula(metric: str, variant: str) -> str | None:
    """A variant's formula for a departure's page, for sample i with label y_i and K = k."""
    way, _, k = variant.rpartition("_k")
    cosine = way.startswith(_COSINE)
    way = way.removeprefix(_COSINE)
    if cosine and metric in ("knn_shapley", "soft_knn_shapley"):
        k = f"{k}, neighbours by cosine similarity"
    return {("knn_shapley", "mean"): f"(1/M) Σ_t s_i(t), s by Jia et al.'s recursion at K = {k}",
            ("knn_shapley", "sum"): f"Σ_t s_i(t) over the M test points t, at K = {k}",
            ("soft_knn_shapley", "mean"): f"(1/M) Σ_t s_i(t), s the Shapley value of the soft-label KNN at K = {k}",
            ("soft_knn_shapley", "sum"): f"Σ_t s_i(t) over the M test points t, soft-label KNN at K = {k}",
            ("kdn", "others"): f"#{{j among the {k} nearest others of i : y_j ≠ y_i}} / {k}",
            ("kdn", "with_self"): f"#{{j among the {k} nearest of i, i itself first : y_j ≠ y_i}} / {k}"}.get((metric, way))


@lru_cache(maxsize=16)
def _computed(serialised: str) -> tuple[tuple[tuple[str, str], np.ndarray], ...]:
    found_points = points(FixtureCase.model_validate_json(serialised))
    if found_points is None:
        return ()
    x_train, y_train, x_test, y_test = found_points
    found = []
    for k in NEIGHBOURS:
        distances: tuple[tuple[str, valuation.Distance], ...] = (("", "euclidean"), (_COSINE, "cosine"))
        for prefix, distance in distances:
            mean = valuation.knn_shapley(x_train, y_train, x_test, y_test, k, distance)
            found.append((("knn_shapley", f"{prefix}mean_k{k}"), mean))
            found.append((("knn_shapley", f"{prefix}sum_k{k}"), mean * len(y_test)))
            if len(y_train) <= valuation.MAX_SOFT:
                soft = valuation.soft_knn_shapley(x_train, y_train, x_test, y_test, k, distance)
                found.append((("soft_knn_shapley", f"{prefix}mean_k{k}"), soft))
                found.append((("soft_knn_shapley", f"{prefix}sum_k{k}"), soft * len(y_test)))
        if k < len(y_train):  # k others to disagree
            found.append((("kdn", f"others_k{k}"), instance_hardness.kdn(x_train, y_train, k)))
            found.append((("kdn", f"with_self_k{k}"), instance_hardness.kdn(x_train, y_train, k, include_self=True)))
    return tuple(found)


@dataclass(frozen=True)
class Agreement:
    """An output read, on one case, as a permutation-sampling estimate of one variant: its likeliest budget (in
    orderings), the log-likelihood of its errors at that budget, its largest error, and its rank correlation."""

    metric: str
    variant: str
    budget: float
    log_likelihood: float
    error: float
    bound: float  # z, the normal quantile that bounds each error on this case's points
    rho: float | None


def bound(n: int) -> float:
    """z for `ALPHA` shared over n points: each point's estimate strays beyond z standard errors with probability
    at most ALPHA / n."""
    return NormalDist().inv_cdf(1 - ALPHA / (2 * n))


def estimated(case: FixtureCase, values: np.ndarray, atol: float, rtol: float) -> list[Agreement]:
    """Each variant an output is consistent with as a permutation-sampling estimate of at least `FLOOR`
    orderings, on the features and labels the case gave it; empty where it gave none. An error within
    floating-point tolerance (`atol`, `rtol`) counts as none."""
    exact = {key: v for key, v in feature_variants(case).items() if key[0] == "knn_shapley"}  # its estimator's σ
    found_points = points(case) if exact else None
    if found_points is None:
        return []
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    n, tests = len(found_points[1]), len(found_points[3])
    z, serialised = bound(n), case.model_dump_json()
    found = []
    for (metric, name), reference in exact.items():
        if reference.shape != values.shape or not np.isfinite(values).all():
            continue
        way, _, k_text = name.rpartition("_k")
        k = int(k_text)
        scale = tests if way.endswith("sum") else 1  # a sum over the test points spreads M times as wide
        error = np.where(np.isclose(values, reference, atol=atol, rtol=rtol), 0.0, np.abs(values - reference))
        if not error.any():
            continue  # equal within floating point: the exact variant, not an estimate of it
        if (error > z * scale / (k * FLOOR ** 0.5)).any():
            continue  # a marginal lies in [−1/K, 1/K], so σ ≤ 1/K: no budget of FLOOR orderings reaches this error
        spread = _spread(serialised, k, way.startswith(_COSINE)) * scale
        if (error[spread == 0] > 0).any():
            continue  # a point every ordering values alike, and the output does not
        varies = spread > 0
        standard = error[varies] / spread[varies]
        budget = varies.sum() / float(np.sum(standard ** 2))
        if budget < FLOOR or (standard * budget ** 0.5 > z).any():
            continue
        likelihood = float(-np.log(spread[varies]).sum() + varies.sum() / 2 * np.log(budget) - varies.sum() / 2)
        found.append(Agreement(metric, name, budget, likelihood, float(error.max()), z, spearman(values, reference)))
    return found


@lru_cache(maxsize=64)
def _spread(serialised: str, k: int, cosine: bool) -> np.ndarray:
    """σ_i: the standard deviation of each point's marginal contribution to the K-nearest-neighbour utility (its
    neighbours by cosine similarity, or Euclidean distance) over `SPREAD_ORDERINGS` random orderings, seeded by
    the case."""
    case = FixtureCase.model_validate_json(serialised)
    found_points = points(case)
    assert found_points is not None
    n = len(found_points[1])
    rng = np.random.default_rng(case.seed * 1009 + k)
    orderings = np.argsort(rng.random((SPREAD_ORDERINGS, n)), axis=1)
    distance: valuation.Distance = "cosine" if cosine else "euclidean"
    return valuation.knn_marginals(*found_points, k, orderings, distance).std(axis=0, ddof=1)
