"""Planted data in place of the outside world: a driver that asks torchvision for MNIST, scikit-learn for an OpenML
dataset, Hugging Face for IMDB or Keras for CIFAR-10 gets the planted stand-in, runs on it in the sandbox, and its
record says what was replaced."""

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
from paperproof.fixtures.standins import (
    ATYPICAL,
    MISLABELLED,
    OOD,
    SENTIMENT,
    TORCHVISION,
    planted_images,
    planted_pairs,
    planted_table,
    planted_text,
)
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


def _planted_counts(n: int) -> dict[str, int]:
    return {"mislabelled": int(n * MISLABELLED), "atypical": int(n * (MISLABELLED + ATYPICAL)) - int(n * MISLABELLED),
            "ood": int(n * (MISLABELLED + ATYPICAL + OOD)) - int(n * (MISLABELLED + ATYPICAL))}


def test_planted_tables_have_a_centre_per_class_and_their_planted_rows():
    rows, labels, planted = planted_table(54, 7, 640, 17)
    assert rows.shape == (640, 54) and rows.dtype == np.float64
    assert labels.shape == (640,) and set(labels.tolist()) == set(range(7))
    assert {k: len(v) for k, v in planted.items()} == _planted_counts(640)
    assert len(set().union(*planted.values())) == sum(map(len, planted.values()))  # each row planted once at most
    clean = np.setdiff1d(np.arange(640), np.concatenate([planted[k] for k in planted]))
    means = np.stack([rows[clean][labels[clean] == c].mean(axis=0) for c in range(7)])
    nearest = np.linalg.norm(rows[:, None, :] - means[None], axis=2).argmin(axis=1)
    assert (nearest[clean] == labels[clean]).mean() > 0.95  # classes a model can learn
    assert (nearest[planted["mislabelled"]] != labels[planted["mislabelled"]]).mean() > 0.9  # flipped away from them
    norms = np.linalg.norm(rows, axis=1)
    assert norms[planted["ood"]].min() > np.percentile(norms[clean], 95)  # far from every centre
    again, labels_again, planted_again = planted_table(54, 7, 640, 17)
    assert np.array_equal(rows, again) and np.array_equal(labels, labels_again) and planted == planted_again
    table, values, by_kind = planted_table(8, 0, 200, 3)  # a regression's target, following four groups of rows
    assert table.shape == (200, 8) and values.shape == (200,) and values.dtype == np.float64
    assert {k: len(v) for k, v in by_kind.items()} == _planted_counts(200)
    group = np.rint(values - 1.0).astype(int)
    clean = np.setdiff1d(np.arange(200), np.concatenate([by_kind[k] for k in by_kind]))
    means = np.stack([table[clean][group[clean] == g].mean(axis=0) for g in range(4)])
    nearest = np.linalg.norm(table[:, None, :] - means[None], axis=2).argmin(axis=1)
    assert (nearest[clean] == group[clean]).mean() > 0.95
    assert (nearest[by_kind["mislabelled"]] != group[by_kind["mislabelled"]]).mean() > 0.9  # another group's target


def test_planted_text_has_each_classs_words_and_its_planted_sentences():
    texts, labels, planted = planted_text(SENTIMENT, 512, 11)
    assert len(texts) == 512 and all(isinstance(t, str) and t for t in texts)
    assert labels.shape == (512,) and set(labels.tolist()) == {0, 1}
    assert {k: len(v) for k, v in planted.items()} == _planted_counts(512)

    def votes(text: str, c: int) -> int:
        return sum(w in SENTIMENT[c] for w in text.split())

    clean = set(range(512)) - set().union(*planted.values())
    assert all(votes(texts[i], labels[i]) == 3 for i in clean)  # three words of its own class
    assert all(votes(texts[i], 1 - labels[i]) == 3 for i in planted["mislabelled"])  # its label flipped
    assert all(votes(texts[i], 1 - labels[i]) == 2 for i in planted["atypical"])  # two of the other class's
    assert all(votes(texts[i], 0) + votes(texts[i], 1) == 0 for i in planted["ood"])  # no class's at all
    assert planted_text(SENTIMENT, 512, 11)[0] == texts  # the same every time
    premises, hypotheses, relations, pairs = planted_pairs(128, 13)
    assert len(premises) == len(hypotheses) == len(relations) == 128 and set(relations.tolist()) == {0, 1, 2}
    assert {k: len(v) for k, v in pairs.items()} == _planted_counts(128)
    contradictions = [i for i in range(128) if relations[i] == 2 and i not in set().union(*pairs.values())]
    assert contradictions and all(hypotheses[i].startswith("no ") for i in contradictions)  # one negates the other


# A library the driver never imports is never imported: each is patched once the driver imports it. A stand-in
# Keras laid out as Keras 3 is (the public module re-exports the loader of `keras.src`), and Hugging Face's
# datasets from the runner's packages.
KERAS_LAYOUT = {
    "keras/__init__.py": "",
    "keras/src/__init__.py": "",
    "keras/src/datasets/__init__.py": "",
    "keras/src/datasets/mnist.py": 'def load_data(path="mnist.npz"):\n    raise OSError(f"could not download {path}")\n',
    "keras/src/datasets/cifar10.py": "def load_data():\n    raise OSError('could not download cifar-10')\n",
    "keras/datasets/__init__.py": "",
    "keras/datasets/mnist/__init__.py": "from keras.src.datasets.mnist import load_data  # noqa: F401\n",
}
AFTER_IMPORT = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from paperproof.fixtures import standins
    standins.install()
    before = sorted(m for m in ("keras", "datasets", "sklearn", "tensorflow", "torchvision") if m in sys.modules)
    from keras.datasets import mnist
    from keras.src.datasets import cifar10
    (x, y), (x_test, y_test) = mnist.load_data()
    (cx, cy), _ = cifar10.load_data()
    from datasets import load_dataset
    imdb = load_dataset("stanfordnlp/imdb")
    sst = load_dataset("glue", "sst2", split="validation[:50%]")
    try:
        load_dataset("someone/unlisted")
        unlisted = "answered"
    except Exception as exc:
        unlisted = type(exc).__name__
    print(json.dumps({"before": before, "mnist": [x.shape, str(x.dtype), y.shape, str(y.dtype), x_test.shape],
                      "cifar10": [cx.shape, cy.shape, str(cy.dtype)],
                      "imdb": {k: [len(d), d.column_names] for k, d in imdb.items()},
                      "imdb_classes": imdb["train"].features["label"].names, "imdb_row": imdb["train"][0],
                      "sst": [len(sst), sst.column_names], "unlisted": unlisted, "used": standins.used}))
""")
OWN_DATASETS = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    from paperproof.fixtures import standins
    standins.install()
    from datasets import load_dataset
    print(load_dataset("cifar10"), standins.used)
""")


def test_each_library_is_patched_once_the_driver_imports_it_and_none_is_imported_before(tmp_path):
    for name, text in KERAS_LAYOUT.items():
        (tmp_path / "libs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "libs" / name).write_text(text)
    offline = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", AFTER_IMPORT, str(tmp_path / "libs")], capture_output=True,
                          text=True, timeout=120, env=offline)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["before"] == []  # install() imported none of them
    assert seen["mnist"] == [[512, 28, 28], "uint8", [512], "uint8", [128, 28, 28]]
    assert seen["cifar10"] == [[512, 32, 32, 3], [512, 1], "uint8"]  # Keras gives CIFAR's labels as a column
    assert seen["imdb"] == {"train": [512, ["text", "label"]], "test": [128, ["text", "label"]],
                            "unsupervised": [128, ["text", "label"]]}
    assert seen["imdb_classes"] == ["neg", "pos"] and isinstance(seen["imdb_row"]["text"], str)
    assert seen["sst"] == [64, ["sentence", "label", "idx"]]
    assert seen["unlisted"] != "answered"  # a dataset not on the list meets the missing network
    assert seen["used"] == ["keras.datasets.mnist", "keras.datasets.cifar10", "datasets.load_dataset('stanfordnlp/imdb')",
                            "datasets.load_dataset('glue', 'sst2')"]
    own = tmp_path / "repo" / "datasets"  # a repository's own `datasets` package, with a loader of its own
    own.mkdir(parents=True)
    (own / "__init__.py").write_text("from .load import load_dataset  # noqa: F401\n")
    (own / "load.py").write_text("def load_dataset(name):\n    return 'its own ' + name\n")
    done = subprocess.run([sys.executable, "-c", OWN_DATASETS, str(tmp_path / "repo")], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "its own cifar10 []"


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
train.targets[0] = (int(train.targets[0]) + 1) % 10  # noise of its own, planted as such scripts do
assert train[0][1] == int(train.targets[0]) and len(train) == len(train.targets)
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


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def observe_specimen(tmp_path: Path, name: str, files: dict[str, str], installs: set[str] = frozenset()):
    """Write a specimen repository, install what it imports from the registry (`installs` must be among it), and
    run its one driver in the sandbox: that driver's record."""
    root = tmp_path / name
    _write(root, files)
    env = environment.prepare(root, Path(os.environ.get("PAPERPROOF_TEST_ENVS", tmp_path / "envs")))
    assert installs <= {p.split("==")[0] for p in env.installed}, env.not_installed
    entries = extract_repo(root, name, Budget()).entries
    with Executor(workers=1) as executor:
        (run,) = observe(root, entries, executor, env.path, missing_imports(str(root), (env.path,)))
    return run


OPENML_SPECIMEN = {
    "confident.py": '''import numpy as np


def self_confidence(probabilities, labels):
    """The probability a model gives each sample's own label: low for a likely label error."""
    return probabilities[np.arange(len(labels)), labels]
''',
    "scripts/find_label_errors.py": '''import numpy as np
from sklearn.datasets import fetch_openml
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_predict

from confident import self_confidence

X, y = fetch_openml("mnist_784", version=1, return_X_y=True, as_frame=False, parser="auto")
X, y = X[:300] / 255.0, y[:300].astype(int)
probabilities = cross_val_predict(LogisticRegression(max_iter=100), X, y, cv=3, method="predict_proba")
scores = self_confidence(probabilities, y)
print("most suspicious:", np.argsort(scores)[:10])
''',
}


@needs_registry
def test_a_script_that_fetches_from_openml_runs_on_the_planted_stand_in(tmp_path):
    run = observe_specimen(tmp_path, "labelerrors", OPENML_SPECIMEN, {"scikit-learn"})
    assert run.status == "ran", (run.ended, run.error)
    assert run.replaced == ["sklearn.datasets.fetch_openml('mnist_784')"]
    seen = observations([run])["confident.py::self_confidence"]
    assert seen.per_sample and seen.returns == "numpy.ndarray float64 [300]"


HUB_SPECIMEN = {
    "neighbours.py": '''import numpy as np


def neighbour_agreement(neighbour_labels, labels):
    """How many of each sample's nearest neighbours share its label: few for a likely label error."""
    return (neighbour_labels == labels[:, None]).mean(axis=1)
''',
    "examples/imdb_knn.py": '''import numpy as np
from datasets import load_dataset

from neighbours import neighbour_agreement

train = load_dataset("imdb", split="train")
texts, labels = train["text"], np.array(train["label"])
vocabulary = {w: i for i, w in enumerate(sorted({w for t in texts for w in t.lower().split()}))}
bags = np.zeros((len(texts), len(vocabulary)))
for row, text in enumerate(texts):
    for word in text.lower().split():
        bags[row, vocabulary[word]] += 1
bags /= np.linalg.norm(bags, axis=1, keepdims=True)
nearest = np.argsort(-(bags @ bags.T), axis=1)[:, 1:8]
print(neighbour_agreement(labels[nearest], labels)[:10])
''',
}


def test_a_script_that_loads_imdb_from_the_hub_runs_on_the_planted_stand_in(tmp_path):
    root = tmp_path / "imdbknn"
    _write(root, HUB_SPECIMEN)
    entries = extract_repo(root, "imdbknn", Budget()).entries
    with Executor(workers=1) as executor:
        (run,) = observe(root, entries, executor, None, missing_imports(str(root)))
    assert run.status == "ran", (run.ended, run.error)
    assert run.replaced == ["datasets.load_dataset('imdb')"]
    seen = observations([run])["neighbours.py::neighbour_agreement"]
    assert seen.per_sample and seen.returns == "numpy.ndarray float64 [512]"


KERAS_SPECIMEN = {
    "uncertainty.py": '''import numpy as np


def predictive_entropy(probabilities):
    """The entropy of each sample's predicted class distribution: high where the model is unsure."""
    return -(probabilities * np.log(probabilities + 1e-12)).sum(axis=1)
''',
    "examples/cifar_entropy.py": '''import numpy as np
import tensorflow as tf

from uncertainty import predictive_entropy

(x_train, y_train), (x_test, y_test) = tf.keras.datasets.cifar10.load_data()
x = x_test.reshape(len(x_test), -1).astype("float32") / 255.0
logits = x @ np.random.default_rng(0).normal(size=(x.shape[1], 10)) * 0.01
probabilities = np.exp(logits - logits.max(axis=1, keepdims=True))
probabilities /= probabilities.sum(axis=1, keepdims=True)
print(x_train.shape, y_train.shape, predictive_entropy(probabilities)[:5])
''',
}


@needs_registry
def test_a_script_that_loads_cifar10_through_keras_runs_on_the_planted_stand_in(tmp_path):
    # TensorFlow's CPU wheel is large: the first run installs it for minutes
    run = observe_specimen(tmp_path, "cifarentropy", KERAS_SPECIMEN, {"tensorflow-cpu"})
    assert run.status == "ran", (run.ended, run.error)
    assert run.replaced == ["keras.datasets.cifar10"]
    seen = observations([run])["uncertainty.py::predictive_entropy"]
    assert seen.per_sample and seen.returns == "numpy.ndarray float64 [128]"
