"""Tests for the exact data-valuation references: semivalues by enumeration, leave-one-out, KNN-Shapley.

The closed-form KNN-Shapley must equal Data Shapley computed by enumerating every subset under the same
KNN utility (Jia et al.'s theorem); the semivalues must keep the axioms that define them; the small worked
cases are done by hand.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperproof.verify.metrics import valuation as V


def additive(weights: list[float]):
    return lambda subset: sum(weights[i] for i in subset)


def test_an_additive_game_gives_each_point_its_own_weight_under_every_semivalue():
    weights = [0.5, -1.0, 2.0, 0.25]
    for values in (V.data_shapley(4, additive(weights)), V.data_banzhaf(4, additive(weights)),
                   V.beta_shapley(4, additive(weights)), V.beta_shapley(4, additive(weights), 1.0, 16.0),
                   V.leave_one_out(4, additive(weights))):
        np.testing.assert_allclose(values, weights, rtol=0, atol=1e-12)


def test_a_two_point_game_worked_by_hand():
    # U(∅)=0, U({0})=1, U({1})=0, U({0,1})=3: Shapley averages the two orders, Banzhaf the two subsets alike
    table = {(): 0.0, (0,): 1.0, (1,): 0.0, (0, 1): 3.0}
    game = table.__getitem__
    np.testing.assert_allclose(V.data_shapley(2, game), [(1 + 3) / 2, (0 + 2) / 2])
    np.testing.assert_allclose(V.data_banzhaf(2, game), [(1 + 3) / 2, (0 + 2) / 2])
    np.testing.assert_allclose(V.leave_one_out(2, game), [3.0, 2.0])


def test_weights_of_every_semivalue_sum_to_one_over_the_subsets_of_the_others():
    for n in (1, 2, 5, 11):
        for coefficient in (V.shapley_coefficient, V.banzhaf_coefficient, V.beta_coefficient(16, 1),
                            V.beta_coefficient(4, 1), V.beta_coefficient(1, 1)):
            assert math.isclose(sum(math.comb(n - 1, k) * coefficient(n, k) for k in range(n)), 1.0, rel_tol=1e-12)


def test_beta_one_one_is_shapley_and_beta_sixteen_one_weights_small_subsets_most():
    for n in (3, 8):
        for k in range(n):
            assert math.isclose(V.beta_coefficient(1, 1)(n, k), V.shapley_coefficient(n, k), rel_tol=1e-12)
    per_size = [math.comb(7, k) * V.beta_coefficient(16, 1)(8, k) for k in range(8)]
    assert per_size == sorted(per_size, reverse=True)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-5, 5, allow_nan=False), min_size=2 ** 5, max_size=2 ** 5))
def test_shapley_is_efficient_on_any_game(raw):
    table = np.array(raw)
    table[0] = 0.0
    values = V.data_shapley(5, table)
    assert math.isclose(values.sum(), table[-1] - table[0], abs_tol=1e-9)  # efficiency


def test_more_points_than_enumeration_allows_is_refused_with_the_limit():
    with pytest.raises(ValueError, match="at most 16"):
        V.data_shapley(17, lambda s: 0.0)


def _drawn(seed: int, n: int, m: int) -> tuple[np.ndarray, ...]:
    """n training and m test points in the plane, of two classes."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 2)), rng.integers(0, 2, size=n), rng.normal(size=(m, 2)), rng.integers(0, 2, size=m)


@pytest.mark.parametrize("closed_form, utility_of", [(V.knn_shapley, V.knn_utility),
                                                    (V.soft_knn_shapley, V.soft_knn_utility)])
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 8), m=st.integers(1, 3), k=st.integers(1, 7),
       distance=st.sampled_from(["euclidean", "cosine"]))
def test_each_knn_shapley_equals_data_shapley_enumerated_under_its_utility(closed_form, utility_of, seed, n, m, k,
                                                                           distance):
    """Jia et al.'s recursion and the soft-label closed form, each against every coalition of its own utility."""
    x_train, y_train, x_test, y_test = _drawn(seed, n, m)
    utility = utility_of(x_train, y_train, x_test, y_test, k, distance)
    values = closed_form(x_train, y_train, x_test, y_test, k, distance)
    np.testing.assert_allclose(values, V.data_shapley(n, utility), rtol=0, atol=1e-12)
    # efficiency: the values add up to what the whole set gains over the empty one
    np.testing.assert_allclose(values.sum(), utility(tuple(range(n))) - utility(()), atol=1e-12)


def test_soft_label_knn_shapley_refuses_more_points_than_its_counts_hold():
    many = V.MAX_SOFT + 1
    with pytest.raises(ValueError, match=f"at most {V.MAX_SOFT} points, got {many}"):
        V.soft_knn_shapley(np.zeros((many, 1)), np.zeros(many, dtype=int), np.zeros((1, 1)), [0], k=1)


def test_cosine_neighbours_are_the_most_similar_in_direction_not_the_nearest():
    x_train = np.array([[10.0, 0.0], [0.1, 0.1]])  # far but along the test point; near but at 45 degrees
    y_train = np.array([0, 1])
    x_test, y_test = np.array([[1.0, 0.0]]), np.array([0])
    # by cosine the far point along the test point is first (right); by distance the near wrong one is
    np.testing.assert_allclose(V.knn_shapley(x_train, y_train, x_test, y_test, 1, "cosine"), [1.0, 0.0])
    np.testing.assert_allclose(V.knn_shapley(x_train, y_train, x_test, y_test, 1), [0.5, -0.5])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 6), m=st.integers(1, 3), k=st.integers(1, 5))
def test_marginals_over_every_ordering_average_to_knn_shapley(seed, n, m, k):
    x_train, y_train, x_test, y_test = _drawn(seed, n, m)
    every = np.array(list(itertools.permutations(range(n))))
    marginals = V.knn_marginals(x_train, y_train, x_test, y_test, k, every)
    np.testing.assert_allclose(marginals.mean(0), V.knn_shapley(x_train, y_train, x_test, y_test, k), atol=1e-12)
    # each ordering's marginals add up to the utility of the whole set (efficiency, ordering by ordering)
    whole = V.knn_utility(x_train, y_train, x_test, y_test, k)(tuple(range(n)))
    np.testing.assert_allclose(marginals.sum(1), whole, atol=1e-12)


def test_knn_shapley_values_a_mislabelled_neighbour_below_zero_and_a_right_one_above():
    x_train = np.array([[0.0], [0.1], [5.0], [5.1]])
    y_train = np.array([0, 1, 1, 1])  # point 1 sits among the zeros with the wrong label
    x_test, y_test = np.array([[0.09], [0.08]]), np.array([0, 0])  # nearest to the wrong one, then the right
    values = V.knn_shapley(x_train, y_train, x_test, y_test, k=1)
    assert values[0] > 0 > values[1]
    assert values.argmin() == 1


def test_mismatched_inputs_name_what_differs():
    with pytest.raises(ValueError, match="train 3 and 2"):
        V.knn_shapley(np.zeros((3, 2)), [0, 1], np.zeros((1, 2)), [0], k=1)
    with pytest.raises(ValueError, match="width"):
        V.knn_shapley(np.zeros((2, 2)), [0, 1], np.zeros((1, 3)), [0], k=1)
    with pytest.raises(ValueError, match="K must be"):
        V.knn_shapley(np.zeros((2, 2)), [0, 1], np.zeros((1, 2)), [0], k=0)
