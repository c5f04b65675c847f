"""What the builder starts on the host stays out of the checkout and cannot read the builder.

Each tool is started from inside a hostile checkout, as `paperproof verify .` starts it: the checkout ships
an interpreter of its own (`.venv/bin/python`) and a uv configuration naming an index of its choice, modules
named like the standard library's, and a Pagefind configuration. Nothing of it may run or be read.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from paperproof.build import publish, search
from paperproof.build.site_paths import SitePaths
from paperproof.plumbing import host_process
from paperproof.runner.environment import prepare, uv_binary
from paperproof.runner.executor import Zygote
from tests.test_environment import make_wheel

SECRET = "s3cr3t-builder-value-0123456789"


class Index:
    """A loopback HTTP server that counts what it was asked and has nothing (every path is 404)."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        asked = self.asked

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the standard library's name
                asked.append(self.path)
                self.send_error(404)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/simple"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def indexes():
    operator, repository = Index(), Index()
    yield operator, repository
    operator.close()
    repository.close()


def hostile_checkout(root: Path, marker: Path, index_url: str) -> Path:
    """A checkout whose files would run, or choose an index, if a tool read its folder's configuration."""
    root.mkdir()
    python = root / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f"#!/bin/sh\necho \"ran $0 $*\" >> {marker}\ncat /proc/[0-9]*/environ >> {marker}.environ "
                      f"2>/dev/null\nexec {sys.executable} \"$@\"\n")
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    (root / ".venv" / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).parent}\nversion = 3.11.0\n")
    (root / ".python-version").write_text(".venv/bin/python\n")
    (root / "uv.toml").write_text(f'index-url = "{index_url}"\n\n[pip]\nindex-url = "{index_url}"\n')
    (root / "pyproject.toml").write_text(f'[project]\nname = "x"\nversion = "0"\n\n[tool.uv]\nindex-url = "{index_url}"\n')
    (root / "pagefind.yml").write_text("site: /etc\noutput_path: /tmp/paperproof-pagefind-escape\n")
    for name in ("shutil.py", "fcntl.py", "json.py", "sitecustomize.py"):
        (root / name).write_text(f"open({str(marker)!r}, 'a').write('imported {name}\\n')\n")
    (root / "requirements.txt").write_text("paperproof-probe-pkg==1.0\n")
    (root / "scores.py").write_text(textwrap.dedent('''
        import numpy as np
        import paperproof_probe_pkg


        def margin_scores(probs: np.ndarray, labels: np.ndarray) -> np.ndarray:
            """Per-sample margin: the labelled class's probability minus the largest other one."""
            given = probs[np.arange(len(labels)), labels]
            other = probs.copy()
            other[np.arange(len(labels)), labels] = -np.inf
            return given - other.max(axis=1)
    '''))
    return root


def operator_settings(tmp_path: Path, index_url: str) -> dict[str, str]:
    """The operator's uv settings: a folder of wheels we build, and an index of their choosing (loopback)."""
    wheels = tmp_path / "wheels"
    wheels.mkdir(exist_ok=True)
    make_wheel(wheels, "paperproof-probe-pkg", "1.0", "VALUE = 42\n")
    return {"UV_FIND_LINKS": str(wheels), "UV_INDEX_URL": index_url}


@pytest.mark.skipif(uv_binary() is None, reason="uv is not installed")
def test_uv_started_inside_a_hostile_checkout_runs_none_of_its_files_and_asks_only_the_operators_index(
        tmp_path, indexes, monkeypatch):
    operator, repository = indexes
    marker = tmp_path / "marker"
    repo = hostile_checkout(tmp_path / "repo", marker, repository.url)
    for name, value in operator_settings(tmp_path, operator.url).items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(repo)  # where `paperproof verify .` starts uv
    env = prepare(repo, tmp_path / "envs")
    assert env.installed == ["paperproof-probe-pkg==1.0"], env.not_installed
    assert not marker.exists(), marker.read_text()
    assert not Path(f"{marker}.environ").exists()
    assert repository.asked == []
    assert operator.asked, "uv asked no index at all: the test would not see one chosen by the checkout"


@pytest.mark.skipif(uv_binary() is None, reason="uv is not installed")
def test_verify_in_a_hostile_checkout_keeps_its_files_and_the_builders_environment_out_of_reach(tmp_path, indexes):
    """The first example of `verify --help`, in the checkout, as its author runs it before publishing."""
    operator, repository = indexes
    marker = tmp_path / "marker"
    repo = hostile_checkout(tmp_path / "repo", marker, repository.url)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "PAPERPROOF_DEPLOY_TOKEN": SECRET,
           **operator_settings(tmp_path, operator.url)}
    done = subprocess.run([sys.executable, "-m", "paperproof", "verify", ".", "--json", "--entry", "margin_scores"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr
    samples = json.loads(done.stdout)
    assert [s["entry"] for s in samples] == ["margin_scores"]
    assert any("paperproof-probe-pkg==1.0" in note for note in samples[0]["notes"]), samples[0]["notes"]
    assert not marker.exists(), marker.read_text()
    assert repository.asked == []
    assert not (repo / ".paperproof-cache").exists(), "the environments were cached inside the checkout"
    assert SECRET not in done.stdout + done.stderr


def test_verify_refuses_an_environments_folder_inside_the_checkout(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    done = subprocess.run([sys.executable, "-m", "paperproof", "verify", str(repo), "--environments",
                           str(repo / "envs")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "inside the checkout" in done.stderr


BUILDER = textwrap.dedent("""
    import os, sys
    from paperproof.plumbing import host_process
    if sys.argv[1] == "shielded":
        host_process.shield()
    with host_process.scratch() as folder:
        done = host_process.run(["/bin/sh", "-c", 'pwd; cat /proc/$0/environ; echo; grep -h "^CapEff" /proc/self/status',
                                 str(os.getpid())], folder, timeout=30)
    print(done.stdout + done.stderr)
""")


def run_builder(tmp_path: Path, capabilities: bool, shielded: bool) -> list[str]:
    """What a tool started by a builder (holding a secret in its environment) could read of it. The builder runs
    with every capability of root, or with none (as any user does: then only its being non-dumpable protects it)."""
    env = {"PAPERPROOF_DEPLOY_TOKEN": SECRET, "PYTHONPATH": str(Path(host_process.__file__).parents[2])}
    argv = [sys.executable, "-c", BUILDER, "shielded" if shielded else "open"]
    if capabilities:
        done = subprocess.run(argv, cwd=tmp_path, env={"PATH": os.environ["PATH"], **env}, capture_output=True,
                              text=True, timeout=60)
    else:
        with host_process.scratch() as folder:
            done = host_process.run(argv, folder, timeout=60, extra=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.parametrize("capabilities", [True, False] if os.getuid() == 0 else [False])
def test_a_host_tool_cannot_read_the_builders_environment(tmp_path, capabilities):
    lines = run_builder(tmp_path, capabilities, shielded=True)
    assert lines[0].startswith(os.path.join(tempfile.gettempdir(), "paperproof-host-")), lines[0]
    assert not any(SECRET in line for line in lines)
    assert any("Permission denied" in line for line in lines)
    assert "CapEff:\t0000000000000000" in lines


def test_an_unshielded_builder_of_the_same_user_would_be_read(tmp_path):
    """The control: without `shield`, a tool of the builder's own uid and capabilities reads its environment."""
    lines = run_builder(tmp_path, capabilities=False, shielded=False)
    assert any(SECRET in line for line in lines)


def test_a_host_tool_is_started_by_an_absolute_path_only(tmp_path):
    with host_process.scratch() as folder, pytest.raises(ValueError, match="absolute path"):
        host_process.run(["uv", "--version"], folder, timeout=10)


def test_the_deleter_started_inside_a_hostile_checkout_imports_nothing_of_it(tmp_path, monkeypatch):
    marker = tmp_path / "marker"
    repo = hostile_checkout(tmp_path / "repo", marker, "http://127.0.0.1:9/simple")
    site = tmp_path / "site"
    old = tmp_path / "old-tree"
    (old / "a").mkdir(parents=True)
    (old / "a" / "page.html").write_text("x")
    monkeypatch.chdir(repo)
    paths = SitePaths(site)
    publish.discard(old, paths)
    deadline = time.monotonic() + 30
    while any(p.name != ".lock" for p in paths.trash.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [p.name for p in paths.trash.iterdir() if p.name != ".lock"] == [], "the deleter did not run"
    assert not marker.exists(), marker.read_text()


@pytest.mark.skipif(search.binary() is None, reason="no Pagefind binary")
def test_pagefind_started_inside_a_hostile_checkout_runs_in_a_scratch_folder_without_the_builders_environment(
        tmp_path, monkeypatch):
    repo = hostile_checkout(tmp_path / "repo", tmp_path / "marker", "http://127.0.0.1:9/simple")
    monkeypatch.chdir(repo)  # Pagefind reads `pagefind.yml` where it starts
    monkeypatch.setenv("PAPERPROOF_DEPLOY_TOKEN", SECRET)
    indexer = search.Indexer(search.binary())
    try:
        indexer._ask({"type": "NewIndex", "config": {"force_language": "en"}})  # Pagefind itself answers: past exec
        folder = os.readlink(f"/proc/{indexer.process.pid}/cwd")
        environ = Path(f"/proc/{indexer.process.pid}/environ").read_bytes().split(b"\0")
    finally:
        indexer.close()
    assert folder.startswith(os.path.join(tempfile.gettempdir(), "paperproof-pagefind-")), folder
    assert not any(SECRET.encode() in variable for variable in environ)
    assert f"HOME={folder}".encode() in environ
    assert not Path(folder).exists(), "the scratch folder outlived the indexer"


def test_the_sandbox_zygote_started_inside_a_checkout_works_outside_it(tmp_path, monkeypatch):
    """The zygote keeps root's capabilities (it makes the sandbox's namespaces), so it runs only our code: `-I`,
    an allow-listed environment, and never the builder's folder."""
    repo = hostile_checkout(tmp_path / "repo", tmp_path / "marker", "http://127.0.0.1:9/simple")
    monkeypatch.chdir(repo)
    monkeypatch.setenv("PAPERPROOF_DEPLOY_TOKEN", SECRET)
    zygote = Zygote()
    try:
        process = zygote._start()
        folder = os.readlink(f"/proc/{process.pid}/cwd")
        environ = Path(f"/proc/{process.pid}/environ").read_bytes()
    finally:
        zygote.close()
    assert folder == "/"
    assert SECRET.encode() not in environ
    assert not (tmp_path / "marker").exists()
