"""The build: one function that reads as the list of stages.

archive -> links -> repositories -> entries -> fixtures -> runs -> verdicts -> pages -> publish.
Each stage is a function of records in and records out, testable alone. The site is written to a
staging directory and swapped in only when complete, so a failed build leaves the old site served.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from paperproof.build import contracts, fidelity, verdict
from paperproof.build.progress import BuildSummary, bar
from paperproof.build.samples import link_behaviours, make_sample
from paperproof.build.links import LinkTable, read_link_table
from paperproof.build.manifest import input_files
from paperproof.build.site import SiteWriter
from paperproof.build.twin import repo_kind, safe_key
from paperproof.build.urls import SiteUrls
from paperproof.catalogue.archive import Archive, Reject, bundled_root, open_archive
from paperproof.catalogue.archive_rows import CodeLinkRow
from paperproof.catalogue.community import KIND as COMMUNITY_KIND, Community, annotate, curated
from paperproof.catalogue.extract import extract_repo
from paperproof.catalogue.repo_record import RepoRecord
from paperproof.catalogue.repos import LocalRepos, RepoSource, record_without_source
from paperproof.catalogue.repo_url import RepoKey
from paperproof.catalogue.sample import Sample
from paperproof.catalogue.select import DEFAULT_PER_REPO, Selected, paper_terms, select
from paperproof.catalogue.store import StoreRepos
from paperproof.fixtures.synth import synthesize
from paperproof.runner import environment
from paperproof.runner.distributed import make_executor
from paperproof.runner.executor import ResultCache, RunRequest


@dataclass
class BuildConfig:
    archive: str | None = None
    repos: Path | None = None
    out: Path = Path("site")
    base_url: str = ""
    workers: int | None = None
    cache: Path | None = Path(".paperproof-cache")
    per_repo: int = DEFAULT_PER_REPO
    scheduler: str | None = None  # a Dask scheduler address: run samples on that cluster
    limits: dict | None = None  # per-sample sandbox limits (`runner.sandbox.Limits` fields)
    store: Path | None = None  # a harvest store (`paperproof harvest`), used as `repos` is
    jobs: int | None = None  # render processes (default: one per core)
    check: bool = False  # write nothing; the summary's `stale` says what a build would change
    environments: Path | None = None  # where per-repository environments are cached; None: the runner's only


@dataclass
class RepoWork:
    """What one repository contributes: its record, the entries chosen and the papers linking it."""

    record: RepoRecord
    selected: list[Selected] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    papers: list[tuple[str, str]] = field(default_factory=list)  # (slug, repo kind)


def build(config: BuildConfig) -> BuildSummary:
    summary = BuildSummary(out=str(config.out))
    archive = open_archive(config.archive)
    # The site writer first: it forks the render processes before anything is read (see build.site).
    with SiteWriter(config.out, SiteUrls(config.base_url), read_at(archive), cache=config.cache, jobs=config.jobs,
                    check=config.check, inputs=input_files(config.archive)) as site:
        with summary.timed("links"):
            links = read_links(archive, *site.links_store())
        with summary.timed("repositories"):
            repos = resolve_repositories(links, repository_source(config))
        with summary.timed("samples"):
            terms = collect_paper_terms(archive, links, repos)
            select_entries(repos, terms, config.per_repo, summary)
            run_and_judge(repos, config, summary)
        with summary.timed("paper pages"):
            summary.papers = site.write_papers(archive, links, repos)
        with summary.timed("repository pages"):
            site.write_repositories(repos)
        with summary.timed("indexes and search"):
            site.write_indexes()
    summary.rejects = archive.rejects + site.rejects
    summary.notes = site.notes
    summary.pages = dict(site.counts)
    summary.stale = site.stale
    summary.noop = site.noop
    summary.check = config.check
    summary.repositories = len(repos)
    summary.repositories_with_source = sum(1 for w in repos.values() if w.record.has_source)
    summary.samples.update(s.status for w in repos.values() for s in w.samples)
    return summary


# --- stages ---------------------------------------------------------------------------------


def read_links(archive: Archive, store: Path | None = None, fingerprint: str | None = None) -> LinkTable:
    """Code links grouped by paper slug, one per (paper, repository): a table on disk at `store` (reused while
    the links dump's `fingerprint` is the same), in memory without one (`build.links`)."""
    return read_link_table(archive, store, fingerprint)


class NoSources:
    """Used when a build is given an archive but no repositories: every link says so."""

    def record_for(self, key: RepoKey) -> RepoRecord:
        return record_without_source(key, "no source: the build was given no --repos")


def repository_source(config: BuildConfig) -> RepoSource:
    if config.store is not None:
        return StoreRepos(config.store)
    if config.repos is not None:
        return LocalRepos(config.repos, unpack_dir=(config.cache or config.out.parent / ".paperproof-cache") / "unpacked")
    if config.archive is None:
        return LocalRepos(bundled_root() / "repos", specimen=True,
                          missing_note="not bundled: the snapshot carries no source for this repository")
    return NoSources()


def resolve_repositories(links: dict[str, list[CodeLinkRow]], source: RepoSource,
                         community: Community | None = None) -> dict[str, RepoWork]:
    """A record for every repository any link points at, keyed by normalised URL. One pass over the links
    (each URL normalised once) gathers the repositories and, in slug order, the papers linking each."""
    keys: dict[str, RepoKey] = {}
    papers: dict[str, list[tuple[str, str]]] = {}
    for slug, paper_links in links.items():
        for link in paper_links:
            key = safe_key(link.repo_url)
            if key is not None:
                keys.setdefault(key.key, key)
                papers.setdefault(key.key, []).append((slug, repo_kind(link)))
    repos = {k: RepoWork(source.record_for(keys[k]), papers=papers[k])
             for k in bar(sorted(keys), "repositories", unit="repo")}
    add_community(repos, source, curated() if community is None else community)
    return repos


def add_community(repos: dict[str, RepoWork], source: RepoSource, community: Community) -> None:
    """Curated repositories: each gets a record (so a page) and its papers, as kind `community`, unless linked."""
    for entry in community:
        key = entry.key
        work = repos.get(key.key)
        if work is None:
            work = repos[key.key] = RepoWork(source.record_for(key))
        work.record = annotate(work.record, entry)
        linked = {slug for slug, _ in work.papers}
        work.papers.extend((slug, COMMUNITY_KIND) for slug in entry.papers if slug not in linked)


def collect_paper_terms(archive: Archive, links: dict[str, list[CodeLinkRow]],
                        repos: dict[str, RepoWork]) -> dict[str, set[str]]:
    """Per repository with source, the vocabulary of the papers linking it (abstracts and tasks)."""
    wanted = {slug for w in repos.values() if w.record.has_source for slug, _ in w.papers}
    by_paper: dict[str, set[str]] = {}
    if wanted:
        for paper, _ in archive.papers():
            if paper.slug in wanted:
                by_paper[paper.slug] = paper_terms(paper.abstract, paper.tasks)
    return {k: set().union(*(by_paper.get(s, set()) for s, _ in w.papers)) for k, w in repos.items() if w.record.has_source}


def select_entries(repos: dict[str, RepoWork], terms: dict[str, set[str]], per_repo: int, summary: BuildSummary) -> None:
    """Extract every entry of each repository with `ast`, then keep the most relevant."""
    for key, work in bar(sorted(repos.items()), "extract", unit="repo"):
        record = work.record
        if not record.has_source:
            continue
        root = Path(record.snapshot)
        report = extract_repo(root, record.repo)
        summary.skipped_files.extend((record.repo, path, reason) for path, reason in report.skipped)
        readme = (root / record.readme).read_text(encoding="utf-8", errors="replace") if record.readme else ""
        work.selected = select(report.entries, terms.get(key, set()), readme, per_repo)


def run_and_judge(repos: dict[str, RepoWork], config: BuildConfig, summary: BuildSummary) -> None:
    """Synthesize fixtures, run every selected entry in the sandbox, and judge what it did."""
    jobs = []
    for key in sorted(repos):
        work = repos[key]
        env = environment.for_record(work.record, config.environments) if work.selected else None
        for chosen in work.selected:
            fixtures = synthesize(chosen.entry, work.record.snapshot, env.paths if env else ())
            jobs.append((work, chosen, fixtures, contracts.draft(chosen.entry), env))
    runnable = [RunRequest(c.entry, f, work.record.snapshot, config.limits, env.path if env else None)
                for work, c, f, _, env in jobs if f.cases]
    cache = ResultCache(config.cache / "runs" if config.cache else None)
    results = {}
    if runnable:
        with make_executor(config.workers, cache, config.scheduler) as executor:
            for request, result in zip(runnable, bar(executor.run(runnable), "run", total=len(runnable), unit="sample")):
                results[request.entry.code_sha256, request.entry.path, request.entry.repo] = result
            summary.executed = executor.executed
            summary.cached = cache.hits
    for work, chosen, fixtures, contract, env in bar(jobs, "verify", unit="sample"):
        result = results.get((chosen.entry.code_sha256, chosen.entry.path, chosen.entry.repo))
        findings = fidelity.assess(fixtures, result)
        judged = verdict.judge(fixtures, result, contract, findings)
        papers = sorted({slug for slug, _ in work.papers})
        sample = make_sample(chosen.entry, work.record, chosen.link_basis, fixtures, result, contract, judged,
                             papers, findings)
        if env is not None and env.describe():
            sample = sample.model_copy(update={"notes": [*sample.notes, *env.describe()]})
        work.samples.append(sample)
    linked = iter(link_behaviours([s for key in sorted(repos) for s in repos[key].samples]))
    for key in sorted(repos):
        repos[key].samples = [next(linked) for _ in repos[key].samples]


def read_at(archive: Archive) -> str:
    """The inputs' date: SOURCE_DATE_EPOCH when set, else the archive snapshot's date. Never the clock."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        if not epoch.isdigit():
            raise ValueError(f"SOURCE_DATE_EPOCH={epoch!r} is not a count of seconds since 1970-01-01 UTC; "
                             "unset it to date the site by its archive snapshot")
        return datetime.fromtimestamp(int(epoch), tz=timezone.utc).isoformat()
    dates = sorted(p.source.snapshot for p in archive.parts if p.source.snapshot[:4].isdigit())
    day = dates[-1] if dates else "1970-01-01"
    return f"{day}T00:00:00+00:00"


__all__ = ["BuildConfig", "build", "Reject"]
