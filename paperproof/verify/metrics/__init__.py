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
``representation`` (metrics with their own inputs), ``variants`` (the published variants of
each metric, and ``match_variants`` / ``identify_metric`` to say which one an output
reproduces), and ``onepass``, the fast path for the Data Maps four that the readable
``dynamics`` is the oracle for.
"""

from paperproof.verify.metrics.dynamics import (
    confidence,
    correctness,
    forgetfulness,
    training_dynamics,
    variability,
)
from paperproof.verify.metrics.representation import (
    DEFAULT_GRAND_BATCH_SIZE,
    allsh,
    conf_agree,
    grand,
    grand_last_layer,
    prototypicality,
    vog,
)
from paperproof.verify.metrics.scores import (
    aleatoric,
    aum,
    el2n,
    entropy,
    loss,
    self_confidence,
    threshold_closeness,
)
from paperproof.verify.metrics.variants import VARIANTS, Variant, identify_metric, match_variants

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
