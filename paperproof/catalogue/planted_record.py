"""The planted-hardness record of a sample: how well each of its per-sample outputs finds each planted kind.

Figures are AUROC and AUPRC against the indices made hard in the seeded training run, per kind and per
planted fraction, beside the reference core's figures for the metric it was recognised as and the random
floor. The orientation (does a high value mean hard?) is fixed before scoring and says where it came from.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Orientation = Literal["high_is_hard", "low_is_hard"]


class Detection(BaseModel):
    """AUROC and AUPRC of one score for one planted kind."""

    model_config = ConfigDict(frozen=True)

    auroc: float
    auprc: float


class PlantedFigure(BaseModel):
    """One kind at one planted fraction: the implementation's figures, the reference's and random scores'."""

    model_config = ConfigDict(frozen=True)

    kind: str
    fraction: float  # share of the training set made hard (all kinds together)
    auroc: float
    auprc: float
    orientation: Orientation
    positives: int
    samples: int
    reference: Detection | None = None  # the reference core's implementation of the recognised metric
    floor: Detection  # seeded random scores on the same planted set


class PlantedScore(BaseModel):
    """One per-sample output scored against the planted run."""

    model_config = ConfigDict(frozen=True)

    output: str
    metric: str | None = None  # the reference metric it was recognised as, if any
    reference: str | None = None  # the reference implementation scored beside it, e.g. "aum (mean_logit_margin)"
    orientation: Orientation
    orientation_basis: str  # where the orientation came from, fixed before scoring
    figures: list[PlantedFigure] = Field(default_factory=list)


class PlantedHardness(BaseModel):
    """What the planted run found for a sample: its run, every scored output, and the samples it ranks hardest
    (indices into the run, at the largest fraction) for the data map."""

    model_config = ConfigDict(frozen=True)

    run: str
    fractions: list[float]
    scores: list[PlantedScore] = Field(default_factory=list)
    flagged: list[int] = Field(default_factory=list)
    note: str | None = None  # why some output was not scored
