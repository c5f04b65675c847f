"""AUROC and AUPRC of planted hardness, against their definitions computed the slow way."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperproof.verify.planted import auprc, auroc, detect, floor


def pairwise_auroc(scores, planted):
    pos, neg = scores[planted], scores[~planted]
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return wins / (len(pos) * len(neg))


def threshold_auprc(scores, planted):
    """Precision at every distinct threshold, high to low, times the recall it adds."""
    total, ap, last_recall = planted.sum(), 0.0, 0.0
    for t in sorted(set(scores.tolist()), reverse=True):
        chosen = scores >= t
        tp = (chosen & planted).sum()
        recall = tp / total
        ap += (tp / chosen.sum()) * (recall - last_recall)
        last_recall = recall
    return ap


cases = st.integers(4, 60).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 5), min_size=n, max_size=n),  # few values: many ties
    st.lists(st.booleans(), min_size=n, max_size=n)))


@settings(max_examples=200, deadline=None)
@given(cases)
def test_auroc_and_auprc_match_their_definitions_with_ties(case):
    values, marks = case
    scores, planted = np.array(values, dtype=float), np.array(marks)
    if planted.all() or not planted.any():
        with pytest.raises(ValueError):
            auroc(scores, planted)
        return
    assert auroc(scores, planted) == pytest.approx(pairwise_auroc(scores, planted))
    assert auprc(scores, planted) == pytest.approx(threshold_auprc(scores, planted))


def test_orientation_is_applied_not_chosen():
    rng = np.random.default_rng(0)
    planted = np.zeros(200, dtype=bool)
    planted[:20] = True
    confidence = np.where(planted, rng.uniform(0.0, 0.4, 200), rng.uniform(0.5, 1.0, 200))  # low means hard
    right = detect(confidence, planted, "low_is_hard")
    backwards = detect(confidence, planted, "high_is_hard")
    assert right.auroc == 1.0 and right.auprc == 1.0
    assert backwards.auroc == 0.0 and backwards.auprc < 0.2  # reported as found, never flipped to look good


def test_random_floor_sits_at_chance():
    planted = np.zeros(1000, dtype=bool)
    planted[::10] = True
    chance = floor(planted)
    assert abs(chance.auroc - 0.5) < 0.03 and abs(chance.auprc - 0.1) < 0.03
    assert floor(planted) == chance  # seeded: the same floor in every build


def test_a_score_per_sample_is_required():
    with pytest.raises(ValueError, match="one value per training sample"):
        detect(np.zeros(5), np.zeros(6, dtype=bool), "high_is_hard")
    with pytest.raises(ValueError, match="not finite"):
        detect(np.array([0.1, np.nan, 0.3]), np.array([True, False, False]), "high_is_hard")
