"""Fixture recipes read as what they are, in the case's dimensions, with the seed."""

from __future__ import annotations

from paperproof.catalogue.extract import extract_module
from paperproof.fixtures.describe import describe
from paperproof.fixtures.synth import synthesize


def described(source: str) -> dict[str, dict[str, str]]:
    (entry,) = extract_module(source, repo="owner/repo", path="metrics.py")
    return {case.case_id: {a.name: describe(a.spec, case) for a in case.args} for case in synthesize(entry).cases}


def test_training_dynamics_arguments_read_as_shapes_with_their_seed():
    cases = described('def confidence(logits, labels, num_classes):\n    """Mean gold probability per sample."""\n'
                      '    return logits.mean(0)\n')
    typical = cases["typical"]
    assert typical["logits"].startswith("logits [6 epochs × 24 samples × 3 classes]")
    assert typical["logits"].endswith("seed 11")
    assert typical["labels"].startswith("labels [24 samples] of 3 classes") and "seed 11" in typical["labels"]
    assert typical["num_classes"] == "3 (the number of classes)"
    assert cases["wide"]["logits"].startswith("logits [10 epochs × 40 samples × 5 classes]")
    relations = [args for case_id, args in cases.items() if case_id.startswith("typical~")]
    assert relations and any("reordered" in a["logits"] or "renamed" in a["logits"] for a in relations)


def test_a_trend_is_not_shown_as_its_recipe_name():
    cases = described("def correctness_trend(trend):\n    return sum(trend) / len(trend)\n")
    text = next(iter(cases.values()))["trend"]
    assert text != "trend" and "epochs" in text and "seed" in text


def test_a_probability_trend_says_it_is_one():
    cases = described("def variability(conf_trend):\n    return float(np.std(conf_trend, ddof=1))\n")
    text = next(iter(cases.values()))["conf_trend"]
    assert text.startswith("one sample's gold-label probability at each of 6 epochs (list of numbers")


def test_a_namespace_reads_with_the_bounds_sized_to_its_case():
    cases = described("def metrics(training_dynamics, args):\n    return args.burn_out\n")
    assert "burn_out=6," in cases["typical"]["args"] and "num_classes=3," in cases["typical"]["args"]
    assert "burn_out=10," in cases["wide"]["args"] and "epochs=10," in cases["wide"]["args"]
    assert "num_classes=5," in cases["wide"]["args"]
