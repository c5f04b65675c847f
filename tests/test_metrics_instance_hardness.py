"""Tests for kDN (Smith, Martinez, Giraud-Carrier 2014): worked by hand, against a plain loop over the
instances, and against the departure that counts each instance among its own neighbours."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperproof.verify.metrics.instance_hardness import kdn


def test_a_point_among_the_other_class_disagrees_with_all_its_neighbours():
    x = np.array([[0.0], [0.1], [0.2], [5.0], [5.1]])
    y = np.array([0, 0, 1, 1, 1])  # point 2 sits among the zeros
    np.testing.assert_allclose(kdn(x, y, 2), [0.5, 0.5, 1.0, 0.0, 0.0])
    # counted among its own two neighbours, point 2 keeps one other, a zero
    np.testing.assert_allclose(kdn(x, y, 2, include_self=True), [0.0, 0.0, 0.5, 0.0, 0.0])


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(3, 20), k=st.integers(1, 6))
def test_kdn_is_the_share_of_disagreeing_others_and_counting_itself_keeps_k_minus_one(seed, n, k):
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=(n, 3)), rng.integers(0, 3, size=n)
    k = min(k, n - 1)
    loop = []
    for i in range(n):
        others = sorted((float(np.linalg.norm(x[i] - x[j])), j) for j in range(n) if j != i)[:k]
        loop.append(sum(y[j] != y[i] for _, j in others) / k)
    np.testing.assert_allclose(kdn(x, y, k), loop)
    if k > 1:
        np.testing.assert_allclose(kdn(x, y, k, include_self=True), kdn(x, y, k - 1) * (k - 1) / k)


def test_bad_input_names_what_is_wrong():
    with pytest.raises(ValueError, match="differ in length: 3 and 2"):
        kdn(np.zeros((3, 2)), [0, 1], 1)
    with pytest.raises(ValueError, match="k must be"):
        kdn(np.zeros((3, 2)), [0, 1, 1], 0)
