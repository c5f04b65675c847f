import numpy as np
import torch


class LossTracker:
    """Keeps each sample's cross-entropy per epoch; hardness is its mean over training."""

    def __init__(self, n_items):
        self.n_items = n_items
        self.current = np.zeros(n_items)
        self.hist = []

    def record(self, out, y, idx):
        losses = torch.nn.functional.cross_entropy(out, y, reduction="none")
        self.current[idx.numpy()] = losses.detach().numpy()

    def close_epoch(self):
        self.hist.append(self.current.copy())

    def hardness(self):
        return np.mean(np.stack(self.hist), axis=0)


class MarginLog:
    """Mean margin per sample over epochs; call reset() before each run."""

    def reset(self):
        self.rows = []

    @torch.no_grad()
    def update(self, model, dataloader):
        margins = []
        for xb, yb in dataloader:
            out = model(xb)
            gold = out.gather(1, yb[:, None]).squeeze(1)
            out[torch.arange(len(yb)), yb] = -float("inf")
            margins.append((gold - out.max(1).values).numpy())
        self.rows.append(np.concatenate(margins))

    def scores(self):
        return np.mean(self.rows, axis=0)
