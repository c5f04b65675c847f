"""The run cache's key names everything that can change a result: two forks that differ only in a
helper module get their own runs and their own values, and an unrelated module changes nothing."""

from __future__ import annotations

import os
from pathlib import Path

from paperproof.catalogue.extract import extract_module, extract_repo
from paperproof.fixtures.synth import synthesize
from paperproof.runner.executor import Executor, ResultCache, RunRequest

METRICS = '''import numpy as np

from .helpers import normalise


def mean_confidence(probs: np.ndarray) -> float:
    """Mean of the normalised confidences.

    Args:
        probs: predicted probabilities, shape (N, K)
    """
    return float(np.mean(normalise(np.max(probs, axis=1))))
'''
HONEST = "import numpy as np\n\n\ndef normalise(x):\n    return np.asarray(x) / 1.0\n"
CONSTANT = "import numpy as np\n\n\ndef normalise(x):\n    return np.full(len(x), 0.5)\n"


def _fork(root: Path, helper: str, extra: str = "") -> Path:
    (root / "hardness").mkdir(parents=True)
    (root / "hardness" / "__init__.py").write_text("")
    (root / "hardness" / "metrics.py").write_text(METRICS)
    (root / "hardness" / "helpers.py").write_text(helper)
    (root / "hardness" / "plots.py").write_text(extra or "def plot():\n    return None\n")
    return root


def _request(root: Path, repo: str, commit: str | None = None) -> RunRequest:
    (entry,) = [e for e in extract_repo(root, repo).entries if e.name == "mean_confidence"]
    fixtures = synthesize(entry)
    assert fixtures.cases, fixtures.missing
    return RunRequest(entry, fixtures, str(root), commit=commit)


def test_the_closure_names_its_module_and_the_helpers_it_imports_with_their_hashes(tmp_path: Path) -> None:
    request = _request(_fork(tmp_path / "a", HONEST), "o/r")
    # its own module runs when the sandbox imports it for real, so its whole text is part of the key
    assert sorted(request.entry.closure_modules) == ["hardness/__init__.py", "hardness/helpers.py",
                                                     "hardness/metrics.py"]


def test_forks_differing_only_in_a_helper_get_their_own_results(tmp_path: Path) -> None:
    honest = _request(_fork(tmp_path / "orig", HONEST), "o/r")
    fork = _request(_fork(tmp_path / "fork", CONSTANT), "o/r")  # same name, same entry code, no commit
    assert honest.entry.code_sha256 == fork.entry.code_sha256 and honest.entry.closure == fork.entry.closure
    assert honest.cache_key() != fork.cache_key()
    cache = tmp_path / "cache"
    with Executor(workers=1, cache=ResultCache(cache)) as pool:
        first, second = pool.run([honest, fork])
        assert pool.executed == 2 and pool.cache.hits == 0
    values = {c.case_id: c.value for c in first.cases if c.value}
    constant = {c.case_id: c.value for c in second.cases if c.value}
    assert values and constant
    assert {v.repr or str(v.data) for v in constant.values()} == {"0.5"}
    assert any((v.repr or str(v.data)) != "0.5" for v in values.values())
    # The same fork again, and one whose unrelated module changed: both are cache hits.
    unrelated = _request(_fork(tmp_path / "fork2", CONSTANT, extra="def plot():\n    return 1\n"), "o/r")
    with Executor(workers=1, cache=ResultCache(cache)) as pool:
        list(pool.run([fork, unrelated]))
        assert (pool.executed, pool.cache.hits) == (0, 2)


def test_the_repository_and_commit_are_in_the_key(tmp_path: Path) -> None:
    root = _fork(tmp_path / "a", HONEST)
    keys = {_request(root, "o/r").cache_key(), _request(root, "other/r").cache_key(),
            _request(root, "o/r", commit="0" * 40).cache_key(), _request(root, "o/r", commit="1" * 40).cache_key()}
    assert len(keys) == 4


def test_a_path_that_is_not_utf8_still_makes_a_key(tmp_path: Path) -> None:
    path = "pkg/" + os.fsdecode(b"m\xe9trics.py")
    (entry,) = extract_module("def half(n: int) -> float:\n    return n / 2\n", repo="o/r", path=path)
    key = RunRequest(entry, synthesize(entry), str(tmp_path)).cache_key()
    assert len(key) == 64
