"""Incremental, reproducible and atomic builds: a build redoes only what changed, a killed build leaves the
published site as it was and the next build completes it, and every way of getting to a site gives the
same bytes as a clean build."""

from __future__ import annotations

import filecmp
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from paperproof.build import publish
from paperproof.build import search as search_module
from paperproof.build.manifest import MARKER, state_directory
from paperproof.build.pipeline import BuildConfig, build
from paperproof.build.site_paths import SitePaths
from paperproof.cli import main
from tests.test_archive import LINK, PAPER, write_dump

ROOT = Path(__file__).resolve().parents[1]
TASKS = ["Image Classification", "Object Detection", "Semantic Segmentation", "Language Modelling"]


def papers(n: int, title: str = "Paper") -> list[dict]:
    return [{**PAPER, "paper_url": f"https://paperswithcode.com/paper/paper-{i:04d}", "title": f"{title} {i}",
             "abstract": f"We study thing {i}. It works & it is fast (p < 0.05).",
             "date": f"2021-{1 + i % 12:02d}-{1 + i % 28:02d}", "tasks": [TASKS[i % 4], TASKS[(i + 1) % 4]]}
            for i in range(n)]


def links(rows: list[dict]) -> list[dict]:
    out = [{**LINK, "paper_url": p["paper_url"], "repo_url": f"https://github.com/owner{i % 7}/repo-{i}"}
           for i, p in enumerate(rows)]
    return out + [{**LINK, "paper_url": rows[0]["paper_url"], "repo_url": "https://github.com/shared/tool"},
                  {**LINK, "paper_url": rows[1]["paper_url"], "repo_url": "https://github.com/shared/tool"}]


def archive(directory: Path, rows: list[dict], link_rows: list[dict] | None = None) -> str:
    write_dump(directory, "papers-with-abstracts", rows)
    write_dump(directory, "links-between-papers-and-code", links(rows) if link_rows is None else link_rows)
    return str(directory)


def files(site: Path) -> dict[str, tuple[int, bytes]]:
    """Every file of a site: (inode, content) by path."""
    return {p.relative_to(site).as_posix(): (p.stat().st_ino, p.read_bytes()) for p in site.rglob("*") if p.is_file()}


def identical(a: Path, b: Path) -> list[str]:
    """Paths that differ between two trees (missing on either side, different bytes, empty folders)."""
    out: list[str] = []

    def walk(cmp: filecmp.dircmp, prefix: str) -> None:
        out.extend(prefix + n for n in cmp.left_only + cmp.right_only + cmp.funny_files)
        _, mismatch, errors = filecmp.cmpfiles(cmp.left, cmp.right, cmp.common_files, shallow=False)
        out.extend(prefix + n for n in mismatch + errors)
        for name, sub in cmp.subdirs.items():
            walk(sub, f"{prefix}{name}/")

    walk(filecmp.dircmp(a, b), "")
    return out


@pytest.fixture
def no_search(monkeypatch):
    monkeypatch.setattr(search_module, "binary", lambda: None)


def test_a_changed_paper_rewrites_only_its_pages_and_the_indexes_that_list_it(tmp_path):
    rows = papers(40)
    source = archive(tmp_path / "archive", rows)
    site, cache = tmp_path / "site", tmp_path / "cache"
    first = build(BuildConfig(archive=source, out=site, cache=cache))
    before = files(site)
    assert first.pages["rendered"] > 0 and not first.noop

    again = build(BuildConfig(archive=source, out=site, cache=cache))  # nothing changed: nothing done
    assert again.noop and files(site) == before and again.papers == 40

    rows[7] = {**rows[7], "title": "A Retitled Paper", "abstract": "A new abstract."}
    archive(tmp_path / "archive", rows)
    summary = build(BuildConfig(archive=source, out=site, cache=cache))
    after = files(site)
    rewritten = {path for path in after if path not in before or after[path][0] != before[path][0]}
    slug, repo = "paper-0007", "owner0+repo-7"
    expected = {
        f"paper/{slug}/index.html", f"paper/{slug}.json",  # its pages
        "papers/index.html", "api/papers.json", "index.html", "index.json",  # the lists that show its title
        f"repo/{repo}/index.html", f"repo/{repo}.json",  # the repository page that lists it
        MARKER,
    }
    for task in rows[7]["tasks"]:
        key = task.lower().replace(" ", "-")
        expected |= {f"task/{key}/index.html", f"task/{key}.json"}
    search_files = {p for p in rewritten if p.startswith("pagefind/")}  # its search shard: the files that changed
    shard = [p for p in after if p.startswith("pagefind/")]
    assert search_files and len(search_files) < len(shard) / 2, (len(search_files), len(shard))
    assert "pagefind/1/pagefind-entry.json" in search_files
    assert rewritten - search_files == expected
    assert summary.pages["removed"] == 0 and summary.pages["kept"] > 40
    # and the result is the site a clean build of the new archive writes
    clean = tmp_path / "clean"
    build(BuildConfig(archive=source, out=clean, cache=tmp_path / "clean-cache"))
    assert identical(site, clean) == []


def test_a_removed_paper_leaves_no_page_behind(tmp_path, no_search):
    rows = papers(12)
    source = archive(tmp_path / "archive", rows)
    site, cache = tmp_path / "site", tmp_path / "cache"
    build(BuildConfig(archive=source, out=site, cache=cache))
    assert (site / "paper" / "paper-0005" / "index.html").is_file()

    kept = rows[:5] + rows[6:]
    archive(tmp_path / "archive", kept, [link for link in links(rows) if "paper-0005" not in link["paper_url"]])
    summary = build(BuildConfig(archive=source, out=site, cache=cache))
    assert not (site / "paper" / "paper-0005").exists() and not (site / "paper" / "paper-0005.json").exists()
    assert not (site / "repo" / "owner5+repo-5").exists()
    assert summary.pages["removed"] >= 2  # its pages and its repository's
    clean = tmp_path / "clean"
    build(BuildConfig(archive=source, out=clean, cache=None))
    assert identical(site, clean) == []


def test_check_says_whether_the_site_is_stale_and_writes_nothing(tmp_path, no_search, capsys):
    rows = papers(6)
    source = archive(tmp_path / "archive", rows)
    site, cache = tmp_path / "site", tmp_path / "cache"
    args = ["build", "--archive", source, "--out", str(site), "--cache", str(cache)]
    assert main([*args, "--check"]) == 1  # no site yet
    assert not site.exists() and not SitePaths(site).staging.exists()
    assert main(args) == 0
    capsys.readouterr()
    assert main([*args, "--check"]) == 0
    assert "up to date" in capsys.readouterr().out

    before = files(site)
    rows[2] = {**rows[2], "title": "Changed"}
    archive(tmp_path / "archive", rows[:5])  # one paper changed, one removed
    assert main([*args, "--check"]) == 1
    out = capsys.readouterr().out
    assert "stale:" in out and "paper paper-0002" in out and "removed: paper/paper-0005/index.html" in out
    assert files(site) == before and not SitePaths(site).staging.exists()


def _killed_build(command: list[str], manifest: Path, timeout: float = 60.0) -> bool:
    """Run `command` and SIGKILL it (and its render processes) once it has committed new paper pages to the
    staging tree. Returns False when it finished first."""
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with sqlite3.connect(f"file:{manifest}?mode=ro", uri=True, timeout=0.1) as db:
                    done = db.execute("SELECT COUNT(*) FROM stage_units s JOIN site_units t USING (unit) "
                                      "WHERE s.unit LIKE 'paper/%' AND s.hash IS NOT NULL AND s.hash != t.hash"
                                      ).fetchone()[0]
            except sqlite3.Error:
                done = 0
            if done >= 100:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return True
            time.sleep(0.01)
        return False
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_a_killed_build_leaves_the_site_served_and_the_next_build_completes_it(tmp_path, no_search):
    site, cache = tmp_path / "site", tmp_path / "cache"
    source = archive(tmp_path / "archive", papers(900))
    build(BuildConfig(archive=source, out=site, cache=cache))
    before = files(site)

    archive(tmp_path / "archive", papers(900, title="Retitled"))  # every page changes
    # The child builds without search, as this test does (same settings, so the same digests).
    script = ("import sys; from paperproof.build import search; search.binary = lambda: None; "
              "from paperproof.cli import main; sys.exit(main(sys.argv[1:]))")
    command = [sys.executable, "-c", script, "build", "--archive", source, "--out", str(site), "--cache", str(cache),
               "--jobs", "1"]
    assert _killed_build(command, state_directory(cache, site) / "manifest.sqlite"), "the build finished first"
    assert files(site) == before  # the published site is untouched
    assert SitePaths(site).staging.is_dir()

    summary = build(BuildConfig(archive=source, out=site, cache=cache))
    assert "resumed the staging tree of an unfinished build" in summary.notes
    assert summary.pages["kept"] >= 100  # what the killed build had written was not rendered again
    assert not SitePaths(site).staging.exists()
    clean = tmp_path / "clean"
    build(BuildConfig(archive=source, out=clean, cache=None))
    assert identical(site, clean) == []


def test_incremental_and_clean_builds_are_byte_identical_with_search(tmp_path):
    rows = papers(30)
    source = archive(tmp_path / "archive", rows)
    site, cache = tmp_path / "site", tmp_path / "cache"
    build(BuildConfig(archive=source, out=site, cache=cache))
    rows = rows[:20] + papers(35)[30:]  # ten papers gone, five new
    archive(tmp_path / "archive", rows)
    build(BuildConfig(archive=source, out=site, cache=cache))
    clean = tmp_path / "clean"
    build(BuildConfig(archive=source, out=clean, cache=None))
    assert identical(site, clean) == []
    assert (site / "pagefind" / "1" / "pagefind-entry.json").is_file()

    rows[3] = {**rows[3], "abstract": "Edited again."}  # the next build patches the replaced tree, shard and all
    archive(tmp_path / "archive", rows)
    build(BuildConfig(archive=source, out=site, cache=cache))
    clean = tmp_path / "clean-again"
    build(BuildConfig(archive=source, out=clean, cache=None))
    assert identical(site, clean) == []


def test_search_shards_pack_buckets_cut_large_ones_and_lose_removed_papers(tmp_path, monkeypatch):
    monkeypatch.setattr(search_module, "SHARD_SIZE", 4)

    def named(slug: str, i: int) -> dict:
        return {**papers(i + 1)[i], "paper_url": f"https://paperswithcode.com/paper/{slug}", "title": slug}

    rows = papers(9) + [named(s, i) for i, s in enumerate(["aa-one", "aa-two", "ab-one", "zz-one"])]
    source = archive(tmp_path / "archive", rows)
    site, cache = tmp_path / "site", tmp_path / "cache"

    def indexed() -> dict[str, int]:
        record = json.loads((site / "search.json").read_text())
        counts = {}
        for number, shard in enumerate(record["shards"], start=1):
            entry = json.loads((site / "pagefind" / str(number) / "pagefind-entry.json").read_text())
            assert entry["languages"]["en"]["page_count"] == shard["papers"]
            counts[f"{shard['first_slug']}..{shard['last_slug']}"] = shard["papers"]
        return counts

    build(BuildConfig(archive=source, out=site, cache=cache))
    assert indexed() == {"aa-one..ab-one": 3, "paper-0000..paper-0002": 3, "paper-0003..paper-0005": 3,
                         "paper-0006..zz-one": 4}  # whole buckets, slices, and a slice with a whole bucket
    rows = [r for r in rows if not r["paper_url"].endswith(("paper-0004", "aa-two"))]  # gone from two shards
    archive(tmp_path / "archive", rows)
    build(BuildConfig(archive=source, out=site, cache=cache))
    assert sum(indexed().values()) == len(rows) == 11
    clean = tmp_path / "clean"
    build(BuildConfig(archive=source, out=clean, cache=None))
    assert identical(site, clean) == []


def test_the_replaced_tree_is_patched_into_the_next_build_instead_of_copied(tmp_path, no_search):
    rows = papers(12)
    source = archive(tmp_path / "archive", rows)
    site, cache = tmp_path / "site", tmp_path / "cache"
    kept = SitePaths(site).previous

    def rebuild(changed_rows: list[dict], sentinel: bool) -> None:
        """Build with a file no build writes planted in the kept tree: when that tree becomes the staging tree, the
        build finds the file no unit lists and removes it, so it never reaches the site."""
        (kept / "planted").write_text("")
        archive(tmp_path / "archive", changed_rows)
        summary = build(BuildConfig(archive=source, out=site, cache=cache))
        removed = [line for line in summary.repaired if "no unit lists" in line]
        assert (removed == ["removed 1 file(s) of the staging tree that no unit lists (left by an unfinished build, "
                            "or put there): planted"]) == sentinel, summary.repaired
        assert not (site / "planted").exists()
        clean = tmp_path / "clean"
        build(BuildConfig(archive=source, out=clean, cache=None))
        assert identical(site, clean) == []

    build(BuildConfig(archive=source, out=site, cache=cache))
    assert not kept.exists()  # a first build replaces nothing worth keeping
    first_tree = json.loads((site / MARKER).read_text())["tree"]
    rows[3] = {**rows[3], "title": "Retitled"}
    archive(tmp_path / "archive", rows)
    build(BuildConfig(archive=source, out=site, cache=cache))
    assert json.loads((kept / MARKER).read_text())["tree"] == first_tree  # the replaced tree, kept

    rows = [{**rows[0], "abstract": "Edited."}] + rows[1:5] + rows[6:]  # one edited, one removed
    rebuild(rows, sentinel=True)  # the kept tree, patched, is the site now
    assert not (site / "paper" / "paper-0005").exists()

    (kept / MARKER).write_text('{"tree": "someone else\'s"}')  # not the tree the manifest says it replaced
    rows[1] = {**rows[1], "title": "Again"}
    rebuild(rows, sentinel=False)  # ... so it is discarded, and the staging tree seeded from the site


def test_a_site_made_by_other_code_is_rendered_afresh_and_keeps_its_search_index(tmp_path):
    source = archive(tmp_path / "archive", papers(30))
    site, cache = tmp_path / "site", tmp_path / "cache"
    build(BuildConfig(archive=source, out=site, cache=cache))
    before = files(site)
    # The build settings are part of the code's digest: another base URL changes every page, as a new
    # release of paperproof does, but no search record (their URLs are site-relative).
    base = "https://example.org/catalogue"
    summary = build(BuildConfig(archive=source, out=site, cache=cache, base_url=base))
    after = files(site)
    shards = [path for path in before if path.startswith("pagefind/")]
    assert shards and all(after[path][0] == before[path][0] for path in shards)  # linked, not indexed again
    assert summary.pages["kept"] == 1 and summary.pages["removed"] == 0  # the one shard
    pages = [path for path in after if not path.startswith("pagefind/")]
    assert all(path not in before or after[path][0] != before[path][0] for path in pages)  # every page written anew
    assert base.encode() in after["paper/paper-0003/index.html"][1]
    assert not SitePaths(site).previous.exists()  # nothing of the replaced tree is worth patching
    clean = tmp_path / "clean"
    build(BuildConfig(archive=source, out=clean, cache=None, base_url=base))
    assert identical(site, clean) == []

    again = build(BuildConfig(archive=source, out=site, cache=cache, base_url=base))
    assert again.noop


def test_a_replaced_tree_is_deleted_in_the_background_after_the_swap(tmp_path, no_search):
    source = archive(tmp_path / "archive", papers(20))
    site = tmp_path / "site"
    build(BuildConfig(archive=source, out=site, cache=None))
    old = files(site)
    archive(tmp_path / "archive", papers(20, title="Retitled"))
    build(BuildConfig(archive=source, out=site, cache=None))  # no cache: nothing is kept to patch
    assert files(site).keys() == old.keys() and not SitePaths(site).previous.exists()
    trash = SitePaths(site).trash
    assert trash.is_dir()  # the old tree went there in one rename, and a detached process deletes it
    deadline = time.monotonic() + 60

    def left() -> list[str]:
        return [p.name for p in trash.iterdir() if p.name != ".lock"]  # the deleters' lock stays

    while left() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left() == []
    clean = tmp_path / "clean"
    build(BuildConfig(archive=source, out=clean, cache=None))
    assert identical(site, clean) == []


def test_a_killed_build_by_other_code_resumes_without_writing_into_the_published_site(tmp_path, no_search):
    site, cache = tmp_path / "site", tmp_path / "cache"
    source = archive(tmp_path / "archive", papers(900))
    build(BuildConfig(archive=source, out=site, cache=cache))
    before = files(site)

    base = "https://example.org/catalogue"
    script = ("import sys; from paperproof.build import search; search.binary = lambda: None; "
              "from paperproof.cli import main; sys.exit(main(sys.argv[1:]))")
    command = [sys.executable, "-c", script, "build", "--archive", source, "--out", str(site), "--cache", str(cache),
               "--jobs", "1", "--base-url", base]
    assert _killed_build(command, state_directory(cache, site) / "manifest.sqlite"), "the build finished first"
    assert files(site) == before

    archive(tmp_path / "archive", papers(900, title="Retitled"))  # and the inputs change before it resumes
    summary = build(BuildConfig(archive=source, out=site, cache=cache, base_url=base))
    assert "resumed the staging tree of an unfinished build" in summary.notes
    clean = tmp_path / "clean"
    build(BuildConfig(archive=source, out=clean, cache=None, base_url=base))
    assert identical(site, clean) == []


def test_a_second_build_of_the_same_site_is_refused_while_one_runs(tmp_path, no_search, capsys):
    source = archive(tmp_path / "archive", papers(3))
    site = tmp_path / "site"
    args = ["build", "--archive", source, "--out", str(site), "--cache", str(tmp_path / "cache")]
    with publish.lock(SitePaths(site)):  # what a running build holds
        assert main(args) == 2
        assert not site.exists() and not SitePaths(site).staging.exists()
    assert f"{site}: another build is writing or checking this site" in capsys.readouterr().err
    assert main(args) == 0 and (site / "index.html").is_file()


def test_a_manifest_in_an_older_format_is_started_again(tmp_path, no_search):
    source = archive(tmp_path / "archive", papers(6))
    site, cache = tmp_path / "site", tmp_path / "cache"
    build(BuildConfig(archive=source, out=site, cache=cache))
    manifest = state_directory(cache, site) / "manifest.sqlite"
    with sqlite3.connect(manifest) as db:  # the layout before unit data had a table of its own
        db.execute("DROP TABLE unit_data")
        db.execute("ALTER TABLE site_units ADD COLUMN data TEXT")
        db.execute("DELETE FROM meta WHERE key = 'format'")
    assert main(["build", "--archive", source, "--out", str(site), "--cache", str(cache), "--check"]) == 1
    summary = build(BuildConfig(archive=source, out=site, cache=cache))
    assert summary.pages.get("kept", 0) == 0 and not summary.noop
    with sqlite3.connect(manifest) as db:
        assert [c[1] for c in db.execute("PRAGMA table_info(site_units)")] == ["unit", "hash", "files"]
        kept = db.execute("SELECT COUNT(*) FROM unit_data d JOIN site_units u USING (unit, hash)").fetchone()[0]
    assert kept == 6  # each paper's listing, feed entry and search record, at the digest it was made at
    clean = tmp_path / "clean"
    build(BuildConfig(archive=source, out=clean, cache=None))
    assert identical(site, clean) == []
    assert build(BuildConfig(archive=source, out=site, cache=cache)).noop


def test_check_names_every_damaged_file_and_a_build_repairs_them(tmp_path, capsys):
    """A twin deleted, a line appended to a page, a file added, a search file and a static file changed: `--check`
    names each and exits 1; a build writes the damaged files again, sets the added one aside, and the site is
    then byte-identical to a clean build, and `--check` exits 0."""
    source = archive(tmp_path / "archive", papers(12))
    site, cache = tmp_path / "site", tmp_path / "cache"
    args = ["build", "--archive", source, "--out", str(site), "--cache", str(cache)]
    assert main(args) == 0
    capsys.readouterr()
    shard = sorted(p.relative_to(site).as_posix() for p in (site / "pagefind").rglob("*.pf_fragment"))[0]
    (site / "paper" / "paper-0003.json").unlink()
    with open(site / "paper" / "paper-0004" / "index.html", "a", encoding="utf-8") as page:
        page.write("<p>appended</p>\n")
    (site / "notes.txt").write_text("mine, not the build's\n")
    (site / shard).write_bytes(b"\x1f\x8b not a fragment")
    with open(site / "static" / "style.css", "a", encoding="utf-8") as css:
        css.write("body { color: red }\n")
    damaged = files(site)

    assert main([*args, "--check"]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"stale: {site} differs from what a build would write in 5 published file(s)")
    for line in ("missing: paper/paper-0003.json", "changed: paper/paper-0004/index.html", "extra: notes.txt",
                 f"changed: {shard}", "changed: static/style.css"):
        assert f"  {line}\n" in out, line
    assert files(site) == damaged  # a check writes nothing

    assert main(args) == 0
    out = capsys.readouterr().out
    assert "repaired: wrote again 1 missing and 3 changed file(s) of the published site" in out
    aside = SitePaths(site).extra
    assert f"they are kept in {aside}/" in out and "notes.txt" in out
    assert [p.read_text() for p in aside.rglob("notes.txt")] == ["mine, not the build's\n"]
    assert main([*args, "--check"]) == 0
    assert "up to date" in capsys.readouterr().out
    clean = tmp_path / "clean"
    build(BuildConfig(archive=source, out=clean, cache=None))
    assert identical(site, clean) == []
    assert build(BuildConfig(archive=source, out=site, cache=cache)).noop  # and nothing is left to repair


def test_a_damaged_search_file_is_not_linked_into_a_site_made_by_other_code(tmp_path):
    """A build by other code links the unchanged search shards from the published site: a shard with a damaged
    file is indexed again instead, and a file added to the site by hand is set aside, not carried over."""
    source = archive(tmp_path / "archive", papers(10))
    site, cache = tmp_path / "site", tmp_path / "cache"
    build(BuildConfig(archive=source, out=site, cache=cache))
    entry = site / "pagefind" / "1" / "pagefind-entry.json"
    entry.write_text(entry.read_text().replace('"page_count"', '"page_count_"'))
    (site / "paper" / "mine.html").write_text("mine")
    base = "https://example.org/catalogue"
    summary = build(BuildConfig(archive=source, out=site, cache=cache, base_url=base))
    assert summary.damage.changed == ["pagefind/1/pagefind-entry.json"]
    assert summary.damage.extra == ["paper/mine.html"]
    assert summary.pages.get("kept", 0) == 0  # the one shard was indexed again, not linked
    assert [p.read_text() for p in SitePaths(site).extra.rglob("mine.html")] == ["mine"]
    clean = tmp_path / "clean"
    build(BuildConfig(archive=source, out=clean, cache=None, base_url=base))
    assert identical(site, clean) == []
    assert main(["build", "--archive", source, "--out", str(site), "--cache", str(cache), "--base-url", base,
                 "--check"]) == 0
