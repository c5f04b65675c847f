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


@torch.no_grad()
def snapshot_agreement(models, loader, device='cuda'):
    """Share of snapshots that agree with the majority vote, per sample (low = ambiguous)."""
    votes = []
    for m in models:
        m = m.to(device)
        votes.append(torch.cat([m(xb.to(device)).argmax(1).cpu() for xb, _ in loader]))
    votes = torch.stack(votes)
    major = votes.mode(dim=0).values
    return (votes == major).float().mean(0).numpy()
