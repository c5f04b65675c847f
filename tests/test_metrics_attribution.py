"""Tests for the exact attribution references: influence on L2-regularised logistic regression, TracIn.

Each definition is held to what it claims to measure: the influence of a training point predicts the change
of the test loss when the model is retrained without it; a TracIn term is the first-order change of a test
loss from one gradient step on a training point; and both self-influences find a flipped label.
"""

from __future__ import annotations

import numpy as np
import pytest

from paperproof.verify.metrics import attribution as A

L2 = 0.05


def blobs(seed: int, n: int, classes: int = 3, flip: int = 0):
    rng = np.random.default_rng(seed)
    centres = np.array([[-4.0, 0.0], [4.0, 0.0], [0.0, 6.0]])[:classes]
    y = rng.integers(0, classes, size=n)
    x = centres[y] + rng.normal(size=(n, 2))
    y[:flip] = (y[:flip] + 1) % classes  # the first `flip` points are mislabelled
    return x, y


def test_gradients_are_those_of_the_loss():
    x, y = blobs(0, 6)
    w = np.random.default_rng(1).normal(size=(3, 3))
    eps = 1e-6
    numeric = np.empty((6, w.size))
    for p in range(w.size):
        shift = np.zeros(w.size)
        shift[p] = eps
        up, down = w + shift.reshape(w.shape), w - shift.reshape(w.shape)
        numeric[:, p] = (A.losses(up, x, y) - A.losses(down, x, y)) / (2 * eps)
    np.testing.assert_allclose(A.gradients(w, x, y), numeric, atol=1e-7)


def test_the_fit_is_the_regularised_objectives_minimiser():
    x, y = blobs(2, 40)
    w = A.fit_logistic(x, y, 3, L2)
    stationary = A.gradients(w, x, y).mean(axis=0) + L2 * w.reshape(-1)
    assert np.abs(stationary).max() < 1e-10


def test_influence_predicts_the_test_loss_change_of_retraining_without_each_point():
    x, y = blobs(3, 60)
    x_test, y_test = blobs(4, 5)
    w = A.fit_logistic(x, y, 3, L2)
    predicted = -A.influence(w, x, y, x_test, y_test, L2) / len(x)  # removing z_i is up-weighting by −1/n
    actual = np.empty_like(predicted)
    base = A.losses(w, x_test, y_test)
    for i in range(len(x)):
        keep = np.arange(len(x)) != i
        # the objective is a mean: retraining on n−1 points re-weights the rest, which the definition ignores,
        # so the sum over points is kept at n by scaling the regulariser back (the exact up-weighting by −1/n)
        w_i = A.fit_logistic(x[keep], y[keep], 3, L2 * len(x) / (len(x) - 1))
        actual[i] = A.losses(w_i, x_test, y_test) - base
    assert np.corrcoef(predicted.ravel(), actual.ravel())[0, 1] > 0.99
    assert np.abs(predicted - actual).max() < 0.2 * np.abs(actual).max()


def test_a_tracin_term_is_the_first_order_change_of_a_test_loss_from_one_step_on_a_training_point():
    x, y = blobs(5, 8)
    x_test, y_test = blobs(6, 3)
    w = np.random.default_rng(7).normal(size=(3, 3)) * 0.3
    rate = 1e-6
    scores = A.tracin([(w, rate)], x, y, x_test, y_test)
    for i in range(len(x)):
        stepped = w - rate * A.gradients(w, x[i:i + 1], y[i:i + 1]).reshape(w.shape)
        change = A.losses(stepped, x_test, y_test) - A.losses(w, x_test, y_test)
        np.testing.assert_allclose(-change, scores[i], rtol=1e-3, atol=1e-9)


def test_tracin_sums_over_checkpoints_with_their_learning_rates_and_its_diagonal_is_self_influence():
    x, y = blobs(8, 6)
    rng = np.random.default_rng(9)
    checkpoints = [(rng.normal(size=(3, 3)), 0.1), (rng.normal(size=(3, 3)), 0.01)]
    both = A.tracin(checkpoints, x, y, x, y)
    np.testing.assert_allclose(both, A.tracin(checkpoints[:1], x, y, x, y) + A.tracin(checkpoints[1:], x, y, x, y))
    np.testing.assert_allclose(np.diag(both), A.tracin_self(checkpoints, x, y))


def test_both_self_influences_rank_the_flipped_labels_first():
    x, y = blobs(10, 60, flip=4)
    w = A.fit_logistic(x, y, 3, L2)
    assert set(np.argsort(-A.self_influence(w, x, y, L2))[:4]) == {0, 1, 2, 3}
    assert set(np.argsort(-A.tracin_self([(w, 1.0)], x, y))[:4]) == {0, 1, 2, 3}


def test_bad_inputs_are_refused_with_the_reason():
    x, y = blobs(11, 5)
    with pytest.raises(ValueError, match="L2 strength"):
        A.fit_logistic(x, y, 3, 0.0)
    with pytest.raises(ValueError, match="labels must lie in 0..2"):
        A.losses(np.zeros((3, 3)), x, np.array([0, 1, 2, 3, 0]))
    with pytest.raises(ValueError, match="differ in length"):
        A.gradients(np.zeros((3, 3)), x, y[:3])
    with pytest.raises(ValueError, match="at least one checkpoint"):
        A.tracin([], x, y, x, y)
