"""AUROC (with its 95% interval) and AUPRC of planted hardness, against their definitions computed the slow way;
negatives are the clean samples only."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperproof.verify.planted import Z95, auprc, auroc, auroc_interval, detect, floor, negatives


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


def delong_slow(scores, planted):
    """DeLong's variance from its definition: the kernel ψ over every (planted, unplanted) pair."""
    pos, neg = scores[planted], scores[~planted]
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    m, n = len(pos), len(neg)
    var = (v10.var(ddof=1) / m if m > 1 else 0.0) + (v01.var(ddof=1) / n if n > 1 else 0.0)
    return psi.mean(), var


@settings(max_examples=200, deadline=None)
@given(cases)
def test_the_interval_is_delongs_with_ties(case):
    values, marks = case
    scores, planted = np.array(values, dtype=float), np.array(marks)
    if planted.all() or not planted.any():
        return
    area, low, high = auroc_interval(scores, planted)
    slow_area, var = delong_slow(scores, planted)
    assert area == pytest.approx(slow_area)
    assert low == pytest.approx(max(0.0, slow_area - Z95 * np.sqrt(var)))
    assert high == pytest.approx(min(1.0, slow_area + Z95 * np.sqrt(var)))
    assert 0.0 <= low <= area <= high <= 1.0


def test_the_interval_on_a_case_worked_by_hand():
    """Planted 3 and 1, unplanted 2 and 0. Planted 3 outscores both unplanted, 1 outscores one: V10 = (1, ½);
    unplanted 2 is outscored by one planted, 0 by both: V01 = (½, 1). AUROC ¾; Var = s²(V10)/2 + s²(V01)/2
    = ⅛/2 + ⅛/2 = ⅛; ¾ − 1.96·√⅛ = 0.0570, and ¾ + 1.96·√⅛ clipped to 1."""
    area, low, high = auroc_interval(np.array([3.0, 1.0, 2.0, 0.0]), np.array([True, True, False, False]))
    assert area == 0.75
    assert low == pytest.approx(0.75 - 1.959964 * np.sqrt(0.125), abs=1e-6) and low == pytest.approx(0.0570, abs=1e-4)
    assert high == 1.0


def test_a_perfect_score_has_a_narrow_interval_at_one():
    planted = np.zeros(300, dtype=bool)
    planted[:20] = True
    scores = np.where(planted, 1.0 + np.arange(300) / 300, np.arange(300) / 1000)
    found = detect(scores, planted, "high_is_hard")
    assert (found.auroc, found.auroc_low, found.auroc_high) == (1.0, 1.0, 1.0) and found.beats_random
    backwards = detect(scores, planted, "low_is_hard")
    assert (backwards.auroc, backwards.auroc_low, backwards.auroc_high) == (0.0, 0.0, 0.0)


def test_the_interval_narrows_with_more_positives():
    """The same score distributions, with 10, 40 and 160 planted samples among 800 clean ones."""
    widths = []
    for positives in (10, 40, 160):
        rng = np.random.default_rng(3)
        planted = np.r_[np.ones(positives, dtype=bool), np.zeros(800, dtype=bool)]
        scores = np.where(planted, rng.normal(1.0, 1.0, planted.size), rng.normal(0.0, 1.0, planted.size))
        found = detect(scores, planted, "high_is_hard")
        assert found.auroc_low < found.auroc < found.auroc_high
        widths.append(found.auroc_high - found.auroc_low)
    assert widths[0] > widths[1] > widths[2] and widths[2] < 0.15


def test_negatives_are_the_clean_samples_only():
    """A score that ranks every planted kind above the clean samples finds each kind perfectly: the samples
    of the other kinds are no negatives of this one."""
    kinds = {"a": np.zeros(100, dtype=bool), "b": np.zeros(100, dtype=bool)}
    kinds["a"][:10] = True
    kinds["b"][10:30] = True
    scores = np.where(kinds["b"], 3.0, np.where(kinds["a"], 2.0, np.linspace(0, 1, 100)))  # b above a above clean
    keep = negatives("a", kinds)
    assert keep.sum() == 80 and keep[:10].all() and not keep[10:30].any() and keep[30:].all()
    found = detect(scores, kinds["a"], "high_is_hard", keep)
    assert (found.auroc, found.auprc, found.positives, found.samples) == (1.0, 1.0, 10, 80)
    unclean = detect(scores, kinds["a"], "high_is_hard")  # the other kind counted as negatives, as before
    assert unclean.auroc == pytest.approx(70 / 90, abs=1e-4) and unclean.samples == 100  # beaten by all of b
    chance = floor(kinds["a"], keep=keep)
    assert chance.samples == 80 and chance.positives == 10


def test_figures_are_deterministic():
    rng = np.random.default_rng(9)
    planted = rng.random(500) < 0.1
    scores = rng.normal(size=500) + planted
    first, again = detect(scores, planted, "high_is_hard"), detect(scores.copy(), planted.copy(), "high_is_hard")
    assert first == again and repr(first) == repr(again)
    assert floor(planted) == floor(planted)
