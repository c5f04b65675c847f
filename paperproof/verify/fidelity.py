"""Fidelity: does an entry compute what the paper defines? Checked against the metric core.

An entry is recognised by what it returned on the shared training-dynamics cases, not by its
name: every per-sample output (the return value, each column of a DataFrame, each value of a dict,
each item of a tuple) is compared with every published variant of every hardness metric, computed
by the reference core on the same logits and labels. A variant that matches on every typical case
identifies the metric; the finding records which definition that is, on how many cases it
matched, and where it departs from the paper's definition.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from paperproof.catalogue.fixture_case import FixtureCase, FixtureSet
from paperproof.catalogue.run_result import EncodedValue, RunResult
from paperproof.catalogue.sample import Fidelity
from paperproof.fixtures.synth import DYNAMICS_KINDS
from paperproof.fixtures.values import case_dynamics

ATOL, RTOL = 1e-5, 1e-4
ID_COLUMNS = frozenset({"guid", "id", "idx", "index", "label", "gold", "labels", "target"})


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


def _case_key(case: FixtureCase) -> tuple:
    return case.seed, tuple(sorted(case.dims.items())), tuple(sorted((case.transform or {}).items()))


@lru_cache(maxsize=64)
def _reference(key: tuple, logits_dtype: str) -> dict[tuple[str, str], np.ndarray]:
    """Every variant of every metric on one case's logits, as the entry saw them (dtype included)."""
    import torch

    from paperproof.runner.metrics import VARIANTS

    seed, dims, transform = key
    logits, labels = case_dynamics({"seed": seed, "dims": dict(dims), "transform": dict(transform)})
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
    if result is None or not fixtures.cases:
        return []
    kinds = {a.spec.kind for c in fixtures.cases for a in _all_args(c)}
    if not kinds & DYNAMICS_KINDS:
        return []
    from paperproof.runner.metrics import VARIANTS

    outcomes = {c.case_id: c.value for c in result.cases if c.outcome == "returned" and c.value is not None}
    compared = [c for c in fixtures.cases if c.kind in ("typical", "edge") and c.case_id in outcomes]
    typical = [c for c in compared if c.kind == "typical"]
    if not typical:
        return []
    matches: dict[str, dict[str, set[tuple[str, str]]]] = {}  # channel -> case -> matching variants
    for case in compared:
        reference = _reference(_case_key(case), _logits_dtype(case))
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
        order = [(m, v.name, v.paper) for m, vs in VARIANTS.items() for v in vs]
        ranked = sorted(common, key=lambda k: next((i for i, (m, n, _) in enumerate(order) if (m, n) == k)))
        paper_hits = [k for k in ranked if any(p for m, n, p in order if (m, n) == k)]
        metric, variant_name = paper_hits[0] if paper_hits else ranked[0]
        variant = next(v for v in VARIANTS[metric] if v.name == variant_name)
        agreeing = [c.case_id for c in compared if (metric, variant_name) in per_case.get(c.case_id, set())]
        departures = [] if variant.paper else [variant.departure]
        differing = [c.case_id for c in compared if c.case_id not in agreeing]
        if differing:
            departures.append(f"differs from {variant_name} on case{'s' if len(differing) > 1 else ''} {', '.join(differing)}")
        findings.append(Fidelity(
            output=name, metric=metric, matches=variant_name, source=variant.source, paper=variant.paper,
            cases_matched=len(agreeing), cases=len(compared), departures=departures,
        ))
    return findings


def departure(findings: list[Fidelity]) -> str | None:
    """The departures that make a sample violate its metric's definition, in one sentence."""
    texts = [f"{f.output} is {f.metric} ({f.matches}), which {'; '.join(f.departures)}" for f in findings if f.departures]
    return "; ".join(texts) or None
