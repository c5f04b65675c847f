"""The last check before publishing: a secret of the environment, in any form a page holds it, is found."""

from __future__ import annotations

import gzip
import html
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from paperproof.build import host_secrets, leaks
from tests.test_hostile_build import GOOD

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


# --- one scan for every form, and the host's credential files ---


def test_every_form_is_found_wherever_it_lies_and_nothing_else_is(tmp_path: Path) -> None:
    """The scan finds each form by an anchor at its rarest byte: at the start, the end and the middle of a file,
    next to another secret's anchor, for values of common bytes only (looked for whole) and of rare ones."""
    import random

    rng = random.Random(7)
    page = (Path(__file__).parent.parent / "paperproof" / "templates" / "base.html").read_bytes() * 3
    values = {"GITHUB_TOKEN": "ghp_Zq9" + "x1" * 15, "DB_PASSWORD": "c3" * 8, "HF_TOKEN": "hf_<&\"'>é" + "Q" * 6,
              "SHORT_KEY": "a1b2c3d4"}
    host = [("".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") for _ in range(64)),
             f"/home/me/.ssh/id_{i}") for i in range(40)]
    secrets = leaks.Secrets(values, host)
    assert secrets.find(page) is None
    for form, name in secrets.forms:
        for at in (0, len(page) // 2, len(page)):
            assert secrets.find(page[:at] + form + page[at:]) == name, (form, at)
        assert secrets.find(page + form[:-1]) is None  # a form cut short is not that form
    assert secrets.find(("x" + host[3][0] + "x").encode()) == "/home/me/.ssh/id_3"


HOME_FILES = {
    ".netrc": "machine api.example.org login alice password netrc-Secret-0001\n",
    ".git-credentials": "https://alice:ghp_GitCredential0002@github.com\n",
    ".pypirc": "[pypi]\nusername = __token__\npassword = pypi-PypircToken0003\n",
    ".aws/credentials": "[default]\naws_access_key_id = AKIAEXAMPLE0004\naws_secret_access_key = awsSecret/0005+X\n"
                        "region = eu-west-1\n",
    ".docker/config.json": json.dumps({"auths": {"https://index.docker.io/v1/": {"auth": "ZG9ja2VyOjAwMDY="}},
                                       "credsStore": "desktop"}),
    ".config/gh/hosts.yml": "github.com:\n    user: alice\n    oauth_token: gho_GhHosts0007\n    git_protocol: https\n",
    ".kube/config": "users:\n- name: alice\n  user:\n    token: kube-Token-0008\nclusters:\n- cluster:\n"
                    "    certificate-authority-data: Q0EgY2VydGlmaWNhdGU=\n    server: https://10.0.0.1:6443\n",
    ".npmrc": "//registry.npmjs.org/:_authToken=npm_NpmToken0009\n",
    ".cache/huggingface/token": "hf_HubTokenFile0010\n",
    ".ssh/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ0011\n"
                       "/QyNTUxOQAAACDcqSshKey0012\n-----END OPENSSH PRIVATE KEY-----\n",
    ".ssh/id_ed25519.pub": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPublicKey0013 alice@host\n",
}
HOME_SECRETS = {"netrc-Secret-0001": ".netrc", "ghp_GitCredential0002": ".git-credentials",
                "pypi-PypircToken0003": ".pypirc", "AKIAEXAMPLE0004": ".aws/credentials",
                "awsSecret/0005+X": ".aws/credentials", "ZG9ja2VyOjAwMDY=": ".docker/config.json",
                "gho_GhHosts0007": ".config/gh/hosts.yml", "kube-Token-0008": ".kube/config",
                "npm_NpmToken0009": ".npmrc", "hf_HubTokenFile0010": ".cache/huggingface/token",
                "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ0011": ".ssh/id_ed25519",
                "/QyNTUxOQAAACDcqSshKey0012": ".ssh/id_ed25519"}


def fake_home(folder: Path) -> Path:
    for name, text in HOME_FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def test_the_values_of_the_host_credential_files_are_taken_and_nothing_else(tmp_path: Path) -> None:
    home = fake_home(tmp_path / "home")
    found = dict(host_secrets.host_values((str(home),)))
    assert {value: path.removeprefix(f"{home}/") for value, path in found.items()} == HOME_SECRETS
    # what the files say besides their secrets (users, hosts, key names, a public key) is no secret
    for shown in ("alice", "api.example.org", "github.com", "__token__", "eu-west-1", "desktop", "https://10.0.0.1:6443",
                  "Q0EgY2VydGlmaWNhdGU=", "AAAAC3NzaC1lZDI1NTE5AAAAIPublicKey0013", "password", "oauth_token"):
        assert shown not in found


def test_shadow_and_pgpass_records_give_their_secret_field() -> None:
    shadow = "root:$y$j9T$salt$HashOfRoot:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\nbob:!$6$s$Locked:1:0::::\n"
    assert host_secrets.values_of(shadow, "records") == ["$y$j9T$salt$HashOfRoot", "$6$s$Locked"]
    assert host_secrets.values_of("db.example.org:5432:*:alice:PgPassword1\n", "records") == ["PgPassword1"]
    assert host_secrets.values_of("description: set the password here to change_me_please\n") == []
    assert host_secrets.values_of("machine h\n  login u\n  password NetrcOnItsLine\n", "netrc") == ["NetrcOnItsLine"]


def test_host_files_are_read_bounded(tmp_path: Path) -> None:
    """A FIFO is not waited on, a link out of the home folder is not followed (one inside it is), a file over
    the cap and a folder are skipped."""
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    outside = tmp_path / "outside-netrc"
    outside.write_text("machine x login y password OutsideSecret1\n")
    (home / ".netrc").symlink_to(outside)
    os.mkfifo(home / ".git-credentials")
    (home / "dotfiles").mkdir()
    (home / "dotfiles" / "pypirc").write_text("[pypi]\npassword = InsideLinkSecret2\n")
    (home / ".pypirc").symlink_to("dotfiles/pypirc")
    (home / ".kube").mkdir()
    (home / ".kube" / "config").write_text("token: TooBigSecret3\n" + "#" * host_secrets.FILE_BYTES)
    (home / ".aws" / "credentials").mkdir()
    assert host_secrets.host_values((str(home),)) == [("InsideLinkSecret2", str(home / ".pypirc"))]


def test_take_looks_for_the_host_secrets_and_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = fake_home(tmp_path / "home")
    monkeypatch.setattr(host_secrets, "homes", lambda: [str(home)])
    secrets = leaks.take({})
    page = b"<p>" + html.escape("awsSecret/0005+X").encode() + b"</p>"
    assert secrets.find(page) == str(home / ".aws" / "credentials")
    with pytest.raises(leaks.Leak) as found:
        secrets.check_text("key: " + json.dumps("gho_GhHosts0007"), "the output of verify")
    assert str(found.value).startswith(f"the output of verify contains a secret of the host file {home}/.config/gh/hosts.yml")
    assert "gho_GhHosts0007" not in str(found.value)


# --- the build and verify, as real processes, with a home folder full of credentials ---



def _archive(tmp_path: Path, names: list[str]) -> Path:
    from tests.test_archive import LINK, PAPER, write_dump

    papers = [{**PAPER, "paper_url": f"https://paperswithcode.com/paper/p-{n}", "title": f"Paper {n}",
               "arxiv_id": f"2101.0000{i}"} for i, n in enumerate(names)]
    links = [{**LINK, "paper_url": p["paper_url"], "paper_title": p["title"], "paper_arxiv_id": p["arxiv_id"],
              "repo_url": f"https://github.com/lab/{n}"} for p, n in zip(papers, names)]
    archive = tmp_path / "archive"
    write_dump(archive, "papers-with-abstracts", papers)
    write_dump(archive, "links-between-papers-and-code", links)
    return archive


def _run(tmp_path: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(home), "SOURCE_DATE_EPOCH": "1700000000"}
    return subprocess.run([sys.executable, "-m", "paperproof", *args], env=env, capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)


def _every_byte(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink())


def test_a_build_quoting_a_host_secret_fails_naming_the_file_and_links_to_them_are_not_read(tmp_path: Path) -> None:
    home = fake_home(tmp_path / "home")
    repos = tmp_path / "repos"
    linking = repos / "lab+linking"
    linking.mkdir(parents=True)
    (linking / "margins.py").write_text(GOOD)
    (linking / "README.md").symlink_to(home / ".netrc")
    (linking / "requirements.txt").symlink_to(home / ".git-credentials")
    (linking / "LICENSE").symlink_to(home / ".ssh" / "id_ed25519")
    quoting = repos / "lab+quoting"
    quoting.mkdir()
    (quoting / "margins.py").write_text(GOOD)
    (quoting / "README.md").write_text("# margins\n\nDeploy with `netrc-Secret-0001`.\n")
    archive = _archive(tmp_path, ["linking", "quoting"])
    build = ("build", "--archive", str(archive), "--repos", str(repos), "--out", str(tmp_path / "site"),
             "--cache", str(tmp_path / "cache"), "--workers", "1", "--jobs", "1")
    done = _run(tmp_path, home, *build)
    assert done.returncode == 2, done.stderr[-3000:]
    assert f"repo/lab+quoting/index.html contains a secret of the host file {home}/.netrc" in done.stderr
    assert "netrc-Secret-0001" not in done.stdout + done.stderr
    assert not (tmp_path / "site").exists()
    # the quote taken out, the build publishes, and nothing of the home folder is in the site or was printed
    (quoting / "README.md").write_text("# margins\n")
    again = _run(tmp_path, home, *build)
    assert again.returncode == 0, again.stderr[-3000:]
    everything = _every_byte(tmp_path / "site")
    for value in HOME_SECRETS:
        assert value.encode() not in everything and value not in again.stdout + again.stderr
    assert json.loads((tmp_path / "site" / "repo" / "lab+linking.json").read_text())["readme"] is None


@pytest.mark.parametrize("json_output", [False, True])
def test_verify_prints_no_host_secret(tmp_path: Path, json_output: bool) -> None:
    """The entry's name is the GitHub CLI's token: it would be on every line `verify` prints of it."""
    home = fake_home(tmp_path / "home")
    repo = tmp_path / "quoting"
    repo.mkdir()
    (repo / "margins.py").write_text(GOOD.replace("def mean_margin(", "def gho_GhHosts0007("))
    done = _run(tmp_path, home, "verify", str(repo), "--workers", "1", *(["--json"] if json_output else []))
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stdout == ""
    assert f"the output of verify contains a secret of the host file {home}/.config/gh/hosts.yml" in done.stderr
    assert "gho_GhHosts0007" not in done.stdout + done.stderr
