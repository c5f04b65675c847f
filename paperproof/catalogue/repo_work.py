"""What one repository contributes to a build, as a record each stage returns anew (never changed in place)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from paperproof.catalogue.repo_record import RepoRecord
from paperproof.catalogue.sample import Sample
from paperproof.catalogue.select import Selected


@dataclass(frozen=True)
class RepoWork:
    """A repository's record, the entries chosen from it, their samples and the papers linking it."""

    record: RepoRecord
    selected: tuple[Selected, ...] = ()
    samples: tuple[Sample, ...] = ()
    papers: tuple[tuple[str, str], ...] = ()  # (slug, repo kind), in slug order of the links
    analysed: float = 0.0  # CPU seconds its static analysis took so far, of its budget (`catalogue.budget`)

    def but(self, **changes: object) -> RepoWork:
        """This record with some fields replaced: how a stage hands on what it made."""
        return replace(self, **changes)  # type: ignore[arg-type]
