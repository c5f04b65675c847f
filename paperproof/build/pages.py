"""The records of the site's pages, one module: each page is rendered from one of these, and the record
itself is the page's JSON twin, so the two cannot disagree. `build.records` assembles each of them.

- a paper's twin (`PaperTwin`) keeps, key for key, the structure of the seed records. The seeds come
  from a vendor catalogue; our twin keeps their keys and order but gives the vendor names neutral ones
  (`SEED_RENAMES`) and points the vendor endpoints at this site. The models read the seed files
  unchanged through validation aliases, so a seed round-trips to our names. Keys that one seed has and
  another lacks are typed `MISSING`, so absence survives the round trip;
- a repository's (`RepoTwin`); a sample's page has the sample's own record (`catalogue.sample.Sample`);
- the list pages' (index, paper and repository lists, tasks, statuses, attribution, search). Lists are
  paged (`Paging`) with a fixed page size, in a stable order; `api/papers.json` and `api/repos.json`
  are the first pages of the paper and repository lists.
"""

from __future__ import annotations

from typing import Any

from pydantic import MISSING, AliasChoices, BaseModel, ConfigDict, Field

from paperproof.catalogue.archive_rows import PaperMethod, Source
from paperproof.catalogue.planted_record import PlantedHardness
from paperproof.catalogue.repo_record import Reach
from paperproof.catalogue.sample import Fidelity, Sample

PAGE_SIZE = 1000  # items per list page, HTML and JSON alike
INDEX_PAPERS = 100  # papers listed on the index itself; the paper list has the rest


class PageModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# Seed key -> our key. Vendor-named keys get neutral names; vendor endpoints become our URLs.
SEED_RENAMES: dict[str, str] = {
    "syntology": "verification",
    "syntology_extracted_results": "extracted_results",
    "syntology_url": "page_url",
    "atlas_url": "json_url",
    "mcp": "api",
    "developers": "schema_url",
    "mcp_get_code": "code",
}


def _seed_alias(name: str) -> AliasChoices:
    seed = {ours: theirs for theirs, ours in SEED_RENAMES.items()}[name]
    return AliasChoices(name, seed)


class About(PageModel):
    site: str
    non_affiliation: str
    licence: str
    licence_url: str
    attribution: str
    modified: str


class CodeLink(PageModel):
    """A code link as the twin shows it; flags are 0/1 (booleans in the raw dumps)."""

    paper_slug: str
    repo_url: str
    is_official: int
    mentioned_in_paper: int
    mentioned_in_github: int
    framework: str | None
    reach: Reach | None


class TaskRef(PageModel):
    task_slug: str
    task_name: str


class RepoRef(PageModel):
    provenance: str
    url: str
    reach: Reach | None


class KindCount(PageModel):
    samples: int
    ran: int
    repositories: int


class CodeRef(PageModel):
    """Where a program fetches the sample's code and record (the seeds' `mcp_get_code`)."""

    code_sha256: str
    url: str | MISSING = MISSING


class TwinSample(PageModel):
    code_sha256_prefix: str
    entry: str
    repo: str
    repo_kind: str
    path: str
    file_url: str
    link_basis: str
    language: str
    status: str
    verification_level: int
    contract_check: str | None
    metamorphic_tier: str | None
    behaviour_fingerprint: bool
    licence: str
    inline_ok: bool
    code: CodeRef = Field(validation_alias=_seed_alias("code"))
    reason: str | MISSING = MISSING
    url: str | MISSING = MISSING
    checked: str | None | MISSING = MISSING
    fidelity: list[Fidelity] | MISSING = MISSING
    planted: PlantedHardness | None | MISSING = MISSING


class Implementation(PageModel):
    """One implementation of a hardness metric among a paper's samples, beside the others (`records.implementations`):
    which published variant it computes, where it departs from the paper, and whether the official code's
    implementation computes the same variant (`official_matches` None: the page has no official one)."""

    metric: str
    repo: str
    repo_kind: str
    entry: str
    url: str
    status: str
    output: str
    matches: str
    paper: bool
    departs_from_paper: list[str]
    official_matches: list[str] | None
    same_as_official: bool | None
    # Severity of a departure on the same run (`Departure`): "rescales" or "changes_ranking", with the figures.
    severity: str | None = None
    rank_correlation: float | None = None
    top_overlap: float | None = None
    planted_auroc: float | None = None
    paper_planted_auroc: float | None = None


class WorstDeparture(PageModel):
    """The most severe departure among a paper's samples (`build.paper_verdict.severity_rank`), with its reason."""

    entry: str
    repo: str
    repo_kind: str
    url: str
    metric: str
    output: str
    severity: str  # "rescales" or "changes_ranking" (a departure no run measured counts as changing the ranking)
    rank_correlation: float | None
    reason: str


class PaperVerdict(PageModel):
    """The answer at the top of a paper's page, in counts of samples (`build.paper_verdict`): how many were
    checked against the paper, how many are faithful, how many depart and how, and the worst departure.
    `grade` is the paper's: its worst sample's grade, or `not_checked`; `text` is the sentence the page shows."""

    grade: str
    checked: int
    faithful: int
    departs_rescales: int
    departs_ranking: int
    worst: WorstDeparture | None
    text: str


class Verification(PageModel):
    page_url: str | None | MISSING = Field(default=MISSING, validation_alias=_seed_alias("page_url"))
    json_url: str = Field(validation_alias=_seed_alias("json_url"))
    api: dict[str, Any] = Field(validation_alias=_seed_alias("api"))
    schema_url: str = Field(validation_alias=_seed_alias("schema_url"))
    read_at: str
    read_at_is: str
    claim: str
    repos: list[RepoRef]
    summary: dict[str, int]
    by_repo_kind: dict[str, KindCount]
    repo_kind_vocabulary: dict[str, str]
    status_vocabulary: dict[str, str] | MISSING = MISSING
    checked: dict[str, int] | MISSING = MISSING  # the `ran*` samples by what they checked
    checked_vocabulary: dict[str, str] | MISSING = MISSING
    n_pointer_only_for_licence: int
    samples: list[TwinSample]
    implementations: list[Implementation] | MISSING = MISSING


class PaperTwin(PageModel):
    about: About
    url: str
    title: str
    verdict: PaperVerdict | MISSING = MISSING  # not in the seed records
    arxiv_id: str | None
    date: str | None
    proceeding: str | None
    authors: list[str]
    abstract: str | None
    url_abs: str | None
    url_pdf: str | None
    source: Source
    code_links: list[CodeLink]
    tasks: list[TaskRef]
    methods: list[PaperMethod]
    datasets_introduced: list[Any]
    methods_introduced: list[Any]
    results: list[Any]
    verification: Verification = Field(validation_alias=AliasChoices("verification", "syntology"))
    arxiv_metadata: dict[str, Any] | None
    extracted_results: dict[str, Any] | None = Field(
        validation_alias=AliasChoices("extracted_results", "syntology_extracted_results")
    )

    def to_json(self) -> str:
        """Compact, key-ordered as declared, no NaN: byte-identical for identical records."""
        return self.model_dump_json()


class PaperRef(PageModel):
    slug: str
    title: str
    url: str
    repo_kind: str


class SampleRef(PageModel):
    """A sample as its repository's page lists it: what it is, what it got, and where its own record is."""

    sample_id: str
    entry: str
    path: str
    status: str
    contract_check: str | None
    metamorphic_tier: str | None
    fidelity: list[Fidelity]
    url: str
    json_url: str


class EvaluationRef(PageModel):
    """An evaluator of the repository (`verify.evaluators`): which AUROC or AUPRC it computes, for which class."""

    entry: str
    url: str
    measure: str
    reading: str
    paper: bool
    departure: str | None


class CalledRef(PageModel):
    """An entry a driver was seen calling: how often, whether it returned a score per sample, and its sample's
    page when this build made one."""

    entry: str  # `path::qualname`
    calls: int
    per_sample: bool
    url: str | None


class DriverRef(PageModel):
    """One of the repository's own tests, examples, scripts or notebooks as this build ran it in the sandbox."""

    target: str
    kind: str
    status: str  # ran, failed, cut, not_run
    ended: str  # how it ended, or why it was not run
    error: str | None
    replaced: list[str]  # what of the outside world it was given a planted stand-in for
    url: str  # its source at the pinned commit
    called: list[CalledRef]


class RepoTwin(PageModel):
    """The JSON twin of a repository page: the record as published (no local paths), its papers and samples,
    and what its evaluation code computes."""

    url: str
    repo: str
    host: str
    source: str
    reach: Reach | None
    licence: str | None
    licence_file: str | None
    commit: str | None
    readme: str | None
    note: str | None
    specimen: bool
    page_url: str
    json_url: str
    papers: list[PaperRef]
    samples: list[SampleRef]
    evaluations: list[EvaluationRef] = Field(default_factory=list)
    drivers: list[DriverRef] = Field(default_factory=list)  # the repository's own drivers, in the order run
    made_by: str | MISSING = MISSING  # shipped records: what made them
    stale: str | MISSING = MISSING  # shipped records made by other verdict code than this build's: why stale


class Paging(PageModel):
    """Where this page sits in its list. `prev`/`next` are JSON URLs, `*_page_url` the HTML pages."""

    page: int
    pages: int
    page_size: int
    total: int
    page_url: str
    json_url: str
    prev: str | None
    next: str | None
    prev_page_url: str | None
    next_page_url: str | None


class PaperListing(PageModel):
    slug: str
    title: str
    date: str | None
    authors: list[str]
    tasks: list[str]
    specimen: bool
    samples: int
    statuses: dict[str, int]  # the paper's samples by status, as its twin's `verification.summary`
    verdict: PaperVerdict
    url: str
    json_url: str


class RepoListing(PageModel):
    slug: str
    repo: str
    host: str
    url: str
    licence: str | None
    source: str
    specimen: bool
    topic: str | None
    papers: int
    samples: int
    page_url: str
    json_url: str


class SampleListing(PageModel):
    sample_id: str
    entry: str
    repo: str
    repo_kind: str | None
    path: str
    status: str
    contract_check: str | None
    metamorphic_tier: str | None
    fidelity: list[Fidelity]
    url: str
    json_url: str
    reason: str | None = None
    checked: str | None = None


class StatusCount(PageModel):
    status: str
    meaning: str
    samples: int
    url: str
    json_url: str


class Term(PageModel):
    """One value a sample table shows, what it means, and its anchor on the statuses index (`/status/#anchor`)."""

    value: str
    meaning: str
    anchor: str


class TermGroup(PageModel):
    """A column of the sample tables: what it says, and each value it can hold."""

    column: str
    anchor: str
    meaning: str
    terms: list[Term]


class StatusIndex(PageModel):
    """`/status/`: every status with its count and page, and what each column and badge of a sample table means."""

    about: About
    schema_url: str
    page_url: str
    json_url: str
    statuses: list[StatusCount]
    columns: list[TermGroup]


class TaskListing(PageModel):
    task_slug: str
    task_name: str
    papers: int
    url: str
    json_url: str


class PaperList(PageModel):
    """A page of every paper, in slug order (`/papers/`; twin `api/papers.json`, `api/papers/page-N.json`)."""

    about: About
    schema_url: str
    paging: Paging
    papers: list[PaperListing]


class RepoList(PageModel):
    """A page of every repository, in slug order (`/repos/`; twin `api/repos.json`, `api/repos/page-N.json`)."""

    about: About
    schema_url: str
    paging: Paging
    repos: list[RepoListing]


class StatusPage(PageModel):
    """A page of every sample with one status, by entry, repository and path."""

    about: About
    schema_url: str
    status: str
    meaning: str
    statuses: list[StatusCount]
    paging: Paging
    samples: list[SampleListing]


class TaskPage(PageModel):
    """A page of the papers with one task (slug: the name lower-cased, spaces to hyphens), by date then slug."""

    about: About
    schema_url: str
    task_slug: str
    task_name: str
    other_names: list[str]
    paging: Paging
    papers: list[PaperListing]


class TaskIndex(PageModel):
    about: About
    schema_url: str
    page_url: str
    json_url: str
    tasks: list[TaskListing]


class IndexPage(PageModel):
    """The front page: counts, statuses, the first papers, and where programs find everything."""

    about: About
    schema_url: str
    page_url: str
    json_url: str
    read_at: str
    papers_total: int
    repositories: int
    samples: int
    statuses: list[StatusCount]
    # Graded against the paper (`build.paper_verdict`): samples by their grade, and the papers whose code ran by
    # theirs (`not_checked`: none of its samples was compared with the paper). Grades with no count are left out.
    sample_grades: dict[str, int]
    paper_grades: dict[str, int]
    papers: list[PaperListing]
    papers_url: str
    verified: list[PaperListing]  # papers with a sample of any `ran*` status, newest first, whatever their grade
    api: dict[str, str]
    schemas: dict[str, str]
    partial: list[str] = Field(default_factory=list)  # built with --allow-partial: where each damaged input stops


class AttributionPage(PageModel):
    about: About
    schema_url: str
    page_url: str
    json_url: str
    archive: str
    archive_licence: str
    archive_licence_url: str
    modified: str
    specimens: str
    code: str
    non_affiliation: str


class SearchShard(PageModel):
    bundle_url: str
    papers: int
    first_slug: str
    last_slug: str


class SearchPage(PageModel):
    """What search covers and how its index is split; `available` is false when the build had no Pagefind."""

    about: About
    schema_url: str
    page_url: str
    json_url: str
    available: bool
    reason: str | None
    fields: list[str]
    split: str
    shards: list[SearchShard]


# Schema file name (`site/schema/<name>.json`) per record type, in the order the index lists them.
PAGE_SCHEMAS: dict[str, type[BaseModel]] = {
    "paper": PaperTwin, "repo": RepoTwin, "sample": Sample, "index": IndexPage, "paper-list": PaperList,
    "repo-list": RepoList, "status": StatusPage, "status-index": StatusIndex, "task": TaskPage,
    "task-index": TaskIndex, "attribution": AttributionPage, "search": SearchPage,
}


def page_count(total: int, size: int = PAGE_SIZE) -> int:
    return max(1, -(-total // size))
