"""Rows of the Papers with Code archive, typed as the dumps and parquet shards give them.

The archive is read-only history (the site shut down in July 2025), so these models accept what
it actually holds: nulls almost everywhere, booleans that older dumps omit, and tasks that are
junk. They reject only what would make a row meaningless (no paper URL, no repository URL).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

_SLUG_TAIL = re.compile(r"/paper/([^/?#]+)/?$")


class ArchiveRow(BaseModel):
    """Common configuration: unknown columns are ignored, the row itself is immutable."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class MainCollection(ArchiveRow):
    name: str | None = None
    description: str | None = None
    parent: str | None = None
    area: str | None = None


class PaperMethod(ArchiveRow):
    """A method as nested in a paper row (`methods[]`)."""

    name: str
    full_name: str | None = None
    description: str | None = None
    introduced_year: int | None = None
    source_url: str | None = None
    source_title: str | None = None
    code_snippet_url: str | None = None
    main_collection: MainCollection | None = None


class PaperRow(ArchiveRow):
    """One row of `papers-with-abstracts` (18 columns)."""

    paper_url: str
    arxiv_id: str | None = None
    nips_id: str | None = None
    openreview_id: str | None = None
    title: str
    abstract: str | None = None
    short_abstract: str | None = None
    url_abs: str | None = None
    url_pdf: str | None = None
    proceeding: str | None = None
    authors: list[str] = Field(default_factory=list)
    tasks: list[str] = Field(default_factory=list)
    date: str | None = None
    conference_url_abs: str | None = None
    conference_url_pdf: str | None = None
    conference: str | None = None
    reproduces_paper: str | None = None
    methods: list[PaperMethod] = Field(default_factory=list)

    @field_validator("paper_url")
    @classmethod
    def _has_slug(cls, value: str) -> str:
        if not _SLUG_TAIL.search(value):
            raise ValueError(f"paper_url {value!r} does not end in /paper/<slug>")
        return value

    @field_validator("title")
    @classmethod
    def _title_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("title is blank")
        return value

    @field_validator("authors", "tasks", mode="before")
    @classmethod
    def _none_is_empty(cls, value: object) -> object:
        return [] if value is None else value

    @property
    def slug(self) -> str:
        return paper_slug(self.paper_url)


class CodeLinkRow(ArchiveRow):
    """One row of `links-between-papers-and-code`: one (paper, repository) pair.

    `is_official` and `framework` are absent from older dumps; None means "the archive did not say".
    """

    paper_url: str
    paper_title: str | None = None
    paper_arxiv_id: str | None = None
    paper_url_abs: str | None = None
    paper_url_pdf: str | None = None
    repo_url: str
    is_official: bool | None = None
    mentioned_in_paper: bool | None = None
    mentioned_in_github: bool | None = None
    framework: str | None = None

    @field_validator("paper_url")
    @classmethod
    def _has_slug(cls, value: str) -> str:
        return PaperRow._has_slug(value)

    @field_validator("repo_url")
    @classmethod
    def _is_url(cls, value: str) -> str:
        if not re.match(r"^https?://[^/\s]+/\S*$", value.strip()):
            raise ValueError(f"repo_url {value!r} is not an http(s) URL")
        return value.strip()

    @property
    def paper_slug(self) -> str:
        return paper_slug(self.paper_url)


class MethodRow(ArchiveRow):
    """One row of `methods` (about three in four are spam; `introduced_year` 2000 means unknown)."""

    url: str
    name: str
    full_name: str | None = None
    description: str | None = None
    paper: dict | None = None
    introduced_year: int | None = None
    source_url: str | None = None
    source_title: str | None = None
    code_snippet_url: str | None = None
    num_papers: int | None = None
    collections: list[dict] = Field(default_factory=list)


class DatasetRow(ArchiveRow):
    """One row of `datasets`; only the fields the catalogue uses are typed."""

    url: str
    name: str
    full_name: str | None = None
    description: str | None = None
    homepage: str | None = None
    paper: dict | None = None
    tasks: list[dict] = Field(default_factory=list)
    modalities: list[str] = Field(default_factory=list)


class EvaluationTask(ArchiveRow):
    """One top-level task of `evaluation-tables`, nested datasets and subtasks kept as given."""

    task: str
    description: str | None = None
    categories: list[str] = Field(default_factory=list)
    datasets: list[dict] = Field(default_factory=list)
    subtasks: list[dict] = Field(default_factory=list)
    synonyms: list[str] = Field(default_factory=list)
    source_link: dict | str | None = None


def paper_slug(paper_url: str) -> str:
    """The slug at the end of a Papers with Code paper URL."""
    match = _SLUG_TAIL.search(paper_url)
    if not match:
        raise ValueError(f"paper_url {paper_url!r} does not end in /paper/<slug>")
    return match.group(1)


def task_slug(task_name: str) -> str:
    """Task slugs are the task names lower-cased with spaces as hyphens (as the archive's site did)."""
    return task_name.strip().lower().replace(" ", "-")


# Where a row came from (an archive snapshot, or paperproof's specimens); a paper's twin repeats it. No
# docstring: the published schema of a paper's twin describes `Source` as it is.
class Source(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    archive: str
    snapshot: str
    licence_url: str
    row_kind: str
