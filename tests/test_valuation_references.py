"""Valuation entries checked against their paper: a case's features and labels give the exact KNN-Shapley at
every common K, an output that equals one says which K, and one summed over the test points where the paper
averages is a departure with its worked case (`tests/valuation/`, a specimen of ours)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from paperproof.catalogue.fixture_case import FixtureArg, FixtureCase, ValueSpec
from paperproof.catalogue.sample import Sample
from paperproof.fixtures.values import materialize
from paperproof.verify import valuation_references as R
from paperproof.verify.checkout import verify_path
from paperproof.verify.metrics import valuation

SPECIMEN = Path(__file__).resolve().parent / "valuation"


def _case(*kinds: str) -> FixtureCase:
    args = [FixtureArg(name=f"a{i}", spec=ValueSpec(kind=kind)) for i, kind in enumerate(kinds)]
    return FixtureCase(case_id="typical", seed=11, dims={"N": 12, "C": 3, "E": 4, "D": 5}, args=args)


def test_the_cases_features_and_labels_give_the_exact_values_at_every_k_and_their_sums():
    case = _case("embeddings", "labels")
    x = np.asarray(materialize({"kind": "embeddings"}, case.model_dump(mode="json")))
    y = np.asarray(materialize({"kind": "labels"}, case.model_dump(mode="json")))
    found = R.valuation_variants(case)
    assert {name for _, name in found} == {f"{way}_k{k}" for way in ("mean", "sum") for k in R.NEIGHBOURS}
    np.testing.assert_allclose(found["knn_shapley", "mean_k3"], valuation.knn_shapley(x, y, x, y, 3))
    np.testing.assert_allclose(found["knn_shapley", "sum_k3"], 12 * found["knn_shapley", "mean_k3"])
    assert R.paper_of("knn_shapley", "sum_k3") == "mean_k3"


def test_a_held_out_split_is_the_test_set_the_values_are_computed_on():
    case = FixtureCase(case_id="typical", seed=11, dims={"N": 12, "C": 3, "E": 4, "D": 5}, args=[
        FixtureArg(name="x_train", spec=ValueSpec(kind="embeddings")),
        FixtureArg(name="y_train", spec=ValueSpec(kind="labels")),
        FixtureArg(name="x_val", spec=ValueSpec(kind="embeddings", params={"split": "held_out"})),
        FixtureArg(name="y_val", spec=ValueSpec(kind="labels", params={"split": "held_out"}))])
    x_train, y_train, x_test, y_test = R.points(case)
    assert not np.allclose(x_train, x_test)
    np.testing.assert_allclose(R.valuation_variants(case)["knn_shapley", "mean_k2"],
                               valuation.knn_shapley(x_train, y_train, x_test, y_test, 2))


def test_a_case_without_features_or_labels_has_no_valuation_reference():
    assert R.valuation_variants(_case("logits", "labels")) == {}
    assert R.valuation_variants(_case("embeddings")) == {}


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Sample]:
    checkout = tmp_path_factory.mktemp("valuation") / "knnvalue"
    shutil.copytree(SPECIMEN, checkout)
    return {s.entry: s for s in verify_path(checkout, everything=True, workers=2)}


def test_a_faithful_knn_shapley_is_checked_against_the_paper_at_its_own_k(samples: dict[str, Sample]) -> None:
    faithful = samples["knn_values"]
    assert faithful.status == "ran" and faithful.checked == "paper", faithful.reason
    (finding,) = faithful.fidelity
    assert (finding.metric, finding.matches, finding.paper, finding.departures) == ("knn_shapley", "mean_k5", True, [])
    assert "Jia" in (finding.cited or "") and finding.cases_matched == finding.cases
    assert faithful.cases[0].args["x_test"].endswith("a held-out split drawn apart from the training samples, seed 11")


def test_knn_shapley_on_the_planted_run_finds_its_mislabels_at_its_low_end(samples: dict[str, Sample]) -> None:
    planted = samples["knn_values"].planted
    assert planted is not None
    (scores,) = planted.scores
    assert scores.metric == "knn_shapley" and scores.orientation == "low_is_hard"
    mislabels = [f for f in scores.figures if f.kind in ("uniform", "asymmetric", "adjacent")]
    assert len(mislabels) == 6 and all(f.auroc > 0.9 for f in mislabels), [(f.kind, f.auroc) for f in mislabels]


def test_a_sum_over_test_points_departs_with_a_worked_case_that_keeps_the_ranking(samples: dict[str, Sample]) -> None:
    summed = samples["knn_values_total"]
    assert summed.status == "ran_violates", summed.reason
    (finding,) = summed.fidelity
    assert finding.matches == "sum_k3" and not finding.paper
    assert finding.departures[0].startswith("sums each training point's value over the test points")
    assert finding.worked is not None and finding.worked.severity == "rescales" and finding.worked.same_ranking
    assert "test points" in finding.worked.inputs
