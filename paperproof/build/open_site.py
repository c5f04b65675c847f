"""Opening the site for one build: the lock, the build's state and scratch tables, the render processes;
and, on leaving, publication of the staging tree, or the published site left as it was after an error.

`open_site` makes the `SiteWriter` (`build.site`) the page steps write through (`build.pipeline`).
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from paperproof.build import collector, leaks, publish, search
from paperproof.build.manifest import Manifest, state_directory
from paperproof.build.renderer import Renderer, RenderPool, default_jobs
from paperproof.build.site import SiteWriter
from paperproof.build.site_paths import SitePaths
from paperproof.build.urls import SiteUrls

_SCRATCH = """
CREATE TABLE papers (unit TEXT PRIMARY KEY, slug TEXT NOT NULL, title TEXT NOT NULL, title_key TEXT NOT NULL,
                     date TEXT, specimen INTEGER NOT NULL, ran INTEGER NOT NULL, bucket TEXT NOT NULL, doc TEXT,
                     listing TEXT NOT NULL, feed TEXT, tasks TEXT NOT NULL);
CREATE INDEX papers_by_slug ON papers (slug);
CREATE TABLE repos (slug TEXT PRIMARY KEY, listing TEXT NOT NULL);
CREATE TABLE pages (url TEXT PRIMARY KEY);
CREATE TABLE seen (unit TEXT PRIMARY KEY);
"""


@contextmanager
def open_site(out: Path, urls: SiteUrls, read_at: str, *, cache: Path | None = None, jobs: int | None = None,
              check: bool = False, inputs: dict[str, list[Path]] | None = None,
              secrets: leaks.Secrets | None = None) -> Iterator[SiteWriter]:
    """Hold the site's lock, fork the render processes and open the manifest; on leaving, publish the staging
    tree (unless `check`, or nothing was to do, or a file of it holds a secret: `leaks`), or, after an error,
    leave the published site as it was.

    `inputs`: the input files by table ("papers", "links", "all"); None when the archive is not files.
    `secrets`: what to look for before publishing (by default, what `leaks.take` takes now)."""
    secrets = secrets or leaks.take()
    paths = SitePaths(out)
    with ExitStack() as held:
        lock = held.enter_context(publish.lock(paths))
        temporary: Path | None = None
        if cache is not None:
            state = state_directory(cache, out)
        elif check:
            state = temporary = Path(tempfile.mkdtemp(prefix="paperproof-check-"))
        else:
            state = temporary = paths.state
            shutil.rmtree(state, ignore_errors=True)
        for earlier in ("search-docs", "search-pages", "search-shards"):  # search inputs of earlier versions
            shutil.rmtree(state / earlier, ignore_errors=True)
        pagefind = search.binary()
        renderer = Renderer(urls, read_at, paths.staging, pagefind is not None)
        held.enter_context(collector.long_lived())
        # Fork the render processes first: before the archive is read, before any SQLite connection is
        # open, and before the run stage could import torch.
        pool = RenderPool(renderer, 1 if check else max(1, jobs or default_jobs()), lock=lock)
        try:
            if not check:
                state.mkdir(parents=True, exist_ok=True)
            manifest = Manifest(state / "manifest.sqlite", readonly=check)
            scratch = state / "scratch.sqlite" if not check else Path(tempfile.mkdtemp()) / "scratch.sqlite"
            for leftover in (scratch, scratch.with_name(scratch.name + "-journal")):
                leftover.unlink(missing_ok=True)
            db = sqlite3.connect(scratch)
            db.execute("PRAGMA journal_mode=OFF")
            db.execute("PRAGMA synchronous=OFF")
            db.executescript(_SCRATCH)
        except BaseException:
            pool.close(wait=False)
            raise
        site = SiteWriter(paths=paths, urls=urls, read_at=read_at, check=check, inputs=inputs,
                          state=state, temporary=temporary, pagefind=pagefind, renderer=renderer, pool=pool,
                          manifest=manifest, db=db, scratch=scratch, secrets=secrets)
        try:
            try:
                if not check:
                    site.recover()
                site.site_ok = site.is_published()
                yield site
            except BaseException:
                pool.close(wait=False)
                if temporary is not None and not check:
                    publish.discard(paths.staging, paths)  # nothing to resume from without a cache
                raise
            pool.close(wait=True)
            if not check and not site.noop:
                site.finish()
        finally:
            site.close()


__all__ = ["open_site"]
