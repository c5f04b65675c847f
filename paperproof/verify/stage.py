"""The verify stage of a build or of `paperproof verify`: fixtures for each chosen entry, a sandbox run of
each (through the cache), and the judgement of what it did, as one sample per entry."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from paperproof.catalogue.entry import Entry
from paperproof.catalogue.fixture_case import FixtureSet
from paperproof.catalogue.repo_work import RepoWork
from paperproof.catalogue.run_result import RunResult
from paperproof.catalogue.sample import Contract, Fidelity
from paperproof.fixtures import layout
from paperproof.fixtures.synth import synthesize
from paperproof.plumbing.progress import bar
from paperproof.runner.distributed import make_executor
from paperproof.runner.executor import ResultCache, RunRequest
from paperproof.verify import contracts, departures, fidelity, verdict
from paperproof.verify.samples import link_behaviours, make_sample


@dataclass(frozen=True)
class RunSettings:
    """How the samples run: processes (or a Dask scheduler), the run cache, and sandbox limit overrides."""

    workers: int | None = None
    cache: Path | None = None  # the build's cache folder; runs are kept under its `runs/`
    scheduler: str | None = None
    limits: dict | None = None  # `runner.sandbox.Limits` fields


@dataclass(frozen=True)
class Judged:
    repos: dict[str, RepoWork]
    executed: int = 0  # runs made in the sandbox
    cached: int = 0  # runs answered by the cache


def _snapshot(work: RepoWork) -> str:
    """Where the checkout of a repository with selected entries lies (entries are selected only from source)."""
    if work.record.snapshot is None:
        raise ValueError(f"{work.record.repo}: entries were selected from a repository with no source snapshot")
    return work.record.snapshot


def _run_all(requests: list[RunRequest], settings: RunSettings, cache: ResultCache,
             label: str) -> tuple[dict[tuple[str, str, str, str], RunResult], int]:
    """Run requests in the sandbox (through the cache), keyed by entry and fixture set."""
    results: dict[tuple[str, str, str, str], RunResult] = {}
    if not requests:
        return results, 0
    with make_executor(settings.workers, cache, settings.scheduler) as executor:
        for request, ran in zip(requests, bar(executor.run(requests), label, total=len(requests), unit="sample")):
            results[_key(request.entry, request.fixtures)] = ran
        return results, executor.executed


def _key(entry: Entry, fixtures: FixtureSet) -> tuple[str, str, str, str]:
    return entry.code_sha256, entry.path, entry.repo, fixtures.digest()


def _judge(entry: Entry, fixtures: FixtureSet, result: RunResult | None,
           contract: Contract) -> tuple[list[Fidelity], verdict.Verdict]:
    findings = departures.explain(entry, fixtures, result, fidelity.assess(fixtures, result))
    return findings, verdict.judge(fixtures, result, contract, findings, entry.kind)


def run_and_judge(repos: Mapping[str, RepoWork], settings: RunSettings) -> Judged:
    """Synthesize fixtures, run every selected entry in the sandbox, and judge what it did. An entry
    that raised on every case at its input boundary is run again on the other plausible layouts of
    its arguments; the first the code accepts is kept, and the page says so."""
    jobs = []
    for key in sorted(repos):
        work = repos[key]
        for chosen in work.selected:
            jobs.append((key, chosen, synthesize(chosen.entry), contracts.draft(chosen.entry)))
    cache = ResultCache(settings.cache / "runs" if settings.cache else None)
    snapshots = {key: _snapshot(repos[key]) for key, c, f, _ in jobs if f.cases}
    results, executed = _run_all([RunRequest(c.entry, f, snapshots[key], settings.limits) for key, c, f, _ in jobs
                                  if f.cases], settings, cache, "run")
    judged_jobs = []
    retry = []
    for key, chosen, fixtures, contract in jobs:
        result = results.get(_key(chosen.entry, fixtures))
        findings, judged = _judge(chosen.entry, fixtures, result, contract)
        judged_jobs.append([key, chosen, fixtures, contract, result, findings, judged])
        if judged.status == "ran_fixture":
            retry.extend((len(judged_jobs) - 1, words, alt) for words, alt in layout.alternatives(fixtures))
    again, more = _run_all([RunRequest(judged_jobs[i][1].entry, alt, snapshots[judged_jobs[i][0]], settings.limits)
                            for i, _, alt in retry], settings, cache, "retry")
    executed += more
    tried: dict[int, list[str]] = {}
    for i, words, alt in retry:
        key, chosen, fixtures, contract, result, findings, judged = judged_jobs[i]
        if judged.status != "ran_fixture":
            continue  # an earlier alternative was accepted
        ran = again.get(_key(chosen.entry, alt))
        alt_findings, alt_judged = _judge(chosen.entry, alt, ran, contract)
        if alt_judged.status in ("ran_fixture", "unverified"):
            tried.setdefault(i, []).append(words)
            continue
        note = (f"With our first layout it raised on every case ({judged.reason.split(' — ')[0]}); "
                f"tried {', '.join([*tried.get(i, []), words])}: the code accepted {words}, which was kept.")
        kept = alt.model_copy(update={"choices": [*alt.choices, note]})
        judged_jobs[i] = [key, chosen, kept, contract, ran, alt_findings, alt_judged]
    for i, words in tried.items():
        if judged_jobs[i][6].status == "ran_fixture":
            fixtures = judged_jobs[i][2]
            judged_jobs[i][2] = fixtures.model_copy(update={"choices": [
                *fixtures.choices, f"Also tried {', '.join(words)}: it raised on every case with each."]})
    made: dict[str, list] = {key: [] for key in repos}
    for key, chosen, fixtures, contract, result, findings, judged in bar(judged_jobs, "verify", unit="sample"):
        work = repos[key]
        papers = sorted({slug for slug, _ in work.papers})
        made[key].append(make_sample(chosen.entry, work.record, chosen.link_basis, fixtures, result,
                                     contract, judged, papers, findings))
    linked = iter(link_behaviours([s for key in sorted(repos) for s in made[key]]))
    judged_repos = {key: repos[key].but(samples=tuple(next(linked) for _ in made[key])) for key in sorted(repos)}
    return Judged({key: judged_repos[key] for key in repos}, executed, cache.hits)
