"""The last check before publishing: a secret of the environment, in any form a page holds it, is found."""

from __future__ import annotations

import gzip
import html
import json
import os
from pathlib import Path

import pytest

from paperproof.build import leaks

TOKEN = 'ghp_<fake>&"token"0123456789'


def _tree(tmp_path: Path, name: str, data: bytes) -> Path:
    tree = tmp_path / "tree"
    (tree / "repo" / "x").mkdir(parents=True)
    (tree / "index.html").write_bytes(b"<html>nothing here</html>")
    (tree / "repo" / "x" / name).write_bytes(data)
    return tree


@pytest.mark.parametrize("form", ["raw", "html", "json", "gzip"])
def test_a_secret_is_found_in_each_form(tmp_path: Path, form: str) -> None:
    text = {"raw": TOKEN, "html": html.escape(TOKEN), "json": json.dumps(TOKEN)[1:-1], "gzip": TOKEN}[form]
    data = f"<p>{text}</p>".encode()
    tree = _tree(tmp_path, "page.html", gzip.compress(data) if form == "gzip" else data)
    secrets = leaks.Secrets({"GITHUB_TOKEN": TOKEN, "HOME": "/root/not-a-secret"})
    with pytest.raises(leaks.Leak) as found:
        secrets.check_tree(tree)
    assert found.value.path == "repo/x/page.html" and found.value.variable == "GITHUB_TOKEN"
    assert TOKEN not in str(found.value) and "repo/x/page.html" in str(found.value)


def test_only_secret_looking_names_and_long_values_are_looked_for(tmp_path: Path) -> None:
    tree = _tree(tmp_path, "page.html", b"/root/not-a-secret short1 hunter2hunter2")
    environ = {"HOME": "/root/not-a-secret", "API_KEY": "short1", "DB_PASSWORD": "hunter2hunter2",
               "MY_SECRET_THING": "x" * 20, "HF_TOKEN": "y" * 20}
    secrets = leaks.Secrets(environ)
    assert sorted({name for _, name in secrets.forms}) == ["DB_PASSWORD", "HF_TOKEN", "MY_SECRET_THING"]
    with pytest.raises(leaks.Leak, match="DB_PASSWORD"):
        secrets.check_tree(tree)
    assert leaks.Secrets({"HOME": "/root"}).check_tree(tree) == 0


def test_files_linked_from_the_published_site_are_not_read_again(tmp_path: Path) -> None:
    published = tmp_path / "site"
    (published / "repo" / "x").mkdir(parents=True)
    (published / "repo" / "x" / "old.html").write_bytes(b"kept from the last build")
    tree = _tree(tmp_path, "new.html", b"new")
    os.link(published / "repo" / "x" / "old.html", tree / "repo" / "x" / "old.html")
    secrets = leaks.Secrets({"GITHUB_TOKEN": TOKEN})
    assert secrets.check_tree(tree, published) == 2  # index.html and new.html
    assert secrets.check_tree(tree) == 3


def test_take_removes_the_secrets_from_the_environment() -> None:
    environ = {"GITHUB_TOKEN": "z" * 30, "PATH": "/usr/bin", "AWS_SECRET_ACCESS_KEY": "w" * 30}
    secrets = leaks.take(environ)
    assert environ == {"PATH": "/usr/bin"}
    assert secrets.find(b"..." + b"w" * 30) == "AWS_SECRET_ACCESS_KEY"
    assert leaks.take({}).find(b"z" * 30) == "GITHUB_TOKEN"  # what was taken once is looked for by every build


def test_verify_output_is_checked() -> None:
    secrets = leaks.Secrets({"HF_TOKEN": "hf_" + "q" * 20})
    with pytest.raises(leaks.Leak, match="the output of verify contains the value of the environment variable HF_TOKEN"):
        secrets.check_text('{"reason": "hf_' + "q" * 20 + '"}', "the output of verify")
