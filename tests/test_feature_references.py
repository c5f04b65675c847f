"""Valuation entries checked against their paper: a case's features and labels give the exact KNN-Shapley at
every common K, an output that equals one says which K, and one summed over the test points where the paper
averages is a departure with its worked case (`tests/valuation/`, a specimen of ours)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from paperproof.catalogue.fixture_case import FixtureArg, FixtureCase, ValueSpec
from paperproof.catalogue.sample import Sample
from paperproof.fixtures.values import materialize
from paperproof.verify import feature_references as R
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
    found = R.feature_variants(case)
    assert {name for metric, name in found if metric == "knn_shapley"} == {
        f"{way}_k{k}" for way in ("mean", "sum", "cosine_mean", "cosine_sum") for k in R.NEIGHBOURS}
    np.testing.assert_allclose(found["knn_shapley", "cosine_mean_k3"], valuation.knn_shapley(x, y, x, y, 3, "cosine"))
    np.testing.assert_allclose(found["soft_knn_shapley", "cosine_sum_k4"],
                               12 * valuation.soft_knn_shapley(x, y, x, y, 4, "cosine"))
    assert R.paper_of("soft_knn_shapley", "sum_k2") == "mean_k2"
    assert {name for metric, name in found if metric == "kdn"} == {
        f"{way}_k{k}" for way in ("others", "with_self") for k in R.NEIGHBOURS}  # every K below N = 12
    np.testing.assert_allclose(found["knn_shapley", "mean_k3"], valuation.knn_shapley(x, y, x, y, 3))
    np.testing.assert_allclose(found["knn_shapley", "sum_k3"], 12 * found["knn_shapley", "mean_k3"])
    assert R.paper_of("knn_shapley", "sum_k3") == "mean_k3"
    assert R.paper_of("kdn", "with_self_k5") == "others_k5" and R.paper_of("kdn", "others_k10") == "others_k10"
    assert R.paper_of("knn_shapley", "cosine_sum_k3") == "cosine_mean_k3"


def test_a_held_out_split_is_the_test_set_the_values_are_computed_on():
    case = FixtureCase(case_id="typical", seed=11, dims={"N": 12, "C": 3, "E": 4, "D": 5}, args=[
        FixtureArg(name="x_train", spec=ValueSpec(kind="embeddings")),
        FixtureArg(name="y_train", spec=ValueSpec(kind="labels")),
        FixtureArg(name="x_val", spec=ValueSpec(kind="embeddings", params={"split": "held_out"})),
        FixtureArg(name="y_val", spec=ValueSpec(kind="labels", params={"split": "held_out"}))])
    x_train, y_train, x_test, y_test = R.points(case)
    assert not np.allclose(x_train, x_test)
    np.testing.assert_allclose(R.feature_variants(case)["knn_shapley", "mean_k2"],
                               valuation.knn_shapley(x_train, y_train, x_test, y_test, 2))


def _sampled(case: FixtureCase, k: int, orderings: int, seed: int) -> np.ndarray:
    """A permutation-sampling estimate of KNN-Shapley on the case, as a faithful estimator makes it."""
    found = R.points(case)
    assert found is not None
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.random((orderings, len(found[1]))), axis=1)
    return valuation.knn_marginals(*found, k, order).mean(0)


def test_an_estimate_is_read_at_its_own_k_and_a_budget_near_its_own():
    case = FixtureCase(case_id="wide", seed=23, dims={"N": 40, "C": 5, "E": 4, "D": 12},
                       args=[FixtureArg(name="x", spec=ValueSpec(kind="embeddings")),
                             FixtureArg(name="y", spec=ValueSpec(kind="labels"))])
    estimate = _sampled(case, 5, 200, seed=1)
    found = {a.variant: a for a in R.estimated(case, estimate, 1e-5, 1e-4)}
    best = max(found.values(), key=lambda a: a.log_likelihood)
    assert best.variant == "mean_k5" and 50 < best.budget < 1000, best
    # the same estimate summed over the test points is read as an estimate of the sum
    summed = {a.variant: a for a in R.estimated(case, estimate * 40, 1e-5, 1e-4)}
    assert max(summed.values(), key=lambda a: a.log_likelihood).variant == "sum_k5"


def test_exact_values_and_unrelated_values_are_no_estimates():
    case = FixtureCase(case_id="wide", seed=23, dims={"N": 40, "C": 5, "E": 4, "D": 12},
                       args=[FixtureArg(name="x", spec=ValueSpec(kind="embeddings")),
                             FixtureArg(name="y", spec=ValueSpec(kind="labels"))])
    exact = R.feature_variants(case)["knn_shapley", "mean_k5"]
    assert all(a.variant != "mean_k5" for a in R.estimated(case, exact, 1e-5, 1e-4))
    shuffled = np.random.default_rng(0).permutation(exact)  # the same values on the wrong points
    assert R.estimated(case, shuffled, 1e-5, 1e-4) == []
    assert R.estimated(case, np.full(40, 0.5), 1e-5, 1e-4) == []


def test_a_case_without_features_or_labels_has_no_valuation_reference():
    assert R.feature_variants(_case("logits", "labels")) == {}
    assert R.feature_variants(_case("embeddings")) == {}


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


def test_a_sampled_knn_shapley_is_the_papers_estimator_with_its_budget_and_bound(samples: dict[str, Sample]) -> None:
    sampled = samples["knn_values_sampled"]
    assert sampled.status == "ran" and sampled.checked == "paper", sampled.reason
    (finding,) = sampled.fidelity
    assert (finding.matches, finding.paper, finding.verdict, finding.departures) == ("mean_k5", True, "estimator", [])
    assert finding.estimate is not None and finding.estimate.budget >= R.FLOOR
    assert "permutation sampling" in finding.estimate.estimator and "σᵢ/√T" in finding.estimate.tolerance
    assert finding.orientation == "low_is_hard" and finding.cases_matched >= 3


def test_a_sampled_sum_departs_and_its_severity_is_the_departures_not_the_noises(samples: dict[str, Sample]) -> None:
    summed = samples["knn_values_sampled_total"]
    assert summed.status == "ran_violates", summed.reason
    (finding,) = summed.fidelity
    assert (finding.matches, finding.verdict, finding.paper) == ("sum_k3", "departure", False)
    assert finding.estimate is not None
    assert finding.worked is not None and finding.worked.severity == "rescales"


def test_every_finding_carries_one_of_three_verdicts(samples: dict[str, Sample]) -> None:
    verdicts = {s.entry: s.fidelity[0].verdict for s in samples.values() if s.fidelity}
    assert verdicts == {"knn_values": "exact", "knn_values_total": "departure", "knn_values_sampled": "estimator",
                        "knn_values_sampled_total": "departure", "knn_values_cosine": "departure"}


def test_neighbours_by_cosine_similarity_are_the_papers_too_and_their_sum_departs(samples: dict[str, Sample]) -> None:
    (finding,) = samples["knn_values_cosine"].fidelity
    assert (finding.matches, finding.paper) == ("cosine_sum_k5", False)
    assert finding.worked is not None and "neighbours by cosine similarity" in finding.worked.paper_formula


def test_the_sample_page_and_its_twin_say_estimator_with_its_bound(samples: dict[str, Sample], tmp_path: Path) -> None:
    import json
    from html import unescape
    from types import SimpleNamespace

    from paperproof.build.renderer import Renderer
    from paperproof.build.urls import SiteUrls

    sample = samples["knn_values_sampled"].model_copy(update={"planted": None})  # its map is drawn with the site's
    files = Renderer(SiteUrls(), "2025-07-28T00:00:00+00:00", tmp_path, False).sample(
        sample, SimpleNamespace(page_url="/repo/x/"), {}, {})
    page = unescape((tmp_path / files[-2]).read_text())
    twin = json.loads((tmp_path / files[-1]).read_text())
    (finding,) = twin["fidelity"]
    assert finding["verdict"] == "estimator" and finding["estimate"]["budget"] == sample.fidelity[0].estimate.budget
    assert "estimates knn_shapley as mean_k5 defines it" in " ".join(page.replace("<strong>", "").replace(
        "</strong>", "").replace("<code>", "").replace("</code>", "").split())
    assert f"likeliest at T = {finding['estimate']['budget']:,}" in page
    assert re.search(r"Verdict: <a [^>]*>estimator</a>", page)
    assert "Its low end holds the hard samples" in page



@pytest.fixture(scope="module")
def label_noise(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Sample]:
    checkout = tmp_path_factory.mktemp("label_noise") / "scores"
    shutil.copytree(Path(__file__).resolve().parent / "label_noise", checkout)
    return {s.entry: s for s in verify_path(checkout, everything=True, workers=2)}


def test_kdn_is_checked_at_its_k_and_counting_itself_departs_with_its_neighbours_labels(label_noise) -> None:
    faithful, departing = label_noise["kdn"], label_noise["kdn_index"]
    assert faithful.cases[0].args["X"].startswith("embeddings [24 samples × 8 features]")  # scikit-learn's X
    (f,) = faithful.fidelity
    assert (f.metric, f.matches, f.paper, f.verdict, f.orientation) == ("kdn", "others_k5", True, "exact", "high_is_hard")
    assert departing.status == "ran_violates"
    (d,) = departing.fidelity
    assert (d.matches, d.verdict) == ("with_self_k5", "departure") and d.worked is not None
    assert "nearest other instances [" in d.worked.inputs and "i itself first" in d.worked.code_formula


def test_confidence_weighted_entropy_is_recognised_on_both_scales_each_read_its_own_way(label_noise) -> None:
    raw, quality = label_noise["cw_entropy"].fidelity[0], label_noise["label_quality"].fidelity[0]
    assert (raw.matches, raw.orientation) == ("entropy_over_self_confidence", "high_is_hard")
    # cleanlab's scale: the layout that answers one value per sample is kept ([N, C], not [N, E, C])
    assert label_noise["label_quality"].cases[0].args["pred_probs"].startswith("softmax probabilities [24 samples × 3 classes]")
    assert (quality.matches, quality.orientation) == ("cleanlab_quality", "low_is_hard")
    planted = label_noise["label_quality"].planted
    assert planted is not None and planted.scores[0].orientation == "low_is_hard"
    assert all(f.auroc > 0.9 for f in planted.scores[0].figures if f.kind in ("uniform", "asymmetric", "adjacent"))


def test_an_unnormalised_confidence_weighted_entropy_departs_and_keeps_the_ranking(label_noise) -> None:
    sample = label_noise["entropy_ratio"]
    assert sample.status == "ran_violates", sample.reason
    (finding,) = sample.fidelity
    assert (finding.matches, finding.verdict) == ("nats_over_self_confidence", "departure")
    assert finding.worked is not None and finding.worked.severity == "rescales"
