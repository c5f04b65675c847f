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
from paperproof.fixtures.planted_cases import (
    MIN_POSITIVES,
    PLANTED_DIMS,
    PLANTED_FRACTIONS,
    PLANTED_SEED,
    planted_fixtures,
    positives,
)
from paperproof.verify.planted_scores import check_run, masks

MISLABELS = ("uniform", "asymmetric", "adjacent")
N = PLANTED_DIMS["N"]


def default_spec(percent: int) -> training.RunSpec:
    return training.RunSpec(seed=PLANTED_SEED, n=N, classes=PLANTED_DIMS["C"], epochs=PLANTED_DIMS["E"],
                            features=PLANTED_DIMS["D"], planted=percent / 100)


@pytest.mark.parametrize("percent", PLANTED_FRACTIONS)
def test_every_kind_is_planted_often_enough_and_some_reference_finds_it(percent):
    """The acceptance criterion of the planted design: at every fraction, every kind has at least 20 samples,
    and some reference metric (loss, confidence, AUM, EL2N on the run's evaluated logits) finds it, its whole
    95% interval above one half, against the clean samples only."""
    spec = default_spec(percent)
    made = training.planted(spec)
    assert all(len(made.hard[k]) >= MIN_POSITIVES for k in training.HARDNESS_KINDS)
    assert all(len(made.hard[k]) == positives(N, percent) for k in training.HARDNESS_KINDS)
    checks = check_run(spec)
    assert [c.kind for c in checks] == list(training.HARDNESS_KINDS)
    clean = N - len(training.HARDNESS_KINDS) * positives(N, percent)
    for check in checks:
        assert check.positives >= MIN_POSITIVES and check.negatives == clean and check.samples == N
        best = check.metrics[check.best]
        assert check.found and best.auroc_low is not None and best.auroc_low > 0.5, check
        assert set(check.metrics) == {"loss", "confidence", "aum", "el2n"}


def test_the_reference_check_is_deterministic():
    spec = default_spec(PLANTED_FRACTIONS[0])
    first, again = check_run(spec), check_run(spec)
    assert [c.model_dump_json() for c in first] == [c.model_dump_json() for c in again]


def test_a_kind_no_reference_finds_is_marked_so():
    """A kind whose samples are like the clean ones (here: none changed) is not found by any reference metric."""
    from paperproof.verify.planted_scores import reference_check

    rng = np.random.default_rng(0)
    logits = rng.normal(size=(3, 200, 3))
    labels = rng.integers(0, 3, 200)
    kinds = {"same": np.zeros(200, dtype=bool), "obvious": np.zeros(200, dtype=bool)}
    kinds["same"][:20] = True
    kinds["obvious"][20:40] = True
    logits[:, 20:40, :] = 0.0
    logits[:, 20:40, 0] = -5.0  # never the label's class when the label is 0; flat otherwise: low confidence
    labels[20:40] = 0
    found = {c.kind: c for c in reference_check(logits, labels, kinds, 0.2)}
    assert not found["same"].found and found["obvious"].found


def figures(record: dict, output: str = "return value") -> list[dict]:
    score = next(s for s in record["planted"]["scores"] if s["output"] == output)
    return score["figures"]


def test_every_kind_at_every_fraction_is_in_the_twin(samples):
    record = samples["paperproof-specimens/hardness-bench", "aum_scores"]
    found = {(f["kind"], f["fraction"]) for f in figures(record)}
    assert found == {(k, p / 100) for k in training.HARDNESS_KINDS for p in PLANTED_FRACTIONS}
    Sample.model_validate(record)  # the twin is the record, under its schema
    checks = record["planted"]["checks"]
    assert {(c["kind"], c["fraction"]) for c in checks} == found and all(c["found"] for c in checks)
    for f in figures(record):
        assert f["auroc_low"] <= f["auroc"] <= f["auroc_high"] and f["findable"] is True
        assert f["reference"]["auroc_low"] <= f["reference"]["auroc"] <= f["reference"]["auroc_high"]
        assert f["samples"] == N and f["negatives"] == N - 6 * f["positives"]  # scored against the clean ones


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
    assert sum(m.sum() for m in low.values()) == 120 and sum(m.sum() for m in high.values()) == 360
    spec = training.RunSpec(seed=11, n=N, classes=3, epochs=6, features=8, planted=0.3)
    assert {k: sorted(np.flatnonzero(m).tolist()) for k, m in high.items()} == training.planted(spec).hard
    record = samples["paperproof-specimens/hardness-bench", "aum_scores"]
    assert all(f["positives"] == (20 if f["fraction"] == 0.1 else 60) for f in figures(record))


def test_the_pages_carry_the_table_and_the_map(bundled_site, samples):
    record = samples["paperproof-specimens/hardness-bench", "aum_scores"]
    page = (bundled_site / "sample" / record["sample_id"] / "index.html").read_text()
    assert 'class="planted stack"' in page and "planted-map.svg" in page
    assert 'class="planted-checks stack"' in page and "AUROC [95%]" in page
    first = figures(record)[0]
    assert f'{first["auroc"]:.2f} [{first["auroc_low"]:.2f}, {first["auroc_high"]:.2f}]' in page  # "0.91 [0.84, 0.97]"
    assert "not a failure of the code" not in page  # every kind is found on the default design
    svg = (bundled_site / "sample" / record["sample_id"] / "planted-map.svg").read_text()
    assert svg.count('r="2.5"') == N and svg.count('r="4.5"') == 360 + 1  # every sample; ringed, and the legend
    paper = (bundled_site / "paper" / "specimen-mapping-sample-hardness-with-training" / "index.html").read_text()
    assert 'class="planted-summary stack"' in paper and "random scores" in paper
    twin = json.loads((bundled_site / "paper" / "specimen-mapping-sample-hardness-with-training.json").read_text())
    assert any(s.get("planted") for s in twin["verification"]["samples"])


def test_old_records_load_without_a_planted_field(samples):
    record = dict(samples["paperproof-specimens/dynamics-maps", "confidence_scores"])
    record.pop("planted")
    assert Sample.model_validate(record).planted is None


LABEL_CHECK = {
    "agreement.py": '''import numpy as np


def vocabulary_agreement(bags, labels):
    """How strongly each text's words belong to its own label's texts: a lower agreement is a harder sample,
    likely mislabelled."""
    labels = np.asarray(labels)
    centres = np.stack([bags[labels == c].mean(axis=0) for c in np.unique(labels)])
    fit = bags @ centres.T
    return fit[np.arange(len(labels)), labels] - fit.max(axis=1)
''',
    "examples/reviews.py": '''import numpy as np
from datasets import load_dataset

from agreement import vocabulary_agreement

train = load_dataset("imdb", split="train")
texts, labels = train["text"], np.array(train["label"])
words = sorted({w for t in texts for w in t.lower().split()})
index = {w: i for i, w in enumerate(words)}
bags = np.zeros((len(texts), len(words)))
for row, text in enumerate(texts):
    for word in text.lower().split():
        bags[row, index[word]] += 1
bags /= np.linalg.norm(bags, axis=1, keepdims=True)
print(vocabulary_agreement(bags, labels)[:5])
''',
}


def test_a_score_the_repository_computed_on_a_planted_stand_in_is_judged_on_what_was_planted(tmp_path):
    from paperproof.verify.checkout import verify_checkout

    root = tmp_path / "labelcheck"
    for name, text in LABEL_CHECK.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    verified = verify_checkout(root, workers=1, planted=False, limits={"cpu_seconds": 20})
    (sample,) = [s for s in verified.samples if s.qualname == "vocabulary_agreement"]
    assert sample.observed is not None and sample.observed.replaced == ["datasets.load_dataset('imdb')"]
    on = sample.observed.on_planted
    assert on is not None and on.samples == 512 and on.orientation == "low_is_hard"
    assert on.orientation_basis.startswith("its docstring says")
    assert on.figures["mislabelled"].auroc > 0.9 and on.figures["mislabelled"].auroc_low > 0.5
    assert set(on.figures) == {"mislabelled", "atypical", "ood"}
    twin = json.loads(sample.model_dump_json())
    assert "values" not in twin["observed"] and twin["observed"]["on_planted"]["samples"] == 512


def test_an_observed_score_nothing_orients_is_not_scored():
    from paperproof.catalogue.entry import Entry
    from paperproof.catalogue.observed import Observation
    from paperproof.verify.planted_scores import observed_on_planted

    entry = Entry.model_construct(name="blend", qualname="blend", docstring="Mixes two columns.", path="m.py")
    seen = Observation(driver="examples/x.py", kind="example", line=3, caller_path="examples/x.py", calls=1,
                       per_sample=True, returns="numpy.ndarray float64 [10]", values=[float(i) for i in range(10)],
                       planted_kinds={"mislabelled": [9]})
    on = observed_on_planted(entry, seen, [], None).on_planted
    assert on is not None and on.orientation is None and on.figures == {}
    assert observed_on_planted(entry, seen.model_copy(update={"values": None}), [], None).on_planted is None
