"""Tests for the reference hardness-metric core (paperproof.verify.metrics).

Three kinds of evidence: numbers worked out by hand from the formulas, agreement with plain
per-sample Python loops on random inputs, and identities between metrics. The variant registry
is checked on a fixture where every published variant gives a different answer.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from paperproof.verify import metrics as M

CPU = "cpu"

# --------------------------------------------------------------------------------------------
# Hand fixture: E=3 epochs, N=3 samples, C=3 classes, logits = log(probabilities), so the
# softmax gives back the probabilities below. No argmax ties; sample 2 is never learned.
# --------------------------------------------------------------------------------------------

PROBS = [
    # epoch 0
    [[0.6, 0.3, 0.1], [0.2, 0.45, 0.35], [0.6, 0.3, 0.1]],
    # epoch 1
    [[0.1, 0.7, 0.2], [0.3, 0.6, 0.1], [0.1, 0.7, 0.2]],
    # epoch 2
    [[0.8, 0.15, 0.05], [0.5, 0.3, 0.2], [0.5, 0.2, 0.3]],
]
LABELS = [0, 1, 2]
# Gold probabilities p[e][i] and argmax hits c[e][i], read off the table above.
GOLD = [[0.6, 0.45, 0.1], [0.1, 0.6, 0.2], [0.8, 0.3, 0.3]]
# sample 0: correct, wrong, correct; sample 1: correct, correct, wrong; sample 2: never.


def hand_logits() -> torch.Tensor:
    return torch.tensor(PROBS, dtype=torch.float64).log()


def hand_probs() -> torch.Tensor:
    return torch.tensor(PROBS, dtype=torch.float64)


def hand_labels() -> torch.Tensor:
    return torch.tensor(LABELS)


def close(actual: torch.Tensor, expected: list[float], tol: float = 1e-12) -> None:
    assert actual.dtype in (torch.float64, torch.int64)
    assert actual.device.type == "cpu"
    torch.testing.assert_close(
        actual.to(torch.float64), torch.tensor(expected, dtype=torch.float64),
        rtol=tol, atol=tol, equal_nan=True,
    )


SS = [  # Σ_e (p − μ)²
    0.1**2 + 0.4**2 + 0.3**2,
    (0.45 - 0.45) ** 2 + (0.6 - 0.45) ** 2 + (0.3 - 0.45) ** 2,
    0.1**2 + 0.0**2 + 0.1**2,
]


@pytest.mark.parametrize("inputs", ["logits", "probs"])
class TestHandComputed:
    def data(self, inputs: str) -> torch.Tensor:
        return hand_logits() if inputs == "logits" else hand_probs()

    def test_confidence(self, inputs: str) -> None:
        close(M.confidence(self.data(inputs), hand_labels(), inputs=inputs), [0.5, 0.45, 0.2])

    def test_variability(self, inputs: str) -> None:
        z, y = self.data(inputs), hand_labels()
        sigma2 = [s / 3 for s in SS]  # 0.26/3, 0.015, 0.02/3
        close(M.variability(z, y, inputs=inputs), [math.sqrt(v) for v in sigma2])
        close(M.variability(z, y, ddof=1, inputs=inputs), [math.sqrt(s / 2) for s in SS])
        close(
            M.variability(z, y, include_ci=True, inputs=inputs),
            [math.sqrt(v + v * v / 2) for v in sigma2],
        )

    def test_correctness(self, inputs: str) -> None:
        z, y = self.data(inputs), hand_labels()
        # argmax hits: [1,0,1], [1,1,0], [0,0,0]; p > 0.5: [1,0,1], [0,1,0], [0,0,0]
        frac = M.correctness(z, y, inputs=inputs)
        close(frac, [2 / 3, 2 / 3, 0.0])
        assert frac.dtype == torch.float64
        count = M.correctness(z, y, mode="count", inputs=inputs)
        assert count.dtype == torch.int64
        assert count.tolist() == [2, 2, 0]
        close(M.correctness(z, y, rule="p>0.5", inputs=inputs), [2 / 3, 1 / 3, 0.0])
        assert M.correctness(z, y, mode="count", rule="p>0.5", inputs=inputs).tolist() == [2, 1, 0]

    def test_forgetfulness(self, inputs: str) -> None:
        z, y = self.data(inputs), hand_labels()
        # sample 0: 1 -> 0 once; sample 1: 1 -> 1 -> 0 once; sample 2 never learned.
        default = M.forgetfulness(z, y, inputs=inputs)
        assert default.dtype == torch.int64
        assert default.tolist() == [1, 1, 1000]
        assert M.forgetfulness(z, y, never_learned="E", inputs=inputs).tolist() == [1, 1, 3]
        assert M.forgetfulness(z, y, never_learned=0, inputs=inputs).tolist() == [1, 1, 0]
        close(M.forgetfulness(z, y, normalise=True, inputs=inputs), [1 / 3, 1 / 3, 1000 / 3])
        close(M.forgetfulness(z, y, never_learned="E", normalise=True, inputs=inputs),
              [1 / 3, 1 / 3, 1.0])
        close(M.forgetfulness(z, y, never_learned=0, normalise=True, inputs=inputs),
              [1 / 3, 1 / 3, 0.0])

    def test_threshold_closeness(self, inputs: str) -> None:
        close(M.threshold_closeness(self.data(inputs), hand_labels(), inputs=inputs),
              [0.25, 0.45 * 0.55, 0.2 * 0.8])

    def test_aleatoric(self, inputs: str) -> None:
        expected = [
            (0.6 * 0.4 + 0.1 * 0.9 + 0.8 * 0.2) / 3,
            (0.45 * 0.55 + 0.6 * 0.4 + 0.3 * 0.7) / 3,
            (0.1 * 0.9 + 0.2 * 0.8 + 0.3 * 0.7) / 3,
        ]
        close(M.aleatoric(self.data(inputs), hand_labels(), inputs=inputs), expected)

    def test_entropy(self, inputs: str) -> None:
        def h(ps: list[float]) -> float:
            return -sum(p * math.log(p + 1e-12) for p in ps)

        expected = [h([0.6, 0.1, 0.8]), h([0.45, 0.6, 0.3]), h([0.1, 0.2, 0.3])]
        close(M.entropy(self.data(inputs), hand_labels(), inputs=inputs), expected)

    def test_el2n(self, inputs: str) -> None:
        z, y = self.data(inputs), hand_labels()
        # last epoch: [0.8,0.15,0.05]-e0, [0.5,0.3,0.2]-e1, [0.5,0.2,0.3]-e2
        last_sq = [0.2**2 + 0.15**2 + 0.05**2, 0.5**2 + 0.7**2 + 0.2**2, 0.5**2 + 0.2**2 + 0.7**2]
        close(M.el2n(z, y, inputs=inputs), [math.sqrt(v) for v in last_sq])
        close(M.el2n(z, y, squared=True, inputs=inputs), last_sq)
        close(M.el2n(z, y, epoch=2, squared=True, inputs=inputs), last_sq)
        first_sq = [0.4**2 + 0.3**2 + 0.1**2, 0.2**2 + 0.55**2 + 0.35**2, 0.6**2 + 0.3**2 + 0.9**2]
        close(M.el2n(z, y, epoch=0, inputs=inputs), [math.sqrt(v) for v in first_sq])
        close(M.el2n(z, y, epoch=-3, squared=True, inputs=inputs), first_sq)
        mid_sq = [0.9**2 + 0.7**2 + 0.2**2, 0.3**2 + 0.4**2 + 0.1**2, 0.1**2 + 0.7**2 + 0.8**2]
        close(
            M.el2n(z, y, epoch="mean", inputs=inputs),
            [(math.sqrt(a) + math.sqrt(b) + math.sqrt(c)) / 3
             for a, b, c in zip(first_sq, mid_sq, last_sq)],
        )
        close(
            M.el2n(z, y, epoch="mean", squared=True, inputs=inputs),
            [(a + b + c) / 3 for a, b, c in zip(first_sq, mid_sq, last_sq)],
        )

    def test_loss(self, inputs: str) -> None:
        expected = [
            -(math.log(0.6) + math.log(0.1) + math.log(0.8)) / 3,
            -(math.log(0.45) + math.log(0.6) + math.log(0.3)) / 3,
            -(math.log(0.1) + math.log(0.2) + math.log(0.3)) / 3,
        ]
        close(M.loss(self.data(inputs), hand_labels(), inputs=inputs), expected)

    def test_self_confidence(self, inputs: str) -> None:
        close(M.self_confidence(self.data(inputs), hand_labels(), inputs=inputs), [0.8, 0.3, 0.3])

    def test_training_dynamics_matches_single_functions(self, inputs: str) -> None:
        z, y = self.data(inputs), hand_labels()
        d = M.training_dynamics(z, y, inputs=inputs)
        assert set(d) == {"confidence", "variability", "correctness", "forgetfulness"}
        close(d["confidence"], [0.5, 0.45, 0.2])
        close(d["variability"], [math.sqrt(s / 3) for s in SS])
        close(d["correctness"], [2 / 3, 2 / 3, 0.0])
        assert d["forgetfulness"].tolist() == [1, 1, 1000]
        d = M.training_dynamics(z, y, correctness_mode="count", correctness_rule="p>0.5",
                                never_learned=0, normalise=True, include_ci=True, inputs=inputs)
        assert d["correctness"].tolist() == [2, 1, 0]
        close(d["forgetfulness"], [1 / 3, 1 / 3, 0.0])
        close(d["variability"], [math.sqrt(s / 3 + (s / 3) ** 2 / 2) for s in SS])


def test_aum_hand() -> None:
    z, y = hand_logits(), hand_labels()
    ln = math.log
    expected = [
        ((ln(0.6) - ln(0.3)) + (ln(0.1) - ln(0.7)) + (ln(0.8) - ln(0.15))) / 3,
        ((ln(0.45) - ln(0.35)) + (ln(0.6) - ln(0.3)) + (ln(0.3) - ln(0.5))) / 3,
        ((ln(0.1) - ln(0.6)) + (ln(0.2) - ln(0.7)) + (ln(0.3) - ln(0.5))) / 3,
    ]
    close(M.aum(z, y), expected)
    # Plain numbers: margins 1 - 3 = -2 and 4 - 0 = 4 average to 1.
    close(M.aum([[[1.0, 3.0, 0.0]], [[4.0, 0.0, -1.0]]], [0]), [1.0])


def test_aum_single_class_is_minus_inf() -> None:
    out = M.aum(torch.zeros(2, 3, 1), torch.zeros(3, dtype=torch.int64))
    assert out.tolist() == [-math.inf] * 3


def test_include_ci_and_ddof1_nan_at_one_epoch() -> None:
    z = torch.randn(1, 4, 3, dtype=torch.float64)
    y = torch.tensor([0, 1, 2, 0])
    assert torch.isnan(M.variability(z, y, include_ci=True)).all()
    assert torch.isnan(M.variability(z, y, ddof=1)).all()
    assert (M.variability(z, y) == 0).all()
    assert torch.isnan(M.training_dynamics(z, y, include_ci=True)["variability"]).all()


def test_argmax_ties_follow_numpy_first_maximum() -> None:
    # epoch logits with a tie between classes 0 and 1; np.argmax picks class 0
    z = torch.tensor([[[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 2.0, 2.0]],
                      [[0.0, 1.0, 0.0], [3.0, 0.0, 0.0], [0.0, 0.0, 5.0]]])
    y = torch.tensor([1, 0, 2])
    # hits: s0 [0,1], s1 [1,1], s2 [0,1]
    assert M.correctness(z, y, mode="count").tolist() == [1, 2, 1]
    assert M.forgetfulness(z, y).tolist() == [0, 0, 0]
    z2 = torch.tensor([[[2.0, 2.0]], [[1.0, 1.0]]])
    assert M.correctness(z2, [0], mode="count").tolist() == [2]
    assert M.correctness(z2, [1], mode="count").tolist() == [0]
    assert M.forgetfulness(z2, [1]).tolist() == [1000]
    # p = 0.5 exactly is not > 0.5 but is the (first) argmax
    assert M.correctness(z2, [0], rule="p>0.5", mode="count").tolist() == [0]


def test_grand_last_layer_hand() -> None:
    # W = 0, b = 0: P uniform [1/2, 1/2]; ‖P − e_0‖ = sqrt(0.5), ‖h‖² + 1 = 6
    out = M.grand_last_layer([[1.0, 2.0]], torch.zeros(2, 2), torch.zeros(2), [0])
    close(out, [math.sqrt(3.0)])
    close(M.grand_last_layer([[1.0, 2.0]], torch.zeros(2, 2), None, [0]), [math.sqrt(2.5)])


def test_conf_agree_hand() -> None:
    mc = [[[0.6, 0.4], [0.2, 0.8]], [[0.8, 0.2], [0.6, 0.4]]]  # K=2, N=2, C=2
    close(M.conf_agree(mc), [0.7, 0.6])


def test_prototypicality_hand() -> None:
    h = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.0]]
    y = [0, 0, 1, 2]
    # class 0 mean [0.5, 0.5]: cos = 0.5 / sqrt(0.5); classes 1 and 2 are the sample itself
    close(M.prototypicality(h, y), [math.sqrt(0.5), math.sqrt(0.5), 1.0, 1.0])
    assert torch.isnan(M.prototypicality([[0.0, 0.0]], [0])).all()


def test_vog_hand() -> None:
    g = [[[0.0, 2.0], [1.0, 1.0], [0.0, 0.0]], [[2.0, 2.0], [3.0, 5.0], [4.0, 0.0]]]
    # per-d population std: s0 [1, 0], s1 [1, 2], s2 [2, 0]
    close(M.vog(g), [0.5, 1.5, 1.0])
    # class 0 = {s0, s1}: mean 1, std 0.5; class 1 = {s2}: std 0 -> 0/0 = NaN
    close(M.vog(g, [0, 0, 1], class_normalise=True), [-1.0, 1.0, math.nan])
    with pytest.raises(ValueError):
        M.vog(g, class_normalise=True)


def test_allsh_hand() -> None:
    p = [[0.5, 0.5], [1.0, 0.0], [0.5, 0.5], [0.0, 1.0]]
    q = [[0.25, 0.75], [0.5, 0.5], [1.0, 0.0], [0.0, 1.0]]
    close(M.allsh(p, q), [0.5 * math.log(2) + 0.5 * math.log(2 / 3), math.log(2), math.inf, 0.0])


# --------------------------------------------------------------------------------------------
# Agreement with plain per-sample Python loops
# --------------------------------------------------------------------------------------------


def loop_reference(z: np.ndarray, y: np.ndarray) -> dict[str, list[float]]:
    """Every metric of the core, one sample and one epoch at a time, in math/numpy scalars."""
    n_epochs, n, _ = z.shape
    out: dict[str, list[float]] = {}

    def put(key: str, value: float) -> None:
        out.setdefault(key, []).append(float(value))

    for i in range(n):
        probs = []
        for e in range(n_epochs):
            row = [float(v) for v in z[e, i]]
            top = max(row)
            ex = [math.exp(v - top) for v in row]
            s = sum(ex)
            probs.append([v / s for v in ex])
        gold = [probs[e][y[i]] for e in range(n_epochs)]
        hits = [int(np.argmax(z[e, i])) == y[i] for e in range(n_epochs)]
        mu = sum(gold) / n_epochs
        ss = sum((p - mu) ** 2 for p in gold)
        var0 = ss / n_epochs
        put("confidence", mu)
        put("variability", math.sqrt(var0))
        put("variability_ddof1", math.sqrt(ss / (n_epochs - 1)) if n_epochs > 1 else math.nan)
        put("include_ci", math.sqrt(var0 + var0**2 / (n_epochs - 1)) if n_epochs > 1 else math.nan)
        put("count_argmax", sum(hits))
        put("fraction_argmax", sum(hits) / n_epochs)
        put("count_p", sum(p > 0.5 for p in gold))
        put("fraction_p", sum(p > 0.5 for p in gold) / n_epochs)
        events = sum(1 for e in range(1, n_epochs) if hits[e - 1] and not hits[e])
        learned = any(hits)
        put("forget_1000", events if learned else 1000)
        put("forget_E", events if learned else n_epochs)
        put("forget_0", events if learned else 0)
        put("threshold_closeness", mu * (1 - mu))
        put("aleatoric", sum(p * (1 - p) for p in gold) / n_epochs)
        put("entropy", -sum(p * math.log(p + 1e-12) for p in gold))
        margins = []
        for e in range(n_epochs):
            row = [float(v) for v in z[e, i]]
            others = [v for c, v in enumerate(row) if c != y[i]]
            margins.append(row[y[i]] - max(others))
        put("aum", sum(margins) / n_epochs)
        norms = []
        for e in range(n_epochs):
            sq = sum((p - (1.0 if c == y[i] else 0.0)) ** 2 for c, p in enumerate(probs[e]))
            norms.append(sq)
        put("el2n_last", math.sqrt(norms[-1]))
        put("el2n_last_sq", norms[-1])
        put("el2n_mean", sum(math.sqrt(v) for v in norms) / n_epochs)
        put("loss", -sum(math.log(p) for p in gold) / n_epochs)
        put("self_confidence", gold[-1])
    return out


def core_results(
    z: torch.Tensor | np.ndarray, y: torch.Tensor | np.ndarray, **kw: object
) -> dict[str, torch.Tensor]:
    return {
        "confidence": M.confidence(z, y, **kw),
        "variability": M.variability(z, y, **kw),
        "variability_ddof1": M.variability(z, y, ddof=1, **kw),
        "include_ci": M.variability(z, y, include_ci=True, **kw),
        "count_argmax": M.correctness(z, y, mode="count", **kw),
        "fraction_argmax": M.correctness(z, y, **kw),
        "count_p": M.correctness(z, y, mode="count", rule="p>0.5", **kw),
        "fraction_p": M.correctness(z, y, rule="p>0.5", **kw),
        "forget_1000": M.forgetfulness(z, y, **kw),
        "forget_E": M.forgetfulness(z, y, never_learned="E", **kw),
        "forget_0": M.forgetfulness(z, y, never_learned=0, **kw),
        "threshold_closeness": M.threshold_closeness(z, y, **kw),
        "aleatoric": M.aleatoric(z, y, **kw),
        "entropy": M.entropy(z, y, **kw),
        "aum": M.aum(z, y, **{k: v for k, v in kw.items() if k != "inputs"}),
        "el2n_last": M.el2n(z, y, **kw),
        "el2n_last_sq": M.el2n(z, y, squared=True, **kw),
        "el2n_mean": M.el2n(z, y, epoch="mean", **kw),
        "loss": M.loss(z, y, **kw),
        "self_confidence": M.self_confidence(z, y, **kw),
    }


def random_dynamics(
    seed: int, n_epochs: int, n: int, n_classes: int
) -> tuple[np.ndarray, np.ndarray]:
    """Logits drifting towards the label, with label noise, so every metric varies."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    drift = np.linspace(-1.0, 3.0, n_epochs)[:, None] * rng.normal(0.5, 1.0, n)[None, :]
    z = rng.normal(0.0, 1.5, (n_epochs, n, n_classes))
    z[:, np.arange(n), y] += drift
    return z, y


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n_epochs=st.integers(1, 6),
    n=st.integers(1, 30),
    n_classes=st.integers(2, 6),
)
def test_core_agrees_with_per_sample_loops(
    seed: int, n_epochs: int, n: int, n_classes: int
) -> None:
    z, y = random_dynamics(seed, n_epochs, n, n_classes)
    expected = loop_reference(z, y)
    got = core_results(torch.from_numpy(z), torch.from_numpy(y), device=CPU)
    for key, values in expected.items():
        torch.testing.assert_close(
            got[key].to(torch.float64), torch.tensor(values, dtype=torch.float64),
            rtol=1e-10, atol=1e-12, equal_nan=True, msg=key,
        )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_probs_inputs_agree_with_logits(seed: int) -> None:
    z, y = random_dynamics(seed, 5, 40, 4)
    zt = torch.from_numpy(z)
    probs = zt.softmax(-1)
    from_logits = core_results(zt, y)
    from_probs = core_results(probs, y, inputs="probs")
    del from_probs["aum"], from_logits["aum"]  # AUM is defined on logits only
    for key in from_logits:
        torch.testing.assert_close(from_probs[key], from_logits[key], rtol=1e-10, atol=1e-12,
                                   equal_nan=True, msg=key)


# --------------------------------------------------------------------------------------------
# Identities and plumbing
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [3, 4])
def test_aleatoric_identity(seed: int) -> None:
    z, y = random_dynamics(seed, 7, 50, 5)
    mu = M.confidence(z, y)
    sigma = M.variability(z, y)
    torch.testing.assert_close(M.aleatoric(z, y), mu * (1 - mu) - sigma**2, rtol=0, atol=1e-13)
    torch.testing.assert_close(M.threshold_closeness(z, y), mu * (1 - mu))


@pytest.mark.parametrize("rule", ["argmax", "p>0.5"])
def test_fraction_is_count_over_epochs(rule: str) -> None:
    z, y = random_dynamics(5, 6, 60, 3)
    count = M.correctness(z, y, mode="count", rule=rule)  # type: ignore[arg-type]
    fraction = M.correctness(z, y, mode="fraction", rule=rule)  # type: ignore[arg-type]
    torch.testing.assert_close(fraction, count.to(torch.float64) / 6)
    for never in (1000, "E", 0):
        raw = M.forgetfulness(z, y, never_learned=never)  # type: ignore[arg-type]
        norm = M.forgetfulness(z, y, never_learned=never, normalise=True)  # type: ignore[arg-type]
        torch.testing.assert_close(norm, raw.to(torch.float64) / 6)


def test_grand_closed_form_equals_torch_func_on_linear_layer() -> None:
    gen = torch.Generator().manual_seed(0)
    h = torch.randn(20, 4, generator=gen, dtype=torch.float64)
    y = torch.randint(0, 3, (20,), generator=gen)
    layer = torch.nn.Linear(4, 3).double()
    via_autograd = M.grand(layer, h, y, batch_size=7)
    closed = M.grand_last_layer(h, layer.weight, layer.bias, y)
    torch.testing.assert_close(via_autograd, closed, rtol=1e-10, atol=1e-12)
    no_bias = torch.nn.Linear(4, 3, bias=False).double()
    torch.testing.assert_close(
        M.grand(no_bias, h, y), M.grand_last_layer(h, no_bias.weight, None, y),
        rtol=1e-10, atol=1e-12,
    )


def test_grand_matches_per_sample_autograd_loop() -> None:
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    x = torch.randn(12, 5)
    y = torch.randint(0, 3, (12,))
    expected = []
    model64 = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    model64.load_state_dict(model.state_dict())
    model64.double()
    for i in range(12):
        model64.zero_grad()
        torch.nn.functional.cross_entropy(model64(x[i : i + 1].double()), y[i : i + 1]).backward()
        expected.append(math.sqrt(sum(float(p.grad.square().sum()) for p in model64.parameters())))
    got = M.grand(model, x, y, batch_size=5)
    close(got, expected, tol=1e-10)
    assert next(model.parameters()).dtype == torch.float32  # the caller's model is untouched


def test_batched_equals_unbatched() -> None:
    z, y = random_dynamics(6, 4, 53, 5)
    whole = core_results(z, y)
    chunked = core_results(z, y, batch_size=7)
    for key in whole:
        torch.testing.assert_close(chunked[key], whole[key], rtol=1e-12, atol=1e-15, equal_nan=True,
                                   msg=key)
    g = np.random.default_rng(0).normal(size=(3, 53, 4))
    torch.testing.assert_close(M.vog(g, batch_size=5), M.vog(g))
    torch.testing.assert_close(M.conf_agree(np.abs(g), batch_size=5), M.conf_agree(np.abs(g)))
    torch.testing.assert_close(
        M.prototypicality(g[0], y, batch_size=5), M.prototypicality(g[0], y), rtol=1e-14, atol=0
    )
    torch.testing.assert_close(
        M.allsh(np.abs(g[0]), np.abs(g[1]), batch_size=5), M.allsh(np.abs(g[0]), np.abs(g[1]))
    )
    w, b = g[1, :3].T.copy(), g[2, 0, :3].copy()
    torch.testing.assert_close(
        M.grand_last_layer(g[0], w.T, b, y % 3, batch_size=5),
        M.grand_last_layer(g[0], w.T, b, y % 3),
    )


def test_numpy_torch_and_list_inputs_agree() -> None:
    z, y = random_dynamics(7, 3, 9, 4)
    from_numpy = core_results(z, y)
    from_torch = core_results(torch.from_numpy(z), torch.from_numpy(y))
    from_list = core_results(z.tolist(), y.tolist())
    float32 = core_results(z.astype(np.float32), y.astype(np.int32))
    for key in from_numpy:
        assert from_numpy[key].device.type == "cpu"
        assert from_numpy[key].dtype in (torch.float64, torch.int64)
        assert torch.equal(from_numpy[key].isnan(), from_torch[key].isnan())
        torch.testing.assert_close(from_torch[key], from_numpy[key], equal_nan=True, msg=key)
        torch.testing.assert_close(from_list[key], from_numpy[key], equal_nan=True, msg=key)
        torch.testing.assert_close(float32[key], from_numpy[key], rtol=1e-5, atol=1e-6,
                                   equal_nan=True, msg=key)
    z_before = z.copy()
    core_results(z, y)
    assert np.array_equal(z, z_before)


def test_float32_dtype_option() -> None:
    z, y = random_dynamics(8, 5, 30, 4)
    full = core_results(z, y)
    single = core_results(z, y, dtype=torch.float32)
    for key in full:
        assert single[key].dtype == full[key].dtype
        torch.testing.assert_close(single[key], full[key], rtol=1e-4, atol=1e-5, equal_nan=True,
                                   msg=key)


def test_outputs_on_cpu_and_input_validation() -> None:
    z, y = hand_logits(), hand_labels()
    assert M.confidence(z, y, device="cpu").device.type == "cpu"
    with pytest.raises(ValueError):
        M.confidence(z[0], y)
    with pytest.raises(ValueError):
        M.confidence(z, torch.tensor([0, 1, 3]))
    with pytest.raises(ValueError):
        M.confidence(z, y, inputs="softmax")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        M.forgetfulness(z, y, never_learned=-1)
    with pytest.raises(ValueError):
        M.el2n(z, y, epoch=3)
    with pytest.raises(ValueError):
        M.correctness(z, y, mode="ratio")  # type: ignore[arg-type]
    empty = M.training_dynamics(torch.zeros(2, 0, 3), torch.zeros(0, dtype=torch.int64))
    assert all(v.shape == (0,) for v in empty.values())


def test_import_does_not_initialise_cuda() -> None:
    # A fresh interpreter, since other tests may have used the GPU where there is one.
    code = (
        "import torch, paperproof.verify.metrics as m; "
        "assert not torch.cuda.is_initialized(); print(len(m.VARIANTS))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr


def test_every_docstring_states_a_direction() -> None:
    for name in M.__all__:
        obj = getattr(M, name)
        if callable(obj) and not isinstance(obj, type) and name not in (
            "match_variants", "identify_metric"
        ):
            assert obj.__doc__ and "Direction:" in obj.__doc__, name


# --------------------------------------------------------------------------------------------
# Variant registry
# --------------------------------------------------------------------------------------------


def test_registry_shape() -> None:
    required = {
        "confidence": 1, "variability": 3, "correctness": 4, "forgetfulness": 6,
        "threshold_closeness": 1, "aleatoric": 1, "entropy": 1, "aum": 1, "el2n": 4,
        "loss": 2, "self_confidence": 1, "learning_time": 3, "epistemic": 2, "pvi": 2, "tdds": 1,
    }
    # The small-loss criterion has two published forms (the current model's loss and H-CAT's
    # mean over epochs); Confident Learning's self-confidence is out of sample, which needs other
    # models (`verify.run_references`), so none of its logits variants is the paper's; every other
    # metric has one paper variant, listed first.
    n_paper = {"loss": 2, "self_confidence": 0}
    for metric, n_variants in required.items():
        variants = M.VARIANTS[metric]
        assert len(variants) >= n_variants
        assert sum(v.paper for v in variants) == n_paper.get(metric, 1), metric
        assert variants[0].paper or n_paper[metric] == 0, metric
        assert len({v.name for v in variants}) == len(variants)
        for v in variants:
            assert v.metric == metric and v.source
            assert (v.departure == "") == v.paper, (metric, v.name)


def test_each_variant_matches_its_own_output() -> None:
    z, y = random_dynamics(9, 4, 25, 3)
    for metric, variants in M.VARIANTS.items():
        for v in variants:
            out = v.compute(torch.from_numpy(z), torch.from_numpy(y))
            assert v.name in M.match_variants(metric, z, y, out), (metric, v.name)


def test_hand_fixture_tells_every_variant_apart() -> None:
    # Tie-free, C = 3, sample 2 never learned: each variant's output matches only itself,
    # across all metrics, so the paper variant is distinguished from every other.
    z, y = hand_logits(), hand_labels()
    for metric, variants in M.VARIANTS.items():
        for v in variants:
            out = v.compute(z, y)
            assert M.match_variants(metric, z, y, out) == [v.name], (metric, v.name)
            assert M.identify_metric(z, y, out) == [(metric, v.name)], (metric, v.name)


def test_match_variants_on_external_outputs() -> None:
    z, y = hand_logits(), hand_labels()
    # what an AC-style implementation returns (count, 1000), as plain numpy
    assert M.match_variants("correctness", z, y, np.array([2, 2, 0])) == ["count_argmax"]
    assert M.match_variants("forgetfulness", z, y, np.array([1.0, 1.0, 0.0]) / 3) == [
        "never0_normalised"
    ]
    # a float32 computation still matches within atol
    var32 = M.variability(z, y, dtype=torch.float32).numpy().astype(np.float32)
    assert M.match_variants("variability", z, y, var32) == ["ddof0"]
    assert M.match_variants("variability", z, y, [0.0, 0.0, 0.0]) == []
    assert M.match_variants("variability", z, y, [0.0, 0.0]) == []  # wrong length
    nan_out = M.variability(z[:1], y, include_ci=True)
    assert M.match_variants("variability", z[:1], y, nan_out) == ["ddof1", "include_ci"]
    with pytest.raises(KeyError):
        M.match_variants("nonsense", z, y, [0.0, 0.0, 0.0])
