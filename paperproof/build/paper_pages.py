"""The paper pages: each paper's page and twin, rendered again only when its digest changed.

Papers stream from the archive in blocks; each block's links come from the link table in one query. What
the indexes need of each paper (its listing, feed entry and search record, a few sort keys) goes to the
scratch table `papers`, in the order the render processes hand results back. `write_papers` returns a
`PapersWritten`, which the repository pages and the indexes take: they can only run after it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from paperproof.build import collector, search, search_job
from paperproof.build.manifest import Digest
from paperproof.build.renderer import PaperJob, PaperRejected, PaperRendered
from paperproof.build.site import SiteWriter, dump_json
from paperproof.catalogue import community
from paperproof.catalogue.archive import Archive, Reject
from paperproof.catalogue.repo_url import safe_key
from paperproof.plumbing.progress import bar

if TYPE_CHECKING:
    from paperproof.build.links import LinkTable
    from paperproof.catalogue.repo_work import RepoWork

PAPER_CHUNK = 128  # papers per chunk sent to a render process


@dataclass(frozen=True)
class PapersWritten:
    """What the later steps need of the paper pages: how many, whether anything is to be written at all
    (`noop`: the site is as its inputs; the later steps write nothing), and the search job started over
    their records. The papers themselves are in the site's scratch table `papers`."""

    count: int
    noop: bool
    search: search_job.SearchJob | None


def write_papers(site: SiteWriter, archive: Archive, links: LinkTable, repos: dict[str, RepoWork]) -> PapersWritten:
    if not site.start(archive, repos):
        return PapersWritten(count=site.papers_written, noop=True, search=None)
    collector.settle()  # the repositories, their samples and the link table live until the end
    writer = _PaperWriter(site, links, repos)
    seen: set[bytes] = set()
    block: list[tuple[Any, Any, str]] = []
    for paper, source in bar(archive.papers(), "pages", unit="paper"):
        unit = site.path(site.urls.paper(paper.slug))
        mark = Digest(unit).digest()
        if mark in seen:
            site.rejects.append(Reject(file="papers", position=-1, record=paper.paper_url,
                                       reason="duplicate slug: an earlier row already has it; this row is skipped"))
            continue
        seen.add(mark)
        block.append((paper, source, unit))
        if len(block) >= PAPER_CHUNK:
            writer.block(block)
            block = []
    if block:
        writer.block(block)
    writer.flush()
    site.papers_written = writer.written
    # Pagefind indexes while the repository and list pages render
    job = None if site.check else search_job.start_search(site)
    return PapersWritten(count=writer.written, noop=False, search=job)


class _PaperWriter:
    """Digests blocks of papers, sends those whose digest changed to the render processes, and gathers the
    scratch rows of every paper written or kept."""

    def __init__(self, site: SiteWriter, links: LinkTable, repos: dict[str, RepoWork]) -> None:
        self.site = site
        self.links = links
        self.repos = repos
        self.written = 0
        self._chunk: list[tuple[str, bytes, tuple, PaperJob]] = []
        self._rows: list[tuple] = []
        self._sources: dict[int, str] = {}

    def block(self, block: list[tuple[Any, Any, str]]) -> None:
        """Digest a block of papers; those whose digest changed are sent to the render processes."""
        site, repos = self.site, self.repos
        site.seen([unit for _, _, unit in block])
        previous = site.previous([unit for _, _, unit in block])
        block_links = self.links.get_many([paper.slug for paper, _, _ in block])
        curated = community.curated()
        for paper, source, unit in block:
            slug = paper.slug
            paper_links = block_links.get(slug, [])
            keys = [k.key for k in (safe_key(link.repo_url) for link in paper_links) if k is not None]
            keys += [k.key for k in curated.for_paper(slug)]
            shown = sorted({k for k in keys if k in repos})
            row = paper.model_dump_json()
            source_json = self._sources.get(id(source))
            if source_json is None:
                source_json = self._sources[id(source)] = source.model_dump_json()
            h = Digest(site.version, source_json, row, dump_json([_link_tuple(link)[1:] for link in paper_links]))
            for key in shown:
                h.add(key, site.repo_digest(key, repos[key]))
            value = h.digest()
            before = previous.get(unit)
            sort_keys = (slug, paper.title, paper.title.lower(), paper.date or None,
                         int(source.row_kind == "specimen"), search.bucket(unit.split("/")[1]),
                         json.dumps(list(paper.tasks)))
            if before is not None and before[0] == value and before[1] is not None:
                listing, feed, doc, ran = json.loads(before[1])
                self._add(unit, sort_keys, listing, feed, doc, ran)
                site.counts["kept"] += 1
                continue
            if site.check:
                site.mark_stale(f"paper {slug}" + (" (new)" if before is None else ""))
                self._add(unit, sort_keys, "{}", None, None, 0)
                continue
            job = PaperJob(slug, row, source, paper_links, {k: repos[k].record for k in shown},
                           {k: repos[k].samples for k in shown})
            self._chunk.append((unit, value, sort_keys, job))
            if len(self._chunk) >= PAPER_CHUNK:
                self._send(self._chunk)
                self._chunk = []

    def flush(self) -> None:
        """Send the last chunk, wait for every result, and store the last rows."""
        if self._chunk:
            self._send(self._chunk)
            self._chunk = []
        self.site.pool.drain()
        self._store()
        self.site.db.commit()

    def _send(self, chunk: list[tuple[str, bytes, tuple, PaperJob]]) -> None:
        urls, path = self.site.urls, self.site.path
        files = {unit: [path(urls.paper(job.slug)), path(urls.paper_json(job.slug))] for unit, _, _, job in chunk}
        self.site.manifest.mark_pending([(unit, files[unit]) for unit, _, _, _ in chunk])
        self.site.pool.submit("papers", [job for _, _, _, job in chunk], (chunk, files), self._done)

    def _done(self, context: tuple, results: list[PaperRendered | PaperRejected]) -> None:
        site = self.site
        chunk, files = context
        done: list[tuple[str, bytes | None, list[str], str | None]] = []
        for (unit, value, sort_keys, _job), result in zip(chunk, results):
            if isinstance(result, PaperRejected):
                site.rejects.append(Reject(file="render", position=-1, record=result.record, reason=result.reason))
                done.append((unit, None, files[unit], None))  # files may exist: listed, so removed at the end
                continue
            listing, feed, doc, ran = result
            self._add(unit, sort_keys, listing, feed, doc, ran)
            done.append((unit, value, files[unit], json.dumps([listing, feed, doc, ran], ensure_ascii=False)))
            site.counts["rendered"] += 1
        site.manifest.mark_done(done)
        for unit, value, _, _ in done:
            if value is None:
                site.unseen(unit)

    def _add(self, unit: str, sort_keys: tuple, listing: str, feed: str | None, doc: str | None, ran: int) -> None:
        slug, title, title_key, date, specimen, bucket, tasks = sort_keys
        self._rows.append((unit, slug, title, title_key, date, specimen, ran, bucket, doc, listing, feed, tasks))
        self.written += 1
        if len(self._rows) >= PAPER_CHUNK * 8:
            self._store()

    def _store(self) -> None:
        """The rows `_add` gathered, into the scratch tables, in one statement each."""
        db, urls = self.site.db, self.site.urls
        db.executemany("INSERT INTO papers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", self._rows)
        db.executemany("INSERT OR IGNORE INTO pages VALUES (?)", [(urls.paper(row[1]),) for row in self._rows])
        self._rows = []


def _link_tuple(link: Any) -> tuple:
    return (link.paper_slug, link.repo_url, link.is_official, link.mentioned_in_paper, link.mentioned_in_github,
            link.framework)


__all__ = ["PapersWritten", "write_papers"]
