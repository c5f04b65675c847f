"""The run's kind of network behind scikit-learn's classifier interface, as code written for scikit-learn calls it."""

from __future__ import annotations

import numpy as np

from paperproof.fixtures import training
from paperproof.fixtures.estimator import Estimator, fitted


def _blobs(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.repeat([3, 7, 9], 40)  # labels that are not 0..C-1
    x = rng.normal(size=(120, 5)) + np.eye(5)[[0, 1, 2]][np.searchsorted([3, 7, 9], y)] * 4
    return x.astype(np.float64), y


def test_it_learns_and_answers_in_the_labels_it_was_given() -> None:
    x, y = _blobs()
    clf = Estimator(epochs=60).fit(x, y)
    proba = clf.predict_proba(x)
    assert proba.shape == (120, 3) and np.allclose(proba.sum(axis=1), 1.0)
    assert list(clf.classes_) == [3, 7, 9] and set(clf.predict(x)) <= {3, 7, 9}
    assert clf.score(x, y) > 0.9


def test_a_clone_made_from_its_params_fits_the_same_model() -> None:
    x, y = _blobs(1)
    first = Estimator(epochs=15, seed=4)
    copy = type(first)(**first.get_params(deep=False))  # what sklearn.clone does
    assert np.array_equal(first.fit(x, y).predict_proba(x), copy.fit(x, y).predict_proba(x))
    assert copy.set_params(lr=0.5) is copy and copy.get_params()["lr"] == 0.5


def test_sample_weights_change_the_fit() -> None:
    x, y = _blobs(2)
    weights = np.where(y == 3, 0.0, 1.0)
    plain = Estimator(epochs=15).fit(x, y).predict_proba(x)
    weighted = Estimator(epochs=15).fit(x, y, sample_weight=weights).predict_proba(x)
    assert not np.allclose(plain, weighted)


def test_the_one_a_run_gives_is_fitted_on_its_inputs_and_labels() -> None:
    spec = training.RunSpec(seed=11, epochs=2, n=48, classes=3, features=8)
    run = training.start(spec)
    clf = fitted(run)
    assert clf.predict_proba(run.data.x).shape == (48, 3)



def test_it_takes_features_as_a_tensor_a_frame_or_images() -> None:
    import pandas as pd
    import torch

    x, y = _blobs(3)
    clf = Estimator(epochs=5).fit(torch.from_numpy(x), torch.from_numpy(y))
    assert clf.predict_proba(pd.DataFrame(x)).shape == (120, 3)
    images = np.random.default_rng(0).normal(size=(10, 1, 4, 4))
    assert Estimator(epochs=2).fit(images, np.arange(10) % 2).predict_proba(images).shape == (10, 2)


def test_read_as_a_boosted_model_stage_by_stage_its_first_k_epochs_answer() -> None:
    x, y = _blobs(2)
    clf = Estimator(epochs=30, seed=1).fit(x, y)
    gold = np.searchsorted(clf.classes_, y)

    def confidence(proba: np.ndarray) -> float:
        return float(proba[np.arange(len(y)), gold].mean())

    early = [confidence(clf.predict_proba(x, iteration_range=(0, k))) for k in (1, 5, 30)]
    assert early[0] < early[1] < early[2]  # the model learns as its stages go on
    assert np.array_equal(clf.predict_proba(x, iteration_range=(0, 30)), clf.predict_proba(x))  # all of them: the last
    assert np.array_equal(clf.predict_proba(x, ntree_start=0, ntree_end=5), clf.predict_proba(x, iteration_range=(0, 5)))
    assert np.array_equal(clf.predict_proba(x, num_iteration=500), clf.predict_proba(x))  # past its epochs: the last
