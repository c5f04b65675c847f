"""The Keras run a callback is given, trained again outside the sandbox: the same run, and a reordered run that
is the same run batch for batch (needs the `tensorflow` extra)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from paperproof.fixtures import training
from paperproof.fixtures.values import sample_permutation

pytest.importorskip("tensorflow")

from paperproof.fixtures import keras_run  # noqa: E402


def test_the_run_trained_twice_is_the_same_run_and_reordering_moves_only_the_positions():
    spec = training.RunSpec(n=32, epochs=3)
    first, labels = keras_run.dynamics(spec)
    again, _ = keras_run.dynamics(spec)
    moved, moved_labels = keras_run.dynamics(dataclasses.replace(spec, permute=5))
    order = sample_permutation(5, spec.n)
    assert first.shape == (3, 32, 3) and np.array_equal(first, again)
    assert np.allclose(moved, first[:, order], atol=1e-6) and np.array_equal(moved_labels, labels[order])
    assert np.allclose(np.exp(first).sum(-1), 1.0, atol=1e-5)  # log-probabilities of a softmax model
