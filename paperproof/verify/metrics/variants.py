"""The published variants of each metric, and which of them an implementation's output matches.

Fidelity ties an entry's output to a definition by computing every variant here on the same
inputs and comparing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from paperproof.verify.metrics.dynamics import confidence, correctness, forgetfulness, variability
from paperproof.verify.metrics.inputs import ArrayLike, _as_tensor, _dynamics
from paperproof.verify.metrics.scores import (
    aleatoric,
    aum,
    el2n,
    entropy,
    loss,
    self_confidence,
    threshold_closeness,
)


@dataclass(frozen=True)
class Variant:
    """One published way of computing a metric from (logits [E, N, C], labels [N])."""

    metric: str
    name: str
    source: str
    paper: bool
    compute: Callable[[Tensor, Tensor], Tensor]
    departure: str


def _v(
    metric: str, name: str, source: str, paper: bool, departure: str, fn: Callable[..., Tensor],
    **options: Any,
) -> Variant:
    return Variant(metric, name, source, paper, functools.partial(fn, **options), departure)


# Which variant is the paper's:
# * confidence, variability (ddof 0), correctness (a fraction of epochs with the argmax
#   prediction correct): Data Maps (Swayamdipta et al., 2020) state these definitions.
# * forgetfulness: Toneva et al. (2019) define a raw count of forgetting events (correct ->
#   incorrect between consecutive presentations) and rank never-learned samples as the most
#   forgotten of all (as we recall the paper, "forgotten infinitely often"; not re-checked
#   against the PDF here). AC's sentinel 1000 is the finite stand-in for that and ranks them
#   above any count reachable with E < 1000, so the raw count with 1000 is the paper variant;
#   TF's code substitutes E, and HCAT scores them 0 and divides by E. (Toneva count per
#   minibatch presentation, we per recorded epoch; that is a property of the input.)
# * threshold_closeness (AC), aleatoric and entropy (Data-IQ), loss (H-CAT) and
#   self_confidence (cleanlab) have one published form, which is the reference.
# * aum: Pleiss et al. define the mean margin on logits.
# * el2n: Paul et al. define the L2 norm (not its square) at one epoch (averaged over runs);
#   with one run, the norm at the recorded epoch the caller picks is that definition, so the
#   last-epoch norm is the paper variant; HCAT squares it and the epoch mean is a smoothing.
VARIANTS: dict[str, tuple[Variant, ...]] = {
    "confidence": (
        _v("confidence", "mean_gold_prob", "Data Maps (AC, DIQ, TV, HCAT)", True, "", confidence),
    ),
    "variability": (
        _v("variability", "ddof0", "Data Maps (AC, DIQ, TV, HCAT; np.std)", True, "",
           variability, ddof=0),
        _v("variability", "ddof1", "torch std default (correction=1)", False,
           "divides by E−1 where the paper divides by E", variability, ddof=1),
        _v("variability", "include_ci", "Dataset Cartography include_ci (AC)", False,
           "returns sqrt(σ² + σ⁴/(E−1)) where the paper defines σ", variability,
           include_ci=True),
    ),
    "correctness": (
        _v("correctness", "fraction_argmax", "Data Maps paper", True, "", correctness,
           mode="fraction", rule="argmax"),
        _v("correctness", "fraction_p>0.5", "Data-IQ, tavolo, H-CAT (DIQ, TV, HCAT)", False,
           "counts an epoch correct when the gold probability exceeds 0.5 rather than when it "
           "is the argmax", correctness, mode="fraction", rule="p>0.5"),
        _v("correctness", "count_argmax", "Dataset Cartography (count, AC)", False,
           "returns a count where the paper defines a fraction", correctness,
           mode="count", rule="argmax"),
        _v("correctness", "count_p>0.5", "AC's count with DIQ's p > 0.5 rule (combination)",
           False,
           "returns a count of epochs with gold probability above 0.5 where the paper defines "
           "a fraction of argmax-correct epochs", correctness, mode="count", rule="p>0.5"),
    ),
    "forgetfulness": (
        _v("forgetfulness", "never1000_count", "Dataset Cartography (AC); Toneva et al.", True,
           "", forgetfulness, never_learned=1000, normalise=False),
        _v("forgetfulness", "never1000_normalised", "AC sentinel, HCAT's /E (combination)",
           False,
           "divides the count by E (never-learned samples score 1000/E)", forgetfulness,
           never_learned=1000, normalise=True),
        _v("forgetfulness", "neverE_count", "example_forgetting (TF)", False,
           "never-learned samples score E rather than an effectively infinite count",
           forgetfulness, never_learned="E", normalise=False),
        _v("forgetfulness", "neverE_normalised", "TF sentinel, HCAT's /E (combination)",
           False,
           "divides the count by E and never-learned samples score 1", forgetfulness,
           never_learned="E", normalise=True),
        _v("forgetfulness", "never0_count", "HCAT's 0 sentinel without /E (combination)",
           False,
           "never-learned samples score 0, as if never forgotten", forgetfulness,
           never_learned=0, normalise=False),
        _v("forgetfulness", "never0_normalised", "H-CAT (HCAT)", False,
           "divides the count by E and never-learned samples score 0", forgetfulness,
           never_learned=0, normalise=True),
    ),
    "threshold_closeness": (
        _v("threshold_closeness", "mu_one_minus_mu", "Dataset Cartography (AC)", True, "",
           threshold_closeness),
    ),
    "aleatoric": (
        _v("aleatoric", "mean_p_one_minus_p", "Data-IQ (DIQ, HCAT)", True, "", aleatoric),
    ),
    "entropy": (
        _v("entropy", "gold_prob_over_epochs", "Data-IQ (DIQ)", True, "", entropy),
    ),
    "aum": (
        _v("aum", "mean_logit_margin", "AUM (Pleiss et al.; AUMr, HCAT)", True, "", aum),
    ),
    "el2n": (
        _v("el2n", "last_norm", "Paul et al. / data_diet (DD), at the last epoch", True, "",
           el2n, epoch=-1, squared=False),
        _v("el2n", "last_squared", "H-CAT (HCAT)", False,
           "returns the squared norm where the paper defines the norm", el2n,
           epoch=-1, squared=True),
        _v("el2n", "mean_norm", "norm averaged over recorded epochs (a smoothing)", False,
           "averages the norm over all epochs where the paper scores one epoch", el2n,
           epoch="mean", squared=False),
    ),
    "loss": (
        _v("loss", "mean_cross_entropy", "H-CAT small/large loss (HCAT)", True, "", loss),
    ),
    "self_confidence": (
        _v("self_confidence", "last_epoch_gold_prob", "cleanlab default (CL, HCAT)", True, "",
           self_confidence),
    ),
}


def _same(a: Tensor, b: Tensor, atol: float, rtol: float) -> bool:
    if a.shape != b.shape:
        return False
    a64, b64 = a.to(torch.float64), b.to(torch.float64)
    return bool(torch.isclose(a64, b64, rtol=rtol, atol=atol, equal_nan=True).all())


def match_variants(
    metric: str,
    logits: ArrayLike,
    labels: ArrayLike,
    output: ArrayLike,
    atol: float = 1e-6,
    rtol: float = 1e-5,
) -> list[str]:
    """Names of the variants of ``metric`` whose result equals ``output`` (NaN equals NaN,
    ±inf equals itself), so an implementation's output can be tied to a published definition.
    """
    if metric not in VARIANTS:
        raise KeyError(f"unknown metric {metric!r}; known: {sorted(VARIANTS)}")
    z, y = _dynamics(logits, labels)
    out = _as_tensor(output).reshape(-1).cpu()
    return [v.name for v in VARIANTS[metric] if _same(v.compute(z, y).cpu(), out, atol, rtol)]


def identify_metric(
    logits: ArrayLike,
    labels: ArrayLike,
    output: ArrayLike,
    atol: float = 1e-6,
    rtol: float = 1e-5,
) -> list[tuple[str, str]]:
    """Every (metric, variant) pair in ``VARIANTS`` whose result equals ``output``."""
    z, y = _dynamics(logits, labels)
    out = _as_tensor(output).reshape(-1).cpu()
    return [
        (metric, v.name)
        for metric, variants in VARIANTS.items()
        for v in variants
        if _same(v.compute(z, y).cpu(), out, atol, rtol)
    ]
