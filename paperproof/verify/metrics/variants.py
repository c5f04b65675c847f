"""The published variants of each metric, and which of them an implementation's output matches.

Fidelity ties an entry's output to a definition by computing every variant here on the same
inputs and comparing.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch import Tensor

from paperproof.verify.metrics.detectors import (
    confidence_weighted_entropy,
    normalized_margin,
    prediction_margin,
    predictive_entropy,
)
from paperproof.verify.metrics.dynamics import confidence, correctness, forgetfulness, variability
from paperproof.verify.metrics.field import learning_time, tdds
from paperproof.verify.metrics.inputs import ArrayLike, _as_tensor, _dynamics
from paperproof.verify.metrics.scores import (
    aleatoric,
    aum,
    early_epoch,
    el2n,
    entropy,
    epistemic,
    loss,
    pvi,
    self_confidence,
    threshold_closeness,
)

Orientation = Literal["high_is_hard", "low_is_hard"]


@dataclass(frozen=True)
class Variant:
    """One published way of computing a metric from (logits [E, N, C], labels [N])."""

    metric: str
    name: str
    source: str
    paper: bool
    compute: Callable[[Tensor, Tensor], Tensor]
    departure: str
    # True when the variant's only departure is WHICH epoch it scores: charged only when the
    # implementation chose the epoch itself (it saw every epoch), not when it was given one.
    timing: bool = False
    # True when the departure is in WHAT the score is computed on (in-sample predictions where the paper
    # takes out-of-sample ones): charged only where a training run drove the implementation, which then chose
    # its own predictions; a function handed probabilities computes on what its caller chose.
    driven: bool = False
    # Which end is hard where the variant reads the other way from its metric's definition (a library's [0, 1]
    # quality score of a suspicion the paper defines); None: the definition's.
    orientation: Orientation | None = None


def _v(
    metric: str, name: str, source: str, paper: bool, departure: str, fn: Callable[..., Tensor],
    *, timing: bool = False, driven: bool = False, orientation: Orientation | None = None, **options: Any,
) -> Variant:
    return Variant(metric, name, source, paper, functools.partial(fn, **options), departure, timing, driven,
                   orientation)


@dataclass(frozen=True)
class Definition:
    """A metric as its paper defines it, for pages to quote: ``paper`` the citation (authors,
    venue year, title), ``definition`` our plain restatement, ``orientation`` which end is hard."""

    paper: str
    definition: str
    orientation: Orientation

    def __post_init__(self) -> None:
        if self.orientation not in ("high_is_hard", "low_is_hard"):
            raise ValueError(f"orientation must be high_is_hard or low_is_hard, got {self.orientation!r}")


def _el2n_early(logits: Tensor, labels: Tensor) -> Tensor:
    """EL2N (the norm) at Paul et al.'s early epoch, ``early_epoch(E)``, of a single run."""
    return el2n(logits, labels, epoch=early_epoch(int(logits.shape[0])), squared=False)


def _last_cross_entropy(logits: Tensor, labels: Tensor) -> Tensor:
    """The current (last-epoch) model's per-sample cross-entropy, −log softmax(Z_{E−1})[y]."""
    return loss(logits[-1:], labels)


_CARTOGRAPHY = (
    "Swayamdipta, Schwartz, Lourie, Wang, Hajishirzi, Smith, Choi, EMNLP 2020, "
    '"Dataset Cartography: Mapping and Diagnosing Datasets with Training Dynamics"'
)
_DATA_IQ = (
    "Seedat, Crabbé, Bica, van der Schaar, NeurIPS 2022, "
    '"Data-IQ: Characterizing subgroups with heterogeneous outcomes in tabular data"'
)
_DATA_DIET = (
    "Paul, Ganguli, Dziugaite, NeurIPS 2021, "
    '"Deep Learning on a Data Diet: Finding Important Examples Early in Training"'
)
_MAINI = (
    "Maini, Garg, Lipton, Kolter, NeurIPS 2022, "
    '"Characterizing Datapoints via Second-Split Forgetting"'
)

# What each metric's paper defines, in our words, and which end of it is hard. Covers every metric
# in VARIANTS and the metrics with their own inputs (gradients, embeddings, MC passes).
DEFINITIONS: dict[str, Definition] = {
    "confidence": Definition(
        _CARTOGRAPHY,
        "The mean over training epochs of the probability the model gives the sample's gold label.",
        "low_is_hard",
    ),
    "variability": Definition(
        _CARTOGRAPHY,
        "The standard deviation over training epochs of the gold-label probability, dividing by the "
        "number of epochs E.",
        "high_is_hard",
    ),
    "correctness": Definition(
        _CARTOGRAPHY,
        "The fraction of training epochs in which the model's argmax prediction is the gold label.",
        "low_is_hard",
    ),
    "forgetfulness": Definition(
        "Toneva, Sordoni, Combes, Trischler, Bengio, Gordon, ICLR 2019, "
        '"An Empirical Study of Example Forgetting during Deep Neural Network Learning"',
        "The number of forgetting events, transitions from correctly classified to misclassified between "
        "successive presentations; a sample never learned counts as forgotten infinitely often.",
        "high_is_hard",
    ),
    "threshold_closeness": Definition(
        _CARTOGRAPHY,
        "μ(1 − μ) of the mean gold-label probability μ over epochs: largest for samples the model is "
        "half sure of.",
        "high_is_hard",
    ),
    "aleatoric": Definition(
        _DATA_IQ,
        "The mean over epochs of p(1 − p), with p the gold-label probability at each epoch's end.",
        "high_is_hard",
    ),
    "entropy": Definition(
        _DATA_IQ,
        "The entropy −Σ p log p of the gold-label probability taken over epochs (Data-IQ's code).",
        "high_is_hard",
    ),
    "epistemic": Definition(
        _DATA_IQ,
        "The variance over epochs of the gold-label probability, dividing by the number of epochs.",
        "high_is_hard",
    ),
    "aum": Definition(
        "Pleiss, Zhang, Elenberg, Weinberger, NeurIPS 2020, "
        '"Identifying Mislabeled Data using the Area Under the Margin Ranking"',
        "The mean over training of the logit margin z_y − max_{j≠y} z_j; samples below the 99th "
        "percentile of the AUM of threshold samples (relabelled to a fake extra class) are mislabelled.",
        "low_is_hard",
    ),
    "el2n": Definition(
        _DATA_DIET,
        "The L2 norm ‖p − onehot(y)‖₂ of the error vector early in training (epoch 20 of 200), "
        "averaged over independent initialisations.",
        "high_is_hard",
    ),
    "grand": Definition(
        _DATA_DIET,
        "The norm of the per-sample gradient of the loss with respect to all parameters, at "
        "initialisation or early in training, averaged over independent initialisations.",
        "high_is_hard",
    ),
    "loss": Definition(
        "Arpit et al., ICML 2017, \"A Closer Look at Memorization in Deep Networks\"; Han et al., "
        'NeurIPS 2018, "Co-teaching: Robust Training of Deep Neural Networks with Extremely Noisy Labels"',
        "The small-loss criterion: the per-sample cross-entropy of the current model; networks fit clean "
        "samples first, so samples with large loss are likely noisy or hard.",
        "high_is_hard",
    ),
    "self_confidence": Definition(
        "Northcutt, Jiang, Chuang, JAIR 2021, \"Confident Learning: Estimating Uncertainty in Dataset Labels\"",
        "The out-of-sample (cross-validated) predicted probability of the given label; in-sample "
        "probabilities are a departure.",
        "low_is_hard",
    ),
    "learning_time": Definition(
        _MAINI,
        "The first epoch after which the sample is classified correctly at every remaining epoch; a "
        "sample never learned scores the number of epochs plus one.",
        "high_is_hard",
    ),
    "second_split_forgetting": Definition(
        _MAINI,
        "After training on split A, training goes on on split B only; for a sample of A, the first epoch "
        "of that second-split training after which it is misclassified at every remaining epoch (never "
        "forgotten: the number of epochs plus one). Fast-forgotten samples are mislabelled or rare.",
        "low_is_hard",
    ),
    "pvi": Definition(
        "Ethayarajh, Choi, Swayamdipta, ICML 2022, \"Understanding Dataset Difficulty with V-Usable Information\"",
        "Pointwise V-information, −log₂ g′[∅](y) + log₂ g[x](y) in bits, where g is trained on (x, y) and "
        "g′ on (null input, y).",
        "low_is_hard",
    ),
    "tdds": Definition(
        "Zhang, Du, Li, Xie, Zhou, CVPR 2024, "
        '"Spanning Training Progress: Temporal Dual-Depth Scoring (TDDS) for Enhanced Dataset Pruning"',
        "The variability, over a sliding window of epochs, of the sample's per-epoch contribution to the "
        "loss change (approximated by the KL divergence between its predictions at consecutive epochs), "
        "combined over windows with exponential-moving-average weights; the highest scores are kept.",
        "high_is_hard",
    ),
    "vog": Definition(
        "Agarwal, D'souza, Hooker, CVPR 2022, \"Estimating Example Difficulty using Variance of Gradients\"",
        "Over K checkpoints, the gradient of the label class's pre-softmax logit with respect to the "
        "input; per pixel its standard deviation over checkpoints, averaged over pixels, then normalised "
        "within each class.",
        "high_is_hard",
    ),
    "prototypicality": Definition(
        "Sorscher, Geirhos, Shekhar, Ganguli, Morcos, NeurIPS 2022, "
        '"Beyond neural scaling laws: beating power law scaling via data pruning"',
        "Embed with a self-supervised model, cluster with k-means, and score the distance to the nearest "
        "centroid (far = hard). H-CAT's cosine to the class-mean embedding is a variant, read the other "
        "way (low similarity = hard).",
        "high_is_hard",
    ),
    "conf_agree": Definition(
        "Carlini, Erlingsson, Papernot, 2019, "
        '"Distribution Density, Tails, and Outliers in Machine Learning: Metrics and Applications"',
        "The agreement of the predictions of several independently trained models (or dropout samples) "
        "on the sample.",
        "low_is_hard",
    ),
    "allsh": Definition(
        "Zhang, Gong, Liu, He, Chen, Zhou, Findings of NAACL 2022, "
        '"ALLSH: Active Learning Guided by Local Sensitivity and Hardness"',
        "The divergence between the model's predictions on the sample and on an augmented copy of it.",
        "high_is_hard",
    ),
    "normalized_margin": Definition(
        "Kuan, Mueller, ICDM 2022, \"Model-Agnostic Label Quality Scoring to Detect Real-World Label Errors\" "
        "(after Northcutt, Jiang, Chuang, JAIR 2021)",
        "The out-of-sample predicted probability of the given label minus the largest probability of any other "
        "class, in [−1, 1] (cleanlab rescales it to [0, 1], the same ranking); in-sample probabilities are a "
        "departure.",
        "low_is_hard",
    ),
    "predictive_entropy": Definition(
        "Settles, University of Wisconsin–Madison Technical Report 1648, 2009, \"Active Learning Literature "
        "Survey\" (uncertainty sampling by entropy)",
        "The Shannon entropy of the model's predicted class distribution for the sample, −Σ_k p_k log p_k; the "
        "base of the logarithm, or dividing by log C, changes the scale, not the ranking.",
        "high_is_hard",
    ),
    "prediction_margin": Definition(
        "Scheffer, Decomain, Wrobel, IDA 2001, \"Active Hidden Markov Models for Information Extraction\"",
        "The gap between the two largest predicted class probabilities for the sample (margin sampling); a small "
        "gap is an uncertain sample. It does not read the given label.",
        "low_is_hard",
    ),
    "confidence_weighted_entropy": Definition(
        "Kuan, Mueller, ICDM 2022, \"Model-Agnostic Label Quality Scoring to Detect Real-World Label Errors\"",
        "The entropy of the out-of-sample predicted class distribution, normalised by log C, divided by the "
        "predicted probability of the given label (its self-confidence); a high value is a suspect label. cleanlab "
        "reports log(1 + r)/r of it, in (0, 1], the same ranking read the other way; in-sample probabilities are a "
        "departure.",
        "high_is_hard",
    ),
    "kdn": Definition(
        "Smith, Martinez, Giraud-Carrier, Machine Learning 2014, \"An instance level analysis of data complexity\"",
        "k-Disagreeing Neighbors: the share of the instance's k nearest other training instances (Euclidean) whose "
        "label differs from its own; the paper's experiments take k = 5. Counting the instance among its own "
        "neighbours is a departure.",
        "high_is_hard",
    ),
    "soft_knn_shapley": Definition(
        "Wang, Jia, arXiv 2023, \"A Note on 'Efficient Task-Specific Data Valuation for Nearest Neighbor "
        "Algorithms'\"",
        "The training point's exact Shapley value under the soft-label K-nearest-neighbour classifier's probability "
        "of the right label (the share of the min(K, |S|) nearest in S with the test point's label; a guess among "
        "the C classes on the empty set, as we read the note), averaged over the test points; a mislabelled point "
        "takes a low or negative value.",
        "low_is_hard",
    ),
    "knn_shapley": Definition(
        "Jia, Dao, Wang, Hubis, Gurel, Li, Zhang, Spanos, Song, VLDB 2019, "
        '"Efficient Task-Specific Data Valuation for Nearest Neighbor Algorithms"',
        "The training point's exact Shapley value under the utility of a K-nearest-neighbour classifier (its "
        "likelihood of the right label, (1/K) times the number of the K nearest with the test point's label), "
        "computed by the paper's recursion from the farthest point to the nearest and averaged over the test points; "
        "a mislabelled point takes a low or negative value.",
        "low_is_hard",
    ),
}


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
# * threshold_closeness (AC), aleatoric and entropy (Data-IQ) have one published form, which is
#   the reference. self_confidence (cleanlab) is the gold probability; Northcutt et al. take it
#   out of sample (cross-validated: `verify.run_references`), so the last epoch's in-sample
#   probability departs where a training run drove the code (`driven`), not where it was handed
#   probabilities.
# * aum: Pleiss et al. define the mean margin on logits.
# * el2n: Paul et al. define the L2 norm (not its square) early in training (epoch 20 of 200)
#   averaged over initialisations; with one run, the norm at early_epoch(E) is that definition.
#   The last-epoch norm departs only in its timing (charged only where the code chose the
#   epoch), HCAT squares it at the last epoch, and the epoch mean is a smoothing.
# * loss: the small-loss criterion (Arpit et al. 2017; Han et al. 2018) is the current model's
#   cross-entropy (last_cross_entropy); H-CAT's mean over epochs is published too. Both are paper
#   variants; the first stays the reference the planted checks use.
# * learning_time (Maini et al.), epistemic (Data-IQ), pvi (Ethayarajh et al., label-marginal
#   null model) and tdds (Zhang et al.) are computed from the same run; the other metrics of
#   DEFINITIONS need inputs of their own (gradients, embeddings, a second split, MC passes).
_IN_SAMPLE = "uses in-sample probabilities where Confident Learning uses out-of-sample (cross-validated) ones"
VARIANTS: dict[str, tuple[Variant, ...]] = {
    "confidence": (
        _v("confidence", "mean_gold_prob", "Data Maps (AC, DIQ, TV, HCAT)", True, "", confidence),
    ),
    "variability": (
        _v("variability", "ddof0", "Data Maps (AC, DIQ, TV, HCAT; np.std)", True, "",
           variability, ddof=0),
        _v("variability", "ddof1", "torch std default (correction=1); spread (std ddof=1 over the trend)",
           False,
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
        _v("el2n", "early_norm", "Paul et al. (one run): the norm at the first recorded epoch at or "
           "after 10% of training", True, "", _el2n_early),
        _v("el2n", "last_norm", "data_diet (DD) at the last epoch", False,
           "scores at the last epoch, where Paul et al. score early in training (averaged over "
           "initialisations)", el2n, timing=True, epoch=-1, squared=False),
        _v("el2n", "last_squared", "H-CAT (HCAT)", False,
           "returns the squared norm at the last epoch, where Paul et al. take the norm early in "
           "training", el2n, epoch=-1, squared=True),
        _v("el2n", "mean_norm", "norm averaged over recorded epochs (a smoothing)", False,
           "averages the norm over all epochs where the paper scores one epoch", el2n,
           epoch="mean", squared=False),
    ),
    "loss": (
        _v("loss", "mean_cross_entropy", "H-CAT benchmark (HCAT): the cross-entropy averaged over epochs",
           True, "", loss),
        _v("loss", "last_cross_entropy", "small-loss criterion (Arpit et al. 2017; Han et al. 2018): "
           "the current model's cross-entropy", True, "", _last_cross_entropy),
    ),
    "self_confidence": (
        _v("self_confidence", "last_epoch_gold_prob", "cleanlab default (CL, HCAT)", False, _IN_SAMPLE,
           self_confidence, driven=True),
    ),
    "learning_time": (
        _v("learning_time", "stays_correct", "Maini et al. first-split learning time (1-based; never "
           "learned: E + 1)", True, "", learning_time),
        _v("learning_time", "stays_correct_0based", "learning time counted from epoch 0", False,
           "counts epochs from 0, one less than the paper's 1-based learning time (never learned "
           "scores E, not E + 1)", learning_time, one_based=False),
        _v("learning_time", "first_correct", "first epoch ever classified correctly", False,
           "takes the first epoch the sample is ever classified correctly, where the paper takes the "
           "epoch after which it stays correct", learning_time, rule="first_correct"),
    ),
    "epistemic": (
        _v("epistemic", "variance_ddof0", "Data-IQ (DIQ)", True, "", epistemic, ddof=0),
        _v("epistemic", "variance_ddof1", "torch var default (correction=1)", False,
           "divides by E−1 where the paper divides by E", epistemic, ddof=1),
    ),
    "pvi": (
        _v("pvi", "bits_marginal_null", "Ethayarajh et al. (bits; null model = label marginal; last "
           "epoch)", True, "", pvi, base=2.0),
        _v("pvi", "nats_marginal_null", "PVI in nats (natural log)", False,
           "nats where the paper uses bits", pvi, base=math.e),
    ),
    "tdds": (
        _v("tdds", "kl_window_variance", "Zhang et al. TDDS (J = 10 capped at E, β = 0.9)", True, "",
           tdds),
    ),
    "normalized_margin": (
        _v("normalized_margin", "last_epoch_margin", "Confident Learning's normalized margin", False, _IN_SAMPLE,
           normalized_margin, driven=True),
        _v("normalized_margin", "last_epoch_margin_unit", "cleanlab's label-quality score (the margin rescaled to "
           "[0, 1])", False, _IN_SAMPLE, normalized_margin, driven=True, unit=True),
    ),
    "predictive_entropy": (
        _v("predictive_entropy", "nats", "uncertainty sampling's entropy, in nats", True, "", predictive_entropy),
        _v("predictive_entropy", "bits", "uncertainty sampling's entropy, in bits", True, "", predictive_entropy,
           base=2.0),
        _v("predictive_entropy", "normalised", "uncertainty sampling's entropy over log C (in [0, 1])", True, "",
           predictive_entropy, normalised=True),
    ),
    "confidence_weighted_entropy": (
        _v("confidence_weighted_entropy", "entropy_over_self_confidence", "Kuan & Mueller's confidence-weighted "
           "entropy", False, _IN_SAMPLE, confidence_weighted_entropy, driven=True),
        _v("confidence_weighted_entropy", "cleanlab_quality", "cleanlab's label-quality score, log(1 + r)/r of it",
           False, _IN_SAMPLE, confidence_weighted_entropy, driven=True, orientation="low_is_hard", quality=True),
        _v("confidence_weighted_entropy", "nats_over_self_confidence", "the entropy in nats over the "
           "self-confidence", False, "divides the entropy in nats by the self-confidence where the paper first "
           "normalises it by log C (the ranking is the paper's; values are log C times larger and not comparable "
           "across numbers of classes)", confidence_weighted_entropy, normalised=False),
    ),
    "prediction_margin": (
        _v("prediction_margin", "top_two_gap", "margin sampling (Scheffer et al.)", True, "", prediction_margin),
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
