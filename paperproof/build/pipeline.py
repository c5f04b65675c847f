"""The build: one function that reads as the list of stages.

archive -> links -> repositories -> entries -> fixtures -> runs -> verdicts -> pages -> publish.
Each stage is a function of records in and records out, testable alone. The site is written to a
staging directory and swapped in only when complete, so a failed build leaves the old site served.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from paperproof.build import leaks, shipped
from paperproof.build.code_pages import write_code
from paperproof.build.guard import guard
from paperproof.build.indexes import write_indexes
from paperproof.build.links import LinkTable, read_link_table, repo_kind
from paperproof.build.manifest import input_files
from paperproof.build.open_site import open_site
from paperproof.build.paper_pages import write_papers
from paperproof.build.repo_pages import write_repositories
from paperproof.build.summary import BuildSummary
from paperproof.build.urls import SiteUrls
from paperproof.catalogue.archive import Archive, Reject, bundled_root, open_archive
from paperproof.catalogue.budget import Budget, noted
from paperproof.catalogue.community import KIND as COMMUNITY_KIND
from paperproof.catalogue.community import Community, annotate, curated
from paperproof.catalogue.extract import HOSTILE_TEXT, extract_repo
from paperproof.catalogue.observed import listed, observations
from paperproof.catalogue.repo_record import RepoRecord
from paperproof.catalogue.repo_url import RepoKey, safe_key
from paperproof.catalogue.repo_work import RepoWork
from paperproof.catalogue.repos import LocalRepos, RepoSource, readme_text, record_without_source
from paperproof.catalogue.select import DEFAULT_PER_REPO, paper_terms, select
from paperproof.catalogue.shipped import ShippedResults
from paperproof.catalogue.store import StoreRepos
from paperproof.plumbing.progress import bar
from paperproof.verify.observing import Observer
from paperproof.verify.stage import RunSettings, run_and_judge


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
    allow_partial: bool = False  # build from the rows before the damage of a dump that breaks (marked partial)
    environments: Path | None = None  # where per-repository environments are cached; None: the runner's only
    shipped: Path | None = None  # shipped verification records (`catalogue.shipped`); None: the bundled ones


def build(config: BuildConfig) -> BuildSummary:
    summary = BuildSummary(out=str(config.out))
    guard(config.out, config.cache, config.check)  # before anything is written: never destroy what is not ours
    secrets = leaks.take()  # out of the environment before anything is started; looked for before publishing
    archive = open_archive(config.archive, config.allow_partial)
    # The site first: it forks the render processes before anything is read (see build.open_site).
    with open_site(config.out, SiteUrls(config.base_url), read_at(archive), cache=config.cache, jobs=config.jobs,
                   check=config.check, inputs=input_files(config.archive), secrets=secrets) as site:
        with summary.timed("links"):
            links = read_links(archive, *site.links_store())
        with summary.timed("repositories"):
            results = ShippedResults(config.shipped or shipped.bundled_results())
            repos = resolve_repositories(links, shipped.ShippedRepos(repository_source(config), results))
        with summary.timed("samples"):
            terms = collect_paper_terms(archive, links, repos)
            with observer_for(run_settings(config)) as observer:
                repos = select_entries(repos, terms, config.per_repo, summary, observer)
            judged = run_and_judge(repos, run_settings(config))
            repos, summary.executed, summary.cached = judged.repos, judged.executed, judged.cached
            ran_here = [w for w in repos.values() if w.record.has_source]  # shipped records ran elsewhere
            summary.drivers.update(d.status for w in ran_here for d in w.record.drivers)
            summary.observed = sum(1 for w in ran_here for s in w.samples if s.observed)
            repos = shipped.attach(repos, results)
            summary.skipped_files.extend(judged.skipped)
        with summary.timed("paper pages"):
            papers = write_papers(site, archive, links, repos)
        with summary.timed("repository pages"):
            repositories = write_repositories(site, repos, papers)
        with summary.timed("code"):
            write_code(site, repos, papers.noop)
        with summary.timed("indexes and search"):
            write_indexes(site, papers, repositories)
    summary.papers = papers.count
    summary.rejects = archive.rejects + site.rejects
    summary.partial = [d.message() for d in archive.damages]
    summary.notes = site.notes
    summary.pages = dict(site.counts)
    summary.stale = site.stale
    summary.damage, summary.repaired = site.damage, site.repaired
    summary.noop = papers.noop
    summary.check = config.check
    summary.repositories = len(repos)
    summary.repositories_with_source = sum(1 for w in repos.values() if w.record.has_source)
    summary.samples.update(s.status for w in repos.values() for s in w.samples)
    summary.shipped = shipped.summary_lines(repos, results)
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


class Layered:
    """`--repos` over the bundled snapshot: a repository comes from the given checkouts, else from the bundled
    specimens' own source, so adding checkouts never takes the specimens' away."""

    def __init__(self, first: RepoSource, then: RepoSource) -> None:
        self.first, self.then = first, then

    def record_for(self, key: RepoKey) -> RepoRecord:
        record = self.first.record_for(key)
        if record.has_source:
            return record
        fallback = self.then.record_for(key)
        return fallback if fallback.has_source else record


def repository_source(config: BuildConfig) -> RepoSource:
    if config.store is not None:
        return StoreRepos(config.store)
    bundled = LocalRepos(bundled_root() / "repos", specimen=True,
                         missing_note="not harvested: the bundled snapshot carries neither its source nor "
                                     "verification records of it")
    if config.repos is not None:
        local = LocalRepos(config.repos, unpack_dir=(config.cache or config.out.parent / ".paperproof-cache") / "unpacked")
        return Layered(local, bundled) if config.archive is None else local
    if config.archive is None:
        return bundled
    return NoSources()


def resolve_repositories(links: LinkTable, source: RepoSource,
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
    repos = {k: RepoWork(source.record_for(keys[k]), papers=tuple(papers[k]))
             for k in bar(sorted(keys), "repositories", unit="repo")}
    return add_community(repos, source, curated() if community is None else community)


def add_community(repos: dict[str, RepoWork], source: RepoSource, community: Community) -> dict[str, RepoWork]:
    """Curated repositories: each gets a record (so a page) and its papers, as kind `community`, unless linked."""
    repos = dict(repos)
    for entry in community:
        key = entry.key
        work = repos.get(key.key) or RepoWork(source.record_for(key))
        linked = {slug for slug, _ in work.papers}
        repos[key.key] = work.but(record=annotate(work.record, entry), papers=work.papers + tuple(
            (slug, COMMUNITY_KIND) for slug in entry.papers if slug not in linked))
    return repos


def collect_paper_terms(archive: Archive, links: LinkTable,
                        repos: dict[str, RepoWork]) -> dict[str, set[str]]:
    """Per repository with source, the vocabulary of the papers linking it (abstracts and tasks)."""
    wanted = {slug for w in repos.values() if w.record.has_source for slug, _ in w.papers}
    by_paper: dict[str, set[str]] = {}
    if wanted:
        for paper, _ in archive.papers():
            if paper.slug in wanted:
                by_paper[paper.slug] = paper_terms(paper.abstract, paper.tasks)
    return {k: set().union(*(by_paper.get(s, set()) for s, _ in w.papers)) for k, w in repos.items() if w.record.has_source}


def select_entries(repos: dict[str, RepoWork], terms: dict[str, set[str]], per_repo: int,
                   summary: BuildSummary, observer: Observer | None = None) -> dict[str, RepoWork]:
    """Extract every entry of each repository with `ast`, run the repository's own drivers in the sandbox
    (`observer`; none without one), then keep what they showed returning a score per sample and the most relevant
    of the rest. Each repository's analysis has its budget of CPU time (`catalogue.budget`): one that spends it
    keeps what was read, and its record says so."""
    chosen = dict(repos)
    for key, work in bar(sorted(repos.items()), "extract and observe", unit="repo"):
        record = work.record
        if record.snapshot is None:  # no source (`has_source`): nothing to extract
            continue
        root = Path(record.snapshot)
        budget = Budget()
        try:
            report = extract_repo(root, record.repo, budget)
            readme = readme_text(record)
            drivers = observer.drivers(record, report.entries) if observer is not None else []
            selected = tuple(select(report.entries, terms.get(key, set()), readme, per_repo, observations(drivers)))
        except (*HOSTILE_TEXT, OSError) as exc:  # a repository is a record, never the end of the build
            reason = f"its code was not read: {type(exc).__name__}: {str(exc)[:200]}"
            chosen[key] = work.but(record=record.model_copy(update={"note": "; ".join(filter(None, (record.note, reason)))}))
            continue
        summary.skipped_files.extend((record.repo, path, reason) for path, reason in report.skipped)
        record = record.model_copy(update={"drivers": listed(drivers)})
        chosen[key] = work.but(record=noted(record, budget), selected=selected, analysed=budget.spent)
    return chosen


def observer_for(settings: RunSettings) -> Observer:
    """Where the repositories' drivers run: the sandbox, each repository in its environment, kept in the cache."""
    return Observer(settings.environments, settings.limits, settings.cache, settings.workers)


def run_settings(config: BuildConfig) -> RunSettings:
    return RunSettings(workers=config.workers, cache=config.cache, scheduler=config.scheduler, limits=config.limits,
                       environments=config.environments)


def read_at(archive: Archive) -> str:
    """The inputs' date: SOURCE_DATE_EPOCH when set, else the archive snapshot's date. Never the clock."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        if not epoch.isdigit():
            raise ValueError(f"SOURCE_DATE_EPOCH={epoch!r} is not a count of seconds since 1970-01-01 UTC; "
                             "unset it to date the site by its archive snapshot")
        return datetime.fromtimestamp(int(epoch), tz=UTC).isoformat()
    dates = sorted(p.source.snapshot for p in archive.parts if p.source.snapshot[:4].isdigit())
    day = dates[-1] if dates else "1970-01-01"
    return f"{day}T00:00:00+00:00"


__all__ = ["BuildConfig", "build", "Reject"]
