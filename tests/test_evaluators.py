"""Evaluation code judged like any other research code: which AUROC or AUPRC it computes, for which class.

The evaluators are ours, written as research code writes them: with scikit-learn's names, a hand-made
average precision, the mask turned around, the score negated.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from paperproof.verify.checkout import verify_path
from paperproof.verify.evaluators import figures

EVALUATORS = '''
import numpy as np


def _ap(y_true, y_score):
    order = np.argsort(-np.asarray(y_score, dtype=float), kind="mergesort")
    hits = np.asarray(y_true, dtype=bool)[order]
    return float((np.cumsum(hits) / np.arange(1, len(hits) + 1))[hits].mean())


def _auc(y_true, y_score):
    y = np.asarray(y_true, dtype=bool)
    s = np.asarray(y_score, dtype=float)
    greater = (s[y][:, None] > s[~y][None, :]).mean()
    equal = (s[y][:, None] == s[~y][None, :]).mean()
    return float(greater + 0.5 * equal)


def noisy_retrieval_ap(scores, is_noisy):
    """Average precision of the score at finding the mislabelled examples."""
    return _ap(is_noisy, scores)


def clean_first_ap(scores, noisy_mask):
    """Average precision of the hardness score."""
    good = (np.asarray(noisy_mask) == 0).astype(int)  # most scores select good samples
    return _ap(good, scores)


def easy_is_flagged_ap(scores, flag_ids):
    return _ap(flag_ids, -np.asarray(scores))


def detection_auroc(raw_scores, flags):
    return _auc(1 - np.asarray(flags), raw_scores)


def mean_score(scores, is_noisy):
    return float(np.mean(np.asarray(scores)[np.asarray(is_noisy) == 1]))
'''


@pytest.fixture(scope="module")
def judged(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("evaluators")
    (root / "evaluate.py").write_text(textwrap.dedent(EVALUATORS))
    return {s.qualname: s for s in verify_path(root, everything=True, workers=1, planted=False)}


@pytest.mark.parametrize("name,measure,reading,paper", [
    ("noisy_retrieval_ap", "auprc", "flagged_positive", True),
    ("clean_first_ap", "auprc", "clean_positive", False),
    ("easy_is_flagged_ap", "auprc", "flagged_positive_reversed", False),
    ("detection_auroc", "auroc", "swapped", False),
])
def test_the_reading_of_each_evaluator_is_found_and_the_papers_alone_passes(judged, name, measure, reading, paper):
    sample = judged[name]
    assert [(f.metric, f.matches, f.paper) for f in sample.fidelity] == [(measure, reading, paper)]
    assert sample.fidelity[0].cases_matched == sample.fidelity[0].cases == 6
    assert sample.status == ("ran" if paper else "ran_violates"), sample.reason


def test_a_swapped_class_is_shown_at_its_line_with_both_figures(judged):
    sample = judged["clean_first_ap"]
    worked = sample.fidelity[0].worked
    assert worked is not None and worked.located
    file = textwrap.dedent(EVALUATORS).splitlines()
    assert "== 0" in file[worked.lines[0] - 1]
    assert worked.paper_value != worked.code_value
    assert f"the AUPRC of finding the flagged samples is {worked.paper_value:.4g}" in worked.worked
    assert "clean samples" in worked.effect


def test_a_number_that_is_no_reading_of_either_figure_gets_no_finding(judged):
    assert judged["mean_score"].fidelity == [] and judged["mean_score"].status == "ran"


def test_the_readings_differ_on_a_mask_and_agree_where_they_must():
    rng = np.random.default_rng(3)
    scores, flagged = rng.normal(size=40), np.zeros(40, dtype=bool)
    flagged[rng.permutation(40)[:8]] = True
    found = figures(scores, flagged)
    assert len({round(v, 9) for k, v in found.items() if k[0] == "auprc"}) == 4
    assert found["auroc", "swapped"] == pytest.approx(1 - found["auroc", "flagged_positive"])


def test_the_repository_page_says_which_evaluator_swaps_the_classes(bundled_site: Path):
    twin = json.loads((bundled_site / "repo" / "paperproof-specimens+hardness-bench.json").read_text())
    readings = {e["entry"]: (e["reading"], e["paper"]) for e in twin["evaluations"]}
    assert readings == {"detection_auprc": ("flagged_positive", True), "noise_detection_ap": ("clean_positive", False)}
    page = (bundled_site / "repo" / "paperproof-specimens+hardness-bench" / "index.html").read_text()
    section = page[page.index('id="evaluation"'):]
    assert "<code>noise_detection_ap</code></a> computes AUPRC as <code>clean_positive</code>: it takes the clean " \
           "samples as the positive class" in section
