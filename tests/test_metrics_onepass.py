"""Tests for the one-pass fast path (paperproof.verify.metrics.onepass).

The readable reference core (``training_dynamics``) is the oracle: on random float32 logits,
integer logits full of argmax ties, logits far apart enough to underflow the softmax, and every
option, both the numba kernel (CPU) and the torch-ops pass (the GPU path, run here on the CPU)
agree with it within ``ATOL`` for confidence and variability, and exactly for correctness and
forgetfulness.
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
from hypothesis.extra import numpy as hnp

from paperproof.verify.metrics import training_dynamics
from paperproof.verify.metrics.onepass import (
    ATOL,
    _finish,
    _torch_pass,
    training_dynamics_onepass,
)

CPU = torch.device("cpu")
EXACT = ("correctness", "forgetfulness")


def torch_ops(z: torch.Tensor, y: torch.Tensor, **options: object) -> dict[str, torch.Tensor]:
    """The GPU path's arithmetic, on the CPU."""
    defaults: dict[str, object] = {"include_ci": False, "ddof": 0, "correctness_mode": "fraction",
                                   "never_learned": 1000, "normalise": False}
    defaults.update(options)
    return _finish(*_torch_pass(z, y, CPU), n_epochs=z.shape[0], **defaults)  # type: ignore[arg-type]


def assert_agrees(got: dict[str, torch.Tensor], reference: dict[str, torch.Tensor]) -> None:
    assert list(got) == list(reference)
    for key, ref in reference.items():
        value = got[key]
        assert value.dtype == ref.dtype, key
        assert value.device.type == "cpu", key
        assert value.shape == ref.shape, key
        if key in EXACT:
            assert torch.equal(value, ref), key
        else:
            torch.testing.assert_close(value, ref, rtol=0, atol=ATOL, equal_nan=True, msg=key)


def both_paths(z: np.ndarray, y: np.ndarray, **options: object) -> None:
    zt, yt = torch.from_numpy(z), torch.from_numpy(y)
    reference = training_dynamics(zt, yt, device=CPU, **options)  # type: ignore[arg-type]
    assert_agrees(training_dynamics_onepass(zt, yt, device=CPU, **options), reference)  # type: ignore[arg-type]
    assert_agrees(torch_ops(zt, yt, **options), reference)


def drifting(seed: int, n_epochs: int, n: int, n_classes: int, scale: float = 1.5) -> tuple[np.ndarray, np.ndarray]:
    """Float32 logits drifting towards the label at a per-sample rate, so every metric varies."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    z = rng.normal(0.0, scale, (n_epochs, n, n_classes))
    z[:, np.arange(n), y] += np.linspace(-1.0, 3.0, n_epochs)[:, None] * rng.normal(0.5, 1.0, n)
    return z.astype(np.float32), y


def test_hand_computed() -> None:
    # One sample, two classes: p_gold = 0.8, 0.3, 0.9 over three epochs, label 0.
    probs = np.array([[[0.8, 0.2]], [[0.3, 0.7]], [[0.9, 0.1]]])
    z = np.log(probs).astype(np.float32)
    got = training_dynamics_onepass(z, np.array([0]), device=CPU)
    mu = (0.8 + 0.3 + 0.9) / 3
    sigma = math.sqrt(((0.8 - mu) ** 2 + (0.3 - mu) ** 2 + (0.9 - mu) ** 2) / 3)
    assert got["confidence"].item() == pytest.approx(mu, abs=ATOL)
    assert got["variability"].item() == pytest.approx(sigma, abs=ATOL)
    assert got["correctness"].item() == pytest.approx(2 / 3, abs=1e-15)
    assert got["forgetfulness"].item() == 1  # correct, wrong, correct: forgotten once


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n_epochs=st.integers(1, 7),
    n=st.integers(0, 700),  # across several kernel blocks of 256 samples
    n_classes=st.integers(1, 12),
    scale=st.sampled_from([0.1, 1.5, 8.0, 40.0]),  # 40: rows whose softmax underflows
)
def test_random_logits_agree_with_reference(
    seed: int, n_epochs: int, n: int, n_classes: int, scale: float
) -> None:
    both_paths(*drifting(seed, n_epochs, n, n_classes, scale))


@settings(max_examples=40, deadline=None)
@given(
    data=st.data(),
    n_epochs=st.integers(1, 5),
    n=st.integers(1, 40),
    n_classes=st.integers(1, 5),
)
def test_argmax_ties_follow_the_first_maximum(
    data: st.DataObject, n_epochs: int, n: int, n_classes: int
) -> None:
    # Small integer logits: most rows have tied maxima, which the reference resolves as np.argmax.
    z = data.draw(hnp.arrays(np.float32, (n_epochs, n, n_classes), elements=st.integers(-2, 2).map(float)))
    y = data.draw(hnp.arrays(np.int64, (n,), elements=st.integers(0, n_classes - 1)))
    both_paths(z, y)


@settings(max_examples=30, deadline=None)
@given(
    data=st.data(),
    n_epochs=st.integers(1, 4),
    n=st.integers(1, 20),
    n_classes=st.integers(2, 5),
)
def test_arbitrary_finite_logits(data: st.DataObject, n_epochs: int, n: int, n_classes: int) -> None:
    floats = st.floats(-1e4, 1e4, width=32, allow_nan=False, allow_infinity=False)
    z = data.draw(hnp.arrays(np.float32, (n_epochs, n, n_classes), elements=floats))
    y = data.draw(hnp.arrays(np.int64, (n,), elements=st.integers(0, n_classes - 1)))
    both_paths(z, y)


@pytest.mark.parametrize("options", [
    {"ddof": 1},
    {"include_ci": True},
    {"correctness_mode": "count"},
    {"never_learned": "E"},
    {"never_learned": 0, "normalise": True},
    {"never_learned": 1000, "normalise": True},
])
@pytest.mark.parametrize("n_epochs", [1, 2, 6])
def test_options_agree_with_reference(options: dict[str, object], n_epochs: int) -> None:
    both_paths(*drifting(7, n_epochs, 300, 4), **options)


def test_float64_logits_take_the_reference() -> None:
    z, y = drifting(3, 5, 50, 3)
    z64 = torch.from_numpy(z.astype(np.float64))
    got = training_dynamics_onepass(z64, y, device=CPU, ddof=1)
    reference = training_dynamics(z64, y, device=CPU, ddof=1)
    for key in reference:
        assert torch.equal(got[key], reference[key]), key


def test_same_result_on_one_thread_and_two() -> None:
    z, y = drifting(11, 10, 2000, 10)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = training_dynamics_onepass(z, y, device=CPU)
        torch.set_num_threads(2)
        two = training_dynamics_onepass(z, y, device=CPU)
    finally:
        torch.set_num_threads(before)
    for key in one:
        assert torch.equal(one[key], two[key]), key


def test_bad_input_is_refused_with_the_reason() -> None:
    z, y = drifting(0, 3, 10, 4)
    with pytest.raises(ValueError, match="labels must lie in"):
        training_dynamics_onepass(z, np.full(10, 4), device=CPU)
    with pytest.raises(ValueError, match="logits"):
        training_dynamics_onepass(z[0], y, device=CPU)
    with pytest.raises(ValueError, match="never_learned"):
        training_dynamics_onepass(z, y, never_learned=-1, device=CPU)
    with pytest.raises(ValueError, match="mode"):
        training_dynamics_onepass(z, y, correctness_mode="ratio", device=CPU)  # type: ignore[arg-type]


def test_importing_the_core_does_not_import_numba() -> None:
    code = (
        "import sys, paperproof.verify.metrics, paperproof.verify.metrics.onepass; "
        "assert 'numba' not in sys.modules, 'numba imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr
