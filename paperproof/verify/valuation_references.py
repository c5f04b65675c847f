"""References for data-valuation entries, on the features and labels a case gave them.

An entry that values training points (KNN-Shapley and its kin) is handed features and labels, not a
training run: a case's `embeddings` and `labels` arguments are the training set, and those of the held-out split
(`x_test`, `y_val`: recipes with `split`) the test set; without them, the training set again. On those same arrays, cast as the entry
saw them, the exact definitions of `metrics.valuation` are computed for every K a caller commonly picks, so
an output that equals one of them says which K it used; the published departures are computed beside them.

`valuation_variants(case)` gives them keyed (metric, variant name), one value per training point;
`VALUATION_VARIANTS` says which is the paper's and how each other one departs.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from paperproof.catalogue.fixture_case import FixtureCase
from paperproof.fixtures.values import HELD_OUT, materialize
from paperproof.verify.metrics import valuation
from paperproof.verify.run_references import ModelVariant

NEIGHBOURS = tuple(range(1, 11))  # the K of a nearest-neighbour utility callers pick (the papers use 1 to 10)
_JIA = "KNN-Shapley paper (Jia et al. 2019)"


VALUATION_VARIANTS: dict[str, tuple[ModelVariant, ...]] = {"knn_shapley": (
    *(ModelVariant("knn_shapley", f"mean_k{k}", f"{_JIA}, K = {k}", True) for k in NEIGHBOURS),
    *(ModelVariant("knn_shapley", f"sum_k{k}", f"{_JIA}, K = {k}, summed over the test points", False,
                   "sums each training point's value over the test points where the paper averages them (the "
                   "ranking is the paper's; the values grow with the test set)") for k in NEIGHBOURS),
)}


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


def valuation_variants(case: FixtureCase) -> dict[tuple[str, str], np.ndarray]:
    """Every valuation variant on the features and labels the case gave the entry; empty without both."""
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
    """The paper's variant beside one that departs from it: the same K, averaged."""
    if metric not in VALUATION_VARIANTS:
        return None
    return "mean_" + variant.split("_", 1)[1] if "_" in variant else None


@lru_cache(maxsize=16)
def _computed(serialised: str) -> tuple[tuple[tuple[str, str], np.ndarray], ...]:
    found_points = points(FixtureCase.model_validate_json(serialised))
    if found_points is None:
        return ()
    x_train, y_train, x_test, y_test = found_points
    found = []
    for k in NEIGHBOURS:
        mean = valuation.knn_shapley(x_train, y_train, x_test, y_test, k)
        found.append((("knn_shapley", f"mean_k{k}"), mean))
        found.append((("knn_shapley", f"sum_k{k}"), mean * len(y_test)))
    return tuple(found)
