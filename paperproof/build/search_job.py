"""The search job: Pagefind's shards indexed in a thread while the repository and list pages render.

`start_search` is called once every paper is written (their search records are in the scratch table);
`finish_search` waits for it and gives the search page's record. A shard whose records did not change
is kept; a failed Pagefind leaves a site without search, and says so.
"""

from __future__ import annotations

import shutil
import threading
from dataclasses import dataclass, field

from paperproof.build import search
from paperproof.build.manifest import Digest
from paperproof.build.pages import SearchPage, SearchShard
from paperproof.build.records import search_page
from paperproof.build.site import Kept, SiteWriter


@dataclass
class SearchJob:
    """The shards planned, those to index, and what the indexing thread found."""

    result: search.SearchResult | None = None  # known without indexing (no Pagefind, no papers)
    shards: list[search.Shard] = field(default_factory=list)
    todo: list[tuple[search.Shard, str, bytes]] = field(default_factory=list)
    linked: list[Kept] = field(default_factory=list)  # shards kept from the published site, to link
    files: dict[int, list[str]] = field(default_factory=dict)  # by shard number: the files Pagefind wrote
    thread: threading.Thread | None = None
    error: str | None = None


def start_search(site: SiteWriter) -> SearchJob:
    """Plan the Pagefind shards over the papers' search records and start indexing those whose records
    changed, in a thread that waits on the Pagefind processes while the build goes on; a shard whose
    records did not change is kept. Each changed shard's records are written to a file first, so
    memory holds one shard's records at a time."""
    job = SearchJob()
    if site.pagefind is None:
        job.result = search.SearchResult(False, "no Pagefind binary found (pip install 'pagefind[bin]', or set "
                                                "PAGEFIND_BINARY_PATH)")
        return job
    kind = search.version(site.pagefind, site.manifest.file_digest)
    counts = site.db.execute("SELECT bucket, COUNT(*) FROM papers GROUP BY bucket ORDER BY bucket").fetchall()
    bounds = search.plan_counts(counts, search.SHARD_SIZE)
    if not bounds:
        job.result = search.SearchResult(False, "no papers to index")
        return job
    rows = site.db.execute("SELECT bucket, slug, doc FROM papers ORDER BY bucket, slug")
    records = site.state / "search-records"
    shutil.rmtree(records, ignore_errors=True)
    shards = []
    for number, (first, last) in enumerate(bounds, start=1):
        h = Digest(kind, str(number))
        names: list[str] = []
        slugs: list[str] = []
        lines: list[str] = []
        for _ in range(first, last + 1):
            bucket_name, slug, doc = next(rows)
            if not names or names[-1] != bucket_name:
                names.append(bucket_name)
            h.add(slug, doc or "")
            slugs.append(slug)
            lines.append(doc or "")
        shard = search.Shard(number, names, len(slugs), slugs[0], slugs[-1])
        job.shards.append(shard)
        unit = site.path(site.urls.search_bundle(number)).removesuffix("index.html")
        value = h.digest()
        if site.unchanged(unit, value):
            continue
        records.mkdir(parents=True, exist_ok=True)
        source = records / f"{number}.jsonl"
        source.write_text("\n".join(lines) + "\n", encoding="utf-8")
        shards.append((number, source, site.staging / unit))
        job.todo.append((shard, unit, value))
    job.linked = site.take_kept()
    if not job.todo and not job.linked:
        return job
    site.manifest.mark_pending([(unit, [unit + "pagefind-entry.json"]) for _, unit, _ in job.todo])

    def run() -> None:
        try:
            site.link_kept(job.linked)
            if shards:
                job.files = search.index_shards(shards, concurrency=min(site.jobs, 2))
        except (search.PagefindError, OSError) as exc:
            job.error = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__

    job.thread = threading.Thread(target=run, name="pagefind", daemon=True)
    job.thread.start()
    return job


def finish_search(site: SiteWriter, job: SearchJob) -> SearchPage:
    """Wait for the job, record its shards in the manifest, and give the search page's record."""
    result = _finish(site, job)
    if not result.available:
        site.notes.append(f"search: not built ({result.reason}); the site works without it")
    shards = [SearchShard(bundle_url=site.urls.search_bundle(s.number), papers=s.papers, first_slug=s.first_slug,
                          last_slug=s.last_slug) for s in result.shards]
    if result.available:
        site.notes.append(f"search: {sum(s.papers for s in shards)} papers in {len(shards)} Pagefind shard(s)")
    return search_page(site.about, site.urls, available=result.available, reason=result.reason,
                       fields=list(search.FIELDS), split=search.SPLIT, shards=shards)


def _finish(site: SiteWriter, job: SearchJob) -> search.SearchResult:
    if job.result is not None:
        return job.result
    if job.thread is not None:
        job.thread.join()
    shutil.rmtree(site.state / "search-records", ignore_errors=True)
    if job.error is not None:
        shutil.rmtree(site.staging / "pagefind", ignore_errors=True)
        site.db.execute("DELETE FROM seen WHERE unit LIKE 'pagefind/%'")
        return search.SearchResult(False, f"Pagefind failed: {job.error}")
    done = [(unit, value, files, None) for unit, value, files in job.linked]
    for shard, unit, value in job.todo:
        done.append((unit, value, [unit + name for name in job.files[shard.number]], None))
        site.counts["rendered"] += 1
    if done:
        site.manifest.mark_done(done)
    return search.SearchResult(True, None, job.shards)


__all__ = ["SearchJob", "finish_search", "start_search"]
