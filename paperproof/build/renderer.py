"""Rendering records into files: the work the render processes share.

Everything here is a pure function of the job it is given (plus the code, templates and build settings,
which the manifest's digests cover): a paper's job (`PaperJob`) is its archive row, its code links and
the records and samples of the repositories it shows; a list page's (`ListJob`) is its paging and the
listings on it. So a page is rendered again exactly when its job's digest changes, and the same job
gives the same bytes in any process, in any order. Each page's record comes from `build.records`.

The render processes are forked from the build before it reads the archive (and before anything could
initialise torch), so they hold only what they are sent. They never train or run torch: a process forked
from one that has used GNU OpenMP dies at its first parallel region (a second build in one process forks
after the first one's run stage), so what needs torch is computed in the build's process and sent in the
job. `RenderPool` sends chunks of jobs, keeps a few chunks in flight per process, and hands back the results
in the order the chunks were sent; a render process that dies fails the build (`BrokenProcessPool`) rather
than leaving it waiting for an answer that cannot come.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ValidationError

from paperproof.build import datamap, planted_map, records, render, search, seo
from paperproof.build.links import Link
from paperproof.build.pages import Paging, PaperListing, PaperVerdict, RepoListing, RepoTwin, WorstDeparture
from paperproof.build.readme_images import FOLDER as IMAGES_FOLDER
from paperproof.build.readme_images import ReadmeImage, read_image, readme_path
from paperproof.build.records import TwinContext, about
from paperproof.build.urls import SiteUrls, file_for, repo_slug
from paperproof.catalogue.archive_rows import CodeLinkRow, PaperRow, Source
from paperproof.catalogue.repo_record import RepoRecord
from paperproof.catalogue.repo_url import safe_key
from paperproof.catalogue.sample import STATUS_VOCABULARY, Sample
from paperproof.plumbing.files import write_file, write_new

# The jobs sent to the render processes and the results sent back: tuples with names (`NamedTuple`), which
# pickle as a tuple and a reference to their class, once a chunk (millions cross at archive scale).


class PaperJob(NamedTuple):
    """A paper's page and twin: its archive row (JSON), its source, its code links, and the records and
    samples of the repositories it shows (by key)."""

    slug: str
    row: str
    source: Source
    links: Sequence[CodeLinkRow | Link]
    records: dict[str, RepoRecord]
    samples: dict[str, tuple[Sample, ...]]


class PaperRendered(NamedTuple):
    """What the indexes need of a paper written: its listing (JSON), feed entry (JSON, when it ran a sample),
    search record (when there is search), and the number of its samples that ran."""

    listing: str
    feed: str | None
    doc: str | None
    ran: int


class PaperRejected(NamedTuple):
    """A paper whose record could not be assembled: why, and the archive's URL of the paper."""

    reason: str
    record: str | None


class RepoJob(NamedTuple):
    """A repository's page and twin and its samples' pages: its record, samples, papers [(slug, title,
    kind)], the titles of the samples' papers, its README's text, and the checkout's images it may show."""

    record: RepoRecord
    samples: tuple[Sample, ...]
    papers: list[tuple[str, str, str]]
    titles: dict[str, str]
    readme: str | None
    maps: dict[tuple[int, int], planted_map.Points]  # the planted runs' data maps the samples draw on
    images: tuple[ReadmeImage, ...] = ()


class ListJob(NamedTuple):
    """A page of a list (kind `papers`, `repos` or `task`): its paging (JSON), its rows (listing JSONs), and,
    for a task, (task slug, name, other names)."""

    kind: str
    paging: str
    rows: list[str]
    task: tuple[str, str, list[str]] | None = None


class Renderer:
    """Renders pages and twins into `root` (the staging tree), and the search record of each paper."""

    def __init__(self, urls: SiteUrls, read_at: str, root: Path, search_available: bool) -> None:
        self.urls = urls
        self.read_at = read_at
        self.root = os.fspath(root)  # a string: each file's path is joined to it as one (`write_new`)
        self.search_available = search_available  # False: no search (no Pagefind), so no search records
        self.ctx = TwinContext(urls=urls, read_at=read_at)
        self.about = about(urls)
        self.env = render.environment(urls)
        self.env.globals["search_available"] = search_available
        self.fresh = False  # the staging tree holds no links to the published site: files are written in place

    # --- files ---

    def path(self, url: str) -> str:
        return file_for(url, self.urls.base)

    def write(self, url: str, content: str | bytes) -> str:
        name = self.path(url)
        (write_new if self.fresh else write_file)(f"{self.root}/{name}", content)
        return name

    def page(self, template: str, url: str, json_url: str, schema: str, meta: seo.PageMeta, **context: Any) -> str:
        html = self.env.get_template(template).render(json_url=json_url, schema_url=self.urls.schema(schema),
                                                      meta=meta, page_url=url, **context)
        return self.write(url, html)

    def record(self, template: str, record: BaseModel, url: str, json_url: str, schema: str, description: str,
               **context: Any) -> list[str]:
        """A page and its twin from one record."""
        return [self.page(template, url, json_url, schema, seo.page_meta(url, description, self.urls), record=record,
                          **context),
                self.write(json_url, record.model_dump_json())]

    # --- papers ---

    def paper(self, job: PaperJob) -> PaperRendered | PaperRejected:
        try:
            paper = PaperRow.model_validate_json(job.row)
            twin = records.paper_twin(paper, job.source, job.links, job.records, job.samples, self.ctx)
            repo_pages = {}
            for link in twin.code_links:
                key = safe_key(link.repo_url)
                record = job.records.get(key.key) if key else None
                if record is not None:
                    repo_pages[link.repo_url] = {
                        "url": self.urls.repo(repo_slug(record.host, record.repo)), "name": record.repo,
                        "licence": record.licence, "note": record.note, "made_by": record.made_by,
                        "stale": record.stale,
                    }
            year = twin.date[:4] if twin.date else None
            metrics = {f.metric for s in twin.verification.samples if isinstance(s.fidelity, list) for f in s.fidelity}
            data_map = self.urls.static("data-map.svg") if datamap.shows_data_map(metrics) else None
            arxiv = bool(twin.arxiv_id) or "arxiv.org/" in (twin.url_abs or "")
            stale = sorted({r["stale"] for r in repo_pages.values() if r["stale"]})
            page = self.page("paper.html", twin.url, twin.verification.json_url, "paper",
                             seo.paper_meta(twin, self.urls), twin=twin, repos=repo_pages, data_map=data_map, stale=stale,
                             arxiv=arxiv, abstract_html=render.markdown_html(twin.abstract),
                             bibtex=render.bibtex(job.slug, twin.title, twin.authors, year, twin.url_abs))
            self.write(twin.verification.json_url, twin.to_json())
        except (ValidationError, ValueError, KeyError) as exc:
            return PaperRejected(f"paper record could not be assembled: {str(exc).splitlines()[0][:200]}",
                                 json.loads(job.row).get("paper_url"))
        listing = records.paper_listing(twin, job.slug, job.source.row_kind == "specimen", self.urls)
        feed = None
        ran = sum(n for status, n in listing.statuses.items() if status.startswith("ran"))  # any `ran*` status
        if ran:
            feed = json.dumps([job.slug, twin.title, list(twin.authors), twin.date, listing.url,
                               render.plain_text(twin.abstract), listing.samples, ran], ensure_ascii=False)
        doc = None
        if self.search_available:
            doc = search.record("/" + page.removesuffix("index.html"), twin.title, list(twin.authors), listing.tasks,
                                render.plain_text(twin.abstract, limit=4000), twin.date)
        return PaperRendered(listing.model_dump_json(), feed, doc, ran)

    # --- repositories and samples ---

    def repository(self, job: RepoJob) -> list[str]:
        record, samples = job.record, job.samples
        urls = self.urls
        twin = records.repo_twin(record, samples, job.papers, urls)
        readme_html, copies = None, []
        if job.readme is not None:
            shown: dict[str, ReadmeImage] = {}
            readme_html = render.markdown_html(job.readme, link_base=record.file_url,
                                               image_url=self._image_url(twin.page_url, job.images, shown))
            copies = self._copy_images(record, twin.page_url, shown)
        description = f"{record.repo}: licence {record.licence or 'not known'}, {len(samples)} samples."
        files = [*copies, self.page("repo.html", twin.page_url, twin.json_url, "repo",
                           seo.page_meta(twin.page_url, description, urls), record=twin,
                           readme_html=readme_html, vocabulary=STATUS_VOCABULARY,
                           purpose=record.purpose, topic=record.topic),
                 self.write(twin.json_url, twin.model_dump_json())]
        for sample in samples:
            files.extend(self.sample(sample, twin, job.titles, job.maps))
        return files

    @staticmethod
    def _image_url(page_url: str, images: tuple[ReadmeImage, ...],
                   shown: dict[str, ReadmeImage]) -> Callable[[str], str | None]:
        """Where the copy of the README image a source names is on this site (noted in `shown`), or None."""
        by_path = {image.path: image for image in images}

        def url(src: str) -> str | None:
            path = readme_path(src)
            image = by_path.get(path) if path is not None else None
            if image is None:
                return None
            shown[image.name] = image
            return page_url + IMAGES_FOLDER + image.name
        return url

    def _copy_images(self, record: RepoRecord, page_url: str, shown: dict[str, ReadmeImage]) -> list[str]:
        """Copy the README images the page shows into the site, each read again through the checkout's guard."""
        written = []
        for name, image in sorted(shown.items()):
            data = read_image(Path(record.snapshot), image) if record.snapshot else None
            if data is not None:
                written.append(self.write(page_url + IMAGES_FOLDER + name, data))
        return written

    def sample(self, sample: Sample, repo: RepoTwin, titles: dict[str, str],
               maps: dict[tuple[int, int], planted_map.Points]) -> list[str]:
        urls = self.urls
        url, json_url = urls.sample(sample.sample_id), urls.sample_json(sample.sample_id)
        shown = sample.source if sample.inline_ok else None
        source_html = render.code_html(shown, sample.lineno) if shown else None
        papers = [{"url": urls.paper(s), "title": titles.get(s, s)} for s in sample.papers]
        description = f"{sample.entry} in {sample.repo}: {sample.status}. {sample.reason}"
        run = planted_map.run_of(sample.planted) if sample.planted else None
        drawn = planted_map.svg(sample.planted, sample.entry, maps[run]) if sample.planted and run else None
        map_url = url + planted_map.FILE if drawn else None
        figure = [self.write(map_url, drawn)] if map_url and drawn else []
        return [*figure, self.page("sample.html", url, json_url, "sample", seo.page_meta(url, description, urls),
                                 sample=sample, repo_url=repo.page_url, papers=papers, source_html=source_html,
                                 vocabulary=STATUS_VOCABULARY, planted_map=map_url,
                                 shipped=getattr(repo, "source", None) == "shipped"),
                self.write(json_url, sample.model_dump_json())]

    # --- list pages ---

    def list_page(self, job: ListJob) -> list[str]:
        paging = Paging.model_construct(**json.loads(job.paging))
        if job.kind == "papers":
            listings = [_listing(r) for r in job.rows]
            record = records.paper_list(self.about, self.urls, paging, listings)
            return self.record("papers.html", record, paging.page_url, paging.json_url, "paper-list",
                               f"Every paper in this catalogue, page {paging.page} of {paging.pages}.")
        if job.kind == "repos":
            repos = [RepoListing.model_construct(**json.loads(r)) for r in job.rows]
            repo_list = records.repo_list(self.about, self.urls, paging, repos)
            return self.record("repos.html", repo_list, paging.page_url, paging.json_url, "repo-list",
                               f"Every repository in this catalogue, page {paging.page} of {paging.pages}.")
        assert job.task is not None
        task_slug, name, other_names = job.task
        listings = [_listing(r) for r in job.rows]
        task = records.task_page(self.about, self.urls, paging, listings, task_slug, name, other_names)
        return self.record("task.html", task, paging.page_url, paging.json_url, "task", f"Papers with the task {name}.")


def _listing(row: str) -> PaperListing:
    """A paper's listing as this build validated and stored it, rebuilt without validating it again (a list page
    holds hundreds); its verdict is made a model too, as the list's serializer expects."""
    data = json.loads(row)
    verdict = data["verdict"]
    worst = verdict["worst"] and WorstDeparture.model_construct(**verdict["worst"])
    return PaperListing.model_construct(**{**data, "verdict": PaperVerdict.model_construct(**{**verdict, "worst": worst})})


# --- the pool ---

_RENDERER: Renderer | None = None  # set in the parent before forking; each render process inherits it


def _render_papers(chunk: list[PaperJob], fresh: bool) -> list[PaperRendered | PaperRejected]:
    assert _RENDERER is not None
    _RENDERER.fresh = fresh
    return [_RENDERER.paper(job) for job in chunk]


def _render_repositories(chunk: list[RepoJob], fresh: bool) -> list[list[str]]:
    assert _RENDERER is not None
    _RENDERER.fresh = fresh
    return [_RENDERER.repository(job) for job in chunk]


def _render_list_pages(chunk: list[ListJob], fresh: bool) -> list[list[str]]:
    assert _RENDERER is not None
    _RENDERER.fresh = fresh
    return [_RENDERER.list_page(job) for job in chunk]


def _close(*descriptors: int) -> None:
    for fd in descriptors:
        os.close(fd)


def _start_render_process(*descriptors: int) -> None:
    """A render process's start: close the build's `descriptors`, and take the signals back from the build's
    handler (`plumbing.interrupts`), which it inherited by the fork. Ctrl-C reaches the whole process group, and
    the build ends its render processes itself: ignored here, it prints no traceback. SIGTERM just ends one."""
    _close(*descriptors)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)


WORK: dict[str, Callable[[list[Any], bool], list]] = {
    "papers": _render_papers, "repositories": _render_repositories, "lists": _render_list_pages,
}


class RenderPool:
    """`jobs` forked render processes (none when `jobs` is 1: the build renders in its own process).

    `submit(kind, chunk, context)` sends a chunk; `on_result(context, results)` is called in the build's
    process, in submission order, at most `depth` chunks per process behind."""

    def __init__(self, renderer: Renderer, jobs: int, depth: int = 3, lock: int | None = None) -> None:
        """`lock`: the descriptor of the site's lock, closed in each render process (a render process left
        behind by a killed build must not keep the next build out)."""
        global _RENDERER
        _RENDERER = renderer
        self.jobs = jobs
        self.depth = max(1, depth * jobs)
        self.pool: ProcessPoolExecutor | None = None
        if jobs > 1:
            closing = (lock,) if lock is not None else ()
            self.pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"),
                                            initializer=_start_render_process, initargs=closing)
            self.pool.submit(_close).result()  # a fork context starts every process at the first task: now
        self.pending: deque[tuple[Future, Any, Callable[[Any, list], None]]] = deque()
        self.fresh = False  # sent with each chunk (see `Renderer.fresh`)

    def submit(self, kind: str, chunk: list[Any], context: Any, on_result: Callable[[Any, list], None]) -> None:
        if self.pool is None:
            on_result(context, WORK[kind](chunk, self.fresh))
            return
        self.pending.append((self.pool.submit(WORK[kind], chunk, self.fresh), context, on_result))
        while len(self.pending) > self.depth:
            self._finish_one()

    def _finish_one(self) -> None:
        future, context, on_result = self.pending.popleft()
        on_result(context, future.result())

    def drain(self) -> None:
        while self.pending:
            self._finish_one()

    def close(self, *, wait: bool = True) -> None:
        if self.pool is not None:
            if not wait:
                for process in list(getattr(self.pool, "_processes", {}).values()):
                    process.kill()  # a failed build does not wait for chunks still being rendered
            self.pool.shutdown(wait=True, cancel_futures=not wait)
            self.pool = None


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)
