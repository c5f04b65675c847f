"""Ranks and Spearman's ρ shared by every figure that ranks samples."""

from __future__ import annotations

import numpy as np

from paperproof.verify.rank_correlation import midranks, spearman


def test_spearman_averages_ties_and_refuses_constants():
    assert list(midranks(np.array([3.0, 1.0, 3.0, 2.0]))) == [3.5, 1.0, 3.5, 2.0]
    assert spearman(np.array([1.0, 2.0, 3.0, 4.0]), np.array([10.0, 20.0, 30.0, 40.0])) == 1.0
    assert spearman(np.array([1.0, 2.0, 3.0, 4.0]), np.array([4.0, 3.0, 2.0, 1.0])) == -1.0
    assert spearman(np.array([1.0, 1.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0, 4.0])) is None
    assert spearman(np.array([1.0, np.nan, 3.0, 4.0, 5.0]), np.array([1.0, 2.0, 3.0, 4.0, 5.0])) == 1.0
