"""Recording every example's training loss while the model trains (the small-loss trick).

Two recorders for the same score: the mean over epochs of an example's cross-entropy in its
training batches. Higher is harder.
"""
import numpy as np
import torch.nn.functional as F


class LossRecorder:
    """Appends each batch's per-example losses as the loader hands them over; the mean over epochs
    is each example's hardness (higher = harder)."""

    def __init__(self, num_epochs):
        self.num_epochs = num_epochs
        self.history = []
        self._current = []

    def on_batch_end(self, logits, targets):
        losses = F.cross_entropy(logits.detach(), targets, reduction="none")
        self._current.extend(losses.cpu().tolist())

    def on_epoch_end(self):
        self.history.append(self._current)
        self._current = []

    def compute_scores(self):
        return np.asarray(self.history, dtype=np.float64).mean(axis=0)


class IndexedLossRecorder:
    """Files each example's loss under its dataset index, so a shuffled loader cannot mix them up;
    the mean over epochs is its hardness (higher = harder)."""

    def __init__(self, num_samples, num_epochs):
        self.table = np.zeros((num_epochs, num_samples))
        self.epoch = 0

    def on_batch_end(self, logits, targets, indices):
        losses = F.cross_entropy(logits.detach(), targets, reduction="none")
        self.table[self.epoch, indices.cpu().numpy()] = losses.cpu().numpy()

    def on_epoch_end(self):
        self.epoch += 1

    def compute_scores(self):
        return self.table.mean(axis=0)
