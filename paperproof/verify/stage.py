"""The verify stage of a build or of `paperproof verify`: fixtures for each chosen entry, a sandbox run of
each (through the cache), and the judgement of what it did, as one sample per entry."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from paperproof.catalogue.repo_work import RepoWork
from paperproof.catalogue.run_result import RunResult
from paperproof.fixtures.synth import synthesize
from paperproof.plumbing.progress import bar
from paperproof.runner import environment
from paperproof.runner.distributed import make_executor
from paperproof.runner.executor import ResultCache, RunRequest
from paperproof.verify import contracts, fidelity, verdict
from paperproof.verify.recognise import recognise
from paperproof.verify.samples import link_behaviours, make_sample


@dataclass(frozen=True)
class RunSettings:
    """How the samples run: processes (or a Dask scheduler), the run cache, and sandbox limit overrides."""

    workers: int | None = None
    cache: Path | None = None  # the build's cache folder; runs are kept under its `runs/`
    scheduler: str | None = None
    limits: dict | None = None  # `runner.sandbox.Limits` fields
    environments: Path | None = None  # where per-repository environments are cached; None: the runner's only


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


def _env_path(env: environment.Environment | None) -> str | None:
    return env.path if env is not None else None


def run_and_judge(repos: Mapping[str, RepoWork], settings: RunSettings) -> Judged:
    """Synthesize fixtures, run every selected entry in the sandbox, and judge what it did."""
    jobs = []
    envs: dict[str, environment.Environment | None] = {}
    for key in sorted(repos):
        work = repos[key]
        env = environment.for_record(work.record, settings.environments) if work.selected else None
        envs[key] = env
        paths = env.paths if env is not None else ()
        for chosen in work.selected:
            jobs.append((key, chosen, synthesize(chosen.entry, _snapshot(work), paths), contracts.draft(chosen.entry)))
    runnable = [RunRequest(c.entry, f, _snapshot(repos[key]), settings.limits, _env_path(envs[key]))
                for key, c, f, _ in jobs if f.cases]
    cache = ResultCache(settings.cache / "runs" if settings.cache else None)
    results: dict[tuple[str, str, str], RunResult] = {}
    executed = 0
    if runnable:
        with make_executor(settings.workers, cache, settings.scheduler) as executor:
            for request, ran in zip(runnable, bar(executor.run(runnable), "run", total=len(runnable), unit="sample")):
                results[request.entry.code_sha256, request.entry.path, request.entry.repo] = ran
            executed = executor.executed
    made: dict[str, list] = {key: [] for key in repos}
    for key, chosen, fixtures, contract in bar(jobs, "verify", unit="sample"):
        work = repos[key]
        result = results.get((chosen.entry.code_sha256, chosen.entry.path, chosen.entry.repo))
        findings = fidelity.assess(fixtures, result)
        judged = verdict.judge(fixtures, result, contract, findings)
        papers = sorted({slug for slug, _ in work.papers})
        known = recognise(fixtures, result, findings)
        basis = "behaviour" if known else chosen.link_basis
        why = "; ".join(filter(None, [chosen.why, known.line() if known else None]))
        sample = make_sample(chosen.entry, work.record, basis, fixtures, result,
                             contract, judged, papers, findings, why_chosen=why)
        found = envs[key]
        env_notes = found.describe() if found is not None else []
        made[key].append(sample.model_copy(update={"notes": [*sample.notes, *env_notes]}) if env_notes else sample)
    linked = iter(link_behaviours([s for key in sorted(repos) for s in made[key]]))
    judged_repos = {key: repos[key].but(samples=tuple(next(linked) for _ in made[key])) for key in sorted(repos)}
    return Judged({key: judged_repos[key] for key in repos}, executed, cache.hits)
