"""Where every page and record of the site lives; one place, so links and files never disagree."""

from __future__ import annotations

import re
from dataclasses import dataclass

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

    def code(self, code_sha256: str) -> str:
        """A sample's code by its sha256 (`build.code_pages`): the code, or where to read it."""
        return self._url(f"/code/{code_sha256}.json")

    def index_json(self) -> str:
        return self._url("/index.json")

    def task(self, name: str, page: int = 1) -> str:
        return self._paged_page(f"/task/{task_key(name)}", page)

    def task_json(self, name: str, page: int = 1) -> str:
        return self._paged_json(f"/task/{task_key(name)}", page)

    def tasks(self) -> str:
        return self._url("/task/")

    def tasks_json(self) -> str:
        return self._url("/task.json")

    def statuses(self) -> str:
        """The index of the statuses, and what every badge and column of a sample table means."""
        return self._url("/status/")

    def statuses_json(self) -> str:
        return self._url("/status.json")

    def explain(self, term: str) -> str:
        """Where the statuses index explains `term` (`contract`, `contract-PASSES`, `tier-relational`, …)."""
        return self._url(f"/status/#{term}")

    def status(self, status: str, page: int = 1) -> str:
        return self._paged_page(f"/status/{status}", page)

    def status_json(self, status: str, page: int = 1) -> str:
        return self._paged_json(f"/status/{status}", page)

    def papers(self, page: int = 1) -> str:
        """The people's list of every paper, paged; its twin is the API page `api_papers(page)`."""
        return self._paged_page("/papers", page)

    def repos(self, page: int = 1) -> str:
        return self._paged_page("/repos", page)

    def api_papers(self, page: int = 1) -> str:
        """`/api/papers.json` is the first page, `/api/papers/page-2.json` the second, and so on."""
        return self._paged_json("/api/papers", page)

    def api_repos(self, page: int = 1) -> str:
        return self._paged_json("/api/repos", page)

    def attribution(self) -> str:
        return self._url("/attribution/")

    def attribution_json(self) -> str:
        return self._url("/attribution.json")

    def search(self) -> str:
        return self._url("/search/")

    def search_json(self) -> str:
        return self._url("/search.json")

    def search_bundle(self, shard: int) -> str:
        return self._url(f"/pagefind/{shard}/")

    def feed(self) -> str:
        return self._url("/feed.xml")

    def sitemap(self) -> str:
        return self._url("/sitemap.xml")

    def sitemap_part(self, number: int) -> str:
        return self._url(f"/sitemaps/sitemap-{number}.xml")

    def robots(self) -> str:
        return self._url("/robots.txt")

    def static(self, name: str) -> str:
        return self._url(f"/static/{name}")

    def schema(self, record: str) -> str:
        return self._url(f"/schema/{record}.json")

    def api(self, name: str) -> str:
        return self._url(f"/api/{name}.json")

    @property
    def absolute(self) -> bool:
        """True when `base` is an absolute http(s) URL: only then can sitemaps, feeds and og:url be absolute."""
        return self.base.startswith(("http://", "https://"))

    def _paged_page(self, stem: str, page: int) -> str:
        return self._url(f"{stem}/" if page == 1 else f"{stem}/page-{page}/")

    def _paged_json(self, stem: str, page: int) -> str:
        return self._url(f"{stem}.json" if page == 1 else f"{stem}/page-{page}.json")


def task_key(name: str) -> str:
    """The path segment of a task: its archive slug (lower-cased, spaces to hyphens), made path-safe."""
    return safe_segment(task_slug(name))


def file_for(url_path: str, base: str = "") -> str:
    """The file under the site root that serves a URL path (`/x/` -> `x/index.html`), as a POSIX path."""
    path = url_path[len(base.rstrip("/")):] if base and url_path.startswith(base.rstrip("/")) else url_path
    path = path.lstrip("/")
    if not path or path.endswith("/"):
        return path + "index.html"
    return path
