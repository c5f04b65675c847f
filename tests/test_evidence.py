"""Evidence read from an entry's ast: what it takes, what it does, what speaks against it, never its name."""

from __future__ import annotations

from paperproof.catalogue.extract import extract_module

# Written for these tests in the style of research code; every name says nothing or misleads.
CODE = '''
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def g(logits, targets):
    top = logits.gather(1, targets.view(-1, 1)).squeeze()
    masked = torch.scatter(logits, 1, targets.view(-1, 1), float("-inf"))
    other, _ = masked.max(1)
    return top - other


def h(correctness_trend):
    flips = 0
    for a, b in zip(correctness_trend[:-1], correctness_trend[1:]):
        flips += int(a and not b)
    return flips


def acc(preds, labels):
    return (preds == labels).sum() / len(labels)


def fit_all(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()


class Variability(nn.Module):
    def forward(self, x):
        return F.softmax(x, dim=-1)


class Base:
    def updates(self, logits):
        pass

    def compute_scores(self):
        raise NotImplementedError


class Tracker:
    def __init__(self, loader):
        self.loader = loader
        self.history = []

    def on_epoch_end(self, net):
        for x, y in self.loader:
            p = F.softmax(net(x), dim=1)
            self.history.append(p[torch.arange(len(y)), y])

    def scores(self):
        return np.std(np.stack(self.history), axis=0)


def show(conf, var):
    plt.scatter(var, conf)
    plt.savefig("map.png")
'''


def evidence():
    return {e.name: e.evidence for e in extract_module(CODE, repo="o/r", path="m.py")}


def test_what_a_metric_takes_and_does_is_read_from_its_code():
    ev = evidence()
    assert ev["g"].takes == ["predictions", "labels"]
    assert {"the gold label's probability", "margins between classes"} <= set(ev["g"].does)
    assert ev["h"].takes == ["one sample's trend"] and ev["h"].per_sample == "returns one value for the sample"
    assert "changes between consecutive epochs" in ev["h"].does
    assert {"softmax", "the gold label's probability", "a spread over epochs (std)"} <= set(ev["Tracker"].does)
    assert ev["Tracker"].per_sample == "records outputs in `on_epoch_end` and keeps a score per sample"
    assert ev["Tracker"].excluded is None


def test_what_speaks_against_an_entry_is_read_from_its_code_not_its_name():
    ev = evidence()
    assert ev["Variability"].excluded == "a model definition (a network class with forward/call)"
    assert ev["fit_all"].excluded == "a training loop (backward pass and optimiser step, or fit)"
    assert ev["Base"].excluded == "an abstract base: its methods do nothing"
    assert "dataset-level scores (accuracy, F1, AUROC, correlation)" in ev["acc"].against
    assert "plotting" in ev["show"].against and "file I/O" not in ev["show"].against


def test_a_loss_that_gives_one_number_for_the_batch_and_a_loader_picking_a_class_are_not_scores():
    code = (
        "import numpy as np\nimport torch\n\n\n"
        "class NegativeEntropy:\n    def __call__(self, outputs):\n        probs = torch.softmax(outputs, dim=1)\n"
        "        return torch.mean(torch.sum(probs.log() * probs, dim=1))\n\n\n"
        "class PerSampleEntropy:\n    def __call__(self, outputs):\n        probs = torch.softmax(outputs, dim=1)\n"
        "        return -(probs.log() * probs).sum(dim=1)\n\n\n"
        "def oversample(data, target):\n    rows = np.where(target == 1)[0]\n"
        "    return np.concatenate([data, data[rows]]), np.concatenate([target, target[rows]])\n\n\n"
        "def disagreement(labels, preds):\n    return np.where(labels == preds, 0.0, 1.0)\n")
    ev = {e.name: e.evidence for e in extract_module(code, repo="o/r", path="m.py")}
    assert "dataset-level scores (accuracy, F1, AUROC, correlation)" in ev["NegativeEntropy"].against
    assert not ev["PerSampleEntropy"].against
    assert "the gold label's probability" not in ev["oversample"].does
    assert "the gold label's probability" in ev["disagreement"].does


def test_an_array_allocated_with_a_slot_per_given_label_and_returned_is_one_value_per_sample():
    code = (
        "import numpy as np\nimport torch\n\n\n"
        "def value(xa, y_train_few, xb, y_val_few, k):\n    n = len(y_train_few)\n    out = np.zeros(n)\n"
        "    for i in range(len(y_val_few)):\n        out += np.ones(n) * k\n    return out\n\n\n"
        "def flags(labels, guesses):\n    hit = torch.zeros_like(labels)\n    hit[labels == guesses] = 1\n"
        "    return hit\n\n\n"
        "def by_shape(targets):\n    s = np.empty(targets.shape[0])\n    s[:] = 1\n    return s\n\n\n"
        "def per_class(labels, classes):\n    counts = np.zeros(classes)\n    return counts\n\n\n"
        "def padded(labels):\n    buffer = np.zeros(len(labels))\n    return buffer.sum()\n")
    ev = {e.name: e.evidence for e in extract_module(code, repo="o/r", path="m.py")}
    slot = "returns one value per sample (an array with a slot per label it was given)"
    assert ev["value"].per_sample == slot and ev["flags"].per_sample == slot and ev["by_shape"].per_sample == slot
    assert ev["per_class"].per_sample is None and ev["padded"].per_sample is None
