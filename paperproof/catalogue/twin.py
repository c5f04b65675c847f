"""The JSON twin of a paper page, key for key the structure of the seed records.

The seeds come from a vendor catalogue; our twin keeps their keys and order but gives the vendor
names neutral ones (`SEED_RENAMES`) and points the vendor endpoints at this site. The models read
the seed files unchanged through validation aliases, so a seed round-trips to our names.
Keys that one seed has and another lacks are typed `MISSING`, so absence survives the round trip.
"""

from __future__ import annotations

from typing import Any

from pydantic import MISSING, AliasChoices, BaseModel, ConfigDict, Field

from paperproof.catalogue.archive_rows import PaperMethod
from paperproof.catalogue.repo_record import Reach
from paperproof.catalogue.sample import Fidelity

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


class TwinModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class About(TwinModel):
    site: str
    non_affiliation: str
    licence: str
    licence_url: str
    attribution: str
    modified: str


class Source(TwinModel):
    archive: str
    snapshot: str
    licence_url: str
    row_kind: str


class CodeLink(TwinModel):
    """A code link as the twin shows it; flags are 0/1 (booleans in the raw dumps)."""

    paper_slug: str
    repo_url: str
    is_official: int
    mentioned_in_paper: int
    mentioned_in_github: int
    framework: str | None
    reach: Reach | None


class TaskRef(TwinModel):
    task_slug: str
    task_name: str


class RepoRef(TwinModel):
    provenance: str
    url: str
    reach: Reach | None


class KindCount(TwinModel):
    samples: int
    ran: int
    repositories: int


class CodeRef(TwinModel):
    """Where a program fetches the sample's code and record (the seeds' `mcp_get_code`)."""

    code_sha256: str
    url: str | MISSING = MISSING


class TwinSample(TwinModel):
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
    fidelity: list[Fidelity] | MISSING = MISSING


class Verification(TwinModel):
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
    n_pointer_only_for_licence: int
    samples: list[TwinSample]


class PaperTwin(TwinModel):
    about: About
    url: str
    title: str
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


class PaperRef(TwinModel):
    slug: str
    title: str
    url: str
    repo_kind: str


class SampleRef(TwinModel):
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


class RepoTwin(TwinModel):
    """The JSON twin of a repository page: the record as published (no local paths), its papers and samples."""

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
