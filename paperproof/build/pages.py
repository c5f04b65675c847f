"""Records of the site's list pages (index, paper and repository lists, tasks, statuses, attribution, search).

As for papers, repositories and samples, each page is rendered from one of these records and the
record itself is the page's JSON twin, so the two cannot disagree. Lists are paged (`Paging`) with
a fixed page size, in a stable order; `api/papers.json` and `api/repos.json` are the first pages of
the paper and repository lists.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from paperproof.catalogue.sample import Fidelity
from paperproof.catalogue.twin import About

PAGE_SIZE = 1000  # items per list page, HTML and JSON alike
INDEX_PAPERS = 100  # papers listed on the index itself; the paper list has the rest


class PageModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


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
    ran: int
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
    papers: list[PaperListing]
    papers_url: str
    verified: list[PaperListing]
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


# Schema file name (`site/schema/<name>.json`) per record type.
PAGE_SCHEMAS: dict[str, type[BaseModel]] = {
    "index": IndexPage, "paper-list": PaperList, "repo-list": RepoList, "status": StatusPage,
    "status-index": StatusIndex, "task": TaskPage,
    "task-index": TaskIndex, "attribution": AttributionPage, "search": SearchPage,
}


def page_count(total: int, size: int = PAGE_SIZE) -> int:
    return max(1, -(-total // size))
