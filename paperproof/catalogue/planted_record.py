"""The planted-hardness record of a sample: how well each of its per-sample outputs finds each planted kind.

Figures are AUROC (with a 95% interval, DeLong's) and AUPRC against the indices made hard in the seeded
training run, per kind and per planted fraction, over that kind's samples and the clean ones (another
kind's samples are no negatives), beside the reference core's figures for the metric it was recognised as
and the random floor. The orientation (does a high value mean hard?) is fixed before scoring and says where
it came from. Each kind is checked first: whether some reference metric (loss, confidence, AUM, EL2N on the
run's evaluated logits) finds it at all on the run, so a kind that nothing finds is not read as a failure
of the code. Fields added after the first records are optional, so older records still load.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Orientation = Literal["high_is_hard", "low_is_hard"]


class Detection(BaseModel):
    """AUROC, with its 95% interval, and AUPRC of one score for one planted kind."""

    model_config = ConfigDict(frozen=True)

    auroc: float
    auprc: float
    auroc_low: float | None = None  # the 95% interval of the AUROC (DeLong's standard error), clipped to [0, 1]
    auroc_high: float | None = None


class PlantedFigure(BaseModel):
    """One kind at one planted fraction: the implementation's figures, the reference's and random scores'."""

    model_config = ConfigDict(frozen=True)

    kind: str
    fraction: float  # share of the training set made hard (all kinds together)
    auroc: float
    auprc: float
    orientation: Orientation
    positives: int  # the kind's planted samples
    samples: int  # the samples of the run
    reference: Detection | None = None  # the reference core's implementation of the recognised metric
    floor: Detection  # seeded random scores on the same planted set
    auroc_low: float | None = None  # the 95% interval of the AUROC (DeLong's standard error), clipped to [0, 1]
    auroc_high: float | None = None
    negatives: int | None = None  # the clean samples it was scored against (the other kinds' are left out)
    findable: bool | None = None  # some reference metric finds this kind on this run (`KindCheck.found`)


class KindCheck(BaseModel):
    """Whether a planted kind can be found at all on its run: the reference core's loss, confidence, AUM and
    EL2N on the run's evaluated logits, each scored as the outputs are. A kind that no reference metric finds
    (no 95% interval above one half) is a limit of the run, not a failure of the code scored on it."""

    model_config = ConfigDict(frozen=True)

    kind: str
    fraction: float
    positives: int
    samples: int  # the samples of the run
    negatives: int  # the clean ones, scored against
    metrics: dict[str, Detection] = Field(default_factory=dict)  # reference metric -> its figures on this kind
    best: str  # the metric whose interval lies highest
    found: bool  # some reference metric's 95% interval lies above one half


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
    checks: list[KindCheck] = Field(default_factory=list)  # per kind and fraction: does a reference metric find it
