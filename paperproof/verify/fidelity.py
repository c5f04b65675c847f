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
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np

from paperproof.catalogue.fixture_case import FixtureCase, FixtureSet
from paperproof.catalogue.run_result import EncodedValue, RunResult
from paperproof.catalogue.sample import Fidelity
from paperproof.fixtures import training
from paperproof.fixtures.synth import DYNAMICS_KINDS
from paperproof.fixtures.values import case_dynamics

ATOL, RTOL = 1e-5, 1e-4
ID_COLUMNS = frozenset({"guid", "id", "idx", "index", "label", "gold", "labels", "target"})
Series = Literal["evaluated", "training"]
Variant = tuple[str, str, Series | None]  # (metric, variant, the run's series of logits; None: a case's own arrays)


@dataclass(frozen=True)
class Channel:
    """One per-sample output of an entry, named for pages: `return value`, `column confidence`."""

    name: str
    values: tuple[float, ...]


def channels(value: EncodedValue, n: int, prefix: str = "") -> list[Channel]:
    """Every numeric output of length N inside a returned value."""
    found: list[Channel] = []
    if value.data is not None and value.shape is not None and len(value.shape) in (1, 2) and value.shape[0] == n \
            and (len(value.shape) == 1 or value.shape[1] == 1) and not value.truncated:
        found.append(Channel(prefix or "return value", tuple(math.nan if v is None else float(v) for v in value.data)))
    for key, sub in (value.values or {}).items():
        if key.lower() in ID_COLUMNS:
            continue
        kind = "column" if value.type == "DataFrame" else "key"
        found.extend(channels(sub, n, f"{prefix + ' ' if prefix else ''}{kind} {key}"))
    for index, sub in enumerate(value.items or []):
        found.extend(channels(sub, n, f"{prefix + ' ' if prefix else ''}item {index}"))
    return found


def comparable(fixtures: FixtureSet) -> bool:
    """Whether the cases give the entry training dynamics: arrays of ours, or a training run it was driven by."""
    return any(c.protocol for c in fixtures.cases) or bool(
        {a.spec.kind for c in fixtures.cases for a in _all_args(c)} & DYNAMICS_KINDS)


def series_of(case: FixtureCase) -> tuple[Series | None, ...]:
    return ("evaluated", "training") if case.protocol else (None,)


@lru_cache(maxsize=8)
def rerun(spec: training.RunSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A protocol case's run trained again here: logits after each epoch, of each epoch's training passes, labels."""
    with training.single_threaded():
        run = training.train(spec)
    evaluated, labels = run.dynamics()
    trained, _ = run.training_dynamics()
    for array in (evaluated, trained, labels):
        array.setflags(write=False)
    return evaluated, trained, labels


def _case_key(case: FixtureCase) -> tuple:
    """What makes a case's logits: its run's spec (a protocol case), else its seed, dims and transform."""
    if case.protocol:
        return ("run", training.RunSpec.from_case(case.model_dump(mode="json")))
    return case.seed, tuple(sorted(case.dims.items())), tuple(sorted((case.transform or {}).items()))


def _logits_for(key: tuple, series: Series | None) -> tuple[np.ndarray, np.ndarray]:
    if key[0] == "run":
        evaluated, trained, labels = rerun(key[1])
        return (trained if series == "training" else evaluated).copy(), labels.copy()
    seed, dims, transform = key
    return case_dynamics({"seed": seed, "dims": dict(dims), "transform": dict(transform)})


def case_logits(case: FixtureCase, series: Series | None) -> tuple[np.ndarray, np.ndarray]:
    """The logits [E, N, C] and labels [N] the entry saw on a case (for a protocol case, one series of its run)."""
    return _logits_for(_case_key(case), series)


@lru_cache(maxsize=64)
def _variants(key: tuple, series: Series | None, logits_dtype: str) -> dict[tuple[str, str], np.ndarray]:
    """Every variant of every metric on one case's logits, as the entry saw them (dtype included)."""
    import torch

    from paperproof.verify.metrics import VARIANTS

    logits, labels = _logits_for(key, series)
    z = torch.from_numpy(logits.astype(logits_dtype).astype(np.float64))
    y = torch.from_numpy(labels)
    out = {}
    for metric, variants in VARIANTS.items():
        for variant in variants:
            try:
                out[metric, variant.name] = variant.compute(z, y).double().numpy()
            except (RuntimeError, ValueError):
                continue
    return out


def references(case: FixtureCase) -> dict[Variant, np.ndarray]:
    """Every variant of every metric on every series of logits the entry saw on the case."""
    return {(metric, name, series): values for series in series_of(case)
            for (metric, name), values in _variants(_case_key(case), series, _logits_dtype(case)).items()}


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
    from paperproof.verify.metrics import VARIANTS

    outcomes = {c.case_id: c.value for c in result.cases if c.outcome == "returned" and c.value is not None}
    compared = [c for c in fixtures.cases if c.kind in ("typical", "edge") and c.case_id in outcomes]
    typical = [c for c in compared if c.kind == "typical"]
    if not typical:
        return []
    matches: dict[str, dict[str, set[Variant]]] = {}  # channel -> case -> matching variants
    for case in compared:
        reference = references(case)
        for channel in channels(outcomes[case.case_id], case.dims["N"]):
            hits = {k for k, v in reference.items() if _same(v, channel.values)}
            matches.setdefault(channel.name, {})[case.case_id] = hits
    findings = []
    for name, per_case in matches.items():
        if not all(c.case_id in per_case for c in typical):
            continue
        common = set.intersection(*(per_case[c.case_id] for c in typical))
        if not common:
            continue
        order = [(m, v.name) for m, vs in VARIANTS.items() for v in vs]
        ranked = sorted(common, key=lambda k: (order.index(k[:2]), k[2] or ""))
        paper_hits = [k for k in ranked if next(v for v in VARIANTS[k[0]] if v.name == k[1]).paper]
        chosen = paper_hits[0] if paper_hits else ranked[0]
        metric, variant_name, series = chosen
        variant = next(v for v in VARIANTS[metric] if v.name == variant_name)
        agreeing = [c.case_id for c in compared if chosen in per_case.get(c.case_id, set())]
        departures = [] if variant.paper else [variant.departure]
        differing = [c.case_id for c in compared if c.case_id not in agreeing]
        if differing:
            departures.append(f"differs from {variant_name} on case{'s' if len(differing) > 1 else ''} {', '.join(differing)}")
        findings.append(Fidelity(
            output=name, metric=metric, matches=variant_name, source=variant.source, paper=variant.paper,
            cases_matched=len(agreeing), cases=len(compared), departures=departures, dynamics=series,
        ))
    return findings


def paper_reference(case: FixtureCase, metric: str, series: Series | None = None) -> tuple[str, np.ndarray] | None:
    """The paper's variant of a metric on one case, by name and value, as the entry saw the case."""
    from paperproof.verify.metrics import VARIANTS

    paper = next((v.name for v in VARIANTS.get(metric, ()) if v.paper), None)
    values = _variants(_case_key(case), series, _logits_dtype(case)).get((metric, paper)) if paper else None
    return (paper, values) if paper and values is not None else None


def departure(findings: list[Fidelity]) -> str | None:
    """The departures that make a sample violate its metric's definition, in one sentence."""
    texts = [f"{f.output} is {f.metric} ({f.matches}), which {'; '.join(f.departures)}" for f in findings if f.departures]
    return "; ".join(texts) or None
