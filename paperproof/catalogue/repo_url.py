"""Normalising the archive's `repo_url` values into one key per repository.

The archive's URLs point at repositories, but also at files, folders and branches
(`/tree/<ref>/<path>`, `/blob/...`), carry `.git`, `www.`, mixed case and trailing slashes.
Two links to the same repository must land on the same record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

GITHUB = "github.com"
_GITHUB_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


@dataclass(frozen=True)
class RepoKey:
    """A repository's identity. `owner`/`name` keep their case for display; `key` is case-folded."""

    host: str
    owner: str
    name: str
    subpath: str | None = None

    @property
    def repo(self) -> str:
        return f"{self.owner}/{self.name}" if self.owner else self.name

    @property
    def key(self) -> str:
        return f"{self.host}/{self.repo}".lower()

    @property
    def url(self) -> str:
        return f"https://{self.host}/{self.repo}"

    @property
    def dirname(self) -> str:
        """The checkout directory name used under `--repos`: `owner+name`."""
        return f"{self.owner}+{self.name}" if self.owner else self.name


def normalise_repo_url(url: str) -> RepoKey:
    """Parse a code-link URL into a `RepoKey`; raises ValueError naming the URL when it has no repository."""
    raw = url.strip()
    if "://" not in raw:
        raw = "https://" + raw
    parts = urlsplit(raw)
    host = (parts.hostname or "").lower()
    if host.startswith("www."):
        host = host[4:]
    if not host:
        raise ValueError(f"repo_url {url!r} has no host")
    segments = [s for s in parts.path.split("/") if s]
    if host == GITHUB:
        if len(segments) < 2:
            raise ValueError(f"repo_url {url!r} names no repository (need github.com/<owner>/<name>)")
        owner, name = segments[0], segments[1]
        if name.endswith(".git"):
            name = name[: -len(".git")]
        if not (_GITHUB_NAME.match(owner) and _GITHUB_NAME.match(name)):
            raise ValueError(f"repo_url {url!r} has an invalid owner or name")
        subpath = None
        if len(segments) > 3 and segments[2] in ("tree", "blob", "raw"):
            subpath = "/".join(segments[4:]) or None
        return RepoKey(GITHUB, owner, name, subpath)
    # Other hosts: keep the first two segments as owner/name when there are two, else the path.
    trimmed = [s[:-4] if i == len(segments) - 1 and s.endswith(".git") else s for i, s in enumerate(segments)]
    if len(trimmed) >= 2:
        return RepoKey(host, trimmed[0], trimmed[1], "/".join(trimmed[2:]) or None)
    return RepoKey(host, "", trimmed[0] if trimmed else host)
