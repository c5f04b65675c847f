"""Forgetting statistics gathered batch by batch while a Keras model trains."""
import numpy as np


class ForgettingTracker:
    """Counts, for every example, how often it went from correctly to incorrectly classified."""

    def __init__(self, num_samples):
        self.previous = np.zeros(num_samples, dtype=bool)
        self.forgotten = np.zeros(num_samples, dtype=np.int64)

    def update(self, model, inputs, indices):
        correct = model.predict(inputs).argmax(-1) == indices[1]
        self.forgotten[indices[0]] += self.previous[indices[0]] & ~correct
        self.previous[indices[0]] = correct

    def scores(self, dataset):
        for inputs, indices in dataset:
            self.update(None, inputs, indices)
        return self.forgotten
