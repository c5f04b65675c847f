"""The chunk driver and the gold-probability kernel that the reference metrics share.

Samples are processed in chunks sized to a fixed number of input elements, classes first, so
memory stays bounded and the reductions run as contiguous passes.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from paperproof.verify.metrics.inputs import ArrayLike, Inputs, _check_inputs, _dynamics, _setup

# Without an explicit batch_size a chunk holds about this many input elements: 2**20 float64
# values (8 MiB) stay in a CPU's last-level cache, which measured fastest; a GPU takes more.
_CHUNK_ELEMENTS_CPU = 2**20
_CHUNK_ELEMENTS_GPU = 2**26


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
