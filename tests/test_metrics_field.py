"""Tests for the field metrics of the reference core: learning time and second-split forgetting,
Data-IQ's epistemic uncertainty, PVI, EL2N and GraNd over initialisations, input gradients for
VoG, k-means prototypes, Confident Learning, AUM thresholds and TDDS, and their registry entries.

Values are worked out by hand from each paper's definition; the registry checks tie every new
variant to its own output and every metric to a definition.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from paperproof.verify import metrics as M

LN2 = math.log(2.0)


def close(actual: torch.Tensor, expected: list[float], tol: float = 1e-12) -> None:
    assert actual.device.type == "cpu"
    torch.testing.assert_close(
        actual.to(torch.float64), torch.tensor(expected, dtype=torch.float64), rtol=tol, atol=tol, equal_nan=True
    )


def from_hits(patterns: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits [E, N, 2] with label 0 for every sample: 1 = correct ([0.7, 0.3]), 0 = wrong."""
    probs = torch.tensor(
        [[[0.7, 0.3] if hit else [0.3, 0.7] for hit in epoch] for epoch in zip(*patterns)], dtype=torch.float64
    )
    return probs.log(), torch.zeros(len(patterns), dtype=torch.int64)


# Per sample, correct (1) or wrong (0) at epochs 1..4.
PATTERNS = [
    [1, 1, 1, 1],  # learned at once, never forgotten
    [0, 0, 1, 1],  # learned after epoch 3
    [1, 0, 1, 0],  # wrong at the end: never learned; last correct at epoch 3
    [0, 0, 0, 0],  # never correct
    [1, 1, 0, 0],  # forgotten after epoch 2
]


# --------------------------------------------------------------------------------------------
# Learning time and second-split forgetting (Maini et al.)
# --------------------------------------------------------------------------------------------


def test_learning_time_by_hand() -> None:
    z, y = from_hits(PATTERNS)
    lt = M.learning_time(z, y)
    assert lt.dtype == torch.int64
    assert lt.tolist() == [1, 3, 5, 5, 5]  # never learned: E + 1 = 5
    assert M.learning_time(z, y, one_based=False).tolist() == [0, 2, 4, 4, 4]
    assert M.learning_time(z, y, rule="first_correct").tolist() == [1, 3, 1, 5, 1]
    assert M.learning_time(z, y, rule="first_correct", one_based=False).tolist() == [0, 2, 0, 4, 0]
    assert M.learning_time(z.exp(), y, inputs="probs").tolist() == [1, 3, 5, 5, 5]


def test_second_split_forgetting_by_hand() -> None:
    z, y = from_hits(PATTERNS)
    ssft = M.second_split_forgetting(z, y)
    assert ssft.dtype == torch.int64
    # never forgotten: E2 + 1 = 5; forgotten from the start: 1
    assert ssft.tolist() == [5, 5, 4, 1, 3]


def test_learning_and_forgetting_with_one_epoch() -> None:
    z, y = from_hits([[1], [0]])
    assert M.learning_time(z, y).tolist() == [1, 2]
    assert M.learning_time(z, y, one_based=False).tolist() == [0, 1]
    assert M.second_split_forgetting(z, y).tolist() == [2, 1]


def test_learning_time_ties_follow_first_maximum() -> None:
    z = torch.zeros(2, 2, 2, dtype=torch.float64)  # [0.5, 0.5] at both epochs
    y = torch.tensor([0, 1])
    assert M.learning_time(z, y).tolist() == [1, 3]
    assert M.second_split_forgetting(z, y).tolist() == [3, 1]


def test_learning_time_rejects_an_unknown_rule() -> None:
    z, y = from_hits(PATTERNS)
    with pytest.raises(ValueError):
        M.learning_time(z, y, rule="sometimes")  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Data-IQ epistemic
# --------------------------------------------------------------------------------------------

HAND_PROBS = [
    [[0.6, 0.3, 0.1], [0.2, 0.45, 0.35], [0.6, 0.3, 0.1]],
    [[0.1, 0.7, 0.2], [0.3, 0.6, 0.1], [0.1, 0.7, 0.2]],
    [[0.8, 0.15, 0.05], [0.5, 0.3, 0.2], [0.5, 0.2, 0.3]],
]
HAND_LABELS = [0, 1, 2]
SS = [0.1**2 + 0.4**2 + 0.3**2, 0.15**2 + 0.15**2, 0.1**2 + 0.1**2]  # Σ_e (p − μ)²


def hand() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.tensor(HAND_PROBS, dtype=torch.float64).log(), torch.tensor(HAND_LABELS)


def test_epistemic_by_hand() -> None:
    z, y = hand()
    close(M.epistemic(z, y), [s / 3 for s in SS])
    close(M.epistemic(z, y, ddof=1), [s / 2 for s in SS])
    close(M.epistemic(z.exp(), y, inputs="probs"), [s / 3 for s in SS])
    close(M.epistemic(z, y), (M.variability(z, y) ** 2).tolist())


def test_epistemic_one_epoch() -> None:
    z, y = hand()
    close(M.epistemic(z[:1], y), [0.0, 0.0, 0.0])
    close(M.epistemic(z[:1], y, ddof=1), [math.nan] * 3)


# --------------------------------------------------------------------------------------------
# PVI
# --------------------------------------------------------------------------------------------

PVI_LABELS = torch.tensor([0, 0, 0, 1])  # marginal [0.75, 0.25]
PVI_PROBS = torch.tensor([[0.9, 0.1], [0.5, 0.5], [0.25, 0.75], [0.5, 0.5]], dtype=torch.float64)
PVI_BITS = [math.log2(0.9 / 0.75), math.log2(0.5 / 0.75), math.log2(0.25 / 0.75), 1.0]


def test_pvi_by_hand() -> None:
    z = PVI_PROBS.log()
    close(M.pvi(z, PVI_LABELS), PVI_BITS)
    close(M.pvi(PVI_PROBS, PVI_LABELS, inputs="probs"), PVI_BITS)
    close(M.pvi(z, PVI_LABELS, base=math.e), [b * LN2 for b in PVI_BITS])
    # a constant shift of the logits changes nothing
    close(M.pvi(z + 3.0, PVI_LABELS), PVI_BITS)


def test_pvi_default_null_is_the_label_marginal() -> None:
    z = PVI_PROBS.log()
    marginal = torch.tensor([0.75, 0.25], dtype=torch.float64)
    close(M.pvi(z, PVI_LABELS, marginal.log()), PVI_BITS)
    close(M.pvi(z, PVI_LABELS, marginal.log().expand(4, 2)), PVI_BITS)
    close(M.pvi(PVI_PROBS, PVI_LABELS, marginal, inputs="probs"), PVI_BITS)


def test_pvi_with_a_null_model() -> None:
    z = PVI_PROBS.log()
    null = torch.tensor([[0.5, 0.5], [0.9, 0.1], [0.5, 0.5], [0.8, 0.2]], dtype=torch.float64)
    expected = [math.log2(0.9 / 0.5), math.log2(0.5 / 0.9), math.log2(0.25 / 0.5), math.log2(0.5 / 0.2)]
    close(M.pvi(z, PVI_LABELS, null.log()), expected)
    with pytest.raises(ValueError):
        M.pvi(z, PVI_LABELS, null[:3].log())


def test_pvi_of_a_run_uses_the_last_epoch() -> None:
    z = torch.stack([torch.zeros(4, 2, dtype=torch.float64), PVI_PROBS.log()])
    close(M.pvi(z, PVI_LABELS), PVI_BITS)


def test_pvi_with_one_class_is_zero() -> None:
    close(M.pvi(torch.zeros(3, 1, dtype=torch.float64), torch.zeros(3, dtype=torch.int64)), [0.0, 0.0, 0.0])


# --------------------------------------------------------------------------------------------
# EL2N and GraNd over initialisations
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n_epochs", "index"), [(1, 0), (3, 0), (10, 0), (11, 1), (20, 1), (200, 19)])
def test_early_epoch(n_epochs: int, index: int) -> None:
    assert M.early_epoch(n_epochs) == index


def test_early_epoch_rejects_no_epochs() -> None:
    with pytest.raises(ValueError):
        M.early_epoch(0)


def test_el2n_runs_by_hand() -> None:
    # run A scores [0.6, 0.4] at its early epoch (index 0 of 3), run B [0.8, 0.2]; label 0
    a = torch.tensor([[[0.6, 0.4]], [[0.1, 0.9]], [[0.1, 0.9]]], dtype=torch.float64).log()
    b = torch.tensor([[[0.8, 0.2]], [[0.5, 0.5]], [[0.5, 0.5]]], dtype=torch.float64).log()
    y = torch.tensor([0])
    root2 = math.sqrt(2.0)
    close(M.el2n_runs([a, b], y), [(0.4 * root2 + 0.2 * root2) / 2])
    close(M.el2n_runs(torch.stack([a, b]), y), [0.3 * root2])
    close(M.el2n_runs([a, b], y, epoch=-1), [(0.9 * root2 + 0.5 * root2) / 2])
    close(M.el2n_runs([a], y), M.el2n(a, y, epoch=0).tolist())
    with pytest.raises(ValueError):
        M.el2n_runs([], y)


def small_net(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 3))


def test_grand_runs_of_one_model_is_grand() -> None:
    x = torch.randn(6, 3, generator=torch.Generator().manual_seed(0))
    y = torch.tensor([0, 1, 2, 0, 1, 2])
    m1, m2 = small_net(1), small_net(2)
    g1 = M.grand(m1, x, y, device="cpu")
    g2 = M.grand(m2, x, y, device="cpu")
    torch.testing.assert_close(M.grand_runs([m1], x, y, device="cpu"), g1, rtol=0, atol=0)
    torch.testing.assert_close(M.grand_runs([m1, m2], x, y, device="cpu"), (g1 + g2) / 2)
    with pytest.raises(ValueError):
        M.grand_runs([], x, y)


# --------------------------------------------------------------------------------------------
# Input gradients for VoG
# --------------------------------------------------------------------------------------------


def linear_model() -> nn.Linear:
    lin = nn.Linear(2, 3)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
        lin.bias.copy_(torch.tensor([0.0, 0.5, -0.5]))
    return lin


def test_input_gradients_of_a_linear_model() -> None:
    lin = linear_model()
    x = torch.tensor([[0.1, -0.2], [0.3, 0.4], [1.0, 0.0]])
    y = torch.tensor([2, 0, 1])
    g = M.input_gradients(lin, x, y, device="cpu")
    assert g.shape == (3, 2) and g.dtype == torch.float64
    close(g.reshape(-1), [5.0, 6.0, 1.0, 2.0, 3.0, 4.0])  # ∂z_y/∂x = W[y]
    # ∂p_y/∂x = p_y (W_y − Σ_c p_c W_c)
    w = lin.weight.detach().double()
    p = (x.double() @ w.T + lin.bias.detach().double()).softmax(-1)
    expected = torch.stack([p[i, y[i]] * (w[y[i]] - p[i] @ w) for i in range(3)])
    torch.testing.assert_close(M.input_gradients(lin, x, y, target="prob", device="cpu"), expected)


def test_input_gradients_leave_the_model_untouched_and_run_in_eval_mode() -> None:
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 3))
    net.train()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    x = torch.randn(5, 4)
    y = torch.tensor([0, 1, 2, 0, 1])
    first = M.input_gradients(net, x, y, device="cpu", batch_size=2)
    second = M.input_gradients(net, x, y, device="cpu")
    torch.testing.assert_close(first, second, rtol=0, atol=0)  # no dropout: eval mode, batch-free
    assert net.training
    assert all(torch.equal(v, before[k]) and v.dtype == torch.float32 for k, v in net.state_dict().items())
    assert all(p.grad is None for p in net.parameters())


def test_input_gradients_stack_into_vog() -> None:
    x = torch.tensor([[0.1, -0.2], [0.3, 0.4]])
    y = torch.tensor([2, 0])
    lin_a = linear_model()
    lin_b = linear_model()
    with torch.no_grad():
        lin_b.weight.mul_(3.0)
    g = torch.stack([M.input_gradients(m, x, y, device="cpu") for m in (lin_a, lin_b)])
    assert g.shape == (2, 2, 2)
    # gradients W[y] and 3 W[y]: the ddof-0 std per pixel is |W[y]|, averaged over the 2 pixels
    close(M.vog(g), [(5.0 + 6.0) / 2, (1.0 + 2.0) / 2])


def test_vog_class_normalised_has_mean_zero_per_class() -> None:
    g = torch.randn(4, 9, 5, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    y = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1, 2])
    v = M.vog(g, y, class_normalise=True)
    for c in range(3):
        assert abs(float(v[y == c].mean())) < 1e-12
        assert abs(float(v[y == c].std(correction=0)) - 1.0) < 1e-12


# --------------------------------------------------------------------------------------------
# Prototypicality (k-means, Sorscher et al.)
# --------------------------------------------------------------------------------------------

POINTS = torch.tensor([[0.0, 0.0], [0.0, 2.0], [10.0, 0.0], [10.0, 2.0], [10.0, 5.0]], dtype=torch.float64)


def test_prototypicality_kmeans_by_hand() -> None:
    # two clusters: {0, 1} around (0, 1), {2, 3, 4} around (10, 7/3)
    d = M.prototypicality_kmeans(POINTS, 2, seed=0)
    close(d, [1.0, 1.0, 7 / 3, 1 / 3, 8 / 3])
    # one cluster: the distance to the mean (6, 1.8)
    mean = POINTS.mean(0)
    close(M.prototypicality_kmeans(POINTS, 1), (POINTS - mean).norm(dim=1).tolist())
    # as many clusters as points: every point is its own prototype
    close(M.prototypicality_kmeans(POINTS, 5), [0.0] * 5)


def test_prototypicality_kmeans_is_deterministic_for_a_seed() -> None:
    h = torch.randn(60, 4, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    a = M.prototypicality_kmeans(h, 5, seed=11)
    b = M.prototypicality_kmeans(h, 5, seed=11)
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert a.shape == (60,) and a.dtype == torch.float64 and bool((a >= 0).all())
    # well-separated clusters come out the same whatever the seed
    for seed in range(5):
        close(M.prototypicality_kmeans(POINTS, 2, seed=seed), [1.0, 1.0, 7 / 3, 1 / 3, 8 / 3])


def test_prototypicality_kmeans_cosine() -> None:
    h = torch.tensor([[2.0, 0.0], [0.0, 3.0]], dtype=torch.float64)
    close(M.prototypicality_kmeans(h, 1, distance="cosine"), [1 - 1 / math.sqrt(2)] * 2)
    close(M.prototypicality_kmeans(h, 2, distance="cosine"), [0.0, 0.0])


def test_prototypicality_kmeans_rejects_bad_k() -> None:
    with pytest.raises(ValueError):
        M.prototypicality_kmeans(POINTS, 0)
    with pytest.raises(ValueError):
        M.prototypicality_kmeans(POINTS, 6)


# --------------------------------------------------------------------------------------------
# Confident Learning and AUM thresholds
# --------------------------------------------------------------------------------------------

CL_PROBS = torch.tensor(
    [[0.9, 0.1], [0.3, 0.7], [0.2, 0.8], [0.65, 0.35]], dtype=torch.float64
)
CL_LABELS = torch.tensor([0, 0, 1, 1])


def test_per_class_thresholds_by_hand() -> None:
    close(M.per_class_thresholds(CL_PROBS, CL_LABELS), [(0.9 + 0.3) / 2, (0.8 + 0.35) / 2])
    # a class no sample carries has no threshold
    three = torch.tensor([[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]], dtype=torch.float64)
    close(M.per_class_thresholds(three, torch.tensor([0, 2])), [0.5, math.nan, 0.5])


def test_confident_learning_issues_by_hand() -> None:
    # t = [0.6, 0.575]: sample 1 is confidently class 1, sample 3 confidently class 0
    mask = M.confident_learning_issues(CL_PROBS, CL_LABELS)
    assert mask.dtype == torch.bool
    assert mask.tolist() == [False, True, False, True]


def test_confident_learning_takes_the_argmax_of_the_classes_above_threshold() -> None:
    probs = torch.tensor(
        [
            [0.50, 0.46, 0.04],  # label 0; classes 0 and 1 above threshold, 0 the larger: its label
            [0.30, 0.45, 0.25],  # label 1; only class 1, exactly at its threshold
            [0.34, 0.33, 0.33],  # label 2; only class 2, exactly at its threshold
            [0.20, 0.30, 0.50],  # label 0; only class 2 above threshold: an issue
            [0.55, 0.45, 0.00],  # label 1; classes 0 and 1 above threshold, 0 the larger: an issue
        ],
        dtype=torch.float64,
    )
    labels = torch.tensor([0, 1, 2, 0, 1])
    close(M.per_class_thresholds(probs, labels), [0.35, 0.45, 0.33])
    assert M.confident_learning_issues(probs, labels).tolist() == [False, False, False, True, True]
    # a sample above no threshold is not counted
    below = torch.tensor([[0.9, 0.1], [0.1, 0.9], [0.4, 0.6]], dtype=torch.float64)
    assert M.confident_learning_issues(below, torch.tensor([0, 1, 0])).tolist() == [False, False, False]


def test_aum_threshold_and_mislabelled() -> None:
    values = torch.arange(101, dtype=torch.float64)
    assert M.aum_threshold(values) == 99.0
    assert M.aum_threshold(values, percentile=50) == 50.0
    rng = np.random.default_rng(0).normal(size=37)
    assert M.aum_threshold(rng) == pytest.approx(float(np.percentile(rng, 99)), abs=1e-12)
    mask = M.aum_mislabelled(torch.tensor([-1.0, 0.5, 1.0, 2.0]), 1.0)
    assert mask.tolist() == [True, True, False, False]
    with pytest.raises(ValueError):
        M.aum_threshold([])


# --------------------------------------------------------------------------------------------
# TDDS
# --------------------------------------------------------------------------------------------


def kl(p: list[float], q: list[float]) -> float:
    return sum(a * math.log(a / b) for a, b in zip(p, q))


def test_tdds_one_window_by_hand() -> None:
    seq = [[0.5, 0.5], [0.8, 0.2], [0.5, 0.5]]
    z = torch.tensor(seq, dtype=torch.float64).log().unsqueeze(1)  # [3, 1, 2]
    y = torch.tensor([0])
    d0, d1 = kl(seq[1], seq[0]), kl(seq[2], seq[1])
    var = ((d0 - d1) / 2) ** 2
    close(M.tdds(z, y, window=3), [0.9 * var])
    close(M.tdds(z, y), [0.9 * var])  # the default window of 10 is capped at E = 3
    close(M.tdds(z, y, window=3, decay=0.5), [0.5 * var])
    close(M.tdds(z.exp(), y, window=3, inputs="probs"), [0.9 * var])


def test_tdds_two_windows_by_hand() -> None:
    seq = [[0.5, 0.5], [0.8, 0.2], [0.6, 0.4], [0.9, 0.1]]
    z = torch.tensor(seq, dtype=torch.float64).log().unsqueeze(1)
    d = [kl(seq[t + 1], seq[t]) for t in range(3)]
    v0 = ((d[0] - d[1]) / 2) ** 2
    v1 = ((d[1] - d[2]) / 2) ** 2
    # windows k = 0, 1 of J = 3 epochs; weights β(1 − β)^(K−1−k) with β = 0.5: 0.25, 0.5
    close(M.tdds(z, torch.tensor([0]), window=3, decay=0.5), [0.25 * v0 + 0.5 * v1])


def test_tdds_edge_cases() -> None:
    y = torch.tensor([0, 1])
    close(M.tdds(torch.zeros(1, 2, 3, dtype=torch.float64), y), [math.nan, math.nan])  # one epoch
    close(M.tdds(torch.zeros(5, 2, 3, dtype=torch.float64), y), [0.0, 0.0])  # predictions never change
    z = torch.randn(5, 2, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    close(M.tdds(z, y, window=2), [0.0, 0.0])  # one contribution per window: no spread
    with pytest.raises(ValueError):
        M.tdds(z, y, window=1)
    with pytest.raises(ValueError):
        M.tdds(z, y, decay=0.0)


def test_tdds_ignores_the_labels() -> None:
    z = torch.randn(6, 4, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    a = M.tdds(z, torch.tensor([0, 1, 2, 0]), window=4)
    b = M.tdds(z, torch.tensor([2, 2, 1, 1]), window=4)
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert bool((a > 0).all())


# --------------------------------------------------------------------------------------------
# Registry: definitions, new variants, recognition
# --------------------------------------------------------------------------------------------

NEW_VARIANTS = [
    ("learning_time", "stays_correct"),
    ("learning_time", "stays_correct_0based"),
    ("learning_time", "first_correct"),
    ("epistemic", "variance_ddof0"),
    ("epistemic", "variance_ddof1"),
    ("pvi", "bits_marginal_null"),
    ("pvi", "nats_marginal_null"),
    ("tdds", "kl_window_variance"),
    ("el2n", "early_norm"),
    ("loss", "last_cross_entropy"),
]


def random_dynamics(seed: int, n_epochs: int, n: int, n_classes: int) -> tuple[torch.Tensor, torch.Tensor]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    drift = np.linspace(-1.0, 3.0, n_epochs)[:, None] * rng.normal(0.5, 1.0, n)[None, :]
    z = rng.normal(0.0, 1.5, (n_epochs, n, n_classes))
    z[:, np.arange(n), y] += drift
    return torch.from_numpy(z), torch.from_numpy(y)


def variant(metric: str, name: str) -> M.Variant:
    return next(v for v in M.VARIANTS[metric] if v.name == name)


def test_every_registered_metric_has_a_definition() -> None:
    missing = set(M.VARIANTS) - set(M.DEFINITIONS)
    assert not missing
    extra = {"vog", "grand", "prototypicality", "conf_agree", "pvi", "tdds", "learning_time",
             "second_split_forgetting", "epistemic"}
    assert extra <= set(M.DEFINITIONS)
    for metric, d in M.DEFINITIONS.items():
        assert d.orientation in ("high_is_hard", "low_is_hard"), metric
        assert any(str(year) in d.paper for year in range(1990, 2027)), metric
        assert d.definition.strip(), metric


def test_definition_orientations_follow_the_papers() -> None:
    low = {"confidence", "correctness", "aum", "self_confidence", "pvi", "second_split_forgetting", "conf_agree"}
    high = {"variability", "forgetfulness", "el2n", "grand", "vog", "loss", "learning_time", "epistemic",
            "tdds", "prototypicality"}
    assert {m for m in low if M.DEFINITIONS[m].orientation == "low_is_hard"} == low
    assert {m for m in high if M.DEFINITIONS[m].orientation == "high_is_hard"} == high
    with pytest.raises(ValueError):
        M.Definition("x", "y", "sideways")  # type: ignore[arg-type]


def test_new_variants_are_registered_with_the_paper_first() -> None:
    for metric, name in NEW_VARIANTS:
        v = variant(metric, name)
        assert v.source and (v.departure == "") == v.paper, (metric, name)
    for metric in ("learning_time", "epistemic", "pvi", "tdds", "el2n", "loss"):
        assert M.VARIANTS[metric][0].paper, metric
    assert [v.name for v in M.VARIANTS["el2n"] if v.paper] == ["early_norm"]
    assert [v.name for v in M.VARIANTS["loss"] if v.paper] == ["mean_cross_entropy", "last_cross_entropy"]
    assert variant("loss", "mean_cross_entropy").source.startswith("H-CAT benchmark")


def test_only_the_last_norm_departs_by_timing_alone() -> None:
    timed = [(m, v.name) for m, vs in M.VARIANTS.items() for v in vs if v.timing]
    assert timed == [("el2n", "last_norm")]
    last = variant("el2n", "last_norm")
    assert not last.paper and "early in training" in last.departure
    squared = variant("el2n", "last_squared")
    assert not squared.timing and "squared norm at the last epoch" in squared.departure
    assert "spread (std ddof=1 over the trend)" in variant("variability", "ddof1").source


def test_registered_variants_compute_the_functions() -> None:
    z, y = random_dynamics(5, 30, 12, 4)
    torch.testing.assert_close(variant("el2n", "early_norm").compute(z, y), M.el2n(z, y, epoch=2))
    torch.testing.assert_close(variant("loss", "last_cross_entropy").compute(z, y), M.loss(z[-1:], y))
    torch.testing.assert_close(variant("learning_time", "stays_correct").compute(z, y), M.learning_time(z, y))
    torch.testing.assert_close(variant("pvi", "nats_marginal_null").compute(z, y), M.pvi(z, y) * LN2)
    torch.testing.assert_close(variant("tdds", "kl_window_variance").compute(z, y), M.tdds(z, y, window=10))


@pytest.mark.parametrize(("metric", "name"), NEW_VARIANTS)
def test_identify_metric_recognises_each_new_variant(metric: str, name: str) -> None:
    z, y = random_dynamics(2, 25, 20, 3)
    out = variant(metric, name).compute(z, y)
    assert M.identify_metric(z, y, out) == [(metric, name)]
    assert M.match_variants(metric, z, y, out.numpy()) == [name]
