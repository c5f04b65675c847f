"""Planted data in place of the outside world: a driver that asks torchvision for MNIST gets the planted stand-in,
runs on it in the sandbox, and its record says what was replaced."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

from paperproof.catalogue.budget import Budget
from paperproof.catalogue.extract import extract_repo
from paperproof.catalogue.observed import observations
from paperproof.fixtures.standins import ATYPICAL, MISLABELLED, OOD, TORCHVISION, planted_images
from paperproof.fixtures.stubs import missing_imports
from paperproof.runner import environment
from paperproof.runner.executor import Executor
from paperproof.runner.observe import observe
from tests.test_environment import _registry_reachable, needs_registry  # noqa: F401 - its condition names it


def test_planted_images_have_the_datasets_shapes_and_their_planted_samples():
    images, labels, planted = planted_images(TORCHVISION["CIFAR10"], 200, 11)
    assert images.shape == (200, 32, 32, 3) and images.dtype == np.uint8
    assert labels.shape == (200,) and set(labels.tolist()) <= set(range(10))
    assert {k: len(v) for k, v in planted.items()} == {"mislabelled": int(200 * MISLABELLED),
                                                       "atypical": int(200 * (MISLABELLED + ATYPICAL)) - 20,
                                                       "ood": int(200 * (MISLABELLED + ATYPICAL + OOD)) - 30}
    assert not set(planted["mislabelled"]) & set(planted["ood"])
    grey, _, _ = planted_images(TORCHVISION["MNIST"], 50, 11)
    assert grey.shape == (50, 28, 28)
    again, labels_again, _ = planted_images(TORCHVISION["CIFAR10"], 200, 11)
    assert np.array_equal(images, again) and np.array_equal(labels, labels_again)  # the same every time


SPECIMEN = {
    "scoring.py": '''import numpy as np


def margins(logits, labels):
    z = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    own = p[np.arange(len(labels)), labels].copy()
    p[np.arange(len(labels)), labels] = 0
    return own - p.max(axis=1)
''',
    "examples/mnist.py": '''import torch
import torchvision
from torchvision import transforms

from scoring import margins

train = torchvision.datasets.MNIST("./data", train=True, download=True, transform=transforms.ToTensor())
loader = torch.utils.data.DataLoader(train, batch_size=64, shuffle=False)
x, y = next(iter(loader))
logits = torch.nn.Linear(784, 10)(x.view(len(x), -1))
print(len(train), margins(logits.detach().numpy(), y.numpy()).shape)
''',
}


@needs_registry
def test_a_script_that_downloads_mnist_runs_on_the_planted_stand_in(tmp_path):
    root = tmp_path / "mnistscores"
    for name, text in SPECIMEN.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    env = environment.prepare(root, Path(os.environ.get("PAPERPROOF_TEST_ENVS", tmp_path / "envs")))
    assert any(p.startswith("torchvision==") for p in env.installed), env.not_installed
    entries = extract_repo(root, "mnistscores", Budget()).entries
    with Executor(workers=1) as executor:
        (run,) = observe(root, entries, executor, env.path, missing_imports(str(root), (env.path,)))
    assert run.status == "ran", (run.ended, run.error)
    assert run.replaced == ["torchvision.datasets.MNIST"]
    seen = observations([run])["scoring.py::margins"]
    assert seen.per_sample and seen.returns == "numpy.ndarray float32 [64]"
    assert seen.replaced == ["torchvision.datasets.MNIST"]


SHORTEN = textwrap.dedent("""
    import argparse, json
    from paperproof.fixtures import standins
    standins.shorten_loops()
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--num_train_epochs", type=float, default=2.0)
    parser.add_argument("--lr", type=float, default=100.0)
    group = parser.add_argument_group("training")
    group.add_argument("-e", "--max-epochs", dest="max_epochs", type=int, default=50)
    print(json.dumps([vars(parser.parse_args([])), vars(parser.parse_args(["--epochs", "9"])), standins.used]))
""")


def test_an_epochs_option_defaults_to_a_few_epochs_and_the_record_says_so():
    done = subprocess.run([sys.executable, "-c", SHORTEN], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    defaults, given, used = json.loads(done.stdout)
    assert defaults == {"epochs": 3, "num_train_epochs": 2.0, "lr": 100.0, "max_epochs": 3}
    assert given["epochs"] == 9  # what the command line gives is kept
    assert used == ["the default of --epochs lowered from 200 to 3", "the default of --max-epochs lowered from 50 to 3"]


LONG_SCRIPT = {
    "dyn.py": '''import numpy as np


def epoch_losses(logits, labels):
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -logp[np.arange(len(labels)), labels]
''',
    "train.py": '''import argparse

import numpy as np

from dyn import epoch_losses

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=100000)
args = parser.parse_args()
rng = np.random.default_rng(0)
labels = rng.integers(0, 4, 300)
history = []
for epoch in range(args.epochs):
    logits = rng.normal(size=(300, 4)) + 0.01 * epoch
    for _ in range(200):  # an epoch's work
        logits = logits * 0.999
    history.append(epoch_losses(logits, labels))
print(np.mean(history, axis=0)[:5])
''',
}


def test_a_script_that_trains_for_ever_is_run_for_three_epochs(tmp_path):
    root = tmp_path / "longtrain"
    for name, text in LONG_SCRIPT.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    entries = extract_repo(root, "longtrain", Budget()).entries
    with Executor(workers=1) as executor:
        (run,) = observe(root, entries, executor)
    assert run.status == "ran", (run.ended, run.error)
    assert run.replaced == ["the default of --epochs lowered from 100000 to 3"]
    (code,) = run.observed
    assert code.key == "dyn.py::epoch_losses" and code.count == 3
    assert observations([run])["dyn.py::epoch_losses"].per_sample
