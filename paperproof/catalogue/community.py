"""Community repositories: curated by the project, not found in the archive's code links.

A repository can matter without a paper linking it (an agent skill that audits datasets, a
maintained fork of a metric). The curated list (`paperproof/snapshot/community.json`) names each
one with what it is for and where it belongs: papers (by slug), on whose pages its samples appear
with `repo_kind: "community"`, or a topic, when no paper is its own. Every entry gets a repository
record, and so a repository page, whether or not any paper links it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from paperproof.catalogue.repo_record import RepoRecord
from paperproof.catalogue.repo_url import RepoKey, normalise_repo_url

KIND = "community"
PROVENANCE = "community:paperproof_curated"


class CommunityRepo(BaseModel):
    """One curated repository and where it belongs (papers, a topic, or both)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str
    name: str
    purpose: str
    papers: tuple[str, ...] = ()
    topic: str | None = None

    @model_validator(mode="after")
    def _belongs_somewhere(self) -> CommunityRepo:
        if not self.papers and not self.topic:
            raise ValueError(f"{self.url}: a community repository needs papers or a topic")
        normalise_repo_url(self.url)  # raises ValueError naming the URL
        return self

    @property
    def key(self) -> RepoKey:
        return normalise_repo_url(self.url)


class Community:
    """The curated list, indexed by paper slug."""

    def __init__(self, entries: Sequence[CommunityRepo] = ()) -> None:
        self.entries: tuple[CommunityRepo, ...] = tuple(entries)
        self._by_paper: dict[str, list[RepoKey]] = {}
        for entry in self.entries:
            for slug in entry.papers:
                self._by_paper.setdefault(slug, []).append(entry.key)

    def __iter__(self) -> Iterator[CommunityRepo]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def for_paper(self, slug: str) -> list[RepoKey]:
        """The community repositories that belong to this paper, in list order."""
        return list(self._by_paper.get(slug, ()))


def load(path: Path) -> Community:
    """Read a curated list; an entry that does not validate is an error naming the file and position."""
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = data.get("repositories", []) if isinstance(data, dict) else data
    entries = []
    for position, row in enumerate(rows):
        try:
            entries.append(CommunityRepo.model_validate(row))
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ValueError(f"{path} #{position}: {first['msg']}") from exc
    return Community(entries)


@lru_cache(maxsize=1)
def curated() -> Community:
    """The list bundled with paperproof (the build and the paper twins read this one)."""
    from paperproof.catalogue.archive import bundled_root

    return load(bundled_root() / "community.json")


def annotate(record: RepoRecord, entry: CommunityRepo) -> RepoRecord:
    """The record with what the curated entry says the repository is for; without source, the note says both."""
    where = f"topic: {entry.topic}" if entry.topic else "papers: " + ", ".join(entry.papers)
    note = record.note
    if not record.has_source:
        note = f"community repository ({where}): {entry.purpose} — {record.note or 'no source'}"
    return record.model_copy(update={"purpose": entry.purpose, "topic": entry.topic, "note": note})
