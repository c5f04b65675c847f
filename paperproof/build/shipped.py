"""Shipped verification records in a build: a repository the build has no source for is shown from them.

They enter as harvested repositories do: a `RepoSource` gives the build a record for every key
(`ShippedRepos`, under the build's own source, so that a checkout or a harvest always wins), and the
samples are attached once the build's own runs are judged (`attach`). Records made by other verdict
code than this build's (`catalogue.shipped.code_fingerprint`) are marked stale on the repository's
record, on every sample (its reason and first note) and in the build summary, never shown as current.
"""

from __future__ import annotations

from pathlib import Path

from paperproof.catalogue.archive import bundled_root
from paperproof.catalogue.repo_record import RepoRecord
from paperproof.catalogue.repo_url import RepoKey
from paperproof.catalogue.repo_work import RepoWork
from paperproof.catalogue.repos import RepoSource
from paperproof.catalogue.sample import Sample
from paperproof.catalogue.shipped import ShippedRepo, ShippedResults, code_fingerprint, record_key
from paperproof.verify.samples import link_behaviours

STALE_MARK = "Stale: "
REGENERATE = "paperproof harvest --from-checkouts DIR --results-only"


def bundled_results() -> Path:
    return bundled_root() / "results"


def made_by_line(shipped: ShippedRepo) -> str:
    return (f"verified by paperproof {shipped.made_by.paperproof} (verdict code {shipped.made_by.code[:12]}) at "
            f"commit {(shipped.record.commit or 'unknown')[:12]}; shipped as records, not run in this build")


def stale_reason(shipped: ShippedRepo, current: str) -> str | None:
    """Why the records are stale for a build whose verdict code has fingerprint `current`, or None."""
    if shipped.made_by.code == current:
        return None
    return (f"these verdicts were made by paperproof {shipped.made_by.paperproof} with verdict code "
            f"{shipped.made_by.code[:12]}; this build's fixture, runner or verify code is {current[:12]}, so they "
            f"may no longer be what paperproof says of this code (regenerate: {REGENERATE})")


class ShippedRepos:
    """The build's source first; where it has no source for a repository, the shipped record of it."""

    def __init__(self, first: RepoSource, results: ShippedResults, current: str | None = None) -> None:
        self.first, self.results = first, results
        self.current = current if current is not None else code_fingerprint()

    def record_for(self, key: RepoKey) -> RepoRecord:
        record = self.first.record_for(key)
        shipped = None if record.has_source else self.results.get(key)
        if shipped is None:
            return record
        stale = stale_reason(shipped, self.current)
        # what the host answered a harvest of this build (its reach) stays on the record
        return shipped.record.model_copy(update={
            "source": "shipped", "snapshot": None, "specimen": False, "made_by": made_by_line(shipped),
            "stale": stale, "reach": record.reach or shipped.record.reach})


def _marked(sample: Sample, stale: str | None) -> Sample:
    if stale is None:
        return sample
    return sample.model_copy(update={"reason": STALE_MARK + sample.reason,
                                      "notes": [STALE_MARK + stale, *sample.notes]})


def attach(repos: dict[str, RepoWork], results: ShippedResults) -> dict[str, RepoWork]:
    """Every repository whose record is shipped gets the shipped samples, marked stale where its record is."""
    out = dict(repos)
    for key, work in repos.items():
        if work.record.source != "shipped":
            continue
        found = results.get(record_key(work.record))
        if found is None:
            continue
        out[key] = work.but(samples=tuple(_marked(s, work.record.stale) for s in found.samples))
    return _relinked(out)


def _relinked(repos: dict[str, RepoWork]) -> dict[str, RepoWork]:
    """"Behaves like" links made again over every sample of this build, run or shipped: a shipped record links the
    samples of the run that made it, some of which this build may not show."""
    keys = sorted(repos)
    fresh = [s.model_copy(update={"behaves_like": []}) for key in keys for s in repos[key].samples]
    linked = iter(link_behaviours(fresh))
    done = {key: repos[key].but(samples=tuple(next(linked) for _ in repos[key].samples)) for key in keys}
    return {key: done[key] for key in repos}


def summary_lines(repos: dict[str, RepoWork], results: ShippedResults) -> list[str]:
    """For the build summary: how many repositories were shown from shipped records, and whether stale."""
    shown = [w for w in repos.values() if w.record.source == "shipped"]
    lines = [f"  shipped records not read: {name}: {reason}" for name, reason in results.problems]
    if not shown:
        return lines
    samples = sum(len(w.samples) for w in shown)
    stale = [w for w in shown if w.record.stale]
    head = (f"shipped records: {len(shown)} repositories, {samples} samples shown from records (not run in this "
            f"build)")
    if stale:
        head += (f"; STALE for {len(stale)} of them: " + (stale[0].record.stale or ""))
    return [head, *lines]
