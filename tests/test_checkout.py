"""Reading a hostile checkout: links out, hard links, fifos, refs that are not refs, caps, deep trees."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paperproof.catalogue import checkout, licence
from paperproof.catalogue.repo_url import normalise_repo_url
from paperproof.catalogue.repos import find_readme, read_readme, record_from_checkout

SECRET = "paperproof-outside-secret-4242"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET + "\n")
    return secret


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("def f(x):\n    return x\n")
    return root


def test_a_readme_linking_out_is_not_read(tmp_path: Path, outside: Path) -> None:
    root = _repo(tmp_path)
    (root / "README.md").symlink_to(outside)
    assert find_readme(root) is None
    assert read_readme(root, "README.md") == ""
    with pytest.raises(checkout.Refused, match="outside the checkout"):
        checkout.read_bytes(root, "README.md", 1 << 20)


def test_a_relative_link_climbing_out_and_a_linked_folder_are_refused(tmp_path: Path, outside: Path) -> None:
    root = _repo(tmp_path)
    (root / "README.md").symlink_to("../outside/secret.txt")
    (root / "docs").symlink_to(outside.parent)
    for rel in ("README.md", "docs/secret.txt"):
        with pytest.raises(checkout.Refused):
            checkout.read_bytes(root, rel, 1 << 20)
    assert not checkout.is_file(root, "README.md")


def test_links_that_stay_inside_are_followed(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "docs").mkdir()
    (root / "docs" / "intro.md").write_text("# inside\n")
    (root / "README.md").symlink_to("docs/../docs/intro.md")
    assert find_readme(root) == "README.md"
    assert read_readme(root, "README.md") == "# inside\n"


def test_hard_links_fifos_and_oversize_files_are_refused(tmp_path: Path, outside: Path) -> None:
    root = _repo(tmp_path)
    os.link(outside, root / "LICENSE")
    os.mkfifo(root / "README.md")
    (root / "big.txt").write_bytes(b"x" * 2000)
    with pytest.raises(checkout.Refused, match="hard link"):
        checkout.read_bytes(root, "LICENSE", 1 << 20)
    with pytest.raises(checkout.Refused, match="not a regular file"):
        checkout.read_bytes(root, "README.md", 1 << 20)  # returns at once: a fifo never blocks the build
    with pytest.raises(checkout.Refused, match="over the 1000-byte cap"):
        checkout.read_bytes(root, "big.txt", 1000)
    assert licence.detect(root) == (licence.NO_LICENCE, None)


def test_licence_linking_out_is_not_read(tmp_path: Path, outside: Path) -> None:
    root = _repo(tmp_path)
    outside.write_text("Permission is hereby granted, free of charge ... without restriction " + SECRET)
    (root / "LICENSE").symlink_to(outside)
    assert licence.detect(root) == (licence.NO_LICENCE, None)


@pytest.mark.parametrize("head, commit, refused", [
    (COMMIT, COMMIT, None),
    ("ref: refs/heads/main", COMMIT, None),
    ("ref: ../../../../../../proc/self/environ", None, "something other than a refs/ name"),
    ("ref: refs/../../../outside/secret.txt", None, "something other than a refs/ name"),
    (SECRET, None, "neither a commit id nor a ref"),
])
def test_git_head_accepts_only_commits_and_refs(tmp_path: Path, head: str, commit: str | None,
                                                refused: str | None) -> None:
    root = _repo(tmp_path)
    (root / ".git" / "refs" / "heads").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text(head + "\n")
    (root / ".git" / "refs" / "heads" / "main").write_text(COMMIT + "\n")
    found = checkout.head_commit(root)
    assert found.commit == commit
    assert (found.refused is None) if refused is None else (refused in found.refused)


def test_refs_and_head_linking_out_are_refused(tmp_path: Path, outside: Path) -> None:
    root = _repo(tmp_path)
    (root / ".git" / "refs" / "heads").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / ".git" / "refs" / "heads" / "main").symlink_to(outside)
    (root / ".git" / "packed-refs").write_text(f"{COMMIT} refs/heads/other\n")
    assert checkout.head_commit(root).commit is None
    (root / ".git" / "HEAD").unlink()
    (root / ".git" / "HEAD").symlink_to(outside)
    found = checkout.head_commit(root)
    assert found.commit is None and "outside the checkout" in found.refused
    outside.write_text(f"{COMMIT} refs/heads/main\n")
    (root / ".git" / "HEAD").unlink()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / ".git" / "refs" / "heads" / "main").unlink()
    (root / ".git" / "packed-refs").unlink()
    (root / ".git" / "packed-refs").symlink_to(outside)
    assert checkout.head_commit(root).commit is None


def test_a_packed_ref_is_found(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / ".git" / "packed-refs").write_text(f"# pack-refs with: peeled\n{COMMIT} refs/heads/main\n")
    assert checkout.head_commit(root).commit == COMMIT


def test_the_record_says_why_head_was_refused(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: ../../../../proc/self/environ\n")
    record = record_from_checkout(normalise_repo_url("https://github.com/o/r"), root, "checkout")
    assert record.commit is None
    assert ".git/HEAD refused" in record.note


def test_walk_caps_depth_and_skips_links_and_undecodable_names(tmp_path: Path, outside: Path) -> None:
    root = _repo(tmp_path)
    deep = root
    for _ in range(6):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "deep.py").write_text("x = 1\n")
    (root / "out").symlink_to(outside.parent)
    os.symlink(outside, root / "linked.py")
    (root / os.fsdecode(b"caf\xe9.py")).write_text("y = 2\n")
    report = checkout.Walk([])
    found = list(checkout.walk(root, report, max_depth=3))
    assert found == ["pkg/mod.py"]
    reasons = dict(report.skipped)
    assert reasons["caf\\xe9.py"] == "its name is not UTF-8"
    assert any("deeper than 3 levels" in reason for reason in reasons.values())


def test_walk_stops_at_the_entry_cap(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    for i in range(50):
        (root / f"m{i:02}.py").write_text("")
    report = checkout.Walk([])
    assert len(list(checkout.walk(root, report, max_entries=20))) == 20  # m00..m19; "pkg" sorts after them
    assert "more than 20 entries" in report.skipped[-1][1]
