"""Departures explained on the specimens: line range, the two formulas, a worked case from the run, the effect."""

from __future__ import annotations

import math

import numpy as np
import pytest

from paperproof.catalogue.extract import extract_module
from paperproof.fixtures.synth import CASE_PLAN
from paperproof.fixtures.values import case_dynamics, softmax
from paperproof.verify.departures import locate, through_helper

FORK = "paperproof-specimens/dynamics-maps-fork"


def worked(record):
    (finding,) = [f for f in record["fidelity"] if not f["paper"] and f["found_by"] == "variants"]
    assert finding["worked"] is not None
    return finding["worked"]


def source_line(record, line):
    from paperproof.catalogue.archive import bundled_root

    path = bundled_root() / "repos" / record["repo"].replace("/", "+") / record["path"]
    return path.read_text().splitlines()[line - 1]


def case_of(case_id):
    seed, dims = next((seed, dims) for cid, _, seed, dims in CASE_PLAN if cid == case_id)
    logits, labels = case_dynamics({"seed": seed, "dims": dims})
    return logits, labels, dims


def test_every_departure_of_a_specimen_has_lines_formulas_and_a_worked_case(samples):
    departing = [r for r in samples.values() if any(not f["paper"] and f["found_by"] == "variants" for f in r["fidelity"])
                 and r["repo"].startswith("paperproof-specimens/")]  # shipped real repositories: no source here
    assert len(departing) >= 5
    for record in departing:
        w = worked(record)
        assert w["located"] and record["lineno"] <= w["lines"][0] <= w["lines"][1] <= record["end_lineno"]
        head = f"sample {w['sample']} of case" if w["sample"] is not None else f"case {w['case_id']}, "  # an evaluator's
        assert w["paper_formula"] != w["code_formula"] and w["worked"].startswith(head)
        assert w["effect"]
        if w["helper"]:  # the line in the entry calls the helper; the helper's line carries the expression
            assert w["helper"] in source_line(record, w["lines"][0])
            assert not record["lineno"] <= w["helper_lines"][0] <= record["end_lineno"]


def test_a_departure_in_a_helper_of_the_same_file_points_at_the_call_and_the_helper(samples):
    record = samples[FORK, "stat_a"]
    w = worked(record)
    assert w["helper"] == "_times_right"
    assert "return _times_right(hits)" in source_line(record, w["lines"][0])
    assert ".sum(0)" in source_line(record, w["helper_lines"][0])
    assert w["code_formula"] == "#{e : argmax pₑ = y}" and w["code_value"] == w["paper_value"] * case_of(w["case_id"])[2]["E"]


def test_through_helper_finds_the_helper_named_for_the_metric_first():
    code = ("def _total(v):\n    return v.sum()\n\n\ndef _correct_count(trend):\n    return sum(trend)\n\n\n"
            "def metrics(dynamics):\n    t = _total(dynamics)\n    c = _correct_count(dynamics)\n    return t, c\n")
    entry = next(e for e in extract_module(code, repo="o/r", path="m.py") if e.name == "metrics")
    assert locate(entry, "count_argmax") == ([entry.lineno, entry.end_lineno], False)
    assert through_helper(entry, "correctness", "count_argmax") == (11, "_correct_count", 6)
    assert through_helper(entry, "correctness", "ddof1") is None


def test_the_forgetting_departure_worked_on_a_never_learned_sample(samples):
    record = samples[FORK, "forgetting_events"]
    w = worked(record)
    assert "/ n_epochs" in source_line(record, w["lines"][0])
    assert w["paper_formula"].endswith("1000 if never correct") and w["code_formula"].endswith("0 if never correct")
    logits, labels, _ = case_of(w["case_id"])
    hits = logits.argmax(-1)[:, w["sample"]] == labels[w["sample"]]
    assert not hits.any() and w["gold"] == labels[w["sample"]]  # never learned: 1000 against 0, the widest gap
    assert (w["paper_value"], w["code_value"]) == (1000.0, 0.0)
    assert not w["same_ranking"] and w["sample"] in w["moved"]
    assert "the hardest examples rank as the least forgettable" in w["effect"]


def test_the_correctness_departure_shows_an_epoch_the_rules_disagree_on(samples):
    record = samples[FORK, "correctness_scores"]
    w = worked(record)
    assert "> 0.5" in source_line(record, w["lines"][0])
    logits, labels, dims = case_of(w["case_id"])
    epoch = int(w["inputs"].split()[1])
    probs = softmax(logits)[epoch, w["sample"]]
    gold = labels[w["sample"]]
    assert probs.argmax() == gold and probs[gold] <= 0.5  # the paper counts it, the code does not
    shown = [float("0" + v) for v in w["inputs"].split("[")[1].rstrip("]").split(", ")]
    assert np.allclose(shown, probs, atol=0.005)
    everything = softmax(logits)[:, w["sample"]]
    assert math.isclose(w["paper_value"], float((everything.argmax(-1) == gold).mean()), abs_tol=1e-6)
    assert math.isclose(w["code_value"], float((everything[:, gold] > 0.5).mean()), abs_tol=1e-6)
    assert "the paper counts this epoch correct (argmax), the code does not (p > 0.5)" in w["worked"]


def test_the_variability_departure_keeps_the_ranking(samples):
    record = samples[FORK, "variability_scores"]
    w = worked(record)
    assert "ddof=1" in source_line(record, w["lines"][0])
    _, _, dims = case_of(w["case_id"])
    e = dims["E"]
    assert math.isclose(w["code_value"], w["paper_value"] * math.sqrt(e / (e - 1)), rel_tol=1e-4)
    assert w["same_ranking"] and w["moved"] == [] and "ranking of the samples is the same" in w["effect"]


def test_a_count_is_the_fraction_times_the_epochs(samples):
    w = worked(samples["paperproof-specimens/dynamics-maps", "correctness_counts"])
    _, _, dims = case_of(w["case_id"])
    assert w["code_value"] == pytest.approx(w["paper_value"] * dims["E"]) and w["same_ranking"]


def test_locate_skips_docstrings_and_comments_and_falls_back_to_the_entry():
    code = ('def f(p):\n    """Uses ddof=1 in prose only."""\n    # ddof=1 here too\n'
            '    s = p.std(axis=0, ddof=1)\n    return s\n')
    (entry,) = extract_module("\n\n" + code, repo="o/r", path="m.py")
    assert locate(entry, "ddof1") == ([entry.lineno + 3, entry.lineno + 3], True)
    assert locate(entry, "count_argmax") == ([entry.lineno, entry.end_lineno], False)


def test_top_overlap_counts_the_papers_hardest_tenth_that_the_code_also_ranks_hardest():
    from paperproof.verify.departures import top_overlap

    paper = np.arange(20, dtype=float)  # high is hard: samples 18 and 19 are the hardest tenth
    assert top_overlap(paper, paper * 3.0, True) == 1.0
    assert top_overlap(paper, -paper, True) == 0.0
    assert top_overlap(paper, np.r_[paper[:18], 0.0, 19.0], True) == 0.5
    assert top_overlap(paper, paper, False) == 1.0  # low is hard: samples 0 and 1
    assert top_overlap(paper[:9], paper[:9], True) is None  # a tenth of nine samples is no sample


def test_the_paper_page_lists_the_departures_that_change_the_ranking_first():
    from paperproof.build.records import severity_rank
    from paperproof.catalogue.sample import Departure, Fidelity

    def finding(severity, rho, departs=True):
        worked = Departure(lines=[1, 1], located=False, paper_formula="p", code_formula="c", case_id="typical",
                           inputs="", paper_value=0.0, code_value=1.0, worked="", same_ranking=severity == "rescales",
                           rank_correlation=rho, effect="", severity=severity)
        return Fidelity(output="o", metric="m", matches=f"{severity}{rho}", source="", paper=not departs,
                        cases_matched=1, cases=1, departures=["d"] if departs else [], worked=worked)

    found = [finding("rescales", 1.0), finding("changes_ranking", 0.9), finding("changes_ranking", -0.2),
             finding("rescales", 1.0, departs=False)]
    ordered = sorted(found, key=severity_rank)
    assert [f.matches for f in ordered] == ["changes_ranking-0.2", "changes_ranking0.9", "rescales1.0", "rescales1.0"]
    assert ordered[-1].departures == []


def test_a_score_that_follows_the_shuffled_loader_is_shown_departing_on_a_specimen(samples):
    record = samples["paperproof-specimens/hardness-bench", "LossRecorder"]
    (finding,) = [f for f in record["fidelity"] if f["found_by"] == "reordering"]
    w = finding["worked"]
    assert finding["matches"] == "follows_position" and finding["departures"]
    assert w["case_id"] == "typical~permuted" and w["paper_value"] != w["code_value"]
    assert record["checked"] == "paper"
    faithful = samples["paperproof-specimens/hardness-bench", "IndexedLossRecorder"]
    assert [(f["metric"], f["departures"]) for f in faithful["fidelity"]] == [("loss", [])]
