"""What a repository wrote reaches the terminal shown, never obeyed: no control character of it is written raw.

A sample's exception once erased the line of the `verify` summary above it and printed `violations: 0` over
a real violation. The command runs here as a real process on a checkout whose entry raises exactly that.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from paperproof import cli
from paperproof.plumbing.terminal import shown

HOSTILE = "boom\r\x1b[2K\x1b[1Aviolations: 0\u202eevil\u2066\x9b2K\x7f\x08\x07 end"
ENTRY = f'''import numpy as np


def margin_scores(probs: np.ndarray) -> np.ndarray:
    """Margin between the top two probabilities of each sample.

    Args:
        probs: predicted probabilities, shape (N, K)
    """
    raise RuntimeError({HOSTILE!r})
'''
# Raw in the UTF-8 a process writes: C0 controls but the newline, DEL, C1 controls, bidi embeddings, overrides
# and isolates, the line and paragraph separators.
RAW = re.compile(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xa8-\xae]|\xe2\x81[\xa6-\xa9]|\xd8\x9c"
                 rb"|\xe2\x80[\x8e\x8f]")


def test_every_control_character_is_shown_as_its_escape() -> None:
    assert shown("a\x1b[2Kb\rc\td\x00\x7f\x85\x9b\u202e\u2066\u2069\u200f\u2028é中") == \
        "a\\x1b[2Kb\\rc\\td\\x00\\u007f\\u0085\\u009b\\u202e\\u2066\\u2069\\u200f\\u2028é中"
    assert shown("one\ntwo") == "one\\ntwo"  # a repository's newline cannot start a line of ours
    assert shown("m\udce9trics.py") == "m\\udce9trics.py"  # a name that was not UTF-8 can still be written
    printable = "".join(c for c in map(chr, [*range(0x20, 0x3000), *range(0x1F600, 0x1F650)]) if c.isprintable())
    assert shown(printable) == printable  # what a terminal shows is left as it is (`é`, `中`, emoji)


def test_escaped_json_is_the_same_json() -> None:
    """`verify --json` goes through the same escaping: what it changes inside strings are JSON escapes."""
    record = {"reason": HOSTILE + "\udce9\u2028", "path": "a\u202eb.py"}
    text = json.dumps(record, indent=2, ensure_ascii=False)
    assert json.loads("\n".join(shown(line) for line in text.split("\n"))) == record


def _checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "hostile"
    repo.mkdir()
    (repo / "scores.py").write_text(ENTRY)
    return repo


def _verify(repo: Path, *extra: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "paperproof", "verify", str(repo), "--workers", "1", *extra],
                          capture_output=True, timeout=600)


def test_verify_prints_a_hostile_exception_escaped_under_its_real_summary(tmp_path: Path) -> None:
    repo = _checkout(tmp_path)
    done = _verify(repo)
    assert done.returncode == 1, done.stderr[-2000:]
    for stream in (done.stdout, done.stderr):
        assert RAW.search(stream) is None, stream
    lines = done.stdout.decode().split("\n")
    assert lines[0].split() == ["ran_violates", "scores.py::margin_scores"]
    assert "\\r\\x1b[2K\\x1b[1Aviolations: 0\\u202eevil\\u2066\\u009b2K\\u007f\\x08\\x07 end" in lines[1]
    assert lines[2] == f"verified 1 sample(s) of {repo}: ran_violates 1"
    found = lines.index("findings: 1 (violations 1, departures 0, blocked 0)")
    assert lines[found + 1].startswith("  scores.py:4 margin_scores: violates its contract: ")
    assert "\\r\\x1b[2K\\x1b[1Aviolations: 0\\u202eevil" in lines[found + 1] and lines[found + 2:] == [""]


def test_verify_json_is_escaped_and_still_carries_the_exact_message(tmp_path: Path) -> None:
    repo = _checkout(tmp_path)
    done = _verify(repo, "--json")
    assert done.returncode == 1, done.stderr[-2000:]
    for stream in (done.stdout, done.stderr):
        assert RAW.search(stream) is None, stream
    (sample,) = json.loads(done.stdout)
    assert HOSTILE in sample["reason"]  # the escapes are JSON's: the record holds the message as raised
    assert "\nfindings: 1 (violations 1, departures 0, blocked 0)\n  scores.py:4 margin_scores: " in done.stderr.decode()


def test_warnings_and_tracebacks_go_through_the_same_escaping(capsys: pytest.CaptureFixture[str],
                                                             tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text('X = "\\d"  # \x1b[31m the source line is never read back\n')
    cli._warned(SyntaxWarning("invalid escape sequence '\\d' \x1b[2K"), SyntaxWarning, "m.py", 1)
    try:
        raise ValueError("from a repository: \x1b]0;title\x07\r")
    except ValueError as exc:
        cli._crashed(ValueError, exc, exc.__traceback__)
    err = capsys.readouterr().err
    assert RAW.search(err.encode()) is None
    assert "m.py:1: SyntaxWarning: invalid escape sequence '\\d' \\x1b[2K" in err
    assert "never read back" not in err  # `linecache` would have read m.py from this folder
    assert "ValueError: from a repository: \\x1b]0;title\\x07\\r" in err
