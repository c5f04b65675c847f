"""Where every page and record of the site lives; one place, so links and files never disagree."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from paperproof.catalogue.archive_rows import task_slug

_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")


def safe_segment(text: str) -> str:
    """A path segment that is safe on every filesystem and in a URL."""
    cleaned = _UNSAFE.sub("-", text).strip(".-") or "-"
    return cleaned[:180]


def repo_slug(host: str, repo: str) -> str:
    base = repo.replace("/", "+")
    return safe_segment(base if host == "github.com" else f"{host}+{base}")


@dataclass(frozen=True)
class SiteUrls:
    """URLs are `base` + a path; with an empty base the site works from any prefix of one host."""

    base: str = ""

    def _url(self, path: str) -> str:
        return f"{self.base.rstrip('/')}{path}"

    def home(self) -> str:
        return self._url("/")

    def paper(self, slug: str) -> str:
        return self._url(f"/paper/{safe_segment(slug)}/")

    def paper_json(self, slug: str) -> str:
        return self._url(f"/paper/{safe_segment(slug)}.json")

    def repo(self, slug: str) -> str:
        return self._url(f"/repo/{slug}/")

    def repo_json(self, slug: str) -> str:
        return self._url(f"/repo/{slug}.json")

    def sample(self, sample_id: str) -> str:
        return self._url(f"/sample/{sample_id}/")

    def sample_json(self, sample_id: str) -> str:
        return self._url(f"/sample/{sample_id}.json")

    def task(self, name: str) -> str:
        return self._url(f"/task/{safe_segment(task_slug(name))}/")

    def status(self, status: str) -> str:
        return self._url(f"/status/{status}/")

    def attribution(self) -> str:
        return self._url("/attribution/")

    def schema(self, record: str) -> str:
        return self._url(f"/schema/{record}.json")

    def api(self, name: str) -> str:
        return self._url(f"/api/{name}.json")


def file_for(url_path: str, base: str = "") -> PurePosixPath:
    """The file under the site root that serves a URL path (`/x/` -> `x/index.html`)."""
    path = url_path[len(base.rstrip("/")):] if base and url_path.startswith(base.rstrip("/")) else url_path
    path = path.lstrip("/")
    if not path or path.endswith("/"):
        return PurePosixPath(path) / "index.html"
    return PurePosixPath(path)
