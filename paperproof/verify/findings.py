"""What `paperproof verify` reports: each finding once, where it is, and a hint when the budget cut most runs.

A departure from a paper's definition also makes its sample `ran_violates`; listed under both it read as two
problems. So a sample gives one finding per departing output when it departs, one contract violation when it
violates without departing, and one finding for what the sandbox blocked. Each names its file and line
(`path:line entry: reason`): the departing expression's line where the run located it, else the entry's.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Literal

from paperproof.catalogue.observed import DriverRun
from paperproof.catalogue.sample import Sample

Kind = Literal["violation", "departure", "blocked"]
KINDS: dict[Kind, str] = {"violation": "violations", "departure": "departures", "blocked": "blocked"}  # as counted
# How the harness says a case spent its budget (`runner.harness`: the CPU time limit, the wall-clock backstop).
_CUT = re.compile(r"(CPU time|wall-clock) limit of ([0-9.]+) s reached")
_LIMIT_NAMES = {"CPU time": "cpu_seconds", "wall-clock": "wall_seconds"}
MORE = 3  # the hint offers this many times the budget that cut the runs


@dataclass(frozen=True, order=True)
class Finding:
    """One thing that makes `verify` exit 1, at a line of the checkout."""

    path: str
    line: int
    entry: str
    kind: Kind
    reason: str

    def text(self) -> str:
        return f"{self.path}:{self.line} {self.entry}: {self.reason}"


def findings(samples: list[Sample]) -> list[Finding]:
    """Every finding of `samples`, each once, by file, line and entry."""
    found = []
    for s in samples:
        departing = [f for f in s.fidelity if f.departures]
        for f in departing:
            line = f.worked.lines[0] if f.worked is not None and f.worked.lines else s.lineno
            found.append(Finding(s.path, line, s.entry, "departure",
                                 f"departs from the paper's {f.metric} ({f.output}): {'; '.join(f.departures)}"))
        if s.status == "ran_violates" and not departing:
            found.append(Finding(s.path, s.lineno, s.entry, "violation", f"violates its contract: {s.reason}"))
        if any(c.outcome == "blocked" for c in s.cases):
            what = "; ".join(s.blocked) or "a case tried what the sandbox forbids"
            found.append(Finding(s.path, s.lineno, s.entry, "blocked", f"blocked by the sandbox: {what}"))
    return sorted(found)


def summary(found: list[Finding]) -> list[str]:
    """The closing lines: the count by kind, then each finding, indented."""
    kinds = Counter(f.kind for f in found)
    return [f"findings: {len(found)} ({', '.join(f'{plural} {kinds[kind]}' for kind, plural in KINDS.items())})",
            *(f"  {f.text()}" for f in found)]


def budget_hint(samples: list[Sample]) -> str | None:
    """A line suggesting a larger `--limit` when most samples had a case cut short by its budget, else None."""
    cuts: Counter[tuple[str, float]] = Counter()
    for s in samples:
        cut = next((m for c in s.cases if (m := _CUT.search(c.exception or "")) is not None), None)
        if cut is not None:
            cuts[(cut.group(1), float(cut.group(2)))] += 1
    cut_samples = sum(cuts.values())
    if not samples or 2 * cut_samples <= len(samples):
        return None
    (clock, seconds), _ = cuts.most_common(1)[0]
    return (f"most samples were cut short by their budget ({cut_samples} of {len(samples)} had a case reach the "
            f"{clock} limit of {seconds:g} s): give them more with --limit {_LIMIT_NAMES[clock]}={MORE * seconds:g}")


__all__ = ["Finding", "budget_hint", "findings", "summary"]


def drivers_line(drivers: list[DriverRun], samples: list[Sample]) -> list[str]:
    """What the checkout's own drivers did: how many ran, were cut or failed, and how many samples they showed
    being called (the rest were called on inferred arguments). Nothing when it has no driver."""
    if not drivers:
        return []
    counts = Counter(d.status for d in drivers)
    made = ", ".join(f"{status} {counts[status]}" for status in ("ran", "failed", "cut", "not_run") if counts[status])
    seen = sum(1 for s in samples if s.observed is not None)
    return [f"drivers (the repository's tests, examples and scripts): {made}; {seen} of {len(samples)} sample(s) "
            "observed being called by them, the rest on inferred arguments"]
