"""A driver of a repository as its record lists it (`RepoRecord.drivers`): how it ended and what it was seen
calling. Apart from `catalogue.observed`, which makes these lines, so that the repository record can hold them
without importing the driver finder."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

DriverStatus = Literal["ran", "failed", "cut", "not_run"]


class DriverLine(BaseModel):
    """A driver as a repository's record and page list it: what ran, how it ended, and the entries it was seen
    calling. No timings (a site is the same for the same inputs) and none of the driver's code."""

    model_config = ConfigDict(frozen=True)

    target: str
    kind: str
    path: str
    line: int
    status: DriverStatus
    ended: str
    error: str | None = None
    replaced: list[str] = Field(default_factory=list)
    called: dict[str, int] = Field(default_factory=dict)  # entry key -> calls observed
    scores: list[str] = Field(default_factory=list)  # of those, the entries it showed returning a score per sample


__all__ = ["DriverLine", "DriverStatus"]
