"""Normalising the archive's `repo_url` values into one key per repository.

The archive's URLs point at repositories, but also at files, folders and branches
(`/tree/<ref>/<path>`, `/blob/...`, raw.githubusercontent.com), carry `.git`, `www.`, mixed case,
query strings, fragments and trailing slashes, and come as `git@`/`ssh://`/`git://` clone URLs.
Two links to the same repository must land on the same record. Hosts other than GitHub keep their
own host in the key, so a record can say "not a GitHub repository" rather than guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

GITHUB = "github.com"
_GITHUB_HOSTS = {"github.com", "www.github.com"}
_RAW_HOST = "raw.githubusercontent.com"
_GITHUB_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_SCP_LIKE = re.compile(r"^[A-Za-z0-9_.-]+@(?P<host>[A-Za-z0-9.-]+):(?!//)(?P<path>.+)$")  # git@host:owner/name
# First path segments of github.com that are site sections, never an owner.
_GITHUB_RESERVED = frozenset({
    "about", "apps", "collections", "contact", "enterprise", "explore", "features", "login", "marketplace",
    "new", "notifications", "orgs", "organizations", "pricing", "pulls", "search", "settings", "site",
    "sponsors", "topics", "trending", "issues", "users", "join", "codespaces", "security",
})
# Second-level views of a repository that name a ref and then, optionally, a path inside it.
_REF_VIEWS = frozenset({"tree", "blob", "raw", "blame", "commits"})


@dataclass(frozen=True)
class RepoKey:
    """A repository's identity. `owner`/`name` keep their case for display; `key` is case-folded.

    `subpath` and `ref` say where inside the repository the link pointed; they are not part of `key`.
    """

    host: str
    owner: str
    name: str
    subpath: str | None = None
    ref: str | None = None

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

    @property
    def is_github(self) -> bool:
        return self.host == GITHUB


def _split(url: str) -> tuple[str, list[str]]:
    """(lower-case host without `www.`, non-empty path segments) of any URL or clone address."""
    raw = url.strip().strip("<>\"'")
    for prefix in ("git+", "svn+"):
        if raw.startswith(prefix):
            raw = raw[len(prefix):]
    if "://" not in raw:
        scp = _SCP_LIKE.match(raw)
        if scp:
            raw = f"ssh://{scp.group('host')}/{scp.group('path')}"
        else:
            raw = "https://" + raw
    parts = urlsplit(raw)
    host = (parts.hostname or "").lower().rstrip(".")
    if host.startswith("www."):
        host = host[4:]
    segments = [unquote(s) for s in parts.path.split("/") if s]
    return host, segments


def _strip_git(name: str) -> str:
    return name[: -len(".git")] if name.lower().endswith(".git") else name


def _github_key(url: str, owner: str, name: str, rest: list[str]) -> RepoKey:
    name = _strip_git(name)
    if owner.lower() in _GITHUB_RESERVED:
        raise ValueError(f"repo_url {url!r} points at a GitHub page ({owner}/), not a repository")
    if not (_GITHUB_NAME.match(owner) and _GITHUB_NAME.match(name)) or name in (".", ".."):
        raise ValueError(f"repo_url {url!r} has an invalid owner or name")
    ref = subpath = None
    if len(rest) >= 2 and rest[0] in _REF_VIEWS:
        ref = rest[1]
        subpath = "/".join(rest[2:]) or None
    return RepoKey(GITHUB, owner, name, subpath, ref)


def safe_key(url: str) -> RepoKey | None:
    """The repository a link's URL names, or None when it names none (`normalise_repo_url` says why)."""
    try:
        return normalise_repo_url(url)
    except ValueError:
        return None


def normalise_repo_url(url: str) -> RepoKey:
    """Parse a code-link URL into a `RepoKey`; raises ValueError naming the URL when it has no repository."""
    host, segments = _split(url)
    if not host:
        raise ValueError(f"repo_url {url!r} has no host")
    if host in _GITHUB_HOSTS:
        if len(segments) < 2:
            raise ValueError(f"repo_url {url!r} names no repository (need github.com/<owner>/<name>)")
        return _github_key(url, segments[0], segments[1], segments[2:])
    if host == _RAW_HOST:
        # raw.githubusercontent.com/<owner>/<name>/<ref>/<path>: a file of a GitHub repository.
        if len(segments) < 2:
            raise ValueError(f"repo_url {url!r} names no repository")
        rest = ["raw", *segments[2:]] if len(segments) > 2 else []
        return _github_key(url, segments[0], segments[1], rest)
    # Other hosts: the path up to GitLab's `/-/` separator; owner/name when there are two segments.
    if "-" in segments:
        segments = segments[: segments.index("-")]
    trimmed = [_strip_git(s) if i == len(segments) - 1 else s for i, s in enumerate(segments)]
    if len(trimmed) >= 2:
        return RepoKey(host, trimmed[0], trimmed[1], "/".join(trimmed[2:]) or None)
    return RepoKey(host, "", trimmed[0] if trimmed else host)
