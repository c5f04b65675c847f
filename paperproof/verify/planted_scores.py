"""Planted-hardness figures for a sample: its per-sample outputs on the training run with hardness planted,
scored per kind and fraction against the planted indices, beside the reference core and the random floor.

Only the outputs come from the sandbox, and only as numbers: the planted indices are recomputed here from
the run's seed (`fixtures.training.planted`), and the reference figures from the same run trained here. The
orientation of each output is settled before any figure is computed, from the entry's docstring, the
metric it was recognised as, or its name, and the record says which; a score used backwards shows as an
AUROC below one half. Each kind is scored against the clean samples only, with a 95% interval on its
AUROC, and checked first on the run itself (`check_kinds`): a kind that no reference metric finds is
shown as a limit of the run, not as a failure of the code.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

import numpy as np

from paperproof.catalogue.entry import Entry
from paperproof.catalogue.fixture_case import FixtureCase, FixtureSet
from paperproof.catalogue.observed import Observation, OnPlanted
from paperproof.catalogue.planted_record import (
    Detection,
    KindCheck,
    Orientation,
    PlantedFigure,
    PlantedHardness,
    PlantedScore,
)
from paperproof.catalogue.run_result import RunResult
from paperproof.catalogue.sample import Fidelity
from paperproof.fixtures import training
from paperproof.fixtures.planted_cases import planted_fixtures
from paperproof.verify import planted
from paperproof.verify.fidelity import channels, rerun
from paperproof.verify.fidelity import orientation as metric_orientation
from paperproof.verify.metrics import DEFINITIONS
from paperproof.verify.recognise import Recognition

# A name that names a metric, longest first ("self_confidence" before "confidence").
NAMED_METRICS: tuple[tuple[str, str], ...] = (
    ("self_conf", "self_confidence"), ("threshold", "threshold_closeness"), ("confiden", "confidence"),
    ("variab", "variability"), ("correct", "correctness"), ("forget", "forgetfulness"), ("aleatoric", "aleatoric"),
    ("entropy", "entropy"), ("margin", "aum"), ("aum", "aum"), ("el2n", "el2n"), ("loss", "loss"),
)
DECLARED = re.compile(r"\b(higher|larger|greater|lower|smaller)\b[^.;\n]{0,30}?\b(harder|more difficult|hard|noisier)\b",
                      re.IGNORECASE)
HARD_WORDS = re.compile(r"hard|difficult|nois|mislabel|uncertain|ambigu|error", re.IGNORECASE)
DATA_MAP_FOUR = frozenset({"confidence", "variability", "correctness", "forgetfulness"})
# The reference metrics that say whether a planted kind can be found on a run at all, in the order of preference.
CHECK_METRICS: tuple[str, ...] = ("loss", "confidence", "aum", "el2n")


def fixtures_for(entry: Entry, fixtures: FixtureSet, result: RunResult | None, findings: list[Fidelity],
                 known: Recognition | None) -> FixtureSet | None:
    """The planted cases for an entry that returned, on a typical case, one value per sample that can be read
    one way or the other (`orientation`); None otherwise, so nothing is run that could not be scored."""
    if result is None:
        return None
    by_id = {c.case_id: c for c in fixtures.cases}
    for outcome in result.cases:
        case = by_id.get(outcome.case_id)
        if outcome.outcome != "returned" or outcome.value is None or case is None or case.kind != "typical":
            continue
        if any(orientation(entry, ch.name, findings, known) for ch in channels(outcome.value, case.dims["N"])):
            return planted_fixtures(fixtures)
    return None


def _case_dict(case: FixtureCase) -> dict:
    return case.model_dump(mode="json")


def _spec(case: FixtureCase) -> training.RunSpec:
    return training.RunSpec.from_case(_case_dict(case))


def masks(case: FixtureCase) -> dict[str, np.ndarray]:
    """Which samples of a planted case's run were made hard, per kind: recomputed from the seed, never read
    from the run."""
    return _kind_masks(_spec(case))


def _kind_masks(spec: training.RunSpec) -> dict[str, np.ndarray]:
    made = training.planted(spec)
    out = {}
    for kind in training.HARDNESS_KINDS:
        mask = np.zeros(spec.n, dtype=bool)
        mask[made.hard.get(kind, [])] = True
        if 0 < mask.sum() < spec.n:
            out[kind] = mask
    return out


def _as_record(found: planted.Detection) -> Detection:
    return Detection(auroc=found.auroc, auprc=found.auprc, auroc_low=found.auroc_low, auroc_high=found.auroc_high)


@lru_cache(maxsize=8)
def _trained(case_json: str) -> tuple[np.ndarray, np.ndarray]:
    from paperproof.fixtures.values import case_dynamics

    case = json.loads(case_json)
    if case.get("protocol"):
        evaluated, _, observed = rerun(training.RunSpec.from_case(case))
        return evaluated, observed
    with training.single_threaded():  # a planted case's dynamics come from a run trained here
        return case_dynamics(case)


def _dynamics(case_json: str) -> tuple[np.ndarray, np.ndarray]:
    """The evaluated logits [E, N, C] and observed labels [N] of a planted case's run, trained here once,
    single-threaded (what `training.train(spec).dynamics()` gives), copied out."""
    logits, labels = _trained(case_json)
    return logits.copy(), labels.copy()


def reference_check(logits: np.ndarray, labels: np.ndarray, kinds: dict[str, np.ndarray],
                    fraction: float) -> list[KindCheck]:
    """Per planted kind, how well the reference core's loss, confidence, AUM and EL2N on the run's evaluated
    logits find it (AUROC with its interval, against the clean samples only), and whether any of them beats
    random: its whole 95% interval above one half."""
    import torch

    from paperproof.verify import metrics

    z, y = torch.from_numpy(np.asarray(logits, dtype=np.float64)), torch.from_numpy(np.asarray(labels, dtype=np.int64))
    values = {name: getattr(metrics, name)(z, y).double().numpy() for name in CHECK_METRICS}
    checks = []
    for kind, mask in kinds.items():
        keep = planted.negatives(kind, kinds)
        found = {name: planted.detect(v, mask, metric_orientation(name), keep) for name, v in values.items()}
        best = max(found, key=lambda name: (found[name].auroc_low, found[name].auroc))  # the first on a tie
        checks.append(KindCheck(kind=kind, fraction=fraction, positives=found[best].positives, samples=mask.size,
                                negatives=found[best].samples - found[best].positives,
                                metrics={n: _as_record(d) for n, d in found.items()},
                                best=best, found=any(d.beats_random for d in found.values())))
    return checks


def check_run(spec: training.RunSpec) -> list[KindCheck]:
    """`reference_check` on a planted run trained here, single-threaded, from its spec."""
    with training.single_threaded():
        logits, labels = training.train(spec).dynamics()
    kinds = _kind_masks(spec)
    share = spec.planted if spec.planted is not None else training.PLANTED_SHARE * len(training.HARDNESS_KINDS)
    return reference_check(logits, labels, kinds, share)


@lru_cache(maxsize=32)
def _checks(case_json: str) -> tuple[KindCheck, ...]:
    case = json.loads(case_json)
    logits, labels = _dynamics(case_json)
    return tuple(reference_check(logits, labels, masks(FixtureCase.model_validate(case)), case["dims"]["P"] / 100))


def check_kinds(case: FixtureCase) -> list[KindCheck]:
    """Whether each kind of a planted case can be found at all on its run (`reference_check`), cached."""
    return list(_checks(json.dumps(_case_dict(case), sort_keys=True)))


@lru_cache(maxsize=32)
def _reference(case_json: str, metric: str) -> tuple[str, np.ndarray] | None:
    """The reference core's paper variant of `metric` on the case's run, trained here, single-threaded."""
    import torch

    from paperproof.verify.metrics import VARIANTS
    from paperproof.verify.metrics.onepass import training_dynamics_onepass

    logits, labels = _dynamics(case_json)
    variant = next((v for v in VARIANTS.get(metric, ()) if v.paper), None)
    if variant is None:
        return None
    if metric in DATA_MAP_FOUR:
        values = training_dynamics_onepass(logits.astype(np.float32), labels)[metric]
    else:
        values = variant.compute(torch.from_numpy(logits), torch.from_numpy(labels))
    return f"{metric} ({variant.name})", values.double().numpy()


def _named(text: str) -> str | None:
    low = text.lower()
    return next((metric for part, metric in NAMED_METRICS if part in low), None)


def orientation(entry: Entry, output: str, findings: list[Fidelity],
                known: Recognition | None) -> tuple[Orientation, str, str | None] | None:
    """How to read an output (orientation, where that came from, the metric it is), before any scoring."""
    exact = next((f for f in findings if f.output == output and f.found_by == "variants"), None)
    metric = exact.metric if exact else known.metric if known and known.output == output else None
    declared = DECLARED.search(entry.docstring or "")
    if declared:
        way: Orientation = "low_is_hard" if declared.group(1).lower() in ("lower", "smaller") else "high_is_hard"
        return way, f'its docstring says "{declared.group(0)}"', metric
    if exact:
        return metric_orientation(exact.metric, exact.matches), f"it computes {exact.metric} ({exact.matches})", exact.metric
    if known and known.output == output and known.metric in DEFINITIONS:
        way = metric_orientation(known.metric, known.variant)
        if (known.rho or 0.0) < 0:
            flipped: Orientation = "low_is_hard" if way == "high_is_hard" else "high_is_hard"
            return flipped, f"it ranks samples in the reverse order of {known.metric}", known.metric
        return way, f"it ranks samples as {known.metric} does", known.metric
    for text, whose in ((output, "output"), (entry.name, "entry")):
        named = _named(text) if text != "return value" else None
        if named:
            return metric_orientation(named), f"its {whose} name names {named}", None
    if HARD_WORDS.search(entry.name) or HARD_WORDS.search(output):
        return "high_is_hard", "its name says it scores hardness", None
    return None


def observed_on_planted(entry: Entry, observed: Observation | None, findings: list[Fidelity],
                        known: Recognition | None) -> Observation | None:
    """The driver's call with `on_planted`: how the score the repository's own pipeline computed on a planted
    stand-in finds each planted kind, read in the orientation this entry's run fixed (`orientation`); unchanged
    when the driver used no stand-in or its score was not one value per planted sample."""
    if observed is None or observed.values is None or not observed.planted_kinds:
        return observed
    found = np.asarray(observed.values, dtype=np.float64)
    way = orientation(entry, "return value", findings, known)
    if way is None:
        on = OnPlanted(samples=found.size, orientation=None, orientation_basis="not scored: neither its docstring, "
                       "a recognised metric nor its name says whether a high value means hard")
        return observed.model_copy(update={"on_planted": on})
    direction, basis, _ = way
    kinds = {}
    for kind, indices in observed.planted_kinds.items():
        mask = np.zeros(found.size, dtype=bool)
        mask[[i for i in indices if 0 <= i < found.size]] = True
        kinds[kind] = mask
    figures = {}
    for kind, mask in sorted(kinds.items()):
        try:
            figures[kind] = _as_record(planted.detect(found, mask, direction, planted.negatives(kind, kinds)))
        except ValueError:  # scores that are not finite, or a kind with no planted sample
            continue
    on = OnPlanted(samples=found.size, orientation=direction, orientation_basis=basis, figures=figures)
    return observed.model_copy(update={"on_planted": on})


def score(entry: Entry, fixtures: FixtureSet, result: RunResult | None, findings: list[Fidelity],
          known: Recognition | None) -> PlantedHardness | None:
    """The planted-hardness record of one entry from its run on the planted cases; None when it has no
    per-sample output on every planted case."""
    if result is None or not fixtures.cases:
        return None
    values = {c.case_id: c.value for c in result.cases if c.outcome == "returned" and c.value is not None}
    per_case = {}
    for case in fixtures.cases:
        if case.case_id not in values:
            return None
        per_case[case.case_id] = {ch.name: np.asarray(ch.values, dtype=np.float64)
                                  for ch in channels(values[case.case_id], case.dims["N"])}
    names = [name for name in per_case[fixtures.cases[0].case_id] if all(name in found for found in per_case.values())]
    if not names:
        return None
    checks = {case.case_id: check_kinds(case) for case in fixtures.cases}
    findable = {(case.case_id, c.kind): c.found for case in fixtures.cases for c in checks[case.case_id]}
    scores, unread = [], []
    flagged: list[int] = []
    for name in names:
        way = orientation(entry, name, findings, known)
        if way is None:
            unread.append(name)
            continue
        direction, basis, metric = way
        figures, reference_name = [], None
        for case in fixtures.cases:
            found = per_case[case.case_id][name]
            reference = _reference(json.dumps(_case_dict(case), sort_keys=True), metric) if metric else None
            reference_name = reference[0] if reference else None
            kinds = masks(case)
            for kind, mask in kinds.items():
                if not np.isfinite(found).all():
                    break
                keep = planted.negatives(kind, kinds)  # this kind's samples and the clean ones
                mine = planted.detect(found, mask, direction, keep)
                ref = planted.detect(reference[1], mask, metric_orientation(metric), keep) \
                    if reference and metric else None
                low = planted.floor(mask, keep=keep)
                figures.append(PlantedFigure(
                    kind=kind, fraction=case.dims["P"] / 100, auroc=mine.auroc, auprc=mine.auprc,
                    orientation=direction, positives=mine.positives, samples=mask.size,
                    reference=_as_record(ref) if ref else None, floor=_as_record(low),
                    auroc_low=mine.auroc_low, auroc_high=mine.auroc_high, negatives=mine.samples - mine.positives,
                    findable=findable.get((case.case_id, kind))))
        if not figures:
            unread.append(name)
            continue
        if not flagged:
            last = fixtures.cases[-1]
            found = per_case[last.case_id][name]
            hard = -found if direction == "low_is_hard" else found
            count = int(sum(m.sum() for m in masks(last).values()))
            flagged = sorted(int(i) for i in np.argsort(-hard, kind="stable")[:count])
        scores.append(PlantedScore(output=name, metric=metric, reference=reference_name, orientation=direction,
                                   orientation_basis=basis, figures=figures))
    if not scores and not unread:
        return None
    first = fixtures.cases[0].dims
    note = (f"Not scored: {', '.join(unread)}: neither its docstring, a recognised metric nor its name says whether "
            "a high value means hard, and it is not guessed from the figures.") if unread else None
    fractions = [c.dims["P"] / 100 for c in fixtures.cases]
    run = (f"{'driven through its protocol on ' if fixtures.cases[0].protocol else ''}a seeded training run of "
           f"{first['N']} samples, {first['C']} classes, {first['E']} epochs (seed {fixtures.cases[0].seed}), with "
           f"{' and '.join(f'{f:.0%}' for f in fractions)} of the samples made hard, split evenly over "
           f"{len(training.HARDNESS_KINDS)} kinds")
    return PlantedHardness(run=run, fractions=fractions, scores=scores, flagged=flagged, note=note,
                           checks=[c for case in fixtures.cases for c in checks[case.case_id]])
