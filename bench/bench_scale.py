"""Benchmark: the build at archive scale, and Hugo on the same pages.

1. A synthetic archive with the real schemas (`bench/synth_archive.py`; 576,261 papers and 300,161
   links by default) is generated once into the work folder (not timed).
2. Full build: `paperproof build --archive … --out site --cache cache` from nothing, in a child process.
3. No-op rebuild: the same command again, nothing changed.
4. Incremental rebuilds (`--incremental N`), twice: N papers' abstracts edited and N/2 papers removed
   from the dump, then the same command. The first seeds its staging tree from the site; the second
   patches the tree the first one replaced, as every later build does.
5. Rebuild by other code: the same archive built again as a new release of paperproof would (every page
   rendered again; another `--base-url` stands in for the new code), the search index kept.
6. Hugo (Debian package `hugo`) building the same site from the same data (`hugo_site`): a content
   file per paper (its fields, the abstract as Markdown, its code links joined from the links dump) and
   per repository (the papers linking to it), tasks as a taxonomy, and layouts giving each paper,
   repository and task an HTML page and a JSON twin, the papers and repositories lists of 1,000 a page,
   a home page and a sitemap; `hugo` timed on them (writing the content files is not timed). Then
   Pagefind over Hugo's output, its paper pages marked for the same four fields paperproof's search
   indexes, as a Hugo site gets search: a second ratio for the same site with the same search.

Memory: a sampler reads every process of the build's tree twice a second and reports the peak of the
sum of their RSS (an upper bound: pages shared between forked processes count in each) and of their
PSS (shared pages divided among the processes that share them), and `getrusage(RUSAGE_CHILDREN)`'s
`ru_maxrss`, the largest RSS of any single process. Pages per second are paper pages (each with its
JSON twin) divided by the whole build's wall time, everything included (link join, repositories, list
and task pages, sitemaps, search index); Hugo's are the same pages divided by `hugo`'s wall time, which
likewise includes its repository, list and task pages.

The disk: the same sampler counts the build's processes it finds waiting on the disk (state D), and the
machine's I/O wait over the build is read from `/proc/stat`. On a disk that serves few operations a
second, creating the site's two million files is where a build waits (ext4 reads the inode table block
of each new inode when it is not cached), and these two figures say how much of a run's time that was.

    .venv/bin/python bench/bench_scale.py                      # full size (about 40 minutes with Hugo)
    .venv/bin/python bench/bench_scale.py --papers 20000       # a quick run
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synth_archive  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from paperproof.build.site_paths import SitePaths  # noqa: E402


class Sampler:
    """Peak RSS and PSS summed over a process and all its descendants, sampled every `interval` seconds."""

    def __init__(self, pid: int, interval: float = 0.5) -> None:
        self.pid = pid
        self.interval = interval
        self.rss = 0
        self.pss = 0
        self.processes = 0
        self.ticks = 0
        self.blocked = 0  # processes of the tree found waiting on the disk (state D), summed over the ticks
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            root = psutil.Process(self.pid)
        except psutil.Error:
            return
        tick = 0
        while not self._stop.is_set():
            try:
                tree = [root, *root.children(recursive=True)]
            except psutil.Error:
                break
            rss = pss = 0
            for proc in tree:
                try:
                    if tick % 4 == 0:  # PSS reads /proc/<pid>/smaps: every other second
                        info = proc.memory_full_info()
                        rss += info.rss
                        pss += info.pss
                    else:
                        rss += proc.memory_info().rss
                    self.blocked += proc.status() == psutil.STATUS_DISK_SLEEP
                except psutil.Error:
                    continue
            self.ticks += 1
            self.rss = max(self.rss, rss)
            self.pss = max(self.pss, pss)
            self.processes = max(self.processes, len(tree))
            tick += 1
            self._stop.wait(self.interval)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def run(command: list[str], *, cwd: Path | None = None, env: dict | None = None, check: bool = True) -> dict:
    started = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    system = psutil.cpu_times()
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sampler = Sampler(proc.pid)
    output, _ = proc.communicate()
    sampler.stop()
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    system_after = psutil.cpu_times()
    if proc.returncode != 0 and check:
        print(output, file=sys.stderr)
        raise SystemExit(f"{' '.join(command)} exited {proc.returncode}")
    return {"wall": wall, "rss": sampler.rss, "pss": sampler.pss, "maxrss": after.ru_maxrss * 1024,
            "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "processes": sampler.processes, "output": output, "returncode": proc.returncode,
            # the disk: processes of the build waiting on it, on average, and cores idle while it was busy
            "blocked": sampler.blocked / max(1, sampler.ticks),
            "iowait": getattr(system_after, "iowait", 0.0) - getattr(system, "iowait", 0.0)}


def build_command(archive: Path, work: Path, jobs: int | None) -> list[str]:
    command = [sys.executable, "-m", "paperproof", "build", "--archive", str(archive), "--out", str(work / "site"),
               "--cache", str(work / "cache")]
    return command + (["--jobs", str(jobs)] if jobs else [])


# --- Hugo ---


HUGO_CONFIG = """baseURL = "/"
title = "paperproof (Hugo comparison)"
disableKinds = ["RSS", "robotsTXT", "404"]
paginate = 1000
[taxonomies]
task = "tasks"
[outputs]
home = ["HTML", "JSON"]
page = ["HTML", "JSON"]
section = ["HTML"]
taxonomy = ["HTML"]
term = ["HTML", "JSON"]
[markup.goldmark.renderer]
unsafe = false
"""
HEAD = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ .Title }} — paperproof</title>"""
HUGO_LAYOUTS = {
    # A paper: its fields, its tasks (linking to their term pages) and its code links (to repository pages).
    # The task links are made from the names, as Hugo names term pages: `.GetTerms` walks the taxonomy for
    # every page in this Hugo (1.6 ms a page against 0.15 ms at 20,000 papers, `--templateMetrics`).
    "paper/single.html": HEAD + """
<meta name="description" content="{{ .Summary | plainify | truncate 300 }}">
{{ range .Params.authors }}<meta name="citation_author" content="{{ . }}">{{ end }}
<link rel="alternate" type="application/json" href="{{ .RelPermalink }}index.json"></head>
<body><main><h1 data-pagefind-body data-pagefind-meta="title">{{ .Title }}</h1>
<dl><dt>Authors</dt><dd data-pagefind-body data-pagefind-meta="authors">{{ delimit .Params.authors ", " }} </dd>
{{ with .Params.date_text }}<dt>Date</dt><dd data-pagefind-meta="date">{{ . }}</dd>{{ end }}
{{ with .Params.tasks }}<dt>Tasks</dt><dd data-pagefind-body data-pagefind-meta="tasks">{{ range . }}\
<a href="/tasks/{{ . | urlize }}/">{{ . }}</a> {{ end }}</dd>{{ end }}
<dt>Links</dt><dd>{{ with .Params.url_abs }}<a href="{{ . }}">Abstract page</a>{{ end }}
{{ with .Params.url_pdf }}<a href="{{ . }}">PDF</a>{{ end }}</dd></dl>
<section><h2>Abstract</h2><div data-pagefind-body>{{ .Content }}</div></section>
{{ with .Params.code }}<section><h2>Code</h2><ul>{{ range . }}<li><a href="/repo/{{ .key }}/">{{ .name }}</a>
{{ with .framework }}{{ . }}{{ end }}{{ if .official }} (official){{ end }} <a href="{{ .url }}">source</a></li>\
{{ end }}</ul></section>{{ end }}
</main></body></html>
""",
    "paper/single.json": """{{ dict "title" .Title "date" .Params.date_text "authors" .Params.authors "tasks" \
.Params.tasks "methods" .Params.methods "url_abs" .Params.url_abs "url_pdf" .Params.url_pdf "code" .Params.code \
"abstract" .RawContent | jsonify }}
""",
    # A repository: its URL and the papers that link to it.
    "repo/single.html": HEAD + """</head>
<body><main><h1>{{ .Title }}</h1><p><a href="{{ .Params.repo_url }}">{{ .Params.repo_url }}</a></p>
<section><h2>Papers</h2><ul>{{ range .Params.papers }}<li><a href="/paper/{{ .slug }}/">{{ .title }}</a>\
{{ if .official }} (official){{ end }}</li>{{ end }}</ul></section></main></body></html>
""",
    "repo/single.json": """{{ dict "name" .Title "url" .Params.repo_url "papers" .Params.papers | jsonify }}
""",
    # The paper and repository lists, 1,000 a page, as paperproof pages them.
    "_default/list.html": HEAD + """</head>
<body><main><h1>{{ .Title }}</h1><ol>{{ range .Paginator.Pages }}<li><a href="{{ .RelPermalink }}">{{ .Title }}</a>\
</li>{{ end }}</ol>{{ with .Paginator.Prev }}<a href="{{ .URL }}">previous</a>{{ end }}
{{ with .Paginator.Next }}<a href="{{ .URL }}">next</a>{{ end }}</main></body></html>
""",
    # A task: every paper with it; the task index: every task with its count.
    "_default/term.html": HEAD + """</head>
<body><main><h1>{{ .Title }}</h1><ol>{{ range .Pages }}<li><a href="{{ .RelPermalink }}">{{ .Title }}</a> \
{{ .Params.date_text }}</li>{{ end }}</ol></main></body></html>
""",
    "_default/term.json": """{{ $papers := slice }}{{ range .Pages }}{{ $papers = $papers | append (dict \
"title" .Title "url" .RelPermalink) }}{{ end }}{{ dict "task" .Title "papers" $papers | jsonify }}
""",
    "_default/taxonomy.html": HEAD + """</head>
<body><main><h1>Tasks</h1><ul>{{ range .Data.Terms.ByCount }}<li><a href="{{ .Page.RelPermalink }}">\
{{ .Page.Title }}</a> {{ .Count }}</li>{{ end }}</ul></main></body></html>
""",
    "index.html": HEAD + """</head>
<body><main><h1>paperproof</h1><p>{{ len (where .Site.RegularPages "Section" "paper") }} papers,
{{ len (where .Site.RegularPages "Section" "repo") }} repositories</p>
<a href="/paper/">papers</a> <a href="/repo/">repositories</a> <a href="/tasks/">tasks</a></main></body></html>
""",
    "index.json": """{{ dict "papers" (len (where .Site.RegularPages "Section" "paper")) "repositories" \
(len (where .Site.RegularPages "Section" "repo")) | jsonify }}
""",
}


def hugo_site(archive: Path, folder: Path) -> int:
    """The site paperproof builds, as a Hugo site: a content file per paper (front matter with title,
    date, authors, tasks, methods, links and its code links joined from the links dump; the abstract as
    Markdown body) and per repository (its URL and the papers linking to it), tasks as a taxonomy, and
    layouts giving each paper and repository an HTML page and a JSON twin, each task a page and a twin,
    the papers and repositories paged lists of 1,000, and a home page. Returns the number of papers."""
    import ijson

    from paperproof.build.urls import repo_slug
    from paperproof.catalogue.archive_rows import paper_slug
    from paperproof.catalogue.repo_url import normalise_repo_url

    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / "config.toml").write_text(HUGO_CONFIG)
    for name, text in HUGO_LAYOUTS.items():
        (folder / "layouts" / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / "layouts" / name).write_text(text)
    code: dict[str, list[dict]] = {}
    repos: dict[str, dict] = {}
    with gzip.open(archive / "links-between-papers-and-code.json.gz", "rb") as handle:
        for row in ijson.items(handle, "item"):
            slug = paper_slug(row["paper_url"])
            try:  # the repositories paperproof makes pages for, under the same names
                repo_id = normalise_repo_url(row["repo_url"])
            except ValueError:
                continue
            key = repo_slug(repo_id.host, repo_id.repo)
            code.setdefault(slug, []).append({"key": key, "name": repo_id.repo, "url": row["repo_url"],
                                              "framework": row.get("framework"), "official": row.get("is_official")})
            repo = repos.setdefault(key, {"title": repo_id.repo, "repo_url": repo_id.url, "papers": []})
            repo["papers"].append({"slug": slug, "title": row.get("paper_title"), "official": row.get("is_official")})
    for section in ("paper", "repo"):
        (folder / "content" / section).mkdir(parents=True)
        (folder / "content" / section / "_index.md").write_text(json.dumps({"title": section.title() + "s"}) + "\n")
    seen: set[str] = set()
    with gzip.open(archive / "papers-with-abstracts.json.gz", "rb") as handle:
        for row in ijson.items(handle, "item", use_float=True):
            slug = paper_slug(row["paper_url"])
            if slug in seen:
                continue
            seen.add(slug)
            front = {"title": row["title"], "slug": slug, "authors": row.get("authors") or [],
                     "tasks": row.get("tasks") or [], "methods": row.get("methods") or [],
                     "date_text": row.get("date"), "url_abs": row.get("url_abs"), "url_pdf": row.get("url_pdf"),
                     "code": code.get(slug, [])}
            (folder / "content" / "paper" / f"{slug}.md").write_text(
                json.dumps(front, ensure_ascii=False) + "\n\n" + (row.get("abstract") or "") + "\n", encoding="utf-8")
    for key, repo in repos.items():
        (folder / "content" / "repo" / f"{key}.md").write_text(json.dumps({**repo, "slug": key}, ensure_ascii=False)
                                                               + "\n", encoding="utf-8")
    return len(seen)


def report(*rows: tuple[str, str]) -> None:
    """Figures as soon as they are measured (a long run stopped midway keeps what it had)."""
    for key, value in rows:
        print(f"{key:<44}  {value}", flush=True)


def fmt_mb(value: float) -> str:
    return f"{value / 2**20:,.0f} MB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=synth_archive.PAPERS)
    parser.add_argument("--links", type=int, help="default: 300,161 scaled to --papers")
    parser.add_argument("--work", type=Path, default=Path.home() / ".cache" / "paperproof-bench",
                        help="work folder (on a disk, not /tmp where that is slow to create files)")
    parser.add_argument("--jobs", type=int, help="render processes (default: one per core)")
    parser.add_argument("--incremental", type=int, default=10, help="papers edited for the incremental rebuild (0: skip)")
    parser.add_argument("--no-release", dest="release", action="store_false",
                        help="skip the rebuild by other code (a new release of paperproof)")
    parser.add_argument("--no-hugo", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the sites afterwards")
    args = parser.parse_args()
    links = args.links if args.links is not None else round(synth_archive.LINKS * args.papers / synth_archive.PAPERS)
    work = args.work / f"{args.papers}"
    archive = work / "archive"
    stamp = archive / "generated.json"
    wanted = {"papers": args.papers, "links": links, "seed": 1}
    if not stamp.exists() or json.loads(stamp.read_text()) != wanted:
        shutil.rmtree(archive, ignore_errors=True)
        started = time.perf_counter()
        synth_archive.generate(archive, args.papers, links, 1)
        stamp.write_text(json.dumps(wanted))
        print(f"generated the synthetic archive in {time.perf_counter() - started:.0f} s", flush=True)
    paths = SitePaths(work / "site")
    for path in (paths.out, work / "cache", paths.staging, paths.state, paths.previous):
        shutil.rmtree(path, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cores = len(os.sched_getaffinity(0))
    print(f"machine: {platform.machine()}, {cores} cores, {psutil.virtual_memory().total / 2**30:.0f} GiB; "
          f"archive: {args.papers:,} papers, {links:,} links "
          f"({sum(p.stat().st_size for p in archive.glob('*.gz')) / 1e6:,.0f} MB gzipped)", flush=True)

    full = run(build_command(archive, work, args.jobs), cwd=work, env=env)
    print(full["output"].strip(), flush=True)
    files = html_pages = size = 0
    for folder, _, names in os.walk(work / "site"):
        files += len(names)
        html_pages += names.count("index.html")
        size += sum(os.lstat(os.path.join(folder, n)).st_size for n in names)
    paper_pages = sum(1 for _ in (work / "site" / "paper").glob("*.json"))
    report(
        ("full build", f"{full['wall']:.0f} s ({full['wall'] / 60:.1f} min), {full['cpu']:.0f} s CPU"),
        ("paper pages (+ JSON twin)", f"{paper_pages:,}"),
        ("site on disk", f"{files:,} files, {size / 1e9:.2f} GB"),
        ("pages per second", f"{paper_pages / full['wall']:,.0f} paper pages/s "
                             f"({html_pages / full['wall']:,.0f} HTML pages/s, {files / full['wall']:,.0f} files/s of "
                             f"{files:,} files)"),
        ("peak memory", f"{fmt_mb(full['pss'])} PSS, {fmt_mb(full['rss'])} RSS summed over the build's "
                        f"{full['processes']} processes; largest single process {fmt_mb(full['maxrss'])}"),
        ("waiting on the disk", f"{full['blocked']:.2f} of the build's processes on average; cores idle in I/O "
                                f"wait {full['iowait'] / full['wall']:.2f} of {cores} (the machine's, {full['iowait']:.0f} s)"),
    )
    noop = run(build_command(archive, work, args.jobs), cwd=work, env=env)
    report(("no-op rebuild", f"{noop['wall']:.1f} s ({100 * noop['wall'] / full['wall']:.2f} % of the full build)"))
    # Two incremental rebuilds: the first seeds its staging tree with hard links of the whole site (the
    # full build kept no replaced tree); the second, like every later one, patches the tree the first
    # replaced.
    for round_, how in ((1, "seeds its staging tree from the site"), (2, "patches the tree the last build replaced")):
        if not args.incremental:
            break
        changed, dropped = synth_archive.mutate(archive, args.incremental, max(1, args.incremental // 2),
                                                seed=1 + round_)
        stamp.unlink(missing_ok=True)  # the archive on disk is no longer the generated one
        incremental = run(build_command(archive, work, args.jobs), cwd=work, env=env)
        lines = [x for x in incremental["output"].splitlines() if x.startswith(("pages:", "time:"))]
        report((f"incremental rebuild {round_} ({len(changed)} edited, {len(dropped)} removed)",
                f"{incremental['wall']:.0f} s ({100 * incremental['wall'] / full['wall']:.1f} % of the full "
                f"build), {how}; {'; '.join(lines)}"))
    if args.release:
        # A new release of paperproof changes every page's digest. The build settings are part of that digest
        # too, so another base URL stands in for new code here: every page is rendered again, and the search
        # records (site-relative) are not.
        release = run(build_command(archive, work, args.jobs) + ["--base-url", "https://example.org/catalogue"],
                      cwd=work, env=env)
        lines = [x for x in release["output"].splitlines() if x.startswith(("pages:", "time:"))]
        report(("rebuild by other code (another --base-url)",
                f"{release['wall']:.0f} s ({100 * release['wall'] / full['wall']:.1f} % of the full build), "
                f"{release['cpu']:.0f} s CPU, peak {fmt_mb(release['pss'])} PSS; {'; '.join(lines)}"))
    if not args.no_hugo and shutil.which("hugo"):
        folder = work / "hugo"
        started = time.perf_counter()
        count = hugo_site(archive, folder)
        print(f"wrote the Hugo content files of {count:,} papers and their repositories in "
              f"{time.perf_counter() - started:.0f} s", flush=True)
        version = subprocess.run(["hugo", "version"], capture_output=True, text=True).stdout.strip()
        hugo = run(["hugo", "--quiet", "--destination", str(folder / "public")], cwd=folder, check=False)
        if hugo["returncode"] != 0:
            killed = " (killed: out of memory)" if hugo["returncode"] == -9 else ""
            report(("Hugo", f"{version.split(' BuildDate')[0]}: failed after {hugo['wall']:.0f} s with exit status "
                            f"{hugo['returncode']}{killed}, at {fmt_mb(hugo['rss'])} RSS; no ratio at this size"))
        else:
            hugo_pages = sum(1 for _ in (folder / "public" / "paper").glob("*/index.json"))
            html = sum(1 for _ in (folder / "public").rglob("*.html"))
            report(
                ("Hugo, the same site", f"{version.split(' BuildDate')[0]}: {hugo['wall']:.0f} s for "
                                        f"{hugo_pages:,} paper pages (+ JSON) of {html:,} HTML pages, "
                                        f"{hugo_pages / hugo['wall']:,.0f} paper pages/s, "
                                        f"peak {fmt_mb(hugo['rss'])} RSS"),
                ("paperproof / Hugo", f"{(paper_pages / full['wall']) / (hugo_pages / hugo['wall']):.2f}× Hugo's "
                                      "pages per second"),
            )
            # The search paperproof builds, over Hugo's pages: the same four fields marked in them, indexed
            # the way a Hugo site gets search (Pagefind over its output, one process).
            pagefind = run([sys.executable, "-m", "pagefind", "--site", str(folder / "public"), "--force-language",
                            "en", "--output-path", str(folder / "public" / "pagefind")], cwd=folder, check=False)
            both = hugo["wall"] + pagefind["wall"]
            if pagefind["returncode"] == 0:
                report(
                    ("Hugo then Pagefind (the same site, same search)",
                     f"{both:.0f} s ({pagefind['wall']:.0f} s of Pagefind, peak {fmt_mb(pagefind['rss'])} RSS): "
                     f"{hugo_pages / both:,.0f} pages/s"),
                    ("paperproof / (Hugo then Pagefind)",
                     f"{(paper_pages / full['wall']) / (hugo_pages / both):.2f}× their pages per second"),
                )
            else:
                report(("Pagefind over Hugo's site", f"failed with exit status {pagefind['returncode']} after "
                                                     f"{pagefind['wall']:.0f} s at {fmt_mb(pagefind['rss'])} RSS"))
    elif not args.no_hugo:
        report(("Hugo", "not installed (apt-get install hugo)"))
    if not args.keep:
        for path in (paths.out, paths.previous, work / "hugo"):
            shutil.rmtree(path, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
