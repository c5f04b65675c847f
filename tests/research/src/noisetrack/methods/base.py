import numpy as np
import torch

from noisetrack.batches import BatchSource


class HardnessMethod:
    """Every method trains the network it is handed, watching each epoch; `fit` must run before scoring."""

    def __init__(self, net, opt, loss_fn, n_epochs):
        self.net, self.opt, self.loss_fn, self.n_epochs = net, opt, loss_fn, n_epochs
        self.fitted = False

    def fit(self, source: BatchSource):
        for ep in range(self.n_epochs):
            self.net.train()
            for xb, yb, _ in source.train_loader:
                self.opt.zero_grad()
                self.loss_fn(self.net(xb), yb).backward()
                self.opt.step()
            self.net.eval()
            with torch.no_grad():
                for xb, yb, ids in source.ordered_loader:
                    self.watch(self.net(xb), yb, ids)
        self.fitted = True
        return self

    def watch(self, logits, yb, ids):
        raise NotImplementedError

    def check_fitted(self):
        if not self.fitted:
            raise ValueError("method has not been fit yet")

    def hardest(self, k):
        return np.argsort(-self.compute_scores())[:k]
