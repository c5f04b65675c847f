"""The verify stage of a build or of `paperproof verify`: fixtures for each chosen entry, a sandbox run of
each (through the cache), and the judgement of what it did, as one sample per entry."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from paperproof.catalogue.budget import Budget, cut_note, noted
from paperproof.catalogue.callsites import find_call_sites
from paperproof.catalogue.entry import Entry
from paperproof.catalogue.extract import HOSTILE_TEXT
from paperproof.catalogue.fixture_case import FixtureArg, FixtureSet
from paperproof.catalogue.repo_work import RepoWork
from paperproof.catalogue.run_result import RunResult
from paperproof.catalogue.sample import Contract, Fidelity
from paperproof.catalogue.select import Selected
from paperproof.fixtures import feedback, layout
from paperproof.fixtures.synth import optional_arguments, spec_for, synthesize
from paperproof.plumbing.progress import bar
from paperproof.runner import environment
from paperproof.runner.distributed import make_executor
from paperproof.runner.executor import ResultCache, RunRequest
from paperproof.verify import alignment, contracts, departures, evaluators, fidelity, made_up, planted_scores, verdict
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
    planted: bool = True  # score per-sample outputs on the planted training run (off only to measure its cost)
    decided_by: str = ""  # what else decides every run's result, part of each cache key (`verify.run_inputs`)

    def __post_init__(self) -> None:
        # The sandbox binds folders by absolute path: a relative `--environments` would be bound from the
        # harness's own working folder, and nothing installed for a repository would be importable.
        for name in ("cache", "environments"):
            folder = getattr(self, name)
            if folder is not None:
                object.__setattr__(self, name, Path(folder).resolve())


@dataclass(frozen=True)
class Judged:
    repos: dict[str, RepoWork]
    executed: int = 0  # runs made in the sandbox
    cached: int = 0  # runs answered by the cache
    final: bool = True  # every run's result was the sample's own: none cut by the machine's load or a runner error
    skipped: tuple[tuple[str, str, str], ...] = ()  # (repo, entry, reason): no fixture or contract could be made


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


def _unblocked(fixtures: FixtureSet, result: RunResult | None) -> RunResult | None:
    """The result with a file missed under a folder we made up charged to our fixture, not to the sandbox."""
    return made_up.unblock(fixtures, result) if result is not None else None


@dataclass
class _Job:
    """One selected entry on its way to a sample: its fixtures, run and verdict (replaced by a retry)."""

    key: str
    chosen: Selected
    fixtures: FixtureSet
    contract: Contract
    result: RunResult | None = None
    findings: list[Fidelity] = field(default_factory=list)
    judged: verdict.Verdict | None = None
    tried: list[str] = field(default_factory=list)
    optional: dict[str, FixtureArg | None] = field(default_factory=dict)  # left at their defaults, for probes
    probed: FixtureSet | None = None  # where probes got to, when they got further without a case returning

    def judge(self, fixtures: FixtureSet, result: RunResult | None) -> tuple[list[Fidelity], verdict.Verdict]:
        findings = departures.explain(self.chosen.entry, fixtures, result, fidelity.assess(fixtures, result)) \
            + evaluators.assess(self.chosen.entry, fixtures, result)
        findings += alignment.assess(self.chosen.entry, fixtures, result, findings)
        return findings, verdict.judge(fixtures, result, self.contract, findings, self.chosen.entry.kind)


PROBED = frozenset({"ran_fixture", "ran_violates", "unverified"})


def _returned(result: RunResult | None) -> int:
    return sum(1 for c in result.cases if c.outcome == "returned") if result is not None else 0


Run = Callable[[str, list[tuple["_Job", FixtureSet]]], dict[tuple[str, str, str, str], RunResult]]


def _cheap(fixtures: FixtureSet) -> FixtureSet:
    """A probe: the first case alone, so a guess costs one import of the code, not one per case."""
    return fixtures.model_copy(update={"cases": fixtures.cases[:1]})


def _full(jobs: list[tuple[_Job, FixtureSet, str | None]], run: Run, label: str) -> None:
    """Every case of the fixtures a probe found, kept where at least as many cases return as before (a layout only
    where the code accepts it: `words` says which, for the page)."""
    again = run(label, [(job, fx) for job, fx, _ in jobs])
    for job, fx, words in jobs:
        ran = _unblocked(fx, again.get(_key(job.chosen.entry, fx)))
        findings, judged = job.judge(fx, ran)
        first = job.judged
        if words is not None:
            if judged.status in ("ran_fixture", "unverified") or first is None or _returned(ran) <= _returned(job.result):
                job.tried.append(words)
                continue
            note = (f"With our first layout it {first.reason.split(' — ')[0]}; tried {', '.join([*job.tried, words])}: "
                    f"the code accepted {words}, which was kept.")
            fx = fx.model_copy(update={"choices": [*fx.choices, note]})
        elif _returned(ran) < _returned(job.result):
            continue
        job.fixtures, job.result, job.findings, job.judged = fx, ran, findings, judged


def _probe(jobs: list[_Job], run: Run) -> None:
    """Probe runs (`fixtures.feedback`): an entry that raised on our arguments runs its first case again with what
    its exception asked for, up to `feedback.PROBES` times while each probe raises anew; one whose probe returned
    runs every case so. One whose budget ran out with its exception still asking, and no case returned, is
    unverified, with the reason."""
    latest = {id(job): (job.fixtures, job.result) for job in jobs
              if job.judged is not None and job.judged.status in PROBED}
    found: list[tuple[_Job, FixtureSet, str | None]] = []
    spent: list[_Job] = []
    probing = [job for job in jobs if id(job) in latest]
    for round_ in range(feedback.PROBES):
        plans = [(job, *asked) for job in probing
                 if (asked := feedback.refine(*latest[id(job)], spec_for, job.optional)) is not None]
        if not plans:
            break
        again = run(f"probe {round_ + 1}", [(job, _cheap(fx)) for job, fx, _ in plans])
        probing = []
        for job, fx, _ in plans:
            ran = _unblocked(fx, again.get(_key(job.chosen.entry, _cheap(fx))))
            before = latest[id(job)][1]
            said_before = before.cases[0].exception if before is not None and before.cases else None
            said_now = ran.cases[0].exception if ran is not None and ran.cases else None
            if _returned(ran):
                found.append((job, fx, None))
            elif said_now is not None and said_now != said_before:  # it got further: probe again from there
                latest[id(job)] = (fx, ran)
                probing.append(job)
                if round_ == feedback.PROBES - 1:
                    spent.append(job)
    if found:
        _full(found, run, "probed")
    for job in jobs:  # a probe that got further without returning: the layouts are tried from where it got
        probed = latest.get(id(job))
        if probed is not None and probed[0] is not job.fixtures and not any(j is job for j, _, _ in found):
            job.probed = probed[0]
    for job in spent:
        asked = feedback.refine(*latest[id(job)], spec_for, job.optional)
        if asked is not None and _returned(job.result) == 0:
            job.judged = verdict.Verdict(status="unverified", reason=(
                f"probe budget spent: {feedback.PROBES} probe runs refined its arguments from its own exceptions "
                f"and it still raised; the next would have changed {', '.join(f'`{e.param}`' for e in asked[1])} "
                f"({asked[1][0].why})"))


def _misfit(job: _Job) -> bool:
    """Our layout did not fit: it raised at its input boundary on every case, or ran only on some edge case while
    its first, typical case raised (an edge case's shape can pass where the typical one cannot)."""
    if job.judged is None or job.result is None or not job.result.cases:
        return False
    return job.judged.status == "ran_fixture" or (job.judged.status == "ran" and job.result.cases[0].outcome == "raised")


def _layouts(jobs: list[_Job], run: Run) -> None:
    """An entry our layout did not fit (`_misfit`) is tried on the other plausible layouts of its arguments, each on
    its first case; the first the code accepts runs every case (the first whose answer is one value per sample,
    where another layout's is not), and is kept where more cases return."""
    tried = [(job, words, alt) for job in jobs if _misfit(job)
             for words, alt in layout.alternatives(job.probed or job.fixtures)]
    again = run("layouts", [(job, _cheap(alt)) for job, _, alt in tried])
    chosen: dict[int, tuple[_Job, FixtureSet, str | None]] = {}
    scoring: set[int] = set()  # jobs whose chosen layout answered with one value per sample
    further: list[tuple[_Job, str, FixtureSet]] = []  # a layout the code took further, then asked something else
    for job, words, alt in tried:
        if id(job) in scoring:
            continue
        ran = _unblocked(alt, again.get(_key(job.chosen.entry, _cheap(alt))))
        if _returned(ran):
            if _per_sample(alt, ran):
                scoring.add(id(job))
                chosen[id(job)] = (job, alt, words)
            else:
                chosen.setdefault(id(job), (job, alt, words))
            continue
        if id(job) in chosen:
            continue
        asked = feedback.refine(alt, ran, spec_for, job.optional)
        if asked is not None:  # `torch.cat` of our numpy mask, once it had the right axes: the probe's change too
            further.append((job, f"{words}, {asked[1][0].why.removeprefix('a probe run raised ')}", asked[0]))
        job.tried.append(words)
    further = [(job, words, alt) for job, words, alt in further if id(job) not in chosen]
    if further:
        then = run("layouts, probed", [(job, _cheap(alt)) for job, _, alt in further])
        for job, words, alt in further:
            if id(job) not in chosen and _returned(_unblocked(alt, then.get(_key(job.chosen.entry, _cheap(alt))))):
                chosen[id(job)] = (job, alt, words)
    if chosen:
        _full(list(chosen.values()), run, "retry")


def _per_sample(fixtures: FixtureSet, result: RunResult | None) -> bool:
    """Whether the first case's answer holds one value per sample (a score, not a matrix of one epoch's rows)."""
    if result is None or not result.cases or not fixtures.cases or result.cases[0].value is None:
        return False
    case = fixtures.cases[0]
    return bool(fidelity.channels(result.cases[0].value, case.dims["N"]))


def _reinstall_broken(jobs: list[_Job], repos: Mapping[str, RepoWork], settings: RunSettings,
                      envs: dict[str, environment.Environment | None], env_dirs: dict[str, str | None], run: Run) -> None:
    """A package the repository pins, installed for it, that did not import beside the runner's packages (a release
    built for numpy 1; a seaborn older than its matplotlib) is installed again in its newest release that resolves;
    one installed unpinned whose newest release lacks a name the code imports (`cannot import name`) in its newest
    release before that one's major version. The repository's entries run again in that environment; the
    environment's notes say which pin was not followed, or which release was held back. Once per repository."""
    broken: dict[str, frozenset[str]] = {}
    older: dict[str, dict[str, str]] = {}
    for job in jobs:
        if job.result is None:
            continue
        text = job.result.model_dump_json()
        if names := environment.broken_imports(text):
            broken[job.key] = broken.get(job.key, frozenset()) | names
        env = envs.get(job.key)
        if env is not None and (lacking := environment.lacking_names(text, env)):
            older[job.key] = {**older.get(job.key, {}), **lacking}
    for key in sorted(set(broken) | set(older)):
        env = environment.for_record(repos[key].record, settings.environments,
                                     unpinned=broken.get(key, frozenset()), older=older.get(key))
        if env is None or env.path is None or env.path == env_dirs.get(key):
            continue
        envs[key], env_dirs[key] = env, env.path
        again = run("environment", [(job, job.fixtures) for job in jobs if job.key == key and job.fixtures.cases])
        for job in (j for j in jobs if j.key == key and j.fixtures.cases):
            job.result = _unblocked(job.fixtures, again.get(_key(job.chosen.entry, job.fixtures)))
            job.findings, job.judged = job.judge(job.fixtures, job.result)


def run_and_judge(repos: Mapping[str, RepoWork], settings: RunSettings) -> Judged:
    """Synthesize fixtures, run every selected entry in the sandbox, and judge what it did. An entry
    that raised on every case at its input boundary is run again on the other plausible layouts of
    its arguments; the first the code accepts is kept, and the page says so."""
    jobs = []
    skipped = []
    envs: dict[str, environment.Environment | None] = {}
    repos = dict(repos)  # a repository whose call-site scan spends its analysis budget gets the note on its record
    for key in sorted(repos):
        work = repos[key]
        env = envs[key] = environment.for_record(work.record, settings.environments) if work.selected else None
        paths = env.paths if env is not None else ()
        # How the repository calls its own entries (scripts, tests, notebooks, README): read once per repository,
        # on what is left of its analysis budget after extraction.
        budget = Budget(spent=work.analysed)
        sites = find_call_sites(Path(_snapshot(work)), [c.entry for c in work.selected], budget=budget) \
            if work.selected else {}
        if budget.cut is not None:
            work = repos[key] = work.but(record=noted(work.record, budget))
        for chosen in work.selected:
            called = sites.get(f"{chosen.entry.path}::{chosen.entry.qualname}", [])
            try:
                fixtures = synthesize(chosen.entry, _snapshot(work), paths, called, chosen.observed)
                driven = bool(fixtures.cases) and fixtures.cases[0].protocol is not None
                jobs.append(_Job(key, chosen, fixtures, contracts.draft(chosen.entry),
                                 optional=optional_arguments(chosen.entry, called, driven)))
            except HOSTILE_TEXT as exc:  # its declarations are repository text too: a record, not the end
                skipped.append((repos[key].record.repo, f"{chosen.entry.path}::{chosen.entry.qualname}",
                                f"no fixture or contract could be drafted: {type(exc).__name__}"))
    cache = ResultCache(settings.cache / "runs" if settings.cache else None)
    snapshots = {job.key: _snapshot(repos[job.key]) for job in jobs if job.fixtures.cases}
    commits = {key: repos[key].record.commit for key in repos}  # part of the cache key
    env_dirs = {key: env.path if env is not None else None for key, env in envs.items()}
    executed = 0

    def run(label: str, pairs: list[tuple[_Job, FixtureSet]]) -> dict[tuple[str, str, str, str], RunResult]:
        """Each job on the given fixtures, in the sandbox through the cache; the runs made are counted."""
        nonlocal executed
        found, more = _run_all([RunRequest(job.chosen.entry, fx, snapshots[job.key], settings.limits,
                                           commit=commits[job.key], environment=env_dirs[job.key],
                                           decided_by=settings.decided_by)
                                for job, fx in pairs], settings, cache, label)
        executed += more
        return found

    results = run("run", [(job, job.fixtures) for job in jobs if job.fixtures.cases])
    for job in jobs:
        job.result = _unblocked(job.fixtures, results.get(_key(job.chosen.entry, job.fixtures)))
        job.findings, job.judged = job.judge(job.fixtures, job.result)
    _reinstall_broken(jobs, repos, settings, envs, env_dirs, run)
    _probe(jobs, run)
    _layouts(jobs, run)
    for job in jobs:
        if job.tried and job.judged is not None and job.judged.status == "ran_fixture":
            job.fixtures = job.fixtures.model_copy(update={"choices": [
                *job.fixtures.choices, f"Also tried {', '.join(job.tried)}: it raised on every case with each."]})
    for job in jobs:  # where our cases said nothing of the entry, the repository's own call of it decides
        assert job.judged is not None
        job.judged = verdict.from_observed(job.judged, job.chosen.observed, job.contract)
    planted_sets = {id(job): cases for job in jobs if settings.planted and (cases := planted_scores.fixtures_for(
        job.chosen.entry, job.fixtures, job.result, job.findings, recognise(job.fixtures, job.result, job.findings)))
        is not None}
    planted_runs = run("planted", [(job, planted_sets[id(job)]) for job in jobs if id(job) in planted_sets])
    made: dict[str, list] = {key: [] for key in repos}
    for job in bar(jobs, "verify", unit="sample"):
        work = repos[job.key]
        assert job.judged is not None
        papers = sorted({slug for slug, _ in work.papers})
        known = recognise(job.fixtures, job.result, job.findings)
        basis = "behaviour" if known else job.chosen.link_basis
        why = "; ".join(filter(None, [job.chosen.why, known.line() if known else None]))
        sample = make_sample(job.chosen.entry, work.record, basis, job.fixtures, job.result,
                             job.contract, job.judged, papers, job.findings, why_chosen=why,
                             observed=planted_scores.observed_on_planted(job.chosen.entry, job.chosen.observed,
                                                                         job.findings, known))
        planted_set = planted_sets.get(id(job))
        if planted_set is not None:
            scored = planted_scores.score(job.chosen.entry, planted_set,
                                          planted_runs.get(_key(job.chosen.entry, planted_set)), job.findings, known)
            sample = sample.model_copy(update={"planted": scored,
                                               "fidelity": departures.with_planted(sample.fidelity, scored)})
        found = envs.get(job.key)
        env_notes = [*(found.describe() if found is not None else []), *filter(None, [cut_note(work.record)])]
        made[job.key].append(sample.model_copy(update={"notes": [*sample.notes, *env_notes]}) if env_notes else sample)
    linked = iter(link_behaviours([s for key in sorted(repos) for s in made[key]]))
    judged_repos = {key: repos[key].but(samples=tuple(next(linked) for _ in made[key])) for key in sorted(repos)}
    return Judged({key: judged_repos[key] for key in repos}, executed=executed, cached=cache.hits,
                  final=cache.unkept == 0, skipped=tuple(skipped))
