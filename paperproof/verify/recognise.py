"""Recognition by behaviour: which metric of the reference core an entry's per-sample output is.

Selection reads code (`catalogue.evidence`); once the entry has run, what it returned says more.
Each per-sample output is compared, case by case, with every variant of every metric the reference
core computes on the same logits and labels: equal within tolerance (the fidelity finding) or, short
of that, ranking the samples as a variant does (Spearman's rank correlation, averaged over the
typical cases). Either recognises the entry whatever it is named; the sample's `link_basis` becomes
`behaviour` and its "why chosen" line says which metric it matched and how closely.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperproof.catalogue.fixture_case import FixtureSet
from paperproof.catalogue.run_result import RunResult
from paperproof.catalogue.sample import Fidelity
from paperproof.verify.fidelity import channels, comparable, references
from paperproof.verify.rank_correlation import spearman

RANK_THRESHOLD = 0.95  # |ρ| at or above this on every typical case: ranks as the metric does


@dataclass(frozen=True)
class Recognition:
    output: str
    metric: str
    variant: str
    rho: float | None  # mean Spearman correlation over the typical cases; None for constant outputs
    exact: bool
    cases_matched: int
    cases: int

    def line(self) -> str:
        if self.exact:
            rank = f", rank correlation {self.rho:.2f}" if self.rho is not None else ""
            return f"{self.output} matches {self.metric} ({self.variant}) on {self.cases_matched} of {self.cases} cases{rank}"
        rho = self.rho if self.rho is not None else 0.0  # a rank-only recognition always has one
        order = "as" if rho > 0 else "in the reverse order of"
        return f"{self.output} ranks samples {order} {self.metric} ({self.variant}), rank correlation {rho:.2f}"


def recognise(fixtures: FixtureSet, result: RunResult | None, findings: list[Fidelity]) -> Recognition | None:
    """The closest metric to any per-sample output, exact matches first; None when nothing is close."""
    findings = [f for f in findings if f.found_by == "variants"]  # a behavioural check names no metric
    if result is None or not fixtures.cases:
        return None
    if not comparable(fixtures):
        return None
    outcomes = {c.case_id: c.value for c in result.cases if c.outcome == "returned" and c.value is not None}
    typical = [c for c in fixtures.cases if c.kind == "typical" and c.case_id in outcomes]
    if not typical:
        return None
    rhos: dict[tuple[str, str, str], list[float]] = {}
    for case in typical:
        reference = references(case)
        for channel in channels(outcomes[case.case_id], case.dims["N"]):
            values = np.asarray(channel.values, dtype=np.float64)
            for (metric, variant, _), ref in reference.items():
                if ref.shape != values.shape:
                    continue
                rho = spearman(values, ref.astype(np.float64))
                if rho is not None:
                    rhos.setdefault((channel.name, metric, variant), []).append(rho)
    exact = {(f.output, f.metric, f.matches): f for f in findings}
    candidates = []
    for (output, metric, variant), found in rhos.items():
        if len(found) < len(typical):
            continue
        mean = float(np.mean(found))
        finding = exact.get((output, metric, variant))
        if finding or min(abs(r) for r in found) >= RANK_THRESHOLD:
            candidates.append(Recognition(output, metric, variant, mean, finding is not None,
                                          finding.cases_matched if finding else 0, finding.cases if finding else 0))
    for finding in findings:  # exact on every typical case but constant outputs give no rank correlation
        if not any(c.exact and (c.output, c.metric, c.variant) == (finding.output, finding.metric, finding.matches)
                   for c in candidates):
            candidates.append(Recognition(finding.output, finding.metric, finding.matches, None, True,
                                          finding.cases_matched, finding.cases))
    if not candidates:
        return None
    return min(candidates, key=lambda c: (not c.exact, -abs(c.rho if c.rho is not None else 1.0), c.output, c.metric,
                                          c.variant))
