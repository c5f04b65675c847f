"""The list and index pages: paper and repository lists, tasks, statuses, the index, attribution, the feed,
the sitemaps, the search page and the files every site has (robots.txt, schemas, static files).

Written last, from the scratch tables the paper and repository pages filled (`PapersWritten`,
`RepositoriesWritten`); the paged lists go to the render processes, the rest is rendered here while
they and Pagefind work.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from functools import partial
from itertools import groupby
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from paperproof.build import datamap, feeds, glossary, pages, paper_verdict, records, render, search_job, seo
from paperproof.build.manifest import Digest
from paperproof.build.pages import INDEX_PAPERS, PAGE_SCHEMAS, Paging, PaperListing, StatusCount
from paperproof.build.paper_verdict import GRADE_LABELS
from paperproof.build.renderer import ListJob
from paperproof.build.site import SiteWriter, dump_json, record_schema
from paperproof.build.urls import task_key
from paperproof.catalogue.sample import STATUS_VOCABULARY, Sample

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pydantic import BaseModel

    from paperproof.build.paper_pages import PapersWritten
    from paperproof.build.repo_pages import RepositoriesWritten
    from paperproof.build.urls import SiteUrls

LIST_CHUNK = 4_000  # listing rows per chunk of list pages (a task's page often has a handful)


def write_indexes(site: SiteWriter, papers: PapersWritten, repositories: RepositoriesWritten) -> None:
    if papers.noop:
        return
    if site.check:
        site.check_removed()
        return
    assert papers.search is not None  # started by `write_papers` whenever it writes
    writer = _Indexes(site, repositories.samples)
    statuses = writer.status_counts()
    try:
        writer.lists()
        writer.tasks()
        writer.send_lists()
        # Everything but the search page needs only the scratch tables: written here, while the render
        # processes finish the lists and Pagefind indexes, not after both, with the cores idle.
        writer.index(statuses)
        writer.statuses(statuses)
        writer.attribution()
        writer.feed()
        site.in_sitemap(site.urls.search())  # the search page is written last, but listed now
        writer.sitemaps()
        site.pool.drain()
    finally:
        search_page = search_job.finish_search(site, papers.search)
    site.record("search.html", search_page, search_page.page_url, search_page.json_url, "search",
                "Search the titles, authors, tasks and abstracts of every paper.")
    # After Pagefind's processes are gone: the data map imports torch (a few hundred MB). Drawn beside
    # them, the full-size build peaked at 1,985 MB PSS; after them, at 1,804 MB (one run each).
    writer.fixed()
    site.db.commit()


def _schema_json(model: type[BaseModel], name: str, urls: SiteUrls) -> str:
    return dump_json(record_schema(model, name, urls))


class _Indexes:
    """The list pages of one build, and the list pages gathered but not yet sent to the render processes."""

    def __init__(self, site: SiteWriter, samples: tuple[Sample, ...]) -> None:
        self.site = site
        self.urls = site.urls
        self.samples = samples
        self._lists: list[tuple[str, bytes, list[str], ListJob]] = []  # list pages not sent yet (`_list_pages`)
        self._list_rows = 0

    def fixed(self) -> None:
        """robots.txt, the record schemas and the static files: the same for every catalogue."""
        site, urls = self.site, self.urls
        site.emit(site.path(urls.robots()), {site.path(urls.robots()): seo.robots(urls)})
        if not urls.absolute:
            site.notes.append("sitemaps and feed: site-relative URLs (build with --base-url https://… for absolute ones)")
        for name, model in PAGE_SCHEMAS.items():
            path = site.path(urls.schema(name))
            site.emit(path, {path: partial(_schema_json, model, name, urls)}, inputs=b"schema")
        statics: dict[str, Callable[[], str]] = {"style.css": render.stylesheet, "data-map.svg": datamap.svg}
        for name, content in render.static_files().items():
            statics[name] = partial(str, content)
        for name, produce in statics.items():
            path = site.path(urls.static(name))
            site.emit(path, {path: produce}, inputs=b"static")

    def status_counts(self) -> list[StatusCount]:
        return records.status_counts(self.samples, self.urls)

    def _listings(self, query: str, args: tuple = ()) -> list[PaperListing]:
        return [PaperListing.model_validate_json(row[0]) for row in self.site.db.execute(query, args)]

    def index(self, statuses: list[StatusCount]) -> None:
        site, urls = self.site, self.urls
        order = self._listings("SELECT listing FROM papers ORDER BY specimen, title_key, slug LIMIT ?", (INDEX_PAPERS,))
        verified = self._listings("SELECT listing FROM papers WHERE ran > 0 ORDER BY (date IS NULL), date DESC, slug "
                                  "LIMIT ?", (INDEX_PAPERS,))
        # Every paper whose code ran, by its grade against the paper (the listing holds its verdict).
        papers_by_grade = dict(site.db.execute("SELECT json_extract(listing, '$.verdict.grade'), count(*) FROM papers "
                                               "WHERE ran > 0 GROUP BY 1"))
        samples_by_grade: Counter[str | None] = Counter(paper_verdict.sample_grade(s.fidelity) for s in self.samples)
        record = records.index_page(site.about, urls, site.read_at, papers_total=site.count("papers"),
                                    repositories=site.count("repos"), samples=len(self.samples), statuses=statuses,
                                    papers=order, verified=verified, partial=site.partial,
                                    paper_grades={g: n for g in GRADE_LABELS if (n := papers_by_grade.get(g, 0))},
                                    sample_grades={g: n for g in GRADE_LABELS if (n := samples_by_grade[g])})
        site.record("index.html", record, record.page_url, record.json_url, "index",
                    "A catalogue of papers and the code linked to them, run in a sandbox and checked against "
                    "contracts drafted from its own declarations.", vocabulary=STATUS_VOCABULARY)

    def _paged(self, items: Sequence[Any], page_url: Callable[[int], str],
               json_url: Callable[[int], str]) -> list[tuple[Paging, list[Any]]]:
        size = pages.PAGE_SIZE
        return [(paging, list(items[(paging.page - 1) * size:paging.page * size]))
                for paging in records.pagings(len(items), size, page_url, json_url)]

    def _list_pages(self, kind: str, rows: Iterator[str], total: int, page_url: Callable[[int], str],
                    json_url: Callable[[int], str], extra: tuple | None = None) -> None:
        """Pages of `rows` (listing JSON, in order), each a unit rendered by the render processes. Pages are sent
        in chunks of about `LIST_CHUNK` rows whichever list they belong to: most tasks have one short page, and
        a chunk (and a manifest commit) per task would cost more than its page."""
        site = self.site
        for paging in records.pagings(total, pages.PAGE_SIZE, page_url, json_url):
            page_rows = [row for _, row in zip(range(pages.PAGE_SIZE), rows)]
            paging_json = paging.model_dump_json()
            unit = site.path(paging.page_url)
            site.in_sitemap(paging.page_url)
            h = Digest(site.version, kind, paging_json, dump_json(extra))
            for row in page_rows:
                h.add(row)
            value = h.digest()
            if site.unchanged(unit, value):
                continue
            self._lists.append((unit, value, [unit, site.path(paging.json_url)], ListJob(kind, paging_json, page_rows, extra)))
            self._list_rows += 1 + len(page_rows)
            if self._list_rows >= LIST_CHUNK:
                self.send_lists()

    def send_lists(self) -> None:
        """The list pages `_list_pages` has gathered, to the render processes."""
        if self._lists:
            self.site.send_units("lists", self._lists)
        self._lists, self._list_rows = [], 0

    def lists(self) -> None:
        """The paper and repository lists, streamed from the scratch tables in slug order: all the archive's
        listings at once would be about 340 MB of Python strings at full size (593 bytes a listing, measured at
        50,000 papers), held while the Pagefind processes index beside it."""
        urls = self.urls
        for table, page_url, json_url in (("papers", urls.papers, urls.api_papers),
                                          ("repos", urls.repos, urls.api_repos)):
            total = self.site.count(table)
            rows = (r[0] for r in self.site.db.execute(f"SELECT listing FROM {table} ORDER BY slug"))
            self._list_pages(table, rows, total, page_url, json_url)

    def statuses(self, statuses: list[StatusCount]) -> None:
        site, urls = self.site, self.urls
        index = glossary.status_index(site.about, urls, statuses)  # `/status/`: the statuses and every column
        site.record("statuses.html", index, index.page_url, index.json_url, "status-index", glossary.DESCRIPTION)
        for status, meaning in STATUS_VOCABULARY.items():
            rows = sorted((records.sample_listing(s, urls) for s in self.samples if s.status == status),
                          key=lambda r: (r.entry, r.repo, r.path, r.sample_id))
            for paging, chunk in self._paged(rows, partial(urls.status, status), partial(urls.status_json, status)):
                record = records.status_page(site.about, urls, status, statuses, paging, chunk)
                site.record("status.html", record, paging.page_url, paging.json_url, "status",
                            f"Samples with status {status}: {meaning}", vocabulary=STATUS_VOCABULARY)

    def tasks(self) -> None:
        """A list of papers per task. One statement reads the papers once, in table order, and SQLite sorts
        their (task, paper) pairs: a query per task would look each paper up again for each of its tasks,
        in random order, which on a table larger than memory is a disk read each."""
        site, urls = self.site, self.urls
        site.db.create_function("task_key", 1, task_key, deterministic=True)
        pairs = site.db.execute(
            "SELECT task_key(t.value), t.value, p.slug, p.listing FROM papers p, json_each(p.tasks) t "
            "ORDER BY 1, (p.date IS NULL), p.date DESC, p.slug")
        listings = []
        for key, group in groupby(pairs, key=itemgetter(0)):
            names: Counter[str] = Counter()
            rows: list[str] = []
            last = None
            for _, name, slug, listing in group:
                names[name] += 1
                if slug != last:  # a paper naming the task twice (two spellings of one key) is listed once
                    rows.append(listing)
                    last = slug
            ranked = sorted(names.items(), key=lambda kv: (-kv[1], kv[0]))
            name = ranked[0][0]
            self._list_pages("task", iter(rows), len(rows), partial(urls.task, name), partial(urls.task_json, name),
                             (key, name, [n for n, _ in ranked[1:]]))
            listings.append(records.task_listing(key, name, len(rows), urls))
        record = records.task_index(site.about, urls, listings)
        site.record("tasks.html", record, record.page_url, record.json_url, "task-index",
                    "Every task of the papers in this catalogue.")

    def attribution(self) -> None:
        site, urls = self.site, self.urls
        record = records.attribution_page(site.about, urls)
        site.record("attribution.html", record, record.page_url, record.json_url, "attribution",
                    "Where the material on this site comes from, and under which licences.")

    def feed(self) -> None:
        site = self.site
        rows = site.db.execute("SELECT feed FROM papers WHERE ran > 0 ORDER BY (date IS NULL), date DESC, slug LIMIT ?",
                               (feeds.FEED_ENTRIES,)).fetchall()
        papers = []
        for (feed,) in rows:
            slug, title, authors, date, url, summary, samples, ran = json.loads(feed)
            papers.append(feeds.FeedPaper(slug, title, tuple(authors), date, url, summary, samples, ran))
        path = site.path(self.urls.feed())
        site.emit(path, {path: feeds.atom(self.urls, site.read_at, papers)})

    def sitemaps(self) -> None:
        site = self.site
        limit = seo.SITEMAP_MAX
        total = site.count("pages")
        parts = max(1, -(-total // limit))
        cursor = site.db.execute("SELECT url FROM pages ORDER BY url")
        for number in range(1, parts + 1):
            part = [row[0] for row in cursor.fetchmany(limit)]
            path = site.path(self.urls.sitemap_part(number))
            site.emit(path, {path: seo.sitemap_part(self.urls, part, site.read_at)})
        path = site.path(self.urls.sitemap())
        site.emit(path, {path: seo.sitemap_index(self.urls, parts, site.read_at)})


__all__ = ["write_indexes"]
