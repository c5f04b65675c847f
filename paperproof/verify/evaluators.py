"""Evaluation code is research code too: which AUROC or AUPRC an evaluator computes, and for which class.

H-CAT's headline table scores each hardness method by AUROC and AUPRC at finding the samples made hard.
A repository's own evaluator makes that choice in its code: which class is the positive one (the flagged
samples, or the clean ones) and which way a score is read. An entry given a score per sample and a mask of
flagged samples (`fixtures.synth`'s `mask`) that returns one number is compared, case by case, with every
reading of both figures, computed here from the same recipes (never from the sandbox's copy of them):

- `flagged_positive`: the flagged samples are the positives, a high score flags: what the planted-hardness
  figures of `verify.planted` compute, and what the papers report;
- `clean_positive`: the classes swapped, the clean samples are the positives;
- `*_reversed`: the score read the other way.

For AUROC, swapping the classes and reversing the score are the same thing. A reading other than the
paper's is a departure, with the line that makes it, both figures and what it changes for a reader.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from paperproof.catalogue.entry import Entry
from paperproof.catalogue.fixture_case import FixtureCase, FixtureSet
from paperproof.catalogue.run_result import EncodedValue, RunResult
from paperproof.catalogue.sample import Departure, Fidelity
from paperproof.fixtures.values import materialize
from paperproof.verify.planted import auprc, auroc

ATOL = 1e-6
MEASURES = frozenset({"auroc", "auprc"})
SOURCE = "H-CAT's evaluation (Seedat et al.): AUROC and AUPRC of finding the samples made hard"
Reading = tuple[str, str, bool, str]  # (measure, reading, the paper's, formula)
READINGS: tuple[Reading, ...] = (
    ("auprc", "flagged_positive", True, "AP(y = flagged, score)"),
    ("auprc", "clean_positive", False, "AP(y = clean, score)"),
    ("auprc", "flagged_positive_reversed", False, "AP(y = flagged, −score)"),
    ("auprc", "clean_positive_reversed", False, "AP(y = clean, −score)"),
    ("auroc", "flagged_positive", True, "AUROC(y = flagged, score)"),
    ("auroc", "swapped", False, "AUROC(y = clean, score) = 1 − AUROC(y = flagged, score)"),
)
DEPARTS = {
    "clean_positive": "takes the clean samples as the positive class, where the paper scores finding the flagged ones",
    "flagged_positive_reversed": "reads the score the other way: a low score flags a sample",
    "clean_positive_reversed": "takes the clean samples as the positive class and reads the score the other way",
    "swapped": "takes the clean samples as the positive class (the same as reading the score the other way)",
}
EFFECTS = {
    "clean_positive": "Its AUPRC says how well a score finds the clean samples: a score that finds no flagged sample "
                      "at all still gets about the clean share (near 1 when few are flagged), and the figures cannot "
                      "be set beside a paper's AUPRC of finding hard samples.",
    "flagged_positive_reversed": "A score that ranks the flagged samples highest gets a low figure: read as the paper "
                                 "reads them, its figures rank methods backwards.",
    "clean_positive_reversed": "Its AUPRC is of finding clean samples by a low score: not the figure a paper reports.",
    "swapped": "Its AUROC is one minus the paper's: a method that finds the flagged samples scores below one half.",
}
# Where the code makes its reading: a mask turned around (`== 0`, `~`, `1 -`, `logical_not`), a score negated.
_FLIP = {"clean_positive": r"==\s*0\b|~|\b1\s*-|logical_not|==\s*False|\bnot\b",
         "swapped": r"==\s*0\b|~|\b1\s*-|logical_not|==\s*False|\bnot\b",
         "flagged_positive_reversed": r"-\s*\w*score|argsort\(",
         "clean_positive_reversed": r"==\s*0\b|~|\b1\s*-|logical_not"}


def _inputs(case: FixtureCase) -> tuple[np.ndarray, np.ndarray] | None:
    """The score and the mask the case gave, made again from their recipes."""
    scores = next((a for a in case.args if a.spec.kind == "scores"), None)
    mask = next((a for a in case.args if a.spec.kind == "mask"), None)
    if scores is None or mask is None:
        return None
    raw = case.model_dump()
    values = np.asarray(materialize(scores.spec.model_dump(), raw), dtype=np.float64).reshape(-1)
    flagged = np.asarray(materialize(mask.spec.model_dump(), raw)).astype(bool).reshape(-1)
    return values, flagged


def _number(value: EncodedValue) -> float | None:
    if value.type in ("float", "int", "float64", "float32") and value.min is not None and value.min == value.max:
        return float(value.min)
    if value.shape in ([], [1]) and value.data and isinstance(value.data[0], (int, float)):
        return float(value.data[0])
    return None


def figures(scores: np.ndarray, flagged: np.ndarray) -> dict[tuple[str, str], float]:
    """Every reading of AUPRC and AUROC on one case."""
    readings: dict[tuple[str, str], Callable[[], float]] = {
        ("auprc", "flagged_positive"): lambda: auprc(scores, flagged),
        ("auprc", "clean_positive"): lambda: auprc(scores, ~flagged),
        ("auprc", "flagged_positive_reversed"): lambda: auprc(-scores, flagged),
        ("auprc", "clean_positive_reversed"): lambda: auprc(-scores, ~flagged),
        ("auroc", "flagged_positive"): lambda: auroc(scores, flagged),
        ("auroc", "swapped"): lambda: auroc(scores, ~flagged),
    }
    out = {}
    for key, compute in readings.items():
        try:
            out[key] = compute()
        except ValueError:  # a case with no flagged (or no clean) sample has no figure
            continue
    return out


def _lines(entry: Entry, mask: str, reading: str) -> tuple[list[int], bool]:
    marker = _FLIP.get(reading)
    if marker:
        for offset, line in enumerate(entry.source.splitlines()):
            code = line.split("#", 1)[0]
            if re.search(marker, code) and (mask in code or "score" in code):
                return [entry.lineno + offset, entry.lineno + offset], True
    return [entry.lineno, entry.end_lineno], False


def assess(entry: Entry, fixtures: FixtureSet, result: RunResult | None) -> list[Fidelity]:
    """The reading of AUPRC or AUROC an evaluator computes, when it is one of them on every typical case."""
    if result is None or not fixtures.cases:
        return []
    returned = {c.case_id: number for c in result.cases if c.outcome == "returned" and c.value is not None
                and (number := _number(c.value)) is not None}
    compared = [c for c in fixtures.cases if c.kind in ("typical", "edge") and c.case_id in returned]
    typical = [c for c in compared if c.kind == "typical"]
    if not typical or _inputs(typical[0]) is None:
        return []
    inputs = {c.case_id: made for c in compared if (made := _inputs(c)) is not None}
    per_case = {case_id: figures(*made) for case_id, made in inputs.items()}
    hits = {case_id: {k for k, v in found.items() if abs(v - returned[case_id]) <= ATOL}
            for case_id, found in per_case.items()}
    common = set.intersection(*(hits.get(c.case_id, set()) for c in typical))
    if not common:
        return []
    ranked = [r for r in READINGS if (r[0], r[1]) in common]
    measure, reading, paper, formula = sorted(ranked, key=lambda r: not r[2])[0]
    agreeing = [c for c in compared if (measure, reading) in hits.get(c.case_id, set())]
    finding = Fidelity(output="return value", metric=measure, matches=reading, source=SOURCE, paper=paper,
                       cases_matched=len(agreeing), cases=len(compared),
                       departures=[] if paper else [DEPARTS[reading]])
    if paper:
        return [finding]
    case = max(agreeing, key=lambda c: abs(per_case[c.case_id][measure, "flagged_positive"]
                                           - per_case[c.case_id][measure, reading]))
    ours, theirs = per_case[case.case_id][measure, "flagged_positive"], per_case[case.case_id][measure, reading]
    flagged = int(inputs[case.case_id][1].sum())
    mask = next(a.name for a in case.args if a.spec.kind == "mask")
    lines, located = _lines(entry, mask, reading)
    name = measure.upper()
    worked = Departure(
        lines=lines, located=located, paper_formula=next(r[3] for r in READINGS if r[0] == measure and r[2]),
        code_formula=formula,
        case_id=case.case_id, inputs=f"{flagged} of {case.dims['N']} samples flagged, a score per sample",
        paper_value=round(ours, 6), code_value=round(theirs, 6),
        worked=(f"case {case.case_id}, {flagged} of {case.dims['N']} samples flagged in `{mask}`: the {name} of "
                f"finding the flagged samples is {ours:.4g}; the code returns {theirs:.4g}"),
        same_ranking=False, effect=EFFECTS[reading])
    return [finding.model_copy(update={"worked": worked})]
