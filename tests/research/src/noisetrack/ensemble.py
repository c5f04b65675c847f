import numpy as np
import torch


@torch.no_grad()
def snapshot_disagreement(models, loader):
    """How often the snapshots of a training run disagree with the final one, per sample."""
    votes = []
    for m in models:
        preds = []
        for xb, _ in loader:
            preds.append(m(xb).argmax(1))
        votes.append(torch.cat(preds).numpy())
    votes = np.stack(votes)
    return (votes != votes[-1]).mean(axis=0)
