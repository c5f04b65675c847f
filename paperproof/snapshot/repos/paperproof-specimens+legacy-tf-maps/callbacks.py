"""Keras callback recording training dynamics for data maps."""
import numpy as np
import tensorflow as tf


class DataMapCallback(tf.keras.callbacks.Callback):
    """Collects the gold-label probability of every training example after each epoch."""

    def __init__(self, x, y, batch_size=256):
        super().__init__()
        self.x, self.y, self.batch_size = x, y, batch_size
        self.gold_probs = []

    def on_epoch_end(self, epoch, logs=None):
        probs = self.model.predict(self.x, batch_size=self.batch_size, verbose=0)
        self.gold_probs.append(probs[np.arange(len(self.y)), self.y])

    def confidence(self):
        return np.mean(self.gold_probs, axis=0)


def confidence_from_probs(gold_probs: np.ndarray) -> np.ndarray:
    """Confidence from a (n_epochs, n_samples) array of gold-label probabilities."""
    return np.mean(gold_probs, axis=0)
