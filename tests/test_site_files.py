"""The published files' record: a walk in the order SQLite sorts paths, a check that reads every byte, a build's
comparison that reads only what changed size or mtime, and the staging tree cleared of files no unit lists."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from paperproof.build import publish
from paperproof.build.manifest import MARKER
from paperproof.build.site_files import SiteDamage, content_digest, inspect, merge, record, walk
from paperproof.build.site_paths import SitePaths

TREE = {"a.json": "1", "a/index.html": "2", "a0": "3", "a/b/c.txt": "4", "Z": "5", "é/x": "6", "a-b/y": "7",
        "pagefind/1/fragment/en_1.pf_fragment": "8"}


def plant(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


def records(root: Path) -> list[tuple[str, int, int, bytes]]:
    """The record a build would keep of every file under `root`, in SQLite's path order."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE f (path TEXT PRIMARY KEY, size INTEGER, mtime INTEGER, digest BLOB)")
    for path, found in walk(root):
        db.execute("INSERT INTO f VALUES (?, ?, ?, ?)", (path, found.st_size, found.st_mtime_ns,
                                                           content_digest(root / path)))
    return db.execute("SELECT * FROM f ORDER BY path").fetchall()


def test_the_walk_lists_files_in_the_order_sqlite_sorts_their_paths(tmp_path):
    plant(tmp_path, TREE)
    os.symlink("a0", tmp_path / "link")
    walked = [path for path, _ in walk(tmp_path)]
    assert walked == [row[0] for row in records(tmp_path)] == sorted([*TREE, "link"])
    assert walked.index("a.json") < walked.index("a/b/c.txt") < walked.index("a/index.html") < walked.index("a0")


def test_merge_pairs_paths_of_both_sides():
    left = [("a", 1), ("c", 3)]
    right = [("b", "x"), ("c", "y"), ("d", "z")]
    assert list(merge(left, right)) == [("a", 1, None), ("b", None, ("b", "x")), ("c", 3, ("c", "y")),
                                        ("d", None, ("d", "z"))]


def test_inspect_names_missing_changed_and_extra_files(tmp_path):
    plant(tmp_path, {**TREE, MARKER: "{}"})
    known = records(tmp_path)
    assert inspect(tmp_path, known, by_content=True) == SiteDamage()
    (tmp_path / "a.json").unlink()
    with open(tmp_path / "a" / "index.html", "a", encoding="utf-8") as page:
        page.write("appended")
    plant(tmp_path, {"a/notes.txt": "mine"})
    (tmp_path / "a0").unlink()
    os.symlink("Z", tmp_path / "a0")  # a link where a file was: never what a build wrote
    for by_content in (True, False):
        damage = inspect(tmp_path, known, by_content=by_content)
        assert damage == SiteDamage(missing=["a.json"], changed=["a/index.html", "a0"], extra=["a/notes.txt"])
    assert damage.damaged == ["a.json", "a/index.html", "a0"] and len(damage) == 4
    assert damage.lines() == ["missing: a.json", "changed: a/index.html", "extra: a/notes.txt", "changed: a0"]
    assert damage.lines(shown=2)[-1] == "… and 2 more"


def test_a_build_reads_only_files_whose_size_or_mtime_changed(tmp_path):
    plant(tmp_path, TREE)
    known = records(tmp_path)
    target = tmp_path / "a-b" / "y"
    before = target.stat()
    target.write_text("8")  # same size, then its mtime put back: only reading the bytes finds it
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert inspect(tmp_path, known, by_content=False) == SiteDamage()
    assert inspect(tmp_path, known, by_content=True) == SiteDamage(changed=["a-b/y"])

    touched: list[tuple[str, int, int]] = []
    os.utime(tmp_path / "Z", ns=(0, 10**9))  # touched, not changed: read, found equal, reported as touched
    assert inspect(tmp_path, known, by_content=False, touched=touched) == SiteDamage()
    assert touched == [("Z", 1, 10**9)]


def test_record_keeps_listed_files_reuses_digests_and_removes_the_rest(tmp_path):
    plant(tmp_path, {**TREE, MARKER: "{}", "a/.index.html.part": "leftover", "stray/deep/file": "x"})
    site = {path: (size, mtime, value) for path, size, mtime, value in records(tmp_path)}
    site["a0"] = (1, 1, b"stale digest")  # the site recorded a0 at another mtime: it is read again
    site["Z"] = (*site["Z"][:2], b"kept digest")  # same size and mtime: the recorded digest is kept
    listed = sorted(path for path in TREE if path != "a-b/y") + ["gone.json"]  # listed but not written
    rows = [(path, f"unit:{path}", *site.get(path, (None, None, None))) for path in sorted(listed)]
    removed: list[str] = []
    recorded = {row[0]: row for row in record(tmp_path, rows, removed)}
    assert sorted(recorded) == sorted(path for path in TREE if path != "a-b/y")
    assert recorded["Z"][1:] == ("unit:Z", *site["Z"][:2], b"kept digest")
    assert recorded["a0"][4] == content_digest(tmp_path / "a0")
    assert removed == ["a-b/y", "a/.index.html.part", "stray/deep/file"]
    assert not (tmp_path / "stray").exists() and not (tmp_path / "a-b").exists()  # emptied folders go too
    assert (tmp_path / MARKER).is_file()


def test_set_aside_keeps_the_files_beside_the_site(tmp_path):
    paths = SitePaths(tmp_path / "site")
    plant(paths.out, {"index.html": "page", "notes/mine.txt": "mine"})
    assert publish.set_aside(paths, [], "0" * 32) is None
    folder = publish.set_aside(paths, ["notes/mine.txt"], "ab" * 16)
    assert folder == paths.extra / ("ab" * 8)
    assert (folder / "notes" / "mine.txt").read_text() == "mine"
    assert (folder / "notes" / "mine.txt").stat().st_ino == (paths.out / "notes" / "mine.txt").stat().st_ino
    assert publish.set_aside(paths, ["notes/mine.txt"], "ab" * 16) == folder  # again: already there
