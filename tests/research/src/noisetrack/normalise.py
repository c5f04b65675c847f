import torch.nn.functional as F


def to_probs(raw_logits):
    return F.softmax(raw_logits, dim=-1)
