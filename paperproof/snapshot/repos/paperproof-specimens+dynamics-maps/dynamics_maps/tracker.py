"""Keeps the gold-label probabilities of every epoch while training runs."""
import numpy as np


class DynamicsTracker:
    """Accumulates per-epoch gold-label probabilities and summarises them as data-map coordinates."""

    def __init__(self, num_classes):
        self.num_classes = num_classes
        self.history = []

    def record_all(self, probs, labels):
        """Record every epoch of a (n_epochs, n_samples, n_classes) array of probabilities."""
        labels = np.asarray(labels)
        for epoch_probs in np.asarray(probs):
            self.history.append(epoch_probs[np.arange(len(labels)), labels])

    def confidence(self):
        return np.mean(self.history, axis=0)

    def variability(self):
        return np.std(self.history, axis=0)
