"""Assembling each page's record (`build.pages`) from the catalogue's records: one function per page.

The HTML page and its JSON twin are both rendered from the one record each function returns, in a render
process (papers, repositories, paged lists) or in the build's own (the index, statuses, tasks,
attribution, search). A sample is shown in three shapes (a paper's `TwinSample`, a repository's
`SampleRef`, a status page's `SampleListing`): `sample_as` copies the fields each shares with the
sample's own record, so the three cannot drift from it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel

from paperproof.build.links import Link, link_order, repo_kind
from paperproof.build.pages import (
    PAGE_SCHEMAS,
    About,
    AttributionPage,
    CalledRef,
    CodeLink,
    CodeRef,
    DriverRef,
    EvaluationRef,
    Implementation,
    IndexPage,
    KindCount,
    Paging,
    PaperList,
    PaperListing,
    PaperRef,
    PaperTwin,
    PaperVerdict,
    RepoList,
    RepoListing,
    RepoRef,
    RepoTwin,
    SampleListing,
    SampleRef,
    SearchPage,
    SearchShard,
    StatusCount,
    StatusPage,
    TaskIndex,
    TaskListing,
    TaskPage,
    TaskRef,
    TwinSample,
    Verification,
    page_count,
)
from paperproof.build.paper_verdict import paper_verdict, severity_rank
from paperproof.build.urls import SiteUrls, repo_slug
from paperproof.catalogue import community
from paperproof.catalogue.archive_rows import CodeLinkRow, PaperRow, Source, task_slug
from paperproof.catalogue.repo_record import RepoRecord
from paperproof.catalogue.repo_url import safe_key
from paperproof.catalogue.sample import CHECKED_VOCABULARY, STATUS_VOCABULARY, Sample
from paperproof.verify.evaluators import MEASURES as EVALUATION_MEASURES

REPO_KIND_VOCABULARY: dict[str, str] = {
    "official": "The archive marks this repository official for the paper",
    "named_in_paper": "The archive records that the paper mentions this repository; it is not marked official",
    "listed": "In the archive's code links for this paper, not marked official and not recorded as mentioned in the paper",
    "found_in_text": "paperproof found this repository in the paper's own text; whether it is the authors' implementation is not asserted",
    "community": "Not in the archive's code links for this paper; a community repository from paperproof's curated list",
}
CLAIM = (
    "Per-sample execution status on synthesized fixtures, checked against contracts drafted from each entry's "
    "own declarations and, for recognised hardness metrics, against the paper's definition; not a correctness "
    "claim about the paper. Samples come from repositories linked to the paper, official or community; "
    "repo_kind says which."
)
READ_AT_IS = "the date of the archive snapshot and repository records this build read (or SOURCE_DATE_EPOCH), not when any sample ran"
NON_AFFILIATION = ("paperproof is not affiliated with, endorsed by, or sponsored by Papers with Code, Meta, "
                   "or the pwc-archive mirror.")
ARCHIVE_NAME = "the Papers with Code archive (the pwc-archive datasets on Hugging Face; last snapshot July 2025)"

Shape = TypeVar("Shape", bound=BaseModel)
_SHARED: dict[type[BaseModel], tuple[str, ...]] = {}  # by shape: the fields it shares with `Sample`


@dataclass(frozen=True)
class TwinContext:
    urls: SiteUrls
    read_at: str


def about(urls: SiteUrls) -> About:
    return About(
        site=urls.home(),
        non_affiliation=NON_AFFILIATION,
        licence="CC BY-SA 4.0",
        licence_url="https://creativecommons.org/licenses/by-sa/4.0/legalcode",
        attribution=urls.attribution(),
        modified="archive material modified by paperproof (joined with code links, repository records and "
                 "sample runs); see the attribution page",
    )


# --- samples ---


def sample_as(shape: type[Shape], sample: Sample, urls: SiteUrls, **given: object) -> Shape:
    """`sample` in the shape a page lists it: every field the shape shares with `Sample`, its page's URLs
    (`url`, `json_url`, where the shape has them), and the fields `given` (what the sample does not know)."""
    shared = _SHARED.get(shape)
    if shared is None:
        shared = _SHARED[shape] = tuple(name for name in shape.model_fields
                                        if name in Sample.model_fields or isinstance(getattr(Sample, name, None), property))
    values: dict[str, object] = {name: getattr(sample, name) for name in shared}
    if "url" in shape.model_fields:
        values["url"] = urls.sample(sample.sample_id)
    if "json_url" in shape.model_fields:
        values["json_url"] = urls.sample_json(sample.sample_id)
    values.update(given)
    return shape(**values)


def twin_sample(sample: Sample, kind: str, urls: SiteUrls) -> TwinSample:
    return sample_as(TwinSample, sample, urls, repo_kind=kind,
                     code=CodeRef(code_sha256=sample.code_sha256, url=urls.sample_json(sample.sample_id)))


def sample_listing(sample: Sample, urls: SiteUrls, kind: str | None = None) -> SampleListing:
    return sample_as(SampleListing, sample, urls, repo_kind=kind)


# The Data Maps four first (the paper's order), then any other metric by name.
METRIC_ORDER = ("confidence", "variability", "correctness", "forgetfulness")


def implementations(samples: Sequence[TwinSample]) -> list[Implementation]:
    """Every sample output recognised as a hardness metric: the official repository's first, each the most severe
    departure first, then by metric, with the variant the official code computes beside each (the official code
    is the `official` repository kind)."""
    found = [(s, f) for s in samples if isinstance(s.fidelity, list) for f in s.fidelity]
    official: dict[str, set[str]] = {}
    for s, f in found:
        if s.repo_kind == "official":
            official.setdefault(f.metric, set()).add(f.matches)
    rank = {m: i for i, m in enumerate(METRIC_ORDER)}
    found.sort(key=lambda sf: (sf[0].repo_kind != "official", severity_rank(sf[1]), rank.get(sf[1].metric, len(rank)),
                               sf[1].metric, sf[0].repo.lower(), sf[0].entry, sf[1].output))
    rows = []
    for s, f in found:
        theirs = official.get(f.metric)
        w = f.worked if f.departures else None
        rows.append(Implementation(
            metric=f.metric, repo=s.repo, repo_kind=s.repo_kind, entry=s.entry, url=s.url if isinstance(s.url, str) else "",
            status=s.status, output=f.output, matches=f.matches, paper=f.paper, departs_from_paper=list(f.departures),
            official_matches=sorted(theirs) if theirs else None,
            same_as_official=(f.matches in theirs) if theirs else None,
            severity=w.severity if w else None, rank_correlation=w.rank_correlation if w else None,
            top_overlap=w.top_overlap if w else None, planted_auroc=w.planted_auroc if w else None,
            paper_planted_auroc=w.paper_planted_auroc if w else None))
    return rows


def sample_order(samples: list[TwinSample]) -> list[TwinSample]:
    """The official repository's samples first; then run samples first, then by entry name (ASCII); forks with
    the same entry keep their order."""
    return sorted(samples, key=lambda s: (s.repo_kind != "official", -s.verification_level, s.entry))


# --- papers ---


def paper_twin(paper: PaperRow, source: Source, links: Sequence[CodeLinkRow | Link], records: Mapping[str, RepoRecord],
               samples: Mapping[str, Sequence[Sample]], ctx: TwinContext) -> PaperTwin:
    urls = ctx.urls
    slug = paper.slug
    ordered = sorted(links, key=link_order)
    provenance = (f"external:paperswithcode_snapshot_{source.snapshot}" if source.row_kind != "specimen"
                  else "specimen:paperproof_bundled")
    code_links, repo_refs, twin_samples = [], [], []
    kinds: dict[str, list[str]] = {}
    seen: set[str] = set()
    for link in ordered:
        key = safe_key(link.repo_url)
        record = records.get(key.key) if key else None
        reach = record.reach if record else None
        code_links.append(CodeLink(
            paper_slug=slug, repo_url=link.repo_url, is_official=int(bool(link.is_official)),
            mentioned_in_paper=int(bool(link.mentioned_in_paper)), mentioned_in_github=int(bool(link.mentioned_in_github)),
            framework=link.framework, reach=reach,
        ))
        if key is None or key.key in seen:
            continue
        seen.add(key.key)
        repo_refs.append(RepoRef(provenance=provenance, url=link.repo_url, reach=reach))
        kind = repo_kind(link)
        for sample in samples.get(key.key, []):
            twin_samples.append(twin_sample(sample, kind, urls))
            kinds.setdefault(kind, [])
            if key.key not in kinds[kind]:
                kinds[kind].append(key.key)
    for ckey in community.curated().for_paper(slug):  # curated repositories of this paper, after its code links
        record = records.get(ckey.key)
        if record is None or ckey.key in seen:
            continue
        seen.add(ckey.key)
        repo_refs.append(RepoRef(provenance=community.PROVENANCE, url=record.url, reach=record.reach))
        for sample in samples.get(ckey.key, []):
            twin_samples.append(twin_sample(sample, community.KIND, urls))
            kinds.setdefault(community.KIND, [])
            if ckey.key not in kinds[community.KIND]:
                kinds[community.KIND].append(ckey.key)
    twin_samples = sample_order(twin_samples)
    counts = Counter(s.status for s in twin_samples)
    summary = {status: counts[status] for status in STATUS_VOCABULARY if counts[status]}
    by_kind = {
        kind: KindCount(
            samples=sum(1 for s in twin_samples if s.repo_kind == kind),
            ran=sum(1 for s in twin_samples if s.repo_kind == kind and s.status.startswith("ran")),
            repositories=len(repos),
        )
        for kind, repos in kinds.items()
    }
    verification = Verification(
        page_url=urls.paper(slug),
        json_url=urls.paper_json(slug),
        api={"papers": urls.api("papers"), "repos": urls.api("repos"), "schema": urls.schema("paper")},
        schema_url=urls.schema("paper"),
        read_at=ctx.read_at,
        read_at_is=READ_AT_IS,
        claim=CLAIM,
        repos=repo_refs,
        summary=summary,
        by_repo_kind=by_kind,
        repo_kind_vocabulary=REPO_KIND_VOCABULARY,
        status_vocabulary=STATUS_VOCABULARY,
        checked={word: n for word in CHECKED_VOCABULARY
                 if (n := sum(1 for s in twin_samples if isinstance(s.checked, str) and s.checked == word))},
        checked_vocabulary=CHECKED_VOCABULARY,
        n_pointer_only_for_licence=sum(1 for s in twin_samples if not s.inline_ok),
        samples=twin_samples,
        **({"implementations": rows} if (rows := implementations(twin_samples)) else {}),
    )
    return PaperTwin(
        about=about(urls), url=urls.paper(slug), title=paper.title, verdict=paper_verdict(twin_samples),
        arxiv_id=paper.arxiv_id, date=paper.date,
        proceeding=paper.proceeding, authors=list(paper.authors), abstract=paper.abstract, url_abs=paper.url_abs,
        url_pdf=paper.url_pdf, source=source, code_links=code_links,
        tasks=[TaskRef(task_slug=task_slug(t), task_name=t) for t in paper.tasks],
        methods=list(paper.methods), datasets_introduced=[], methods_introduced=[], results=[],
        verification=verification, arxiv_metadata=None, extracted_results=None,
    )


def paper_listing(twin: PaperTwin, slug: str, specimen: bool, urls: SiteUrls) -> PaperListing:
    """A paper as the lists show it, from its twin: its samples by status and its verdict."""
    samples = twin.verification.samples
    verdict = twin.verdict if isinstance(twin.verdict, PaperVerdict) else paper_verdict(samples)
    return PaperListing(
        slug=slug, title=twin.title, date=twin.date, authors=list(twin.authors), tasks=[t.task_name for t in twin.tasks],
        specimen=specimen, samples=len(samples), statuses=dict(twin.verification.summary), verdict=verdict,
        url=urls.paper(slug), json_url=urls.paper_json(slug))


# --- repositories ---


def repo_twin(record: RepoRecord, samples: Iterable[Sample], papers: list[tuple[str, str, str]],
              urls: SiteUrls) -> RepoTwin:
    """A repository's record as published (no local paths), with its papers [(slug, title, kind)] and samples."""
    slug = repo_slug(record.host, record.repo)
    listed = list(samples)
    return RepoTwin(
        url=record.url, repo=record.repo, host=record.host, source=record.source, reach=record.reach,
        licence=record.licence, licence_file=record.licence_file, commit=record.commit,
        readme=record.readme, note=record.note, specimen=record.specimen,
        page_url=urls.repo(slug), json_url=urls.repo_json(slug),
        papers=[PaperRef(slug=s, title=t, url=urls.paper(s), repo_kind=kind) for s, t, kind in papers],
        samples=[sample_as(SampleRef, s, urls) for s in listed],
        evaluations=[EvaluationRef(entry=s.entry, url=urls.sample(s.sample_id), measure=f.metric, reading=f.matches,
                                   paper=f.paper, departure="; ".join(f.departures) or None)
                     for s in listed for f in s.fidelity if f.metric in EVALUATION_MEASURES],
        drivers=driver_refs(record, listed, urls),
        **{k: v for k, v in (("made_by", record.made_by), ("stale", record.stale)) if v},
    )


def driver_refs(record: RepoRecord, samples: Iterable[Sample], urls: SiteUrls) -> list[DriverRef]:
    """The repository's drivers as its page lists them, each entry it called linked to that entry's sample."""
    pages = {f"{s.path}::{s.entry}": urls.sample(s.sample_id) for s in samples}
    return [DriverRef(target=d.target, kind=d.kind, status=d.status, ended=d.ended, error=d.error,
                      replaced=d.replaced, url=record.line_url(d.path, d.line),
                      called=[CalledRef(entry=key, calls=n, per_sample=key in d.scores, url=pages.get(key))
                              for key, n in d.called.items()])
            for d in record.drivers]


def repo_listing(record: RepoRecord, papers: int, samples: int, urls: SiteUrls) -> RepoListing:
    slug = repo_slug(record.host, record.repo)
    return RepoListing(
        slug=slug, repo=record.repo, host=record.host, url=record.url, licence=record.licence,
        source=record.source, specimen=record.specimen, topic=record.topic, papers=papers,
        samples=samples, page_url=urls.repo(slug), json_url=urls.repo_json(slug))


# --- list pages ---


def pagings(total: int, size: int, page_url: Callable[[int], str], json_url: Callable[[int], str]) -> list[Paging]:
    """Where each page of a list of `total` items, `size` a page, sits in it."""
    pages = page_count(total, size)
    return [Paging(
        page=number, pages=pages, page_size=size, total=total, page_url=page_url(number), json_url=json_url(number),
        prev=json_url(number - 1) if number > 1 else None, next=json_url(number + 1) if number < pages else None,
        prev_page_url=page_url(number - 1) if number > 1 else None,
        next_page_url=page_url(number + 1) if number < pages else None) for number in range(1, pages + 1)]


# The paged lists are assembled from rows this build validated when it made them (`model_construct`).

def paper_list(site_about: About, urls: SiteUrls, paging: Paging, listings: list[PaperListing]) -> PaperList:
    return PaperList.model_construct(about=site_about, schema_url=urls.schema("paper-list"), paging=paging,
                                     papers=listings)


def repo_list(site_about: About, urls: SiteUrls, paging: Paging, listings: list[RepoListing]) -> RepoList:
    return RepoList.model_construct(about=site_about, schema_url=urls.schema("repo-list"), paging=paging,
                                    repos=listings)


def task_page(site_about: About, urls: SiteUrls, paging: Paging, listings: list[PaperListing], slug: str, name: str,
              other_names: list[str]) -> TaskPage:
    return TaskPage.model_construct(about=site_about, schema_url=urls.schema("task"), task_slug=slug, task_name=name,
                                    other_names=list(other_names), paging=paging, papers=listings)


def status_counts(samples: Iterable[Sample], urls: SiteUrls) -> list[StatusCount]:
    counts: Counter[str] = Counter(s.status for s in samples)
    return [StatusCount(status=k, meaning=v, samples=counts[k], url=urls.status(k), json_url=urls.status_json(k))
            for k, v in STATUS_VOCABULARY.items()]


def status_page(site_about: About, urls: SiteUrls, status: str, statuses: list[StatusCount], paging: Paging,
                samples: list[SampleListing]) -> StatusPage:
    return StatusPage(about=site_about, schema_url=urls.schema("status"), status=status,
                      meaning=STATUS_VOCABULARY[status], statuses=statuses, paging=paging, samples=samples)


def task_listing(slug: str, name: str, papers: int, urls: SiteUrls) -> TaskListing:
    return TaskListing(task_slug=slug, task_name=name, papers=papers, url=urls.task(name), json_url=urls.task_json(name))


def task_index(site_about: About, urls: SiteUrls, listings: list[TaskListing]) -> TaskIndex:
    ordered = sorted(listings, key=lambda t: (t.task_name.lower(), t.task_slug))
    return TaskIndex(about=site_about, schema_url=urls.schema("task-index"), page_url=urls.tasks(),
                     json_url=urls.tasks_json(), tasks=ordered)


def index_page(site_about: About, urls: SiteUrls, read_at: str, *, papers_total: int, repositories: int, samples: int,
               statuses: list[StatusCount], papers: list[PaperListing], verified: list[PaperListing],
               partial: list[str], paper_grades: dict[str, int], sample_grades: dict[str, int]) -> IndexPage:
    return IndexPage(
        about=site_about, schema_url=urls.schema("index"), page_url=urls.home(), json_url=urls.index_json(),
        read_at=read_at, papers_total=papers_total, repositories=repositories, samples=samples, statuses=statuses,
        sample_grades=sample_grades, paper_grades=paper_grades, papers=papers, papers_url=urls.papers(),
        verified=verified,
        api={"papers": urls.api_papers(), "repos": urls.api_repos(), "tasks": urls.tasks_json(),
             "feed": urls.feed(), "sitemap": urls.sitemap(), "search": urls.search_json()},
        schemas={name: urls.schema(name) for name in PAGE_SCHEMAS}, partial=partial,
    )


def attribution_page(site_about: About, urls: SiteUrls) -> AttributionPage:
    return AttributionPage(
        about=site_about, schema_url=urls.schema("attribution"), page_url=urls.attribution(),
        json_url=urls.attribution_json(), archive=ARCHIVE_NAME, archive_licence="CC BY-SA 4.0",
        archive_licence_url="https://creativecommons.org/licenses/by-sa/4.0/legalcode",
        modified=("paperproof modified this material: it joined papers with their code links, repository records "
                  "and sample runs, normalised task names into slugs, and ordered code links. The modified records "
                  "on this site are shared under the same licence."),
        specimens=("Papers and repositories marked specimen were written for paperproof to exercise every status. "
                   "They describe no real paper and no real project."),
        code=("Code from harvested repositories is shown inline only when its licence allows redistribution; each "
              "sample page names the licence. Otherwise the page links to the file at its source."),
        non_affiliation=NON_AFFILIATION,
    )


def search_page(site_about: About, urls: SiteUrls, *, available: bool, reason: str | None, fields: list[str],
                split: str, shards: list[SearchShard]) -> SearchPage:
    return SearchPage(about=site_about, schema_url=urls.schema("search"), page_url=urls.search(),
                      json_url=urls.search_json(), available=available, reason=reason, fields=fields, split=split,
                      shards=shards)
