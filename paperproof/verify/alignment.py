"""Alignment as a behaviour: does each per-sample score belong to its sample?

Every entry that takes training dynamics, or is driven by a training run, is also run on the same case with
its samples in another order (`typical~permuted`: for a run, the same batches of the same samples, so the
training is identical and only the positions change). A score of sample i must move with sample i. One that
stays at its position scores the samples of a loader's order, not the samples themselves: a departure from
any paper's metric, charged with a worked case. A score that takes one value for every sample, where the
paper's metric varies on the same case, is a departure too (a tracker rebuilt each epoch has no variability).

Only outputs read as scores are charged: those recognised as a metric, or whose docstring or name says which
way is hard. An entry whose repeated run differed is not charged: its outputs move for other reasons.
"""

from __future__ import annotations

import re

import numpy as np

from paperproof.catalogue.entry import Entry
from paperproof.catalogue.fixture_case import FixtureCase, FixtureSet
from paperproof.catalogue.run_result import RunResult
from paperproof.catalogue.sample import Departure, Fidelity
from paperproof.fixtures.reorder import sample_permutation
from paperproof.verify.fidelity import channels, defined, paper_reference, quoted, series_of
from paperproof.verify.planted_scores import _named, orientation
from paperproof.verify.rank_correlation import spearman

ATOL, RTOL = 1e-6, 1e-5  # a reordered run is the same computation: only float summation order may differ
# A score that changed when its samples moved but still ranks them as before (|ρ| at least this against its
# samples' old scores) followed them, up to noise of its own; one that does not is charged.
FOLLOWS = 0.5
# Or it followed them more than it stayed where it was, by this much (ρ against its samples' old scores minus ρ
# against the old scores at its position): code whose own randomness is tied to positions (folds taken by
# position, a seeded shuffle) is noisier than a pass in training mode, but still scores its own samples.
LEADS = 0.25
SOURCE = "alignment check: the same case with its samples in another order"


# Counts and flags that one run may leave equal for every sample (every sample learned, none forgotten) even where
# the paper's fraction or count over the same run varies: a constant one is not charged.
COUNTS = frozenset({"correctness", "forgetfulness", "learning_time", "second_split_forgetting"})
# A random baseline says so: its scores are meant to belong to no sample.
RANDOM = re.compile(r"\brandom|random_|_random", re.IGNORECASE)


def _metric_of(entry: Entry, name: str, findings: list[Fidelity]) -> str | None:
    """The metric an output is read as: recognised, else named by the output or the entry; `per-sample score`
    for one read as a score without a metric's name; None for one not read as a score."""
    exact = next((f.metric for f in findings if f.output == name and f.found_by == "variants"), None)
    read = orientation(entry, name, findings, None)
    if not exact and not read:
        return None
    named = _named(name) if name != "return value" else None
    return exact or (read[2] if read else None) or named or _named(entry.name) or "per-sample score"


def _scores(entry: Entry, names: list[str], findings: list[Fidelity]) -> dict[str, str]:
    """The outputs read as scores, each with the metric it is; none for a random baseline, whose name or
    docstring's first line says it is random."""
    if RANDOM.search(entry.name) or RANDOM.search((entry.docstring or "").split("\n", 1)[0]):
        return {}
    return {name: metric for name in names if (metric := _metric_of(entry, name, findings))}


def _number(value: float) -> str:
    return f"{value:.4g}"


def misaligned(entry: Entry, fixtures: FixtureSet, result: RunResult | None,
               findings: list[Fidelity]) -> list[Fidelity]:
    """A finding for each score that did not follow its sample when the samples were reordered."""
    if result is None:
        return []
    got = {c.case_id: c for c in result.cases if c.outcome == "returned" and c.value is not None}
    values = {case_id: c.value for case_id, c in got.items() if c.value is not None}
    out = []
    for case in fixtures.cases:
        base = next((c for c in fixtures.cases if c.case_id == case.relation_of), None)
        permute = (case.transform or {}).get("permute")
        if base is None or permute is None or case.case_id not in got or base.case_id not in got:
            continue
        if got[base.case_id].repeat_equal is False:
            continue
        n = base.dims["N"]
        before = {ch.name: np.asarray(ch.values, dtype=np.float64) for ch in channels(values[base.case_id], n)}
        after = {ch.name: np.asarray(ch.values, dtype=np.float64) for ch in channels(values[case.case_id], n)}
        order = sample_permutation(permute, n)
        for name, metric in _scores(entry, sorted(set(before) & set(after)), findings).items():
            old, new = before[name], after[name]
            if np.allclose(new, old[order], atol=ATOL, rtol=RTOL, equal_nan=True) or np.allclose(old, old[0]):
                continue  # it follows its samples (or cannot show that it does not: one value for all)
            stays = bool(np.allclose(new, old, atol=ATOL, rtol=RTOL, equal_nan=True))
            rho = spearman(old[order], new)
            in_place = spearman(old, new)
            if not stays and (rho is None or abs(rho) >= FOLLOWS
                              or rho >= LEADS and rho - max(in_place or 0.0, 0.0) >= LEADS):
                continue  # it moved with its samples, up to noise of its own (a pass in training mode): not charged
            gap = np.where(np.isfinite(new) & np.isfinite(old[order]), np.abs(new - old[order]), -1.0)
            j = int(gap.argmax())
            where = (f"position {j} of case {case.case_id} holds sample {int(order[j])} of case {base.case_id}, "
                     f"which scored {_number(old[order[j]])} there; at position {j} the code gave {_number(new[j])}")
            worked = (f"{where}, the score position {j} had before the samples moved" if stays else where)
            cited, definition = quoted(metric)
            out.append(Fidelity(
                cited=cited, definition=definition, output=name, metric=metric, matches="follows_position" if stays else "does_not_follow_sample",
                source=SOURCE, paper=False, cases_matched=0, cases=1, found_by="reordering",
                departures=["scores do not belong to their samples: reordering the samples "
                            + ("left every score at its position" if stays else "did not move the scores with them")],
                worked=Departure(
                    lines=[entry.lineno, entry.end_lineno], located=False,
                    paper_formula="score(sample i) moves with sample i when the samples are reordered",
                    code_formula="score at position j, whichever sample is there" if stays else
                    "scores that do not move with their samples",
                    case_id=case.case_id, sample=j, inputs=f"the samples of case {base.case_id} reordered "
                    f"(seed {permute}){'; the same training run, batch for batch' if case.protocol else ''}",
                    paper_value=round(float(old[order[j]]), 6), code_value=round(float(new[j]), 6), worked=worked,
                    same_ranking=False, rank_correlation=None if rho is None else round(rho, 4),
                    effect="Each score is attached to another sample than the one it measured: ranking, filtering "
                           "or pruning by it acts on the wrong samples.",
                    severity="changes_ranking"),
            ))
    return out


def constant(entry: Entry, fixtures: FixtureSet, result: RunResult | None, findings: list[Fidelity]) -> list[Fidelity]:
    """A finding for each score named for a metric that gave every sample one value on a typical case where the
    paper's metric varies (and is defined)."""
    if result is None:
        return []
    got = {c.case_id: c.value for c in result.cases if c.outcome == "returned" and c.value is not None}
    typical = [c for c in fixtures.cases if c.kind == "typical" and c.case_id in got]
    out = []
    seen: set[str] = set()
    for case in typical:
        for channel in channels(got[case.case_id], case.dims["N"]):
            values = np.asarray(channel.values, dtype=np.float64)
            metric = _metric_of(entry, channel.name, findings)
            matched = any(f.output == channel.name and f.found_by == "variants" for f in findings)
            if channel.name in seen or metric is None or metric in COUNTS or matched or not np.isfinite(values).all() \
                    or not np.allclose(values, values[0]):
                continue
            found = _varying_reference(case, metric)
            if found is None:
                continue
            paper_name, reference = found
            i = int(np.abs(reference - values[0]).argmax())
            seen.add(channel.name)
            cited, definition = quoted(metric)
            out.append(Fidelity(
                cited=cited, definition=definition, output=channel.name, metric=metric, matches="constant", source="a score that never varies", paper=False,
                cases_matched=0, cases=len(typical), found_by="constancy",
                departures=[f"gives every sample the same value ({_number(values[0])}) where {metric} varies across "
                            "samples"],
                worked=Departure(
                    lines=[entry.lineno, entry.end_lineno], located=False,
                    paper_formula=f"{metric} ({paper_name}), which differs between samples on this case",
                    code_formula=f"{_number(values[0])} for every sample", case_id=case.case_id, sample=i,
                    inputs=f"case {case.case_id}", paper_value=round(float(reference[i]), 6),
                    code_value=round(float(values[i]), 6),
                    worked=f"sample {i} of case {case.case_id}: the paper scores {_number(reference[i])}, the code "
                           f"{_number(values[i])}, as it scores every sample",
                    same_ranking=False, rank_correlation=None,
                    effect="The score ranks no sample above another: it cannot be used to find hard samples.",
                    severity="changes_ranking"),
            ))
    return out


def _varying_reference(case: FixtureCase, metric: str) -> tuple[str, np.ndarray] | None:
    """The paper's metric on a case, on a series the entry saw, when it is defined and varies across samples."""
    for series in series_of(case):
        found = paper_reference(case, metric, series)
        if found is not None and defined(case, metric, series) and np.ptp(found[1]) > 1e-9:
            return found
    return None


def assess(entry: Entry, fixtures: FixtureSet, result: RunResult | None, findings: list[Fidelity]) -> list[Fidelity]:
    """Alignment and constancy departures of an entry's scores, beside its fidelity findings."""
    return misaligned(entry, fixtures, result, findings) + constant(entry, fixtures, result, findings)
