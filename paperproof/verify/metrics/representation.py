"""Metrics with their own inputs: gradients (GraNd, averaged over initialisations or not; VoG and
the input gradients it needs), representations (prototypicality, to the class mean or to k-means
prototypes) and predictions under perturbation (confident agreement, ALLSH), rather than a
training run's logits.
"""

from __future__ import annotations

import copy
import math
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor

from paperproof.verify.metrics.chunks import _chunked, _load, _load_classes_first
from paperproof.verify.metrics.inputs import (
    ArrayLike,
    _as_tensor,
    _default_device,
    _labels,
    _real_tensor,
    _setup,
)

# Per-sample gradients hold one copy of the parameters per sample, so GraNd chunks by samples.
DEFAULT_GRAND_BATCH_SIZE = 256


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


def grand_runs(
    models: list[torch.nn.Module],
    inputs: ArrayLike,
    labels: ArrayLike,
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """GraNd as Paul et al. define it (NeurIPS 2021): E_w ‖∇_θ CE(f_θ(x_i), y_i)‖₂, the mean over
    ``models`` (each an independent initialisation, early in training) of ``grand``.

    Direction: high = hard.
    """
    if not models:
        raise ValueError("models holds no model")
    total: Tensor | None = None
    for model in models:
        v = grand(model, inputs, labels, dtype=dtype, device=device, batch_size=batch_size)
        total = v if total is None else total + v
    assert total is not None
    return total / len(models)


def input_gradients(
    model: torch.nn.Module,
    inputs: ArrayLike,
    labels: ArrayLike,
    *,
    target: Literal["logit", "prob"] = "logit",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Per-sample gradient with respect to the input of the label class's pre-softmax logit
    z_y (VoG, Agarwal, D'souza, Hooker, CVPR 2022), or of its softmax probability p_y with
    ``target="prob"``, flattened to [N, D] on the CPU. Stack K checkpoints' results into
    G [K, N, D] for ``vog``.

    The model is left untouched: a copy in ``dtype`` on ``device`` (default: its parameters'
    device) runs in eval mode, where samples do not interact (batch norm uses its running
    statistics), so the gradient of Σ_i z_i[y_i] is each sample's own. Chunks default to
    ``DEFAULT_GRAND_BATCH_SIZE`` samples.

    Direction: not a score; the input to ``vog`` (high VoG = hard).
    """
    if target not in ("logit", "prob"):
        raise ValueError(f'target must be "logit" or "prob", got {target!r}')
    x = _as_tensor(inputs)
    if not x.is_floating_point():
        raise TypeError(f"inputs must be floating point to take a gradient, got {x.dtype}")
    n = x.shape[0]
    y = _labels(labels, n, None)
    first = next(model.parameters(), None)
    if device is not None:
        dev = torch.device(device)
    else:
        dev = first.device if first is not None else _default_device()
    net = copy.deepcopy(model).to(dev, dtype).eval()
    for p in net.parameters():
        p.requires_grad_(False)
    size = batch_size if batch_size is not None else DEFAULT_GRAND_BATCH_SIZE
    if size < 1:
        raise ValueError(f"batch_size must be positive, got {size}")
    parts = []
    for start in range(0, n, size):
        sl = slice(start, min(n, start + size))
        xb = x[sl].to(dev, dtype).clone().requires_grad_(True)
        with torch.enable_grad():
            out = net(xb)
            if target == "prob":
                out = out.softmax(-1)
            chosen = out.gather(1, y[sl].to(dev).unsqueeze(1)).sum()
            (g,) = torch.autograd.grad(chosen, xb)
        parts.append(g.reshape(g.shape[0], -1).to("cpu", torch.float64))
    if not parts:
        return torch.empty((0, math.prod(x.shape[1:])), dtype=torch.float64)
    return torch.cat(parts)


def _nearest(x: Tensor, centroids: Tensor) -> tuple[Tensor, Tensor]:
    """Index of the nearest centroid (lowest index on ties) and the squared Euclidean distance
    to it, for every row of x [N, D], from exact differences over chunks of rows."""
    n, d = x.shape
    rows = max(1, 2**22 // max(1, centroids.shape[0] * d))
    idx = torch.empty(n, dtype=torch.int64, device=x.device)
    sq = torch.empty(n, dtype=x.dtype, device=x.device)
    for start in range(0, n, rows):
        sl = slice(start, min(n, start + rows))
        dist = (x[sl].unsqueeze(1) - centroids.unsqueeze(0)).square().sum(-1)
        sq[sl], idx[sl] = dist.min(1)
    return idx, sq


def _kmeans(x: Tensor, k: int, seed: int, iters: int) -> Tensor:
    """Centroids [k, D]: k-means++ seeding from a CPU generator seeded with ``seed`` (first
    centre uniform, each next drawn with probability ∝ squared distance to the nearest centre),
    then up to ``iters`` Lloyd steps; a cluster left empty keeps its centroid."""
    n = x.shape[0]
    gen = torch.Generator().manual_seed(seed)
    chosen = [int(torch.randint(n, (1,), generator=gen))]
    _, sq = _nearest(x, x[chosen])
    for _ in range(1, k):
        weights = sq.to("cpu", torch.float64).clamp_min(0)
        if float(weights.sum()) > 0:
            nxt = int(torch.multinomial(weights, 1, generator=gen))
        else:  # every point sits on a centre already
            nxt = int(torch.randint(n, (1,), generator=gen))
        chosen.append(nxt)
        sq = torch.minimum(sq, _nearest(x, x[nxt : nxt + 1])[1])
    centroids = x[chosen].clone()
    assign = _nearest(x, centroids)[0]
    for _ in range(iters):
        counts = torch.bincount(assign, minlength=k).to(x.dtype)
        sums = torch.zeros_like(centroids).index_add_(0, assign, x)
        centroids = torch.where(counts.unsqueeze(1) > 0, sums / counts.clamp_min(1).unsqueeze(1), centroids)
        new_assign = _nearest(x, centroids)[0]
        if torch.equal(new_assign, assign):
            break
        assign = new_assign
    return centroids


def prototypicality_kmeans(
    embeddings: ArrayLike,
    k: int,
    *,
    seed: int = 0,
    iters: int = 50,
    distance: Literal["euclidean", "cosine"] = "euclidean",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
) -> Tensor:
    """Self-supervised prototype metric (Sorscher, Geirhos, Shekhar, Ganguli, Morcos, NeurIPS
    2022, "Beyond neural scaling laws"): k-means on the embeddings [N, D] (seeded k-means++,
    then Lloyd iterations; deterministic for a seed) and the distance of each sample to its
    nearest centroid. ``distance="euclidean"`` is ‖h − c‖₂; ``"cosine"`` clusters the
    L2-normalised embeddings and returns 1 − max_j cos(h, c_j) (the authors' released scores
    are described as cosine-based). H-CAT's cosine to the class mean is ``prototypicality``.

    Direction: high = hard (far from every prototype).
    """
    if distance not in ("euclidean", "cosine"):
        raise ValueError(f'distance must be "euclidean" or "cosine", got {distance!r}')
    h = _real_tensor(embeddings, 2, "embeddings [N, D]")
    n = h.shape[0]
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= n:
        raise ValueError(f"k must be an int in [1, N = {n}], got {k!r}")
    if iters < 0:
        raise ValueError(f"iters must be non-negative, got {iters}")
    dev = _setup(device)
    x = h.to(dev, dtype)
    if distance == "cosine":
        x = F.normalize(x, dim=1)
    centroids = _kmeans(x, k, seed, iters)
    if distance == "euclidean":
        return _nearest(x, centroids)[1].sqrt().to("cpu", torch.float64)
    unit = F.normalize(centroids, dim=1)
    rows = max(1, 2**22 // k)
    best = torch.cat([(x[s : s + rows] @ unit.T).amax(1) for s in range(0, n, rows)])
    return (1 - best).to("cpu", torch.float64)
