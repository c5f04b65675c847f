import numpy as np
import torch

from .base import HardnessMethod


class MeanMarginMethod(HardnessMethod):
    """Area under the margin, averaged over epochs: gold logit minus the largest other logit."""

    def __init__(self, net, opt, loss_fn, n_epochs, n_samples):
        super().__init__(net, opt, loss_fn, n_epochs)
        self.margins = np.zeros((n_epochs, n_samples))
        self.seen = 0

    def watch(self, logits, yb, ids):
        gold = logits.gather(1, yb[:, None]).squeeze(1)
        others = logits.clone()
        others[torch.arange(len(yb)), yb] = -float("inf")
        epoch = self.seen // self.margins.shape[1]
        self.margins[epoch, ids.numpy()] = (gold - others.max(1).values).numpy()
        self.seen += len(yb)

    def compute_scores(self):
        self.check_fitted()
        return -self.margins.mean(axis=0)
