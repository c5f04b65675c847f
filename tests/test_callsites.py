"""Call sites are read from a repository's scripts, tests, notebooks and README with `ast` only."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from paperproof.catalogue.callsites import CallSite, find_call_sites
from paperproof.catalogue.entry import Param
from paperproof.catalogue.extract import extract_repo

METRICS = '''\
"""Hardness scores."""
import numpy as np
import torch


def el2n(probs, labels, reduction="mean"):
    onehot = np.eye(probs.shape[1])[labels]
    return np.linalg.norm(probs - onehot, axis=1)


def evaluate(model, loader, device, temperature=1.0):
    return [model(x.to(device)) / temperature for x, _ in loader]


def run_scores(args, loader):
    return args.lr


def fit(model, optimizer, criterion, table, config, out_path, transform, device="cuda", epochs=1, sizes=None):
    return None


def summary(probs, labels):
    return el2n(probs, labels).mean()


class Tracker:
    def __init__(self, n_samples, num_classes=10, *, decay=0.9):
        self.n = n_samples

    def update(self, logits, targets, idx=None):
        pass

    def updates(self, epoch):
        pass

    def snapshot(self, epoch):
        pass

    def compute(self):
        return np.zeros(self.n)
'''

MODELS = '''\
from torch import nn
from torch.utils.data import Dataset


class Net(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.fc = nn.Linear(8, num_classes)


class Backbone(Net):
    pass
'''

TRAIN = '''\
import argparse

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from hardness.metrics import Tracker, el2n, evaluate, run_scores
from hardness.models import Net


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--epochs", type=int, default="3")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--use-amp", action="store_true")
    parser.add_argument("--data", default="data/cifar.npz")
    return parser.parse_args()


def main():
    args = get_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x = torch.randn(512, 3, 32, 32)
    y = torch.randint(0, 10, (512,))
    train_set = TensorDataset(x, y)
    loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    model = Net(num_classes=10).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    tracker = Tracker(len(train_set), num_classes=10, decay=0.9)
    for epoch in range(args.epochs):
        for step, (inputs, targets) in enumerate(loader):
            logits = model(inputs.to(device))
            loss = F.cross_entropy(logits, targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            tracker.update(logits, targets, idx=step)
        tracker.updates(epoch)
        if epoch in [0, 2]:
            tracker.snapshot(epoch)
    scores = tracker.compute()
    probs = F.softmax(logits, dim=-1)
    print(el2n(probs, targets, reduction="sum"), scores)
    evaluate(model, loader, device, temperature=args.lr)
    run_scores(args, loader)


if __name__ == "__main__":
    main()
'''

FIT = '''\
import json
import os

import pandas as pd
import torch
from torch import nn

from hardness.metrics import fit
from hardness.models import Backbone

model = Backbone()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
crit = nn.CrossEntropyLoss()
df = pd.read_csv("scores.csv")
with open("config.json") as fh:
    config = json.load(fh)
out = os.path.join("runs", f"{config['name']}.pt")
fit(model, opt, crit, df, config, out, lambda t: t * 2, device="cpu", epochs=-1, sizes=(1, 2))
'''

QUICK = '''\
def evaluate(x):
    return x


evaluate(1)
el2n(probs=[[0.5, 0.5]], labels=[0])
'''

TEST_FILE = '''\
import numpy as np

from hardness.metrics import el2n


def test_el2n_shape():
    probs = np.full((4, 3), 1 / 3)
    labels = np.array([0, 1, 2, 0])
    assert el2n(probs, labels).shape == (4,)
'''

README = '''\
# Hardness

Install it, then:

```python
from hardness import Tracker

tracker = Tracker(50000, num_classes=100)
for epoch in range(10):
    for batch in train_loader:
        tracker.update(batch.logits, batch.y, batch.idx)
scores = tracker.compute()
```

```bash
pip install hardness
```
'''


def _notebook() -> str:
    cells = [
        {"cell_type": "markdown", "source": ["# Analysis\n"]},
        {"cell_type": "code", "source": ["!pip install hardness\n", "%matplotlib inline\n", "import numpy as np\n",
                                         "from hardness import el2n\n"]},
        {"cell_type": "code", "source": "probs = np.random.rand(100, 10)\nlabels = np.zeros(100, dtype=int)\n"},
        {"cell_type": "code", "source": ["scores = el2n(probs, labels)\n", "scores.mean()"]},
        {"cell_type": "code", "source": "def broken(:\n"},
    ]
    return json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5, "metadata": {}})


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    _write(root, {
        "src/hardness/__init__.py": "from .metrics import *\n",
        "src/hardness/metrics.py": METRICS,
        "src/hardness/models.py": MODELS,
        "train.py": TRAIN,
        "scripts/fit.py": FIT,
        "scripts/quick.py": QUICK,
        "scripts/bad.py": "def broken(:\n    pass\n",
        "tests/test_metrics.py": TEST_FILE,
        "README.md": README,
        "analysis.ipynb": _notebook(),
        "broken.ipynb": '{"cells": [',
        ".venv/lib/site.py": "el2n(1, 2)\n",
    })
    return root


def _sites(root: Path, skipped: list[tuple[str, str]] | None = None, *, method: bool = False):
    entries = extract_repo(root, "o/r").entries
    if method:
        tracker = next(e for e in entries if e.name == "Tracker")
        entries.append(tracker.model_copy(update={
            "kind": "method", "name": "update", "qualname": "Tracker.update",
            "params": [Param(name="self"), Param(name="logits"), Param(name="targets"), Param(name="idx")]}))
    return find_call_sites(root, entries, skipped)


def _args(site: CallSite) -> dict[str, tuple]:
    return {a.param: (a.kind, a.value, a.rank) for a in site.args}


def test_every_entry_is_keyed_and_sites_come_in_a_stable_order(repo):
    sites = _sites(repo)
    assert "src/hardness/metrics.py::el2n" in sites and sites["src/hardness/metrics.py::run_scores"]
    assert sites["src/hardness/models.py::Net"][0].path == "train.py"
    where = [(s.path, s.source) for s in sites["src/hardness/metrics.py::el2n"]]
    assert where == [("scripts/quick.py", "script"), ("train.py", "script"), ("analysis.ipynb#cell-4", "notebook"),
                     ("tests/test_metrics.py", "test"), ("src/hardness/metrics.py", "module")]
    assert not any(".venv" in s.path for found in sites.values() for s in found)


def test_a_training_script_gives_argparse_defaults_loaders_models_and_devices(repo):
    sites = _sites(repo)
    (run,) = sites["src/hardness/metrics.py::run_scores"]
    args = {a.param: a for a in run.args}
    assert args["args"].kind == "namespace" and args["args"].origin == "get_args()"
    assert args["args"].value == {"lr": 0.1, "epochs": 3, "batch_size": 128, "use_amp": False,
                                  "data": "data/cifar.npz"}
    assert args["loader"].kind == "loader" and args["loader"].origin.startswith("DataLoader(train_set")
    assert args["loader"].origin_line == 27
    (evaluate,) = sites["src/hardness/metrics.py::evaluate"]
    assert _args(evaluate) == {"model": ("model", None, None), "loader": ("loader", None, None),
                               "device": ("device", None, None), "temperature": ("literal", 0.1, None)}
    el2n = next(s for s in sites["src/hardness/metrics.py::el2n"] if s.path == "train.py")
    assert _args(el2n) == {"probs": ("probs", None, None), "labels": ("labels", None, None),
                           "reduction": ("literal", "sum", None)}
    assert next(a for a in el2n.args if a.param == "labels").expression == "targets"


def test_a_tracker_is_driven_per_batch_per_epoch_at_chosen_epochs_and_once_after(repo):
    (site,) = [s for s in _sites(repo)["src/hardness/metrics.py::Tracker"] if s.path == "train.py"]
    assert _args(site) == {"n_samples": (None, None, None), "num_classes": ("literal", 10, None),
                           "decay": ("literal", 0.9, None)}
    assert [(h.method, h.cadence) for h in site.hooks] == [
        ("update", "per_batch"), ("updates", "per_epoch"), ("snapshot", "chosen_epochs"),
        ("compute", "once_after_loop")]
    update = site.hooks[0]
    assert update.line == 38
    assert _args(update) == {"logits": ("logits", None, None), "targets": ("labels", None, None),
                             "idx": (None, None, None)}


def test_readme_blocks_and_notebook_cells_are_read(repo):
    sites = _sites(repo)
    (readme,) = [s for s in sites["src/hardness/metrics.py::Tracker"] if s.source == "readme"]
    assert (readme.path, readme.line) == ("README.md#block-1", 3)
    assert _args(readme) == {"n_samples": ("literal", 50000, None), "num_classes": ("literal", 100, None)}
    assert [(h.method, h.cadence) for h in readme.hooks] == [("update", "per_batch"), ("compute", "once_after_loop")]
    (nb,) = [s for s in sites["src/hardness/metrics.py::el2n"] if s.source == "notebook"]
    assert nb.line == 1
    probs, labels = nb.args
    assert (probs.kind, probs.rank, probs.origin, probs.origin_line) == ("array", 2, "np.random.rand(100, 10)", 1)
    assert (labels.kind, labels.rank) == ("array", 1)


def test_tests_literals_and_traced_origins_of_many_kinds(repo):
    sites = _sites(repo)
    test = next(s for s in sites["src/hardness/metrics.py::el2n"] if s.source == "test")
    assert _args(test) == {"probs": ("array", None, 2), "labels": ("array", None, 1)}
    quick = sites["src/hardness/metrics.py::el2n"][0]
    assert _args(quick) == {"probs": ("literal", [[0.5, 0.5]], None), "labels": ("literal", [0], None)}
    (fit,) = sites["src/hardness/metrics.py::fit"]
    assert {k: v[0] for k, v in _args(fit).items()} == {
        "model": "model", "optimizer": "optimizer", "criterion": "loss", "table": "dataframe", "config": "mapping",
        "out_path": "path", "transform": "callable", "device": "literal", "epochs": "literal", "sizes": "literal"}
    assert _args(fit)["epochs"][1] == -1 and _args(fit)["sizes"][1] == (1, 2)
    assert not any(s.path == "scripts/quick.py" for s in sites["src/hardness/metrics.py::evaluate"])


def test_a_tracker_kept_on_self_is_followed_into_the_other_methods(tmp_path):
    root = tmp_path / "repo"
    _write(root, {"hardness/metrics.py": METRICS, "engine.py": textwrap.dedent('''\
        from hardness.metrics import Tracker


        class Trainer:
            def __init__(self, loader, n):
                self.loader = loader
                self.tracker = Tracker(n, decay=0.5)

            def fit(self, epochs):
                for epoch in range(epochs):
                    for batch in self.loader:
                        self.tracker.update(batch[0], batch[1])
                    if epoch % 5 == 0:
                        self.tracker.snapshot(epoch)
                return self.tracker.compute()
        ''')})
    (site,) = _sites(root)["hardness/metrics.py::Tracker"]
    assert (site.path, site.line, site.source) == ("engine.py", 7, "module")
    assert _args(site) == {"n_samples": (None, None, None), "decay": ("literal", 0.5, None)}
    assert [(h.method, h.cadence, h.line) for h in site.hooks] == [
        ("update", "per_batch", 12), ("snapshot", "chosen_epochs", 14), ("compute", "once_after_loop", 15)]


def test_a_method_entry_is_found_through_the_instance(repo):
    sites = _sites(repo, method=True)["src/hardness/metrics.py::Tracker.update"]
    assert [(s.path, s.line) for s in sites] == [("train.py", 38), ("README.md#block-1", 6)]
    assert [a.param for a in sites[0].args] == ["logits", "targets", "idx"]


def test_broken_files_are_skipped_and_the_rest_goes_on(repo):
    skipped: list[tuple[str, str]] = []
    sites = _sites(repo, skipped)
    reasons = dict(skipped)
    assert reasons["scripts/bad.py"].startswith("does not parse")
    assert "broken.ipynb" in reasons and reasons["analysis.ipynb#cell-5"].startswith("does not parse")
    assert any(s.source == "notebook" for s in sites["src/hardness/metrics.py::el2n"])
    (repo / "huge.ipynb").write_text("[" * 100_000)
    (repo / "deep.py").write_text("x = " + "(" * 5000 + ")" * 5000 + "\n")
    skipped = []
    assert _sites(repo, skipped)["src/hardness/metrics.py::el2n"]
    assert {"huge.ipynb", "deep.py"} <= dict(skipped).keys()


def test_links_out_of_the_checkout_are_not_followed(repo, tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text("from hardness.metrics import el2n\nel2n(1, 2)\n")
    (repo / "linked.py").symlink_to(outside)
    sites = _sites(repo)
    assert not any(s.path == "linked.py" for s in sites["src/hardness/metrics.py::el2n"])


def test_two_scans_are_equal(repo):
    first = {k: [s.model_dump() for s in v] for k, v in _sites(repo, method=True).items()}
    second = {k: [s.model_dump() for s in v] for k, v in _sites(repo, method=True).items()}
    assert first == second
    assert json.dumps(first, sort_keys=True)


def test_textwrap_specimens_are_dedented():
    assert textwrap.dedent(TRAIN) == TRAIN


def test_a_loop_over_repeats_is_no_batch_loop_and_a_reset_before_training_is_once_before(tmp_path):
    root = tmp_path / "repo"
    _write(root, {"hardness/metrics.py": METRICS, "scripts/repeat.py": textwrap.dedent('''\
        from hardness.metrics import Tracker


        def main(config, model, evalloader):
            tracker = Tracker(100)
            for seed in range(config.repeat):
                tracker.reset()
                for e in range(config.epoch):
                    for x, y in evalloader:
                        model(x)
                    tracker.update(model, evalloader)
                scores = tracker.compute()
            return scores
        ''')})
    (site,) = _sites(root)["hardness/metrics.py::Tracker"]
    assert [(h.method, h.cadence) for h in site.hooks] == [
        ("reset", "once_before_loop"), ("update", "per_epoch"), ("compute", "once_after_loop")]


def test_a_hooks_argument_that_is_its_loops_counter_says_where_the_counter_starts(tmp_path):
    root = tmp_path / "repo"
    _write(root, {"hardness/metrics.py": METRICS, "scripts/boosted.py": textwrap.dedent('''\
        from hardness.metrics import Tracker


        def main(clf, n_trees, steps):
            tracker = Tracker(100)
            for i in range(1, n_trees):
                tracker.updates(epoch=i)
            for e in range(n_trees):
                tracker.snapshot(e)
            for k in steps:
                tracker.snapshot(k)
            return tracker.compute()
        ''')})
    (site,) = _sites(root)["hardness/metrics.py::Tracker"]
    found = [(h.method, [(a.param, a.kind, a.value) for a in h.args]) for h in site.hooks]
    assert found == [("updates", [("epoch", "counter", 1)]), ("snapshot", [("epoch", "counter", 0)]),
                     ("snapshot", [("epoch", None, None)]), ("compute", [])]  # a loop over a list counts nothing
