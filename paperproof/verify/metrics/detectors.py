"""Label-noise and uncertainty detectors on one model's predicted probabilities (the last epoch's).

The scores a label-noise or active-learning tool computes from `pred_probs` and the given labels, each as
its paper defines it:

* **normalized margin** (Northcutt, Jiang, Chuang 2021, Confident Learning; Kuan & Mueller 2022,
  "Model-Agnostic Label Quality Scoring to Detect Real-World Label Errors"): p_y − max_{k≠y} p_k, in
  [−1, 1]; low is a suspect label. The authors' library reports it rescaled to [0, 1], (m + 1) / 2, the same
  ranking; both are the paper's score.
* **predictive entropy** (uncertainty sampling; Settles 2009, "Active Learning Literature Survey", after
  Shannon): −Σ_k p_k log p_k in nats; high is uncertain. In bits, or divided by log C (normalised to [0, 1]),
  it is the same ranking on another scale.
* **confidence-weighted entropy** (Kuan & Mueller 2022): the entropy of the prediction over log C, divided by
  the self-confidence p_y, r = H(p) / (log C · p_y); high is a suspect label. The authors' library reports
  log(1 + r) / r, in (0, 1], the same ranking read the other way (low is suspect), with p_y and r floored at
  1e-6 as it does.
* **prediction margin** (margin sampling; Scheffer, Decomain, Wrobel 2001, "Active Hidden Markov Models
  for Information Extraction"): p_(1) − p_(2), the two largest probabilities; low is uncertain. It ignores
  the given label.

Like self-confidence, Confident Learning takes the probabilities out of sample; computed on the last
epoch's in-sample probabilities, a score departs only where the code chose them (`driven`).
Values come back on the CPU as float64, one per sample.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from paperproof.verify.metrics.inputs import ArrayLike, Inputs, _check_inputs, _dynamics


def _last_probabilities(logits: ArrayLike, labels: ArrayLike, inputs: Inputs) -> tuple[Tensor, Tensor]:
    """The last epoch's probabilities [N, C] in float64, and the labels [N]."""
    _check_inputs(inputs)
    z, y = _dynamics(logits, labels)
    last = z[-1].to(torch.float64)
    return (last.softmax(-1) if inputs == "logits" else last), y


def normalized_margin(logits: ArrayLike, labels: ArrayLike, *, inputs: Inputs = "logits",
                      unit: bool = False) -> Tensor:
    """p_y − max_{k≠y} p_k at the last epoch (`unit`: rescaled to [0, 1]). One class: no competitor, p_y.

    Direction: low = hard (a suspect label).
    """
    p, y = _last_probabilities(logits, labels, inputs)
    gold = p.gather(1, y.view(-1, 1)).squeeze(1)
    other = p.scatter(1, y.view(-1, 1), -math.inf).amax(1) if p.shape[1] > 1 else torch.zeros_like(gold)
    margin = gold - other
    return (margin + 1) / 2 if unit else margin


def predictive_entropy(logits: ArrayLike, labels: ArrayLike, *, inputs: Inputs = "logits",
                       base: float = math.e, normalised: bool = False) -> Tensor:
    """−Σ_k p_k log p_k of the last epoch's prediction (0 log 0 = 0), in `base`, or over log C (`normalised`).

    Direction: high = hard (uncertain).
    """
    p, _ = _last_probabilities(logits, labels, inputs)
    nats = -torch.where(p > 0, p * p.clamp_min(1e-300).log(), torch.zeros_like(p)).sum(1)
    if normalised:
        return nats / math.log(p.shape[1]) if p.shape[1] > 1 else torch.zeros_like(nats)
    return nats / math.log(base)


def prediction_margin(logits: ArrayLike, labels: ArrayLike, *, inputs: Inputs = "logits") -> Tensor:
    """p_(1) − p_(2) of the last epoch's prediction; 1 with a single class.

    Direction: low = hard (uncertain).
    """
    p, _ = _last_probabilities(logits, labels, inputs)
    if p.shape[1] < 2:
        return torch.ones(p.shape[0], dtype=torch.float64)
    top = p.topk(2, dim=1).values
    return top[:, 0] - top[:, 1]


def confidence_weighted_entropy(logits: ArrayLike, labels: ArrayLike, *, inputs: Inputs = "logits",
                                quality: bool = False, normalised: bool = True) -> Tensor:
    """H(p) / (log C · p_y) of the last epoch's prediction (`quality`: cleanlab's log(1 + r) / r of it, with p_y
    and r floored at 1e-6; not `normalised`: the entropy in nats, not over log C). One class: 0 (no uncertainty
    to weigh).

    Direction: high = hard (a suspect label); `quality`: low = hard.
    """
    p, y = _last_probabilities(logits, labels, inputs)
    gold = p.gather(1, y.view(-1, 1)).squeeze(1)
    entropy = predictive_entropy(p[None], y, inputs="probs", normalised=normalised)
    raw = entropy / gold.clamp_min(1e-6)
    return (raw + 1).log() / raw.clamp_min(1e-6) if quality else raw
