"""What a build did, for the closing lines on the terminal (never for the site)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from paperproof.build.site_files import SiteDamage
from paperproof.catalogue.archive import Reject


@dataclass
class BuildSummary:
    papers: int = 0
    repositories: int = 0
    repositories_with_source: int = 0
    samples: Counter = field(default_factory=Counter)
    executed: int = 0
    cached: int = 0
    rejects: list[Reject] = field(default_factory=list)
    skipped_files: list[tuple[str, str, str]] = field(default_factory=list)
    out: str = ""
    notes: list[str] = field(default_factory=list)  # what the site writer reports (search, sitemaps)
    pages: dict[str, int] = field(default_factory=dict)  # units of the site rendered, kept as they were, removed
    stale: list[str] = field(default_factory=list)  # `build --check`: the first units a build would change
    damage: SiteDamage = field(default_factory=SiteDamage)  # published files missing, changed or extra
    repaired: list[str] = field(default_factory=list)  # what a build repaired of that damage
    noop: bool = False  # the inputs were those of the published site: nothing was done
    check: bool = False
    partial: list[str] = field(default_factory=list)  # `--allow-partial`: the damage each partial file stops at
    shipped: list[str] = field(default_factory=list)  # repositories shown from shipped records; stale or not
    seconds: dict[str, float] = field(default_factory=dict)  # wall time per stage (for the terminal, never the site)
    drivers: Counter = field(default_factory=Counter)  # the repositories' own drivers this build ran, by status
    observed: int = 0  # samples a driver of theirs was seen calling

    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[stage] = time.perf_counter() - started

    @property
    def is_stale(self) -> bool:
        """`build --check`: a build would change the site (exit 1)."""
        return bool(self.pages.get("stale") or self.damage)

    def lines(self) -> list[str]:
        total = sum(self.samples.values())
        out = [
            f"{'checked' if self.check else 'built'} {self.out}: {self.papers} papers, {self.repositories} repositories "
            f"({self.repositories_with_source} with source), {total} samples",
            "samples by status: " + (", ".join(f"{k} {v}" for k, v in sorted(self.samples.items())) or "none"),
            f"runs: {self.executed} executed, {self.cached} from the cache",
        ]
        if self.drivers:
            out.append("drivers (the repositories' own tests, examples, scripts and notebooks): "
                       + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in sorted(self.drivers.items()))
                       + f"; {self.observed} sample(s) observed being called by them, the rest on inferred arguments")
        if self.check:
            count = self.pages.get("stale", 0)
            if not self.is_stale:
                out.insert(0, f"up to date: {self.out} is what a build would write")
            else:
                what = [f"{len(self.damage)} published file(s) missing, changed or written by no build"] if self.damage else []
                if count:
                    what.append(f"{count} unit(s), and in the indexes that list them"
                                + (", for example:" if self.stale else ""))
                out.insert(0, f"stale: {self.out} differs from what a build would write in " + "; ".join(what))
                out[1:1] = [f"  {line}" for line in self.damage.lines() + self.stale]
        elif self.noop:
            out.append(f"pages: nothing to do (the inputs, code and settings are those of the published {self.out})")
        else:
            out.append(f"pages: {self.pages.get('rendered', 0)} units rendered, {self.pages.get('kept', 0)} kept, "
                       f"{self.pages.get('removed', 0)} removed")
            out.extend(self.repaired)
        if self.rejects:
            reasons = Counter(r.reason.split(":")[0] for r in self.rejects)
            out.append(f"rows rejected: {len(self.rejects)} (" + ", ".join(f"{n}× {r}" for r, n in reasons.most_common(5)) + ")")
            for reject in self.rejects[:10]:
                out.append(f"  {reject.where()} {reject.record or ''}: {reject.reason}")
            if len(self.rejects) > 10:
                out.append(f"  … and {len(self.rejects) - 10} more")
        else:
            out.append("rows rejected: 0")
        for damage in self.partial:
            out.insert(0, f"PARTIAL (--allow-partial): {damage}; the site holds only the rows before the damage")
        for repo, path, reason in self.skipped_files[:10]:
            out.append(f"  skipped {repo}/{path}: {reason}")
        out.extend(self.shipped)
        out.extend(self.notes)
        if self.seconds:
            out.append("time: " + ", ".join(f"{stage} {seconds:.1f} s" for stage, seconds in self.seconds.items()))
        return out
