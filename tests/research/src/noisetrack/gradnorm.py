"""Per-sample gradient norms at the classifier, accumulated batch by batch while training runs."""

import torch
import torch.nn.functional as F


class HeadGradNorm:
    def __init__(self, head, n_samples):
        self.head = head
        self.total = torch.zeros(n_samples)
        self.seen = torch.zeros(n_samples)

    def update(self, batch_inputs, sample_ids):
        feats, ys = batch_inputs["features"], batch_inputs["labels"]
        for row, (f, y) in enumerate(zip(feats, ys)):
            self.head.zero_grad()
            loss = F.cross_entropy(self.head(f.unsqueeze(0)), y.view(1))
            grads = torch.autograd.grad(loss, [p for p in self.head.parameters() if p.requires_grad])
            norm = torch.sqrt(sum((g ** 2).sum() for g in grads))
            self.total[sample_ids[row]] += norm.detach()
            self.seen[sample_ids[row]] += 1

    def compute_scores(self):
        return (self.total / self.seen.clamp(min=1)).numpy()
