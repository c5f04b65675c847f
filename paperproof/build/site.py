"""Writing the site: each page and its JSON twin from one record, into a staging tree.

The staging tree replaces the published one only when every page is written (`publish`); a build
that fails leaves the previous site in place. A paper whose record cannot be assembled is reported
by slug and reason and skipped; the rest of the site is still written.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from paperproof.build import datamap, render
from paperproof.build.twin import NON_AFFILIATION, TwinContext, paper_twin, safe_key
from paperproof.build.urls import SiteUrls, file_for, repo_slug
from paperproof.build.write import write_atomic
from paperproof.catalogue.archive import Archive, Reject
from paperproof.catalogue.archive_rows import CodeLinkRow
from paperproof.catalogue.repo_record import RepoRecord
from paperproof.catalogue.sample import STATUS_VOCABULARY, Sample
from paperproof.catalogue.twin import PaperRef, PaperTwin, RepoTwin, SampleRef

if TYPE_CHECKING:
    from paperproof.build.pipeline import RepoWork


@dataclass(frozen=True)
class PaperListing:
    slug: str
    title: str
    date: str | None
    url: str
    specimen: bool
    samples: int


def dump_json(data: Any) -> str:
    """Stable, compact, valid JSON (no NaN or Infinity)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class SiteWriter:
    def __init__(self, out: Path, urls: SiteUrls, read_at: str) -> None:
        self.out = out
        self.urls = urls
        self.ctx = TwinContext(urls=urls, read_at=read_at)
        self.env = render.environment(urls)
        self.staging = out.with_name(f".{out.name}.staging")
        self.rejects: list[Reject] = []
        self.papers: list[PaperListing] = []
        self.titles: dict[str, str] = {}
        self.samples: list[tuple[Sample, str]] = []  # (sample, repo slug)

    # --- lifecycle ---

    def __enter__(self) -> SiteWriter:
        if self.staging.exists():
            shutil.rmtree(self.staging)
        self.staging.mkdir(parents=True)
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            from paperproof.build.pipeline import publish

            publish(self.staging, self.out)
        else:
            shutil.rmtree(self.staging, ignore_errors=True)

    def _write(self, url: str, content: str) -> None:
        write_atomic(self.staging / file_for(url, self.urls.base), content)

    def _page(self, template: str, url: str, json_url: str | None, **context: Any) -> None:
        html = self.env.get_template(template).render(json_url=json_url, **context)
        self._write(url, html)

    # --- papers ---

    def write_papers(self, archive: Archive, links: dict[str, list[CodeLinkRow]], repos: dict[str, RepoWork]) -> int:
        from paperproof.build.progress import bar

        records = {k: w.record for k, w in repos.items()}
        samples = {k: w.samples for k, w in repos.items()}
        seen: set[str] = set()
        for paper, source in bar(archive.papers(), "pages", unit="paper"):
            slug = paper.slug
            if slug in seen:
                self.rejects.append(Reject(file="papers", position=-1, record=paper.paper_url,
                                           reason="duplicate slug: an earlier row already has it; this row is skipped"))
                continue
            seen.add(slug)
            try:
                twin = paper_twin(paper, source, links.get(slug, []), records, samples, self.ctx)
                self._write_paper(twin, repos)
            except (ValidationError, ValueError, KeyError) as exc:
                self.rejects.append(Reject(file="render", position=-1, record=paper.paper_url,
                                           reason=f"paper record could not be assembled: {str(exc).splitlines()[0][:200]}"))
                continue
            self.titles[slug] = paper.title
            self.papers.append(PaperListing(slug, paper.title, paper.date, self.urls.paper(slug),
                                            source.row_kind == "specimen", len(twin.verification.samples)))
        return len(self.papers)

    def _write_paper(self, twin: PaperTwin, repos: dict[str, RepoWork]) -> None:
        slug = twin.code_links[0].paper_slug if twin.code_links else twin.url.rstrip("/").rsplit("/", 1)[-1]
        repo_pages = {}
        for link in twin.code_links:
            key = safe_key(link.repo_url)
            work = repos.get(key.key) if key else None
            if work is not None:
                repo_pages[link.repo_url] = {
                    "url": self.urls.repo(repo_slug(work.record.host, work.record.repo)), "name": work.record.repo,
                    "licence": work.record.licence, "note": work.record.note,
                }
        year = twin.date[:4] if twin.date else None
        metrics = {f.metric for s in twin.verification.samples for f in (s.fidelity or [])}
        data_map = self.urls.home() + "static/data-map.svg" if datamap.shows_data_map(metrics) else None
        self._page("paper.html", twin.url, twin.verification.json_url, twin=twin, repos=repo_pages, data_map=data_map,
                   abstract_html=render.markdown_html(twin.abstract),
                   bibtex=render.bibtex(slug, twin.title, twin.authors, year, twin.url_abs))
        self._write(twin.verification.json_url, twin.to_json())

    # --- repositories and samples ---

    def write_repositories(self, repos: dict[str, RepoWork]) -> None:
        from paperproof.build.progress import bar

        for key in bar(sorted(repos), "repo pages", unit="repo"):
            work = repos[key]
            record = work.record
            slug = repo_slug(record.host, record.repo)
            papers = [PaperRef(slug=s, title=self.titles[s], url=self.urls.paper(s), repo_kind=kind)
                      for s, kind in sorted(set(work.papers)) if s in self.titles]
            sample_refs = [SampleRef(sample_id=s.sample_id, entry=s.entry, path=s.path, status=s.status,
                                     url=self.urls.sample(s.sample_id)) for s in work.samples]
            twin = RepoTwin(
                url=record.url, repo=record.repo, host=record.host, source=record.source, reach=record.reach,
                licence=record.licence, licence_file=record.licence_file, commit=record.commit,
                readme=record.readme, note=record.note, specimen=record.specimen,
                page_url=self.urls.repo(slug), json_url=self.urls.repo_json(slug), papers=papers, samples=sample_refs,
            )
            readme_html = None
            if record.readme and record.snapshot:
                text = (Path(record.snapshot) / record.readme).read_text(encoding="utf-8", errors="replace")
                readme_html = render.markdown_html(text)
            listed = [{**s.model_dump(), "url": self.urls.sample(s.sample_id), "repo_kind": None} for s in work.samples]
            self._page("repo.html", twin.page_url, twin.json_url, record=twin, papers=[
                {"url": p.url, "title": p.title, "kind": p.repo_kind} for p in papers],
                samples=listed, readme_html=readme_html, vocabulary=STATUS_VOCABULARY)
            self._write(twin.json_url, twin.model_dump_json())
            for sample in work.samples:
                self._write_sample(sample, twin)
                self.samples.append((sample, slug))

    def _write_sample(self, sample: Sample, repo: RepoTwin) -> None:
        url, json_url = self.urls.sample(sample.sample_id), self.urls.sample_json(sample.sample_id)
        source_html = render.code_html(sample.source, sample.lineno) if sample.source else None
        papers = [{"url": self.urls.paper(s), "title": self.titles.get(s, s)} for s in sample.papers]
        self._page("sample.html", url, json_url, sample=sample, repo_url=repo.page_url, papers=papers,
                   source_html=source_html, vocabulary=STATUS_VOCABULARY)
        self._write(json_url, sample.model_dump_json())

    # --- indexes ---

    def write_indexes(self) -> None:
        listings = sorted(self.papers, key=lambda p: (p.specimen, p.title.lower(), p.slug))
        counts = Counter(s.status for s, _ in self.samples)
        repo_count = len({slug for _, slug in self.samples})
        self._page("index.html", self.urls.home(), self.urls.api("papers"), papers=listings,
                   status_counts={k: counts[k] for k in STATUS_VOCABULARY if counts[k]},
                   repo_count=repo_count, sample_count=len(self.samples), vocabulary=STATUS_VOCABULARY)
        for status in STATUS_VOCABULARY:
            rows = [{**s.model_dump(), "url": self.urls.sample(s.sample_id), "repo_kind": None}
                    for s, _ in self.samples if s.status == status]
            rows.sort(key=lambda r: (r["entry"], r["repo"], r["path"]))
            self._page("status.html", self.urls.status(status), None, status=status, samples=rows,
                       vocabulary=STATUS_VOCABULARY)
        self._page("attribution.html", self.urls.attribution(), None, non_affiliation=NON_AFFILIATION)
        self._write(self.urls.api("papers"), dump_json({
            "papers": [{"slug": p.slug, "title": p.title, "date": p.date, "url": p.url,
                        "json_url": self.urls.paper_json(p.slug), "specimen": p.specimen, "samples": p.samples}
                       for p in sorted(self.papers, key=lambda p: p.slug)],
        }))
        for name, model in (("paper", PaperTwin), ("repo", RepoTwin), ("sample", Sample)):
            self._write(self.urls.schema(name), dump_json(_schema(model)))
        self._write(self.urls.home() + "static/style.css", render.stylesheet())
        self._write(self.urls.home() + "static/data-map.svg", datamap.svg())


def _schema(model: type[BaseModel]) -> dict:
    return model.model_json_schema(mode="serialization")
