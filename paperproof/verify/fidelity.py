"""Fidelity: does an entry compute what the paper defines? Checked against the metric core.

An entry is recognised by what it returned on the shared training-dynamics cases, not by its
name: every per-sample output (the return value, each column of a DataFrame, each value of a dict,
each item of a tuple) is compared with every published variant of every hardness metric, computed
by the reference core on the same logits and labels. A variant that matches on every typical case
identifies the metric; the finding records which definition that is, on how many cases it
matched, and where it departs from the paper's definition.

An entry driven by a training loop (a protocol case) saw no arrays of ours: it saw a real training
run. That run is trained again here, outside the sandbox (seeded, single-threaded, and unsteerable by
the entry's hooks: `fixtures.training`), and the variants are computed on both of its series of
logits: those of each epoch's evaluation on the whole set, and those of the epoch's own training
forward passes (what a per-batch hook sees). Nothing the sandbox returned but the outputs is believed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np

from paperproof.catalogue.fixture_case import FixtureCase, FixtureSet
from paperproof.catalogue.run_result import EncodedValue, RunResult
from paperproof.catalogue.sample import Estimate, Fidelity
from paperproof.fixtures import keras_run, training
from paperproof.fixtures.kinds import DYNAMICS_KINDS
from paperproof.fixtures.values import case_dynamics
from paperproof.runner.protocols import chosen_epochs
from paperproof.verify import feature_references, run_references
from paperproof.verify.metrics.variants import Orientation

ATOL, RTOL = 1e-5, 1e-4
# A key or column that names an identifier (ids, indices, labels passed through): never a score.
IDENTIFIER = re.compile(r"(^|[_\s.-])(ids?|idx|index|indices|guids?|uids?|keys?|labels?|targets?|gold|y|"
                        r"classes|class_ids?|names?)$", re.IGNORECASE)
Series = Literal["evaluated", "training"]
Variant = tuple[str, str, Series | None]  # (metric, variant, the run's series of logits; None: a case's own arrays)


@dataclass(frozen=True)
class Channel:
    """One per-sample output of an entry, named for pages: `return value`, `column confidence`."""

    name: str
    values: tuple[float, ...]


def identifies(values: tuple[float, ...]) -> bool:
    """Whether per-sample values are the samples' own positions, 0 … N−1 in order (indices or ids passed
    through), not scores. A permutation is left alone: a rank of each sample's hardness is a score."""
    return len(values) > 2 and all(v == i for i, v in enumerate(values))


PER_EPOCH = " per epoch"  # the suffix of a channel of one value per epoch and sample, [E, N] flattened


def channels(value: EncodedValue, n: int, prefix: str = "", epochs: int | None = None) -> list[Channel]:
    """Every numeric output of length N inside a returned value that could be a score: identifiers (a key or
    column named for one, or values that are each position once) are left out, so they are never scored. Given
    `epochs`, an output of one value per epoch and sample ([E, N]) is a channel too, named `… per epoch`."""
    found: list[Channel] = []
    name = prefix or "return value"
    if value.data is not None and value.shape is not None and len(value.shape) in (1, 2) and value.shape[0] == n \
            and (len(value.shape) == 1 or value.shape[1] == 1) and not value.truncated:
        values = tuple(math.nan if v is None else float(v) for v in value.data)
        if not identifies(values):
            found.append(Channel(name, values))
    elif epochs and value.data is not None and value.shape == [epochs, n] and n > 1 and not value.truncated:
        found.append(Channel(name + PER_EPOCH, tuple(math.nan if v is None else float(v) for v in value.data)))
    for key, sub in (value.values or {}).items():
        if IDENTIFIER.search(str(key).strip()):
            continue
        kind = "column" if value.type == "DataFrame" else "key"
        found.extend(channels(sub, n, f"{prefix + ' ' if prefix else ''}{kind} {key}", epochs))
    for index, sub in enumerate(value.items or []):
        found.extend(channels(sub, n, f"{prefix + ' ' if prefix else ''}item {index}", epochs))
    return found


def comparable(fixtures: FixtureSet) -> bool:
    """Whether the cases give the entry training dynamics: arrays of ours, or a training run it was driven by (a
    Keras run only where TensorFlow is here to train it again; never a class that trains itself)."""
    if any(_keras(c) for c in fixtures.cases) and not keras_run.available():
        return False
    if any((c.protocol or {}).get("kind") == "fits" for c in fixtures.cases):
        return False  # it trained the model itself, in its own loop: no run of ours saw the same training
    return any(c.protocol for c in fixtures.cases) or bool(
        {a.spec.kind for c in fixtures.cases for a in _all_args(c)} & DYNAMICS_KINDS)


def _keras(case: FixtureCase) -> bool:
    return bool(case.protocol) and (case.protocol or {}).get("kind") == "keras_callback"


def series_of(case: FixtureCase) -> tuple[Series | None, ...]:
    """The series of logits an entry may have computed on: a Keras callback sees its model's predictions."""
    if _keras(case):
        return ("evaluated",)
    return ("evaluated", "training") if case.protocol else (None,)


@lru_cache(maxsize=8)
def rerun(spec: training.RunSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A protocol case's run trained again here: logits after each epoch, of each epoch's training passes, labels.
    The run is the one the model-based references are computed on (`run_references.trained`), trained once."""
    run = run_references.trained(spec)
    evaluated, labels = run.dynamics()
    trained, _ = run.training_dynamics()
    for array in (evaluated, trained, labels):
        array.setflags(write=False)
    return evaluated, trained, labels


@lru_cache(maxsize=8)
def _keras_rerun(spec: training.RunSpec) -> tuple[np.ndarray, np.ndarray]:
    """A Keras callback's run trained again here: its model's log-probabilities after each epoch, and labels."""
    logits, labels = keras_run.dynamics(spec)
    logits.setflags(write=False)
    labels.setflags(write=False)
    return logits, labels


def _case_key(case: FixtureCase) -> tuple:
    """What makes a case's logits: its run's spec (a protocol case), else its seed, dims and transform."""
    if case.protocol:
        return ("keras" if _keras(case) else "run", training.RunSpec.from_case(case.model_dump(mode="json")))
    return case.seed, tuple(sorted(case.dims.items())), tuple(sorted((case.transform or {}).items()))


def _logits_for(key: tuple, series: Series | None) -> tuple[np.ndarray, np.ndarray]:
    if key[0] == "keras":
        logits, labels = _keras_rerun(key[1])
        return logits.copy(), labels.copy()
    if key[0] == "run":
        evaluated, trained, labels = rerun(key[1])
        return (trained if series == "training" else evaluated).copy(), labels.copy()
    seed, dims, transform = key
    return case_dynamics({"seed": seed, "dims": dict(dims), "transform": dict(transform)})


def case_logits(case: FixtureCase, series: Series | None) -> tuple[np.ndarray, np.ndarray]:
    """The logits [E, N, C] and labels [N] the entry saw on a case (for a protocol case, one series of its run)."""
    return _logits_for(_case_key(case), series)


@lru_cache(maxsize=64)
def _variants(key: tuple, series: Series | None, logits_dtype: str, per_epoch: bool = False
              ) -> dict[tuple[str, str], np.ndarray]:
    """Every variant of every metric on one case's logits, as the entry saw them (dtype included); `per_epoch`:
    each computed on every epoch alone and the epochs' values laid end to end ([E, N] flattened)."""
    import torch

    from paperproof.verify.metrics import VARIANTS

    logits, labels = _logits_for(key, series)
    z = torch.from_numpy(logits.astype(logits_dtype).astype(np.float64))
    y = torch.from_numpy(labels)
    slices = [z[e:e + 1] for e in range(z.shape[0])] if per_epoch else [z]
    out = {}
    for metric, variants in VARIANTS.items():
        for variant in variants:
            try:
                out[metric, variant.name] = np.concatenate([variant.compute(part, y).double().numpy() for part in slices])
            except (RuntimeError, ValueError):
                continue
    return out


def references(case: FixtureCase, per_epoch: bool = False) -> dict[Variant, np.ndarray]:
    """Every variant of every metric on every series of logits the entry saw on the case (`per_epoch`: on each
    epoch alone, for an output of one value per epoch and sample); for a case driven by a run of ours, the
    metrics that need its model too (`verify.run_references`), on the model the entry's hooks saw."""
    found = {(metric, name, series): values for series in series_of(case)
             for (metric, name), values in _variants(_case_key(case), series, _logits_dtype(case), per_epoch).items()}
    model = _model_references(case) if not per_epoch else {}
    valued = feature_references.feature_variants(case) if not per_epoch else {}
    return {**found, **{(metric, name, "evaluated"): values for (metric, name), values in model.items()},
            **{(metric, name, None): values for (metric, name), values in valued.items()}}


def _model_references(case: FixtureCase) -> dict[tuple[str, str], np.ndarray]:
    """The model-based variants on a protocol case's run (a run of ours, not a Keras one), with VoG's snapshots
    at the epochs the entry's hooks were called."""
    key = _case_key(case)
    if key[0] != "run" or (case.protocol or {}).get("kind") == "module":
        return {}
    spec: training.RunSpec = key[1]
    hooks = (case.protocol or {}).get("hooks", [])
    epochs = tuple(sorted(chosen_epochs(spec.epochs))) if any(when == "chosen" for _, when in hooks) else None
    return run_references.model_variants(spec, epochs)


@dataclass(frozen=True)
class Known:
    """What the catalogue knows of one variant, from either table: whether it is the paper's, its source, how it
    departs, and whether that is only which epoch it scores."""

    paper: bool
    source: str
    departure: str
    timing: bool
    driven: bool = False
    orientation: Orientation | None = None  # where the variant reads the other way from its metric


def known(metric: str, name: str) -> Known | None:
    from paperproof.verify.metrics import VARIANTS

    for variant in VARIANTS.get(metric, ()):
        if variant.name == name:
            return Known(variant.paper, variant.source, variant.departure, variant.timing, variant.driven,
                         variant.orientation)
    for table in (run_references.MODEL_VARIANTS, feature_references.FEATURE_VARIANTS):
        for model in table.get(metric, ()):
            if model.name == name:
                return Known(model.paper, model.source, model.departure, model.timing, orientation=model.orientation)
    return None


def orientation(metric: str, variant: str | None = None) -> Orientation:
    """Which end of a metric's values the hard samples are at: its paper's reading (`DEFINITIONS`), unless the
    variant reads the other way (H-CAT's cosine similarity where Sorscher et al. take a distance)."""
    from paperproof.verify.metrics import DEFINITIONS

    found = known(metric, variant) if variant else None
    return found.orientation if found and found.orientation else DEFINITIONS[metric].orientation


def _order() -> list[tuple[str, str]]:
    from paperproof.verify.metrics import VARIANTS

    tables = (VARIANTS, run_references.MODEL_VARIANTS, feature_references.FEATURE_VARIANTS)
    return [(m, v.name) for table in tables for m, vs in table.items() for v in vs]


def _same(a: np.ndarray, b: tuple[float, ...]) -> bool:
    other = np.asarray(b, dtype=np.float64)
    return a.shape == other.shape and bool(np.allclose(a, other, atol=ATOL, rtol=RTOL, equal_nan=True))


def _all_args(case: FixtureCase) -> list:
    return [*case.args, *(a for args in case.method_args.values() for a in args)]


def _logits_dtype(case: FixtureCase) -> str:
    for arg in _all_args(case):
        if arg.spec.kind in ("logits", "probs"):
            return str(arg.spec.params.get("dtype", "float32"))
    return "float32" if any(a.spec.kind in ("td_dict", "td_frame") for a in _all_args(case)) else "float64"


def assess(fixtures: FixtureSet, result: RunResult | None) -> list[Fidelity]:
    """Findings for each recognised per-sample output; empty when nothing is recognised."""
    if result is None or not fixtures.cases or not comparable(fixtures):
        return []

    outcomes = {c.case_id: c.value for c in result.cases if c.outcome == "returned" and c.value is not None}
    compared = [c for c in fixtures.cases if c.kind in ("typical", "edge") and c.case_id in outcomes]
    typical = [c for c in compared if c.kind == "typical"]
    if not typical:
        return []
    matches: dict[str, dict[str, set[Variant]]] = {}  # channel -> case -> matching variants
    outputs: dict[str, dict[str, tuple[float, ...]]] = {}  # channel -> case -> its values
    for case in compared:
        reference = references(case)
        for channel in channels(outcomes[case.case_id], case.dims["N"], epochs=case.dims.get("E")):
            against = references(case, per_epoch=True) if channel.name.endswith(PER_EPOCH) else reference
            hits = {k for k, v in against.items() if _same(v, channel.values)}
            matches.setdefault(channel.name, {})[case.case_id] = hits
            outputs.setdefault(channel.name, {})[case.case_id] = channel.values
    findings = []
    for name, per_case in matches.items():
        if not all(c.case_id in per_case for c in typical):
            continue
        common = set.intersection(*(per_case[c.case_id] for c in typical))
        if not common:
            estimate = _estimate(name, outputs[name], compared, typical)
            if estimate is not None:
                findings.append(estimate)
            continue
        order = _order()
        ranked = sorted(common, key=lambda k: (order.index(k[:2]), k[2] or ""))
        paper_hits = [k for k in ranked if (found := known(k[0], k[1])) is not None and found.paper]
        chosen = paper_hits[0] if paper_hits else ranked[0]
        metric, variant_name, series = chosen
        variant = known(metric, variant_name)
        assert variant is not None
        agreeing = [c.case_id for c in compared if chosen in per_case.get(c.case_id, set())]
        source = variant.source
        departures: list[str]
        if variant.paper:
            departures = []
        elif variant.timing and not any(chose_epoch(c) for c in compared):
            departures = []  # it scores the epoch it was given: when to score is its caller's choice
            source += "; it was given one epoch's predictions, so when to score is its caller's choice"
        elif variant.driven and not any(c.protocol for c in compared):
            departures = []  # it computes on the predictions it was handed: which they are is its caller's choice
            source += "; it was handed its predictions, so whether they are out of sample is its caller's choice"
        else:
            departures = [variant.departure]
        # A case where the paper's metric is undefined (AUM with one class) is never charged.
        differing = [c.case_id for c in compared if c.case_id not in agreeing and defined(c, metric, series)]
        if differing:
            departures.append(f"differs from {variant_name} on case{'s' if len(differing) > 1 else ''} {', '.join(differing)}")
        cited, definition = quoted(metric)
        findings.append(Fidelity(
            cited=cited, definition=definition, output=name, metric=metric, matches=variant_name, source=source, paper=variant.paper,
            cases_matched=len(agreeing), cases=len(compared), departures=departures, dynamics=series,
            orientation=orientation(metric, variant_name),
        ))
    return findings


def _estimate(name: str, outputs: dict[str, tuple[float, ...]], compared: list[FixtureCase],
              typical: list[FixtureCase]) -> Fidelity | None:
    """A finding for an output that equals no variant but estimates one as the paper's estimator would at some
    budget, on every typical case (`feature_references.estimated`); None where it estimates none."""
    agreed = {c.case_id: {(a.metric, a.variant): a for a in feature_references.estimated(
        c, np.asarray(outputs[c.case_id]), ATOL, RTOL)} for c in compared if c.case_id in outputs}
    common = set.intersection(*(set(agreed[c.case_id]) for c in typical))
    if not common:
        return None
    found = {key: variant for key in common if (variant := known(*key)) is not None}
    # the variant under which the output's errors are likeliest, over the typical cases (the paper's on a tie)
    chosen = max(sorted(found), key=lambda key: (sum(agreed[c.case_id][key].log_likelihood for c in typical),
                                                 found[key].paper))
    metric, matched = chosen
    variant = found[chosen]
    held = [agreed[case][chosen] for case in agreed if chosen in agreed[case]]
    budget = int(min(min(a.budget for a in held), 10 ** 9))
    rhos = [a.rho for a in held if a.rho is not None]
    estimate = Estimate(
        estimator=feature_references.ESTIMATOR, budget=budget, error=max(a.error for a in held),
        rank_correlation=min(rhos) if rhos else None,
        tolerance=(f"an estimate of T orderings errs at point i by a normal error of spread σᵢ/√T (σᵢ: the spread of "
                   f"point i's marginal contribution over {feature_references.SPREAD_ORDERINGS:,} random orderings "
                   f"of the case); the output's errors are likeliest at T = {budget:,} (the "
                   f"fewest over the cases), and every one lies within z·σᵢ/√T, z {min(a.bound for a in held):.2f} "
                   f"to {max(a.bound for a in held):.2f}, the normal quantile that a faithful estimate exceeds at "
                   f"some point with probability {feature_references.ALPHA}; an estimate is judged from "
                   f"{feature_references.FLOOR} orderings up"))
    cited, definition = quoted(metric)
    return Fidelity(
        cited=cited, definition=definition, output=name, metric=metric, matches=matched,
        source=f"{variant.source}, estimated", paper=variant.paper, cases_matched=len(held), cases=len(compared),
        departures=[] if variant.paper else [variant.departure], verdict="estimator" if variant.paper else "departure",
        estimate=estimate, orientation=orientation(metric, matched),
    )


def quoted(metric: str) -> tuple[str | None, str | None]:
    """The paper's citation and definition of a metric, for a finding's page (`cited`, `definition`)."""
    from paperproof.verify.metrics.variants import DEFINITIONS

    found = DEFINITIONS.get(metric)
    return (found.paper, found.definition) if found else (None, None)


def chose_epoch(case: FixtureCase) -> bool:
    """Whether the entry saw every epoch of the case, so which epoch it scores is its own choice: a training run
    drove it, or an argument holds all epochs (not one epoch's predictions, layouts `NC` and `N`)."""
    if case.protocol:
        return True
    return any(arg.spec.kind in DYNAMICS_KINDS and arg.spec.kind not in ("labels", "trend")
               and arg.spec.params.get("layout") not in ("NC", "N") for arg in _all_args(case))


def defined(case: FixtureCase, metric: str, series: Series | None) -> bool:
    """Whether the paper's metric is defined on every sample of a case (finite): AUM with one class is not."""
    found = paper_reference(case, metric, series)
    return found is not None and bool(np.isfinite(found[1]).all())


def paper_reference(case: FixtureCase, metric: str, series: Series | None = None,
                    per_epoch: bool = False, matched: str = "") -> tuple[str, np.ndarray] | None:
    """The paper's variant of a metric on one case, by name and value, as the entry saw the case (for a valuation,
    at the parameters of the variant the entry `matched`: KNN-Shapley at its K)."""
    from paperproof.verify.metrics import VARIANTS

    if metric in feature_references.FEATURE_VARIANTS:
        name = feature_references.paper_of(metric, matched)
        found = feature_references.feature_variants(case).get((metric, name)) if name and not per_epoch else None
        return (name, found) if name and found is not None else None

    variants = VARIANTS.get(metric, ())
    paper = next((v.name for v in variants if v.paper), None)
    if paper is None and any(v.name == matched and not v.driven for v in variants):  # departs in its formula:
        paper = next((v.name for v in variants if v.driven), None)  # the paper's on the probabilities given
    values = _variants(_case_key(case), series, _logits_dtype(case), per_epoch).get((metric, paper)) if paper else None
    if paper is None and not per_epoch:  # a metric of the model: its paper variant on the run the entry saw
        paper = next((v.name for v in run_references.MODEL_VARIANTS.get(metric, ()) if v.paper), None)
        values = _model_references(case).get((metric, paper)) if paper else None
    return (paper, values) if paper and values is not None else None


def departure(findings: list[Fidelity]) -> str | None:
    """The departures that make a sample violate its metric's definition, in one sentence."""
    texts = [f"{f.output} is {f.metric} ({f.matches}), which {'; '.join(f.departures)}" for f in findings if f.departures]
    return "; ".join(texts) or None
