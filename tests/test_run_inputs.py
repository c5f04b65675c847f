"""What decides verify's results beyond each run's request: which changes of a checkout reach which key."""

from __future__ import annotations

import os
from pathlib import Path

from paperproof.verify import run_inputs


def _checkout(root: Path) -> Path:
    (root / "pkg" / "__pycache__").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "pkg" / "scores.py").write_text("def score(x):\n    return x\n")
    (root / "pkg" / "weights.npy").write_bytes(b"\x93NUMPY" + bytes(64))
    (root / "README.md").write_text("# scores\n")
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "pkg" / "__pycache__" / "scores.cpython-311.pyc").write_bytes(b"\0" * 8)
    return root


def _touch(path: Path, data: bytes) -> None:
    """Rewrite `path` and move its modification time on, as a later edit would."""
    before = path.stat().st_mtime_ns
    path.write_bytes(data)
    os.utime(path, ns=(before + 1_000_000, before + 1_000_000))


def test_a_run_is_decided_by_the_checkouts_files_but_its_modules_and_what_tools_write(tmp_path):
    root = _checkout(tmp_path)
    runner = run_inputs.runner_inputs()
    first = run_inputs.run_digest(root, runner)
    assert run_inputs.run_digest(root, runner) == first
    # modules count through each entry's closure (the run's own key); tools' files are never read by the code
    _touch(root / "pkg" / "scores.py", b"def score(x):\n    return 2 * x\n")
    _touch(root / "pkg" / "__pycache__" / "scores.cpython-311.pyc", b"\1" * 8)
    _touch(root / ".git" / "HEAD", b"0" * 40 + b"\n")
    assert run_inputs.run_digest(root, runner) == first
    _touch(root / "pkg" / "weights.npy", b"\x93NUMPY" + bytes(65))  # a file the code may open
    assert run_inputs.run_digest(root, runner) != first


def test_a_whole_verify_is_decided_by_every_file_its_commit_and_its_arguments(tmp_path):
    root = _checkout(tmp_path)
    runner = run_inputs.runner_inputs()
    first = run_inputs.verify_digest(root, runner, None, {"limits": None})
    assert run_inputs.verify_digest(root, runner, None, {"limits": None}) == first
    assert run_inputs.verify_digest(root, runner, "0" * 40, {"limits": None}) != first
    assert run_inputs.verify_digest(root, runner, None, {"limits": {"wall_seconds": 5}}) != first
    _touch(root / "pkg" / "__pycache__" / "scores.cpython-311.pyc", b"\1" * 8)
    assert run_inputs.verify_digest(root, runner, None, {"limits": None}) == first
    _touch(root / "pkg" / "scores.py", b"def score(x):\n    return 2 * x\n")  # a script or a call site may read it
    assert run_inputs.verify_digest(root, runner, None, {"limits": None}) != first


def test_the_runner_inputs_name_the_verdict_code_the_interpreter_and_the_installed_packages():
    found = run_inputs.runner_inputs()
    assert found[0].startswith("verdict code ") and len(found[0].split()[-1]) == 64
    assert found[1].startswith("python 3.")
    assert any(line.startswith("numpy==") for line in found) and any(line.startswith("pydantic==") for line in found)
