"""The repository pages and their samples' pages, each repository one unit, after the paper pages.

A repository's page names its papers by title, so it is written from the scratch table the paper pages
filled (`PapersWritten`); it returns what the indexes need of the repositories (`RepositoriesWritten`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from paperproof.build import planted_map
from paperproof.build.manifest import Digest
from paperproof.build.readme_images import FOLDER as IMAGES_FOLDER
from paperproof.build.readme_images import readme_images
from paperproof.build.records import repo_listing
from paperproof.build.renderer import RepoJob
from paperproof.build.site import SiteWriter, dump_json
from paperproof.build.urls import repo_slug
from paperproof.catalogue.repos import readme_text
from paperproof.catalogue.sample import Sample
from paperproof.plumbing.progress import bar

if TYPE_CHECKING:
    from paperproof.build.paper_pages import PapersWritten
    from paperproof.catalogue.repo_work import RepoWork

REPO_CHUNK = 256


@dataclass(frozen=True)
class RepositoriesWritten:
    """What the indexes need of the repositories: every sample, in repository order (the status pages).
    Their listings are in the site's scratch table `repos`."""

    samples: tuple[Sample, ...]


def write_repositories(site: SiteWriter, repos: dict[str, RepoWork], papers: PapersWritten) -> RepositoriesWritten:
    if papers.noop:
        return RepositoriesWritten(samples=())
    urls = site.urls
    samples: list[Sample] = []
    chunk: list[tuple[str, bytes, list[str], RepoJob]] = []
    for key in bar(sorted(repos), "repo pages", unit="repo"):
        work = repos[key]
        record = work.record
        slug = repo_slug(record.host, record.repo)
        shown = []
        for s, kind in sorted(set(work.papers)):
            title = _title(site, s)
            if title is not None:
                shown.append((s, title, kind))
        titles: dict[str, str] = {}
        for sample in work.samples:
            for s in sample.papers:
                title = _title(site, s)
                if title is not None:
                    titles[s] = title
            samples.append(sample)
            site.in_sitemap(urls.sample(sample.sample_id))
        site.in_sitemap(urls.repo(slug))
        listing = repo_listing(record, len(shown), len(work.samples), urls)
        site.db.execute("INSERT OR REPLACE INTO repos VALUES (?, ?)", (slug, listing.model_dump_json()))
        readme = readme_text(record) or None
        # the checkout's images the README may show: their hashes are part of the page (`readme_images`)
        images = readme_images(Path(record.snapshot), readme) if readme and record.snapshot else ()
        unit = site.path(urls.repo(slug))
        value = Digest(site.version, site.repo_digest(key, work), dump_json(shown), dump_json(sorted(titles.items())),
                       readme, dump_json(images)).digest()
        if site.unchanged(unit, value):
            continue
        if site.check:
            site.mark_stale(f"repository {record.repo}" + (" (new)" if unit not in site.previous([unit]) else ""))
            continue
        files = [site.path(urls.repo(slug)), site.path(urls.repo_json(slug)),
                 *(site.path(urls.repo(slug) + IMAGES_FOLDER + image.name) for image in images)]
        for sample in work.samples:
            files += [site.path(urls.sample(sample.sample_id)), site.path(urls.sample_json(sample.sample_id))]
        runs = {run for sample in work.samples if sample.planted and (run := planted_map.run_of(sample.planted))}
        maps = {run: planted_map.points(*run) for run in sorted(runs)}  # trained here: render processes never train
        chunk.append((unit, value, files, RepoJob(record, work.samples, shown, titles, readme, maps, images)))
        if len(chunk) >= REPO_CHUNK:
            site.send_units("repositories", chunk)
            chunk = []
    if chunk:
        site.send_units("repositories", chunk)
    site.pool.drain()
    site.db.commit()
    return RepositoriesWritten(samples=tuple(samples))


def _title(site: SiteWriter, slug: str) -> str | None:
    row = site.db.execute("SELECT title FROM papers WHERE slug = ?", (slug,)).fetchone()
    return None if row is None else row[0]


__all__ = ["RepositoriesWritten", "write_repositories"]
