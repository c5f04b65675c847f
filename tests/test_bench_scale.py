"""The benchmark's Hugo comparison is fair: from the same synthetic archive, Hugo builds the pages
paperproof builds (every paper, repository and task a page with a JSON twin, the paged lists), so the
ratio the benchmark prints compares the same work.

Needs Hugo (Debian package `hugo`): skipped without it, except under `PAPERPROOF_REQUIRE_HUGO=1` (set by
.ci/run), where its absence fails the module.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import bench_scale  # noqa: E402
import synth_archive  # noqa: E402

from paperproof.build.urls import repo_slug  # noqa: E402
from paperproof.catalogue import community  # noqa: E402

if os.environ.get("PAPERPROOF_REQUIRE_HUGO") == "1" and shutil.which("hugo") is None:
    raise RuntimeError("PAPERPROOF_REQUIRE_HUGO=1 but hugo is missing (apt-get install hugo)")
pytestmark = pytest.mark.skipif(shutil.which("hugo") is None, reason="hugo is not installed")


def pages(folder: Path, leave_out: set[str] = frozenset()) -> set[str]:
    """The names of the pages under `folder`: its subfolders holding an index.html."""
    return {p.parent.name for p in folder.glob("*/index.html")} - leave_out


def test_hugo_builds_the_pages_paperproof_builds_from_the_same_archive(tmp_path):
    synth_archive.generate(tmp_path / "archive", papers=1500, links=800, seed=3)
    built = subprocess.run([sys.executable, "-m", "paperproof", "build", "--archive", str(tmp_path / "archive"),
                            "--out", str(tmp_path / "site"), "--cache", str(tmp_path / "cache")],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-2000:]
    papers = bench_scale.hugo_site(tmp_path / "archive", tmp_path / "hugo")
    hugo = subprocess.run(["hugo", "--quiet", "--destination", "public"], cwd=tmp_path / "hugo", capture_output=True,
                          text=True, timeout=600)
    assert hugo.returncode == 0, hugo.stderr[-2000:]
    site, public = tmp_path / "site", tmp_path / "hugo" / "public"

    ours = pages(site / "paper")
    assert len(ours) == papers == 1500
    assert pages(public / "paper", {"page"}) == ours
    curated = {repo_slug(entry.key.host, entry.key.repo) for entry in community.curated()}  # no archive link
    repositories = pages(site / "repo") - curated
    assert len(repositories) > 300
    assert pages(public / "repo", {"page"}) == repositories
    tasks = pages(site / "task")
    assert len(tasks) > 300
    assert pages(public / "tasks") == tasks
    linked = {html.unescape(href) for page in (public / "paper").glob("*/index.html")
              for href in re.findall(r'href="/(?:tasks|repo)/([^"/]+)/"', page.read_text())}
    assert linked <= tasks | repositories and len(linked) > 300  # a paper's task and code links lead to pages
    for folder, names in (("paper", ours), ("repo", repositories), ("tasks", tasks)):
        assert all((public / folder / name / "index.json").is_file() for name in names), folder  # the twins
    # the paged lists, 1,000 papers a page: two pages of papers in both
    assert (site / "papers" / "page-2" / "index.html").is_file() and not (site / "papers" / "page-3").exists()
    assert (public / "paper" / "page" / "2" / "index.html").is_file() and not (public / "paper" / "page" / "3").exists()
    hugo_html = sum(1 for _ in public.rglob("*.html"))
    ours_html = sum(1 for p in site.rglob("*.html") if "pagefind" not in p.parts)
    assert abs(hugo_html - ours_html) <= 0.02 * ours_html  # the same work, give or take the home and status pages
