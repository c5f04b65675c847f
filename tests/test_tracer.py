"""The tracer: every call into the repository's code while a driver runs, bounded, with who called and with what."""

from __future__ import annotations

import runpy
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from paperproof.runner.tracer import MAX_KEPT, MAX_KEYS, MAX_REPLAY, Tracer, summary

SCORES = '''
import numpy as np


def el2n(logits, labels, *, norm=2):
    p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    p[np.arange(len(labels)), labels] -= 1

    def inner(x):  # nested: recorded as part of its function
        return np.linalg.norm(x, ord=norm, axis=1)

    return inner(p)


def refuse(x):
    raise ValueError("no")


def batches(n):
    for i in range(n):
        yield i


class Forget:
    def __init__(self, n):
        self.prev = np.zeros(n, bool)
        self.counts = np.zeros(n, int)

    def update(self, correct):
        self.counts += self.prev & ~correct
        self.prev = correct

    def __len__(self):
        return len(self.counts)

    def scores(self):
        return self.counts
'''

DRIVER = '''
import numpy as np
from mylib.scores import Forget, batches, el2n, refuse
from mylib.helpers import helper

rng = np.random.default_rng(0)
logits, labels = rng.normal(size=(8, 3)), rng.integers(0, 3, 8)
for _ in range(40):
    el2n(logits, labels)
forget = Forget(8)
for epoch in range(3):
    forget.update(rng.random(8) > 0.5)
scores = forget.scores()
len(forget)
try:
    refuse(1)
except ValueError:
    pass
total = sum(batches(5))
helper()
'''


@pytest.fixture
def repo(tmp_path: Path):
    (tmp_path / "mylib").mkdir()
    (tmp_path / "mylib/__init__.py").write_text("")
    (tmp_path / "mylib/scores.py").write_text(textwrap.dedent(SCORES))
    (tmp_path / "mylib/helpers.py").write_text("def helper():\n    return 1\n")
    (tmp_path / "drive.py").write_text(textwrap.dedent(DRIVER))
    sys.path.insert(0, str(tmp_path))
    yield tmp_path
    sys.path.remove(str(tmp_path))
    for name in [m for m in sys.modules if m == "mylib" or m.startswith("mylib.")]:
        del sys.modules[name]


def _run(root: Path, files: set[str] | None = {"mylib/scores.py"}) -> Tracer:  # noqa: B006 - read only
    with Tracer(str(root), files) as tracer:
        runpy.run_path(str(root / "drive.py"))
    return tracer


def test_each_call_is_recorded_with_its_caller_arguments_and_result(repo: Path) -> None:
    tracer = _run(repo)
    assert sys.getprofile() is None and threading.getprofile() is None
    seen = tracer.observed
    assert set(seen) == {"mylib/scores.py::el2n", "mylib/scores.py::Forget.__init__", "mylib/scores.py::Forget.update",
                         "mylib/scores.py::Forget.scores", "mylib/scores.py::refuse", "mylib/scores.py::batches"}
    el2n = seen["mylib/scores.py::el2n"]
    assert el2n.count == 40 and len(el2n.calls) == MAX_KEPT and len(el2n.replay) == MAX_REPLAY
    first = el2n.calls[0]
    assert first.caller == ("drive.py", 9)
    assert first.args["logits"]["shape"] == [8, 3] and first.args["logits"]["dtype"] == "float64"
    assert first.args["labels"]["min"] >= 0 and first.args["labels"]["max"] <= 2
    assert first.args["norm"] == {"type": "int", "value": 2}
    assert first.result is not None and first.result["shape"] == [8] and not first.raised
    arguments, result = el2n.replay[0]
    assert arguments["logits"].shape == (8, 3)  # the objects themselves, for replay
    assert isinstance(result, np.ndarray) and result.shape == (8,)


def test_a_hook_driven_by_a_loop_keeps_its_order_across_epochs(repo: Path) -> None:
    seen = _run(repo).observed
    update = seen["mylib/scores.py::Forget.update"]
    assert update.count == 3 and [c.caller for c in update.calls] == [("drive.py", 12)] * 3
    orders = [c.order for c in update.calls]
    assert orders == sorted(orders) and seen["mylib/scores.py::Forget.__init__"].calls[0].order < orders[0]
    assert seen["mylib/scores.py::Forget.scores"].calls[0].order > orders[-1]
    assert "self" not in update.calls[0].args and update.calls[0].args["correct"]["dtype"] == "bool"


def test_a_raise_a_generator_and_what_is_not_observed(repo: Path) -> None:
    seen = _run(repo).observed
    refused = seen["mylib/scores.py::refuse"].calls[0]
    assert refused.raised and refused.result is None
    assert seen["mylib/scores.py::batches"].count == 1  # resumed five times, called once
    assert "mylib/scores.py::Forget.__len__" not in seen  # dunders other than __init__ and __call__
    assert not any("inner" in key for key in seen)  # nested functions are their function's
    assert "mylib/helpers.py::helper" not in seen  # not among the files observed
    assert "mylib/helpers.py::helper" in _run(repo, None).observed  # every file under the root


def test_what_it_keeps_is_bounded(repo: Path) -> None:
    body = "".join(f"def f{i}():\n    return {i}\n" for i in range(MAX_KEYS + 20))
    (repo / "mylib/many.py").write_text(body)
    (repo / "drive.py").write_text("import mylib.many as m\n"
                                   f"for i in range({MAX_KEYS + 20}):\n    getattr(m, f'f{{i}}')()\n")
    tracer = _run(repo, {"mylib/many.py"})
    assert len(tracer.observed) == MAX_KEYS and tracer.dropped == 20


def test_a_summary_never_raises_and_says_what_it_can() -> None:
    class Hostile:
        @property
        def shape(self):
            raise RuntimeError("boom")

        dtype = "float32"

    assert summary(Hostile()) == {"type": f"{__name__}.test_a_summary_never_raises_and_says_what_it_can.<locals>.Hostile"}
    assert summary(np.zeros((0, 4)))["shape"] == [0, 4]
    assert summary(np.array(["a", "b"]))["shape"] == [2] and "min" not in summary(np.array(["a", "b"]))
    nested = summary({"a": [1, [2, [3, [4]]]], "b": "x" * 500})
    assert nested["items"]["b"]["len"] == 500 and len(nested["items"]["b"]["value"]) == 120
    assert summary(2**80)["value"] == str(2**80)
    torch = pytest.importorskip("torch")
    t = summary(torch.ones(2, 3))
    assert t == {"type": "torch.Tensor", "shape": [2, 3], "dtype": "torch.float32", "min": 1.0, "max": 1.0}


def test_a_method_a_class_inherits_is_recorded_as_the_method_of_the_class_the_driver_made(tmp_path: Path) -> None:
    """The driver made the library's subclass and called a method its base defines: the call is the subclass's (the
    entry it observed). A subclass the driver defines itself leaves the call with the library's base."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib/__init__.py").write_text("")
    (tmp_path / "lib/base.py").write_text(
        "class Base:\n    def __init__(self, n):\n        self.n = n\n\n"
        "    def scores(self):\n        return [self.step(i) for i in range(self.n)]\n")
    (tmp_path / "lib/modules.py").write_text(
        "from lib.base import Base\n\n\nclass Exact(Base):\n    def step(self, i):\n        return float(i)\n")
    (tmp_path / "drive.py").write_text(
        "from lib.base import Base\nfrom lib.modules import Exact\n\n\n"
        "class Mine(Base):\n    def step(self, i):\n        return 0.0\n\n\n"
        "Exact(4).scores()\nMine(3).scores()\n")
    sys.path.insert(0, str(tmp_path))
    try:
        with Tracer(str(tmp_path), owners={"lib/base.py", "lib/modules.py"}) as tracer:
            runpy.run_path(str(tmp_path / "drive.py"))
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == "lib" or m.startswith("lib.")]:
            del sys.modules[name]
    seen = tracer.observed
    assert seen["lib/modules.py::Exact.scores"].calls[0].result == {"type": "list", "len": 4, "items": [
        {"type": "float", "value": float(i)} for i in range(4)]}
    assert seen["lib/modules.py::Exact.__init__"].count == 1
    assert seen["lib/base.py::Base.scores"].count == 1  # Mine's: the driver's own class
    assert seen["lib/base.py::Base.scores"].calls[0].result["len"] == 3
