"""Entries driven through their protocols on a real training run, in the real sandbox.

The specimens are ours, written in the style of research code: a per-sample statistic fed by its loop
(its final method leaves its result behind, read through its base class's `scores`),
a per-batch accumulator, a reader of per-epoch logs, a Hugging Face-style callback, a model class,
and a module whose top-level import the runner lacks.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from paperproof.catalogue.extract import extract_repo
from paperproof.fixtures import training
from paperproof.fixtures.synth import synthesize
from paperproof.runner.executor import Executor, RunRequest
from paperproof.verify.checkout import verify_path

STATISTICS = '''
import numpy as np
import torch
import paperproof_absent_augment.image as imaugs


class TrainingStatistic:
    """What every per-sample statistic here shares: a hook fills it while the model trains, and `compute()`
    summarises it afterwards into `results[tag]`, the table report.py prints; `scores` reads it back."""

    def __init__(self, tag):
        self.tag = tag
        self.results = {}
        self.epochs_seen = 0

    def compute(self):
        raise NotImplementedError(f"{type(self).__name__} must say how to summarise what it saw")

    @property
    def scores(self):
        return self.results.get(self.tag)


class ForgetCounter(TrainingStatistic):
    """Forgetting events per sample (Toneva et al.): fed the whole set's logits after each epoch, it counts the
    epochs in which a sample it classified right the epoch before is classified wrong."""

    def __init__(self, dataloader, total_samples, tag="forgetting"):
        super().__init__(tag)
        self.dataloader = dataloader
        self.right_before = np.zeros(total_samples, dtype=bool)
        self.events = np.zeros(total_samples)

    def observe(self, logits, targets, probs, indices):
        right_now = (logits.argmax(1) == targets).numpy()
        rows = indices.numpy()
        self.events[rows] += self.right_before[rows] & ~right_now
        self.right_before[rows] = right_now
        self.epochs_seen += 1

    def compute(self):
        self.results[self.tag] = self.events.copy()


class MeanLoss(TrainingStatistic):
    """Each sample's cross-entropy averaged over the epochs, found by walking the loader with the model."""

    def __init__(self, dataloader, tag="loss"):
        super().__init__(tag)
        self.dataloader = dataloader
        self.summed = None

    def on_epoch_end(self, net, device):
        parts = []
        with torch.no_grad():
            for i, x, y in self.dataloader:
                parts.append(torch.nn.functional.cross_entropy(net(x.to(device)), y, reduction="none"))
        this_epoch = torch.cat(parts).numpy()
        self.summed = this_epoch if self.summed is None else self.summed + this_epoch
        self.epochs_seen += 1

    def compute(self):
        self.results[self.tag] = self.summed / self.epochs_seen


class Batch_Margin:
    def __init__(self, total_samples):
        self.margin = np.zeros(total_samples)

    def update(self, y_pred, y_batch, sample_ids):
        top = y_pred.topk(2, dim=1).values
        self.margin[sample_ids.numpy()] = (top[:, 0] - top[:, 1]).numpy()

    def finalize(self):
        return self.margin


class Margin_Area:
    """Area under the margin: the assigned logit's lead over the largest other logit, averaged over
    every time a sample is seen in training."""

    def __init__(self, total_samples):
        self.total = np.zeros(total_samples)
        self.seen = np.zeros(total_samples)

    def update(self, y_pred, y_batch, sample_ids):
        logits = y_pred.detach().clone()
        assigned = logits.gather(1, y_batch.view(-1, 1)).squeeze(1)
        logits.scatter_(1, y_batch.view(-1, 1), float("-inf"))
        idx = sample_ids.numpy()
        self.total[idx] += (assigned - logits.max(1).values).numpy()
        self.seen[idx] += 1

    def finalize(self):
        return self.total / self.seen


class Margin_Log:
    """Averages each sample's margin over the batches it is seen in, and writes the table, highest first."""

    def __init__(self, save_dir):
        self.save_dir = save_dir
        self.total, self.seen = {}, {}

    def update(self, y_pred, y_batch, sample_ids):
        top2 = y_pred.topk(2, dim=1)
        assigned = y_pred.gather(1, y_batch.view(-1, 1)).squeeze(1)
        other = torch.where(top2.indices[:, 0] == y_batch, top2.values[:, 1], top2.values[:, 0])
        for i, m in zip(sample_ids.tolist(), (assigned - other).tolist()):
            self.total[i] = self.total.get(i, 0.0) + m
            self.seen[i] = self.seen.get(i, 0) + 1

    def finalize(self):
        import os

        import pandas as pd

        rows = [{"sample_id": i, "margin": self.total[i] / self.seen[i]} for i in self.total]
        pd.DataFrame(rows).sort_values("margin", ascending=False).to_csv(
            os.path.join(self.save_dir, "margins.csv"), index=False)


class Row_Tracker:
    """Gold-label probability of every training row after each epoch; its scores are its properties."""

    def __init__(self, X, y):
        self.X, self.y = X, y
        self.history = []

    def on_epoch_end(self, net, device="cpu"):
        net.eval()
        gold = []
        with torch.no_grad():
            for i in range(len(self.X)):
                probabilities = net(self.X[i])
                gold.append(float(probabilities[int(self.y[i])]))
        self.history.append(gold)

    @property
    def confidence(self):
        return np.mean(self.history, axis=0)

    @property
    def variability(self):
        return np.std(self.history, axis=0)


def zoom_in(img, factor):
    return imaugs.scale(img, factor=factor)


def get_indices(scores, threshold):
    return np.flatnonzero(np.asarray(scores) > threshold)
'''

READER = '''
import json
import os


def read_training_dynamics(model_dir, id_field="guid"):
    """Merge per-epoch logs of logits into one record per example."""
    td_dir = os.path.join(model_dir, "training_dynamics")
    out = {}
    for epoch in range(len(os.listdir(td_dir))):
        with open(os.path.join(td_dir, f"dynamics_epoch_{epoch}.jsonl")) as handle:
            for line in handle:
                record = json.loads(line.strip())
                entry = out.setdefault(record[id_field], {"gold": record["gold"], "logits": []})
                entry["logits"].append(record[f"logits_epoch_{epoch}"])
    return out
'''

CALLBACKS = '''
import torch
from paperproof_absent_transformers import TrainerCallback


class GoldProbCallback(TrainerCallback):
    def __init__(self):
        self.history = []

    def on_epoch_end(self, args, state, control, **kwargs):
        model, loader = kwargs["model"], kwargs["eval_dataloader"]
        with torch.no_grad():
            probs = [torch.softmax(model(x), 1)[torch.arange(len(y)), y] for i, x, y in loader]
        self.history.append(torch.cat(probs))

    @property
    def confidence(self):
        return torch.stack(self.history).mean(0)

    def compute(self):
        return self.confidence


class SmallNet(torch.nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.fc = torch.nn.LazyLinear(num_classes)

    def forward(self, x):
        return self.fc(x.flatten(1))
'''


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("statistics-repo")
    (root / "src").mkdir()
    (root / "src" / "__init__.py").write_text("")
    (root / "src" / "sample_stats.py").write_text(textwrap.dedent(STATISTICS))
    (root / "src" / "selection.py").write_text(textwrap.dedent(READER))
    (root / "src" / "callbacks.py").write_text(textwrap.dedent(CALLBACKS))
    return root


@pytest.fixture(scope="module")
def runs(repo):
    entries = {e.qualname: e for e in extract_repo(repo, "o/statistics").entries}
    wanted = ["ForgetCounter", "MeanLoss", "Batch_Margin", "read_training_dynamics", "GoldProbCallback"]
    fixtures = {name: synthesize(entries[name], str(repo)) for name in wanted}
    with Executor(workers=1) as pool:
        results = {name: pool.run_one(RunRequest(entries[name], fixtures[name], str(repo))) for name in wanted}
    return fixtures, results


def _values(result, case_id):
    (case,) = [c for c in result.cases if c.case_id == case_id]
    assert case.outcome == "returned", case
    return case.value


def test_a_statistic_class_runs_through_its_own_hook_and_scores_on_the_training_run(runs):
    fixtures, results = runs
    result = results["ForgetCounter"]
    assert result.end == "completed" and all(c.outcome == "returned" for c in result.cases)
    assert fixtures["ForgetCounter"].stubs == ["paperproof_absent_augment", "paperproof_absent_transformers"]
    for case in fixtures["ForgetCounter"].cases:
        spec = training.RunSpec.from_case(case.model_dump(mode="json"))
        logits, observed = training.dynamics(spec)
        right = logits.argmax(-1) == observed[None, :]
        expected = ((right[:-1] & ~right[1:]).sum(0)).astype(float)
        got = _values(result, case.case_id)
        assert got.shape == [case.dims["N"]] and np.array_equal(np.asarray(got.data), expected)
    typical = next(c for c in result.cases if c.case_id == "typical")
    assert typical.repeat_equal is True


def test_classes_that_walk_the_loader_or_take_batches_get_what_they_unpack(runs):
    fixtures, results = runs
    assert fixtures["MeanLoss"].cases[0].protocol["batch"] == ["index", "x", "y"]
    loss = _values(results["MeanLoss"], "typical")
    assert loss.shape == [48] and loss.min > 0
    assert fixtures["Batch_Margin"].cases[0].protocol["hooks"] == [["update", "batch"]]
    margin = _values(results["Batch_Margin"], "wide")
    assert margin.shape == [64] and margin.min >= 0 and np.count_nonzero(margin.data) == 64


def test_a_reader_runs_on_logs_written_in_its_own_format(runs):
    fixtures, results = runs
    read = _values(results["read_training_dynamics"], "typical")
    assert read.type == "dict" and read.length == 48
    first = read.values["0"]
    assert set(first.keys) == {"gold", "logits"} and first.values["logits"].length == 4


def test_a_trainer_callback_subclassing_a_missing_framework_still_runs(runs):
    fixtures, results = runs
    assert fixtures["GoldProbCallback"].cases[0].protocol["kind"] == "hf_callback"
    confidence = _values(results["GoldProbCallback"], "typical")
    assert confidence.type == "Tensor" and confidence.shape == [48] and 0 < confidence.min <= confidence.max < 1


@pytest.fixture(scope="module")
def verified(repo):
    return {s.qualname: s for s in verify_path(repo, everything=True, workers=1)}


def test_a_per_batch_hook_is_judged_on_the_logits_of_the_training_passes_it_saw(verified):
    """The run is trained again outside the sandbox; a per-batch accumulator of margins is the paper's AUM on the
    logits of the training forward passes, not on the logits of the evaluation after each epoch."""
    margin = verified["Margin_Area"]
    assert margin.status == "ran", margin.reason
    assert [(f.metric, f.matches, f.paper, f.dynamics) for f in margin.fidelity] == [
        ("aum", "mean_logit_margin", True, "training")]
    assert margin.fidelity[0].cases_matched == margin.fidelity[0].cases == 4


def test_a_final_method_that_writes_its_table_is_judged_on_the_table_in_sample_order(verified):
    """`finalize()` returns nothing and writes margins.csv, highest first, into the folder it was given; the
    table, put back in sample order by its id column, is the paper's AUM on the training passes (batches that
    carry no index column still give each sample its own id)."""
    log = verified["Margin_Log"]
    assert log.status == "ran", log.reason
    assert [(f.output, f.metric, f.matches, f.dynamics) for f in log.fidelity] == [
        ("column margin", "aum", "mean_logit_margin", "training")]


def test_a_tracker_walking_its_rows_and_reading_probabilities_is_judged_on_its_properties(verified):
    """Constructed with the run's inputs and labels, fed the model after each epoch; it reads `net(x)` as
    probabilities, so the run's model ends in a softmax; its properties are its scores."""
    tracker = verified["Row_Tracker"]
    assert tracker.status == "ran", tracker.reason
    assert {(f.output, f.metric, f.matches, f.dynamics) for f in tracker.fidelity} == {
        ("key confidence", "confidence", "mean_gold_prob", "evaluated"),
        ("key variability", "variability", "ddof0", "evaluated")}


def test_a_module_with_an_uninstallable_import_runs_what_does_not_need_it_and_says_so(verified):
    samples = verified
    assert samples["get_indices"].status.startswith("ran")
    # It ran, and on the run trained again outside the sandbox it is recognised: forgetting events with
    # never-learned samples at 0, where the paper ranks them as the most forgettable.
    forgetting = samples["ForgetCounter"]
    assert forgetting.status == "ran_violates"
    assert [(f.metric, f.matches, f.dynamics, f.cases_matched) for f in forgetting.fidelity] == [
        ("forgetfulness", "never0_count", "evaluated", 4)]
    assert samples["zoom_in"].status == "unverified"
    assert "needs module paperproof_absent_augment" in samples["zoom_in"].reason
    assert any("stand-in modules: paperproof_absent_augment" in n for n in samples["get_indices"].notes)
    assert any(n.startswith("Driven as a training loop would (no loop of its repository calls its hooks) on a real "
                            "training run") for n in samples["ForgetCounter"].notes)
    assert samples["SmallNet"].status == "ran"
