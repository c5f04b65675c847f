"""Drivers: the repository's own tests, examples, notebooks and README blocks, found with `ast` and ranked by how
directly they reach the entries to observe."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from paperproof.catalogue.drivers import MAX_HOPS, find_drivers
from paperproof.catalogue.extract import extract_repo

SCORES = '''
import numpy as np


def _softmax(z):
    e = np.exp(z - z.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def el2n(logits, labels):
    """Per-sample error norm."""
    p = _softmax(logits)
    p[np.arange(len(labels)), labels] -= 1
    return np.linalg.norm(p, axis=1)


class ForgetCounter:
    def __init__(self, n):
        self.prev = np.zeros(n, bool)
        self.counts = np.zeros(n, int)

    def update(self, correct):
        self.counts += self.prev & ~correct
        self.prev = correct

    def scores(self):
        return self.counts
'''

CONFTEST = '''
import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(name="run")
def make_run(rng):
    return rng.normal(size=(8, 3)), rng.integers(0, 3, 8)
'''

TESTS = '''
from mylib.scores import ForgetCounter
from mylib.scores import el2n as norm_score


def test_el2n_is_per_sample(run):
    logits, labels = run
    assert norm_score(logits, labels).shape == (8,)


class TestForgetting:
    def test_counts(self):
        c = ForgetCounter(4)
        c.update(__import__("numpy").ones(4, bool))
        assert c.scores().sum() == 0


def test_nothing_of_ours():
    assert 1 + 1 == 2
'''

EXAMPLE = '''
from mylib.scores import el2n


def compute(logits, labels):
    return el2n(logits, labels)


def main():
    return compute(None, None)


if __name__ == "__main__":
    main()
'''

README = '''# mylib

```python
from mylib.scores import ForgetCounter
counter = ForgetCounter(10)
counter.update(mask)
print(counter.scores())
```
'''


def _repo(root: Path) -> Path:
    files = {"mylib/__init__.py": "", "mylib/scores.py": SCORES, "tests/conftest.py": CONFTEST,
             "tests/test_scores.py": TESTS, "examples/train.py": EXAMPLE, "README.md": README}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    cells = [{"cell_type": "markdown", "source": "# Try it"},
             {"cell_type": "code", "source": ["%matplotlib inline\n", "from mylib.scores import el2n\n",
                                              "s = el2n(z, y)\n"]}]
    (root / "demo.ipynb").write_text(json.dumps({"cells": cells, "nbformat": 4}))
    return root


def _drivers(root: Path, wanted: list[str] | None = None):
    entries = extract_repo(root, "o/mylib").entries
    return entries, find_drivers(root, entries, wanted)


def test_each_kind_of_driver_is_found_with_what_it_reaches(tmp_path: Path) -> None:
    _, drivers = _drivers(_repo(tmp_path))
    by_target = {d.target: d for d in drivers}
    assert set(by_target) == {"tests/test_scores.py::test_el2n_is_per_sample",
                              "tests/test_scores.py::TestForgetting::test_counts",
                              "examples/train.py", "README.md#block-1", "demo.ipynb"}
    test = by_target["tests/test_scores.py::test_el2n_is_per_sample"]
    assert (test.kind, test.line) == ("test", 6)
    assert test.reaches == {"mylib/scores.py::el2n": 1}  # through the alias
    assert test.fixtures == ["run", "rng"]  # the fixture named by `name=`, and the one it asks for
    method = by_target["tests/test_scores.py::TestForgetting::test_counts"]
    assert method.reaches == {"mylib/scores.py::ForgetCounter": 1}
    assert by_target["examples/train.py"].kind == "example"
    assert by_target["examples/train.py"].reaches["mylib/scores.py::el2n"] == 3  # main -> compute -> el2n
    assert by_target["README.md#block-1"].reaches == {"mylib/scores.py::ForgetCounter": 1}
    assert by_target["demo.ipynb"].kind == "notebook"
    assert by_target["demo.ipynb"].reaches["mylib/scores.py::el2n"] == 1


def test_a_method_call_reaches_what_the_method_calls(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "mylib/fit.py").write_text("from mylib.scores import el2n\n\n\nclass Probe:\n"
                                       "    def fit(self, z, y):\n        return self._score(z, y)\n\n"
                                       "    def _score(self, z, y):\n        return el2n(z, y)\n")
    (root / "tests/test_other.py").write_text("def test_update(thing):\n    thing.update(1)\n\n\n"
                                              "def test_fit(probe):\n    probe.fit(1, 2)\n")
    _, drivers = _drivers(root)
    by_target = {d.target: d for d in drivers}
    assert "tests/test_other.py::test_update" not in by_target  # `update` calls nothing of the repository's
    assert by_target["tests/test_other.py::test_fit"].reaches == {"mylib/scores.py::el2n": 3}


def test_the_nearest_and_cheapest_driver_of_a_wanted_entry_comes_first(tmp_path: Path) -> None:
    _, drivers = _drivers(_repo(tmp_path), wanted=["mylib/scores.py::el2n"])
    order = [d.target for d in drivers]
    assert order[:2] == ["demo.ipynb", "tests/test_scores.py::test_el2n_is_per_sample"]  # 1 deep; the cheaper first
    assert order.index("examples/train.py") < order.index("tests/test_scores.py::TestForgetting::test_counts")
    counter = [d.target for d in _drivers(tmp_path, wanted=["mylib/scores.py::ForgetCounter"])[1]]
    assert counter[:2] == ["README.md#block-1", "tests/test_scores.py::TestForgetting::test_counts"]
    assert counter.index("examples/train.py") > 1  # does not reach the class


def test_a_chain_deeper_than_the_hops_kept_is_not_reached(tmp_path: Path) -> None:
    (tmp_path / "lib.py").write_text("def target(x):\n    return x\n" + "".join(
        f"def f{i}(x):\n    return {'target' if i == 0 else f'f{i - 1}'}(x)\n" for i in range(MAX_HOPS + 2)))
    (tmp_path / "test_lib.py").write_text("".join(f"def test_{i}():\n    f{i}(1)\n" for i in range(MAX_HOPS + 2)))
    _, drivers = _drivers(tmp_path, wanted=["lib.py::target"])
    deep = {d.target: d.reaches.get("lib.py::target") for d in drivers}
    assert [deep[f"test_lib.py::test_{i}"] for i in range(MAX_HOPS - 1)] == list(range(2, MAX_HOPS + 1))
    assert all(deep.get(f"test_lib.py::test_{i}") is None for i in range(MAX_HOPS - 1, MAX_HOPS + 2))


def test_an_unreadable_driver_is_reported_and_the_rest_found(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "tests/test_broken.py").write_text("def test_(:\n")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.py"
    outside.write_text("from mylib.scores import el2n\nel2n(1, 2)\n")
    (root / "examples/link.py").symlink_to(outside)
    skipped: list[tuple[str, str]] = []
    entries = extract_repo(root, "o/mylib").entries
    drivers = find_drivers(root, entries, skipped=skipped)
    assert "tests/test_broken.py" in {path for path, _ in skipped}
    targets = {d.target for d in drivers}
    assert "tests/test_scores.py::test_el2n_is_per_sample" in targets
    assert "examples/link.py" not in targets  # a link is not followed out of the checkout
