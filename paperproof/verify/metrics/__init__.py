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

By family: ``dynamics`` (the Data Maps four), ``scores`` (per-epoch scores on the same run),
``field`` (learning time, second-split forgetting, TDDS, and Confident Learning's and AUM's
label-noise rules), ``detectors`` (label-noise and uncertainty scores of one prediction: normalized margin,
predictive entropy, prediction margin), ``representation`` (metrics with their own inputs), ``variants`` (the
published variants of each metric, ``DEFINITIONS`` of what each paper defines, and
``match_variants`` / ``identify_metric`` to say which one an output reproduces), and
``onepass``, the fast path for the Data Maps four that the readable ``dynamics`` is the oracle
for. Beyond hardness, ``valuation`` (semivalues by enumeration, KNN-Shapley, leave-one-out) and
``attribution`` (influence on a convex model, TracIn) are exact references on small cases, and
``instance_hardness`` (kDN) scores an instance by its neighbours' labels.
"""

from paperproof.verify.metrics.detectors import (
    confidence_weighted_entropy,
    normalized_margin,
    prediction_margin,
    predictive_entropy,
)
from paperproof.verify.metrics.dynamics import (
    confidence,
    correctness,
    forgetfulness,
    training_dynamics,
    variability,
)
from paperproof.verify.metrics.field import (
    aum_mislabelled,
    aum_threshold,
    confident_learning_issues,
    learning_time,
    per_class_thresholds,
    second_split_forgetting,
    tdds,
)
from paperproof.verify.metrics.representation import (
    DEFAULT_GRAND_BATCH_SIZE,
    allsh,
    conf_agree,
    grand,
    grand_last_layer,
    grand_runs,
    input_gradients,
    prototypicality,
    prototypicality_kmeans,
    vog,
)
from paperproof.verify.metrics.scores import (
    aleatoric,
    aum,
    early_epoch,
    el2n,
    el2n_runs,
    entropy,
    epistemic,
    loss,
    pvi,
    self_confidence,
    threshold_closeness,
)
from paperproof.verify.metrics.variants import (
    DEFINITIONS,
    VARIANTS,
    Definition,
    Variant,
    identify_metric,
    match_variants,
)

__all__ = [
    "DEFAULT_GRAND_BATCH_SIZE",
    "DEFINITIONS",
    "Definition",
    "VARIANTS",
    "Variant",
    "aleatoric",
    "allsh",
    "aum",
    "aum_mislabelled",
    "aum_threshold",
    "confidence",
    "conf_agree",
    "confidence_weighted_entropy",
    "confident_learning_issues",
    "correctness",
    "early_epoch",
    "el2n",
    "el2n_runs",
    "entropy",
    "epistemic",
    "forgetfulness",
    "grand",
    "grand_last_layer",
    "grand_runs",
    "identify_metric",
    "input_gradients",
    "learning_time",
    "loss",
    "match_variants",
    "normalized_margin",
    "per_class_thresholds",
    "prediction_margin",
    "predictive_entropy",
    "prototypicality",
    "prototypicality_kmeans",
    "pvi",
    "second_split_forgetting",
    "self_confidence",
    "tdds",
    "threshold_closeness",
    "training_dynamics",
    "variability",
    "vog",
]
