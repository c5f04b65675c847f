"""The site's lifecycle and its incremental bookkeeping: the staging tree, the manifest, recovery, publication.

The site is written in four steps, each a function of what the one before returned (`build.pipeline`):
`open_site` (`build.open_site`) takes the site's lock and forks the render processes;
`paper_pages.write_papers` writes the paper pages and returns what the rest need of them (`PapersWritten`);
`repo_pages.write_repositories` writes the repository and sample pages (`RepositoriesWritten`);
`indexes.write_indexes` writes the list pages, the feed, the sitemaps and, once Pagefind is done
(`search_job`), the search page. Leaving
`open_site` publishes the staging tree, or leaves the published site as it was when a step failed.

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
- with `check`, writes nothing and says what a build would change (`stale`), and which published files are
  missing, changed or extra against the manifest's digests (`damage`, `build.site_files`); a build repairs
  them.

A paper whose record cannot be assembled is reported by slug and reason and skipped; the rest of the site
is still written. Output is byte-identical for identical inputs: every list has a fixed order, every date
comes from the inputs (`read_at`), and rendering is a pure function of each unit's inputs.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from paperproof.build import feeds, leaks, pages, publish, search, seo, site_files
from paperproof.build.manifest import MARKER, Digest, Manifest, code_version, read_marker
from paperproof.build.records import about
from paperproof.build.renderer import Renderer, RenderPool
from paperproof.build.site_paths import SitePaths
from paperproof.build.urls import SiteUrls, file_for
from paperproof.catalogue import community
from paperproof.catalogue.archive import Archive, Reject
from paperproof.catalogue.damage import Damage
from paperproof.plumbing.files import remove_file, sync_tree, write_file

if TYPE_CHECKING:
    from paperproof.catalogue.repo_work import RepoWork

STALE_SHOWN = 10


def dump_json(data: Any) -> str:
    """Stable, compact, valid JSON (no NaN or Infinity)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def record_schema(model: type[BaseModel], name: str, urls: SiteUrls) -> dict:
    """The JSON Schema of a record as the site serialises it (2020-12, as pydantic generates it)."""
    schema = model.model_json_schema(mode="serialization")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": urls.schema(name), **schema}


Kept = tuple[str, bytes, list[str]]  # a unit kept from the published site: (unit, digest, its files)


def settings(urls: SiteUrls, read_at: str, search_available: bool) -> dict[str, object]:
    """The build settings that shape the output (part of every digest, through `code_version`)."""
    return {"base": urls.base, "read_at": read_at, "search": search_available, "page_size": pages.PAGE_SIZE,
            "index_papers": pages.INDEX_PAPERS, "shard_size": search.SHARD_SIZE, "sitemap_max": seo.SITEMAP_MAX,
            "feed": feeds.FEED_ENTRIES}


class SiteWriter:
    """One build's hold on the site: its staging tree, manifest, scratch tables and render processes, and the
    bookkeeping of which units this build keeps, renders and removes. Made by `open_site`."""

    def __init__(self, *, paths: SitePaths, urls: SiteUrls, read_at: str, check: bool,
                 inputs: dict[str, list[Path]] | None, state: Path, temporary: Path | None, pagefind: Path | None,
                 renderer: Renderer, pool: RenderPool, manifest: Manifest, db: sqlite3.Connection,
                 scratch: Path, secrets: leaks.Secrets) -> None:
        self.paths = paths
        self.secrets = secrets
        self.out = paths.out
        self.staging = paths.staging
        self.urls = urls
        self.read_at = read_at
        self.check = check
        self.inputs = inputs
        self.state = state
        self.temporary = temporary  # the state directory when it is not kept (no cache, or `check`)
        self.pagefind = pagefind
        self.search_available = pagefind is not None  # the header's search form
        self.renderer = renderer
        self.pool = pool
        self.jobs = pool.jobs
        self.manifest = manifest
        self.db = db
        self.scratch = scratch
        self.about = about(urls)
        self.version = code_version(settings(urls, read_at, self.search_available))
        self.site_ok = False  # the site on disk is the one the manifest describes (`open_site`)
        self.noop = False  # every input is as the published site was built from: nothing to do (`start`)
        self.rejects: list[Reject] = []
        self.notes: list[str] = []  # what the build summary should say about the site (search, sitemaps)
        self.stale: list[str] = []  # with `check`: what a build would change
        self.damage = site_files.SiteDamage()  # published files missing, changed or extra (`start`)
        self.repaired: list[str] = []  # what this build repaired of that damage, for its summary (`finish`)
        self.counts: Counter = Counter()  # units rendered, kept, removed
        self.papers_written = 0
        self._inputs: str | None = None  # the digest of every input (`start`)
        self._damages: list[Damage] = []  # the archive's damaged inputs, found as it is read (`start`)
        self._archive_rejects: Callable[[], list[Reject]] = list
        self._digests: dict[str, bytes] = {}
        self._link_site = False  # the staging tree started empty beside a published site (`_begin`)
        self._to_link: list[Kept] = []  # units kept from that site, not linked yet

    def close(self) -> None:
        self.db.close()
        self.scratch.unlink(missing_ok=True)
        self.manifest.close()
        if self.temporary is not None:
            shutil.rmtree(self.temporary, ignore_errors=True)
            if self.check:
                shutil.rmtree(self.scratch.parent, ignore_errors=True)

    # --- the manifest and the staging tree ---

    def links_store(self) -> tuple[Path | None, str | None]:
        """Where the build keeps its link table, and the digest of the links dump it is built from."""
        if self.check:
            return None, None
        files = (self.inputs or {}).get("links")
        fingerprint = self.manifest.tree_digest(files) if files else None
        return self.state / "links.sqlite", fingerprint

    def recover(self) -> None:
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
            publish.discard(self.staging, self.paths)  # it holds the tree that was replaced
        else:
            for key in ("pending_tree", "pending_inputs", "pending_summary"):
                self.manifest.set(key, None)
        self.manifest.commit()

    def is_published(self) -> bool:
        """Is the site on disk the one the manifest describes?"""
        tree = self.manifest.get("site_tree")
        return tree is not None and self.out.is_dir() and read_marker(self.out).get("tree") == tree

    @property
    def partial(self) -> list[str]:
        """`--allow-partial`: where each damaged input stops, for the front page."""
        return [d.message(short=True) for d in self._damages]

    def start(self, archive: Archive, repos: dict[str, RepoWork]) -> bool:
        """Before the first page: False when every input is what the published site was built from (then its
        summary is taken over and nothing is written), else prepare the staging tree and return True."""
        inputs = None if self.temporary is not None else self._inputs_digest(repos)
        self._inputs = inputs
        start = len(archive.rejects)
        self._archive_rejects = lambda: archive.rejects[start:]
        self._damages = archive.damages  # filled while the papers are read: read it when the pages need it
        if self.site_ok:
            self._inspect()
        if (inputs is not None and self.site_ok and self.manifest.get("site_inputs") == inputs
                and (self.check or not self.damage)):
            self.noop = True
            stored = json.loads(self.manifest.get("site_summary") or "{}")
            self.rejects = [Reject.model_validate(r) for r in stored.get("rejects", [])]
            self.notes = list(stored.get("notes", []))
            self.papers_written = int(stored.get("papers", 0))
            return False
        if self.check and not self.site_ok:
            self.mark_stale(f"{self.out}: missing, or not the site this cache's manifest describes")
        if not self.check:
            self._begin()
        return True

    def _inspect(self) -> None:
        """The published files against their record (`site_files`): `check` reads every file; a build reads only
        those whose size or mtime changed, and the units of files missing or changed are rendered again."""
        touched: list[tuple[str, int, int]] = []
        self.damage = site_files.inspect(self.out, self.manifest.site_files(), by_content=self.check, touched=touched)
        if self.check:
            return
        self.manifest.refresh(touched)
        if self.damage.damaged:
            self.manifest.forget(self.damage.damaged)

    def _inputs_digest(self, repos: dict[str, RepoWork]) -> str | None:
        """Everything the site is made from, in one digest; None when the archive is not files."""
        if not self.inputs or not self.inputs.get("all"):
            return None
        h = Digest(self.version, self.manifest.tree_digest(self.inputs["all"]))
        for key in sorted(repos):
            work = repos[key]
            h.add(key, self.repo_digest(key, work), dump_json(sorted(set(work.papers))))
        h.add(dump_json([e.model_dump(mode="json") for e in community.curated()]))
        return h.hex()

    def repo_digest(self, key: str, work: RepoWork) -> bytes:
        """The digest of a repository's record and samples (computed once a build)."""
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
        # search shards) are linked from the site one by one (`unchanged`).
        seed = self.site_ok and read_marker(self.out).get("version") == self.version
        self._link_site = self.site_ok and not seed
        publish.discard(self.staging, self.paths)
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
        kept = self.paths.previous
        if not kept.is_dir():
            return False
        replaced = m.get("replaced_tree")
        if replaced is None or m.get("replaced_by") != m.get("site_tree") or read_marker(kept).get("tree") != replaced:
            publish.discard(kept, self.paths)
            return False
        publish.patch_previous(self.paths, m.changed())
        return True

    # --- units ---

    def previous(self, units: list[str]) -> dict[str, tuple[bytes | None, str | None]]:
        """What the manifest holds of each of `units`: its digest, and its data when made at that digest."""
        if self.check and not self.site_ok:
            return {}
        return self.manifest.lookup("site_units" if self.check else "stage_units", units)

    def seen(self, units: list[str]) -> None:
        """`units` are part of this build (units not seen are removed at its end)."""
        self.db.executemany("INSERT OR IGNORE INTO seen VALUES (?)", [(unit,) for unit in units])

    def unseen(self, unit: str) -> None:
        self.db.execute("DELETE FROM seen WHERE unit = ?", (unit,))

    def mark_stale(self, what: str) -> None:
        self.counts["stale"] += 1
        if len(self.stale) < STALE_SHOWN:
            self.stale.append(what)

    def unchanged(self, unit: str, value: bytes) -> bool:
        """Mark `unit` as part of this build; True (counted as kept) when its digest equals the one on record.
        In a staging tree started empty beside a published site (`_begin`), a unit the site holds at this
        digest is kept by hard-linking its files from the site: queued for the search thread, which links
        while pages render (`link_kept`), or for the end of the build."""
        self.seen([unit])
        previous = self.previous([unit]).get(unit)
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

    def take_kept(self) -> list[Kept]:
        """The units kept from the published site so far, to link (the caller links them)."""
        kept, self._to_link = self._to_link, []
        return kept

    def link_kept(self, units: list[Kept]) -> None:
        """Link the files of units kept from the published site into the staging tree (any thread)."""
        for _, _, files in units:
            publish.link_files(self.out, self.staging, files)

    def emit(self, unit: str, files: dict[str, str | bytes | Callable[[], str | bytes]], inputs: bytes | None = None) -> None:
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
        if self.unchanged(unit, value):
            return
        if self.check:
            self.mark_stale(unit)
            return
        if contents is None:
            contents = {name: (c() if callable(c) else c) for name, c in files.items()}
        names = sorted(contents)
        self.manifest.mark_pending([(unit, names)])
        for name in names:
            write_file(self.staging / name, contents[name])
        self.manifest.mark_done([(unit, value, names, None)])
        self.counts["rendered"] += 1

    def send_units(self, kind: str, chunk: list[tuple[str, bytes, list[str], Any]]) -> None:
        """Units rendered by the render processes: (unit, digest, the files it will write, its job)."""
        self.manifest.mark_pending([(unit, files) for unit, _, files, _ in chunk])
        self.pool.submit(kind, [job for _, _, _, job in chunk], chunk, self._units_done)

    def _units_done(self, chunk: list[tuple[str, bytes, list[str], Any]], results: list[list[str]]) -> None:
        self.manifest.mark_done([(unit, value, written, None) for (unit, value, _, _), written in zip(chunk, results)])
        self.counts["rendered"] += len(chunk)

    def path(self, url: str) -> str:
        return file_for(url, self.urls.base)

    def in_sitemap(self, url: str) -> None:
        """List a page of this build in the sitemaps (the `pages` table they are written from)."""
        self.db.execute("INSERT OR IGNORE INTO pages VALUES (?)", (url,))

    def count(self, table: str) -> int:
        return self.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]

    def record(self, template: str, record: BaseModel, url: str, json_url: str, schema: str, description: str,
               **context: Any) -> None:
        """A page and its twin from one record (rendered here, kept when the content is unchanged)."""
        def page() -> str:
            return self.renderer.env.get_template(template).render(
                json_url=json_url, schema_url=self.urls.schema(schema), meta=seo.page_meta(url, description, self.urls),
                page_url=url, record=record, **context)

        self.in_sitemap(url)
        self.emit(self.path(url), {self.path(url): page, self.path(json_url): record.model_dump_json})

    # --- the end of a build ---

    def check_removed(self) -> None:
        """With `check`: papers and repositories of the published site that this build would remove."""
        if not self.site_ok:
            return
        self.db.commit()  # the manifest reads `seen` from the scratch file: only committed rows are there
        for unit, _ in self.manifest.absent("site_units", self.scratch):
            if unit.startswith(("paper/", "repo/")):
                self.mark_stale(f"removed: {unit}")

    def _no_leak(self) -> None:
        """The last check (`leaks`): a file about to be published holding a secret fails the build, and the
        staging tree is discarded, so that no later build publishes what this one wrote."""
        try:
            self.secrets.check_tree(self.staging, self.out if self.site_ok else None)
        except leaks.Leak:
            publish.discard(self.staging, self.paths)
            self.manifest.drop_stage()
            self.manifest.commit()
            raise

    def _repair_lines(self, aside: Path | None, leftovers: list[str]) -> None:
        """What this build repaired, for its summary: files written again, files set aside, leftovers removed."""
        damage = self.damage
        if damage.damaged:
            named = ", ".join(damage.damaged[:site_files.DAMAGE_SHOWN])
            more = len(damage.damaged) - site_files.DAMAGE_SHOWN
            self.repaired.append(f"repaired: wrote again {len(damage.missing)} missing and {len(damage.changed)} "
                                 f"changed file(s) of the published site: {named}" + (f", … and {more} more" if more > 0 else ""))
        if aside is not None:
            named = ", ".join(damage.extra[:site_files.DAMAGE_SHOWN])
            self.repaired.append(f"repaired: {len(damage.extra)} file(s) in the site that no build wrote are no longer "
                                 f"published; they are kept in {aside}/: {named}")
        published = set(damage.extra)
        unlisted = [name for name in leftovers if name not in published]
        if unlisted:
            self.repaired.append(f"removed {len(unlisted)} file(s) of the staging tree that no unit lists "
                                 f"(left by an unfinished build, or put there): {', '.join(unlisted[:10])}")

    def finish(self) -> None:
        """Remove the units this build did not produce, mark the tree, swap it in, and commit the manifest."""
        self.db.commit()  # as in `check_removed`
        if self.partial:  # a partial site (`--allow-partial`): the next build reads the inputs again
            self._inputs = None
        if self._to_link:  # kept after the search thread started
            self.link_kept(self._to_link)
            self.manifest.mark_done([(unit, value, files, None) for unit, value, files in self._to_link])
        gone = self.manifest.absent("stage_units", self.scratch)
        for _, files in gone:
            for name in files:
                remove_file(self.staging / name, self.staging)
        self.manifest.remove(unit for unit, _ in gone)
        # a staging tree that started empty lacks the site's units from the start: those are the ones removed
        self.counts["removed"] = len(self.manifest.absent("site_units", self.scratch) if self._link_site else gone)
        leftovers: list[str] = []
        self.manifest.record_files(site_files.record(self.staging, self.manifest.listed(), leftovers))
        self._no_leak()
        tree = self.manifest.tree_id()
        self._repair_lines(publish.set_aside(self.paths, self.damage.extra, tree), leftovers)
        marker = {"generator": "paperproof", "version": self.version, "tree": tree}
        write_file(self.staging / MARKER, dump_json(marker) + "\n")
        sync_tree(self.staging)
        summary = {"papers": self.papers_written, "notes": self.notes,
                   "rejects": [r.model_dump(mode="json") for r in self._archive_rejects() + self.rejects]}
        m = self.manifest
        # With a cache, and a staging tree that began as the published one, the tree this build replaces is
        # kept: it differs from the new one only in the files listed here, so the next build patches it
        # into its staging tree instead of linking every file of the site again.
        keep = self.temporary is None and m.get("stage_seeded") == "1"
        if keep:
            m.record_changes()
            m.also_changed(self.damage.extra)
        m.set("replaced_tree", m.get("site_tree") if keep else None)
        m.set("replaced_by", tree if keep else None)
        m.set("pending_tree", tree)
        m.set("pending_inputs", self._inputs)
        m.set("pending_summary", dump_json(summary))
        m.commit()
        publish.swap(self.paths, keep=keep)
        m.promote()
        m.set("site_tree", tree)
        m.set("site_inputs", self._inputs)
        m.set("site_summary", dump_json(summary))
        m.commit()


__all__ = ["SiteWriter", "dump_json", "record_schema"]
