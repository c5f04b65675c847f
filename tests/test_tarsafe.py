"""Safe unpacking: every hostile tarball of the corpus is refused with its reason, and nothing escapes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paperproof.catalogue import tarsafe
from tests.tar_corpus import SMALL, TOP, benign, corpus


def _everything(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.parametrize("name", sorted(corpus(Path("/nonexistent")).keys()))
def test_hostile_tarball_is_refused_with_its_reason(tmp_path: Path, name: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    escape = tmp_path / "escape"
    data, reason = corpus(escape)[name]
    tarball = work / "evil.tar.gz"
    tarball.write_bytes(data)
    before = _everything(tmp_path)
    dest = work / "dest"
    with pytest.raises(tarsafe.Refused) as refused:
        tarsafe.unpack(tarball, dest, SMALL)
    assert reason in str(refused.value), (name, str(refused.value))
    assert not dest.exists(), "a refused tarball leaves nothing behind"
    assert not escape.exists() and not Path(str(escape / "absolute")).exists()
    assert _everything(tmp_path) == before, "nothing was written anywhere"


def test_a_refusal_names_the_member(tmp_path: Path) -> None:
    data, _ = corpus(tmp_path / "escape")["symlink_to_etc"]
    (tmp_path / "t.tar.gz").write_bytes(data)
    with pytest.raises(tarsafe.Refused) as refused:
        tarsafe.unpack(tmp_path / "t.tar.gz", tmp_path / "d", SMALL)
    assert refused.value.member == f"{TOP}/etc"
    assert str(refused.value) == f"member '{TOP}/etc': symlink to absolute path '/etc'"


def test_a_benign_tarball_unpacks_with_inside_links(tmp_path: Path) -> None:
    (tmp_path / "ok.tar.gz").write_bytes(benign())
    dest = tmp_path / "tree"
    tarsafe.unpack(tmp_path / "ok.tar.gz", dest, SMALL)
    root = tarsafe.single_root(dest)
    assert root == dest / TOP
    assert (root / "pkg" / "mod.py").read_text() == "def f(x):\n    return x\n"
    assert os.readlink(root / "pkg" / "alias.py") == "mod.py"
    assert (root / "docs" / "mod.py").read_text().startswith("def f")  # a link to a folder inside the root
    copy = root / "copy.md"
    assert copy.is_file() and not copy.is_symlink() and copy.read_text() == "# benign\n"  # hard link: a copy
    assert os.stat(root / "run.sh").st_mode & 0o111
    assert not os.stat(root / "README.md").st_mode & 0o111


def test_unpack_refuses_an_existing_destination(tmp_path: Path) -> None:
    (tmp_path / "ok.tar.gz").write_bytes(benign())
    (tmp_path / "tree").mkdir()
    with pytest.raises(FileExistsError):
        tarsafe.unpack(tmp_path / "ok.tar.gz", tmp_path / "tree", SMALL)


def test_default_limits_accept_what_small_refuses(tmp_path: Path) -> None:
    data, _ = corpus(tmp_path / "escape")["too_many_files"]
    (tmp_path / "many.tar.gz").write_bytes(data)
    tarsafe.unpack(tmp_path / "many.tar.gz", tmp_path / "tree")
    assert len(list((tmp_path / "tree" / TOP).iterdir())) == 25
