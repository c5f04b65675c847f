"""References for the metrics that need the model, not just its logits, on a protocol case's run.

VoG, GraNd, prototypicality, confidence agreement, EL2N across initialisations and Confident Learning's
out-of-sample probabilities are computed from a model (its input gradients, its parameter gradients, its
embeddings, its stochastic passes) or from more than one run. The run an entry was driven by is trained
again here, outside the sandbox (seeded and single-threaded, as `verify.fidelity.rerun` trains it), keeping
the model's state after each epoch (`training.Run.checkpoints`) and before the first (`Run.initial`), so each
variant below is computed on the model the entry's hooks saw, at the epochs they saw it.

`model_variants(spec, epochs)` gives, for one run, every variant of every such metric, keyed (metric,
variant name), one value per sample in the run's sample order; `MODEL_VARIANTS` says which is the paper's
and how each other one departs from it. Every value is a pure function of the spec: the extra runs (other
initialisations, cross-validation folds), k-means and the dropout passes draw from seeds derived from
`spec.seed`, and torch's global random state is put back afterwards.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from paperproof.fixtures import training
from paperproof.verify.metrics.scores import early_epoch
from paperproof.verify.metrics.variants import Orientation

INIT_RUNS = 4  # EL2N's independent initialisations (Paul et al. average over several; the first is the run itself)
FOLDS = 4  # Confident Learning's cross-validation folds (cleanlab's default is 5; 4 keeps a run's cost small)
PASSES = 10  # confidence agreement's stochastic passes
KMEANS_RESTARTS = 10  # k-means starts, the best kept
# Purposes of the seeds derived from a spec's seed, so that no two draws share a stream.
_INIT, _FOLD_MODEL, _FOLD_SPLIT, _KMEANS, _PASSES = range(1, 6)


@dataclass(frozen=True)
class ModelVariant:
    """One published way of computing a model-based metric. `timing`: the departure is only which epoch is
    scored (the formula is the paper's); `orientation`: which end is hard where the variant reads the other way
    from its metric's definition (a similarity where the paper takes a distance)."""

    metric: str
    name: str
    source: str
    paper: bool
    departure: str = ""
    timing: bool = False
    orientation: Orientation | None = None


_VOG_PAPER = "VoG paper (Agarwal et al.)"
_ALL_EPOCHS = "_all_epochs"

MODEL_VARIANTS: dict[str, tuple[ModelVariant, ...]] = {
    "vog": (
        ModelVariant("vog", "logit_class_normalised", _VOG_PAPER, True),
        ModelVariant("vog", "logit_raw", f"{_VOG_PAPER}, before its class normalisation", False,
                     "does not normalise within each class (the paper standardises by the class's mean and "
                     "standard deviation)"),
        ModelVariant("vog", "prob_raw", "H-CAT", False,
                     "takes the gradient of the softmax probability where the paper takes the pre-softmax logit, "
                     "and does not normalise within each class"),
        ModelVariant("vog", "prob_class_normalised", "H-CAT's probability gradient with the paper's class "
                     "normalisation (combination)", False,
                     "takes the gradient of the softmax probability where the paper takes the pre-softmax logit"),
        # on a snapshot after every epoch, given only when the entry's hook was called at some epochs
        ModelVariant("vog", "logit_class_normalised" + _ALL_EPOCHS, f"{_VOG_PAPER}, every epoch's snapshot", False,
                     "takes a snapshot after every epoch where the entry's hook was called at fewer", timing=True),
        ModelVariant("vog", "logit_raw" + _ALL_EPOCHS, f"{_VOG_PAPER}, unnormalised, every epoch's snapshot", False,
                     "does not normalise within each class, and takes a snapshot after every epoch where the "
                     "entry's hook was called at fewer"),
        ModelVariant("vog", "prob_raw" + _ALL_EPOCHS, "H-CAT, every epoch's snapshot", False,
                     "takes the gradient of the softmax probability where the paper takes the pre-softmax logit, "
                     "does not normalise within each class, and takes a snapshot after every epoch where the "
                     "entry's hook was called at fewer"),
        ModelVariant("vog", "prob_class_normalised" + _ALL_EPOCHS, "probability gradient, class-normalised, every "
                     "epoch's snapshot (combination)", False,
                     "takes the gradient of the softmax probability where the paper takes the pre-softmax logit, "
                     "and takes a snapshot after every epoch where the entry's hook was called at fewer"),
    ),
    "grand": (
        ModelVariant("grand", "early_all_params", "GraNd (Paul et al.), early in training (the first epoch at or "
                     "after 10% of training), one initialisation where the paper averages over several", True),
        ModelVariant("grand", "init_all_params", "GraNd (Paul et al.) at initialisation, one initialisation", True),
        ModelVariant("grand", "final_all_params", "H-CAT", False,
                     "scores the final model where Paul et al. score early in training, averaged over "
                     "initialisations", timing=True),
    ),
    "el2n": (
        ModelVariant("el2n", "early_norm_runs", f"EL2N (Paul et al.), early in training, averaged over {INIT_RUNS} "
                     "independent initialisations", True),
        ModelVariant("el2n", "last_norm_one_run", "the last epoch of one run", False,
                     "scores the last epoch of one run where Paul et al. score early in training, averaged over "
                     "independent initialisations"),
    ),
    "prototypicality": (
        ModelVariant("prototypicality", "kmeans_distance", "Sorscher et al. (distance to the nearest of k k-means "
                     "centroids, k the number of classes; here on the trained model's penultimate embeddings, where "
                     "the paper embeds with a self-supervised model)", True),
        ModelVariant("prototypicality", "cosine_class_mean", "H-CAT", False,
                     "takes the cosine to the class-mean embedding where Sorscher et al. take the distance to the "
                     "nearest k-means centroid", orientation="low_is_hard"),
    ),
    "conf_agree": (
        ModelVariant("conf_agree", "max_mean_prob_train_mode", f"Carlini et al. (agreement of stochastic passes; "
                     f"here {PASSES} passes of the final model in training mode, whose dropout makes them differ)",
                     True),
        ModelVariant("conf_agree", "max_prob_eval_mode", "passes made in evaluation mode", False,
                     "makes its passes with dropout off, so every pass is the same and the score is one pass's "
                     "maximum probability, where Carlini et al. measure agreement between passes or models that "
                     "differ"),
    ),
    "self_confidence": (
        ModelVariant("self_confidence", "out_of_sample_self_confidence", f"Confident Learning (Northcutt et al.; "
                     f"{FOLDS}-fold cross-validated probabilities)", True),
        ModelVariant("self_confidence", "in_sample_last_epoch", "the final model on its own training data", False,
                     "uses in-sample probabilities where Confident Learning uses out-of-sample (cross-validated) "
                     "ones"),
    ),
}


def derived_seed(spec: training.RunSpec, purpose: int, index: int = 0) -> int:
    """A seed for one draw made for a spec (another initialisation, a fold, k-means), apart from the run's own."""
    return int(np.random.SeedSequence([spec.seed % 2**32, purpose, index]).generate_state(1)[0])


@contextmanager
def _quiet() -> Iterator[None]:
    """Single-threaded torch, as the sandbox trains, with torch's global random state put back afterwards."""
    torch = training._torch()
    with training.single_threaded(), torch.random.fork_rng(devices=[]):
        yield


@lru_cache(maxsize=8)
def trained(spec: training.RunSpec) -> training.Run:
    """The run trained again here, with its checkpoints (the one `verify.fidelity.rerun` trains). Cached: read it,
    do not train or change it."""
    with _quiet():
        return training.train(spec)


def _reinitialised(spec: training.RunSpec, seed: int) -> training.Run:
    """The run's objects (data, loaders, optimiser, loss) with the model initialised and the shuffling seeded from
    `seed` instead of the run's seed; the data are the run's own, in its order."""
    torch = training._torch()
    run = training.start(spec)
    torch.manual_seed(seed)
    for module in run.net.modules():
        reset = getattr(module, "reset_parameters", None)
        if callable(reset):
            reset()
    run.train_loader.sampler.generator.manual_seed(seed)
    return run


def _model(run: training.Run, state: dict, dtype: Any = None) -> Any:
    """A copy of the run's model holding `state`, in evaluation mode (as `dtype` when given)."""
    net = copy.deepcopy(run.net)
    net.load_state_dict(state)
    net.eval()
    return net.to(dtype) if dtype is not None else net


def _pre_softmax(net: Any, x: Any, spec: training.RunSpec) -> Any:
    """The model's pre-softmax logits: its output, or the head on its embedding when the model ends in a softmax."""
    return net.head(net(x, embed=True)) if spec.probabilities else net(x)


def _logit_model(net: Any, spec: training.RunSpec) -> Any:
    """The model as one that returns pre-softmax logits (itself unless it ends in a softmax)."""
    if not spec.probabilities:
        return net
    torch: Any = training._torch()  # imported on first use; a class is made on its Module at run time

    class PreSoftmax(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, x: Any) -> Any:
            return self.inner.head(self.inner(x, embed=True))

    return PreSoftmax(net).eval()


def _vog(run: training.Run, snapshots: tuple[int, ...], suffix: str) -> dict[tuple[str, str], np.ndarray]:
    from paperproof.verify.metrics import input_gradients, vog

    torch = training._torch()
    x = torch.from_numpy(run.data.x).double()
    y = torch.from_numpy(run.data.observed)
    nets = [_model(run, run.checkpoints[e], torch.float64) for e in snapshots]
    out = {}
    for target in ("logit", "prob"):
        gradients = torch.stack([input_gradients(_logit_model(net, run.spec), x, y, target=target) for net in nets])
        out["vog", f"{target}_raw{suffix}"] = vog(gradients).numpy()
        out["vog", f"{target}_class_normalised{suffix}"] = vog(gradients, y, class_normalise=True).numpy()
    return out


def _grand(run: training.Run, state: dict) -> np.ndarray:
    from paperproof.verify.metrics import grand

    torch = training._torch()
    net = _logit_model(_model(run, state), run.spec)
    return grand(net, torch.from_numpy(run.data.x), torch.from_numpy(run.data.observed)).numpy()


@lru_cache(maxsize=16)
def el2n_runs(spec: training.RunSpec, runs: int = INIT_RUNS) -> np.ndarray:
    """EL2N as Paul et al. define it: the norm ‖P − onehot(y)‖₂ at the early epoch, averaged over `runs`
    independent initialisations of the same recipe on the same data (the first is the run itself; the others
    differ only in the model's initialisation, the shuffling and the dropout draws). (The metrics core's
    `el2n_runs` averages the same way, once it is there.)"""
    from paperproof.verify.metrics import el2n_runs as averaged

    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    early = early_epoch(spec.epochs)
    run = trained(spec)
    series = [np.stack(run.logits[: early + 1])]
    with _quiet():
        for r in range(1, runs):
            seed = derived_seed(spec, _INIT, r)
            short = dataclasses.replace(spec, seed=seed, epochs=early + 1)  # its seed seeds the dropout draws
            series.append(np.stack(training.train(short, run=_reinitialised(spec, seed)).logits))
    total = averaged(series, run.data.observed, epoch=early).numpy()
    total.setflags(write=False)
    return total


def folds(spec: training.RunSpec, labels: np.ndarray, k: int = FOLDS) -> np.ndarray:
    """Each sample's fold, 0 … k−1: stratified by label (each class's samples shuffled, seeded, and dealt in
    turn), so every fold holds about 1/k of every class."""
    rng = np.random.default_rng(derived_seed(spec, _FOLD_SPLIT))
    dealt = np.concatenate([rng.permutation(np.flatnonzero(labels == c)) for c in np.unique(labels)])
    fold = np.empty(len(labels), dtype=np.int64)
    fold[dealt] = np.arange(len(dealt)) % k
    return fold


def out_of_sample(spec: training.RunSpec, k: int = FOLDS) -> np.ndarray:
    """Confident Learning's self-confidence: each sample's probability of its observed label from a model trained,
    with the run's recipe, for `spec.epochs` on the other folds, in evaluation mode."""
    torch = training._torch()
    run = trained(spec)
    data = run.data
    fold = folds(spec, data.observed, k)
    gold = np.full(len(data.observed), np.nan)
    with _quiet():
        for f in range(k):
            held, kept = np.flatnonzero(fold == f), np.flatnonzero(fold != f)
            if not len(held) or not len(kept):
                continue
            seed = derived_seed(spec, _FOLD_MODEL, f)
            base = _reinitialised(spec, seed)
            subset = training.Planted(data.x[kept], data.clean[kept], data.observed[kept], {})
            ds = training.dataset(subset, spec.batch)
            generator = torch.Generator().manual_seed(seed)
            fold_spec = dataclasses.replace(spec, n=len(kept), seed=seed)
            fold_run = dataclasses.replace(
                base, spec=fold_spec, data=subset,
                loader=torch.utils.data.DataLoader(ds, batch_size=spec.batch_size, shuffle=False),
                train_loader=torch.utils.data.DataLoader(ds, batch_size=spec.batch_size,
                                                         sampler=training._sampler(ds, generator)),
                logits=[], train_logits=[], checkpoints=[], initial=None)
            training.train(fold_spec, run=fold_run)
            fold_run.net.eval()
            with torch.no_grad():
                z = training.as_logits(fold_run.net(torch.from_numpy(data.x[held])), spec).double()
            gold[held] = z.softmax(-1).gather(1, torch.from_numpy(data.observed[held]).unsqueeze(1))[:, 0].numpy()
    return gold


def kmeans_distance(embeddings: np.ndarray, k: int, seed: int, restarts: int = KMEANS_RESTARTS,
                    iterations: int = 100) -> np.ndarray:
    """Each sample's Euclidean distance to the nearest of k centroids of Lloyd's k-means: `restarts` seeded
    k-means++ starts, the one of least inertia kept (the first on a tie), as scikit-learn's `n_init` does; on small
    sets that finds the same clustering whatever the samples' order. (To be replaced by the metrics core's
    `prototypicality_kmeans` once it is there.)"""
    h = np.asarray(embeddings, dtype=np.float64)
    n = len(h)
    k = max(1, min(k, n))
    rng = np.random.default_rng(seed)
    best: np.ndarray | None = None
    for _ in range(max(restarts, 1)):
        centres = [h[rng.integers(n)]]
        for _ in range(1, k):
            d2 = ((h[:, None, :] - np.stack(centres)[None]) ** 2).sum(-1).min(1)
            centres.append(h[rng.choice(n, p=d2 / d2.sum())] if d2.sum() > 0 else h[rng.integers(n)])
        c = np.stack(centres)
        for _ in range(iterations):
            nearest = ((h[:, None, :] - c[None]) ** 2).sum(-1).argmin(1)
            moved = np.stack([h[nearest == j].mean(0) if (nearest == j).any() else c[j] for j in range(k)])
            if np.array_equal(moved, c):
                break
            c = moved
        distance = np.sqrt(((h[:, None, :] - c[None]) ** 2).sum(-1).min(1))
        if best is None or (distance ** 2).sum() < (best ** 2).sum() - 1e-9 * max((best ** 2).sum(), 1.0):
            best = distance
    assert best is not None
    return best


def _final_model_metrics(run: training.Run) -> dict[tuple[str, str], np.ndarray]:
    from paperproof.verify.metrics import conf_agree, prototypicality

    torch = training._torch()
    spec, x, y = run.spec, torch.from_numpy(run.data.x), torch.from_numpy(run.data.observed)
    out = {}
    net = _model(run, run.checkpoints[-1])
    with torch.no_grad():
        embedded = net(x, embed=True).double()
    out["prototypicality", "cosine_class_mean"] = prototypicality(embedded, y).numpy()
    out["prototypicality", "kmeans_distance"] = kmeans_distance(embedded.numpy(), max(spec.classes, 1),
                                                                derived_seed(spec, _KMEANS))
    with torch.no_grad():
        once = training.as_logits(net(x), spec).double().softmax(-1)
    out["conf_agree", "max_prob_eval_mode"] = conf_agree(once[None]).numpy()
    net.train()
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(derived_seed(spec, _PASSES))
        passes = torch.stack([training.as_logits(net(x), spec).double().softmax(-1) for _ in range(PASSES)])
    out["conf_agree", "max_mean_prob_train_mode"] = conf_agree(passes).numpy()
    last = torch.from_numpy(run.logits[-1]).softmax(-1)
    out["self_confidence", "in_sample_last_epoch"] = last.gather(1, y.unsqueeze(1))[:, 0].numpy()
    return out


def model_variants(spec: training.RunSpec, epochs: tuple[int, ...] | None = None) -> dict[tuple[str, str], np.ndarray]:
    """Every variant of every model-based metric on the spec's run, keyed (metric, variant name), one value per
    sample in the run's sample order (the arrays are read-only). `epochs`: the epoch indices after which the
    entry's hook was called, VoG's snapshots; None: every epoch. With `epochs`, VoG's variants on every epoch are
    given too, named with `_all_epochs`. Cached."""
    snapshots = None if epochs is None else tuple(sorted({int(e) for e in epochs}))
    return dict(_model_variants(spec, snapshots))


@lru_cache(maxsize=16)
def _model_variants(spec: training.RunSpec, epochs: tuple[int, ...] | None) -> dict[tuple[str, str], np.ndarray]:
    from paperproof.verify.metrics import el2n

    run = trained(spec)
    every = tuple(range(len(run.checkpoints)))
    if not every:
        raise ValueError("a run of at least one epoch is needed")
    if epochs is not None and (not epochs or epochs[0] < 0 or epochs[-1] >= len(every)):
        raise ValueError(f"epochs {epochs} are not epochs of a {len(every)}-epoch run")
    assert run.initial is not None
    out: dict[tuple[str, str], np.ndarray] = {}
    with _quiet():
        out.update(_vog(run, every if epochs is None else epochs, ""))
        if epochs is not None:
            out.update(_vog(run, every, _ALL_EPOCHS))
        out["grand", "final_all_params"] = _grand(run, run.checkpoints[-1])
        out["grand", "early_all_params"] = _grand(run, run.checkpoints[early_epoch(spec.epochs)])
        out["grand", "init_all_params"] = _grand(run, run.initial)
        out.update(_final_model_metrics(run))
    out["el2n", "early_norm_runs"] = el2n_runs(spec)
    out["el2n", "last_norm_one_run"] = el2n(np.stack(run.logits), run.data.observed, epoch=-1).numpy()
    out["self_confidence", "out_of_sample_self_confidence"] = out_of_sample(spec)
    for values in out.values():
        values.setflags(write=False)
    return out
