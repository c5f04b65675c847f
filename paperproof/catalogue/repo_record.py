"""What we know about one repository a code link points at.

A record is written for every link, including links we have no source for, so that "we did not
look", "we looked and nothing answered" and "it answered: nothing there" stay distinct.
"""

from __future__ import annotations

from typing import Literal

from pydantic import MISSING, BaseModel, ConfigDict, Field

from paperproof.catalogue.driver_line import DriverLine

ReachStatus = Literal["ok", "moved", "not_found", "unavailable", "private", "rate_limited", "error"]

REACH_VOCABULARY: dict[str, str] = {
    "ok": "The host answered and served the repository",
    "moved": "The repository was renamed or transferred; the record follows it to its new name",
    "not_found": "The host answered that the repository does not exist",
    "unavailable": "The host answered that the repository exists but is blocked (for example HTTP 451)",
    "private": "The host answered that the repository is private",
    "rate_limited": "The host asked us to slow down before it answered; nothing is known yet",
    "error": "The host did not answer usefully (timeouts, server errors); nothing is known yet",
}

SourceKind = Literal["checkout", "tarball", "harvest", "shipped", "none"]


class Reach(BaseModel):
    """Whether the repository's URL answered when we asked. `spdx` is absent when no licence file was found."""

    model_config = ConfigDict(frozen=True)

    status: ReachStatus
    spdx: str | MISSING = MISSING


class RepoRecord(BaseModel):
    """One repository, with where its source came from and what licence covers it.

    `licence` is an SPDX id, `NONE` when the repository has no licence file, `NOASSERTION` when it
    has one we cannot identify, and None when nobody asked (no source).

    Harvested records also carry: `moved_to` (the URL a renamed repository answers at now), `etags`
    (API path -> ETag, for conditional refreshes), `tarball_sha256` (the snapshot's content address in
    the store), `refused` (why a tarball was not unpacked), and `refresh_failed` (what the latest
    refresh ran into while the record keeps the last good answer and snapshot).
    """

    model_config = ConfigDict(frozen=True)

    url: str
    repo: str
    host: str
    source: SourceKind
    reach: Reach | None = None
    licence: str | None = None
    licence_file: str | None = None
    commit: str | None = None
    default_branch: str | None = None
    snapshot: str | None = None
    readme: str | None = None
    note: str | None = None
    specimen: bool = False
    # Harvest fields (`paperproof harvest`); none of them reaches the site as is.
    moved_to: str | None = None
    etags: dict[str, str] | None = None
    tarball_sha256: str | None = None
    refused: str | None = None
    refresh_failed: str | None = None
    # Community repositories (curated list): what the repository is for, and the topic it belongs to.
    purpose: str | None = None
    topic: str | None = None
    # Shipped records (`catalogue.shipped`, source `shipped`): what made them, and, when this build's verdict
    # code differs from that, why they are stale.
    made_by: str | None = None
    stale: str | None = None
    # The repository's own tests, examples, scripts and notebooks, as this build ran them in the sandbox.
    drivers: list[DriverLine] = Field(default_factory=list)

    @property
    def has_source(self) -> bool:
        return self.snapshot is not None

    def file_url(self, path: str) -> str:
        """A link to `path` at the pinned commit when we know it, else at HEAD."""
        ref = self.commit or "HEAD"
        if self.host == "github.com":
            return f"{self.url}/blob/{ref}/{path}"
        return f"{self.url}/{path}"

    def line_url(self, where: str, line: int | None) -> str:
        """A line of the repository (a notebook cell or README block as `file#cell-3`: the file), at its pinned
        commit."""
        path, _, cell = where.partition("#")
        return self.file_url(path) + (f"#L{line}" if line and not cell else "")
