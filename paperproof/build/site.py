"""Writing the site: each page and its JSON twin from one record, into a staging tree.

The staging tree replaces the published one only when every page is written (`publish`); a build
that fails leaves the previous site in place. A paper whose record cannot be assembled is reported
by slug and reason and skipped; the rest of the site is still written.

Every HTML page links its twin (`<link rel="alternate" type="application/json">`) and the twin's
JSON Schema (`<link rel="describedby">`); papers, repositories and samples have their own records
(`catalogue.twin`, `catalogue.sample`), the list pages theirs (`build.pages`). Beside the pages:
`api/` (paged indexes), `schema/`, `feed.xml` (`build.feeds`), `sitemap.xml`, `sitemaps/` and
`robots.txt` (`build.seo`), and `pagefind/` (search, `build.search`).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter, defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from paperproof.build import datamap, feeds, render, search, seo
from paperproof.build.pages import (
    INDEX_PAPERS, PAGE_SCHEMAS, PAGE_SIZE, AttributionPage, IndexPage, Paging, PaperList, PaperListing, RepoList,
    RepoListing, SampleListing, SearchPage, SearchShard, StatusCount, StatusPage, TaskIndex, TaskListing, TaskPage,
    page_count,
)
from paperproof.build.twin import NON_AFFILIATION, TwinContext, about, paper_twin, safe_key
from paperproof.build.urls import SiteUrls, file_for, repo_slug, task_key
from paperproof.build.write import write_atomic
from paperproof.catalogue.archive import Archive, Reject
from paperproof.catalogue.archive_rows import CodeLinkRow
from paperproof.catalogue.sample import STATUS_VOCABULARY, Sample
from paperproof.catalogue.twin import PaperRef, PaperTwin, RepoTwin, SampleRef

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from paperproof.build.pipeline import RepoWork

ARCHIVE_NAME = "the Papers with Code archive (the pwc-archive datasets on Hugging Face; last snapshot July 2025)"


def dump_json(data: Any) -> str:
    """Stable, compact, valid JSON (no NaN or Infinity)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def record_schema(model: type[BaseModel], name: str, urls: SiteUrls) -> dict:
    """The JSON Schema of a record as the site serialises it (2020-12, as pydantic generates it)."""
    schema = model.model_json_schema(mode="serialization")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": urls.schema(name), **schema}


class SiteWriter:
    def __init__(self, out: Path, urls: SiteUrls, read_at: str) -> None:
        self.out = out
        self.urls = urls
        self.read_at = read_at
        self.ctx = TwinContext(urls=urls, read_at=read_at)
        self.about = about(urls)
        self.env = render.environment(urls)
        self.env.globals["search_available"] = search.binary() is not None  # the header's search form
        self.staging = out.with_name(f".{out.name}.staging")
        self.rejects: list[Reject] = []
        self.notes: list[str] = []  # what the build summary should say about the site (search, sitemaps)
        self.papers: dict[str, PaperListing] = {}
        self.feed: list[feeds.FeedPaper] = []
        self.tasks: dict[str, list[str]] = defaultdict(list)  # task key -> paper slugs
        self.task_names: dict[str, Counter] = defaultdict(Counter)
        self.repos: list[RepoListing] = []
        self.samples: list[tuple[Sample, str]] = []  # (sample, repo slug)
        self.html_pages: list[str] = []
        self.search_docs: search.SearchDocuments | None = None

    @property
    def titles(self) -> dict[str, str]:
        return {slug: p.title for slug, p in self.papers.items()}

    # --- lifecycle ---

    def __enter__(self) -> SiteWriter:
        if self.staging.exists():
            shutil.rmtree(self.staging)
        self.staging.mkdir(parents=True)
        self.search_docs = search.SearchDocuments(self.out.with_name(f".{self.out.name}.search"))
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if self.search_docs is not None:
            self.search_docs.close()
        if exc_type is None:
            from paperproof.build.pipeline import publish

            publish(self.staging, self.out)
        else:
            shutil.rmtree(self.staging, ignore_errors=True)

    def _write(self, url: str, content: str) -> None:
        write_atomic(self.staging / file_for(url, self.urls.base), content)

    def _page(self, template: str, url: str, json_url: str, schema: str, meta: seo.PageMeta, **context: Any) -> None:
        html = self.env.get_template(template).render(json_url=json_url, schema_url=self.urls.schema(schema),
                                                      meta=meta, page_url=url, **context)
        self._write(url, html)
        self.html_pages.append(url)

    def _record(self, template: str, record: BaseModel, url: str, json_url: str, schema: str,
                description: str, **context: Any) -> None:
        """A page and its twin from one record."""
        self._page(template, url, json_url, schema, seo.page_meta(url, description, self.urls), record=record,
                   **context)
        self._write(json_url, record.model_dump_json())

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
                self._write_paper(slug, twin, repos)
            except (ValidationError, ValueError, KeyError) as exc:
                self.rejects.append(Reject(file="render", position=-1, record=paper.paper_url,
                                           reason=f"paper record could not be assembled: {str(exc).splitlines()[0][:200]}"))
                continue
            self._remember_paper(slug, twin, source.row_kind == "specimen")
        return len(self.papers)

    def _remember_paper(self, slug: str, twin: PaperTwin, specimen: bool) -> None:
        ran = sum(1 for s in twin.verification.samples if s.status.startswith("ran"))
        listing = PaperListing(
            slug=slug, title=twin.title, date=twin.date, authors=list(twin.authors),
            tasks=[t.task_name for t in twin.tasks], specimen=specimen, samples=len(twin.verification.samples),
            ran=ran, url=self.urls.paper(slug), json_url=self.urls.paper_json(slug))
        self.papers[slug] = listing
        for task in twin.tasks:
            key = task_key(task.task_name)
            if slug not in self.tasks[key]:
                self.tasks[key].append(slug)
            self.task_names[key][task.task_name] += 1
        if ran:
            self.feed.append(feeds.FeedPaper(slug, twin.title, tuple(twin.authors), twin.date, listing.url,
                                             render.plain_text(twin.abstract), listing.samples, ran))
        if self.search_docs is not None:
            self.search_docs.add(slug, str(file_for(listing.url, self.urls.base)), twin.title, list(twin.authors),
                                 listing.tasks, twin.abstract, twin.date)

    def _write_paper(self, slug: str, twin: PaperTwin, repos: dict[str, RepoWork]) -> None:
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
        data_map = self.urls.static("data-map.svg") if datamap.shows_data_map(metrics) else None
        arxiv = bool(twin.arxiv_id) or "arxiv.org/" in (twin.url_abs or "")
        self._page("paper.html", twin.url, twin.verification.json_url, "paper", seo.paper_meta(twin, self.urls),
                   twin=twin, repos=repo_pages, data_map=data_map, arxiv=arxiv,
                   abstract_html=render.markdown_html(twin.abstract),
                   bibtex=render.bibtex(slug, twin.title, twin.authors, year, twin.url_abs))
        self._write(twin.verification.json_url, twin.to_json())

    # --- repositories and samples ---

    def write_repositories(self, repos: dict[str, RepoWork]) -> None:
        from paperproof.build.progress import bar

        titles = self.titles
        for key in bar(sorted(repos), "repo pages", unit="repo"):
            work = repos[key]
            record = work.record
            slug = repo_slug(record.host, record.repo)
            papers = [PaperRef(slug=s, title=titles[s], url=self.urls.paper(s), repo_kind=kind)
                      for s, kind in sorted(set(work.papers)) if s in titles]
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
                readme_html = render.markdown_html(text, link_base=record.file_url, image_base=_raw_url(record))
            listed = [self._sample_listing(s) for s in work.samples]
            description = f"{record.repo}: licence {record.licence or 'not known'}, {len(work.samples)} samples."
            self._page("repo.html", twin.page_url, twin.json_url, "repo",
                       seo.page_meta(twin.page_url, description, self.urls), record=twin,
                       papers=[{"url": p.url, "title": p.title, "kind": p.repo_kind} for p in papers],
                       samples=listed, readme_html=readme_html, vocabulary=STATUS_VOCABULARY,
                       purpose=record.purpose, topic=record.topic)
            self._write(twin.json_url, twin.model_dump_json())
            self.repos.append(RepoListing(
                slug=slug, repo=record.repo, host=record.host, url=record.url, licence=record.licence,
                source=record.source, specimen=record.specimen, topic=record.topic, papers=len(papers),
                samples=len(work.samples), page_url=twin.page_url, json_url=twin.json_url))
            for sample in work.samples:
                self._write_sample(sample, twin)
                self.samples.append((sample, slug))

    def _sample_listing(self, s: Sample, repo_kind: str | None = None) -> SampleListing:
        return SampleListing(sample_id=s.sample_id, entry=s.entry, repo=s.repo, repo_kind=repo_kind, path=s.path,
                             status=s.status, contract_check=s.contract_check, metamorphic_tier=s.metamorphic_tier,
                             fidelity=list(s.fidelity), url=self.urls.sample(s.sample_id),
                             json_url=self.urls.sample_json(s.sample_id))

    def _write_sample(self, sample: Sample, repo: RepoTwin) -> None:
        url, json_url = self.urls.sample(sample.sample_id), self.urls.sample_json(sample.sample_id)
        shown = sample.inline_ok and sample.source
        source_html = render.code_html(sample.source, sample.lineno) if shown else None
        titles = self.papers
        papers = [{"url": self.urls.paper(s), "title": titles[s].title if s in titles else s} for s in sample.papers]
        description = f"{sample.entry} in {sample.repo}: {sample.status}. {sample.reason}"
        self._page("sample.html", url, json_url, "sample", seo.page_meta(url, description, self.urls), sample=sample,
                   repo_url=repo.page_url, papers=papers, source_html=source_html, vocabulary=STATUS_VOCABULARY)
        self._write(json_url, sample.model_dump_json())

    # --- indexes ---

    def write_indexes(self) -> None:
        by_slug = [self.papers[s] for s in sorted(self.papers)]
        statuses = self._status_counts()
        search_page = self._write_search()
        self._write_index(statuses)
        self._write_lists(by_slug)
        self._write_statuses(statuses)
        self._write_tasks()
        self._write_attribution()
        self._write_search_page(search_page)
        self._write(self.urls.feed(), feeds.atom(self.urls, self.read_at, self.feed))
        for url, content in seo.sitemaps(self.urls, self.html_pages, self.read_at).items():
            self._write(url, content)
        self._write(self.urls.robots(), seo.robots(self.urls))
        if not self.urls.absolute:
            self.notes.append("sitemaps and feed: site-relative URLs (build with --base-url https://… for absolute ones)")
        for name, model in self.schema_models().items():
            self._write(self.urls.schema(name), dump_json(record_schema(model, name, self.urls)))
        self._write(self.urls.static("style.css"), render.stylesheet())
        self._write(self.urls.static("data-map.svg"), datamap.svg())
        for name, content in render.static_files().items():
            self._write(self.urls.static(name), content)

    @staticmethod
    def schema_models() -> dict[str, type[BaseModel]]:
        """Every record type the site publishes, by its schema's name (`schema/<name>.json`)."""
        return {"paper": PaperTwin, "repo": RepoTwin, "sample": Sample, **PAGE_SCHEMAS}

    def _status_counts(self) -> list[StatusCount]:
        counts = Counter(s.status for s, _ in self.samples)
        return [StatusCount(status=k, meaning=v, samples=counts[k], url=self.urls.status(k),
                            json_url=self.urls.status_json(k)) for k, v in STATUS_VOCABULARY.items()]

    def _write_index(self, statuses: list[StatusCount]) -> None:
        order = sorted(self.papers.values(), key=lambda p: (p.specimen, p.title.lower(), p.slug))
        verified = [self.papers[f.slug] for f in feeds.verified_order(self.feed)[:INDEX_PAPERS]]
        record = IndexPage(
            about=self.about, schema_url=self.urls.schema("index"), page_url=self.urls.home(),
            json_url=self.urls.index_json(), read_at=self.read_at, papers_total=len(self.papers),
            repositories=len(self.repos), samples=len(self.samples), statuses=statuses,
            papers=order[:INDEX_PAPERS], papers_url=self.urls.papers(), verified=verified,
            api={"papers": self.urls.api_papers(), "repos": self.urls.api_repos(), "tasks": self.urls.tasks_json(),
                 "feed": self.urls.feed(), "sitemap": self.urls.sitemap(), "search": self.urls.search_json()},
            schemas={name: self.urls.schema(name) for name in self.schema_models()},
        )
        self._record("index.html", record, record.page_url, record.json_url, "index",
                     "A catalogue of papers and the code linked to them, run in a sandbox and checked against "
                     "contracts drafted from its own declarations.", vocabulary=STATUS_VOCABULARY)

    def _paged(self, items: Sequence[Any], page_url: Callable[[int], str],
               json_url: Callable[[int], str]) -> list[tuple[Paging, list[Any]]]:
        pages = page_count(len(items), PAGE_SIZE)
        out = []
        for number in range(1, pages + 1):
            paging = Paging(
                page=number, pages=pages, page_size=PAGE_SIZE, total=len(items), page_url=page_url(number),
                json_url=json_url(number),
                prev=json_url(number - 1) if number > 1 else None, next=json_url(number + 1) if number < pages else None,
                prev_page_url=page_url(number - 1) if number > 1 else None,
                next_page_url=page_url(number + 1) if number < pages else None)
            out.append((paging, list(items[(number - 1) * PAGE_SIZE:number * PAGE_SIZE])))
        return out

    def _write_lists(self, by_slug: list[PaperListing]) -> None:
        for paging, chunk in self._paged(by_slug, self.urls.papers, self.urls.api_papers):
            record = PaperList(about=self.about, schema_url=self.urls.schema("paper-list"), paging=paging, papers=chunk)
            self._record("papers.html", record, paging.page_url, paging.json_url, "paper-list",
                         f"Every paper in this catalogue, page {paging.page} of {paging.pages}.")
        repos = sorted(self.repos, key=lambda r: r.slug)
        for paging, chunk in self._paged(repos, self.urls.repos, self.urls.api_repos):
            record = RepoList(about=self.about, schema_url=self.urls.schema("repo-list"), paging=paging, repos=chunk)
            self._record("repos.html", record, paging.page_url, paging.json_url, "repo-list",
                         f"Every repository in this catalogue, page {paging.page} of {paging.pages}.")

    def _write_statuses(self, statuses: list[StatusCount]) -> None:
        for status, meaning in STATUS_VOCABULARY.items():
            rows = sorted((self._sample_listing(s) for s, _ in self.samples if s.status == status),
                          key=lambda r: (r.entry, r.repo, r.path, r.sample_id))
            for paging, chunk in self._paged(rows, lambda n, s=status: self.urls.status(s, n),
                                             lambda n, s=status: self.urls.status_json(s, n)):
                record = StatusPage(about=self.about, schema_url=self.urls.schema("status"), status=status,
                                    meaning=meaning, statuses=statuses, paging=paging, samples=chunk)
                self._record("status.html", record, paging.page_url, paging.json_url, "status",
                             f"Samples with status {status}: {meaning}", vocabulary=STATUS_VOCABULARY)

    def _write_tasks(self) -> None:
        listings = []
        for key in sorted(self.tasks):
            names = sorted(self.task_names[key].items(), key=lambda kv: (-kv[1], kv[0]))
            name = names[0][0]
            papers = newest_first([self.papers[s] for s in self.tasks[key]])
            for paging, chunk in self._paged(papers, lambda n, t=name: self.urls.task(t, n),
                                             lambda n, t=name: self.urls.task_json(t, n)):
                record = TaskPage(about=self.about, schema_url=self.urls.schema("task"), task_slug=key,
                                  task_name=name, other_names=[n for n, _ in names[1:]], paging=paging, papers=chunk)
                self._record("task.html", record, paging.page_url, paging.json_url, "task",
                             f"Papers with the task {name}.")
            listings.append(TaskListing(task_slug=key, task_name=name, papers=len(papers), url=self.urls.task(name),
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

    def _write_search(self) -> SearchPage:
        if self.search_docs is None:
            result = search.SearchResult(False, "no search documents were collected")
        else:
            result = search.build_index(self.search_docs, self.staging / "pagefind")
        if not result.available:
            self.notes.append(f"search: not built ({result.reason}); the site works without it")
        shards = [SearchShard(bundle_url=self.urls.search_bundle(s.number), papers=s.papers, first_slug=s.first_slug,
                              last_slug=s.last_slug) for s in result.shards]
        if result.available:
            self.notes.append(f"search: {sum(s.papers for s in shards)} papers in {len(shards)} Pagefind shard(s)")
        return SearchPage(about=self.about, schema_url=self.urls.schema("search"), page_url=self.urls.search(),
                          json_url=self.urls.search_json(), available=result.available, reason=result.reason,
                          fields=list(search.FIELDS), split=search.SPLIT, shards=shards)

    def _write_search_page(self, record: SearchPage) -> None:
        self._record("search.html", record, record.page_url, record.json_url, "search",
                     "Search the titles, authors, tasks and abstracts of every paper.")


def newest_first(papers: list[PaperListing]) -> list[PaperListing]:
    """Newest paper date first, then slug; undated papers last."""
    by_slug = sorted(papers, key=lambda p: p.slug)
    return sorted((p for p in by_slug if p.date), key=lambda p: p.date or "", reverse=True) + \
        [p for p in by_slug if not p.date]


def _raw_url(record: Any) -> Callable[[str], str]:
    """Images of a README at the pinned commit (GitHub serves raw files from its own host)."""
    def rebase(path: str) -> str:
        if record.host == "github.com":
            return f"https://raw.githubusercontent.com/{record.repo}/{record.commit or 'HEAD'}/{path}"
        return record.file_url(path)
    return rebase
