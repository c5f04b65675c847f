"""Every file the builder reads from a checkout goes through one guard, `catalogue/checkout.py`.

Two tests hold it. One walks the package's source for every call that opens or reads a file (`open`, `os.open`,
`Path.open`, `read_text`, `read_bytes`, `np.load`) and asks that each sits in the guard or is named below with
what it reads, which is never a checkout's file: a new reader fails it until it is routed through the guard or
named here. The other runs `paperproof verify` and `paperproof build --repos` on checkouts that hold every kind
of file a stage reads (declarations linked out of the checkout, a fifo among them, notebooks, scripts, a README
with images), with an audit hook (`sys.addaudithook`) in the builder that records every file opened: none under
a checkout may be opened other than the guard's way (one component at a time, `O_NOFOLLOW`).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import paperproof
from tests.test_archive import LINK, PAPER, write_dump

PACKAGE = Path(paperproof.__file__).parent
GUARD = "catalogue/checkout.py"

OURS = "the builder's own output, cache, store or lock (written by it, never a checkout's path)"
PACKAGE_FILES = "paperproof's own files (templates, sources fingerprinted)"
INPUTS = "the archive's dumps and the harvest's tarballs, read by parsers that bound them, not checkouts"
SANDBOX = "runs inside the sandbox, or reads /proc, /sys or /dev of the sandbox's own processes"
WHEELS = "packages installed from registry wheels into an environment we built, read with ast, never run"
HOST = "the builder's host: credentials files read for the leak check (capped, no link followed)"
# module (from the package root) -> function (qualified) -> what it reads, when that is not a checkout's file
READERS: dict[str, dict[str, str]] = {
    "build/host_secrets.py": {"read_capped": HOST},
    "build/leaks.py": {"_read": "the site files the build just wrote, for the leak check"},
    "build/links.py": {"_prefetch": OURS},
    "build/manifest.py": {"code_version": PACKAGE_FILES, "Manifest.file_digest": OURS, "read_marker": OURS},
    "build/regenerate.py": {"regenerate": OURS},
    "build/render.py": {"stylesheet": PACKAGE_FILES, "static_files": PACKAGE_FILES},
    "build/site_files.py": {"content_digest": "the site's published files, hashed for the manifest and --check"},
    "build/search.py": {"index_shards.one": OURS, "version": PACKAGE_FILES},
    "catalogue/archive.py": {"_open": INPUTS},
    "cli.py": {"_published": "the site marker a build replaces, read to tell whether an interrupted build published"},
    "catalogue/community.py": {"load": PACKAGE_FILES},
    "catalogue/damage.py": {"_Inflate.__init__": INPUTS, "_Text.__init__": INPUTS},
    "catalogue/github.py": {"GitHubClient.download": OURS},
    "catalogue/readahead.py": {"ReadAhead.__init__": INPUTS},
    "catalogue/repos.py": {"LocalRepos._unpack": INPUTS},
    "catalogue/shipped.py": {"code_fingerprint": PACKAGE_FILES, "ShippedResults.__init__": PACKAGE_FILES},
    "catalogue/store.py": {"Store.read_record": OURS, "Store.tarball_for": OURS, "Store.read_state": OURS,
                           "Store.settled": OURS, "Store.settle": OURS},
    "catalogue/tarsafe.py": {"_write_file": OURS},
    "fixtures/run_files.py": {"_write_one": "the planted run's files, written in the sample's scratch folder"},
    "fixtures/stubs.py": {"_imported_by_installed": WHEELS, "_fake_registered": WHEELS},
    "plumbing/files.py": {"write_new": OURS, "update_tree": OURS, "sync_tree": OURS},
    "plumbing/interrupts.py": {"_parents": "/proc/<pid>/stat of the host's processes, to end the builder's workers",
                               "_running": "/proc/<pid>/stat of one of the builder's workers"},
    "plumbing/locks.py": {"hold": OURS},
    "runner/cgroup.py": {"_read": SANDBOX, "_write": SANDBOX},
    "runner/environment.py": {"prepare": OURS, "_provided_by": OURS},
    "runner/import_names.py": {"_read": WHEELS},
    "runner/executor.py": {"ResultCache.get": OURS},
    "runner/harness.py": {"main": SANDBOX},
    "runner/protocols.py": {"_written_table": SANDBOX},
    "runner/meter.py": {"Meter.open": SANDBOX, "Meter.look_in": SANDBOX, "Meter._waited": SANDBOX,
                        "Meter._read": SANDBOX},
    "runner/refusals.py": {"net_counters": SANDBOX, "opened_path": SANDBOX},
    "runner/sandbox.py": {"Reaper.start": SANDBOX, "_reap_forever": SANDBOX, "_write": SANDBOX, "_bind": SANDBOX,
                          "mapped_bytes": SANDBOX, "write_font_config": SANDBOX},
    "runner/slots.py": {"Slot.__init__": OURS},
    "runner/torch_builds.py": {"elf_needed": WHEELS, "package_ops": WHEELS},
    "runner/zygote.py": {"_open": SANDBOX, "main": SANDBOX},
    "serve/mcp_site.py": {"SiteReader._fresh": "a built site's files, served to MCP clients",
                          "SiteReader._read": "a built site's files, served to MCP clients",
                          "SiteReader._arxiv_index": "a built site's files, served to MCP clients"},
    "verify/checkout.py": {"_kept": OURS},
    "verify/observing.py": {"Observer._kept": OURS},
    "verify/run_inputs.py": {"package_code": PACKAGE_FILES},
}
# Receivers whose `.open(...)` is not a file of the disk being read (or is read by its own bounded parser).
NOT_FILES = {"tarfile", "gzip", "bz2", "lzma", "zipfile", "tempfile", "resources", "webbrowser", "checkout"}


def _reads(tree: ast.AST) -> list[tuple[str, str, int]]:
    """(enclosing function's qualified name, the call, line) for each call that opens or reads a file."""
    found: list[tuple[str, str, int]] = []

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, [*scope, child.name])
                continue
            if isinstance(child, ast.Call):
                func = child.func
                receiver = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else ""
                if isinstance(func, ast.Name) and func.id == "open":
                    found.append((".".join(scope), "open", child.lineno))
                elif isinstance(func, ast.Attribute) and receiver != "checkout" and (
                        func.attr in ("read_text", "read_bytes")
                        or (func.attr == "open" and receiver not in NOT_FILES)
                        or (func.attr == "load" and receiver in ("np", "numpy", "torch", "pickle"))):
                    found.append((".".join(scope), f"{receiver or '…'}.{func.attr}", child.lineno))
            visit(child, scope)

    visit(tree, [])
    return found


def _package_reads() -> dict[str, list[tuple[str, str, int]]]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("snapshot/"):
            continue
        out[rel] = _reads(ast.parse(path.read_text(encoding="utf-8")))
    return out


def test_every_file_the_package_reads_is_read_by_the_guard_or_named_with_what_it_is():
    unnamed = [f"paperproof/{module}:{line} {call} in {scope or '<module>'}"
               for module, calls in _package_reads().items() if module != GUARD
               for scope, call, line in calls if scope not in READERS.get(module, {})]
    assert unnamed == [], ("read a checkout's files with paperproof.catalogue.checkout (read_bytes, read_text, walk); "
                           "if this reads no checkout's file, name it in READERS with what it reads")


def test_every_reader_named_here_still_reads():
    reads = _package_reads()
    stale = [f"{module}: {scope}" for module, scopes in READERS.items() for scope in scopes
             if scope not in {s for s, _, _ in reads.get(module, [])}]
    assert stale == []


def test_the_walk_finds_a_reader_that_bypasses_the_guard():
    tree = ast.parse(textwrap.dedent("""
        def declared(root):
            for path in root.glob("requirements*.txt"):
                lines = path.read_text().splitlines()
            with open(root / "setup.cfg") as handle:
                return handle.read(), checkout.read_text(root, "README.md", 10)
    """))
    assert [(scope, call) for scope, call, _ in _reads(tree)] == [("declared", "path.read_text"), ("declared", "open")]


# --- the builder, watched ------------------------------------------------------------------------------------------

AUDIT = textwrap.dedent("""
    import os, sys, traceback
    roots = [os.path.abspath(r) for r in sys.argv[1].split(os.pathsep)]
    report = sys.argv[2]
    def watch(event, args):
        if event != "open" or not args or not isinstance(args[0], (str, bytes)):
            return
        flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
        if flags & (os.O_NOFOLLOW | os.O_DIRECTORY):  # the guard: one component at a time, never a link
            return
        path = os.path.abspath(os.fsdecode(args[0]))
        if any(path == r or path.startswith(r + os.sep) for r in roots):
            with open(report, "a") as out:
                out.write(path + "\\n" + "".join(traceback.format_stack(limit=6)[:-1]) + "\\n")
    sys.addaudithook(watch)
    from paperproof.cli import main
    raise SystemExit(main(sys.argv[3:]))
""")

MODULE = '''import numpy as np


def entropy_scores(probs: np.ndarray) -> np.ndarray:
    """Per-sample entropy of the predicted distribution.

    Args:
        probs: predicted probabilities, shape (N, K)
    """
    return -(probs * np.log(probs + 1e-12)).sum(axis=1)
'''


def _reader_checkout(root: Path, outside: Path) -> None:
    """A checkout holding each kind of file a stage reads, some of them links out of it, and a fifo."""
    (root / "scores").mkdir(parents=True)
    (root / "scores" / "__init__.py").write_text("")
    (root / "scores" / "entropy.py").write_text(MODULE)
    (root / "tests").mkdir()
    (root / "tests" / "test_entropy.py").write_text(
        "import numpy as np\nfrom scores.entropy import entropy_scores\n\n\ndef test_entropy():\n"
        "    assert entropy_scores(np.full((4, 2), 0.5)).shape == (4,)\n")
    (root / "examples").mkdir()
    (root / "examples" / "run.py").write_text("import numpy as np\nfrom scores.entropy import entropy_scores\n\n"
                                              "if __name__ == '__main__':\n    print(entropy_scores(np.eye(3)))\n")
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
            "source": ["from scores.entropy import entropy_scores\n", "entropy_scores(probs)\n"]}
    (root / "demo.ipynb").write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    (root / "README.md").write_text("# entropy\n\n![map](docs/map.png)\n\n```python\nentropy_scores(probs)\n```\n")
    (root / "docs").mkdir()
    (root / "docs" / "map.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    (root / "LICENSE").write_text("MIT License\n\nPermission is hereby granted, free of charge, to any person\n")
    (root / "requirements.txt").symlink_to(outside)
    (root / "requirements-dev.txt").write_text("paperproof-absent-nowhere==1.0\n")
    (root / "setup.cfg").write_text("[options]\ninstall_requires =\n    tqdm>=4\n")
    (root / "pyproject.toml").write_text('[project]\nname = "scores"\ndependencies = ["numpy"]\n')
    os.mkfifo(root / "environment.yml")


def _watched(tmp_path: Path, roots: list[Path], argv: list[str]) -> tuple[subprocess.CompletedProcess, str]:
    report = tmp_path / "opened-outside-the-guard.txt"
    env = {**os.environ, "UV_OFFLINE": "1", "UV_NO_INDEX": "1", "SOURCE_DATE_EPOCH": "1700000000"}
    done = subprocess.run([sys.executable, "-c", AUDIT, os.pathsep.join(map(str, roots)), str(report), *argv],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    return done, report.read_text() if report.exists() else ""


@pytest.fixture()
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "credentials"
    secret.parent.mkdir()
    secret.write_text("paperproof-outside-secret-2718==1.0\n")
    return secret


def test_verify_opens_no_file_of_the_checkout_but_through_the_guard(tmp_path, outside):
    repo = tmp_path / "repo"
    _reader_checkout(repo, outside)
    done, opened = _watched(tmp_path, [repo], ["verify", str(repo), "--json", "--all", "--workers", "1",
                                               "--environments", str(tmp_path / "envs")])
    assert done.returncode in (0, 1), done.stderr[-3000:]
    assert [s["entry"] for s in json.loads(done.stdout)] == ["entropy_scores"]
    assert opened == ""
    assert "paperproof-outside-secret" not in done.stdout + done.stderr


def test_build_opens_no_file_of_a_checkout_but_through_the_guard(tmp_path, outside):
    repos = tmp_path / "repos"
    _reader_checkout(repos / "lab+entropy", outside)
    paper = {**PAPER, "paper_url": "https://paperswithcode.com/paper/p-entropy", "title": "Entropy"}
    archive = tmp_path / "archive"
    write_dump(archive, "papers-with-abstracts", [paper])
    write_dump(archive, "links-between-papers-and-code", [{**LINK, "paper_url": paper["paper_url"],
                                                           "paper_title": paper["title"],
                                                           "repo_url": "https://github.com/lab/entropy"}])
    done, opened = _watched(tmp_path, [repos], ["build", "--archive", str(archive), "--repos", str(repos), "--out",
                                                str(tmp_path / "site"), "--cache", str(tmp_path / "cache"),
                                                "--environments", str(tmp_path / "envs"), "--workers", "1",
                                                "--jobs", "1"])
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "repo" / "lab+entropy.json").is_file()
    assert opened == ""
