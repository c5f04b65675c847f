"""Planted hardness on the bundled site: every per-sample output of the specimens is scored on the planted
run, a correct AUM and data-map confidence beat random scores by a wide margin, a random "hardness" does not,
and what the sandbox returned never decides which samples were planted."""

from __future__ import annotations

import json

import numpy as np
import pytest

from paperproof.catalogue.fixture_case import FixtureSet
from paperproof.catalogue.sample import Sample
from paperproof.fixtures import training
from paperproof.fixtures.planted_cases import PLANTED_FRACTIONS, planted_fixtures
from paperproof.verify.planted_scores import masks

MISLABELS = ("uniform", "asymmetric", "adjacent")


def figures(record: dict, output: str = "return value") -> list[dict]:
    score = next(s for s in record["planted"]["scores"] if s["output"] == output)
    return score["figures"]


def test_every_kind_at_every_fraction_is_in_the_twin(samples):
    record = samples["paperproof-specimens/hardness-bench", "aum_scores"]
    found = {(f["kind"], f["fraction"]) for f in figures(record)}
    assert found == {(k, p / 100) for k in training.HARDNESS_KINDS for p in PLANTED_FRACTIONS}
    Sample.model_validate(record)  # the twin is the record, under its schema


@pytest.mark.parametrize("key,output", [
    (("paperproof-specimens/hardness-bench", "aum_scores"), "return value"),
    (("paperproof-specimens/dynamics-maps", "confidence_scores"), "return value"),
    (("paperproof-specimens/dynamics-maps", "compute_train_dy_metrics"), "column confidence"),
])
def test_a_correct_score_beats_random_by_a_wide_margin(samples, key, output):
    for f in figures(samples[key], output):
        if f["kind"] in MISLABELS:
            assert f["auroc"] >= 0.9, f
            assert f["auprc"] >= 5 * f["floor"]["auprc"], f
            assert f["reference"] is not None and f["auprc"] == pytest.approx(f["reference"]["auprc"], abs=1e-3)


def test_a_random_hardness_does_not_beat_random(samples):
    record = samples["paperproof-specimens/hardness-bench", "random_hardness"]
    score = record["planted"]["scores"][0]
    assert score["metric"] is None and score["orientation"] == "high_is_hard"
    assert "higher is harder" in score["orientation_basis"]  # from its docstring, before any figure
    found = score["figures"]
    assert abs(np.mean([f["auroc"] for f in found]) - 0.5) < 0.1
    assert np.mean([f["auprc"] for f in found]) < 2 * np.mean([f["floor"]["auprc"] for f in found])
    assert all(f["reference"] is None for f in found)


def test_a_departure_shows_in_the_figures(samples):
    """H-CAT's forgetting (never-learned samples score 0) hides the mislabels the paper's count finds."""
    record = samples["paperproof-specimens/dynamics-maps-fork", "forgetting_events"]
    for f in figures(record):
        if f["kind"] in MISLABELS:
            assert f["auroc"] < 0.6 < 0.9 < f["reference"]["auroc"], f


def test_orientation_is_the_metrics_not_the_better_one(samples):
    """Variability reads high as hard, as the paper does, though it ranks mislabels below chance here."""
    record = samples["paperproof-specimens/dynamics-maps", "variability_scores"]
    score = record["planted"]["scores"][0]
    assert score["orientation"] == "high_is_hard" and score["orientation_basis"].startswith("it computes variability")
    assert any(f["auroc"] < 0.5 for f in score["figures"])


def test_no_planted_record_without_one_value_per_sample(samples):
    assert samples["paperproof-specimens/perturb-kit", "run_name"]["planted"] is None


def test_planted_indices_come_from_the_seed_not_the_run(samples):
    """The masks are recomputed here; they are the ones the training run planted, and differ by fraction."""
    fixtures = FixtureSet.model_validate({"version": "t", "cases": [
        {"case_id": "typical", "seed": 11, "dims": {"E": 6, "N": 24, "C": 3}}]})
    planted = planted_fixtures(fixtures)
    assert planted is not None and [c.case_id for c in planted.cases] == ["planted@10", "planted@30"]
    low, high = (masks(c) for c in planted.cases)
    assert sum(m.sum() for m in low.values()) == 36 and sum(m.sum() for m in high.values()) == 108
    spec = training.RunSpec(seed=11, n=360, classes=3, epochs=6, features=8, planted=0.3)
    assert {k: sorted(np.flatnonzero(m).tolist()) for k, m in high.items()} == training.planted(spec).hard
    record = samples["paperproof-specimens/hardness-bench", "aum_scores"]
    assert all(f["positives"] == (6 if f["fraction"] == 0.1 else 18) for f in figures(record))


def test_the_pages_carry_the_table_and_the_map(bundled_site, samples):
    record = samples["paperproof-specimens/hardness-bench", "aum_scores"]
    page = (bundled_site / "sample" / record["sample_id"] / "index.html").read_text()
    assert 'class="planted stack"' in page and "planted-map.svg" in page
    svg = (bundled_site / "sample" / record["sample_id"] / "planted-map.svg").read_text()
    assert svg.count('r="2.5"') == 360 and svg.count('r="4.5"') == 108 + 1  # every sample; ringed, and the legend
    paper = (bundled_site / "paper" / "specimen-mapping-sample-hardness-with-training" / "index.html").read_text()
    assert 'class="planted-summary stack"' in paper and "random scores" in paper
    twin = json.loads((bundled_site / "paper" / "specimen-mapping-sample-hardness-with-training.json").read_text())
    assert any(s.get("planted") for s in twin["verification"]["samples"])


def test_old_records_load_without_a_planted_field(samples):
    record = dict(samples["paperproof-specimens/dynamics-maps", "confidence_scores"])
    record.pop("planted")
    assert Sample.model_validate(record).planted is None
