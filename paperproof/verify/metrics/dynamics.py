"""Training-dynamics metrics (Data Maps): confidence, variability, correctness, forgetfulness.

The readable reference: each reduction is written from the formula over a chunk's [E, n] gold
probabilities and argmax hits. ``onepass`` computes the same four faster and is tested against
this module.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from paperproof.verify.metrics.chunks import (
    _chunked,
    _gold,
    _gold_metric,
    _load_classes_first,
)
from paperproof.verify.metrics.inputs import (
    ArrayLike,
    CorrectnessMode,
    CorrectnessRule,
    Inputs,
    NeverLearned,
    _check_correctness,
    _check_ddof,
    _check_inputs,
    _check_never_learned,
    _dynamics,
    _setup,
)


def _variability_of(p: Tensor, ddof: int, include_ci: bool) -> Tensor:
    n_epochs = p.shape[0]
    if n_epochs - ddof <= 0 or (include_ci and n_epochs == 1):
        return torch.full(p.shape[1:], math.nan, dtype=p.dtype, device=p.device)
    # Written out: torch.var over a short leading dimension is several times slower on CPU.
    var = (p - p.mean(0)).square_().sum(0) / (n_epochs - ddof)
    if include_ci:
        var = var + var.square() / (n_epochs - 1)
    return var.sqrt()


def _correct_of(
    p: Tensor, hit: Tensor | None, mode: CorrectnessMode, rule: CorrectnessRule
) -> Tensor:
    if rule == "argmax":
        assert hit is not None
        count = hit.sum(0)
    else:
        count = (p > 0.5).sum(0)
    return count if mode == "count" else count.to(p.dtype) / p.shape[0]


def _forget_of(
    hit: Tensor, never_learned: NeverLearned, normalise: bool, float_dtype: torch.dtype
) -> Tensor:
    n_epochs = hit.shape[0]
    events = (hit[:-1] & ~hit[1:]).sum(0)
    sentinel = n_epochs if never_learned == "E" else int(never_learned)
    events = torch.where(hit.any(0), events, torch.full_like(events, sentinel))
    return events.to(float_dtype) / n_epochs if normalise else events


def confidence(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Mean over epochs of the gold-class probability, μ_i = mean_e P[e, i, y_i] (Data Maps).

    Direction: low = hard.
    """
    return _gold_metric(
        logits, labels, lambda p: p.mean(0),
        inputs=inputs, log=False, dtype=dtype, device=device, batch_size=batch_size,
    )


def variability(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    include_ci: bool = False,
    ddof: int = 0,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Spread over epochs of the gold probability, σ = sqrt(Σ_e (p−μ)² / (E − ddof)).

    ``ddof=0`` is the Data Maps definition (AC, DIQ, TV and HCAT all use it); ``ddof=1`` is
    what ``torch.std`` gives by default. ``include_ci`` returns sqrt(σ² + σ⁴/(E−1)) as AC's
    ``include_ci`` option does; it is NaN at E = 1, as is any E ≤ ddof.

    Direction: high = ambiguous.
    """
    _check_ddof(ddof)
    return _gold_metric(
        logits, labels, lambda p: _variability_of(p, ddof, include_ci),
        inputs=inputs, log=False, dtype=dtype, device=device, batch_size=batch_size,
    )


def correctness(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    mode: CorrectnessMode = "fraction",
    rule: CorrectnessRule = "argmax",
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Epochs in which the sample is classified correctly: Σ_e c_e (``mode="count"``, AC) or
    mean_e c_e (``mode="fraction"``, the Data Maps paper).

    ``rule="argmax"``: c_e = [argmax_c Z_e = y] (first maximum on ties, as ``np.argmax``);
    ``rule="p>0.5"``: c_e = [P_e[y] > 0.5] (DIQ, TV, HCAT), which differs from argmax for
    C ≥ 3 and at p = 0.5. Counts are int64, fractions float64.

    Direction: low = hard.
    """
    return _dynamics_metrics(
        logits, labels, ("correctness",), correctness_mode=mode, correctness_rule=rule,
        inputs=inputs, dtype=dtype, device=device, batch_size=batch_size,
    )["correctness"]


def forgetfulness(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    never_learned: NeverLearned = 1000,
    normalise: bool = False,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Forgetting events, F = Σ_{e≥1} c_{e−1} (1 − c_e) with c_e = [argmax Z_e = y].

    A sample never correct in any epoch scores ``never_learned`` instead: 1000 (AC's stand-in
    for "forgotten infinitely often"), ``"E"`` (the number of epochs, TF) or 0 (HCAT).
    ``normalise=True`` divides by E as HCAT does and returns float64; otherwise int64.

    Direction: high = hard.
    """
    return _dynamics_metrics(
        logits, labels, ("forgetfulness",), never_learned=never_learned, normalise=normalise,
        inputs=inputs, dtype=dtype, device=device, batch_size=batch_size,
    )["forgetfulness"]


_DYNAMICS_KEYS = ("confidence", "variability", "correctness", "forgetfulness")


def training_dynamics(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    include_ci: bool = False,
    ddof: int = 0,
    correctness_mode: CorrectnessMode = "fraction",
    correctness_rule: CorrectnessRule = "argmax",
    never_learned: NeverLearned = 1000,
    normalise: bool = False,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> dict[str, Tensor]:
    """Confidence, variability, correctness and forgetfulness in one pass over the logits.

    Same definitions and options as the single functions; the gold probability and the argmax
    hits are computed once per chunk, which is what a data map needs.

    Direction: per key, ``confidence`` low = hard, ``variability`` high = ambiguous,
    ``correctness`` low = hard, ``forgetfulness`` high = hard.
    """
    return _dynamics_metrics(
        logits, labels, _DYNAMICS_KEYS, include_ci=include_ci, ddof=ddof,
        correctness_mode=correctness_mode, correctness_rule=correctness_rule,
        never_learned=never_learned, normalise=normalise, inputs=inputs, dtype=dtype,
        device=device, batch_size=batch_size,
    )


def _dynamics_metrics(
    logits: ArrayLike,
    labels: ArrayLike,
    keys: tuple[str, ...],
    *,
    include_ci: bool = False,
    ddof: int = 0,
    correctness_mode: CorrectnessMode = "fraction",
    correctness_rule: CorrectnessRule = "argmax",
    never_learned: NeverLearned = 1000,
    normalise: bool = False,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> dict[str, Tensor]:
    """The metrics of ``keys`` (a subset of ``_DYNAMICS_KEYS``) from one pass per chunk."""
    _check_inputs(inputs)
    _check_correctness(correctness_mode, correctness_rule)
    _check_never_learned(never_learned)
    _check_ddof(ddof)
    z, y = _dynamics(logits, labels)
    dev = _setup(device)
    all_dtypes = {
        "confidence": torch.float64,
        "variability": torch.float64,
        "correctness": torch.int64 if correctness_mode == "count" else torch.float64,
        "forgetfulness": torch.float64 if normalise else torch.int64,
    }
    dtypes = {key: all_dtypes[key] for key in keys}
    hits = "forgetfulness" in dtypes or ("correctness" in dtypes and correctness_rule == "argmax")

    def compute(sl: slice) -> dict[str, Tensor]:
        p, hit = _gold(
            _load_classes_first(z, sl, dtype, dev), y[sl].to(dev), inputs, log=False, hits=hits
        )
        out: dict[str, Tensor] = {}
        if "confidence" in dtypes:
            out["confidence"] = p.mean(0)
        if "variability" in dtypes:
            out["variability"] = _variability_of(p, ddof, include_ci)
        if "correctness" in dtypes:
            out["correctness"] = _correct_of(p, hit, correctness_mode, correctness_rule)
        if "forgetfulness" in dtypes:
            assert hit is not None
            out["forgetfulness"] = _forget_of(hit, never_learned, normalise, dtype)
        return out

    per_sample = z.shape[0] * z.shape[2]
    return _chunked(z.shape[1], batch_size, per_sample, dev, compute, dtypes)
