"""Repository records from local checkouts and tarballs; every link gets a record."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from paperproof.catalogue.repo_url import normalise_repo_url
from paperproof.catalogue.repos import LocalRepos, readme_text

MIT = "MIT License\n\nPermission is hereby granted, free of charge, to any person ... without restriction ...\n"


def make_checkout(root: Path, licence_text: str | None = MIT) -> None:
    root.mkdir(parents=True)
    (root / "code.py").write_text("def f(x):\n    return x\n")
    (root / "README.md").write_text("# hello\n")
    if licence_text:
        (root / "LICENSE").write_text(licence_text)


def test_checkouts_in_both_layouts_and_tarballs(tmp_path):
    make_checkout(tmp_path / "alice+one")
    make_checkout(tmp_path / "bob" / "two", licence_text=None)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, text in (("carol-three-abc123/code.py", "def g():\n    pass\n"), ("carol-three-abc123/LICENSE", MIT)):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    (tmp_path / "carol+three.tar.gz").write_bytes(buffer.getvalue())
    repos = LocalRepos(tmp_path, unpack_dir=tmp_path.parent / "unpacked")

    one = repos.record_for(normalise_repo_url("https://github.com/Alice/One.git"))
    assert one.source == "checkout" and one.licence == "MIT" and one.readme == "README.md" and one.has_source
    two = repos.record_for(normalise_repo_url("https://github.com/bob/two/tree/main/src"))
    assert two.licence == "NONE" and two.licence_file is None
    three = repos.record_for(normalise_repo_url("https://www.github.com/carol/three/"))
    assert three.source == "tarball" and three.licence == "MIT"
    assert Path(three.snapshot, "code.py").is_file()
    none = repos.record_for(normalise_repo_url("https://github.com/dave/four"))
    assert none.source == "none" and not none.has_source and "no checkout" in none.note
    assert none.licence is None and none.reach is None


def test_tarball_escaping_its_root_is_refused(tmp_path):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info = tarfile.TarInfo("../escape.py")
        info.size = 1
        archive.addfile(info, io.BytesIO(b"x"))
    (tmp_path / "eve+bad.tar.gz").write_bytes(buffer.getvalue())
    record = LocalRepos(tmp_path, unpack_dir=tmp_path / "u").record_for(normalise_repo_url("https://github.com/eve/bad"))
    assert record.source == "none" and "refused" in record.note
    assert not (tmp_path / "escape.py").exists() and not (tmp_path / "u" / "escape.py").exists()


def test_git_head_pins_the_commit(tmp_path):
    root = tmp_path / "alice+one"
    make_checkout(root)
    (root / ".git" / "refs" / "heads").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / ".git" / "refs" / "heads" / "main").write_text("0123456789abcdef0123456789abcdef01234567\n")
    record = LocalRepos(tmp_path).record_for(normalise_repo_url("https://github.com/alice/one"))
    assert record.commit == "0123456789abcdef0123456789abcdef01234567"
    assert record.file_url("code.py") == "https://github.com/alice/one/blob/0123456789abcdef0123456789abcdef01234567/code.py"


def test_readme_text_is_the_checkouts_readme_and_empty_without_source_or_readme(tmp_path):
    make_checkout(tmp_path / "alice+one")
    (tmp_path / "bob+bare").mkdir()
    (tmp_path / "bob+bare" / "code.py").write_text("x = 1\n")
    repos = LocalRepos(tmp_path)
    assert readme_text(repos.record_for(normalise_repo_url("https://github.com/alice/one"))) == "# hello\n"
    assert readme_text(repos.record_for(normalise_repo_url("https://github.com/bob/bare"))) == ""
    absent = repos.record_for(normalise_repo_url("https://github.com/carol/absent"))
    assert absent.snapshot is None and readme_text(absent) == ""
