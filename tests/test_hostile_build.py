"""Hostile repositories under `--repos`, attacking the builder itself (outside the sandbox).

`paperproof build` runs as a real subprocess, with fake tokens in its environment, on checkouts and
tarballs that link their README, licence and `.git/HEAD` to `/proc/self/environ` and to a file outside
the checkout, a tarball bomb, a module the parser cannot hold and a name that is not UTF-8, beside an
honest repository. Afterwards the test reads every byte of the site, the cache and the printed
summary: no token and no byte of the outside file is anywhere, the honest repository ran, each hostile
one has its page saying why, and the bomb was never unpacked.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.test_archive import LINK, PAPER, write_dump

TOKENS = {"GITHUB_TOKEN": "ghp_paperproofFakeBuilderToken0123456789", "HF_TOKEN": "hf_paperproofFakeHubToken98765"}
OUTSIDE_SECRET = "paperproof-root-only-secret-5150"
ENVIRON = "../" * 12 + "proc/self/environ"
GOOD = '''import numpy as np


def mean_margin(probs: np.ndarray) -> float:
    """Mean gap between the top two probabilities.

    Args:
        probs: predicted probabilities, shape (N, K)
    """
    top = np.sort(probs, axis=1)
    return float(np.mean(top[:, -1] - top[:, -2]))
'''

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="/proc/self/environ")


def _tarball(path: Path, files: dict[str, bytes], zeros: int = 0) -> None:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(f"top-0000/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        if zeros:
            info = tarfile.TarInfo("top-0000/weights.bin")
            info.size = zeros
            archive.addfile(info, _Zeros(zeros))


class _Zeros(io.RawIOBase):
    def __init__(self, size: int) -> None:
        self.left = size

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        self.left -= n
        return bytes(n)


def _corpus(tmp_path: Path) -> tuple[Path, Path, Path]:
    secret = tmp_path / "root-only" / "credentials"
    secret.parent.mkdir()
    secret.write_text(OUTSIDE_SECRET + "\n")
    secret.chmod(0o600)
    repos = tmp_path / "repos"
    good = repos / "lab+good"
    good.mkdir(parents=True)
    (good / "margins.py").write_text(GOOD)
    (good / "README.md").write_text("# margins\n")
    linked = repos / "lab+linked"
    (linked / ".git").mkdir(parents=True)
    (linked / "margins.py").write_text(GOOD)
    (linked / "README.md").symlink_to("/proc/self/environ")
    (linked / "LICENSE").symlink_to(secret)
    (linked / "docs").symlink_to(secret.parent)
    (linked / ".git" / "HEAD").write_text(f"ref: {ENVIRON}\n")
    climbing = repos / "lab+climbing"
    (climbing / ".git" / "refs" / "heads").mkdir(parents=True)
    (climbing / "margins.py").write_text(GOOD)
    (climbing / "README.md").symlink_to("../" * 12 + str(secret).lstrip("/"))
    (climbing / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (climbing / ".git" / "refs" / "heads" / "main").symlink_to("/proc/self/environ")
    os.link(secret, climbing / "LICENSE")  # a hard link: the file outside, under a name inside
    _tarball(repos / "lab+tarhead.tar.gz", {"margins.py": GOOD.encode(), ".git/HEAD": f"ref: {ENVIRON}\n".encode()})
    _tarball(repos / "lab+bomb.tar.gz", {"margins.py": GOOD.encode()}, zeros=160 * 1024**2)
    odd = repos / "lab+odd"
    odd.mkdir()
    (odd / "margins.py").write_text(GOOD)
    (odd / "deep.py").write_text("def f():\n    return " + "+".join(["1"] * 60_000) + "\n")
    (odd / os.fsdecode(b"m\xe9trics.py")).write_text(GOOD)
    (repos / "lab+root").symlink_to("/")  # the whole host as a "checkout"
    names = ["good", "linked", "climbing", "tarhead", "bomb", "odd", "root"]
    papers = [{**PAPER, "paper_url": f"https://paperswithcode.com/paper/p-{n}", "title": f"Paper {n}",
               "arxiv_id": f"2101.0000{i}"} for i, n in enumerate(names)]
    links = [{**LINK, "paper_url": p["paper_url"], "paper_title": p["title"], "paper_arxiv_id": p["arxiv_id"],
              "repo_url": f"https://github.com/lab/{n}"} for p, n in zip(papers, names)]
    archive = tmp_path / "archive"
    write_dump(archive, "papers-with-abstracts", papers)
    write_dump(archive, "links-between-papers-and-code", links)
    return archive, repos, secret


def _build(tmp_path: Path, archive: Path, repos: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, **TOKENS, "SOURCE_DATE_EPOCH": "1700000000"}
    return subprocess.run(
        [sys.executable, "-m", "paperproof", "build", "--archive", str(archive), "--repos", str(repos),
         "--out", str(tmp_path / "site"), "--cache", str(tmp_path / "cache"), "--workers", "1", "--jobs", "1"],
        env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)


def _every_byte(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink())


def test_hostile_checkouts_publish_nothing_of_the_host(tmp_path: Path) -> None:
    archive, repos, secret = _corpus(tmp_path)
    done = _build(tmp_path, archive, repos)
    assert done.returncode == 0, done.stderr[-3000:]
    site, cache = tmp_path / "site", tmp_path / "cache"
    # the site and the cache: no token, no byte of the outside file, no environment at all
    for folder in (site, cache):
        everything = _every_byte(folder)
        for value in (*TOKENS.values(), OUTSIDE_SECRET):
            assert value.encode() not in everything, (folder, value)
        assert b"SOURCE_DATE_EPOCH=" not in everything and b"PATH=/" not in everything
    for value in (*TOKENS.values(), OUTSIDE_SECRET):
        assert value not in done.stdout + done.stderr
    # the host: the bomb was refused before a byte of it was written
    assert sum(p.stat().st_size for p in cache.rglob("*") if p.is_file()) < 64 * 1024**2
    assert secret.read_text() == OUTSIDE_SECRET + "\n"
    # the statuses and the pages
    twin = lambda name: json.loads((site / "repo" / f"lab+{name}.json").read_text())  # noqa: E731
    good = twin("good")
    assert [s["status"] for s in good["samples"]] == ["ran"]
    linked = twin("linked")
    assert linked["commit"] is None and linked["readme"] is None and linked["licence"] == "NONE"
    assert ".git/HEAD refused" in linked["note"]
    assert [s["status"] for s in linked["samples"]] == ["ran"]  # its honest code still runs
    climbing = twin("climbing")
    assert climbing["commit"] is None and climbing["readme"] is None and climbing["licence"] == "NONE"
    tarhead = twin("tarhead")
    assert tarhead["source"] == "tarball" and tarhead["commit"] is None and ".git/HEAD refused" in tarhead["note"]
    bomb = twin("bomb")
    assert bomb["source"] == "none" and "decompression bomb" in bomb["note"]
    assert "decompression bomb" in (site / "repo" / "lab+bomb" / "index.html").read_text()
    root = twin("root")
    assert root["source"] == "none" and root["note"] == "lab+root under --repos is a link: not followed"
    odd = twin("odd")
    assert [s["path"] for s in odd["samples"]] == ["margins.py"]
    assert "lab/odd/deep.py: nested too deeply to parse" in done.stdout
    assert "lab/odd/m\\xe9trics.py: its name is not UTF-8" in done.stdout


def test_a_secret_in_an_output_fails_the_build_and_publishes_nothing(tmp_path: Path) -> None:
    archive, repos, _ = _corpus(tmp_path)
    (repos / "lab+good" / "README.md").write_text(f"# margins\n\nour key: {TOKENS['HF_TOKEN']}\n")
    done = _build(tmp_path, archive, repos)
    assert done.returncode == 2
    assert "repo/lab+good/index.html contains the value of the environment variable HF_TOKEN" in done.stderr
    assert TOKENS["HF_TOKEN"] not in done.stdout + done.stderr
    assert not (tmp_path / "site").exists()
    assert not (tmp_path / ".site.staging").exists()
    # the README fixed, the next build publishes, and nothing of the failed one is in it
    (repos / "lab+good" / "README.md").write_text("# margins\n")
    again = _build(tmp_path, archive, repos)
    assert again.returncode == 0, again.stderr[-3000:]
    assert TOKENS["HF_TOKEN"].encode() not in _every_byte(tmp_path / "site")


def test_verify_of_a_hostile_checkout_prints_nothing_of_the_host(tmp_path: Path) -> None:
    """The `reproduce` line used to carry the first characters of whatever `.git/HEAD` pointed at."""
    _, repos, _ = _corpus(tmp_path)
    env = {**os.environ, **TOKENS}
    done = subprocess.run([sys.executable, "-m", "paperproof", "verify", str(repos / "lab+linked"), "--json",
                           "--workers", "1"], env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    (sample,) = json.loads(done.stdout)
    assert sample["status"] == "ran"
    assert sample["reproduce"].startswith("paperproof verify CHECKOUT --entry margins.py::mean_margin --json")
    for value in (*TOKENS.values(), OUTSIDE_SECRET, "SOURCE_DATE_EPOCH", "PATH="):
        assert value not in done.stdout + done.stderr
