"""Reference core for per-sample hardness metrics (Data Maps, Data-IQ, H-CAT and friends).

The catalogue checks public implementations against these definitions, so each one is written
from the formulas in ``shared/reference/hardness-metrics.md`` section 2, vectorised over samples:

* training-dynamics metrics take logits ``Z [E, N, C]`` (or probabilities, ``inputs="probs"``)
  and labels ``y [N]`` and return one value per sample;
* softmax and statistics run in float64 unless ``dtype`` says otherwise, on the GPU when one is
  available (``device``), over chunks of ``batch_size`` samples (by default sized to a fixed
  number of input elements) so memory stays bounded;
* results always come back on the CPU, as float64, or int64 for counts;
* logits are assumed finite: argmax ties follow ``np.argmax`` (first maximum), NaN does not.

``VARIANTS`` lists the published variants of each metric (ddof, count versus fraction,
never-learned conventions, ...), and ``match_variants`` / ``identify_metric`` say which of
them a given output reproduces.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

ArrayLike = Tensor | np.ndarray | Sequence[Any]
Inputs = Literal["logits", "probs"]
CorrectnessMode = Literal["fraction", "count"]
CorrectnessRule = Literal["argmax", "p>0.5"]
NeverLearned = int | Literal["E"]

# Without an explicit batch_size a chunk holds about this many input elements: 2**20 float64
# values (8 MiB) stay in a CPU's last-level cache, which measured fastest; a GPU takes more.
_CHUNK_ELEMENTS_CPU = 2**20
_CHUNK_ELEMENTS_GPU = 2**26
# Per-sample gradients hold one copy of the parameters per sample, so GraNd chunks by samples.
DEFAULT_GRAND_BATCH_SIZE = 256
# Data-IQ's entropy adds this inside the log so that p = 0 contributes 0 rather than NaN.
ENTROPY_EPS = 1e-12

__all__ = [
    "DEFAULT_GRAND_BATCH_SIZE",
    "VARIANTS",
    "Variant",
    "aleatoric",
    "allsh",
    "aum",
    "confidence",
    "conf_agree",
    "correctness",
    "el2n",
    "entropy",
    "forgetfulness",
    "grand",
    "grand_last_layer",
    "identify_metric",
    "loss",
    "match_variants",
    "prototypicality",
    "self_confidence",
    "threshold_closeness",
    "training_dynamics",
    "variability",
    "vog",
]


# --------------------------------------------------------------------------------------------
# Input handling and the chunk driver
# --------------------------------------------------------------------------------------------


def _default_device() -> torch.device:
    """GPU when present; asked per call so that importing never touches CUDA."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _setup(device: torch.device | str | None) -> torch.device:
    return _default_device() if device is None else torch.device(device)


def _as_tensor(x: ArrayLike) -> Tensor:
    """Wrap without copying where possible; lists go through numpy so floats stay float64."""
    if isinstance(x, Tensor):
        return x.detach()
    arr = np.asarray(x)
    if not arr.flags.writeable:
        arr = arr.copy()
    return torch.as_tensor(arr)


_INTEGER_DTYPES = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def _real_tensor(x: ArrayLike, ndim: int, what: str) -> Tensor:
    t = _as_tensor(x)
    if t.ndim != ndim:
        raise ValueError(f"{what} must have {ndim} dimensions, got shape {tuple(t.shape)}")
    if t.is_complex() or not (t.is_floating_point() or t.dtype in _INTEGER_DTYPES):
        raise TypeError(f"{what} must be real-valued, got {t.dtype}")
    return t


def _labels(y: ArrayLike, n: int, n_classes: int | None) -> Tensor:
    t = _as_tensor(y)
    if t.ndim != 1 or t.shape[0] != n:
        raise ValueError(f"labels must have shape [{n}], got {tuple(t.shape)}")
    if t.is_floating_point() and not torch.equal(t, t.round()):
        raise ValueError("labels must be integers")
    t = t.to(torch.int64)
    if n and (int(t.min()) < 0 or (n_classes is not None and int(t.max()) >= n_classes)):
        raise ValueError(f"labels must lie in [0, {n_classes})")
    return t


def _dynamics(logits: ArrayLike, labels: ArrayLike) -> tuple[Tensor, Tensor]:
    z = _real_tensor(logits, 3, "logits [E, N, C]")
    if z.shape[0] < 1 or z.shape[2] < 1:
        raise ValueError(f"need at least one epoch and one class, got shape {tuple(z.shape)}")
    return z, _labels(labels, z.shape[1], z.shape[2])


def _check_inputs(inputs: str) -> None:
    if inputs not in ("logits", "probs"):
        raise ValueError(f'inputs must be "logits" or "probs", got {inputs!r}')


def _chunked(
    n: int,
    batch_size: int | None,
    per_sample: int,
    device: torch.device,
    compute: Callable[[slice], dict[str, Tensor]],
    out_dtypes: dict[str, torch.dtype],
) -> dict[str, Tensor]:
    """Run ``compute`` over sample chunks and gather its [chunk] results into CPU tensors [n].

    ``per_sample`` is the number of input elements one sample brings; without an explicit
    ``batch_size`` the chunk holds about ``_CHUNK_ELEMENTS_CPU`` (or ``_GPU``) of them, which
    keeps a CPU chunk in cache (measured fastest) and a GPU chunk well inside memory.
    """
    if batch_size is None:
        budget = _CHUNK_ELEMENTS_GPU if device.type == "cuda" else _CHUNK_ELEMENTS_CPU
        batch_size = max(1, budget // max(1, per_sample))
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    out = {key: torch.empty(n, dtype=dt) for key, dt in out_dtypes.items()}
    for start in range(0, n, batch_size):
        sl = slice(start, min(n, start + batch_size))
        for key, value in compute(sl).items():
            out[key][sl].copy_(value)
    return out


def _load(t: Tensor, sl: slice, dtype: torch.dtype, device: torch.device) -> Tensor:
    """One chunk of samples (dimension 1) of a [K, N, D] tensor, in the working dtype/device."""
    return t[:, sl].to(device=device, dtype=dtype)


def _load_classes_first(
    t: Tensor, sl: slice, dtype: torch.dtype, device: torch.device, epochs: slice | None = None
) -> Tensor:
    """A fresh [C, E, n] copy of samples ``sl`` (and ``epochs``) of a [E, N, C] tensor.

    Classes go first because reductions over a leading dimension run as contiguous
    element-wise passes, several times faster on CPU than over a short trailing one; the copy
    is needed for the float64 cast anyway, and callers may overwrite it.
    """
    part = t[:, sl] if epochs is None else t[epochs, sl]
    if part.device != device:
        part = part.to(device)
    out = torch.empty((part.shape[2], part.shape[0], part.shape[1]), dtype=dtype, device=device)
    return out.copy_(part.permute(2, 0, 1))


def _gold_index(y: Tensor, n_epochs: int) -> Tensor:
    """Index [1, E, n] selecting the gold class from a [C, E, n] tensor."""
    return y.view(1, 1, -1).expand(1, n_epochs, -1)


def _argmax_hits(zt: Tensor, top: Tensor, gold: Tensor, idx: Tensor, y: Tensor) -> Tensor:
    """c = [argmax_c zt = y] as [E, n] bool, with np.argmax's first-maximum rule on ties.

    y is the argmax iff its score is the maximum and no earlier class attains it. A full
    argmax over a [C, E, n] chunk is slow on CPU, so this takes the maximum of the other
    classes (masking the gold entry in place and restoring it) and runs the earlier-class
    check only where another class ties with the gold one, which tie-free inputs never reach.
    """
    hit = gold == top
    zt.scatter_(0, idx, -math.inf)
    tied = hit & (zt.amax(0) == top)
    zt.scatter_(0, idx, gold.unsqueeze(0))
    if bool(tied.any()):
        e_idx, i_idx = tied.nonzero(as_tuple=True)
        hit[e_idx, i_idx] = zt[:, e_idx, i_idx].argmax(0) == y[i_idx]
    return hit


def _gold(
    zt: Tensor, y: Tensor, inputs: Inputs, *, log: bool, hits: bool
) -> tuple[Tensor, Tensor | None]:
    """Gold-class probability (or its log) [E, n] and, if asked, argmax hits [E, n].

    ``zt`` is a [C, E, n] chunk that this function may overwrite. For logits the softmax is
    never materialised: log p = z_y − max − log Σ exp(z − max).
    """
    idx = _gold_index(y, zt.shape[1])
    gold = zt.gather(0, idx).squeeze(0)
    top = zt.amax(0) if (hits or inputs == "logits") else None
    hit = _argmax_hits(zt, top, gold, idx, y) if hits and top is not None else None
    if inputs == "probs":
        return (gold.log() if log else gold), hit
    assert top is not None
    log_p = gold.sub_(top).sub_(zt.sub_(top).exp_().sum(0).log_())
    return (log_p if log else log_p.exp_()), hit


# --------------------------------------------------------------------------------------------
# Per-chunk reductions shared by the single metrics and ``training_dynamics``
# --------------------------------------------------------------------------------------------


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


def _check_correctness(mode: str, rule: str) -> None:
    if mode not in ("fraction", "count"):
        raise ValueError(f'mode must be "fraction" or "count", got {mode!r}')
    if rule not in ("argmax", "p>0.5"):
        raise ValueError(f'rule must be "argmax" or "p>0.5", got {rule!r}')


def _check_never_learned(never_learned: NeverLearned) -> None:
    is_count = isinstance(never_learned, int) and not isinstance(never_learned, bool)
    ok = never_learned == "E" or (is_count and int(never_learned) >= 0)
    if not ok:
        raise ValueError(f'never_learned must be a non-negative int or "E", got {never_learned!r}')


def _check_ddof(ddof: int) -> None:
    if ddof < 0:
        raise ValueError(f"ddof must be non-negative, got {ddof}")


# --------------------------------------------------------------------------------------------
# Training-dynamics metrics on [E, N, C]
# --------------------------------------------------------------------------------------------


def _gold_metric(
    logits: ArrayLike,
    labels: ArrayLike,
    reduce: Callable[[Tensor], Tensor],
    *,
    inputs: Inputs,
    log: bool,
    dtype: torch.dtype,
    device: torch.device | str | None,
    batch_size: int | None,
    last_epoch_only: bool = False,
) -> Tensor:
    """Shared driver for metrics that reduce the gold probability [E, n] over epochs."""
    _check_inputs(inputs)
    z, y = _dynamics(logits, labels)
    dev = _setup(device)
    n_epochs = z.shape[0]
    epochs = slice(n_epochs - 1, n_epochs) if last_epoch_only else None

    def compute(sl: slice) -> dict[str, Tensor]:
        zt = _load_classes_first(z, sl, dtype, dev, epochs)
        gold, _ = _gold(zt, y[sl].to(dev), inputs, log=log, hits=False)
        return {"v": reduce(gold)}

    per_sample = z.shape[2] * (1 if last_epoch_only else n_epochs)
    return _chunked(z.shape[1], batch_size, per_sample, dev, compute, {"v": torch.float64})["v"]


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


def threshold_closeness(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """μ(1 − μ) of the *mean* gold probability μ (AC's threshold closeness).

    Direction: high = ambiguous.
    """

    def reduce(p: Tensor) -> Tensor:
        mu = p.mean(0)
        return mu * (1 - mu)

    return _gold_metric(
        logits, labels, reduce,
        inputs=inputs, log=False, dtype=dtype, device=device, batch_size=batch_size,
    )


def aleatoric(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Data-IQ aleatoric uncertainty, mean_e p_e (1 − p_e) = μ(1−μ) − σ² (σ with ddof 0).

    Direction: high = ambiguous.
    """
    return _gold_metric(
        logits, labels, lambda p: (p * (1 - p)).mean(0),
        inputs=inputs, log=False, dtype=dtype, device=device, batch_size=batch_size,
    )


def entropy(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Data-IQ's entropy, Σ_e −p_e log(p_e + 1e−12), taken over epochs of the gold probability
    (not over classes).

    Direction: high = ambiguous.
    """
    return _gold_metric(
        logits, labels, lambda p: -(p * (p + ENTROPY_EPS).log()).sum(0),
        inputs=inputs, log=False, dtype=dtype, device=device, batch_size=batch_size,
    )


def loss(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Mean over epochs of the cross-entropy, −mean_e log softmax(Z_e)[y] (H-CAT's "loss").

    With ``inputs="probs"`` it is −mean_e log P_e[y], +inf where P_e[y] = 0.

    Direction: high = hard.
    """
    return _gold_metric(
        logits, labels, lambda lp: -lp.mean(0),
        inputs=inputs, log=True, dtype=dtype, device=device, batch_size=batch_size,
    )


def self_confidence(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Cleanlab's default label-quality score: the last epoch's gold probability P[E−1, i, y_i].

    Direction: low = hard.
    """
    return _gold_metric(
        logits, labels, lambda p: p[0],
        inputs=inputs, log=False, dtype=dtype, device=device, batch_size=batch_size,
        last_epoch_only=True,
    )


def aum(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Area under the margin, mean_e (Z_e[y] − max_{c≠y} Z_e[c]), on logits (Pleiss et al.).

    With a single class there is no competitor; the result is −inf, as the reference table
    specifies.

    Direction: low = hard (mislabelled).
    """
    z, y = _dynamics(logits, labels)
    dev = _setup(device)
    n_epochs, n, n_classes = z.shape
    if n_classes == 1:
        return torch.full((n,), -math.inf, dtype=torch.float64)

    def compute(sl: slice) -> dict[str, Tensor]:
        zt = _load_classes_first(z, sl, dtype, dev)
        idx = _gold_index(y[sl].to(dev), n_epochs)
        gold = zt.gather(0, idx).squeeze(0)
        other = zt.scatter_(0, idx, -math.inf).amax(0)
        return {"v": (gold - other).mean(0)}

    return _chunked(n, batch_size, n_epochs * n_classes, dev, compute, {"v": torch.float64})["v"]


def el2n(
    logits: ArrayLike,
    labels: ArrayLike,
    *,
    epoch: int | Literal["mean"] = -1,
    squared: bool = False,
    inputs: Inputs = "logits",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Error L2 norm, ‖P_e − onehot(y)‖₂ at one epoch (``epoch`` an index, default the last)
    or averaged over epochs (``epoch="mean"``). ``squared=True`` returns ‖·‖₂² as HCAT does
    (for ``"mean"``, the mean of the squares). Paul et al. and DD take the norm.

    Direction: high = hard.
    """
    _check_inputs(inputs)
    z, y = _dynamics(logits, labels)
    dev = _setup(device)
    n_epochs = z.shape[0]
    if epoch == "mean":
        epochs = slice(0, n_epochs)
    elif isinstance(epoch, int) and not isinstance(epoch, bool) and -n_epochs <= epoch < n_epochs:
        e = epoch % n_epochs
        epochs = slice(e, e + 1)
    else:
        raise ValueError(f'epoch must be "mean" or an index into {n_epochs} epochs, got {epoch!r}')

    def compute(sl: slice) -> dict[str, Tensor]:
        zt = _load_classes_first(z, sl, dtype, dev, epochs)
        if inputs == "logits":
            zt.sub_(zt.amax(0)).exp_()
            zt.div_(zt.sum(0))
        idx = _gold_index(y[sl].to(dev), zt.shape[1])
        zt.scatter_add_(0, idx, torch.full(idx.shape, -1.0, dtype=dtype, device=dev))
        sq = zt.square_().sum(0)
        return {"v": (sq if squared else sq.sqrt()).mean(0)}

    per_sample = z.shape[2] * (epochs.stop - epochs.start)
    return _chunked(z.shape[1], batch_size, per_sample, dev, compute, {"v": torch.float64})["v"]


# --------------------------------------------------------------------------------------------
# Metrics with their own inputs
# --------------------------------------------------------------------------------------------


def grand(
    model: torch.nn.Module,
    inputs: ArrayLike,
    labels: ArrayLike,
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """GraNd, the per-sample gradient norm ‖∇_θ CE(f_θ(x_i), y_i)‖₂ over all parameters.

    Per-sample gradients come from ``torch.func`` (functional_call + vmap + grad). The model is
    left untouched: its parameters and floating buffers are copied to ``dtype`` on ``device``
    (default: the device of its parameters), and it runs in whatever train/eval mode the caller
    set (H-CAT uses eval mode on the final model). ``inputs`` is [N, ...], ``labels`` [N].
    Chunks default to ``DEFAULT_GRAND_BATCH_SIZE`` samples, since each holds a gradient copy.

    Direction: high = hard.
    """
    from torch.func import functional_call, grad, vmap

    x = _as_tensor(inputs)
    n = x.shape[0]
    y = _labels(labels, n, None)
    first = next(model.parameters(), None)
    if device is not None:
        dev = torch.device(device)
    else:
        dev = first.device if first is not None else _default_device()
    params = {k: v.detach().to(dev, dtype) for k, v in model.named_parameters()}
    buffers = {
        k: v.detach().to(dev, dtype if v.is_floating_point() else v.dtype)
        for k, v in model.named_buffers()
    }

    def sample_loss(p: dict[str, Tensor], xi: Tensor, yi: Tensor) -> Tensor:
        out = functional_call(model, (p, buffers), (xi.unsqueeze(0),))
        return F.cross_entropy(out, yi.unsqueeze(0))

    per_sample_grads = vmap(grad(sample_loss), in_dims=(None, 0, 0))

    def compute(sl: slice) -> dict[str, Tensor]:
        xb = x[sl].to(dev, dtype if x.is_floating_point() else x.dtype)
        grads = per_sample_grads(params, xb, y[sl].to(dev))
        sq = torch.zeros(xb.shape[0], dtype=dtype, device=dev)
        for g in grads.values():
            sq += g.reshape(g.shape[0], -1).square().sum(1)
        return {"v": sq.sqrt()}

    size = batch_size if batch_size is not None else DEFAULT_GRAND_BATCH_SIZE
    return _chunked(n, size, 1, dev, compute, {"v": torch.float64})["v"]


def grand_last_layer(
    features: ArrayLike,
    weight: ArrayLike,
    bias: ArrayLike | None,
    labels: ArrayLike,
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """GraNd restricted to a final linear layer z = W h + b under cross-entropy, in closed form.

    ∂CE/∂W = (P − e_y) hᵀ and ∂CE/∂b = P − e_y, so the norm is
    ‖P − e_y‖₂ · sqrt(‖h‖² + 1); without a bias it is ‖P − e_y‖₂ · ‖h‖.
    ``features`` [N, H], ``weight`` [C, H], ``bias`` [C].

    Direction: high = hard.
    """
    h = _real_tensor(features, 2, "features [N, H]")
    w = _real_tensor(weight, 2, "weight [C, H]")
    if w.shape[1] != h.shape[1]:
        raise ValueError(f"weight {tuple(w.shape)} does not match features {tuple(h.shape)}")
    b = None if bias is None else _real_tensor(bias, 1, "bias [C]")
    if b is not None and b.shape[0] != w.shape[0]:
        raise ValueError(f"bias {tuple(b.shape)} does not match weight {tuple(w.shape)}")
    y = _labels(labels, h.shape[0], w.shape[0])
    dev = _setup(device)
    w_d = w.to(dev, dtype)
    b_d = None if b is None else b.to(dev, dtype)
    bias_term = 0.0 if b is None else 1.0

    def compute(sl: slice) -> dict[str, Tensor]:
        hc = h[sl].to(dev, dtype)
        probs = F.linear(hc, w_d, b_d).softmax(-1)
        idx = y[sl].to(dev).unsqueeze(-1)
        err = probs.scatter_add_(-1, idx, torch.full(idx.shape, -1.0, dtype=dtype, device=dev))
        return {"v": err.norm(dim=-1) * (hc.square().sum(-1) + bias_term).sqrt()}

    per_sample = h.shape[1] + w.shape[0]
    return _chunked(h.shape[0], batch_size, per_sample, dev, compute, {"v": torch.float64})["v"]


def conf_agree(
    mc_probs: ArrayLike,
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Confident agreement over K stochastic (MC-dropout) passes, max_c mean_k P[k, i, c].
    ``mc_probs`` is [K, N, C]; the label is not used.

    Direction: low = hard.
    """
    p = _real_tensor(mc_probs, 3, "mc_probs [K, N, C]")
    dev = _setup(device)

    def compute(sl: slice) -> dict[str, Tensor]:
        return {"v": _load_classes_first(p, sl, dtype, dev).mean(1).amax(0)}

    per_sample = p.shape[0] * p.shape[2]
    return _chunked(p.shape[1], batch_size, per_sample, dev, compute, {"v": torch.float64})["v"]


def prototypicality(
    embeddings: ArrayLike,
    labels: ArrayLike,
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Cosine similarity between h_i [N, D] and the mean embedding of class y_i, the sample
    itself included (as H-CAT computes it). A zero vector gives NaN.

    Direction: low = hard.
    """
    h = _real_tensor(embeddings, 2, "embeddings [N, D]")
    n, d = h.shape
    y = _labels(labels, n, None)
    dev = _setup(device)
    n_classes = int(y.max()) + 1 if n else 0
    sums = torch.zeros(n_classes, d, dtype=dtype, device=dev)

    def accumulate(sl: slice) -> dict[str, Tensor]:
        sums.index_add_(0, y[sl].to(dev), h[sl].to(dev, dtype))
        return {}

    def compute(sl: slice) -> dict[str, Tensor]:
        hc = h[sl].to(dev, dtype)
        m = means[y[sl].to(dev)]
        return {"v": (hc * m).sum(-1) / (hc.norm(dim=-1) * m.norm(dim=-1))}

    _chunked(n, batch_size, d, dev, accumulate, {})
    counts = torch.bincount(y, minlength=n_classes).to(dev, dtype)
    means = sums / counts.clamp_min(1).unsqueeze(-1)
    return _chunked(n, batch_size, d, dev, compute, {"v": torch.float64})["v"]


def vog(
    gradients: ArrayLike,
    labels: ArrayLike | None = None,
    *,
    class_normalise: bool = False,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Variance of gradients: v_i = mean_d sqrt(mean_k (G[k,i,d] − Ḡ[i,d])²) over K snapshots,
    G [K, N, D] (population std, ddof 0). ``class_normalise`` returns (v − μ_y) / σ_y with
    class mean and ddof-0 std over the samples of each label (VOGr); a constant class gives
    NaN or ±inf there.

    Direction: high = hard.
    """
    g = _real_tensor(gradients, 3, "gradients [K, N, D]")
    n = g.shape[1]
    dev = _setup(device)

    def compute(sl: slice) -> dict[str, Tensor]:
        return {"v": torch.std(_load(g, sl, dtype, dev), dim=0, correction=0).mean(-1)}

    per_sample = g.shape[0] * g.shape[2]
    v = _chunked(n, batch_size, per_sample, dev, compute, {"v": torch.float64})["v"]
    if not class_normalise:
        return v
    if labels is None:
        raise ValueError("class_normalise=True needs labels")
    y = _labels(labels, n, None)
    n_classes = int(y.max()) + 1 if n else 0
    counts = torch.bincount(y, minlength=n_classes).to(torch.float64).clamp_min(1)
    mean = torch.zeros(n_classes, dtype=torch.float64).index_add_(0, y, v) / counts
    centred = v - mean[y]
    var = torch.zeros(n_classes, dtype=torch.float64).index_add_(0, y, centred.square()) / counts
    return centred / var.sqrt()[y]


def allsh(
    p: ArrayLike,
    q: ArrayLike,
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """ALLSH: KL(p ‖ q) = Σ_c p log(p / q) between predictions on the original (p [N, C]) and
    the augmented input (q [N, C]); terms with p = 0 count 0, and q = 0 where p > 0 gives +inf.

    Direction: high = hard.
    """
    pt = _real_tensor(p, 2, "p [N, C]")
    qt = _real_tensor(q, 2, "q [N, C]")
    if pt.shape != qt.shape:
        raise ValueError(f"p {tuple(pt.shape)} and q {tuple(qt.shape)} differ in shape")
    dev = _setup(device)

    def compute(sl: slice) -> dict[str, Tensor]:
        pc = pt[sl].to(dev, dtype)
        qc = qt[sl].to(dev, dtype)
        terms = torch.where(pc > 0, pc * (pc.log() - qc.log()), torch.zeros_like(pc))
        return {"v": terms.sum(-1)}

    per_sample = 2 * pt.shape[1]
    return _chunked(pt.shape[0], batch_size, per_sample, dev, compute, {"v": torch.float64})["v"]


# --------------------------------------------------------------------------------------------
# Published variants, for telling which definition an implementation computes
# --------------------------------------------------------------------------------------------


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
