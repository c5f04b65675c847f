"""Per-example statistics over training dynamics.

All functions take logits of shape (n_epochs, n_samples, n_classes) as recorded after each
epoch, and the gold labels of shape (n_samples,).
"""
import numpy as np

NEVER_LEARNED = 1000  # examples that are never learned count as forgotten "infinitely often"


def _softmax(logits):
    z = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def gold_probabilities(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Probability of the gold label at every epoch.

    Args:
        logits: array of shape (n_epochs, n_samples, n_classes)
        labels: gold labels, shape (n_samples,)

    Returns:
        np.ndarray of shape (n_epochs, n_samples)
    """
    probs = _softmax(np.asarray(logits, dtype=np.float64))
    return np.take_along_axis(probs, np.asarray(labels)[None, :, None], axis=-1)[..., 0]


def confidence_scores(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Mean gold-label probability across epochs (the y-axis of a data map).

    Returns:
        np.ndarray of shape (n_samples,)
    """
    return gold_probabilities(logits, labels).mean(axis=0)


def variability_scores(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Standard deviation of the gold-label probability across epochs (the x-axis)."""
    return gold_probabilities(logits, labels).std(axis=0)


def correctness_counts(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Correctness of each example: in how many epochs the argmax prediction was right."""
    predictions = np.asarray(logits).argmax(axis=-1)
    return (predictions == np.asarray(labels)[None, :]).sum(axis=0)


def forgetting_events(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Number of times each example goes from correctly to incorrectly classified.

    Examples that are never learned get NEVER_LEARNED, so that they rank as the most forgettable.
    """
    correct = np.asarray(logits).argmax(axis=-1) == np.asarray(labels)[None, :]
    n_epochs, n_samples = correct.shape
    scores = np.zeros(n_samples)
    for i in range(n_samples):
        if not correct[:, i].any():
            scores[i] = NEVER_LEARNED
            continue
        learned = False
        for e in range(n_epochs):
            if correct[e, i]:
                learned = True
            elif learned:
                scores[i] += 1
                learned = False
    return scores
