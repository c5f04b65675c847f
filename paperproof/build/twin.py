"""Assembling a paper's record (`PaperTwin`): its archive row, code links, repositories and samples.

The HTML page and the JSON twin are both rendered from this one record.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Protocol

from paperproof.build.urls import SiteUrls
from paperproof.catalogue import community
from paperproof.catalogue.archive_rows import CodeLinkRow, PaperRow, task_slug
from paperproof.catalogue.repo_record import RepoRecord
from paperproof.catalogue.repo_url import RepoKey, normalise_repo_url
from paperproof.catalogue.sample import STATUS_VOCABULARY, Sample
from paperproof.catalogue.twin import (
    About,
    CodeLink,
    CodeRef,
    KindCount,
    PaperTwin,
    RepoRef,
    Source,
    TaskRef,
    TwinSample,
    Verification,
)

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


@dataclass(frozen=True)
class TwinContext:
    urls: SiteUrls
    read_at: str


class LinkFacts(Protocol):
    """What the kind and order of a code link are read from: a `CodeLinkRow`, or a `build.links.Link`."""

    @property
    def repo_url(self) -> str: ...
    @property
    def is_official(self) -> bool | None: ...
    @property
    def mentioned_in_paper(self) -> bool | None: ...
    @property
    def mentioned_in_github(self) -> bool | None: ...


def repo_kind(link: LinkFacts) -> str:
    if link.is_official:
        return "official"
    if link.mentioned_in_paper:
        return "named_in_paper"
    return "listed"


def link_order(link: LinkFacts) -> tuple:
    """Official, then mentioned in the paper, then mentioned on GitHub; then URL, case-insensitively."""
    return (not link.is_official, not link.mentioned_in_paper, not link.mentioned_in_github, link.repo_url.lower())


def sample_order(samples: list[TwinSample]) -> list[TwinSample]:
    """Run samples first, then by entry name (ASCII); forks with the same entry keep their order."""
    return sorted(samples, key=lambda s: (-s.verification_level, s.entry))


def safe_key(url: str) -> RepoKey | None:
    try:
        return normalise_repo_url(url)
    except ValueError:
        return None


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


def twin_sample(sample: Sample, kind: str, urls: SiteUrls) -> TwinSample:
    return TwinSample(
        code_sha256_prefix=sample.code_sha256_prefix, entry=sample.entry, repo=sample.repo, repo_kind=kind,
        path=sample.path, file_url=sample.file_url, link_basis=sample.link_basis, language=sample.language,
        status=sample.status, verification_level=sample.verification_level,
        contract_check=sample.contract_check, metamorphic_tier=sample.metamorphic_tier,
        behaviour_fingerprint=sample.behaviour_fingerprint, licence=sample.licence, inline_ok=sample.inline_ok,
        code=CodeRef(code_sha256=sample.code_sha256, url=urls.sample_json(sample.sample_id)),
        reason=sample.reason, url=urls.sample(sample.sample_id), fidelity=list(sample.fidelity),
    )


def paper_twin(paper: PaperRow, source: Source, links: list[CodeLinkRow], records: dict[str, RepoRecord],
               samples: dict[str, list[Sample]], ctx: TwinContext) -> PaperTwin:
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
        n_pointer_only_for_licence=sum(1 for s in twin_samples if not s.inline_ok),
        samples=twin_samples,
    )
    return PaperTwin(
        about=about(urls), url=urls.paper(slug), title=paper.title, arxiv_id=paper.arxiv_id, date=paper.date,
        proceeding=paper.proceeding, authors=list(paper.authors), abstract=paper.abstract, url_abs=paper.url_abs,
        url_pdf=paper.url_pdf, source=source, code_links=code_links,
        tasks=[TaskRef(task_slug=task_slug(t), task_name=t) for t in paper.tasks],
        methods=list(paper.methods), datasets_introduced=[], methods_introduced=[], results=[],
        verification=verification, arxiv_metadata=None, extracted_results=None,
    )
