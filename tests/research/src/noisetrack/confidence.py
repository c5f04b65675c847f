"""Gold-class confidence of one evaluation pass, on the normalisation the rest of the package uses."""

import torch

from noisetrack.normalise import to_probs


def gold_confidence(x, y):
    p = to_probs(x)
    return torch.gather(p, -1, y.long().unsqueeze(-1)).squeeze(-1)
