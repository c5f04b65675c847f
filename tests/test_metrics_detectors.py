"""Tests for the label-noise and uncertainty detectors of the reference core, worked by hand from their papers'
definitions, and their place in the registry: an entry computing one is recognised by what it returns."""

from __future__ import annotations

import math

import pytest
import torch

from paperproof.verify import metrics as M
from paperproof.verify.checkout import verify_path

# one epoch, three samples, three classes, given as probabilities
PROBS = torch.tensor([[[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [1.0, 0.0, 0.0]]], dtype=torch.float64)
LABELS = torch.tensor([0, 2, 1])


def test_normalized_margin_is_the_given_labels_probability_minus_the_best_other():
    margin = M.normalized_margin(PROBS, LABELS, inputs="probs")
    torch.testing.assert_close(margin, torch.tensor([0.5, -0.3, -1.0], dtype=torch.float64))
    torch.testing.assert_close(M.normalized_margin(PROBS, LABELS, inputs="probs", unit=True), (margin + 1) / 2)


def test_predictive_entropy_in_nats_bits_and_over_log_c_with_zero_log_zero_as_zero():
    h = [-(0.7 * math.log(0.7) + 0.2 * math.log(0.2) + 0.1 * math.log(0.1)),
         -(0.1 * math.log(0.1) + 0.6 * math.log(0.6) + 0.3 * math.log(0.3)), 0.0]
    torch.testing.assert_close(M.predictive_entropy(PROBS, LABELS, inputs="probs"), torch.tensor(h, dtype=torch.float64))
    torch.testing.assert_close(M.predictive_entropy(PROBS, LABELS, inputs="probs", base=2.0),
                               torch.tensor(h, dtype=torch.float64) / math.log(2))
    torch.testing.assert_close(M.predictive_entropy(PROBS, LABELS, inputs="probs", normalised=True),
                               torch.tensor(h, dtype=torch.float64) / math.log(3))


def test_prediction_margin_is_the_gap_of_the_top_two_and_ignores_the_label():
    gap = M.prediction_margin(PROBS, LABELS, inputs="probs")
    torch.testing.assert_close(gap, torch.tensor([0.5, 0.3, 1.0], dtype=torch.float64))
    torch.testing.assert_close(M.prediction_margin(PROBS, torch.tensor([2, 0, 0]), inputs="probs"), gap)


def test_logits_are_read_through_their_softmax_at_the_last_epoch():
    logits = torch.log(torch.cat([torch.full((1, 3, 3), 1 / 3, dtype=torch.float64), PROBS.clamp_min(1e-12)]))
    torch.testing.assert_close(M.normalized_margin(logits, LABELS), M.normalized_margin(PROBS, LABELS, inputs="probs"),
                               atol=1e-9, rtol=0)
    with pytest.raises(ValueError, match="inputs must be"):
        M.prediction_margin(PROBS, LABELS, inputs="odds")  # type: ignore[arg-type]


def test_confidence_weighted_entropy_is_normalised_entropy_over_self_confidence_and_cleanlabs_scale_reads_down():
    h = M.predictive_entropy(PROBS, LABELS, inputs="probs", normalised=True)
    gold = torch.tensor([0.7, 0.3, 0.0], dtype=torch.float64).clamp_min(1e-6)  # the label's probability, floored
    raw = M.confidence_weighted_entropy(PROBS, LABELS, inputs="probs")
    torch.testing.assert_close(raw, h / gold)
    quality = M.confidence_weighted_entropy(PROBS, LABELS, inputs="probs", quality=True)
    torch.testing.assert_close(quality, torch.log1p(raw) / raw.clamp_min(1e-6))
    # the suspect label (sample 1, given 2 at p = 0.3) ranks above the clean one (sample 0) both ways, read oppositely
    assert raw[1] > raw[0] and quality[1] < quality[0]


def test_each_detector_is_registered_with_its_definition_and_orientation():
    from paperproof.verify.fidelity import orientation

    for metric, way in (("normalized_margin", "low_is_hard"), ("predictive_entropy", "high_is_hard"),
                        ("prediction_margin", "low_is_hard"), ("confidence_weighted_entropy", "high_is_hard")):
        assert metric in M.VARIANTS and M.DEFINITIONS[metric].orientation == way
    assert orientation("confidence_weighted_entropy", "cleanlab_quality") == "low_is_hard"


# Written for this test in the style of research code.
CODE = '''
import numpy as np


def label_quality(pred_probs, labels):
    """How much to trust each given label: its probability minus the strongest rival's."""
    p = np.asarray(pred_probs)
    given = p[np.arange(len(labels)), labels]
    rival = p.copy()
    rival[np.arange(len(labels)), labels] = -1
    return given - rival.max(axis=1)


def uncertainty(pred_probs):
    """Entropy of each prediction, in bits: the most uncertain samples are labelled first."""
    p = np.clip(np.asarray(pred_probs), 1e-12, 1)
    return -(p * np.log2(p)).sum(axis=-1)
'''


def test_entries_computing_a_detector_are_checked_against_its_paper(tmp_path):
    (tmp_path / "noisy").mkdir()
    (tmp_path / "noisy" / "scores.py").write_text(CODE)
    found = {s.entry: s for s in verify_path(tmp_path / "noisy", everything=True, workers=2, planted=False)}
    quality, entropy = found["label_quality"], found["uncertainty"]
    assert quality.checked == "paper" and quality.status == "ran", quality.reason
    assert [(f.metric, f.departures) for f in quality.fidelity] == [("normalized_margin", [])]
    assert entropy.checked == "paper" and [(f.metric, f.matches) for f in entropy.fidelity] == [
        ("predictive_entropy", "bits")]
