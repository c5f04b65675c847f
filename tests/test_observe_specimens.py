"""Drivers of every kind the catalogue finds, each in a small repository of our own written as research code is, run
through `observe()` in the sandbox: what each driver called is recorded, what returns one value per sample is judged
so, and a driver that fails, hangs, forks or writes where it may not is recorded as such while the others go on.

Every specimen is ours (no body is shared with a public repository): a pytest suite with fixtures and parametrize,
a callable class, a training script with argparse and an MNIST download, a notebook, a hook driven across epochs,
a script that fails before it reaches its entry, a JAX function, and a set of hostile scripts.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from paperproof.catalogue.budget import Budget
from paperproof.catalogue.extract import extract_repo
from paperproof.catalogue.observed import DriverRun, observations
from paperproof.fixtures.stubs import missing_imports
from paperproof.runner import environment
from paperproof.runner.executor import Executor
from paperproof.runner.observe import observe
from paperproof.verify.checkout import verify_checkout
from tests.test_environment import _registry_reachable, needs_registry  # noqa: F401 - its condition names it

LIMITS = {"cpu_seconds": 8}


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _envs(tmp_path: Path) -> Path:
    return Path(os.environ.get("PAPERPROOF_TEST_ENVS", tmp_path / "envs"))


@pytest.fixture(scope="module")
def executor():
    """One warm zygote for every specimen of this file: each driver is a sandbox run of its own all the same."""
    with Executor(workers=1) as running:
        yield running


def _observe_installed(root, executor, tmp_path, package, *args):
    """`_observe` in the specimen's environment, `package` installed in it from the registry."""
    env = environment.prepare(root, _envs(tmp_path))
    assert any(p.startswith(f"{package}==") for p in env.installed), env.not_installed
    return _observe(root, executor, env.path, missing_imports(str(root), (env.path,)), *args)


def _observe(root: Path, executor: Executor, env: str | None = None, stubs: tuple[str, ...] = (),
             limits: dict = LIMITS) -> list[DriverRun]:
    entries = extract_repo(root, root.name, Budget()).entries
    return observe(root, entries, executor, env, stubs, limits=limits)


def _by_target(runs: list[DriverRun]) -> dict[str, DriverRun]:
    return {r.driver.target: r for r in runs}


# --- 1. a pytest suite: a conftest fixture, a module fixture, parametrize --------------------------------------------

PYTEST_SUITE = {
    "annotate/__init__.py": "",
    "annotate/votes.py": '''"""Aggregating crowd annotations."""
import numpy as np


def smooth_counts(counts, alpha=1.0):
    """Add-alpha smoothing of each item's vote counts, as rates."""
    counts = np.asarray(counts, dtype=float) + alpha
    return counts / counts.sum(axis=1, keepdims=True)


def vote_entropy(counts, alpha=1.0):
    """The entropy of each item's smoothed vote distribution, in nats."""
    rates = smooth_counts(counts, alpha)
    return -(rates * np.log(rates)).sum(axis=1)
''',
    "tests/conftest.py": '''import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(7)


@pytest.fixture
def counts(rng):
    return rng.integers(0, 6, size=(30, 4))
''',
    "tests/test_votes.py": '''import numpy as np
import pytest

from annotate.votes import vote_entropy


@pytest.fixture
def unanimous():
    out = np.zeros((5, 4), dtype=int)
    out[:, 2] = 9
    return out


@pytest.mark.parametrize("alpha", [0.5, 1.0, 2.0])
def test_entropy_is_one_value_per_item(counts, unanimous, alpha):
    spread = vote_entropy(counts, alpha)
    assert spread.shape == (len(counts),)
    assert vote_entropy(unanimous, alpha).max() < spread.max()
''',
}


def test_a_parametrized_test_with_fixtures_is_run_as_its_node_and_its_score_is_per_sample(tmp_path, executor):
    runs = _observe(_write(tmp_path / "annotate", PYTEST_SUITE), executor)
    (run,) = runs
    assert run.driver.kind == "test" and run.driver.target == "tests/test_votes.py::test_entropy_is_one_value_per_item"
    assert set(run.driver.fixtures) == {"counts", "rng", "unanimous"}  # conftest's, the module's, and theirs
    assert run.status == "ran" and run.ended == "passed", (run.ended, run.error)
    counts = {o.key: o.count for o in run.observed}
    assert counts["annotate/votes.py::vote_entropy"] == 6  # three parameters, two calls each
    seen = observations(runs)
    entropy = seen["annotate/votes.py::vote_entropy"]
    assert entropy.per_sample and entropy.kind == "test" and entropy.driver == run.driver.target
    assert entropy.returns == "numpy.ndarray float64 [30]" and entropy.n == 30 and entropy.calls == 6
    assert entropy.caller_path == "tests/test_votes.py" and entropy.line == 16
    assert not seen["annotate/votes.py::smooth_counts"].per_sample  # rates of the same shape: a transform


# --- 2. a callable class ------------------------------------------------------------------------------------------

CALLABLE_CLASS = {
    "ranker/__init__.py": "",
    "ranker/scoring.py": '''import numpy as np


class TemperedMargin:
    """The gap between the given label's tempered log-probability and the best other class's."""

    def __init__(self, temperature=2.0):
        self.temperature = temperature

    def __call__(self, logits, labels):
        z = np.asarray(logits, dtype=float) / self.temperature
        z = z - z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        rows = np.arange(len(labels))
        own = logp[rows, labels].copy()
        logp[rows, labels] = -np.inf
        return own - logp.max(axis=1)
''',
    "examples/rank_batch.py": '''import numpy as np

from ranker.scoring import TemperedMargin

rng = np.random.default_rng(3)
logits = rng.normal(size=(48, 6))
labels = rng.integers(0, 6, size=48)
score = TemperedMargin(temperature=1.5)
order = np.argsort(score(logits, labels))
print("least confident:", order[:5])
''',
}


def test_a_callable_class_is_observed_per_sample_for_its_class(tmp_path, executor):
    runs = _observe(_write(tmp_path / "ranker", CALLABLE_CLASS), executor)
    (run,) = runs
    assert run.driver.kind == "example" and run.status == "ran", (run.ended, run.error)
    assert {o.key: o.count for o in run.observed} == {"ranker/scoring.py::TemperedMargin.__init__": 1,
                                                      "ranker/scoring.py::TemperedMargin.__call__": 1}
    margin = observations(runs)["ranker/scoring.py::TemperedMargin"]
    assert margin.per_sample and margin.returns == "numpy.ndarray float64 [48]" and margin.n == 48
    assert margin.caller_path == "examples/rank_batch.py" and margin.line == 8  # where the class was built


# --- 3. a training script: argparse epochs, an MNIST download, a hook each epoch --------------------------------------

TRAINING_SCRIPT = {
    "probe_dynamics.py": '''import numpy as np


def epoch_margins(logits, targets):
    """Each image's logit for its label minus the largest other logit, after one epoch."""
    rows = np.arange(len(targets))
    own = logits[rows, targets].copy()
    logits = logits.copy()
    logits[rows, targets] = -np.inf
    return own - logits.max(axis=1)
''',
    "train_probe.py": '''"""A linear probe on MNIST; each image's margin is kept after every epoch."""
import argparse

import numpy as np
import torch
from torchvision import datasets, transforms

from probe_dynamics import epoch_margins

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=100)
parser.add_argument("--lr", type=float, default=0.1)
parser.add_argument("--data", default="./data")
args = parser.parse_args()

train = datasets.MNIST(args.data, train=True, download=True, transform=transforms.ToTensor())
x, y = next(iter(torch.utils.data.DataLoader(train, batch_size=len(train))))
x = x.flatten(1)
model = torch.nn.Linear(784, 10)
opt = torch.optim.SGD(model.parameters(), lr=args.lr)
history = []
for epoch in range(args.epochs):
    for batch in torch.randperm(len(x)).split(128):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x[batch]), y[batch]).backward()
        opt.step()
    with torch.no_grad():
        history.append(epoch_margins(model(x).numpy(), y.numpy()))
print(np.stack(history).mean(axis=1))
''',
}


@needs_registry
def test_a_training_script_runs_three_epochs_on_planted_mnist_and_its_hook_is_per_sample(tmp_path, executor):
    root = _write(tmp_path / "probe", TRAINING_SCRIPT)
    runs = _observe_installed(root, executor, tmp_path, "torchvision")
    (run,) = runs
    assert run.driver.kind == "script" and run.status == "ran", (run.ended, run.error)
    assert run.replaced == ["the default of --epochs lowered from 100 to 3", "torchvision.datasets.MNIST"]
    (code,) = run.observed
    assert code.key == "probe_dynamics.py::epoch_margins" and code.count == 3  # once per (shortened) epoch
    seen = observations(runs)["probe_dynamics.py::epoch_margins"]
    assert seen.per_sample and seen.returns == "numpy.ndarray float32 [512]" and seen.calls == 3
    assert seen.replaced == run.replaced


# --- 4. a notebook ------------------------------------------------------------------------------------------------


def _cell(kind: str, text: str) -> dict:
    cell = {"cell_type": kind, "metadata": {}, "source": text.splitlines(keepends=True)}
    return {**cell, "execution_count": None, "outputs": []} if kind == "code" else cell


NOTEBOOK_REPO = {
    "labelcheck/__init__.py": "",
    "labelcheck/agreement.py": '''import numpy as np


def neighbour_vote(features, labels, k=5):
    """The share of each example's k nearest neighbours that carry its label."""
    d = ((features[:, None, :] - features[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(d, np.inf)
    nearest = np.argsort(d, axis=1)[:, :k]
    return (labels[nearest] == labels[:, None]).mean(axis=1)
''',
    "notebooks/inspect_labels.ipynb": json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        _cell("markdown", "# Which labels look wrong?\n\nEach example is scored by how many of its neighbours agree."),
        _cell("code", "%load_ext autoreload\nimport numpy as np\nfrom labelcheck.agreement import neighbour_vote"),
        _cell("code", "rng = np.random.default_rng(5)\nfeatures = rng.normal(size=(60, 3))\n"
                      "labels = (features[:, 0] > 0).astype(int)\nlabels[:4] = 1 - labels[:4]"),
        _cell("code", "votes = neighbour_vote(features, labels, k=5)\nvotes[:10]"),
    ]}, indent=1),
}


def test_a_notebooks_code_cells_are_run_and_observed_as_a_notebook(tmp_path, executor):
    runs = _observe(_write(tmp_path / "labelcheck", NOTEBOOK_REPO), executor)
    (run,) = runs
    assert run.driver.kind == "notebook" and run.driver.target == "notebooks/inspect_labels.ipynb"
    assert run.status == "ran", (run.ended, run.error)
    seen = observations(runs)["labelcheck/agreement.py::neighbour_vote"]
    assert seen.kind == "notebook" and seen.driver == "notebooks/inspect_labels.ipynb"
    assert seen.per_sample and seen.returns == "numpy.ndarray float64 [60]" and seen.calls == 1


# --- 5. a hook driven by a loop -----------------------------------------------------------------------------------

HOOK_REPO = {
    "dynamics/__init__.py": "",
    "dynamics/tracker.py": '''import numpy as np


class ConfidenceTracker:
    """Keeps, for every training example, the probability given to its label at the end of each epoch."""

    def __init__(self, labels):
        self.labels = np.asarray(labels)
        self.history = []

    def on_epoch_end(self, epoch, probs):
        rows = np.arange(len(self.labels))
        self.history.append(np.asarray(probs)[rows, self.labels])

    def scores(self):
        """Mean confidence across epochs, less its spread."""
        record = np.stack(self.history)
        return record.mean(axis=0) - record.std(axis=0)
''',
    "examples/toy_training.py": '''import numpy as np

from dynamics.tracker import ConfidenceTracker

rng = np.random.default_rng(11)
x = rng.normal(size=(80, 5))
y = (x @ rng.normal(size=(5, 3))).argmax(axis=1)
y[:6] = (y[:6] + 1) % 3
w = np.zeros((5, 3))
tracker = ConfidenceTracker(y)
for epoch in range(5):
    z = x @ w
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    w -= 0.5 * x.T @ (p - np.eye(3)[y]) / len(x)
    tracker.on_epoch_end(epoch, p)
print(np.argsort(tracker.scores())[:6])
''',
}


def test_a_hook_called_each_epoch_is_observed_per_sample_for_its_class_with_its_calls(tmp_path, executor):
    root = _write(tmp_path / "dynamics", HOOK_REPO)
    runs = _observe(root, executor)
    (run,) = runs
    assert run.driver.kind == "example" and run.status == "ran", (run.ended, run.error)
    assert {o.key: o.count for o in run.observed} == {"dynamics/tracker.py::ConfidenceTracker.__init__": 1,
                                                      "dynamics/tracker.py::ConfidenceTracker.on_epoch_end": 5,
                                                      "dynamics/tracker.py::ConfidenceTracker.scores": 1}
    tracker = observations(runs)["dynamics/tracker.py::ConfidenceTracker"]
    assert tracker.per_sample and tracker.calls == 5 and tracker.n == 80
    assert tracker.returns == "numpy.ndarray float64 [80]"  # `scores()`, from what the epochs recorded
    verified = verify_checkout(root, workers=1, planted=False, limits=LIMITS)
    chosen = {s.qualname: s for s in verified.samples}
    sample = chosen["ConfidenceTracker"]
    assert sample.link_basis in ("observed", "behaviour") and sample.why_chosen.startswith("observed: the repository's example")
    assert sample.observed is not None and sample.observed.calls == 5 and sample.observed.driver == "examples/toy_training.py"


# --- 6. a driver that fails before it reaches its entry -----------------------------------------------------------

FAILING_DRIVER = {
    "calibrate/__init__.py": "",
    "calibrate/gaps.py": '''import numpy as np


def confidence_gap(probs, labels):
    """How far each prediction's confidence lies from whether it was right."""
    probs = np.asarray(probs, dtype=float)
    labels = np.asarray(labels)
    return probs.max(axis=1) - (probs.argmax(axis=1) == labels)
''',
    "scripts/evaluate.py": '''import os
import pickle

from calibrate.gaps import confidence_gap

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "..", "checkpoints", "val_outputs.pkl"), "rb") as handle:
    saved = pickle.load(handle)
gap = confidence_gap(saved["probs"], saved["labels"])
print("mean gap", gap.mean())
''',
    "tests/test_gaps.py": '''import numpy as np
from netcal.metrics import ECE

from calibrate.gaps import confidence_gap

BINNED = ECE(bins=10)  # an optional package the runner lacks: collecting this file fails before any test runs


def test_gap_agrees_with_the_binned_error():
    probs = np.random.default_rng(0).dirichlet(np.ones(4), size=50)
    labels = probs.argmax(axis=1)
    assert abs(confidence_gap(probs, labels).mean() - BINNED.measure(probs, labels)) < 0.1
''',
}


def test_a_driver_that_fails_before_its_entry_blames_nothing_on_the_entry(tmp_path, executor):
    root = _write(tmp_path / "calibrate", FAILING_DRIVER)
    runs = _by_target(_observe(root, executor))
    assert set(runs) == {"scripts/evaluate.py", "tests/test_gaps.py::test_gap_agrees_with_the_binned_error"}
    script = runs["scripts/evaluate.py"]
    assert script.status == "failed" and script.ended == "raised"
    assert script.error is not None and script.error.startswith("FileNotFoundError"), script.error
    test = runs["tests/test_gaps.py::test_gap_agrees_with_the_binned_error"]
    assert test.status == "failed" and test.ended.startswith("pytest exit"), (test.ended, test.error)
    assert all(r.observed == [] for r in runs.values()) and observations(runs.values()) == {}  # neither reached it
    # verify gives the missing package a stand-in that raises when used: the module-level use still fails
    verified = verify_checkout(root, workers=1, planted=False, limits=LIMITS)
    assert sorted((d.driver.target, d.status) for d in verified.drivers) == [
        ("scripts/evaluate.py", "failed"), ("tests/test_gaps.py::test_gap_agrees_with_the_binned_error", "failed")]
    (sample,) = [s for s in verified.samples if s.qualname == "confidence_gap"]
    assert sample.observed is None  # no driver showed it being called
    assert sample.link_basis != "observed" and not sample.why_chosen.startswith("observed")
    assert sample.status == "ran", (sample.status, sample.reason)  # judged on its own cases, not on the driver's failure
    said = " ".join([sample.reason, *sample.notes])
    assert "evaluate.py" not in said and "test_gaps" not in said and "FileNotFoundError" not in said


def test_a_test_that_fails_at_collection_says_why(tmp_path, executor):
    root = _write(tmp_path / "calibrate", {k: v for k, v in FAILING_DRIVER.items() if k != "scripts/evaluate.py"})
    (run,) = _observe(root, executor)
    assert run.status == "failed"
    assert run.error is not None and "No module named 'netcal'" in run.error, (run.ended, run.error)


# --- 7. JAX ---------------------------------------------------------------------------------------------------------

JAX_REPO = {
    "jaxmargin/__init__.py": "",
    "jaxmargin/margins.py": '''import jax
import jax.numpy as jnp


def logit_margin(logits, labels):
    """Each example's logit for its label minus the largest logit of another class."""
    own = jnp.take_along_axis(logits, labels[:, None], axis=1)[:, 0]
    mask = jax.nn.one_hot(labels, logits.shape[1], dtype=bool)
    return own - jnp.where(mask, -jnp.inf, logits).max(axis=1)
''',
    "tests/test_margins.py": '''import jax
import jax.numpy as jnp

from jaxmargin.margins import logit_margin


def test_margin_has_one_value_per_example():
    key_logits, key_labels = jax.random.split(jax.random.PRNGKey(0))
    logits = jax.random.normal(key_logits, (32, 10))
    labels = jax.random.randint(key_labels, (32,), 0, 10)
    margins = logit_margin(logits, labels)
    assert margins.shape == (32,)
    assert bool(jnp.all(margins[labels == logits.argmax(axis=1)] > 0))
''',
}


@needs_registry
def test_a_jax_function_called_by_a_test_is_observed_per_sample_with_its_arrays_summarised(tmp_path, executor):
    root = _write(tmp_path / "jaxmargin", JAX_REPO)
    env = environment.prepare(root, _envs(tmp_path))
    assert any(p.startswith("jaxlib==") for p in env.installed), env.not_installed
    # Importing JAX and compiling its first operations costs about 6 s of CPU time on a 2-core machine, tracer or
    # not: the whole driver share of an 8 s case. The default case budget (20 s) is given here.
    runs = _observe(root, executor, env.path, missing_imports(str(root), (env.path,)), limits={"cpu_seconds": 20})
    (run,) = runs
    assert run.status == "ran" and run.ended == "passed", (run.ended, run.error)
    (code,) = [o for o in run.observed if o.key == "jaxmargin/margins.py::logit_margin"]
    (call,) = code.calls
    assert call.args["logits"]["shape"] == [32, 10] and call.args["logits"]["dtype"] == "float32"
    assert call.args["labels"]["shape"] == [32] and call.args["labels"]["dtype"] == "int32"
    assert call.result is not None and call.result["shape"] == [32] and call.result["dtype"] == "float32"
    assert "min" in call.result and "max" in call.result  # its range, as for a numpy array
    seen = observations(runs)["jaxmargin/margins.py::logit_margin"]
    assert seen.per_sample and seen.returns.endswith("float32 [32]") and seen.returns.startswith("jax")


# --- 8. drivers that wait for input, fork, write outside their scratch folder, or show a plot --------------------------

HOSTILE_REPO = {
    "robustfit/__init__.py": "",
    "robustfit/losses.py": '''"""Robust losses of a multi-output regression, one value per example (summed over its outputs)."""
import numpy as np


def _residuals(pred, target):
    return np.asarray(pred, dtype=float) - np.asarray(target, dtype=float)


def huber_per_sample(pred, target, delta=1.0):
    r = np.abs(_residuals(pred, target))
    return np.where(r <= delta, 0.5 * r ** 2, delta * (r - 0.5 * delta)).sum(axis=1)


def cauchy_per_sample(pred, target, scale=1.0):
    return (0.5 * scale ** 2 * np.log1p((_residuals(pred, target) / scale) ** 2)).sum(axis=1)


def tukey_weights(pred, target, c=4.685):
    """Tukey's biweight of each example's largest residual: zero past `c`."""
    u = np.abs(_residuals(pred, target)).max(axis=1) / c
    return np.where(u < 1, (1 - u ** 2) ** 2, 0.0)


def welsch_per_sample(pred, target, c=2.985):
    return (c ** 2 / 2 * (1 - np.exp(-(_residuals(pred, target) / c) ** 2))).sum(axis=1)
''',
    "examples/fit_huber.py": '''import numpy as np

from robustfit.losses import huber_per_sample

rng = np.random.default_rng(2)
target = rng.normal(size=(120, 3))
pred = target + rng.standard_t(2, size=(120, 3))
print(huber_per_sample(pred, target, delta=1.5).mean())
''',
    "scripts/interactive_fit.py": '''import numpy as np

from robustfit.losses import cauchy_per_sample

scale = float(input("scale of the Cauchy loss? "))
grid = np.linspace(-3, 3, 50).reshape(25, 2)
print(cauchy_per_sample(grid, np.zeros_like(grid), scale).sum())
''',
    "scripts/parallel_fit.py": '''import os

import numpy as np

from robustfit.losses import tukey_weights

pid = os.fork()
if pid == 0:  # the worker: its loop waits for a job that never comes
    while True:
        pass
os.waitpid(pid, 0)
grid = np.linspace(-6, 6, 40).reshape(20, 2)
print(tukey_weights(grid, np.zeros_like(grid)).sum())
''',
    "scripts/export_losses.py": '''import os

import numpy as np

from robustfit.losses import welsch_per_sample

rng = np.random.default_rng(4)
losses = welsch_per_sample(rng.normal(size=(64, 2)), rng.normal(size=(64, 2)))
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "welsch_losses.npy")
np.save(out, losses)
''',
}


def test_drivers_that_wait_for_input_fork_or_write_outside_are_cut_or_failed_and_the_others_go_on(tmp_path, executor):
    root = _write(tmp_path / "robustfit", HOSTILE_REPO)
    runs = _by_target(_observe(root, executor))
    assert set(runs) == {"examples/fit_huber.py", "scripts/interactive_fit.py", "scripts/parallel_fit.py",
                         "scripts/export_losses.py"}
    assert all(r.status != "not_run" for r in runs.values())
    reading = runs["scripts/interactive_fit.py"]  # stdin is empty in the sandbox: no wait, an EOFError
    assert reading.status == "failed" and reading.error is not None and reading.error.startswith("EOFError"), reading
    assert reading.observed == []
    forking = runs["scripts/parallel_fit.py"]  # its worker spins for ever, the script waits on it: the run is cut
    assert forking.status == "cut", (forking.ended, forking.error)
    assert forking.observed == []
    writing = runs["scripts/export_losses.py"]  # the checkout is read-only: the save fails after the call
    assert writing.status == "failed" and writing.ended == "raised", (writing.ended, writing.error)
    assert writing.error is not None and "Read-only file system" in writing.error, writing.error
    assert [o.key for o in writing.observed] == ["robustfit/losses.py::welsch_per_sample"]
    assert not (root / "scripts" / "welsch_losses.npy").exists()
    fine = runs["examples/fit_huber.py"]
    assert fine.status == "ran", (fine.ended, fine.error)
    seen = observations(runs.values())
    assert seen["robustfit/losses.py::huber_per_sample"].per_sample
    assert seen["robustfit/losses.py::welsch_per_sample"].per_sample  # what it called before it failed still counts
    assert set(seen) == {"robustfit/losses.py::huber_per_sample", "robustfit/losses.py::welsch_per_sample"}


FORKING_REPO = {
    "robustfit/__init__.py": "",
    "robustfit/losses.py": HOSTILE_REPO["robustfit/losses.py"],
    "scripts/fork_after_scoring.py": '''import os

import numpy as np

from robustfit.losses import tukey_weights

grid = np.linspace(-6, 6, 40).reshape(20, 2)
weights = tukey_weights(grid, np.zeros_like(grid))
pid = os.fork()
if pid == 0:  # a worker that never gets its job
    while True:
        pass
os.waitpid(pid, 0)
''',
}


def test_a_driver_cut_while_its_forked_worker_spins_keeps_what_it_called_before(tmp_path, executor):
    (run,) = _observe(_write(tmp_path / "robustfit", FORKING_REPO), executor)
    assert run.status == "cut"
    assert [o.key for o in run.observed] == ["robustfit/losses.py::tukey_weights"]


PLOTTING_REPO = {
    "robustplot/__init__.py": "",
    "robustplot/weights.py": '''import numpy as np


def bisquare_weights(features, target, coef, c=4.685):
    """The bisquare weight each example gets in the next step of a reweighted least-squares fit."""
    residuals = target - features @ coef
    u = np.clip(np.abs(residuals) / c, 0, 1)
    return (1 - u ** 2) ** 2
''',
    "examples/show_weights.py": '''import matplotlib.pyplot as plt
import numpy as np

from robustplot.weights import bisquare_weights

rng = np.random.default_rng(8)
features = rng.normal(size=(200, 2))
target = features @ np.array([1.0, -2.0]) + rng.standard_t(3, size=200)
weights = bisquare_weights(features, target, np.array([1.0, -2.0]))
plt.scatter(target, weights, s=4)
plt.title("bisquare weights")
plt.show()
''',
}


@needs_registry
def test_a_driver_that_shows_a_plot_does_not_wait_for_a_window(tmp_path, executor):
    root = _write(tmp_path / "robustplot", PLOTTING_REPO)
    runs = _observe_installed(root, executor, tmp_path, "matplotlib")
    (run,) = runs
    assert run.status == "ran" and run.ended == "returned", (run.ended, run.error)  # the Agg backend: show() returns
    assert run.cpu_seconds is not None and run.cpu_seconds < LIMITS["cpu_seconds"] * 0.75
    seen = observations(runs)["robustplot/weights.py::bisquare_weights"]
    assert seen.per_sample and seen.returns == "numpy.ndarray float64 [200]"


# --- relative paths as the authors ran them, and a README read block after block -----------------------------------

RELATIVE_REPO = {
    "lib/scoring.py": '''import numpy as np


def margin_scores(probs, labels):
    """The probability of each example's label less the largest other probability."""
    rows = np.arange(len(labels))
    given = probs[rows, labels]
    rest = probs.copy()
    rest[rows, labels] = -np.inf
    return given - rest.max(axis=1)
''',
    "results/.gitkeep": "",
    "notebooks/margins.ipynb": json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        _cell("code", "import sys\nsys.path.append('../lib')\nimport numpy as np\nfrom scoring import margin_scores"),
        _cell("code", "rng = np.random.default_rng(2)\nprobs = rng.dirichlet(np.ones(4), size=50)\n"
                      "labels = rng.integers(0, 4, 50)\nm = margin_scores(probs, labels)\n"
                      "np.save('../results/margins.npy', m)"),
    ]}, indent=1),
    "README.md": '''# margins

Install, then load your predictions:

```bash
pip install -e .
```

```python
import sys; sys.path.append("lib")
import numpy as np
probs = np.full((30, 3), 1 / 3)
labels = np.zeros(30, dtype=int)
```

and score them:

```python
from scoring import margin_scores
print(margin_scores(probs, labels)[:5])
```
''',
}


def test_a_notebook_runs_from_its_folder_and_a_readme_block_after_the_blocks_before_it(tmp_path, executor):
    """A notebook's relative paths (`../lib`, `../results/…`) resolve as in its authors' checkout, and what it writes
    lands in the sandbox's scratch, not the checkout; a README block uses what the Python blocks before it defined."""
    without = {name: text for name, text in RELATIVE_REPO.items() if name != "README.md"}
    root = _write(tmp_path / "margins", without)  # one driver at a time: the first to observe the entry settles it
    (notebook,) = _observe(root, executor)
    assert notebook.status == "ran", (notebook.ended, notebook.error)
    assert not (root / "results" / "margins.npy").exists()
    readme = {name: text for name, text in RELATIVE_REPO.items() if not name.endswith(".ipynb")}
    (block,) = _observe(_write(tmp_path / "margins-readme", readme), executor)
    assert block.driver.target == "README.md#block-2" and block.driver.setup, block.driver
    assert block.status == "ran", (block.ended, block.error)
    seen = observations([notebook])["lib/scoring.py::margin_scores"]
    assert seen.per_sample and seen.returns == "numpy.ndarray float64 [50]"
    assert observations([block])["lib/scoring.py::margin_scores"].returns == "numpy.ndarray float64 [30]"


LOCAL_FILES_REPO = {
    "influence/__init__.py": "",
    "influence/scores.py": '''import numpy as np


def self_influence(X, y, l2=1e-2):
    """Each training point's influence on its own loss under a ridge-regularised linear fit."""
    H = X.T @ X / len(X) + l2 * np.eye(X.shape[1])
    w = np.linalg.solve(H, X.T @ (2 * y - 1) / len(X))
    residual = X @ w - (2 * y - 1)
    leverage = np.einsum("ij,jk,ik->i", X, np.linalg.inv(H), X) / len(X)
    return residual ** 2 * leverage
''',
    "examples/analyse.py": '''import os

import numpy as np

from influence.scores import self_influence

data = np.load("data/features_train-test.npz")
X, y = data["X_train"], data["Y_train"]
X_test = data["X_test"]
scores = self_influence(X, y)
np.save(os.path.join("out", "run1", "self_influence.npy"), scores)
print(np.argsort(-scores)[:10], X_test.shape)
''',
}


def test_an_array_file_the_repository_does_not_ship_is_planted_and_a_folder_it_writes_into_is_made(tmp_path, executor):
    """The example reads `data/….npz`, which its authors had and the repository does not ship, and saves into a
    folder it never made: the archive answers planted features and labels by key, the folder is made in the working
    copy, and the score it computed is judged on the planted rows."""
    root = _write(tmp_path / "influence", LOCAL_FILES_REPO)
    (run,) = _observe(root, executor)
    assert run.status == "ran", (run.ended, run.error)
    assert run.replaced == ["planted arrays for the missing file data/features_train-test.npz",
                            "the folder out/run1 it writes into, made"]
    seen = observations([run])["influence/scores.py::self_influence"]
    assert seen.per_sample and seen.returns == "numpy.ndarray float64 [512]"
    assert seen.values is not None and len(seen.values) == 512 and set(seen.planted_kinds or {}) == {
        "mislabelled", "atypical", "ood"}
    assert not (root / "out").exists()
