"""Per-example hardness scores from the logits recorded after every epoch."""
import numpy as np


def aum_scores(logits, labels):
    """Area under the margin of every training example.

    logits: (n_epochs, n_examples, n_classes), labels: (n_examples,)
    The margin is the assigned-class logit minus the largest other logit; AUM averages it over
    epochs. Lower is harder: mislabelled examples keep a negative margin.
    """
    logits = np.asarray(logits, dtype=np.float64)
    labels = np.asarray(labels)
    epochs, n, n_classes = logits.shape
    if n_classes < 2:
        raise ValueError("AUM needs at least two classes to take a margin against")
    assigned = logits[:, np.arange(n), labels]
    others = logits.copy()
    others[:, np.arange(n), labels] = -np.inf
    margins = assigned - others.max(axis=-1)
    return margins.mean(axis=0)


def random_hardness(logits, labels, seed=0):
    """Random hardness baseline: one score per training example, higher is harder.

    Ignores the training run on purpose; the tables report every method against it.
    """
    n_examples = np.asarray(labels).shape[0]
    rng = np.random.default_rng(seed)
    return rng.uniform(0.0, 1.0, size=n_examples)
