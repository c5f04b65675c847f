"""Per-example statistics over training dynamics.

All functions take logits of shape (n_epochs, n_samples, n_classes) as recorded after each
epoch, and the gold labels of shape (n_samples,).
"""
import numpy as np



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
    # unbiased estimate, we only have a handful of epochs
    return gold_probabilities(logits, labels).std(axis=0, ddof=1)


def correctness_scores(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Fraction of epochs in which the gold label gets more than half of the probability mass."""
    return (gold_probabilities(logits, labels) > 0.5).mean(axis=0)


def forgetting_events(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Forgetting events per epoch: transitions from correct to incorrect, over the number of epochs."""
    correct = np.asarray(logits).argmax(axis=-1) == np.asarray(labels)[None, :]
    n_epochs, n_samples = correct.shape
    scores = np.zeros(n_samples)
    for i in range(n_samples):
        learned = False
        for e in range(n_epochs):
            if correct[e, i]:
                learned = True
            elif learned:
                scores[i] += 1
                learned = False
    return scores / n_epochs
