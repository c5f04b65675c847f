"""Writing the site: each page and its JSON twin from one record, into a staging tree, incrementally.

Every HTML page links its twin (`<link rel="alternate" type="application/json">`) and the twin's JSON
Schema (`<link rel="describedby">`); papers, repositories and samples have their own records
(`catalogue.twin`, `catalogue.sample`), the list pages theirs (`build.pages`). Beside the pages: `api/`
(paged indexes), `schema/`, `feed.xml` (`build.feeds`), `sitemap.xml`, `sitemaps/` and `robots.txt`
(`build.seo`), and `pagefind/` (search, `build.search`).

At archive scale (576,261 papers, 300,161 links) the writer:

- streams: papers come one at a time from the archive, their links from the link table on disk
  (`build.links`), and what the indexes need of each paper (its listing, a few sort keys) goes to an
  SQLite scratch table, from which the list, task, feed and sitemap pages are read back in order. No
  list of every paper is held in memory;
- renders on every core: chunks of papers, repositories and list pages go to forked render processes
  (`build.renderer`), which write the files and send back the small rows the indexes need, in order;
- is incremental: each unit of the site (a paper's page and twin, a list page, a search shard…) has the
  digest of its inputs in the manifest (`build.manifest`); a unit whose digest did not change is not
  rendered again, since its files are already in the staging tree (the tree the last build replaced,
  patched with the files that build changed, or else hard links of the published site), and the files
  of units that are gone (papers that left the archive) are removed. A site made by other code (a new
  release, other settings) has no page to keep: the staging tree starts empty, and only the search
  shards, whose digests do not depend on the code, are linked in from the site. When the digest of
  every input together equals the published site's, there is nothing to do at all;
- publishes atomically: the staging tree is swapped in only when complete (`build.publish`). A build
  that fails or is killed leaves the published site as it was, and the next build resumes the staging
  tree from the manifest;
- with `check`, writes nothing and says what a build would change (`stale`).

A paper whose record cannot be assembled is reported by slug and reason and skipped; the rest of the site
is still written. Output is byte-identical for identical inputs: every list has a fixed order, every date
comes from the inputs (`read_at`), and rendering is a pure function of each unit's inputs.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from paperproof.build import collector, datamap, feeds, leaks, publish, render, search, seo
from paperproof.build.manifest import MARKER, Digest, Manifest, code_version, read_marker, state_directory
from paperproof.build.pages import (
    INDEX_PAPERS,
    PAGE_SCHEMAS,
    PAGE_SIZE,
    AttributionPage,
    IndexPage,
    Paging,
    PaperListing,
    RepoListing,
    SearchPage,
    SearchShard,
    StatusCount,
    StatusPage,
    TaskIndex,
    TaskListing,
    page_count,
)
from paperproof.build.renderer import Renderer, RenderPool, default_jobs, sample_listing
from paperproof.build.twin import NON_AFFILIATION, safe_key
from paperproof.build.urls import SiteUrls, file_for, repo_slug, task_key
from paperproof.catalogue import community
from paperproof.catalogue.archive import Archive, Reject
from paperproof.catalogue.repos import read_readme
from paperproof.catalogue.sample import STATUS_VOCABULARY, Sample
from paperproof.catalogue.twin import PaperTwin, RepoTwin
from paperproof.plumbing.files import remove_file, sync_tree, write_file
from paperproof.plumbing.progress import bar

if TYPE_CHECKING:
    from collections.abc import Sequence

    from paperproof.build.links import LinkTable
    from paperproof.catalogue.repo_work import RepoWork

ARCHIVE_NAME = "the Papers with Code archive (the pwc-archive datasets on Hugging Face; last snapshot July 2025)"
PAPER_CHUNK = 128  # papers per chunk sent to a render process
LIST_CHUNK = 4_000  # listing rows per chunk of list pages (a task's page often has a handful)
REPO_CHUNK = 256
STALE_SHOWN = 10


def dump_json(data: Any) -> str:
    """Stable, compact, valid JSON (no NaN or Infinity)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def record_schema(model: type[BaseModel], name: str, urls: SiteUrls) -> dict:
    """The JSON Schema of a record as the site serialises it (2020-12, as pydantic generates it)."""
    schema = model.model_json_schema(mode="serialization")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": urls.schema(name), **schema}


_SCRATCH = """
CREATE TABLE papers (unit TEXT PRIMARY KEY, slug TEXT NOT NULL, title TEXT NOT NULL, title_key TEXT NOT NULL,
                     date TEXT, specimen INTEGER NOT NULL, ran INTEGER NOT NULL, bucket TEXT NOT NULL, doc TEXT,
                     listing TEXT NOT NULL, feed TEXT, tasks TEXT NOT NULL);
CREATE INDEX papers_by_slug ON papers (slug);
CREATE TABLE repos (slug TEXT PRIMARY KEY, listing TEXT NOT NULL);
CREATE TABLE pages (url TEXT PRIMARY KEY);
CREATE TABLE seen (unit TEXT PRIMARY KEY);
"""


class SiteWriter:
    def __init__(self, out: Path, urls: SiteUrls, read_at: str, *, cache: Path | None = None, jobs: int | None = None,
                 check: bool = False, inputs: dict[str, list[Path]] | None = None,
                 secrets: leaks.Secrets | None = None) -> None:
        self.out = out
        self.secrets = secrets or leaks.take()
        self.urls = urls
        self.read_at = read_at
        self.cache = cache
        self.jobs = max(1, jobs or default_jobs())
        self.check = check
        self.inputs = inputs  # input files by table ("papers", "links", "all"); None: not files (a hub id)
        self.staging = out.with_name(f".{out.name}.staging")
        self.pagefind = search.binary()
        self.search_available = self.pagefind is not None  # the header's search form
        self.about = None
        self.rejects: list[Reject] = []
        self.notes: list[str] = []  # what the build summary should say about the site (search, sitemaps)
        self.stale: list[str] = []  # with `check`: what a build would change
        self.counts: Counter = Counter()  # units rendered, kept, removed
        self.samples: list[tuple[Sample, str]] = []  # (sample, repo slug)
        self.noop = False
        self.papers_written = 0
        self._digests: dict[str, bytes] = {}
        self._sources: dict[int, str] = {}
        self._temporary: Path | None = None
        self._search: _SearchJob | None = None  # started once the papers are written
        self._link_site = False  # the staging tree started empty beside a published site (`_begin`)
        self._to_link: list[tuple[str, bytes, list[str]]] = []  # units kept from that site, not linked yet
        self._lists: list[tuple[str, bytes, list[str], tuple]] = []  # list pages not sent yet (`_list_pages`)
        self._list_rows = 0

    # --- lifecycle ---

    def __enter__(self) -> SiteWriter:
        self._held = ExitStack()
        lock = self._held.enter_context(publish.lock(self.out))
        try:
            return self._open(lock)
        except BaseException:
            self._held.close()
            raise

    def _open(self, lock: int) -> SiteWriter:
        from paperproof.build.twin import about

        if self.cache is not None:
            self.state = state_directory(self.cache, self.out)
        elif self.check:
            self.state = Path(tempfile.mkdtemp(prefix="paperproof-check-"))
            self._temporary = self.state
        else:
            self.state = self.out.with_name(f".{self.out.name}.build")
            shutil.rmtree(self.state, ignore_errors=True)
            self._temporary = self.state
        for earlier in ("search-docs", "search-pages", "search-shards"):  # search inputs of earlier versions
            shutil.rmtree(self.state / earlier, ignore_errors=True)
        self.about = about(self.urls)
        self.renderer = Renderer(self.urls, self.read_at, self.staging, self.search_available)
        self._held.enter_context(collector.long_lived())
        # Fork the render processes first: before the archive is read, before any SQLite connection is
        # open, and before the run stage could import torch.
        self.pool = RenderPool(self.renderer, 1 if self.check else self.jobs, lock=lock)
        try:
            if not self.check:
                self.state.mkdir(parents=True, exist_ok=True)
            self.manifest = Manifest(self.state / "manifest.sqlite", readonly=self.check)
            scratch = self.state / "scratch.sqlite" if not self.check else Path(tempfile.mkdtemp()) / "scratch.sqlite"
            for leftover in (scratch, scratch.with_name(scratch.name + "-journal")):
                leftover.unlink(missing_ok=True)
            self.db = sqlite3.connect(scratch)
            self.db.execute("PRAGMA journal_mode=OFF")
            self.db.execute("PRAGMA synchronous=OFF")
            self.db.executescript(_SCRATCH)
            self._scratch = scratch
            self.version = code_version(self._settings())
            if not self.check:
                self._recover()
            self.site_ok = self._site_ok()
        except BaseException:
            self.pool.close(wait=False)
            raise
        return self

    def _settings(self) -> dict[str, object]:
        from paperproof.build import pages as pages_module

        return {"base": self.urls.base, "read_at": self.read_at, "search": self.search_available,
                "page_size": (PAGE_SIZE, pages_module.PAGE_SIZE), "index_papers": INDEX_PAPERS,
                "shard_size": search.SHARD_SIZE, "sitemap_max": seo.SITEMAP_MAX, "feed": feeds.FEED_ENTRIES}

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            self.pool.close(wait=exc_type is None)
            if exc_type is None and not self.check and not self.noop:
                self._finish()
            elif exc_type is not None and self._temporary is not None and not self.check:
                publish.discard(self.staging, self.out)  # nothing to resume from without a cache
        finally:
            self.db.close()
            self._scratch.unlink(missing_ok=True)
            self.manifest.close()
            if self._temporary is not None:
                shutil.rmtree(self._temporary, ignore_errors=True)
                if self.check:
                    shutil.rmtree(self._scratch.parent, ignore_errors=True)
            self._held.close()

    # --- the manifest and the staging tree ---

    def links_store(self) -> tuple[Path | None, str | None]:
        """Where the build keeps its link table, and the digest of the links dump it is built from."""
        if self.check:
            return None, None
        files = (self.inputs or {}).get("links")
        fingerprint = self.manifest.tree_digest(files) if files else None
        return self.state / "links.sqlite", fingerprint

    def _recover(self) -> None:
        """A build killed between the swap and the manifest's commit: the swap happened when the site's marker
        names the pending tree; then the staging units are the site's."""
        pending = self.manifest.get("pending_tree")
        if pending is None:
            return
        if read_marker(self.out).get("tree") == pending:
            inputs, summary = self.manifest.get("pending_inputs"), self.manifest.get("pending_summary")
            self.manifest.promote()
            self.manifest.set("site_tree", pending)
            self.manifest.set("site_inputs", inputs)
            self.manifest.set("site_summary", summary)
            publish.discard(self.staging, self.out)  # it holds the tree that was replaced
        else:
            for key in ("pending_tree", "pending_inputs", "pending_summary"):
                self.manifest.set(key, None)
        self.manifest.commit()

    def _site_ok(self) -> bool:
        """Is the site on disk the one the manifest describes?"""
        tree = self.manifest.get("site_tree")
        return tree is not None and self.out.is_dir() and read_marker(self.out).get("tree") == tree

    def _inputs_digest(self, repos: dict[str, RepoWork]) -> str | None:
        """Everything the site is made from, in one digest; None when the archive is not files."""
        if not self.inputs or not self.inputs.get("all"):
            return None
        h = Digest(self.version, self.manifest.tree_digest(self.inputs["all"]))
        for key in sorted(repos):
            work = repos[key]
            h.add(key, self._repo_digest(key, work), dump_json(sorted(set(work.papers))))
        h.add(dump_json([e.model_dump(mode="json") for e in community.curated()]))
        return h.hex()

    def _repo_digest(self, key: str, work: RepoWork) -> bytes:
        value = self._digests.get(key)
        if value is None:
            h = Digest(work.record.model_dump_json())
            for sample in work.samples:
                h.add(sample.model_dump_json())
            value = self._digests[key] = h.digest()
        return value

    def _begin(self) -> None:
        """Prepare the staging tree: resume one a killed build left, or start one from the published site."""
        m = self.manifest
        base = m.get("site_tree") if self.site_ok else ""
        if not self.site_ok:
            m.db.execute("DELETE FROM site_units")
            for key in ("site_tree", "site_inputs", "site_summary"):
                m.set(key, None)
            m.commit()
        if (m.has_stage() and self.staging.is_dir() and m.get("stage_ready") == "1"
                and m.get("stage_base") == base):
            self.notes.append("resumed the staging tree of an unfinished build")
            self._link_site = m.get("stage_linked") == "1"
            # files linked from the site may be in the tree: every write then replaces, never writes in place
            self.pool.fresh = m.get("stage_seeded") != "1" and not self._link_site
            return
        # A site made by other code (a new release, other settings): every page's digest changed, so linking
        # the whole site into the staging tree, or patching the tree it replaced, would only be undone. The
        # staging tree starts empty instead, and the few units whose digests do not depend on the code (the
        # search shards) are linked from the site one by one (`_unchanged`).
        seed = self.site_ok and read_marker(self.out).get("version") == self.version
        self._link_site = self.site_ok and not seed
        publish.discard(self.staging, self.out)
        m.new_stage(from_site=seed)
        m.set("stage_ready", "0")
        m.set("stage_base", base)
        m.set("stage_seeded", "1" if seed else "0")
        m.set("stage_linked", "1" if self._link_site else "0")
        self.pool.fresh = not seed
        m.commit()
        if not seed:
            self.staging.mkdir(parents=True)
        elif not self._recycle():
            publish.seed_staging(self.out, self.staging)
        m.set("stage_ready", "1")
        m.commit()

    def _recycle(self) -> bool:
        """Make the tree the last build replaced (kept beside the site) the staging tree, patched to equal the
        published one, when it is the tree the manifest says was replaced; else discard it."""
        m = self.manifest
        kept = publish.previous(self.out)
        if not kept.is_dir():
            return False
        replaced = m.get("replaced_tree")
        if replaced is None or m.get("replaced_by") != m.get("site_tree") or read_marker(kept).get("tree") != replaced:
            publish.discard(kept, self.out)
            return False
        publish.patch_previous(self.out, self.staging, m.changed())
        return True

    def _table(self) -> str:
        return "site_units" if self.check else "stage_units"

    def _previous(self, units: list[str]) -> dict[str, tuple[bytes | None, str | None]]:
        """What the manifest holds of each of `units`: its digest, and its data when made at that digest."""
        if self.check and not self.site_ok:
            return {}
        return self.manifest.lookup(self._table(), units)

    def _seen(self, unit: str) -> None:
        self.db.execute("INSERT OR IGNORE INTO seen VALUES (?)", (unit,))

    def _stale(self, what: str) -> None:
        self.counts["stale"] += 1
        if len(self.stale) < STALE_SHOWN:
            self.stale.append(what)

    def _unchanged(self, unit: str, value: bytes) -> bool:
        """Mark `unit` as part of this build; True (counted as kept) when its digest equals the one on record.
        In a staging tree started empty beside a published site (`_begin`), a unit the site holds at this
        digest is kept by hard-linking its files from the site: queued for the search thread, which links
        while pages render (`_link_kept`), or for the end of the build."""
        self._seen(unit)
        previous = self._previous([unit]).get(unit)
        if previous is not None and previous[0] == value:
            self.counts["kept"] += 1
            return True
        if self._link_site and previous is None:
            files = self.manifest.files_at("site_units", unit, value)
            if files is not None:
                self._to_link.append((unit, value, files))
                self.counts["kept"] += 1
                return True
        return False

    def _link_kept(self, units: list[tuple[str, bytes, list[str]]]) -> None:
        """Link the files of units kept from the published site into the staging tree (any thread)."""
        for _, _, files in units:
            publish.link_files(self.out, self.staging, files)

    def _emit(self, unit: str, files: dict[str, str | bytes | Callable[[], str | bytes]], inputs: bytes | None = None) -> None:
        """A unit rendered in this process: written when its digest (of `inputs`, else of its content) changed."""
        if inputs is None:
            contents = {name: (c() if callable(c) else c) for name, c in files.items()}
            h = Digest(self.version)
            for name in sorted(contents):
                h.add(name, contents[name])
            value = h.digest()
        else:
            contents = None
            value = Digest(self.version).add(inputs).digest()
        if self._unchanged(unit, value):
            return
        if self.check:
            self._stale(unit)
            return
        if contents is None:
            contents = {name: (c() if callable(c) else c) for name, c in files.items()}
        names = sorted(contents)
        self.manifest.mark_pending([(unit, names)])
        for name in names:
            write_file(self.staging / name, contents[name])
        self.manifest.mark_done([(unit, value, names, None)])
        self.counts["rendered"] += 1

    def _path(self, url: str) -> str:
        return file_for(url, self.urls.base)

    def _in_sitemap(self, url: str) -> None:
        """List a page of this build in the sitemaps (the `pages` table they are written from)."""
        self.db.execute("INSERT OR IGNORE INTO pages VALUES (?)", (url,))

    def _record_files(self, template: str, record: BaseModel, url: str, json_url: str, schema: str, description: str,
                      **context: Any) -> dict[str, Callable[[], str]]:
        def page() -> str:
            return self.renderer.env.get_template(template).render(
                json_url=json_url, schema_url=self.urls.schema(schema), meta=seo.page_meta(url, description, self.urls),
                page_url=url, record=record, **context)

        self._in_sitemap(url)
        return {self._path(url): page, self._path(json_url): record.model_dump_json}

    def _record(self, template: str, record: BaseModel, url: str, json_url: str, schema: str, description: str,
                **context: Any) -> None:
        """A page and its twin from one record (rendered here, kept when the content is unchanged)."""
        self._emit(self._path(url), self._record_files(template, record, url, json_url, schema, description, **context))

    # --- papers ---

    def write_papers(self, archive: Archive, links: LinkTable, repos: dict[str, RepoWork]) -> int:
        inputs = None if self._temporary is not None else self._inputs_digest(repos)
        self._inputs = inputs
        self._archive = archive
        self._rejects_from = len(archive.rejects)
        if inputs is not None and self.site_ok and self.manifest.get("site_inputs") == inputs:
            self.noop = True
            stored = json.loads(self.manifest.get("site_summary") or "{}")
            self.rejects = [Reject.model_validate(r) for r in stored.get("rejects", [])]
            self.notes = list(stored.get("notes", []))
            self.papers_written = int(stored.get("papers", 0))
            return self.papers_written
        if self.check and not self.site_ok:
            self._stale(f"{self.out}: missing, or not the site this cache's manifest describes")
        if not self.check:
            self._begin()
        collector.settle()  # the repositories, their samples and the link table live until the end
        self.papers_written = 0
        self._chunk: list[tuple[str, bytes, tuple, tuple]] = []
        self._paper_rows: list[tuple] = []
        seen: set[bytes] = set()
        block: list[tuple[Any, Any, str]] = []
        for paper, source in bar(archive.papers(), "pages", unit="paper"):
            unit = self._path(self.urls.paper(paper.slug))
            mark = Digest(unit).digest()
            if mark in seen:
                self.rejects.append(Reject(file="papers", position=-1, record=paper.paper_url,
                                           reason="duplicate slug: an earlier row already has it; this row is skipped"))
                continue
            seen.add(mark)
            block.append((paper, source, unit))
            if len(block) >= PAPER_CHUNK:
                self._paper_block(block, links, repos)
                block = []
        if block:
            self._paper_block(block, links, repos)
        if self._chunk:
            self._send_papers(self._chunk)
        self.pool.drain()
        self._store_papers()
        self.db.commit()
        if not self.check:
            self._search = self._start_search()  # Pagefind indexes while repository and list pages render
        return self.papers_written

    def _paper_block(self, block: list[tuple[Any, Any, str]], links: LinkTable, repos: dict[str, RepoWork]) -> None:
        """Digest a block of papers; those whose digest changed are sent to the render processes."""
        self.db.executemany("INSERT OR IGNORE INTO seen VALUES (?)", [(unit,) for _, _, unit in block])
        previous = self._previous([unit for _, _, unit in block])
        block_links = links.get_many([paper.slug for paper, _, _ in block])
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
            h = Digest(self.version, source_json, row, dump_json([_link_tuple(link)[1:] for link in paper_links]))
            for key in shown:
                h.add(key, self._repo_digest(key, repos[key]))
            value = h.digest()
            before = previous.get(unit)
            sort_keys = (slug, paper.title, paper.title.lower(), paper.date or None,
                         int(source.row_kind == "specimen"), search.bucket(unit.split("/")[1]),
                         json.dumps(list(paper.tasks)))
            if before is not None and before[0] == value and before[1] is not None:
                listing, feed, doc, ran = json.loads(before[1])
                self._add_paper(unit, sort_keys, listing, feed, doc, ran)
                self.counts["kept"] += 1
                continue
            if self.check:
                self._stale(f"paper {slug}" + (" (new)" if before is None else ""))
                self._add_paper(unit, sort_keys, "{}", None, None, 0)
                continue
            item = (slug, row, source, paper_links, {k: repos[k].record for k in shown},
                    {k: repos[k].samples for k in shown})
            self._chunk.append((unit, value, sort_keys, item))
            if len(self._chunk) >= PAPER_CHUNK:
                self._send_papers(self._chunk)
                self._chunk = []

    def _send_papers(self, chunk: list[tuple[str, bytes, tuple, tuple]]) -> None:
        files = {unit: [self._path(self.urls.paper(item[0])), self._path(self.urls.paper_json(item[0]))]
                 for unit, _, _, item in chunk}
        self.manifest.mark_pending([(unit, files[unit]) for unit, _, _, _ in chunk])
        self.pool.submit("papers", [item for _, _, _, item in chunk], (chunk, files), self._papers_done)

    def _papers_done(self, context: tuple, results: list[tuple]) -> None:
        chunk, files = context
        done = []
        for (unit, value, sort_keys, _item), result in zip(chunk, results):
            if result[0] == "reject":
                self.rejects.append(Reject(file="render", position=-1, record=result[2], reason=result[1]))
                done.append((unit, None, files[unit], None))  # files may exist: listed, so removed at the end
                continue
            _, listing, feed, doc, ran = result
            self._add_paper(unit, sort_keys, listing, feed, doc, ran)
            done.append((unit, value, files[unit], json.dumps([listing, feed, doc, ran], ensure_ascii=False)))
            self.counts["rendered"] += 1
        self.manifest.mark_done(done)
        for unit, value, _, _ in done:
            if value is None:
                self.db.execute("DELETE FROM seen WHERE unit = ?", (unit,))

    def _add_paper(self, unit: str, sort_keys: tuple, listing: str, feed: str | None, doc: str | None, ran: int) -> None:
        slug, title, title_key, date, specimen, bucket, tasks = sort_keys
        self._paper_rows.append((unit, slug, title, title_key, date, specimen, ran, bucket, doc, listing, feed, tasks))
        self.papers_written += 1
        if len(self._paper_rows) >= PAPER_CHUNK * 8:
            self._store_papers()

    def _store_papers(self) -> None:
        """The rows `_add_paper` gathered, into the scratch tables, in one statement each."""
        self.db.executemany("INSERT INTO papers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", self._paper_rows)
        self.db.executemany("INSERT OR IGNORE INTO pages VALUES (?)",
                            [(self.urls.paper(row[1]),) for row in self._paper_rows])
        self._paper_rows = []

    # --- repositories and samples ---

    def write_repositories(self, repos: dict[str, RepoWork]) -> None:
        if self.noop:
            return
        chunk: list[tuple[str, bytes, list[str], tuple]] = []
        for key in bar(sorted(repos), "repo pages", unit="repo"):
            work = repos[key]
            record = work.record
            slug = repo_slug(record.host, record.repo)
            urls = self.urls
            papers = []
            for s, kind in sorted(set(work.papers)):
                row = self.db.execute("SELECT title FROM papers WHERE slug = ?", (s,)).fetchone()
                if row is not None:
                    papers.append((s, row[0], kind))
            titles: dict[str, str] = {}
            for sample in work.samples:
                for s in sample.papers:
                    row = self.db.execute("SELECT title FROM papers WHERE slug = ?", (s,)).fetchone()
                    if row is not None:
                        titles[s] = row[0]
                self.samples.append((sample, slug))
                self._in_sitemap(urls.sample(sample.sample_id))
            self._in_sitemap(urls.repo(slug))
            listing = RepoListing(
                slug=slug, repo=record.repo, host=record.host, url=record.url, licence=record.licence,
                source=record.source, specimen=record.specimen, topic=record.topic, papers=len(papers),
                samples=len(work.samples), page_url=urls.repo(slug), json_url=urls.repo_json(slug))
            self.db.execute("INSERT OR REPLACE INTO repos VALUES (?, ?)", (slug, listing.model_dump_json()))
            readme = None
            if record.readme and record.snapshot:
                readme = read_readme(Path(record.snapshot), record.readme) or None
            unit = self._path(urls.repo(slug))
            value = Digest(self.version, self._repo_digest(key, work), dump_json(papers), dump_json(sorted(titles.items())),
                           readme).digest()
            if self._unchanged(unit, value):
                continue
            if self.check:
                self._stale(f"repository {record.repo}" + (" (new)" if unit not in self._previous([unit]) else ""))
                continue
            files = [self._path(urls.repo(slug)), self._path(urls.repo_json(slug))]
            for sample in work.samples:
                files += [self._path(urls.sample(sample.sample_id)), self._path(urls.sample_json(sample.sample_id))]
            chunk.append((unit, value, files, (record, work.samples, papers, titles, readme)))
            if len(chunk) >= REPO_CHUNK:
                self._send_units("repositories", chunk)
                chunk = []
        if chunk:
            self._send_units("repositories", chunk)
        self.pool.drain()
        self.db.commit()

    def _send_units(self, kind: str, chunk: list[tuple[str, bytes, list[str], tuple]]) -> None:
        """Units rendered by the render processes, each with its digest and the files it will write."""
        self.manifest.mark_pending([(unit, files) for unit, _, files, _ in chunk])
        self.pool.submit(kind, [item for _, _, _, item in chunk], chunk, self._units_done)

    def _units_done(self, chunk: list[tuple[str, bytes, list[str], tuple]], results: list[list[str]]) -> None:
        self.manifest.mark_done([(unit, value, written, None) for (unit, value, _, _), written in zip(chunk, results)])
        self.counts["rendered"] += len(chunk)

    # --- indexes ---

    def write_indexes(self) -> None:
        if self.noop:
            return
        if self.check:
            self._check_removed()
            return
        statuses = self._status_counts()
        try:
            self._write_lists()
            self._write_tasks()
            self._send_lists()
            # Everything but the search page needs only the scratch tables: written here, while the render
            # processes finish the lists and Pagefind indexes, not after both, with the cores idle.
            self._write_index(statuses)
            self._write_statuses(statuses)
            self._write_attribution()
            self._write_feed()
            self._in_sitemap(self.urls.search())  # the search page is written last, but listed now
            self._write_sitemaps()
            self.pool.drain()
        finally:
            search_page = self._write_search(self._search)
        self._write_search_page(search_page)
        # After Pagefind's processes are gone: the data map imports torch (a few hundred MB). Drawn beside
        # them, the full-size build peaked at 1,985 MB PSS; after them, at 1,804 MB (one run each).
        self._write_fixed()
        self.db.commit()

    def _write_fixed(self) -> None:
        """robots.txt, the record schemas and the static files: the same for every catalogue."""
        self._emit(self._path(self.urls.robots()), {self._path(self.urls.robots()): seo.robots(self.urls)})
        if not self.urls.absolute:
            self.notes.append("sitemaps and feed: site-relative URLs (build with --base-url https://… for absolute ones)")
        for name, model in self.schema_models().items():
            path = self._path(self.urls.schema(name))
            self._emit(path, {path: lambda m=model, n=name: dump_json(record_schema(m, n, self.urls))}, inputs=b"schema")
        statics: dict[str, Callable[[], str]] = {"style.css": render.stylesheet, "data-map.svg": datamap.svg}
        for name, content in render.static_files().items():
            statics[name] = lambda c=content: c
        for name, produce in statics.items():
            path = self._path(self.urls.static(name))
            self._emit(path, {path: produce}, inputs=b"static")

    @staticmethod
    def schema_models() -> dict[str, type[BaseModel]]:
        """Every record type the site publishes, by its schema's name (`schema/<name>.json`)."""
        return {"paper": PaperTwin, "repo": RepoTwin, "sample": Sample, **PAGE_SCHEMAS}

    def _count(self, table: str) -> int:
        return self.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]

    def _status_counts(self) -> list[StatusCount]:
        counts = Counter(s.status for s, _ in self.samples)
        return [StatusCount(status=k, meaning=v, samples=counts[k], url=self.urls.status(k),
                            json_url=self.urls.status_json(k)) for k, v in STATUS_VOCABULARY.items()]

    def _listings(self, query: str, args: tuple = ()) -> list[PaperListing]:
        return [PaperListing.model_validate_json(row[0]) for row in self.db.execute(query, args)]

    def _write_index(self, statuses: list[StatusCount]) -> None:
        order = self._listings("SELECT listing FROM papers ORDER BY specimen, title_key, slug LIMIT ?", (INDEX_PAPERS,))
        verified = self._listings("SELECT listing FROM papers WHERE ran > 0 ORDER BY (date IS NULL), date DESC, slug "
                                  "LIMIT ?", (INDEX_PAPERS,))
        record = IndexPage(
            about=self.about, schema_url=self.urls.schema("index"), page_url=self.urls.home(),
            json_url=self.urls.index_json(), read_at=self.read_at, papers_total=self._count("papers"),
            repositories=self._count("repos"), samples=len(self.samples), statuses=statuses,
            papers=order, papers_url=self.urls.papers(), verified=verified,
            api={"papers": self.urls.api_papers(), "repos": self.urls.api_repos(), "tasks": self.urls.tasks_json(),
                 "feed": self.urls.feed(), "sitemap": self.urls.sitemap(), "search": self.urls.search_json()},
            schemas={name: self.urls.schema(name) for name in self.schema_models()},
        )
        self._record("index.html", record, record.page_url, record.json_url, "index",
                     "A catalogue of papers and the code linked to them, run in a sandbox and checked against "
                     "contracts drafted from its own declarations.", vocabulary=STATUS_VOCABULARY)

    def _pagings(self, total: int, page_url: Callable[[int], str], json_url: Callable[[int], str]) -> Iterator[Paging]:
        pages = page_count(total, PAGE_SIZE)
        for number in range(1, pages + 1):
            yield Paging(
                page=number, pages=pages, page_size=PAGE_SIZE, total=total, page_url=page_url(number),
                json_url=json_url(number),
                prev=json_url(number - 1) if number > 1 else None, next=json_url(number + 1) if number < pages else None,
                prev_page_url=page_url(number - 1) if number > 1 else None,
                next_page_url=page_url(number + 1) if number < pages else None)

    def _paged(self, items: Sequence[Any], page_url: Callable[[int], str],
               json_url: Callable[[int], str]) -> list[tuple[Paging, list[Any]]]:
        return [(paging, list(items[(paging.page - 1) * PAGE_SIZE:paging.page * PAGE_SIZE]))
                for paging in self._pagings(len(items), page_url, json_url)]

    def _list_pages(self, kind: str, rows: Iterator[str], total: int, page_url: Callable[[int], str],
                    json_url: Callable[[int], str], extra: tuple | None = None) -> None:
        """Pages of `rows` (listing JSON, in order), each a unit rendered by the render processes. Pages are sent
        in chunks of about `LIST_CHUNK` rows whichever list they belong to: most tasks have one short page, and
        a chunk (and a manifest commit) per task would cost more than its page."""
        pagings = self._pagings(total, page_url, json_url)
        for paging in pagings:
            page_rows = [row for _, row in zip(range(PAGE_SIZE), rows)]
            paging_json = paging.model_dump_json()
            unit = self._path(paging.page_url)
            self._in_sitemap(paging.page_url)
            h = Digest(self.version, kind, paging_json, dump_json(extra))
            for row in page_rows:
                h.add(row)
            value = h.digest()
            if self._unchanged(unit, value):
                continue
            self._lists.append((unit, value, [unit, self._path(paging.json_url)], (kind, paging_json, page_rows, extra)))
            self._list_rows += 1 + len(page_rows)
            if self._list_rows >= LIST_CHUNK:
                self._send_lists()

    def _send_lists(self) -> None:
        """The list pages `_list_pages` has gathered, to the render processes."""
        if self._lists:
            self._send_units("lists", self._lists)
        self._lists, self._list_rows = [], 0

    def _write_lists(self) -> None:
        """The paper and repository lists, read from the scratch tables as they are paged: all the archive's
        listings at once would be about 340 MB of Python strings at full size (593 bytes a listing, measured at
        50,000 papers), held while the Pagefind processes index beside it."""
        for table, page_url, json_url in (("papers", self.urls.papers, self.urls.api_papers),
                                          ("repos", self.urls.repos, self.urls.api_repos)):
            total = self._count(table)
            rows = (r[0] for r in self.db.execute(f"SELECT listing FROM {table} ORDER BY slug"))
            self._list_pages(table, rows, total, page_url, json_url)

    def _write_statuses(self, statuses: list[StatusCount]) -> None:
        for status, meaning in STATUS_VOCABULARY.items():
            rows = sorted((sample_listing(s, self.urls) for s, _ in self.samples if s.status == status),
                          key=lambda r: (r.entry, r.repo, r.path, r.sample_id))
            for paging, chunk in self._paged(rows, lambda n, s=status: self.urls.status(s, n),
                                             lambda n, s=status: self.urls.status_json(s, n)):
                record = StatusPage(about=self.about, schema_url=self.urls.schema("status"), status=status,
                                    meaning=meaning, statuses=statuses, paging=paging, samples=chunk)
                self._record("status.html", record, paging.page_url, paging.json_url, "status",
                             f"Samples with status {status}: {meaning}", vocabulary=STATUS_VOCABULARY)

    def _write_tasks(self) -> None:
        """A list of papers per task. One statement reads the papers once, in table order, and SQLite sorts
        their (task, paper) pairs: a query per task would look each paper up again for each of its tasks,
        in random order, which on a table larger than memory is a disk read each."""
        self.db.create_function("task_key", 1, task_key, deterministic=True)
        pairs = self.db.execute(
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
            self._list_pages("task", iter(rows), len(rows), lambda n, t=name: self.urls.task(t, n),
                             lambda n, t=name: self.urls.task_json(t, n), (key, name, [n for n, _ in ranked[1:]]))
            listings.append(TaskListing(task_slug=key, task_name=name, papers=len(rows), url=self.urls.task(name),
                                        json_url=self.urls.task_json(name)))
        listings.sort(key=lambda t: (t.task_name.lower(), t.task_slug))
        record = TaskIndex(about=self.about, schema_url=self.urls.schema("task-index"), page_url=self.urls.tasks(),
                           json_url=self.urls.tasks_json(), tasks=listings)
        self._record("tasks.html", record, record.page_url, record.json_url, "task-index",
                     "Every task of the papers in this catalogue.")

    def _write_attribution(self) -> None:
        record = AttributionPage(
            about=self.about, schema_url=self.urls.schema("attribution"), page_url=self.urls.attribution(),
            json_url=self.urls.attribution_json(), archive=ARCHIVE_NAME, archive_licence="CC BY-SA 4.0",
            archive_licence_url="https://creativecommons.org/licenses/by-sa/4.0/legalcode",
            modified=("paperproof modified this material: it joined papers with their code links, repository records "
                      "and sample runs, normalised task names into slugs, and ordered code links. The modified records "
                      "on this site are shared under the same licence."),
            specimens=("Papers and repositories marked specimen were written for paperproof to exercise every status. "
                       "They describe no real paper and no real project."),
            code=("Code from harvested repositories is shown inline only when its licence allows redistribution; each "
                  "sample page names the licence. Otherwise the page links to the file at its source."),
            non_affiliation=NON_AFFILIATION,
        )
        self._record("attribution.html", record, record.page_url, record.json_url, "attribution",
                     "Where the material on this site comes from, and under which licences.")

    def _write_feed(self) -> None:
        rows = self.db.execute("SELECT feed FROM papers WHERE ran > 0 ORDER BY (date IS NULL), date DESC, slug LIMIT ?",
                               (feeds.FEED_ENTRIES,)).fetchall()
        papers = []
        for (feed,) in rows:
            slug, title, authors, date, url, summary, samples, ran = json.loads(feed)
            papers.append(feeds.FeedPaper(slug, title, tuple(authors), date, url, summary, samples, ran))
        path = self._path(self.urls.feed())
        self._emit(path, {path: feeds.atom(self.urls, self.read_at, papers)})

    def _write_sitemaps(self) -> None:
        limit = seo.SITEMAP_MAX
        total = self._count("pages")
        parts = max(1, -(-total // limit))
        cursor = self.db.execute("SELECT url FROM pages ORDER BY url")
        for number in range(1, parts + 1):
            part = [row[0] for row in cursor.fetchmany(limit)]
            path = self._path(self.urls.sitemap_part(number))
            self._emit(path, {path: seo.sitemap_part(self.urls, part, self.read_at)})
        path = self._path(self.urls.sitemap())
        self._emit(path, {path: seo.sitemap_index(self.urls, parts, self.read_at)})

    # --- search ---

    def _write_search(self, job: _SearchJob) -> SearchPage:
        result = self._finish_search(job)
        if not result.available:
            self.notes.append(f"search: not built ({result.reason}); the site works without it")
        shards = [SearchShard(bundle_url=self.urls.search_bundle(s.number), papers=s.papers, first_slug=s.first_slug,
                              last_slug=s.last_slug) for s in result.shards]
        if result.available:
            self.notes.append(f"search: {sum(s.papers for s in shards)} papers in {len(shards)} Pagefind shard(s)")
        return SearchPage(about=self.about, schema_url=self.urls.schema("search"), page_url=self.urls.search(),
                          json_url=self.urls.search_json(), available=result.available, reason=result.reason,
                          fields=list(search.FIELDS), split=search.SPLIT, shards=shards)

    def _start_search(self) -> _SearchJob:
        """Plan the Pagefind shards over the papers' search records and start indexing those whose records
        changed, in a thread that waits on the Pagefind processes while the build goes on; a shard whose
        records did not change is kept. Each changed shard's records are written to a file first, so
        memory holds one shard's records at a time. Called once every paper is written."""
        job = _SearchJob()
        if not self.search_available:
            job.result = search.SearchResult(False, "no Pagefind binary found (pip install 'pagefind[bin]', or set "
                                                    "PAGEFIND_BINARY_PATH)")
            return job
        kind = search.version(self.pagefind, self.manifest.file_digest)
        counts = self.db.execute("SELECT bucket, COUNT(*) FROM papers GROUP BY bucket ORDER BY bucket").fetchall()
        bounds = search.plan_counts(counts, search.SHARD_SIZE)
        if not bounds:
            job.result = search.SearchResult(False, "no papers to index")
            return job
        rows = self.db.execute("SELECT bucket, slug, doc FROM papers ORDER BY bucket, slug")
        records = self.state / "search-records"
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
            unit = self._path(self.urls.search_bundle(number)).removesuffix("index.html")
            value = h.digest()
            if self._unchanged(unit, value):
                continue
            records.mkdir(parents=True, exist_ok=True)
            source = records / f"{number}.jsonl"
            source.write_text("\n".join(lines) + "\n", encoding="utf-8")
            shards.append((number, source, self.staging / unit))
            job.todo.append((shard, unit, value))
        job.linked, self._to_link = self._to_link, []
        if not job.todo and not job.linked:
            return job
        self.manifest.mark_pending([(unit, [unit + "pagefind-entry.json"]) for _, unit, _ in job.todo])

        def run() -> None:
            try:
                self._link_kept(job.linked)
                if shards:
                    job.files = search.index_shards(shards, concurrency=min(self.jobs, 2))
            except (search.PagefindError, OSError) as exc:
                job.error = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__

        job.thread = threading.Thread(target=run, name="pagefind", daemon=True)
        job.thread.start()
        return job

    def _finish_search(self, job: _SearchJob) -> search.SearchResult:
        if job.result is not None:
            return job.result
        if job.thread is not None:
            job.thread.join()
        shutil.rmtree(self.state / "search-records", ignore_errors=True)
        if job.error is not None:
            shutil.rmtree(self.staging / "pagefind", ignore_errors=True)
            self.db.execute("DELETE FROM seen WHERE unit LIKE 'pagefind/%'")
            return search.SearchResult(False, f"Pagefind failed: {job.error}")
        done = [(unit, value, files, None) for unit, value, files in job.linked]
        for shard, unit, value in job.todo:
            done.append((unit, value, [unit + name for name in job.files[shard.number]], None))
            self.counts["rendered"] += 1
        if done:
            self.manifest.mark_done(done)
        return search.SearchResult(True, None, job.shards)

    def _write_search_page(self, record: SearchPage) -> None:
        self._record("search.html", record, record.page_url, record.json_url, "search",
                     "Search the titles, authors, tasks and abstracts of every paper.")

    # --- the end of a build ---

    def _check_removed(self) -> None:
        """With `check`: papers and repositories of the published site that this build would remove."""
        if not self.site_ok:
            return
        self.db.commit()  # the manifest reads `seen` from the scratch file: only committed rows are there
        for unit, _ in self.manifest.absent("site_units", self._scratch):
            if unit.startswith(("paper/", "repo/")):
                self._stale(f"removed: {unit}")

    def _finish(self) -> None:
        """Remove the units this build did not produce, mark the tree, swap it in, and commit the manifest."""
        self.db.commit()  # as in `_check_removed`
        if self._to_link:  # kept after the search thread started
            self._link_kept(self._to_link)
            self.manifest.mark_done([(unit, value, files, None) for unit, value, files in self._to_link])
        gone = self.manifest.absent("stage_units", self._scratch)
        for _, files in gone:
            for name in files:
                remove_file(self.staging / name, self.staging)
        self.manifest.remove(unit for unit, _ in gone)
        # a staging tree that started empty lacks the site's units from the start: those are the ones removed
        self.counts["removed"] = len(self.manifest.absent("site_units", self._scratch) if self._link_site else gone)
        self._no_leak()
        tree = self.manifest.tree_id()
        marker = {"generator": "paperproof", "version": self.version, "tree": tree}
        write_file(self.staging / MARKER, dump_json(marker) + "\n")
        sync_tree(self.staging)
        summary = {"papers": self.papers_written, "notes": self.notes,
                   "rejects": [r.model_dump(mode="json") for r in self._all_rejects()]}
        m = self.manifest
        # With a cache, and a staging tree that began as the published one, the tree this build replaces is
        # kept: it differs from the new one only in the files listed here, so the next build patches it
        # into its staging tree instead of linking every file of the site again.
        keep = self._temporary is None and m.get("stage_seeded") == "1"
        if keep:
            m.record_changes()
        m.set("replaced_tree", m.get("site_tree") if keep else None)
        m.set("replaced_by", tree if keep else None)
        m.set("pending_tree", tree)
        m.set("pending_inputs", self._inputs)
        m.set("pending_summary", dump_json(summary))
        m.commit()
        publish.swap(self.staging, self.out, keep=keep)
        m.promote()
        m.set("site_tree", tree)
        m.set("site_inputs", self._inputs)
        m.set("site_summary", dump_json(summary))
        m.commit()

    def _no_leak(self) -> None:
        """The last check (`leaks`): a file about to be published holding a secret fails the build, and the
        staging tree is discarded, so that no later build publishes what this one wrote."""
        try:
            self.secrets.check_tree(self.staging, self.out if self.site_ok else None)
        except leaks.Leak:
            publish.discard(self.staging, self.out)
            self.manifest.drop_stage()
            self.manifest.commit()
            raise

    def _all_rejects(self) -> list[Reject]:
        """The rejects of paper rows and pages (kept with the site, so a build with nothing to do reports them)."""
        return self._archive.rejects[self._rejects_from:] + self.rejects


class _SearchJob:
    def __init__(self) -> None:
        self.result: search.SearchResult | None = None
        self.shards: list[search.Shard] = []
        self.todo: list[tuple[search.Shard, str, bytes]] = []
        self.linked: list[tuple[str, bytes, list[str]]] = []  # shards kept from the published site, to link
        self.files: dict[int, list[str]] = {}  # by shard number: the files Pagefind wrote, within its folder
        self.thread: threading.Thread | None = None
        self.error: str | None = None


def _link_tuple(link: Any) -> tuple:
    return (link.paper_slug, link.repo_url, link.is_official, link.mentioned_in_paper, link.mentioned_in_github,
            link.framework)


__all__ = ["SiteWriter", "dump_json", "record_schema"]
