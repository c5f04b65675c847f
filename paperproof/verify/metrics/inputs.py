"""What the metric core accepts: array-likes checked for shape, dtype and label range.

Every metric validates its inputs here, so a bad call fails with a message naming the argument
rather than deep inside a reduction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import torch
from torch import Tensor

ArrayLike = Tensor | np.ndarray | Sequence[Any]
Inputs = Literal["logits", "probs"]
CorrectnessMode = Literal["fraction", "count"]
CorrectnessRule = Literal["argmax", "p>0.5"]
NeverLearned = int | Literal["E"]


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
